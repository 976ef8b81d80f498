"""Stop refinement keeps events in order: while a refinement runs, stops, continues, exits and terminations
queue behind it and are delivered afterwards as they happened; output and breakpoint changes pass at once."""

from __future__ import annotations

import asyncio

import pytest

from polydbg.backends.base import BreakpointResult, StopEvent
from polydbg.backends.kit.ordering import OrderedEvents
from tests.fakes import RecordingListener

DEADLINE_S = 2.0


class Refinement:
    """A refinement the test finishes: it reports ``event`` through the target once released."""

    def __init__(self, events: OrderedEvents, event: StopEvent) -> None:
        self.events = events
        self.event = event
        self.release = asyncio.Event()
        self.started = asyncio.Event()
        self.finished = asyncio.Event()

    async def run(self) -> None:
        self.started.set()
        try:
            await self.release.wait()
            self.events.target.on_stopped(self.event)
        finally:
            self.finished.set()


def reasons(listener: RecordingListener) -> list[str]:
    return [f"{kind}:{value.reason if kind == 'stopped' else value}" for kind, value in listener.events]


async def test_without_a_refinement_events_are_delivered_at_once() -> None:
    session = RecordingListener()
    events = OrderedEvents(session)
    events.on_stopped(StopEvent("breakpoint", 1))
    events.on_continued(1, True)
    events.on_exited(0)
    events.on_terminated(None)
    assert reasons(session) == ["stopped:breakpoint", "continued:1", "exited:0", "terminated:None"]


async def test_events_queue_behind_a_refinement_and_are_delivered_in_order() -> None:
    session = RecordingListener()
    events = OrderedEvents(session)
    refining = Refinement(events, StopEvent("panic", 1))
    events.refine(refining.run())
    assert events.refining
    events.on_continued(1, True)
    events.on_stopped(StopEvent("breakpoint", 1))
    events.on_exited(3)
    events.on_terminated("ended")
    events.on_output("stderr", "thread 'main' panicked\n")  # output is not held back
    events.on_breakpoint_changed(2, BreakpointResult(True, 9))
    await asyncio.wait_for(refining.started.wait(), DEADLINE_S)
    assert reasons(session) == ["output:('stderr', \"thread 'main' panicked\\n\")",
                                f"breakpoint:{(2, BreakpointResult(True, 9))}"]
    refining.release.set()
    await session.until("terminated", timeout_s=DEADLINE_S)
    assert reasons(session)[2:] == ["stopped:panic", "continued:1", "stopped:breakpoint", "exited:3",
                                    "terminated:ended"]
    assert not events.refining


async def test_a_refinement_started_by_a_queued_delivery_pauses_the_draining() -> None:
    session = RecordingListener()
    events = OrderedEvents(session)
    first = Refinement(events, StopEvent("signal", 1))
    second = Refinement(events, StopEvent("pause", 2))
    events.refine(first.run())
    events.deliver(lambda: events.refine(second.run()))  # e.g. a queued stop that needs refining too
    events.on_exited(0)
    first.release.set()
    await asyncio.wait_for(second.started.wait(), DEADLINE_S)
    assert reasons(session) == ["stopped:signal"]  # the exit waits for the second refinement
    assert events.refining
    second.release.set()
    await session.until("exited", timeout_s=DEADLINE_S)
    assert reasons(session) == ["stopped:signal", "stopped:pause", "exited:0"]


async def test_a_failing_refinement_is_logged_and_the_queue_still_drains(caplog: pytest.LogCaptureFixture) -> None:
    session = RecordingListener()
    events = OrderedEvents(session)

    async def broken() -> None:
        raise RuntimeError("the stack could not be read")

    events.refine(broken())
    events.on_exited(1)
    await session.until("exited", timeout_s=DEADLINE_S)
    assert reasons(session) == ["exited:1"]
    assert "refining a stop failed" in caplog.text and "the stack could not be read" in caplog.text


async def test_cancel_drops_the_refinement_and_what_waited_behind_it() -> None:
    session = RecordingListener()
    events = OrderedEvents(session)
    refining = Refinement(events, StopEvent("panic", 1))
    events.refine(refining.run())
    events.on_exited(0)
    await asyncio.wait_for(refining.started.wait(), DEADLINE_S)
    events.cancel()
    await asyncio.wait_for(refining.finished.wait(), DEADLINE_S)
    assert not events.refining
    events.on_terminated("ended by polydbg")  # after the cancel: delivered at once
    assert reasons(session) == ["terminated:ended by polydbg"]
