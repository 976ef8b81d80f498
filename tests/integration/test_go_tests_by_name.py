"""Go tests by name (``debug_launch(test=…)``) on a small package with table subtests, a ``t.Helper()`` function
and a panic in the code under test (tests/programs/gotests): a ``t.Errorf``/``t.Fatalf`` stops at its line in the
test's frame with its message, a panic at the panicking line, and the run's end is a verdict.

The package's test binary is built once per run as delve builds it (``go test -c -gcflags=all=-N -l``), which
fills Go's build cache for the launches.
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

PROJECT = PROGRAMS / "gotests"
TESTS = "gotests/prices_test.go"


@pytest.fixture(scope="module", autouse=True)
def _warm_build_cache(build_dir: Path) -> None:
    require("dlv", "go")
    subprocess.run(["go", "test", "-c", "-gcflags=all=-N -l", "-o", str(build_dir / "gotests.test"), "."],
                   cwd=PROJECT, check=True, capture_output=True, timeout=300)


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def test_a_failing_test_stops_at_its_t_errorf_with_the_message_and_locals(tools: Tools) -> None:
    report = await tools("debug_launch", test="TestBulkDiscount", cwd=str(PROJECT))
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["file"].endswith("prices_test.go"), report
    assert report["location"]["line"] == line_of(TESTS, "// bulk check"), report
    assert report["location"]["function"].endswith(".TestBulkDiscount"), report
    assert report["exception"] == {"type": "test failed", "message": "Total(1.0, 10) = 10, want 9"}, report
    assert values(report)["got"] == "10" and values(report)["expected"] == "9", report
    stack = await tools.text("debug_stack")
    assert "(above #0) testing.(*common).Errorf" in stack and "#0 polydbg.test/gotests.TestBulkDiscount" in stack
    stepped = await tools("debug_step")  # on from the test's line, not inside package testing
    assert stepped["reason"] == "step" and stepped["location"]["line"] == line_of(TESTS, "// bulk check") + 2, stepped
    assert stepped["location"]["function"].endswith(".TestBulkDiscount"), stepped
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1, done
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == "go test", done
    assert done["test"]["summary"].startswith("--- FAIL: TestBulkDiscount ("), done
    await tools("debug_terminate")


async def test_a_subtest_by_name_with_a_breakpoint_and_a_restart(tools: Tools) -> None:
    """Only the named subtest runs (a space in its name as go test spells it: _), a breakpoint given with it
    stops first, its t.Fatalf after, and debug_restart runs it again."""
    line = line_of(TESTS, "// table check")
    report = await tools("debug_launch", test="TestTable/ten items", cwd=str(PROJECT),
                         breakpoints=[{"file": "prices_test.go", "line": line - 1}])
    assert report["reason"] == "breakpoint" and values(report)["got"] == "10", report
    failed = await tools("debug_continue")
    assert failed["reason"] == "exception" and failed["location"]["line"] == line, failed
    assert failed["exception"]["message"] == "got 10, want 9", failed
    again = await tools("debug_restart")
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line - 1, again
    await tools("debug_clear", all=True)
    await tools("debug_continue")
    done = await tools("debug_continue")
    assert done["test"]["outcome"] == "failed", done
    assert done["test"]["summary"].startswith("--- FAIL: TestTable/ten_items ("), done
    await tools("debug_terminate")


async def test_a_helper_failure_stops_at_the_callers_line_and_a_panic_at_the_panicking_line(tools: Tools) -> None:
    report = await tools("debug_launch", test="TestHelperReportsTheCaller", cwd=str(PROJECT))
    assert report["location"]["line"] == line_of(TESTS, "// helper check"), report  # as Go names it: t.Helper()
    assert report["exception"]["message"] == "got 20, want 18", report
    stepped = await tools("debug_step")
    assert stepped["location"]["line"] == line_of(TESTS, "// helper check") + 1, stepped
    await tools("debug_terminate")
    panicked = await tools("debug_launch", test="TestAverageOfNothing", cwd=str(PROJECT))
    assert panicked["reason"] == "exception", panicked
    assert panicked["location"]["line"] == line_of("gotests/prices.go", "// the panic line"), panicked
    assert "index out of range" in panicked["exception"]["message"], panicked
    done = await tools("debug_continue")
    assert done["test"]["outcome"] == "failed" and "panic: runtime error" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_a_passing_test_passes_and_an_unknown_one_answers_with_the_closest_names(tools: Tools) -> None:
    report = await tools("debug_launch", test="TestSingleItem", cwd=str(PROJECT))
    assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
    assert report["test"]["summary"].startswith("--- PASS: TestSingleItem ("), report
    await tools("debug_terminate")
    unknown = await tools("debug_launch", test="TestSingleItme", cwd=str(PROJECT))
    assert unknown["test"]["outcome"] == "not found" and unknown["test"]["closest"][0] == "TestSingleItem", unknown
    await tools("debug_terminate")
    subtest = await tools("debug_launch", test="TestTable/elevn_items", cwd=str(PROJECT))
    assert subtest["test"]["outcome"] == "not found" and "TestTable" in subtest["test"]["closest"], subtest
    await tools("debug_terminate")
    refused = await tools.error("debug_launch", test="TestSingleItem", cwd=str(PROGRAMS), language="go")
    assert "no Go test files" in refused and "./gotests" in refused, refused


async def test_dollar_exception_at_a_t_errorf_failure_is_its_message(tools: Tools) -> None:
    """A failing t.Errorf stops as an exception ("test failed") without a panic: $exception answered that delve
    was not stopped at an exception."""
    report = await tools("debug_launch", test="TestBulkDiscount", cwd=str(PROJECT))
    assert report["exception"]["type"] == "test failed", report
    value = await tools("debug_evaluate", expression="$exception")
    assert value["value"] == '"Total(1.0, 10) = 10, want 9"' and value["type"] == "string", value
    length = await tools("debug_evaluate", expression="len($exception)")
    assert length["value"] == str(len("Total(1.0, 10) = 10, want 9")), length
    await tools("debug_terminate")


async def test_a_step_out_of_the_code_under_test_reports_its_return_value(tools: Tools) -> None:
    """A breakpoint in the function a failing test calls, then a step out: what it returned (delve/returns.py)."""
    report = await tools("debug_launch", test="TestBulkDiscount", cwd=str(PROJECT), breakpoints=[
        {"file": "prices.go", "line": line_of("gotests/prices.go", "total := unit")}])
    assert report["reason"] == "breakpoint" and report["location"]["function"].endswith(".Total"), report
    out = await tools("debug_step", kind="out")
    assert out["location"]["function"].endswith(".TestBulkDiscount"), out
    assert out["returned"] == ["gotests.Total() returned 10"], out  # as the trace names it
    await tools("debug_terminate")


async def test_a_struct_local_s_type_is_named_as_go_prints_it(tools: Tools) -> None:
    """delve names a package by its import path, and qualifies an anonymous struct's unexported fields by it:
    ``struct { polydbg.test/gotests.name string; …}`` reads ``struct { name string; … }``."""
    line = line_of(TESTS, "// table check")
    report = await tools("debug_launch", test="TestTable/ten items", cwd=str(PROJECT),
                         breakpoints=[{"file": "prices_test.go", "line": line - 1}])
    types = {v["name"]: v.get("type") for v in report["locals"]}
    assert types["c"] == "struct { name string; quantity int; want float64 }", report["locals"]
    listed = await tools("debug_evaluate", expression="c")
    assert listed["type"] == "struct { name string; quantity int; want float64 }", listed
    assert listed["value"].startswith('struct { name string; quantity int; want float64 } {name: "ten items"'), listed
    await tools("debug_terminate")
