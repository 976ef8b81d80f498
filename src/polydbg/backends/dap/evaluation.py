"""Evaluating an expression over DAP: one at a time per thread, and an endless one costs one deadline.

A DAP adapter cannot interrupt an evaluation (there is no cancel that reaches the running code), and
debugpy, lldb-dap and delve evaluate one expression at a time on a thread: an expression that never
ends (``while True: pass``, a call that waits on a lock) holds the thread until the session ends, and
every later evaluation on that thread would queue behind it. So an evaluation that passes its
deadline (``timeouts.INSPECT_S``, read at each call) is remembered as still running, and the next
evaluation on that thread is refused at once, with what is running and for how long, instead of
costing another deadline; once the first one answers, evaluations go through again. Unless the debugger
cannot be evaluating anything (``not_answering``: its process stopped by a signal, the program held by its
tracer with no thread running): then the answer says the debugger is not answering, not that the expression
runs on; nor when a request sent before it is still unanswered (a debugger answers in order: the evaluation may
not have begun).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from polydbg.backends.kit import timeouts
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterTimeoutError


@dataclass(frozen=True)
class _Evaluation:
    expression: str
    future: asyncio.Future[dict[str, Any]]
    since: float


class Evaluations:
    """The evaluations still running past their deadline, by thread (None: no frame given)."""

    def __init__(self, adapter: str, not_answering: Callable[[], str | None] = lambda: None) -> None:
        self._adapter = adapter
        self._not_answering = not_answering  # why the adapter cannot be busy evaluating, or None
        self._running: dict[int | None, _Evaluation] = {}

    def running(self) -> str | None:
        """An expression still running past its deadline on some thread, if any."""
        return next((e.expression for e in self._running.values() if not e.future.done()), None)

    def _silent(self, waited: str) -> AdapterTimeoutError | None:
        """The error for an adapter that is not answering (rather than evaluating), if it is not."""
        why = self._not_answering()
        if why is None:
            return None
        return AdapterTimeoutError(f"{self._adapter} is not answering ({waited}): {why}. debug_terminate ends the "
                                   "session")

    def refuse_if_busy(self, thread: int | None) -> None:
        earlier = self._running.get(thread)
        if earlier is not None and not earlier.future.done():
            silent = self._silent(f"still no answer to {earlier.expression!r} after "
                                  f"{time.monotonic() - earlier.since:.0f} s")
            if silent is not None:
                raise silent
            raise AdapterTimeoutError(
                f"{earlier.expression!r} is still running in the program (for "
                f"{time.monotonic() - earlier.since:.0f} s) and {self._adapter} evaluates one expression at a "
                "time on a thread, so this one would wait behind it. An endless expression cannot be "
                "interrupted: debug_terminate ends the session")

    async def run(self, client: DapClient, thread: int | None, expression: str,
                  arguments: dict[str, Any], grace_s: float = 0.0) -> dict[str, Any]:
        """Send ``evaluate`` and wait one deadline; past it, remember the evaluation as still running.
        ``grace_s``: more time for an adapter told to interrupt the evaluation itself at the deadline."""
        future = client.send_request("evaluate", arguments)
        deadline = timeouts.INSPECT_S
        try:
            return await client.wait(future, "evaluate", deadline + grace_s)
        except AdapterTimeoutError as exc:
            silent = self._silent(f"no answer to the evaluation within {deadline:g} s")
            earlier = client.unanswered_before(future)
            if silent is None and earlier is not None:  # queued behind it, not known to run: not remembered as such
                raise AdapterTimeoutError(
                    f"{exc}; {self._adapter} has not answered the {earlier.label!r} sent "
                    f"{time.monotonic() - earlier.sent_at:.0f} s ago either, before this evaluation, so the "
                    "evaluation may not have started. debug_terminate ends the session if it stays so") from exc
            self._running[thread] = _Evaluation(expression, future, time.monotonic() - deadline - grace_s)
            if silent is not None:
                raise silent from exc
            raise AdapterTimeoutError(
                f"the expression is still running after {deadline:g} s (an endless loop or a call "
                f"that waits?): the program stays stopped, but {self._adapter} cannot interrupt an evaluation "
                "and evaluates nothing else on this thread until it ends. debug_terminate ends the "
                "session") from exc
