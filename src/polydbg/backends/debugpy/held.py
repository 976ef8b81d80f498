"""A stop polydbg makes for its own work while the program runs (a call trace's recorder started and armed), which
the agent never sees (``HeldStop``).

pydevd pauses every thread that runs Python code (all threads, as ``debug_pause`` does; the probe stops when none
does: ``probe``); the stop's event is kept from the session, the work is done in the stopped thread, and every thread
is resumed: its ``continued`` event changes nothing for a session that reads the program as running. A thread
blocked in C code is not stopped by the pause (pydevd marks it to stop at its next line): the resume clears that
mark too, so no thread is left to stop later. A breakpoint's stop that came instead of the pause's is the agent's:
it is shown once the work is done, and the program stays stopped there (``rdbg``'s held stop does the same).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from polydbg.backends.kit import timeouts
from polydbg.errors import UsageError

log = logging.getLogger(__name__)
T = TypeVar("T")


class HeldStop:
    def __init__(self) -> None:
        self._waiting: asyncio.Future[dict[str, Any]] | None = None
        self.last_ms: float | None = None  # the last held stop's pause, work and resume, for the log

    def took(self, body: dict[str, Any]) -> bool:
        """Whether the stop ``body`` is the one held (kept from the session)."""
        if self._waiting is None or self._waiting.done():
            return False
        self._waiting.set_result(body)
        return True

    async def run(self, pause: Callable[[], Awaitable[None]], resume: Callable[[], Awaitable[None]],
                  show: Callable[[dict[str, Any]], None], work: Callable[[], Awaitable[T]]) -> T:
        started = time.perf_counter()
        waiting = self._waiting = asyncio.get_running_loop().create_future()
        try:
            await pause()
            try:
                stop = await asyncio.wait_for(asyncio.shield(waiting), timeouts.INSPECT_S)
            except asyncio.TimeoutError as exc:
                await resume()  # the pause's mark taken off every thread: none stops later, unasked
                raise UsageError(f"no thread of the program stopped within {timeouts.INSPECT_S:g} s to start the call "
                                 "recorder in: each is blocked in C code (a lock, a socket, a sleep) or runs library "
                                 "code only. Set a breakpoint where the program goes next and debug_trace(functions="
                                 "…) at its stop, or trace lines with debug_trace(points=…)") from exc
        finally:
            self._waiting = None
        try:
            return await work()
        finally:
            if stop.get("reason") == "pause":
                await resume()
            else:
                show(stop)
            self.last_ms = (time.perf_counter() - started) * 1000
            log.debug("debugpy: a held stop took %.1f ms", self.last_ms)
