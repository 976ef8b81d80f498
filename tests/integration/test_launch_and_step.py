"""The stop report's text form, through the MCP layer against real debugpy.

Launch, breakpoints, stepping and the structured stop report are checked for every backend by
test_conformance.py.
"""

from __future__ import annotations

from tests.conftest import Tools, line_of, program

BASIC = program("basic.py")


async def test_text_rendering_is_compact(tools: Tools) -> None:
    line = line_of("basic.py", "total = a + b")
    text = await tools.text("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    assert text.startswith("[s1] stopped (breakpoint) at ")
    assert "in add" in text
    assert "a (int) = 0" in text
    assert len(text.encode()) < 2048
    await tools("debug_terminate")
