"""Any thread, any frame: inspections take a thread (frame indices are per thread), debug_stack and debug_pause
with a thread make it the one later calls default to, unknown threads are refused naming the threads there are;
locks and the deadlocks they make are in the all-threads stack and in a pause's report."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends.base import Frame, FrameRef, Lock, Thread, ThreadLocks
from polydbg.errors import UsageError
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program

A = Lock("0xa", "mutex A", kind="pthread mutex")
B = Lock("0xb", "mutex B", kind="pthread mutex")


@pytest.fixture
async def rig(tmp_path: Path) -> Rig:
    program = write_program(tmp_path)
    stacks = {Thread(1, "main"): [Frame("main", program, 3)],
              Thread(2, "t1"): [Frame("lock", None, None), Frame("t1", program, 5)],
              Thread(3, "t2"): [Frame("lock", None, None), Frame("t2", program, 12)]}

    def prepare(backend: FakeBackend) -> None:
        backend.stacks = stacks
        backend.thread_locks = {2: ThreadLocks(holds=(A,), waits_for=Lock("0xb", "mutex B", owner=3)),
                                3: ThreadLocks(holds=(B,), waits_for=Lock("0xa", "mutex A", owner=2))}
    made = Rig(program, prepare=prepare)
    await made.start()
    return made


async def test_an_inspection_reads_the_thread_it_is_given(rig: Rig) -> None:
    await rig.session.evaluate("x", 1, thread_id=3)
    await rig.session.variables(0, None, None, 0, None, None, thread_id=2)
    assert rig.backend.frames_asked[-2:] == [FrameRef(3, 1), FrameRef(2, 0)]
    await rig.session.evaluate("x", 0)
    assert rig.backend.frames_asked[-1] == FrameRef(1, 0)  # without one: the thread that stopped


async def test_debug_stack_of_a_thread_makes_it_current(rig: Rig) -> None:
    stack = await rig.session.stack(3, 0, 20, False)
    assert stack.current_thread == 3 and stack.threads[0].thread_id == 3
    await rig.session.evaluate("x", 1)
    assert rig.backend.frames_asked[-1] == FrameRef(3, 1)
    assert (await rig.session.stack(None, 0, 20, False)).threads[0].thread_id == 3


async def test_debug_pause_of_a_thread_at_a_stop_makes_it_current_and_reports_it(rig: Rig) -> None:
    report = await rig.session.pause(2, 5.0)
    assert report.thread_id == 2 and "thread 2 is now the current thread" in (report.note or "")
    assert report.location is not None and report.location.function == "lock"  # thread 2's innermost frame


async def test_an_unknown_thread_is_refused_naming_the_threads(rig: Rig) -> None:
    for call in (rig.session.evaluate("x", 0, thread_id=9), rig.session.stack(9, 0, 20, False),
                 rig.session.variables(0, None, None, 0, None, None, thread_id=9)):
        with pytest.raises(UsageError, match=r"no thread 9; threads: \[1, 2, 3\]"):
            await call


async def test_the_all_threads_stack_shows_locks_and_the_deadlock(rig: Rig) -> None:
    stack = await rig.session.stack(None, 0, 20, True)
    assert stack.deadlocks == ["deadlock: thread 2 (t1) at prog.py:5 holds mutex A and waits for mutex B, held by "
                               "thread 3 (t2) at prog.py:12, which waits for mutex A, held by thread 2"]
    by_id = {t.thread_id: t for t in stack.threads}
    assert by_id[2].locks is not None and by_id[2].locks.owner == 3 and by_id[2].locks.holds == ["mutex A"]
    assert by_id[1].locks is None


async def test_a_pause_report_names_the_deadlock(rig: Rig) -> None:
    await rig.session.resume(None, None, 0.05, None)
    report = await rig.session.pause(None, 5.0)
    assert report.deadlocks and "holds mutex A and waits for mutex B" in report.deadlocks[0], report


async def test_a_pause_of_one_running_thread_reports_that_thread(rig: Rig) -> None:
    """The JVM (and most debuggers) stop every thread at a pause and name one of them, or none: the thread the
    agent asked for is the one reported, and later calls default to it."""
    await rig.session.resume(None, None, 0.05, None)
    report = await rig.session.pause(3, 5.0)
    assert report.thread_id == 3 and report.location is not None and report.location.function == "t2", report
    await rig.session.evaluate("x", 1)
    assert rig.backend.frames_asked[-1] == FrameRef(3, 1)
