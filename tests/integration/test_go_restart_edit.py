"""Go code cannot change in a running program: debug_continue(reload=true) says so and what runs the edit
(debug_restart: delve builds the package again), changing nothing; the restart then runs the edited code."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Tools, require

PROGRAM = """package main

import "fmt"

func price(i int) int {
	return i * 2 // the bug
}

func main() {
	total := 0
	for i := 0; i < 3; i++ {
		total += price(i) // loop body
	}
	fmt.Println("total", total)
}
"""


@pytest.fixture(autouse=True)
def _go() -> None:
    require("dlv", "go")


async def test_a_go_edit_is_refused_by_reload_and_run_by_the_restart(tools: Tools, tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text("module edited\n\ngo 1.19\n")
    source = tmp_path / "main.go"
    source.write_text(PROGRAM)
    report = await tools("debug_launch", program=str(tmp_path), breakpoints=[
        {"file": str(source), "line": "total += price(i)"}])
    assert report["reason"] == "breakpoint", report
    source.write_text(PROGRAM.replace("i * 2 // the bug", "i * 3 // fixed"))
    refused = await tools.error("debug_continue", reload=True)
    assert refused.startswith("delve cannot change a running Go program's code: nothing was changed. debug_restart "
                              "builds it again and runs it, with the breakpoints kept"), refused
    assert (await tools("debug_evaluate", expression="i"))["value"] == "0"  # still where it was
    again = await tools("debug_restart", timeout_s=120)
    assert again["reason"] == "breakpoint", again
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["state"] == "exited" and "total 9" in done["output"]["text"], done  # 0 + 3 + 6: the edit ran
    await tools("debug_terminate")
