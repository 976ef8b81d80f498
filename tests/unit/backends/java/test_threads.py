"""Threads as the agent sees them: labels, the thread a pause shows, polydbg's ids, the current stop."""

from __future__ import annotations

import pytest

from polydbg.backends.java.sources import Sources
from polydbg.backends.java.threads import CurrentStop, Threads, pause_rank, thread_label
from polydbg.errors import AdapterRequestError
from polydbg.jdwp.codec import Value
from tests.unit.backends.java.fakevm import FakeVm


def test_a_thread_s_label_says_its_state_and_whose_it_is() -> None:
    assert thread_label("worker", False, "sleeping", False) == "worker (sleeping)"
    assert thread_label("Finalizer", True, "waiting", False) == "Finalizer (system, waiting)"
    assert thread_label("main", False, "running", True) == "main (stopped here)"
    assert thread_label("gone", False, AdapterRequestError("x", "y"), False) == "gone (state unknown)"


def test_a_pause_prefers_the_program_s_running_code_and_main() -> None:
    ranks = {
        "main running its code": pause_rank("main", "running", True),
        "worker running its code": pause_rank("worker", "running", True),
        "main waiting in its code": pause_rank("main", "waiting", True),
        "worker waiting in its code": pause_rank("worker", "sleeping", True),
        "main in the JDK": pause_rank("main", "running", False),
        "worker in the JDK": pause_rank("worker", "running", False),
    }
    assert sorted(ranks, key=ranks.__getitem__) == list(ranks)


def test_threads_are_numbered_in_the_order_met() -> None:
    threads = Threads(FakeVm(), Sources(FakeVm(), lambda: []))
    assert [threads.id_of(t) for t in (900, 700, 900)] == [1, 2, 1]
    assert threads.jdwp(2) == 700
    with pytest.raises(AdapterRequestError, match="no thread 3"):
        threads.jdwp(3)
    with pytest.raises(AdapterRequestError, match="no thread is stopped"):
        threads.jdwp(None)
    threads.stop.thread = 700
    assert threads.jdwp(None) == 700


def test_clearing_the_stop_says_whether_one_was_reported() -> None:
    stop = CurrentStop(thread=5, name="worker", paused=True, exception=Value(76, 9), reported=True)
    assert stop.clear() is True
    assert stop == CurrentStop()
    assert stop.clear() is False
