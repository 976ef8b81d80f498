"""Breakpoints, run-to locations and trace points by the text of their line (agents often know the statement,
not its number), through the MCP layer against real debugpy."""

from __future__ import annotations

from tests.conftest import Tools, line_of, program

LOOP = program("loop.py")
LOOP_BODY = line_of("loop.py", "total += square(i)")
SQUARE_BODY = line_of("loop.py", "result = n * n")
LOOP_PRINT = line_of("loop.py", 'print("total:", total)')


async def test_debug_break_by_text_binds_to_the_line_holding_it_and_says_which(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, stop_on_entry=True)
    text = await tools.text("debug_break", file=LOOP, line="total += square(i)")
    assert f":{LOOP_BODY}" in text and f"line {LOOP_BODY} holds" in text
    report = await tools("debug_continue", timeout_s=15)
    assert report["location"]["line"] == LOOP_BODY
    # spaced differently, it is still the same line
    listed = await tools("debug_break", file=LOOP, line="result=n*n")
    assert listed["breakpoints"][0]["line"] == SQUARE_BODY
    await tools("debug_terminate")


async def test_launch_breakpoints_and_run_to_take_text_and_a_number_as_text(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": "result = n * n"}])
    assert report["location"]["line"] == SQUARE_BODY
    await tools("debug_clear", all=True)
    moved = await tools("debug_continue", to={"file": LOOP, "line": 'print("total:"'}, timeout_s=15)
    assert moved["location"]["line"] == LOOP_PRINT
    await tools("debug_terminate")
    await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": str(LOOP_BODY)}])
    assert (await tools("debug_breakpoints"))["breakpoints"][0]["line"] == LOOP_BODY
    await tools("debug_terminate")


async def test_trace_points_take_text(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, stop_on_entry=True)
    trace = await tools("debug_trace", points=[{"file": LOOP, "line": "total += square(i)"}], expressions=["i"],
                        max_hits=3, timeout_s=20)
    assert [row["values"]["i"] for row in trace["hits"]][:3] == ["0", "1", "2"]
    await tools("debug_terminate")


async def test_text_on_several_lines_or_on_none_is_refused_naming_the_lines(tools: Tools) -> None:
    ambiguous = await tools.error("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": "total"}])
    assert "lines of" in ambiguous and str(LOOP_BODY) in ambiguous and "pass the line number" in ambiguous
    missing = await tools.error("debug_break", file=LOOP, line="no such statement")
    assert "no line of" in missing and "debug_source" in missing
    assert not (await tools("debug_sessions"))["sessions"]  # the refused launch left no session behind
