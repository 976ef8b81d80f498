"""Stop refinement that keeps events in order.

Some stops need an asynchronous look before they can be reported: lldb-dap's SIGABRT or Rust panic
stop (read the stack to hide the abort machinery), delve's pause (move it to a user goroutine) or
fatal error. Meanwhile the debugger may send more events — a continue, another stop, the exit. The
session must see them after the refined stop, as they happened. ``OrderedEvents`` stands in front
of the session's listener: while a refinement runs, stops, continues, exits and terminations queue
up (output and breakpoint changes pass straight through); afterwards they are delivered in order,
and a queued delivery that starts a refinement of its own pauses the draining again.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from polydbg.backends.base import BackendListener, BreakpointResult, StopEvent

log = logging.getLogger(__name__)


class OrderedEvents:
    def __init__(self, target: BackendListener) -> None:
        self.target = target  # refinements report through it directly
        self._queue: collections.deque[Callable[[], None]] = collections.deque()
        self._refining = False
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def refining(self) -> bool:
        return self._refining

    def deliver(self, call: Callable[[], None]) -> None:
        """Run ``call`` now, or after the refinement in progress (and what queued before it)."""
        if self._refining:
            self._queue.append(call)
        else:
            call()

    def refine(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` (which reports through ``target``) while later events wait."""
        self._refining = True
        task = asyncio.get_running_loop().create_task(self._run(work))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception:
            log.exception("refining a stop failed")
        finally:
            self._refining = False
            while self._queue and not self._refining:
                self._queue.popleft()()

    def cancel(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        self._queue.clear()
        self._refining = False

    # -- BackendListener ----------------------------------------------------------------------------

    def on_stopped(self, event: StopEvent) -> None:
        self.deliver(lambda: self.target.on_stopped(event))

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        self.deliver(lambda: self.target.on_continued(thread_id, all_threads))

    def on_exited(self, exit_code: int | None) -> None:
        self.deliver(lambda: self.target.on_exited(exit_code))

    def on_terminated(self, cause: str | None) -> None:
        self.deliver(lambda: self.target.on_terminated(cause))

    def on_output(self, category: str, text: str) -> None:
        self.target.on_output(category, text)

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        self.target.on_breakpoint_changed(bp_id, result)
