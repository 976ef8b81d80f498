"""delve's internal function breakpoints sent with the session's: the race detector's symbolizer (races.py) where a
-race build binds it, testing's Fail in a test run (testfail.py); each under an id of its own, none in the answer."""

from __future__ import annotations

from typing import Any

import pytest

from polydbg.backends.base import FunctionBreakpoint
from polydbg.backends.dap.breakpoints import DapBreakpoints
from polydbg.backends.delve import races, testfail
from polydbg.backends.delve.backend import DelveBackend
from tests.fakes import RecordingListener
from tests.unit.backends.dap.fake_adapter import FakeRequests

pytestmark = pytest.mark.anyio
SESSION = [FunctionBreakpoint(1, "main.total"), FunctionBreakpoint(2, "main.price")]


def _delve(race_build: bool, test_run: bool) -> tuple[DelveBackend, FakeRequests]:
    """A backend whose delve gives breakpoint ids by name and binds the symbolizer only in a -race build."""
    natives = {"main.total": 11, "main.price": 12, races.SYMBOLIZER: 13, testfail.FAIL_FUNCTION: 14}

    def answer(arguments: dict[str, Any]) -> dict[str, Any]:
        return {"breakpoints": [{"id": natives[bp["name"]], "verified": race_build or bp["name"] != races.SYMBOLIZER}
                                for bp in arguments["breakpoints"]]}

    requests = FakeRequests(setFunctionBreakpoints=answer)
    backend = DelveBackend(RecordingListener())
    backend._breakpoints = DapBreakpoints(requests)
    if test_run:
        backend._failures = testfail.TestFailures(backend._stops)
    return backend, requests


def _names(requests: FakeRequests) -> list[str]:
    arguments = requests.sent[-1][1]
    assert arguments is not None
    return [bp["name"] for bp in arguments["breakpoints"]]


async def test_a_race_built_test_run_sends_both_internal_breakpoints_and_answers_for_the_sessions_only() -> None:
    backend, requests = _delve(race_build=True, test_run=True)
    assert [result.verified for result in await backend.set_function_breakpoints(SESSION[:1])] == [True]
    assert _names(requests) == ["main.total", testfail.FAIL_FUNCTION]  # the symbolizer waits for the launch
    results = await backend._send_functions(race_stops=True)
    assert len(results) == 1 and results[0].verified
    assert _names(requests) == ["main.total", races.SYMBOLIZER, testfail.FAIL_FUNCTION]
    assert backend._races.symbolizer_id == 13 and backend._failures is not None and backend._failures.native_id == 14
    assert len(await backend.set_function_breakpoints(SESSION)) == 2  # the session's change keeps both
    assert _names(requests) == ["main.total", "main.price", races.SYMBOLIZER, testfail.FAIL_FUNCTION]
    assert backend._breakpoints.ids.native_of(2) == 12


async def test_without_race_the_symbolizer_is_dropped_and_fail_kept() -> None:
    backend, requests = _delve(race_build=False, test_run=True)
    await backend._send_functions(race_stops=True)
    assert backend._races.symbolizer_id is None and backend._failures is not None and backend._failures.native_id == 14
    assert [result.verified for result in await backend.set_function_breakpoints(SESSION)] == [True, True]
    assert _names(requests) == ["main.total", "main.price", testfail.FAIL_FUNCTION]


async def test_outside_a_test_run_only_the_race_breakpoint_is_added() -> None:
    backend, requests = _delve(race_build=True, test_run=False)
    await backend._send_functions(race_stops=True)
    assert _names(requests) == [races.SYMBOLIZER] and backend._races.symbolizer_id == 13
    assert len(await backend.set_function_breakpoints(SESSION)) == 2
    assert _names(requests) == ["main.total", "main.price", races.SYMBOLIZER]

