"""A stack's callers past an ``await`` (``Backend.async_callers``) follow its last frame: on the page of
``debug_stack`` that ends the stack, whichever it is, and on no other."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends.base import Frame, Thread
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program


class AwaitingBackend(FakeBackend):
    async def async_callers(self, thread_id: int) -> list[tuple[str, list[Frame]]]:
        return [("await", [Frame("caller", self.program, 40), Frame("outer", self.program, 50)])]


def thirty_frames(backend: FakeBackend) -> None:
    backend.stacks = {Thread(1, "main"): [Frame(f"f{n}", backend.program, n + 1) for n in range(30)]}


@pytest.fixture
async def rig(tmp_path: Path) -> Rig:
    made = Rig(write_program(tmp_path), prepare=thirty_frames, backend=AwaitingBackend)
    await made.start()
    return made


async def test_the_awaiting_callers_follow_the_page_that_ends_the_stack(rig: Rig) -> None:
    first = await rig.session.stack(None, 0, 20, False)
    assert first.threads[0].async_frames is None and first.more and "start=20" in first.more
    last = await rig.session.stack(None, 20, 20, False)
    assert [f.function for f in last.threads[0].frames][-1] == "f29"
    assert [(a.via, a.function, a.line) for a in last.threads[0].async_frames or []] == [
        ("await", "caller", 40), (None, "outer", 50)]
    whole = await rig.session.stack(None, 0, 30, False)
    assert whole.threads[0].async_frames is not None and len(whole.threads[0].async_frames) == 2
