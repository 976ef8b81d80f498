"""The lifecycle of a session: one state, one transition function, one stop scope, change waiters.

    starting ──▶ running ⇄ stopped ──▶ exited ──▶ terminated
        └────────────┴────────┴───────────┴──▶ terminated          (any state) ──▶ starting: restart

``to`` is the only place the state changes. Every transition replaces the stop scope (a new one
for a stop, none otherwise) and wakes whoever waits for a change; a transition the table does not
allow (an adapter's late event after the session ended) is ignored and logged.
"""

from __future__ import annotations

import asyncio
import logging

from polydbg.backends.base import StopEvent
from polydbg.errors import NotStoppedError, ProgramMovedError, SessionEndedError
from polydbg.session.model import State
from polydbg.session.scope import StopScope

log = logging.getLogger(__name__)

_ALLOWED: dict[State, frozenset[State]] = {
    State.starting: frozenset({State.running, State.stopped, State.exited, State.terminated}),
    State.running: frozenset({State.stopped, State.exited, State.terminated}),
    State.stopped: frozenset({State.running, State.stopped, State.exited, State.terminated}),
    State.exited: frozenset({State.terminated}),
    State.terminated: frozenset(),
}


class Lifecycle:
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.state = State.starting
        self.cause: str | None = None
        self.exit_code: int | None = None
        self.unconfirmed: str | None = None  # why the state may no longer be true (until the next transition)
        self.scope: StopScope | None = None
        self.stops = 0  # how many stops so far: a waiter compares it to see a new one
        self._next_ref = 1
        self._changed = asyncio.Event()

    @property
    def stop(self) -> StopEvent | None:
        return self.scope.stop if self.scope is not None else None

    def to(self, state: State, *, stop: StopEvent | None = None, cause: str | None = None,
           exit_code: int | None = None) -> bool:
        """Change state (False, and nothing changes, when the transition is not allowed)."""
        if state != State.starting and state not in _ALLOWED[self.state]:
            log.debug("session %s: ignoring %s → %s", self.session_id, self.state.value, state.value)
            return False
        if self.scope is not None:
            self._next_ref = self.scope.refs.next
        self.scope = None
        self.unconfirmed = None
        if state == State.stopped:
            assert stop is not None
            self.scope = StopScope(stop, self._next_ref)
            self.stops += 1
        elif state == State.starting:
            self.cause = self.exit_code = None
        elif state == State.exited:
            self.exit_code, self.cause = exit_code, cause  # a cause: what ended it without an exit code (a signal)
        elif state == State.terminated:
            self.cause = cause or self.cause
        self.state = state
        self._changed.set()
        self._changed = asyncio.Event()
        return True

    @property
    def changed(self) -> asyncio.Event:
        """Set at the next transition (take it before awaiting, then wait on it)."""
        return self._changed

    @property
    def ended(self) -> bool:
        return self.state in (State.exited, State.terminated)

    def ended_text(self) -> str:
        if self.state == State.exited:
            how = f"code {self.exit_code}" if self.exit_code is not None or self.cause is None else self.cause
            return (f"the program of session {self.session_id} has exited ({how}); "
                    "start it again with debug_restart, or end the session with debug_terminate")
        if self.state == State.terminated:
            return (f"session {self.session_id} has terminated ({self.cause}); "
                    "start a new one with debug_launch or debug_restart")
        return f"session {self.session_id} is not connected to a debugger yet"

    def stopped_scope(self) -> StopScope:
        """The current stop's scope, or the error that says why there is none."""
        if self.state == State.stopped and self.scope is not None:
            return self.scope
        if self.ended:
            raise SessionEndedError(self.ended_text())
        raise NotStoppedError(f"the program of session {self.session_id} is {self.state.value}, not stopped; "
                              "call debug_pause to interrupt it, or debug_continue to wait for the next stop")

    def check(self, scope: StopScope) -> None:
        """After an await: the answer being built belongs to ``scope``, which must still be current."""
        if self.scope is not scope:
            raise ProgramMovedError(
                f"the program moved while this was being read (it is {self.state.value} now), so the answer "
                "would have mixed two stops; here is where it is now")
