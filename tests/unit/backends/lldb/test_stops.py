"""Why lldb-dap stopped, as polydbg reports it: the pure readings, and stops classified with a fake
adapter (no lldb runs)."""

from __future__ import annotations

import asyncio
from typing import Any

from polydbg.backends.base import ExceptionDetail, Frame, StopEvent
from polydbg.backends.kit.frames import FrameHandles
from polydbg.backends.kit.handles import IdMap
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.lldb import stops
from tests.fakes import RecordingListener
from tests.unit.backends.dap.fake_adapter import FakeRequests


def test_a_signal_is_named_and_explained() -> None:
    assert stops.signal_detail(ExceptionDetail("signal", "signal SIGSEGV: invalid address (fault address: 0x0)")) == \
        ExceptionDetail("SIGSEGV", "invalid address (fault address: 0x0)")
    assert stops.signal_detail(ExceptionDetail("signal", "signal SIGFPE")) == \
        ExceptionDetail("SIGFPE", "arithmetic exception")
    other = ExceptionDetail("C++ Throw", "std::out_of_range")
    assert stops.signal_detail(other) == other


def test_why_the_program_aborted_is_read_from_its_output() -> None:
    terminate = ("terminate called after throwing an instance of 'std::runtime_error'\n"
                 "  what():  disk full\n")
    assert stops.abort_detail("noise\n" + terminate) == ExceptionDetail("std::runtime_error", "disk full")
    assert stops.abort_detail("app: main.c:5: main: Assertion `x > 0' failed.\n") == \
        ExceptionDetail("SIGABRT", "Assertion `x > 0' failed.")
    assert stops.abort_detail("nothing to see") is None


def test_lldbs_report_of_a_watchpoint_hit_becomes_the_stops_values() -> None:
    lldb = stops.LldbStops("c", OrderedEvents(RecordingListener()), FrameHandles(), FakeRequests(),
                           lambda body: StopEvent("data breakpoint", body.get("threadId")), IdMap(), lambda n: None)
    assert not lldb.output("console", "value: 3\n")  # not inside a report: left alone
    assert [lldb.output("console", line) for line in ("Watchpoint 1 hit:\n", "old value: '\\0'\n",
                                                      "new value: ','\n")] == [True, True, True]
    assert lldb._watch_values == "'\\0' → ','"
    assert not lldb.output("stdout", "value: 4\n")  # the program's own output never is
    assert stops.watch_values("", stops._WATCH_REPORT.match("value: 9\n")) == "9"  # type: ignore[arg-type]


def test_a_condition_lldb_could_not_evaluate_says_how_to_fix_it() -> None:
    text = 'stopped due to an error evaluating condition of breakpoint 1.1: "nope > 1"\nerror: …'
    failure = stops.condition_failure(text + "\n")
    assert failure is not None and "'nope > 1'" in failure and "debug_clear" in failure
    assert stops.condition_failure("Process 1 stopped\n") is None


def test_library_frames() -> None:
    assert stops.library_frame(Frame("abort", "/usr/src/abort.c", 79))
    assert stops.library_frame(Frame("raise", None, None))
    assert stops.library_frame(Frame("__libc_start", "../sysdeps/nptl/libc_start_call.c", 58))
    assert stops.library_frame(Frame("core::panicking::panic", "/rustc/abc/library/core/src/panicking.rs", 1))
    assert not stops.library_frame(Frame("main", "/home/u/app/main.c", 5))


def _stop_event(body: dict[str, Any]) -> StopEvent:
    return StopEvent(reason=str(body.get("reason")), thread_id=body.get("threadId"),
                     description=body.get("description"), text=body.get("text"))


def _stops(requests: FakeRequests | None = None, language: str = "c") -> tuple[stops.LldbStops, RecordingListener,
                                                                                FrameHandles[int]]:
    listener = RecordingListener()
    frames: FrameHandles[int] = FrameHandles()
    found = stops.LldbStops(language, OrderedEvents(listener), frames, requests or FakeRequests(), _stop_event,
                            IdMap(), {1: "#2 counter"}.get)
    return found, listener, frames


def _stopped(listener: RecordingListener) -> list[StopEvent]:
    return [event for kind, event in listener.events if kind == "stopped"]


async def test_a_requested_pause_is_a_pause_and_entry_drops_lldbs_sigstop() -> None:
    found, listener, _ = _stops()
    found.pausing()
    found.take({"reason": "exception", "threadId": 1, "description": "signal SIGSTOP"})
    found.moving()
    found.take({"reason": "entry", "threadId": 1, "description": "signal SIGSTOP", "text": "x"})
    assert _stopped(listener) == [StopEvent("pause", 1, "paused"), StopEvent("entry", 1)]


async def test_a_gdbservers_first_stop_is_not_reported() -> None:
    found, listener, _ = _stops()
    found.remote = True
    found.take({"reason": "exception", "threadId": 1, "description": "signal SIGTRAP"})
    assert _stopped(listener) == []
    found.continued()
    found.take({"reason": "exception", "threadId": 1, "description": "signal SIGTRAP"})
    assert _stopped(listener) == [StopEvent("exception", 1, "signal SIGTRAP")]


async def test_the_first_stop_of_a_core_file_is_post_mortem() -> None:
    found, listener, _ = _stops()
    found.core = "/tmp/core.123"
    found.take({"reason": "exception", "threadId": 1, "description": "signal SIGSEGV"})
    assert _stopped(listener) == [StopEvent("exception", 1, "post-mortem: core file core.123 (signal SIGSEGV)")]


async def test_a_conditional_stop_waits_for_lldbs_complaint() -> None:
    found, listener, _ = _stops()
    found.conditional.add(4)
    found.take({"reason": "breakpoint", "threadId": 1, "hitBreakpointIds": [4]})
    found.output("important", 'stopped due to an error evaluating condition of breakpoint 4.1: "bad"\n')
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    [event] = _stopped(listener)
    assert event.description is not None and "the condition 'bad'" in event.description


async def test_an_abort_hides_the_abort_machinery_and_keeps_the_assertion() -> None:
    frames = [{"id": i, "name": name, "source": {"path": path} if path else {}, "line": 1}
              for i, (name, path) in enumerate([("__pthread_kill_implementation", None), ("raise", None),
                                                ("abort", None), ("check", "/app/main.c"), ("main", "/app/main.c")])]
    found, listener, handles = _stops(FakeRequests(stackTrace={"stackFrames": frames}))
    found.output("stderr", "app: main.c:3: check: Assertion `n > 0' failed.\n")
    found.take({"reason": "exception", "threadId": 7, "description": "signal SIGABRT"})
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    [event] = _stopped(listener)
    assert event.description == "signal SIGABRT from abort (3 library frames above check hidden)"
    assert handles.hidden(7) == 3
    assert found.known_detail(7) == ExceptionDetail("SIGABRT", "Assertion `n > 0' failed.")
    found.moving()
    assert found.known_detail(7) is None and handles.hidden(7) is None


async def test_a_watchpoint_that_fired_in_memcpy_is_the_users_call_with_memcpy_listed_above() -> None:
    frames = [{"id": i, "name": name, "source": {"path": path}, "line": 1}
              for i, (name, path) in enumerate([("__memmove_avx_unaligned_erms", "sysdeps/x86_64/memmove.S"),
                                                ("fill", "/app/copies.c"), ("main", "/app/copies.c")])]
    found, listener, handles = _stops(FakeRequests(stackTrace={"stackFrames": frames}))
    for line in ("Watchpoint 1 hit:\n", "old value: 0\n", "new value: 7\n"):
        found.output("console", line)
    found.take({"reason": "data breakpoint", "threadId": 3, "description": "data breakpoint 1",
                "hitBreakpointIds": [1]})
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    [event] = _stopped(listener)
    assert event.description == ("#2 counter: 0 → 7 inside __memmove_avx_unaligned_erms "
                                 "(library code called from here)")  # polydbg's id, not lldb's watchpoint number
    assert handles.hidden(3) == 1 and [f.name for f in found.above(3)] == ["__memmove_avx_unaligned_erms"]
    found.moving()
    assert found.above(3) == [] and handles.hidden(3) is None


async def test_a_rust_panic_is_an_exception_with_its_message() -> None:
    frames = [{"id": 0, "name": "rust_panic", "line": 1}, {"id": 1, "name": "std::panicking::begin_panic",
               "source": {"path": "/rustc/abc/library/std/src/panicking.rs"}, "line": 2},
              {"id": 2, "name": "app::main", "source": {"path": "/app/src/main.rs"}, "line": 5}]
    found, listener, handles = _stops(FakeRequests(stackTrace={"stackFrames": frames}), language="rust")
    found.output("stderr", "thread 'main' panicked at src/main.rs:5:5:\nboom\nnote: run with RUST_BACKTRACE=1\n")
    found.take({"reason": "breakpoint", "threadId": 1, "hitBreakpointIds": [99]})  # not one of the session's
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    [event] = _stopped(listener)
    assert event.reason == "exception" and event.description == "panicked at src/main.rs:5:5: boom"
    assert handles.hidden(1) == 2
    assert found.known_detail(1) == ExceptionDetail("panic", "src/main.rs:5:5: boom")


async def test_stop_on_entry_runs_to_the_entry_function_and_that_stop_is_the_entry() -> None:
    placed = {"result": "Breakpoint 4: where = app`app::main::h0123 + 12 at main.rs:3:5, address = 0x55\n"}
    requests = FakeRequests(evaluate=placed, **{"continue": {}})
    found, listener, _ = _stops(requests, language="rust")
    for body in ({"reason": "entry", "threadId": 1, "description": "signal SIGSTOP"},  # at the loader's _start
                 {"reason": "breakpoint", "threadId": 1, "hitBreakpointIds": [4], "description": "breakpoint 4.1"}):
        found._ordered.deliver(lambda body=body: found.take(body))  # type: ignore[misc]  # as the backend does
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    assert _stopped(listener) == [StopEvent("entry", 1, "stopped at the program's entry (main)")]
    assert requests.commands() == ["evaluate", "continue"]
    assert "--one-shot true --func-regex" in requests.sent[0][1]["expression"]  # type: ignore[index]
