"""What a ``Debugger.paused`` becomes, over a fake V8: a hit that does not count resumes unseen, one
that counts is a stop naming its breakpoint; a pause of an idle program says so."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest

from polydbg.backends.base import SourceBreakpoint, StopEvent
from polydbg.backends.node.stops import PROBE_URL
from polydbg.errors import AdapterRequestError
from tests.unit.backends.node.fakev8 import Session


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    made = Session()
    await made.v8.event("Debugger.scriptParsed", {"scriptId": "7", "url": "file:///tmp/app/main.js"})
    yield made
    await made.close()


def _paused(script: str, line: int, hit: list[str], reason: str = "other") -> dict[str, Any]:
    frame = {"callFrameId": "f0", "functionName": "main", "location": {"scriptId": script, "lineNumber": line}}
    return {"callFrames": [frame], "reason": reason, "hitBreakpoints": hit}


def _stops(session: Session) -> list[StopEvent]:
    return [value for kind, value in session.listener.events if kind == "stopped"]


async def test_a_hit_that_does_not_count_resumes_and_the_one_that_counts_stops(session: Session) -> None:
    await session.breakpoints.set_breakpoints("/tmp/app/main.js", [SourceBreakpoint(1, 3, hit_condition="2")])
    with anyio.fail_after(5):
        await session.v8.event("Debugger.paused", _paused("7", 2, ["bp1"]))
        await session.v8.wait_for("Debugger.resume")
        await session.v8.event("Debugger.resumed", {})
        assert _stops(session) == []
        await session.v8.event("Debugger.paused", _paused("7", 2, ["bp1"]))
        await session.listener.stopped.wait()
    [stop] = _stops(session)
    assert (stop.reason, stop.thread_id, stop.hit_breakpoint_ids) == ("breakpoint", 1, (1,))
    assert session.main.stack_trace(0, 10)[0][0][1:3] == ("/tmp/app/main.js", 3)


async def test_a_debugger_statement_stops(session: Session) -> None:
    with anyio.fail_after(5):
        await session.v8.event("Debugger.paused", _paused("7", 0, []))
        await session.listener.stopped.wait()
    [stop] = _stops(session)
    assert (stop.reason, stop.description, stop.text) == ("breakpoint", "Paused on debugger statement",
                                                          "debugger statement")


async def test_the_start_is_not_a_stop(session: Session) -> None:
    with anyio.fail_after(5):
        await session.v8.event("Debugger.paused", _paused("7", 0, [], reason="Break on start"))
        await session.v8.wait_for("Debugger.resume")
    assert _stops(session) == []


async def test_a_pause_of_an_idle_program_says_so(session: Session) -> None:
    async def probe_pauses(_params: dict[str, Any]) -> None:
        await session.v8.event("Debugger.scriptParsed", {"scriptId": "99", "url": PROBE_URL})
        await session.v8.event("Debugger.paused", _paused("99", 0, [], reason="other"))

    session.v8.after["Runtime.evaluate"] = probe_pauses
    with anyio.fail_after(5), pytest.raises(AdapterRequestError, match="nothing to pause: no JavaScript was running"):
        await session.stops.pause(None)
    assert session.v8.methods() == ["Debugger.pause", "Runtime.evaluate", "Runtime.releaseObjectGroup",
                                    "Debugger.resume"]
    assert _stops(session) == []


async def test_a_step_that_stops_before_its_request_returns_stays_the_shown_stop(session: Session) -> None:
    """Node may report a short step's stop before the step request's answer is read: that stop is the one
    shown (the stack must not call its thread "waiting", nor an inspection fall back to another thread)."""
    with anyio.fail_after(5):
        await session.v8.event("Debugger.paused", _paused("7", 0, []))
        await session.listener.until("stopped")

        async def stops_at_once(_params: dict[str, Any]) -> None:
            await session.v8.event("Debugger.resumed", {})
            await session.v8.event("Debugger.paused", _paused("7", 1, [], reason="other"))
            await session.listener.until("stopped", 2)

        session.v8.before["Debugger.stepOver"] = stops_at_once
        await session.stops.step(1, "over")
    assert [stop.reason for stop in _stops(session)] == ["breakpoint", "step"]
    assert session.gate.shown == 1


async def test_a_breakpoint_in_a_dependency_stops_where_it_is(session: Session) -> None:
    """A dependency's frames on top are left out of an exception's or a step's stop, not out of a stop at a
    breakpoint the user set in that dependency."""
    dependency = "/tmp/app/node_modules/dep/index.js"
    await session.v8.event("Debugger.scriptParsed", {"scriptId": "8", "url": f"file://{dependency}"})
    await session.breakpoints.set_breakpoints(dependency, [SourceBreakpoint(1, 5)])
    frames = [{"callFrameId": "f0", "functionName": "depFn", "location": {"scriptId": "8", "lineNumber": 4}},
              {"callFrameId": "f1", "functionName": "main", "location": {"scriptId": "7", "lineNumber": 2}}]
    with anyio.fail_after(5):
        await session.v8.event("Debugger.paused", {"callFrames": frames, "reason": "other", "hitBreakpoints": ["bp1"]})
        await session.listener.stopped.wait()
    assert [frame[1:3] for frame in session.main.stack_trace(0, 10)[0]] == [(dependency, 5), ("/tmp/app/main.js", 3)]


async def test_the_callers_past_awaits_are_listed_without_node_s_frames_or_what_ran_the_program(
        session: Session) -> None:
    """A stop's ``asyncStackTrace`` (its segments past an await, a .then, a timer) as async callers: Node's own
    frames are left out, and a dependency's below the program's last frame in a segment (a loader that ran it),
    not one between the program's frames; at most as many frames as asked."""
    await session.v8.event("Debugger.scriptParsed", {"scriptId": "8", "url": "file:///tmp/app/node_modules/lib/x.js"})
    await session.v8.event("Debugger.scriptParsed", {"scriptId": "9", "url": "node:internal/timers"})

    def frame(name: str, script: str, line: int) -> dict[str, Any]:
        return {"functionName": name, "scriptId": script, "lineNumber": line, "columnNumber": 0}

    trace = {"description": "await", "callFrames": [frame("middle", "7", 5), frame("", "8", 1), frame("top", "7", 9),
                                                   frame("listOnTimeout", "9", 580)],
             "parent": {"description": "Timeout", "callFrames": [frame("setTimeout", "9", 160), frame("", "7", 20),
                                                                 frame("load", "8", 40)]}}
    with anyio.fail_after(5):
        await session.v8.event("Debugger.paused", {**_paused("7", 1, []), "asyncStackTrace": trace})
        await session.listener.stopped.wait()
    main = "/tmp/app/main.js"
    dependency = "/tmp/app/node_modules/lib/x.js"
    assert [(via, [(f.name, f.file, f.line) for f in frames]) for via, frames in session.main.async_callers(20)] == [
        ("await", [("middle", main, 6), ("(anonymous)", dependency, 2), ("top", main, 10)]),
        ("Timeout", [("(anonymous)", main, 21)])]
    assert [len(frames) for _via, frames in session.main.async_callers(2)] == [2]
