"""The threads helper (shims/threads.py) run for real in this process, as the program runs it, and the probe's FIFO:
a Lock and a Condition on a Lock held by a ``with`` block, an RLock's owner, a waiter blocked acquiring, names of the
threads matched."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from polydbg.backends.base import Thread
from polydbg.backends.debugpy import probe, threads

GUARD = threading.Lock()
RECORDS = threading.RLock()
SIGNAL = threading.Condition(threading.Lock())


def holder(release: threading.Event) -> None:
    with GUARD, RECORDS, SIGNAL:
        release.wait()  # holder waits here


def waiter() -> None:
    with RECORDS:  # waiter blocks here
        pass


SOURCE = Path(__file__).read_text().splitlines()


def at_line(thread: threading.Thread, function: str, marker: str) -> bool:
    frame = sys._current_frames().get(thread.ident or 0)
    while frame is not None and frame.f_code.co_name != function:
        frame = frame.f_back
    return frame is not None and marker in SOURCE[frame.f_lineno - 1]


@pytest.fixture
def stuck() -> Iterator[tuple[threading.Thread, threading.Thread]]:
    release = threading.Event()
    first = threading.Thread(target=holder, args=(release,), name="holder-thread")
    first.start()
    while not at_line(first, "holder", "# holder waits"):
        threading.Event().wait(0.005)
    second = threading.Thread(target=waiter, name="waiter-thread")
    second.start()
    while not at_line(second, "waiter", "# waiter blocks"):
        threading.Event().wait(0.005)
    yield first, second
    release.set()
    first.join()
    second.join()


def test_a_with_blocks_lock_and_an_rlocks_owner_and_its_waiter(stuck: object) -> None:
    found = threads.answer(repr(eval(threads.call("locks", [[7, "holder-thread", None, None],
                                                            [8, "waiter-thread", "waiter", None]]))))
    held = threads.thread_locks(found)
    names = sorted(lock.name.split(" at ")[0] for lock in held[7].holds)
    assert names == ["threading.Condition SIGNAL", "threading.Lock GUARD", "threading.RLock RECORDS"], held
    waits = held[8].waits_for
    assert waits is not None and waits.name.startswith("threading.RLock RECORDS at 0x") and waits.owner == 7, held
    assert not held[8].holds


def test_the_probes_fifo_wakes_its_reader_and_its_stop_is_shown_as_the_pauses_thread() -> None:
    woken = probe.Probe()
    path = woken.create()
    reader = os.open(path, os.O_RDWR | os.O_NONBLOCK)
    try:
        assert woken.wake() and os.read(reader, 1) == b"w"
        shown = woken.listed([Thread(1, "MainThread"), Thread(2, probe.NAME), Thread(3, "worker")], 3)
        assert [t.id for t in shown] == [1, 3]
        assert woken.stopped_as(2) == 3 and woken.stopped_as(1) == 1
        woken.listed([Thread(1, "MainThread"), Thread(2, probe.NAME)], None)
        assert woken.stopped_as(2) == 1
    finally:
        os.close(reader)
        woken.close()
    assert not os.path.exists(path) and not woken.wake()
