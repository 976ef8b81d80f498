"""A call trace begun at a stop inside a function it names: the call under way is not recorded (no backend records
a call it saw not begin), and the answer says so instead of "never called"."""

from __future__ import annotations

from tests.conftest import PROGRAMS, Tools, line_of

UNDER_WAY = str(PROGRAMS / "calls" / "under_way.py")


async def test_a_trace_begun_inside_a_named_function_says_its_call_under_way_is_not_recorded(tools: Tools) -> None:
    await tools("debug_launch", program=UNDER_WAY,
                breakpoints=[{"file": UNDER_WAY, "line": line_of("calls/under_way.py", "# stop here")}])
    await tools("debug_clear", all=True)
    result = await tools("debug_trace", functions=["outer", "helper"], depth=1)
    note = result["calls"]["note"]
    assert "outer was on the stopped thread's stack as the trace began: a call under way is not recorded" in note
    assert "helper" not in note.split(":")[0], note  # helper is not under way: only outer is named
    rows = result["calls"]["rows"]
    assert rows[0].startswith("helper(x=3) → 6"), rows  # named itself: recorded inside the call under way
    assert any(row.startswith("outer(n=4) → 24") for row in rows), rows
