"""Session ids, the default session, language → backend selection, and shutdown of everything."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging

import anyio

from polydbg.backends import registry
from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.errors import UnknownSessionError, UsageError
from polydbg.session.breakpoints import BreakpointRequest
from polydbg.session.model import State, StopReport
from polydbg.session.session import Progress, Session

log = logging.getLogger(__name__)

MAX_SESSIONS = 16


class SessionManager:
    def __init__(self) -> None:
        self._sessions: dict[str, Session] = {}
        self._ids = itertools.count(1)
        self._pending: list[BreakpointRequest] = []

    def add_pending(self, breakpoint: BreakpointRequest) -> None:
        """A breakpoint set before any session exists; the next launch applies it."""
        self._pending.append(breakpoint)

    def take_pending(self) -> list[BreakpointRequest]:
        pending, self._pending = self._pending, []
        return pending

    def create(self, language: str, adapter: str | None, target: str, cwd: str | None) -> Session:
        live = [s for s in self._sessions.values() if s.state not in (State.exited, State.terminated)]
        if len(live) >= MAX_SESSIONS:
            raise UsageError(f"{len(live)} sessions are running (the limit is {MAX_SESSIONS}); "
                             "end some with debug_terminate")
        name = registry.choose_adapter(language, adapter)
        factory = registry.make_factory(name, language)
        session = Session(f"s{next(self._ids)}", language, name, factory, target, cwd)
        self._sessions[session.id] = session
        return session

    async def start(self, session: Session, spec: LaunchSpec | AttachSpec, timeout_s: float,
                    progress: Progress | None) -> StopReport:
        try:
            return await session.start(spec, timeout_s, progress)
        except BaseException:  # a failed or cancelled start leaves no session and no process behind
            self._sessions.pop(session.id, None)
            with anyio.CancelScope(shield=True):
                await session.terminate(False)
            raise

    def get(self, session_id: str | None) -> Session:
        if session_id:
            session = self._sessions.get(session_id)
            if session is None:
                known = ", ".join(self._sessions) or "none"
                raise UnknownSessionError(f"no session {session_id!r} (sessions: {known}); "
                                          "see debug_sessions, or start one with debug_launch")
        else:
            if not self._sessions:
                raise UnknownSessionError("no debug session; start one with debug_launch or debug_attach")
            session = max(self._sessions.values(), key=lambda s: s.last_used)
        session.touch()
        return session

    def ids(self) -> list[str]:
        return list(self._sessions)

    def all(self) -> list[Session]:
        return sorted(self._sessions.values(), key=lambda s: int(s.id[1:]))

    def current_id(self) -> str | None:
        if not self._sessions:
            return None
        return max(self._sessions.values(), key=lambda s: s.last_used).id

    async def remove(self, session: Session, detach: bool) -> None:
        try:
            await session.terminate(detach)
        finally:
            self._sessions.pop(session.id, None)

    async def close_all(self) -> None:
        sessions = list(self._sessions.values())
        self._sessions.clear()
        with contextlib.suppress(Exception):
            await asyncio.gather(*(s.terminate(False) for s in sessions), return_exceptions=True)
