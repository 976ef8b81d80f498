"""Which goroutine delve's stops are shown on, and the runtime frames hidden above the user's code
(tests/unit/backends/delve/test_helpers.py covers unquote and in_runtime)."""

from __future__ import annotations

import asyncio
from typing import Any

from polydbg.backends.base import ExceptionDetail, StopEvent
from polydbg.backends.delve import stops
from polydbg.backends.kit.frames import FrameHandles
from polydbg.backends.kit.ordering import OrderedEvents
from tests.fakes import RecordingListener
from tests.unit.backends.dap.fake_adapter import FakeRequests


def _threads(*names: str) -> list[dict[str, Any]]:
    return [{"id": index + 1, "name": name} for index, name in enumerate(names)]


def test_a_pause_goes_to_a_running_goroutine_in_user_code() -> None:
    threads = _threads("* [Go 1] runtime.gopark", "[Go 2] main.spin (Thread 9)", "[Go 3] runtime.mcall (Thread 8)",
                       "Thread 77 (no goroutine)")
    assert stops.pause_target(threads, 4) == (2, True)
    assert stops.pause_target(_threads("[Go 1] main.a (Thread 1)", "[Go 2] main.b (Thread 2)"), 2) == (2, True)


def test_else_a_running_one_in_the_runtime_then_the_selected_then_user_code() -> None:
    assert stops.pause_target(_threads("[Go 1] main.wait", "[Go 2] runtime.x (Thread 1)"), None) == (2, True)
    assert stops.pause_target(_threads("[Go 1] main.wait", "* [Go 2] runtime.gopark"), None) == (2, False)
    assert stops.pause_target(_threads("[Go 1] runtime.gopark", "[Go 2] main.wait"), None) == (2, False)
    assert stops.pause_target(_threads("Thread 1"), None) == (None, False)


def _event(body: dict[str, Any]) -> StopEvent:
    return StopEvent(reason=str(body.get("reason")), thread_id=body.get("threadId"),
                     description=body.get("description"), text=body.get("text"))


def _stops(requests: FakeRequests) -> tuple[stops.DelveStops, RecordingListener, list[str]]:
    listener = RecordingListener()
    gone: list[str] = []
    found = stops.DelveStops(OrderedEvents(listener), FrameHandles(), requests, _event, lambda: True, gone.append)
    return found, listener, gone


_RUNTIME = {"id": 1, "name": "runtime.gopanic", "source": {"path": "/go/src/runtime/panic.go"}}
_USER = {"id": 2, "name": "main.main", "source": {"path": "/app/main.go"}}
_PARK = {"id": 3, "name": "runtime.gopark", "source": {"path": "/go/src/runtime/proc.go"}}
_LOCK = {"id": 4, "name": "sync.(*Mutex).Lock", "source": {"path": "/go/src/sync/mutex.go"}}
_MAIN = {"id": 5, "name": "main.transfer", "source": {"path": "/app/main.go"}}


def _by_thread(stacks: dict[int, list[dict[str, Any]]]) -> Any:
    return lambda arguments: {"stackFrames": stacks[arguments["threadId"]]}


async def test_a_panic_is_reported_at_once_and_its_runtime_frames_hidden() -> None:
    found, listener, _ = _stops(FakeRequests(stackTrace=_by_thread({1: [_RUNTIME, _USER], 2: [_USER]})))
    found.take({"reason": "exception", "threadId": 1, "description": "panic", "text": '"boom"'})
    assert listener.events == [("stopped", StopEvent("exception", 1, "panic", "boom"))]
    assert await found.hidden_frames(1) == 1
    assert await found.hidden_frames(2) == 0
    found.moving()
    assert await found.hidden_frames(1) == 0


async def test_other_goroutines_parked_in_the_runtime_start_at_the_users_code() -> None:
    """Their runtime and library frames are hidden (listed above frame 0: the library's, as Go's traceback
    shows them); the goroutine of a breakpoint keeps every frame, whatever code it stopped in."""
    stacks = {1: [_PARK, _LOCK, _MAIN], 2: [_PARK, _LOCK, _MAIN], 3: [_LOCK, _MAIN]}
    found, _, _ = _stops(FakeRequests(stackTrace=_by_thread(stacks)))
    found.take({"reason": "breakpoint", "threadId": 1})
    assert [await found.hidden_frames(thread) for thread in (1, 2, 3)] == [0, 2, 0]
    assert found.goroot == "/go"  # where the runtime's sources are: the library is beside them
    assert await found.library_above(2) == [_LOCK]
    assert await found.library_above(1) == []


async def test_a_fatal_error_on_the_runtimes_thread_moves_to_a_user_goroutine() -> None:
    requests = FakeRequests(stackTrace={"stackFrames": [_RUNTIME]},
                            threads={"threads": _threads("[Go 1] main.main", "[Go 2] runtime.gopark")})
    found, listener, _ = _stops(requests)
    found.take({"reason": "exception", "threadId": 1000, "description": "fatal error",
                "text": "all goroutines are asleep - deadlock!"})
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    assert listener.events == [("stopped", StopEvent("exception", 1, "fatal error",
                                                     "all goroutines are asleep - deadlock!"))]
    assert found.moved_exception(1) == ExceptionDetail("fatal error", "all goroutines are asleep - deadlock!")
    assert found.moved_exception(1000) is None


async def test_a_program_killed_from_outside_ends_the_session() -> None:
    found, listener, gone = _stops(FakeRequests())
    found.take({"reason": "exception", "threadId": 1, "description": "no such process"})
    assert gone == [stops.PROGRAM_VANISHED] and listener.events == []


async def test_a_stop_at_entry_lists_the_os_threads_stack() -> None:
    found, listener, _ = _stops(FakeRequests())
    found.take({"reason": "entry", "threadId": 1})
    assert found.at_entry and found.stopped and listener.events == [("stopped", StopEvent("entry", 1))]
    found.moving()
    assert not found.at_entry and not found.stopped
