"""Each client's sessions: random ids, one client's sessions invisible to another, and the limits."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polydbg.errors import PolicyError, UnknownSessionError, UsageError
from polydbg.policy import Policy
from polydbg.session.manager import Clients, Limits, SessionManager
from polydbg.session.model import State


def _ended(manager: SessionManager, session_id: str) -> None:
    manager.get(session_id).core.life.to(State.exited, exit_code=0)


async def test_session_ids_are_random_and_listed_in_creation_order() -> None:
    manager = SessionManager()
    made = [manager.create("python", None, "prog.py", None).id for _ in range(5)]
    assert all(re.fullmatch(r"s-[0-9a-f]{12}", i) for i in made), made
    assert len(set(made)) == 5
    assert [s.id for s in manager.all()] == made
    await manager.close_all()


async def test_a_client_sees_only_its_own_sessions() -> None:
    clients = Clients()
    alice, bob = clients.of("token:x/one"), clients.of("token:x/two")
    assert clients.of("token:x/one") is alice
    mine = alice.create("python", None, "prog.py", None)
    assert bob.all() == [] and bob.current_id() is None
    with pytest.raises(UnknownSessionError) as refused:
        bob.get(mine.id)
    assert str(refused.value).startswith(f"no session {mine.id!r} (sessions: none)")  # as if it did not exist
    with pytest.raises(UnknownSessionError, match="no debug session"):
        bob.get(None)  # alice's session is never bob's default
    assert alice.get(None) is mine
    await clients.release("token:x/one")  # alice left: her sessions end, a new manager starts empty
    assert clients.of("token:x/one").all() == []
    await clients.close_all()


async def test_pending_breakpoints_belong_to_their_client() -> None:
    from polydbg.session.breakpoints import BreakpointRequest

    clients = Clients()
    clients.of("a").add_pending(BreakpointRequest("/x.py", 3, None, None, None))
    assert clients.of("b").take_pending() == []
    assert [b.line for b in clients.of("a").take_pending()] == [3]


async def test_live_sessions_per_client_are_limited_and_ended_ones_make_room() -> None:
    manager = SessionManager(Limits(live=2, kept=3))
    first = manager.create("python", None, "a.py", None).id
    manager.create("python", None, "b.py", None)
    with pytest.raises(UsageError, match=r"2 sessions are running \(the limit is 2 per client\); end some"):
        manager.create("python", None, "c.py", None)
    _ended(manager, first)
    third = manager.create("python", None, "c.py", None).id  # an ended session does not count as running
    _ended(manager, third)
    manager.get(first)  # first is now the more recently used of the two ended ones
    manager.create("python", None, "d.py", None)  # 3 kept at most: the least recently used ended one goes
    assert third not in manager.ids() and first in manager.ids()
    await manager.close_all()


async def test_the_server_wide_limit_counts_every_client() -> None:
    clients = Clients(Limits(live=2, kept=4, server_live=3))
    clients.of("a").create("python", None, "a.py", None)
    clients.of("a").create("python", None, "b.py", None)
    clients.of("b").create("python", None, "c.py", None)
    with pytest.raises(UsageError, match="the server runs 3 sessions for all its clients"):
        clients.of("c").create("python", None, "d.py", None)
    await clients.close_all()


async def test_a_raw_command_is_judged_by_the_policy_before_the_session_is_looked_up(tmp_path: Path) -> None:
    """Without a session (or with an id that is not one) a refused debug_command names the setting, not the
    missing session; a backend's read-only query is then left to the session, which names what is missing."""
    manager = SessionManager(policy=Policy.defaults("http", tmp_path))  # allow_command off
    for session_id in (None, "s-000000000000"):
        with pytest.raises(PolicyError, match=r"debug_command 'shell id' \(a raw debugger command.*allow_command"):
            manager.check_command(session_id, "shell id")
        manager.check_command(session_id, "threads")  # a read-only query of some backend: the session decides
    session = manager.create("c", "gdb", "app", None)
    with pytest.raises(PolicyError, match=r"debug_command 'threads' \(a raw gdb command"):
        manager.check_command(None, "threads")  # the default session's debugger has no such query
    with pytest.raises(PolicyError, match=r"a raw gdb command"):
        manager.check_command(session.id, "threads")
    SessionManager().check_command(None, "shell id")  # stdio: allowed, the session's absence is the answer
    await manager.close_all()
