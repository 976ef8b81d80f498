"""A stop polydbg makes for its own work while the program runs (a call trace's recorder started and armed), which
the agent never sees (``HeldStop``).

pydevd pauses every thread that runs Python code (all threads, as ``debug_pause`` does; the probe stops when none
does: ``probe``); the stop's event is kept from the session, the work is done in the stopped thread, and every thread
is resumed: its ``continued`` event changes nothing for a session that reads the program as running. A thread
blocked in C code is not stopped by the pause (pydevd marks it to stop at its next line): the resume clears that
mark too, so no thread is left to stop later. A pause that stopped nothing in ``HOLD_S`` (every thread of an attached
program blocked in C: no probe there) is refused, and its stop, if one comes later, resumed unseen, unless the agent
paused meanwhile. A breakpoint's stop that came instead of the pause's is the agent's:
it is shown once the work is done, and the program stays stopped there (``rdbg``'s held stop does the same).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

from polydbg.errors import UsageError

log = logging.getLogger(__name__)
T = TypeVar("T")


HOLD_S = 5.0  # a pause stops a thread that runs Python within milliseconds (the probe within 0.2 s)


class HeldStop:
    def __init__(self, pause: Callable[[], Awaitable[None]], resume: Callable[[], Coroutine[Any, Any, None]],
                 show: Callable[[dict[str, Any]], None],
                 spawn: Callable[[Coroutine[Any, Any, None], str], object]) -> None:
        self._pause, self._resume, self._show, self._spawn = pause, resume, show, spawn
        self._waiting: asyncio.Future[dict[str, Any]] | None = None
        self._late = False  # a held pause that stopped nothing in time: its stop, if it comes, is resumed unseen
        self.last_ms: float | None = None  # the last held stop's pause, work and resume, for the log

    def took(self, body: dict[str, Any]) -> bool:
        """Whether the stop ``body`` is the one held (kept from the session)."""
        if self._late:
            self._late = False
            if body.get("reason") == "pause":
                self._spawn(self._resume(), "resume a held pause's late stop")
                return True
        if self._waiting is None or self._waiting.done():
            return False
        self._waiting.set_result(body)
        return True

    def agent_pauses(self) -> None:
        """The agent's own pause: its stop is shown, even if a held pause's late one comes first."""
        self._late = False

    async def run(self, work: Callable[[], Awaitable[T]]) -> T:
        started = time.perf_counter()
        waiting = self._waiting = asyncio.get_running_loop().create_future()
        try:
            await self._pause()
            try:
                stop = await asyncio.wait_for(asyncio.shield(waiting), HOLD_S)
            except asyncio.TimeoutError as exc:
                self._late = True  # (pydevd answers a continue only once a thread resumed: none is asked for)
                raise UsageError(f"no thread of the program stopped within {HOLD_S:g} s to start the call recorder "
                                 "in: each is blocked in C code (a lock, a socket, a sleep) or runs library code only. "
                                 "Set a breakpoint where the program goes next and debug_trace(functions=…) at its "
                                 "stop, or trace lines with debug_trace(points=…)") from exc
        finally:
            self._waiting = None
        try:
            return await work()
        finally:
            if stop.get("reason") == "pause":
                await self._resume()
            else:
                self._show(stop)
            self.last_ms = (time.perf_counter() - started) * 1000
            log.debug("debugpy: a held stop took %.1f ms", self.last_ms)
