"""Breakpoint groups over DAP: polydbg's ids bound to the adapter's, data breakpoints resolved first."""

from __future__ import annotations

from typing import Any

import pytest

from polydbg.backends.base import BreakpointResult, DataBreakpoint, FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.dap.breakpoints import BREAKPOINT_TIMEOUT_PER_S, DapBreakpoints, breakpoints_timeout
from polydbg.backends.kit import timeouts
from tests.unit.backends.dap.fake_adapter import FakeRequests


async def test_a_files_breakpoints_are_sent_together_and_their_ids_bound() -> None:
    requests = FakeRequests(setBreakpoints={"breakpoints": [{"id": 31, "verified": True, "line": 4},
                                                            {"verified": False, "message": "no code"}]})
    bps = DapBreakpoints(requests)
    results = await bps.set_source("/p/a.py", [SourceBreakpoint(1, 4, condition="x"), SourceBreakpoint(2, 9)])
    assert results == [BreakpointResult(True, line=4), BreakpointResult(False, message="no code")]
    command, arguments, timeout = requests.sent[0]
    assert command == "setBreakpoints" and arguments == {
        "source": {"path": "/p/a.py"}, "lines": [4, 9],
        "breakpoints": [{"line": 4, "condition": "x"}, {"line": 9}]}
    assert timeout == breakpoints_timeout(2)
    assert bps.ids.native_of(1) == 31 and bps.ids.native_of(2) is None
    assert bps.hits("breakpoint", [31, 99, "x"]) == (1,)


async def test_function_breakpoints_share_the_breakpoint_ids() -> None:
    bps = DapBreakpoints(FakeRequests(setFunctionBreakpoints={"breakpoints": [{"id": 5, "verified": True}]}))
    await bps.set_functions([FunctionBreakpoint(7, "main", hit_condition="3")])
    assert bps.hits("function breakpoint", [5]) == (7,)


async def test_data_breakpoints_are_resolved_then_set_and_numbered_apart() -> None:
    def info(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"dataId": f"id:{arguments['name']}"} if arguments["name"] != "&(gone)" else \
            {"description": "no such variable"}

    requests = FakeRequests(dataBreakpointInfo=info, setDataBreakpoints={"breakpoints": [{"id": 1, "verified": True},
                                                                                         {"id": 2, "verified": True}]})
    bps = DapBreakpoints(requests)
    results = await bps.set_data([DataBreakpoint(10, "a"), DataBreakpoint(11, "gone"),
                                  DataBreakpoint(12, "b", "read", data_id="known")],
                                 {"frameId": 3}, lambda expression: f"&({expression})")
    assert results == [BreakpointResult(True, data_id="id:&(a)"),
                       BreakpointResult(False, message="cannot watch 'gone': no such variable"),
                       BreakpointResult(True, data_id="known")]
    assert requests.sent[0][1] == {"name": "&(a)", "frameId": 3}
    assert requests.sent[-1][1] == {"breakpoints": [{"dataId": "id:&(a)", "accessType": "write"},
                                                    {"dataId": "known", "accessType": "read"}]}
    assert bps.hits("data breakpoint", [2]) == (12,)
    assert bps.hits("breakpoint", [2]) == ()  # a breakpoint's 2 is another breakpoint


async def test_a_data_breakpoint_without_a_frame_says_to_pause_first() -> None:
    bps = DapBreakpoints(FakeRequests(dataBreakpointInfo={}, setDataBreakpoints={}))
    [result] = await bps.set_data([DataBreakpoint(1, "x")], {}, str)
    assert result.message == "cannot watch 'x': the debugger cannot watch it (pause the program first)"


async def test_a_breakpoint_event_names_polydbgs_breakpoint() -> None:
    bps = DapBreakpoints(FakeRequests(setBreakpoints={"breakpoints": [{"id": 8}]}))
    await bps.set_source("/a.c", [SourceBreakpoint(3, 1)])
    assert bps.changed({"reason": "changed", "breakpoint": {"id": 8, "verified": True, "line": 2}}) == \
        (3, BreakpointResult(True, line=2))
    assert bps.changed({"breakpoint": {"id": 9}}) is None
    assert bps.changed({}) is None


def test_the_deadline_grows_with_the_group_and_is_read_when_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeouts, "INSPECT_S", 1.0)
    assert breakpoints_timeout(100) == pytest.approx(1.0 + 100 * BREAKPOINT_TIMEOUT_PER_S)
