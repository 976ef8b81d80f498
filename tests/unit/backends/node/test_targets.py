"""The table of targets: a thread id or a value handle names its target; a pause waits for arrivals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import anyio
import pytest

from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node.target import REF_RANGE, Ref
from polydbg.backends.node.targets import Arrivals
from polydbg.errors import AdapterRequestError
from tests.unit.backends.node.fakev8 import FakeV8, Session


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    made = Session()
    yield made
    await made.close()


async def test_threads_and_handles_name_their_target(session: Session) -> None:
    worker = FakeV8()
    other = session.targets.add(worker.channel, "worker", "worker 1 (pool.js)", OrderedEvents(session.events))
    assert (session.main.thread_id, other.thread_id) == (1, 2)
    assert session.targets.get(None) is session.main
    assert session.targets.get(2) is other
    assert session.targets.of_ref(5) is session.main
    assert other.refs.add(Ref("object")) == 2 * REF_RANGE + 1
    assert session.targets.of_ref(2 * REF_RANGE + 1) is other
    with pytest.raises(AdapterRequestError, match="thread 3 has ended or never existed"):
        session.targets.get(3)
    with pytest.raises(AdapterRequestError, match="belongs to a thread that has ended"):
        session.targets.of_ref(3 * REF_RANGE)
    assert session.targets.live() == [session.main, other]


async def test_settled_waits_for_every_arrival_and_no_longer_than_its_deadline() -> None:
    arrivals = Arrivals()
    release = asyncio.Event()
    arrivals.add(asyncio.ensure_future(release.wait()))
    assert len(arrivals) == 1
    with anyio.fail_after(5):
        await arrivals.settled(0.01)  # the deadline passes: it returns, the arrival still under way
    assert len(arrivals) == 1
    release.set()
    with anyio.fail_after(5):
        await arrivals.settled(5)
    assert len(arrivals) == 0


async def test_a_change_once_every_target_is_gone_says_the_connection_is_gone() -> None:
    """Node waits for its debugger to let go once the program is done, then exits: a breakpoint sent then has no
    target to go to, and the session must read the program's end coming, not a breakpoint left "pending: node is
    not connected" in a program about to exit."""
    from polydbg.backends.base import SourceBreakpoint
    from polydbg.backends.node.backend import NodeBackend
    from polydbg.errors import AdapterGoneError
    from tests.fakes import RecordingListener

    backend = NodeBackend(RecordingListener())
    before = await backend.set_breakpoints("/app/main.js", [SourceBreakpoint(1, 3)])  # no program yet: kept
    assert [r.verified for r in before] == [False]
    backend._life.started()  # the program ran, and its every target has ended since
    with pytest.raises(AdapterGoneError, match="the program has finished"):
        await backend.set_breakpoints("/app/main.js", [SourceBreakpoint(1, 3), SourceBreakpoint(2, 4)])
    with pytest.raises(AdapterGoneError, match="the program has finished"):
        await backend.set_function_breakpoints([])
