"""One stop shown at a time: a second process's stop waits (its process stays stopped) and is shown as the
answer to the resume of the first; a process that ends takes its waiting stops with it."""

from __future__ import annotations

from polydbg.backends.base import BreakpointResult, StopEvent
from polydbg.backends.kit.gate import GatedListener, StopGate
from tests.fakes import RecordingListener


def process_of(thread_id: int) -> int:
    """Threads 100..199 belong to process 1, 200..299 to process 2; the program's own are 0..99."""
    return thread_id // 100


def gated() -> tuple[RecordingListener, StopGate, GatedListener, GatedListener]:
    session = RecordingListener()
    gate = StopGate(session, process_of)
    return session, gate, GatedListener(gate), GatedListener(gate)


def stops(session: RecordingListener) -> list[int | None]:
    return [event.thread_id for kind, event in session.events if kind == "stopped"]


def test_a_second_process_stop_waits_and_is_shown_when_the_first_resumes() -> None:
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    assert stops(session) == [101] and gate.shown == 1
    gate.resumed(1)
    assert stops(session) == [101, 201] and gate.shown == 2
    # the second was held: the session can say it was made earlier (its breakpoint may be gone by now)
    assert [event.held for kind, event in session.events if kind == "stopped"] == [False, True]


def test_more_stops_of_the_shown_process_pass_through() -> None:
    session, _gate, first, _second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    first.on_stopped(StopEvent("step", 102))
    assert stops(session) == [101, 102]


def test_a_stop_without_a_thread_is_the_program_s() -> None:
    session, gate, first, _second = gated()
    first.on_stopped(StopEvent("pause", None))
    assert gate.shown == 0
    first.on_stopped(StopEvent("breakpoint", 101))  # another process: waits
    assert stops(session) == [None]


def test_only_the_shown_process_continuing_is_news() -> None:
    session, _gate, first, second = gated()
    first.on_continued(101, False)  # nothing shown yet: news
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_continued(201, False)  # another process runs on: the session still shows process 1 stopped
    first.on_continued(101, True)
    assert [value for kind, value in session.events if kind == "continued"] == [101, 101]


def test_resuming_another_process_does_not_show_the_next_stop() -> None:
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    gate.resumed(3)
    assert stops(session) == [101] and gate.shown == 1
    gate.resumed(None)  # every process runs again
    assert stops(session) == [101, 201]


def test_waiting_stops_are_shown_in_the_order_they_came() -> None:
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    GatedListener(gate).on_stopped(StopEvent("breakpoint", 301))
    gate.resumed(1)
    gate.resumed(2)
    assert stops(session) == [101, 201, 301]


def test_an_ended_process_drops_its_waiting_stops() -> None:
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    second.on_stopped(StopEvent("breakpoint", 202))
    GatedListener(gate).on_stopped(StopEvent("breakpoint", 301))
    gate.ended(2)  # process 2 is gone: its stops cannot be shown any more
    assert stops(session) == [101]
    gate.resumed(1)
    assert stops(session) == [101, 301]


def test_the_shown_process_ending_shows_the_next_stop() -> None:
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    gate.ended(1)
    assert stops(session) == [101, 201] and gate.shown == 2


def test_everything_but_stops_and_continues_passes_straight_through() -> None:
    session, _gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_output("stdout", "child says hi\n")
    second.on_breakpoint_changed(4, BreakpointResult(True, 12))
    second.on_exited(0)
    second.on_terminated("the child ended")
    assert session.events[1:] == [("output", ("stdout", "child says hi\n")),
                                  ("breakpoint", (4, BreakpointResult(True, 12))),
                                  ("exited", 0), ("terminated", "the child ended")]


def test_a_stop_switched_to_is_shown_and_the_one_shown_waits_first_in_line() -> None:
    """The agent paused process 2 while process 1's stop was shown: 2's stop is shown at once; 1's waits ahead of
    the others and is shown again when 2 resumes."""
    session, gate, first, _second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    GatedListener(gate).on_stopped(StopEvent("breakpoint", 301))
    gate.switch(StopEvent("pause", 201))
    assert stops(session) == [101, 201] and gate.shown == 2
    gate.resumed(2)
    assert stops(session) == [101, 201, 101] and gate.shown == 1
    assert [event.held for kind, event in session.events if kind == "stopped"] == [False, False, True]
    gate.resumed(1)
    assert stops(session) == [101, 201, 101, 301]


def test_switching_to_a_waiting_stop_shows_it_once() -> None:
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    waiting = gate.waiting(2)
    assert waiting is not None and waiting.thread_id == 201
    gate.switch(waiting)
    gate.resumed(2)
    assert stops(session) == [101, 201, 101] and gate.waiting(2) is None


def test_a_process_taken_runs_and_the_stop_shown_before_is_shown_at_its_resume() -> None:
    """The agent resumes (or steps) process 2, whose stop waits, from process 1's stop: 2 is the shown one, its
    waiting stop dropped (it runs), no news for the session; 2's next stop passes straight through, and its
    resume shows 1's stop again."""
    session, gate, first, second = gated()
    first.on_stopped(StopEvent("breakpoint", 101))
    second.on_stopped(StopEvent("breakpoint", 201))
    gate.take(2)
    assert stops(session) == [101] and gate.shown == 2 and gate.waiting(2) is None
    second.on_stopped(StopEvent("step", 201))
    assert stops(session) == [101, 201]
    gate.resumed(2)
    assert stops(session) == [101, 201, 101] and gate.shown == 1
