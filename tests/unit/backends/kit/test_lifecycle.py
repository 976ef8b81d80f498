"""A backend's lifecycle: phases in order, one end however many callers, one termination report."""

from __future__ import annotations

import asyncio

import pytest

from polydbg.backends.kit.lifecycle import Lifecycle, Phase
from tests.fakes import RecordingListener


async def test_phases_only_move_forward() -> None:
    life = Lifecycle("test", RecordingListener())
    seen = [life.phase]
    assert not life.ending
    life.starting()
    life.started()
    assert life.is_started
    life.starting()  # a late call does not move it back
    seen.append(life.phase)
    await life.end(_nothing)
    seen.append(life.phase)
    assert seen == [Phase.NEW, Phase.STARTED, Phase.ENDED]
    assert life.ending and not life.is_started


async def test_the_end_runs_once_for_every_caller_and_cancels_background_work() -> None:
    life = Lifecycle("test", RecordingListener())
    ran: list[str] = []
    release = asyncio.Event()

    async def work() -> None:
        ran.append("end")
        await release.wait()

    forever = life.spawn(asyncio.Event().wait(), "waits forever")
    first = asyncio.ensure_future(life.end(work))
    second = asyncio.ensure_future(life.end(work))
    await asyncio.sleep(0)
    assert life.ending and life.phase == Phase.ENDING
    release.set()
    await asyncio.wait_for(asyncio.gather(first, second), 2.0)
    assert ran == ["end"]
    assert forever.cancelled()
    await life.end(work)  # after the end: returns at once
    assert ran == ["end"]


async def test_a_cancelled_caller_does_not_cut_the_end_short() -> None:
    life = Lifecycle("test", RecordingListener())
    release = asyncio.Event()
    finished = asyncio.Event()

    async def work() -> None:
        await release.wait()
        finished.set()

    caller = asyncio.ensure_future(life.end(work))
    await asyncio.sleep(0)
    caller.cancel()
    with pytest.raises(asyncio.CancelledError):
        await caller
    release.set()
    await asyncio.wait_for(life.end(work), 2.0)
    assert finished.is_set()


async def test_the_programs_end_is_reported_once() -> None:
    listener = RecordingListener()
    life = Lifecycle("test", listener)
    assert life.report_exited(3)
    assert not life.report_exited(4)
    assert life.report_terminated(None)
    assert not life.report_terminated("killed")
    assert listener.events == [("exited", 3), ("terminated", None)]
    assert life.exited and life.terminated


async def test_a_failing_background_task_is_logged_not_raised(caplog: pytest.LogCaptureFixture) -> None:
    life = Lifecycle("test", RecordingListener())

    async def broken() -> None:
        raise RuntimeError("bug in a watcher")

    task = life.spawn(broken(), "watcher")
    await asyncio.wait([task])
    await asyncio.sleep(0)
    assert "watcher" in caplog.text and "bug in a watcher" in caplog.text
    assert not life.tasks


async def _nothing() -> None:
    return None
