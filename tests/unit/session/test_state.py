"""The session's lifecycle: one transition function and its table (a transition it does not allow changes
nothing), a new stop scope per stop with refs that go on counting, waiters woken at every change, and the
errors that say why there is nothing to inspect."""

from __future__ import annotations

import asyncio

import pytest

from polydbg.backends.base import StopEvent, Variable
from polydbg.errors import NotStoppedError, ProgramMovedError, SessionEndedError
from polydbg.session.model import State
from polydbg.session.state import Lifecycle

STOP = StopEvent("breakpoint", 1)
ALL = list(State)


def at(state: State) -> Lifecycle:
    """A lifecycle brought to ``state`` by allowed transitions."""
    life = Lifecycle("s1")
    path = {State.starting: [], State.running: [State.running], State.stopped: [State.stopped],
            State.exited: [State.running, State.exited], State.terminated: [State.terminated]}[state]
    for step in path:
        assert life.to(step, stop=STOP if step == State.stopped else None)
    assert life.state == state
    return life


def facts(life: Lifecycle) -> tuple[State, str | None, int | None, bool]:
    return life.state, life.cause, life.exit_code, life.ended


ALLOWED = {
    (State.starting, State.running), (State.starting, State.stopped), (State.starting, State.exited),
    (State.starting, State.terminated),
    (State.running, State.stopped), (State.running, State.exited), (State.running, State.terminated),
    (State.stopped, State.running), (State.stopped, State.stopped), (State.stopped, State.exited),
    (State.stopped, State.terminated),
    (State.exited, State.terminated),
} | {(state, State.starting) for state in ALL}  # a restart, from anywhere


def test_the_transition_table() -> None:
    for source in ALL:
        for target in ALL:
            life = at(source)
            stops = life.stops
            changed = life.changed
            allowed = life.to(target, stop=STOP if target == State.stopped else None, exit_code=4, cause="why")
            case = f"{source.value} → {target.value}"
            assert allowed == ((source, target) in ALLOWED), case
            if allowed:
                assert life.state == target and changed.is_set(), case
            else:  # a late event after the end, say: nothing changes, nobody is woken
                assert life.state == source and not changed.is_set() and life.stops == stops, case


def test_each_stop_gets_a_scope_and_refs_go_on_counting() -> None:
    life = at(State.running)
    assert life.scope is None and life.stop is None
    life.to(State.stopped, stop=STOP)
    first = life.scope
    assert first is not None and life.stop is STOP and life.stops == 1
    ref = first.remember(Variable("obj", "{…}", ref=100), None)
    assert ref == 1
    life.to(State.stopped, stop=StopEvent("step", 1))
    second = life.scope
    assert second is not None and second is not first and life.stops == 2
    assert second.remember(Variable("obj", "{…}", ref=100), None) == 2  # never 1 again
    assert second.refs.is_stale(1)
    life.to(State.running)
    life.to(State.stopped, stop=STOP)
    assert life.scope is not None and life.scope.remember(Variable("obj", "{…}", ref=100), None) == 3


def test_exit_and_termination_keep_their_facts_and_a_restart_clears_them() -> None:
    life = at(State.running)
    life.to(State.exited, exit_code=3)
    life.to(State.terminated)
    assert (life.exit_code, life.cause) == (3, None) and life.ended
    other = at(State.running)
    other.to(State.terminated, cause="killed")
    other.to(State.terminated, cause="again")  # refused: the first cause stays
    assert other.cause == "killed"
    other.to(State.starting)
    assert facts(other) == (State.starting, None, None, False)


async def test_a_waiter_is_woken_at_the_next_transition() -> None:
    life = at(State.running)
    changed = life.changed
    waiting = asyncio.ensure_future(changed.wait())
    await asyncio.sleep(0)
    assert not waiting.done()
    life.to(State.stopped, stop=STOP)
    assert await asyncio.wait_for(waiting, 2.0)
    assert not life.changed.is_set()  # a fresh event for the next change


def test_there_is_a_scope_only_while_stopped_and_the_errors_say_why() -> None:
    life = at(State.stopped)
    scope = life.stopped_scope()
    life.check(scope)  # still current
    life.to(State.running)
    with pytest.raises(ProgramMovedError, match="moved while this was being read \\(it is running now\\)"):
        life.check(scope)
    with pytest.raises(NotStoppedError, match="is running, not stopped; call debug_pause"):
        life.stopped_scope()
    with pytest.raises(NotStoppedError, match="is starting, not stopped"):
        Lifecycle("s2").stopped_scope()
    life.to(State.exited, exit_code=0)
    with pytest.raises(SessionEndedError, match="has exited \\(code 0\\); start it again with debug_restart"):
        life.stopped_scope()
    life.to(State.terminated)
    with pytest.raises(SessionEndedError, match="has terminated \\(None\\); start a new one"):
        life.stopped_scope()


def test_the_ended_text_of_a_session_not_yet_connected() -> None:
    assert Lifecycle("s3").ended_text() == "session s3 is not connected to a debugger yet"
