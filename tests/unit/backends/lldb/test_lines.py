"""Line breakpoints lldb leaves unbound (lines.py): moved to the next line with code, or pending saying why."""

from __future__ import annotations

from typing import Any

from polydbg.backends.base import BreakpointResult, SourceBreakpoint
from polydbg.backends.lldb import lines


async def test_an_unbound_breakpoint_moves_to_the_next_line_with_code() -> None:
    sent = [SourceBreakpoint(1, 4), SourceBreakpoint(2, 9), SourceBreakpoint(3, 40)]
    asked: list[tuple[int, int]] = []
    resent: list[list[SourceBreakpoint]] = []

    async def locations(first: int, last: int) -> dict[str, Any]:
        asked.append((first, last))
        return {"breakpoints": [{"line": 6, "column": 3}, {"line": 7}, {"line": 9}]}

    async def send(these: list[SourceBreakpoint]) -> list[BreakpointResult]:
        resent.append(these)
        return [BreakpointResult(bp.line != 40, bp.line) for bp in these]

    first = [BreakpointResult(False, 4), BreakpointResult(True, 9), BreakpointResult(False, 40)]
    results = await lines.bound_to_code("/src/app.c", sent, first, locations, send)
    assert asked == [(4, 40 + lines.LOOKAHEAD)]
    assert [bp.line for bp in resent[0]] == [6, 9, 40]  # 4 → 6, the next line lldb lists code for
    assert results[:2] == [BreakpointResult(True, 6), BreakpointResult(True, 9)]
    assert not results[2].verified and results[2].message is not None
    assert "no code at or after line 40 of app.c" in results[2].message


async def test_breakpoints_lldb_bound_cost_no_request() -> None:
    async def never(*_args: Any) -> Any:
        raise AssertionError("not asked")

    bound = [BreakpointResult(True, 5)]
    assert await lines.bound_to_code("/src/app.c", [SourceBreakpoint(1, 5)], bound, never, never) == bound
