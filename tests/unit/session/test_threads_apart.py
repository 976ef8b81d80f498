"""Threads that stop and run on their own (Node's workers and processes, ``Backend.threads_stop_apart``): at a
stop, debug_pause(thread_id) of another thread asks the debugger to pause it and reports that thread's stop;
a thread whose stack cannot be read (it runs) does not become the current one."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

import pytest

from polydbg.backends.base import Frame, FrameRef, StopEvent, Thread
from polydbg.errors import AdapterRequestError
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program


class ApartBackend(FakeBackend):
    """Each thread stops on its own: a pause stops the thread it names."""

    threads_stop_apart: ClassVar[bool] = True

    async def pause(self, thread_id: int | None) -> None:
        await self._enter("pause")
        self.stop_no += 1
        self.listener.on_stopped(StopEvent("pause", thread_id))


def two_threads(backend: FakeBackend) -> None:
    backend.stacks = {Thread(1, "main"): [Frame("main", backend.program, 3)],
                      Thread(2, "worker"): [Frame("work", backend.program, 7)]}


@pytest.fixture
async def rig(tmp_path: Path) -> Rig:
    made = Rig(write_program(tmp_path), prepare=two_threads, backend=ApartBackend)
    await made.start()
    return made


async def test_debug_pause_of_another_thread_at_a_stop_pauses_it_and_reports_its_stop(rig: Rig) -> None:
    report = await rig.session.pause(2, 5.0)
    assert "pause" in rig.backend.calls
    assert (report.reason, report.thread_id) == ("pause", 2) and report.note is None, report
    assert report.location is not None and report.location.function == "work"


async def test_debug_pause_of_the_thread_stopped_makes_it_current_again_without_pausing(rig: Rig) -> None:
    await rig.session.stack(2, 0, 20, False)
    report = await rig.session.pause(1, 5.0)
    assert "pause" not in rig.backend.calls
    assert report.thread_id == 1 and "now the current thread" in (report.note or "")


async def test_a_thread_whose_stack_cannot_be_read_does_not_become_current(rig: Rig) -> None:
    rig.backend.failures["stack_trace"] = AdapterRequestError("stackTrace", "thread 2 is running, not stopped")
    with pytest.raises(AdapterRequestError, match="running, not stopped"):
        await rig.session.stack(2, 0, 20, False)
    del rig.backend.failures["stack_trace"]
    await rig.session.evaluate("x", 0)
    assert rig.backend.frames_asked[-1] == FrameRef(1, 0)  # still the thread that stopped
