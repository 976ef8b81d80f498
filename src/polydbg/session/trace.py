"""Tracepoints: run without stopping, recording expressions at locations, then answer with the hits.

Each point becomes an internal logpoint whose message starts with a token unique to this trace;
the lines carrying it are taken out of the program's output as they arrive and become hits. The
logpoints are removed afterwards, whatever ended the trace (max hits, a stop, the exit, the deadline).
"""

from __future__ import annotations

import asyncio
import logging

from polydbg.errors import AdapterError, SessionEndedError, SessionError, UsageError
from polydbg.session.bpsync import BreakpointSync
from polydbg.session.breakpoints import Breakpoint
from polydbg.session.core import Progress, SessionCore
from polydbg.session.execution import Execution
from polydbg.session.inspection import Inspector, clip
from polydbg.session.model import State, TraceHit, TraceResult
from polydbg.session.report import Reporter

log = logging.getLogger(__name__)

# A printable token (str.splitlines treats \x1c-\x1e as line breaks) and a unit separator.
_SEPARATOR = "\x1f"


class _Collector:
    """Takes the trace lines out of output chunks and keeps the first ``max_hits`` as hits."""

    def __init__(self, token: str, expressions: list[str], max_hits: int) -> None:
        self.token = token
        self.expressions = expressions
        self.max_hits = max_hits
        self.hits: list[TraceHit] = []
        self.total = 0
        self.done = asyncio.Event()

    def sink(self, text: str) -> str:
        """What remains of an output chunk for the program's output."""
        if self.token not in text:
            return text
        rest = []
        for line in text.split("\n"):
            if not line.startswith(self.token):
                rest.append(line)
                continue
            where, *values = line[len(self.token):].split(_SEPARATOR)
            file, _, lineno = where.rpartition(":")
            self.total += 1
            if len(self.hits) < self.max_hits:
                pairs = zip(self.expressions, values, strict=False)
                self.hits.append(TraceHit(file=file, line=int(lineno) if lineno.isdigit() else 0,
                                          values={e: clip(v, 200)[0] for e, v in pairs}))
            if self.total >= self.max_hits:
                self.done.set()
        return "\n".join(rest)


class Tracer:
    def __init__(self, core: SessionCore, bpsync: BreakpointSync, execution: Execution, inspector: Inspector,
                 reporter: Reporter) -> None:
        self.core = core
        self.bpsync = bpsync
        self.execution = execution
        self.inspector = inspector
        self.reporter = reporter

    async def trace(self, points: list[tuple[str, int]], expressions: list[str], max_hits: int,
                    timeout_s: float, progress: Progress | None) -> TraceResult:
        core, life = self.core, self.core.life
        backend = core.backend
        if life.state not in (State.stopped, State.running):
            raise SessionEndedError(life.ended_text())
        if not backend.capabilities.log_points:
            raise UsageError(f"{core.adapter} has no logpoints, so tracing without stopping is unavailable; "
                             "use conditional breakpoints with debug_continue instead")
        if self.execution.unseen_stop():
            unseen = await self.execution.report_unseen("no tracepoint was set and nothing was resumed")
            return TraceResult(session_id=core.id, hits=[], total_hits=0, stopped_because="stopped",
                               state=life.state, report=unseen)
        collector = _Collector(f"<<polydbg-trace-{core.id}-{life.stops}>>", expressions, max_hits)
        added: list[Breakpoint] = []
        core.trace_sink = collector.sink
        try:
            for file, line in points:
                path = core.resolve_path(file)
                message = collector.token + f"{path}:{line}" + "".join(
                    _SEPARATOR + backend.trace_interpolation(e) for e in expressions)
                added.append(await self.bpsync.add_line(path, line, log_message=message, internal=True))
            async with self.execution.lock:
                since = life.stops
                scope = life.scope
                if life.state == State.stopped and scope is not None:
                    thread = self.inspector.thread_of(scope, None)
                    since = await self.execution.act(lambda: backend.resume(thread))
            reason = await self._wait(collector, since, timeout_s, progress)
        finally:
            try:
                await self.bpsync.drop(added)
            except (AdapterError, SessionError):
                log.debug("could not remove tracepoints", exc_info=True)
            core.trace_sink = None
        report = await self.reporter.report() if life.state != State.running else None
        return TraceResult(session_id=core.id, hits=collector.hits, total_hits=collector.total,
                           stopped_because=reason, state=life.state, report=report)

    async def _wait(self, collector: _Collector, since: int, timeout_s: float, progress: Progress | None) -> str:
        life = self.core.life
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            if collector.done.is_set():
                return "max_hits"
            if life.ended:
                return str(life.state.value)
            if life.stops != since:
                return "stopped"
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "timeout"
            changed = asyncio.ensure_future(life.changed.wait())
            finished = asyncio.ensure_future(collector.done.wait())
            try:
                await asyncio.wait({changed, finished}, timeout=min(remaining, 1.0),
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                finished.cancel()
            if progress is not None and not collector.done.is_set():
                await progress(timeout_s - (deadline - loop.time()), "tracing…")
