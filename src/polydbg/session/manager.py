"""Session ids, each client's sessions, the default session, limits, and shutdown of everything.

A ``SessionManager`` holds the debug sessions of one client: over stdio the one client that started the
server, over HTTP each authenticated principal and MCP session (see ``polydbg.mcp.clients``). A client
can neither list nor reach another client's sessions: ``get`` answers an id it does not own exactly as
an id that does not exist. ``Clients`` holds every client's manager and the server-wide limit. Session
ids are random (``s-`` and 12 hex digits), so one cannot be guessed from another.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass

import anyio

from polydbg.backends import registry
from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.timecontrol import RecordMode
from polydbg.errors import UnknownSessionError, UsageError, echo
from polydbg.policy import Policy
from polydbg.session.breakpoints import BreakpointRequest
from polydbg.session.model import State, StopReport
from polydbg.session.session import Progress, Session

log = logging.getLogger(__name__)

MAX_SESSIONS = 16  # live sessions of the one stdio client


@dataclass(frozen=True)
class Limits:
    """How many sessions a client may have: ``live`` running at once, ``kept`` in all (ended sessions stay
    readable; past ``kept`` the least recently used ended one is dropped, bounding retained output), and
    ``server_live`` across every client (None: no server-wide limit)."""

    live: int = MAX_SESSIONS
    kept: int = 2 * MAX_SESSIONS
    server_live: int | None = None


STDIO_LIMITS = Limits()


def _ended(session: Session) -> bool:
    return session.state in (State.exited, State.terminated)


class SessionManager:
    """The debug sessions of one client."""

    def __init__(self, limits: Limits = STDIO_LIMITS, clients: Clients | None = None,
                 policy: Policy | None = None) -> None:
        # the security policy every session of this client is held to (default: stdio's, all allowed)
        self.policy = policy if policy is not None else clients.policy if clients is not None else Policy()
        self._sessions: dict[str, Session] = {}
        self._pending: list[BreakpointRequest] = []
        self._limits = limits
        self._clients = clients

    def add_pending(self, breakpoint: BreakpointRequest) -> None:
        """A breakpoint set before any session exists; the next launch applies it (once, however often
        it was asked for)."""
        if breakpoint not in self._pending:
            self._pending.append(breakpoint)

    def take_pending(self) -> list[BreakpointRequest]:
        pending, self._pending = self._pending, []
        return pending

    def live_count(self) -> int:
        return sum(not _ended(s) for s in self._sessions.values())

    def _make_room(self) -> None:
        live = self.live_count()
        if live >= self._limits.live:
            raise UsageError(f"{live} sessions are running (the limit is {self._limits.live} per client); "
                             "end some with debug_terminate")
        server_live = self._limits.server_live
        if server_live is not None and self._clients is not None and self._clients.live_count() >= server_live:
            raise UsageError(f"the server runs {server_live} sessions for all its clients, its limit; end some "
                             "of yours with debug_terminate or try again later")
        ended = sorted((s for s in self._sessions.values() if _ended(s)), key=lambda s: s.last_used)
        while len(self._sessions) >= self._limits.kept and ended:
            dropped = ended.pop(0)
            log.info("dropping ended session %s (the limit is %d kept sessions)", dropped.id, self._limits.kept)
            self._sessions.pop(dropped.id, None)

    def _new_id(self) -> str:
        while True:
            session_id = f"s-{secrets.token_hex(6)}"
            taken = self._clients.has_id(session_id) if self._clients is not None else session_id in self._sessions
            if not taken:
                return session_id

    def create(self, language: str, adapter: str | None, target: str, cwd: str | None,
               record: RecordMode | None = None) -> Session:
        self._make_room()
        name = registry.choose_adapter(language, adapter, record)
        factory = registry.make_factory(name, language)
        session = Session(self._new_id(), language, name, factory, target, cwd, self.policy)
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
            if session is None:  # the same answer for another client's session: nothing is revealed
                known = ", ".join(self._sessions) or "none"
                raise UnknownSessionError(f"no session {echo(session_id, 60)} (sessions: {known}); "
                                          "see debug_sessions, or start one with debug_launch")
        else:
            latest = self._latest()
            if latest is None:
                raise UnknownSessionError("no debug session; start one with debug_launch or debug_attach")
            session = latest
        session.touch()
        return session

    def check_command(self, session_id: str | None, text: str) -> None:
        """The policy's verdict on ``debug_command`` ``text``, before the session is looked up: with no session
        (or an unknown id) the refusal still names the setting, judged by every backend's read-only queries."""
        session = self._sessions.get(session_id) if session_id else self._latest()
        self.policy.check_command(session.adapter if session is not None else None, text)

    def ids(self) -> list[str]:
        return list(self._sessions)

    def all(self) -> list[Session]:
        """The sessions in the order they were created."""
        return list(self._sessions.values())

    def current_id(self) -> str | None:
        latest = self._latest()
        return latest.id if latest is not None else None

    def _latest(self) -> Session | None:
        """The most recently used session: the default when a tool is given no session_id."""
        return max(self._sessions.values(), key=lambda s: s.last_used, default=None)

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


class Clients:
    """Every client's ``SessionManager``, by owner (an opaque key: see ``polydbg.mcp.clients``)."""

    def __init__(self, limits: Limits = STDIO_LIMITS, policy: Policy | None = None) -> None:
        self.policy = policy if policy is not None else Policy()  # the server's, the same for every client
        self.limits = limits
        self._managers: dict[str, SessionManager] = {}

    def of(self, owner: str) -> SessionManager:
        manager = self._managers.get(owner)
        if manager is None:
            manager = self._managers[owner] = SessionManager(self.limits, self)
        return manager

    def live_count(self) -> int:
        return sum(m.live_count() for m in self._managers.values())

    def has_id(self, session_id: str) -> bool:
        return any(session_id in m.ids() for m in self._managers.values())

    async def release(self, owner: str) -> None:
        """The client is gone (its MCP session ended): end its sessions."""
        manager = self._managers.pop(owner, None)
        if manager is not None:
            if manager.ids():
                log.info("client %s is gone: ending its sessions %s", owner, ", ".join(manager.ids()))
            await manager.close_all()

    async def close_all(self) -> None:
        managers = list(self._managers.values())
        self._managers.clear()
        await asyncio.gather(*(m.close_all() for m in managers), return_exceptions=True)
