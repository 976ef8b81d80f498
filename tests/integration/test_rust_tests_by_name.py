"""Rust tests by name (``debug_launch(test=…)``) on a small package with unit tests in its library and an
integration test file (tests/programs/rusttests): cargo builds the test binaries, the one holding the name runs
it alone under lldb-dap, a failing assert_eq! stops at its line in the test's frame with "left: … right: …", a
panic in the code under test at the panicking line, and the run's end is a verdict.

The package builds into the run's build directory (``CARGO_TARGET_DIR``, passed as the launch's env, which the
build gets too), once: the first launch builds, the others find it built.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

PROJECT = PROGRAMS / "rusttests"
LIB = "rusttests/src/lib.rs"


@pytest.fixture(scope="module")
def env(build_dir: Path) -> dict[str, str]:
    require("lldb-dap-22")
    if shutil.which("cargo") is None and not (Path.home() / ".cargo" / "bin" / "cargo").exists():
        pytest.skip("cargo is not installed")
    return {"CARGO_TARGET_DIR": str(build_dir / "rusttests-target")}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def test_a_failing_assert_eq_stops_at_its_line_with_left_and_right(tools: Tools, env: dict[str, str]) -> None:
    report = await tools("debug_launch", test="tests::bulk_discount", cwd=str(PROJECT), env=env)
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["file"].endswith("src/lib.rs"), report
    assert report["location"]["line"] == line_of(LIB, "// bulk check"), report
    assert report["location"]["function"] == "rusttests::tests::bulk_discount", report
    message = report["exception"]["message"]
    assert "total(1.0, 10)" in message and "left: 10.0 right: 9.0" in message, report
    assert values(report)["got"] == "10" and values(report)["quantity"] == "10", report
    # a panic has no object lldb can show: $exception is its message (it answered "not stopped at one")
    thrown = await tools("debug_evaluate", expression="$exception")
    assert thrown["type"] == "&str" and thrown["value"] == f'"{message}"', thrown
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 101, done
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == "cargo test", done
    assert "test result: FAILED. 0 passed; 1 failed" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_an_integration_test_by_its_file_stops_at_the_panic_in_the_code_under_test(
        tools: Tools, env: dict[str, str]) -> None:
    report = await tools("debug_launch", test="tests/parse.rs::last_of_two", cwd=str(PROJECT), env=env)
    assert report["reason"] == "exception", report
    assert report["location"]["line"] == line_of(LIB, "// the panic line"), report
    assert "attempt to subtract with overflow" in report["exception"]["message"], report
    stack = await tools.text("debug_stack")
    assert "parse::last_of_two at tests/parse.rs" in stack, stack  # the test's frame, under the code's
    await tools("debug_terminate")


async def test_a_breakpoint_with_the_test_a_restart_and_passing_tests(tools: Tools, env: dict[str, str]) -> None:
    line = line_of(LIB, "let expected = 9.0")
    report = await tools("debug_launch", test="tests::bulk_discount", cwd=str(PROJECT), env=env,
                         breakpoints=[{"file": "src/lib.rs", "line": line}])
    assert report["reason"] == "breakpoint" and values(report)["got"] == "10", report
    again = await tools("debug_restart")
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line, again
    await tools("debug_terminate")
    for name in ("eleven_items", "many_items"):  # the second one #[ignore]d: named, it runs
        passed = await tools("debug_launch", test=name, cwd=str(PROJECT), env=env)
        assert passed["state"] == "exited" and passed["test"]["outcome"] == "passed", passed
        assert passed["test"]["summary"].startswith("test result: ok. 1 passed"), passed
        await tools("debug_terminate")
    expected = await tools("debug_launch", test="last_of_nothing_panics", cwd=str(PROJECT), env=env)
    assert expected["state"] == "exited" and expected["test"]["outcome"] == "passed", expected  # #[should_panic]
    assert expected["test"]["name"] == "tests::last_of_nothing_panics", expected  # the one test of that name
    await tools("debug_terminate")


async def test_an_unknown_name_answers_with_the_closest_names(tools: Tools, env: dict[str, str]) -> None:
    refused = await tools.error("debug_launch", test="tests::singel_item", cwd=str(PROJECT), env=env)
    assert "no test named 'tests::singel_item'" in refused and "closest: tests::single_item" in refused, refused
    wrong_file = await tools.error("debug_launch", test="tests/parse.rs::single_item", cwd=str(PROJECT), env=env)
    assert "no test named 'single_item'" in wrong_file, wrong_file


async def test_a_restart_after_a_fix_runs_the_rebuilt_test(tools: Tools, env: dict[str, str], tmp_path: Path) -> None:
    """cargo built the test before the launch, so a restart builds it again: the fix is what runs."""
    project = tmp_path / "rusttests"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("target", "Cargo.lock"))
    report = await tools("debug_launch", test="tests::bulk_discount", cwd=str(project), env=env)
    assert report["reason"] == "exception", report
    lib = project / "src" / "lib.rs"
    lib.write_text(lib.read_text().replace("if quantity > 10 {", "if quantity >= 10 {"))
    fixed = await tools("debug_restart", timeout_s=120)
    assert fixed["state"] == "exited" and fixed["test"]["outcome"] == "passed", fixed
    lib.write_text(lib.read_text().replace("total *= 0.9;", "total *= 0.9f32;"))  # no longer compiles
    broken = await tools.error("debug_restart")
    assert "cargo test --no-run failed" in broken and "src/lib.rs:7" in broken, broken
    await tools("debug_terminate")
