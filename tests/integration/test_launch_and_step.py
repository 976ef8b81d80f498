"""Launch, breakpoints, stepping and the StopReport, through the MCP layer against real debugpy."""

from __future__ import annotations

from tests.conftest import Tools, line_of, program

BASIC = program("basic.py")


async def test_launch_stops_at_breakpoint_with_source_and_locals(tools: Tools) -> None:
    line = line_of("basic.py", "total = a + b")
    report = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    assert report["state"] == "stopped"
    assert report["reason"] == "breakpoint"
    assert report["location"] == {"file": BASIC, "line": line, "function": "add"}
    assert f"{line}>*" in report["source"]
    assert {v["name"]: v["value"] for v in report["locals"]} == {"a": "0", "b": "0"}
    await tools("debug_terminate")


async def test_step_into_and_out(tools: Tools) -> None:
    call_line = line_of("basic.py", "items.append(add(i, i))")
    await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": call_line}])
    inside = await tools("debug_step", kind="into")
    assert inside["location"]["function"] == "add"
    assert inside["reason"] == "step"
    back = await tools("debug_step", kind="out")
    assert back["location"]["function"] == "collect"
    assert back["location"]["line"] == call_line
    await tools("debug_terminate")


async def test_text_rendering_is_compact(tools: Tools) -> None:
    line = line_of("basic.py", "total = a + b")
    text = await tools.text("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    assert text.startswith("[s1] stopped (breakpoint) at ")
    assert "in add" in text
    assert "a (int) = 0" in text
    assert len(text.encode()) < 2048
    await tools("debug_terminate")
