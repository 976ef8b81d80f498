"""A backend's life in one place: its phase, its background tasks, its one end, its one termination report.

Every backend goes through the same phases whatever its debugger::

    NEW ──launch/attach──▶ STARTING ──configured, running──▶ STARTED
     │                        │                                 │
     └────────────────────────┴──terminate / detach / a crash──▶ ENDING ──▶ ENDED

``end(work)`` is idempotent: the first caller runs ``work`` (leave the debuggee, close the connection,
stop the debugger's process), shielded from its caller's cancellation, and every later or concurrent
caller waits for that same end; afterwards every background task still running is cancelled. The
program's end is reported to the session once (``report_terminated``), whichever of the debugger's
event, a watcher of the process or the end itself comes first.
"""

from __future__ import annotations

import asyncio
import enum
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from polydbg.backends.base import BackendListener

log = logging.getLogger(__name__)


class Phase(enum.IntEnum):
    NEW = 0
    STARTING = 1  # launch or attach under way: the debugger's handshake, breakpoints being configured
    STARTED = 2  # the program runs (or is stopped) under the debugger
    ENDING = 3  # terminate or detach under way
    ENDED = 4


class Lifecycle:
    def __init__(self, name: str, listener: BackendListener) -> None:
        self.name = name
        self.phase = Phase.NEW
        self._listener = listener
        self._tasks: set[asyncio.Task[Any]] = set()
        self._end: asyncio.Future[None] | None = None
        self._terminated = False
        self._exited = False

    # -- phases -------------------------------------------------------------------------------------

    def starting(self) -> None:
        if self.phase < Phase.STARTING:
            self.phase = Phase.STARTING

    def started(self) -> None:
        if self.phase < Phase.STARTED:
            self.phase = Phase.STARTED

    @property
    def is_started(self) -> bool:
        """The program runs under the debugger (and no end has begun)."""
        return self.phase == Phase.STARTED

    @property
    def ending(self) -> bool:
        """terminate or detach has begun (or finished): events from now on are the end's, not the program's."""
        return self.phase >= Phase.ENDING

    # -- background work ------------------------------------------------------------------------------

    def spawn(self, work: Coroutine[Any, Any, Any] | Awaitable[Any], name: str | None = None) -> asyncio.Task[Any]:
        """Run ``work`` in the background, referenced until it finishes and cancelled at the end; a failure is
        logged (a background task has no one to raise to)."""
        task = asyncio.ensure_future(work)
        if name is not None:
            task.set_name(f"{self.name}: {name}")
        self._tasks.add(task)
        task.add_done_callback(self._finished)
        return task

    def _finished(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("%s: background task %s failed", self.name, task.get_name(), exc_info=task.exception())

    @property
    def tasks(self) -> frozenset[asyncio.Task[Any]]:
        return frozenset(self._tasks)

    # -- the program's end ----------------------------------------------------------------------------

    @property
    def terminated(self) -> bool:
        """The program's end has been reported."""
        return self._terminated

    @property
    def exited(self) -> bool:
        return self._exited

    def report_exited(self, code: int | None) -> bool:
        """Report the program's exit status once, before its end; False if it was reported already, or the end."""
        if self._exited or self._terminated:
            return False
        self._exited = True
        self._listener.on_exited(code)
        return True

    def report_terminated(self, cause: str | None = None) -> bool:
        """Report the program's end once (with what ended it when that was not the program itself)."""
        if self._terminated:
            return False
        self._terminated = True
        self._listener.on_terminated(cause)
        return True

    # -- the backend's end ------------------------------------------------------------------------------

    async def end(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run ``work`` once however many callers ask (terminate, detach, a crash watcher); wait for it."""
        if self._end is None:
            self.phase = max(self.phase, Phase.ENDING)
            self._end = asyncio.ensure_future(self._run_end(work))
        await asyncio.shield(self._end)

    async def _run_end(self, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        finally:
            current = asyncio.current_task()
            for task in list(self._tasks):
                if task is not current:
                    task.cancel()
            self.phase = Phase.ENDED

    @property
    def end_started(self) -> bool:
        return self._end is not None
