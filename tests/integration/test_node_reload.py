"""Edited JavaScript put into a running Node program: debug_continue(reload=true) on real Node (node/reload.py).

Each test runs a copy of tests/programs/node/reload.js in tmp_path and edits the copy while the program is stopped:
the program's own output says which code ran.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, require
from tests.integration.test_node import node_modules

PROGRAM = PROGRAMS / "node" / "reload.js"


@pytest.fixture(autouse=True)
def _node() -> None:
    require("node")


@pytest.fixture
def program(tmp_path: Path) -> Path:
    copy = tmp_path / "reload.js"
    shutil.copy(PROGRAM, copy)
    return copy


def line(program: Path, marker: str) -> int:
    return next(n for n, text in enumerate(program.read_text().splitlines(), 1) if marker in text)


def edit(program: Path, old: str, new: str) -> None:
    text = program.read_text()
    assert old in text
    program.write_text(text.replace(old, new))


async def stopped_at(tools: Tools, program: Path, marker: str) -> dict[str, Any]:
    report = await tools("debug_launch", program=str(program),
                         breakpoints=[{"file": str(program), "line": line(program, marker)}])
    assert report["reason"] == "breakpoint", report
    return report


async def run_to_end(tools: Tools, program: Path) -> str:
    await tools("debug_clear", file=str(program))
    done = await tools("debug_continue")
    assert done["state"] == "exited", done
    return str(done["output"]["text"])


async def test_a_function_fixed_while_stopped_in_it_is_re_entered(tools: Tools, program: Path) -> None:
    await stopped_at(tools, program, "price end")
    edit(program, "n * 2; // price body", "n * 100; // price body")
    report = await tools("debug_continue", reload=True)
    # price(1) ran again from its start, with the new code, up to the breakpoint: nothing printed yet
    assert "reloaded reload.js: price; re-entered price (reload.js:7)" in report["note"], report
    assert report["location"] == {"file": str(program), "line": line(program, "price end"), "function": "price"}
    assert {v["name"]: v["value"] for v in report["locals"]} == {"n": "1", "raw": "100"}, report
    assert "output" not in report, report
    assert await run_to_end(tools, program) == "price 1 = 100\nprice 2 = 200\nprice 3 = 300\nprice 4 = 400\n"


async def test_a_function_fixed_while_its_caller_is_stopped_runs_at_its_next_call(tools: Tools,
                                                                                 program: Path) -> None:
    await stopped_at(tools, program, "after the call")
    edit(program, "n * 2; // price body", "n * 100; // price body")
    report = await tools("debug_continue", reload=True)
    assert report["note"].startswith("reloaded reload.js: price"), report
    assert "re-entered" not in report["note"], report
    assert {v["name"]: v["value"] for v in report["locals"]}["value"] == "200", report
    assert report["output"]["text"] == "price 1 = 2\n", report
    assert await run_to_end(tools, program) == "price 2 = 200\nprice 3 = 300\nprice 4 = 400\n"


async def test_a_function_fixed_further_down_the_stack_is_restarted(tools: Tools, program: Path) -> None:
    await stopped_at(tools, program, "round body")
    edit(program, "n * 2; // price body", "n * 100; // price body")
    report = await tools("debug_continue", reload=True)
    assert "re-entered price (reload.js:7)" in report["note"], report
    assert report["location"]["function"] == "round", report  # round's next call, from price(1) run again
    assert await run_to_end(tools, program) == "price 1 = 100\nprice 2 = 200\nprice 3 = 300\nprice 4 = 400\n"


async def test_a_syntax_error_changes_nothing(tools: Tools, program: Path) -> None:
    await stopped_at(tools, program, "price body")
    edit(program, "n * 2; // price body", "n * (2; // price body")
    refused = await tools.error("debug_continue", reload=True)
    assert f"{program}:{line(program, 'price body')}:" in refused and "SyntaxError" in refused, refused
    assert "nothing was reloaded" in refused, refused
    frames = (await tools("debug_stack"))["threads"][0]["frames"]  # not moved
    assert (frames[0]["line"], frames[1]["function"]) == (line(program, "price body"), "main"), frames
    assert await run_to_end(tools, program) == "price 1 = 2\nprice 2 = 4\nprice 3 = 6\nprice 4 = 8\n"


async def test_a_reload_with_nothing_edited_says_so(tools: Tools, program: Path) -> None:
    await stopped_at(tools, program, "after the call")
    report = await tools("debug_continue", reload=True)
    assert report["note"].startswith("reload: no source file was edited"), report
    assert report["output"]["text"] == "price 1 = 2\n", report


async def test_breakpoints_stop_at_their_lines_of_the_reloaded_file(tools: Tools, program: Path) -> None:
    """V8 drops a changed script's breakpoints: each is set again at its line, which after a line added above it is
    another statement (as a restart would place it)."""
    listed = line(program, "after the call")
    await stopped_at(tools, program, "after the call")
    edit(program, "  const raw = n * 2; // price body\n", "  const doubled = n * 2;\n  const raw = doubled * 10;\n")
    report = await tools("debug_continue", reload=True)
    assert report["location"]["line"] == listed, report
    assert f"{listed}>*    const value = price(i);" in report["source"], report
    assert {v["name"]: v["value"] for v in report["locals"]}["i"] == "2", report
    report = await tools("debug_continue")
    assert report["location"]["line"] == listed and report["output"]["text"] == "price 2 = 40\n", report


async def test_a_typescript_function_run_by_tsx_is_compiled_again_and_re_entered(tools: Tools, tmp_path: Path) -> None:
    modules = node_modules()
    program = tmp_path / "reload.ts"
    shutil.copy(PROGRAMS / "node" / "tsx" / "reload.ts", program)
    (tmp_path / "node_modules").symlink_to(modules)
    first = await stopped_at(tools, program, "price end")  # tsx's one-line code: V8 stops at the return, the "}"
    edit(program, "n * 2; // price body", "n * 100; // price body")
    report = await tools("debug_continue", reload=True)
    assert "reloaded reload.ts: price; re-entered price (reload.ts:3)" in report["note"], report
    assert report["location"] == first["location"], report
    assert {v["name"]: v["value"] for v in report["locals"]} == {"n": "1", "raw": "100"}, report
    edit(program, "n * 100; // price body", "n * 1000; // price body")  # a second reload reads the first's map
    report = await tools("debug_continue", reload=True)
    assert {v["name"]: v["value"] for v in report["locals"]} == {"n": "1", "raw": "1000"}, report
    assert await run_to_end(tools, program) == "price 1 = 1000\nprice 2 = 2000\nprice 3 = 3000\nprice 4 = 4000\n"


async def test_a_dependency_s_function_edited_while_stopped_in_it_is_re_entered(tools: Tools, tmp_path: Path) -> None:
    """A fix tried in node_modules (blackboxed: V8 skipped the pause its restart ends in) is put in and re-entered."""
    dependency = tmp_path / "node_modules" / "units" / "index.js"
    dependency.parent.mkdir(parents=True)
    dependency.write_text("function minutes(n) {\n  const unit = 60; // unit\n  return n * unit;\n}\n"
                          "module.exports = function convert(text) { return minutes(Number(text)); };\n")
    app = tmp_path / "app.js"
    app.write_text("const convert = require('units');\n"
                   "for (const text of ['1', '2', '3']) console.log(text + ' = ' + convert(text));\n")
    report = await tools("debug_launch", program=str(app), cwd=str(tmp_path),
                         breakpoints=[{"file": str(dependency), "line": 3}])
    assert report["location"]["function"] == "minutes", report
    dependency.write_text(dependency.read_text().replace("const unit = 60;", "const unit = 60000;"))
    again = await tools("debug_continue", reload=True)
    assert "reloaded index.js: minutes; re-entered minutes (index.js:2)" in again["note"], again
    # minutes('1') ran again from its start with the new code, up to the breakpoint: nothing printed yet
    assert again["location"] == {"file": str(dependency), "line": 3, "function": "minutes"}, again
    assert {v["name"]: v["value"] for v in again["locals"]} == {"n": "1", "unit": "60000"}, again
    assert "output" not in again, again
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["output"]["text"] == "1 = 60000\n2 = 120000\n3 = 180000\n", done
