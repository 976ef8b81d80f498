"""Where a deadlock's sentence places each thread: at its first frame whose source is on this machine, read as
deep as that takes — not at a runtime frame the listing's few levels end in (Java's ``Unsafe.park``, with a
package path and no line)."""

from __future__ import annotations

from pathlib import Path

from polydbg.backends.base import Frame, Lock, Thread, ThreadLocks
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program

A = Lock("34", "java.lang.Object@34 (A)")
B = Lock("35", "java.lang.Object@35 (B)")


async def test_each_thread_of_a_deadlock_is_placed_at_its_own_source(tmp_path: Path) -> None:
    program = write_program(tmp_path, "Dl.java")

    def parked(line: int) -> list[Frame]:
        return [Frame("Unsafe.park", "jdk/internal/misc/Unsafe.java", None),
                Frame("LockSupport.park", "java/util/concurrent/locks/LockSupport.java", 211),
                Frame("Dl.take", program, line)]

    def prepare(backend: FakeBackend) -> None:
        backend.stacks = {Thread(1, "main"): [Frame("main", program, 3)], Thread(2, "t1"): parked(5),
                          Thread(3, "t2"): parked(12)}
        backend.thread_locks = {2: ThreadLocks(holds=(A,), waits_for=B._replace(owner=3)),
                                3: ThreadLocks(holds=(B,), waits_for=A._replace(owner=2))}
    rig = Rig(program, prepare=prepare)
    await rig.start()
    stack = await rig.session.stack(None, 0, 1, True)
    assert stack.deadlocks == ["deadlock: thread 2 (t1) at Dl.java:5 holds java.lang.Object@34 (A) and waits for "
                               "java.lang.Object@35 (B), held by thread 3 (t2) at Dl.java:12, which waits for "
                               "java.lang.Object@34 (A), held by thread 2"], stack.deadlocks
