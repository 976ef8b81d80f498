"""Tracepoints: run without stopping, recording expressions at locations, then answer with the hits.

Each point becomes an internal logpoint whose message starts with a token unique to this trace. Its
lines arrive in the logpoints' stream and are taken out of it (``output.TraceLines``) as hits: every
one is counted, up to ``max_hits``, which ends the trace at once (the lines still in transit are
dropped, never shown as output). After an exit the trace waits for the debugger to report the
program's end, so the hits in transit at the exit are counted too.

Every row goes to the session's trace log, which ``debug_output(stream="trace")`` pages; the answer
holds the first rows and the last ones within a budget, and what values each expression took. The
logpoints are removed afterwards, whatever ended the trace (max hits, a stop, the exit, the deadline).
A point the debugger can never bind (a comment line to debugpy) is named at once, and when no point
binds nothing runs; a trace a stop ends names the agent's breakpoint that stopped it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import math
import os

from polydbg.errors import AdapterError, SessionEndedError, SessionError, UsageError
from polydbg.session.bpsync import BreakpointSync
from polydbg.session.breakpoints import Breakpoint
from polydbg.session.core import Progress, SessionCore
from polydbg.session.execution import Execution
from polydbg.session.inspection import Inspector, clip, joined
from polydbg.session.model import Location, State, StopReport, TraceHit, TraceResult
from polydbg.session.output import TRACE_PREFIX
from polydbg.session.report import Reporter

log = logging.getLogger(__name__)

# A printable token (str.splitlines treats \x1c-\x1e as line breaks) and a unit separator.
_SEPARATOR = "\x1f"
MAX_EXPRESSIONS = 32
FIRST_ROWS_BYTES = 800  # the first rows an answer holds, in bytes of their text
LAST_ROWS_BYTES = 250  # and the last ones, when the first do not reach them
LAST_ROWS = 8
ROW_BYTES = 2000  # one row's values together (each value at most VALUE_CHARS)
VALUE_CHARS = 200
SUMMARY_CHARS = 40  # a value as a summary quotes it
VALUES_BYTES = 400  # the summaries of an answer together (the first expression's always)
EXPRESSIONS_CHARS = 2000  # all of a trace's expressions together: every row names them
DISTINCT = 10_000  # distinct values counted per expression
LISTED = 5  # up to this many distinct values, the summary lists them


def row_text(label: str, line: int, values: dict[str, str]) -> str:
    """One hit as the answer and the trace log show it: ``where  expr=value, …``."""
    return f"{label}:{line}  " + ", ".join(f"{e}={v}" for e, v in values.items())


def row_labels(files: list[str], cwd: str | None) -> dict[str, str]:
    """How rows name each file: relative to the session's directory when inside it (as paths are passed),
    else by its base name unless two traced files share one."""
    unique = len({os.path.basename(f) for f in files}) == len(set(files))
    labels = {}
    for file in files:
        inside = os.path.relpath(file, cwd) if cwd and os.path.isabs(file) else None
        labels[file] = inside if inside and not inside.startswith("..") else \
            os.path.basename(file) if unique else file
    return labels


class _Values:
    """What one expression evaluated to over a trace: first and last value, how many distinct, the range."""

    def __init__(self) -> None:
        self.first: str | None = None
        self.last = ""
        self.distinct: dict[str, None] = {}
        self.capped = False
        self.low: tuple[float, str] | None = None
        self.high: tuple[float, str] | None = None
        self.numeric = True

    def add(self, value: str) -> None:
        if self.first is None:
            self.first = value
        self.last = value
        if value not in self.distinct:
            if len(self.distinct) < DISTINCT:
                self.distinct[value] = None
            else:
                self.capped = True
        if self.numeric:
            try:
                number = float(value)
            except ValueError:
                self.numeric = False
                return
            if math.isnan(number):
                return
            if self.low is None or number < self.low[0]:
                self.low = (number, value)
            if self.high is None or number > self.high[0]:
                self.high = (number, value)

    def text(self) -> str:
        def short(value: str) -> str:
            return clip(value, SUMMARY_CHARS)[0]
        count = len(self.distinct)
        if count <= LISTED:
            return f"{count} distinct: " + ", ".join(short(v) for v in self.distinct)
        text = f"{count}{'+' if self.capped else ''} distinct, first {short(self.first or '')}, last {short(self.last)}"
        if self.numeric and self.low is not None and self.high is not None:
            text += f", min {short(self.low[1])}, max {short(self.high[1])}"
        return text


class _Collector:
    """The hits of one trace: counted up to ``max_hits``, each a row of the trace log, the first and last rows
    kept for the answer, the values summarised per expression."""

    def __init__(self, core: SessionCore, token: str, expressions: list[str], max_hits: int) -> None:
        self.core = core
        self.token = token
        self.expressions = expressions
        self.max_hits = max_hits
        self.total = 0
        self.done = asyncio.Event()
        self.labels: dict[str, str] = {}
        self.moved: dict[tuple[str, int], int] = {}  # a point the debugger bound on another line
        self.first: list[TraceHit] = []
        self.first_bytes = 0
        self.after_first: int | None = None  # the trace log's cursor just after the first rows
        self.last: collections.deque[tuple[str, int, dict[str, str], int]] = collections.deque(maxlen=LAST_ROWS)
        self.values = {e: _Values() for e in expressions}
        self.value_chars = max(20, min(VALUE_CHARS, ROW_BYTES // max(1, len(expressions))))

    def take(self, line: str) -> None:
        """One tracepoint line (after the token): ``file:line`` and the values, separated."""
        if self.total >= self.max_hits:
            return  # in transit when max_hits ended the trace
        where, *raw = line.split(_SEPARATOR)
        file, _, number = where.rpartition(":")
        lineno = int(number) if number.isdigit() else 0
        lineno = self.moved.get((file, lineno), lineno)
        values = {e: clip(v, self.value_chars)[0] for e, v in zip(self.expressions, raw, strict=False)}
        self.total += 1
        text = row_text(self.labels.get(file, file), lineno, values)
        size = len(text.encode()) + 1
        if self.after_first is None:
            if not self.first or self.first_bytes + size <= FIRST_ROWS_BYTES:
                self.first.append(TraceHit(file=file, line=lineno, values=values))
                self.first_bytes += size
            else:
                self.after_first = self.core.trace_log.total
        self.core.trace_log.append("trace", text + "\n")
        if self.after_first is not None:
            self.last.append((file, lineno, values, size))
        for expression, value in values.items():
            self.values[expression].add(value)
        if self.total >= self.max_hits:
            self.done.set()

    def last_rows(self) -> list[TraceHit]:
        rows: list[TraceHit] = []
        budget = LAST_ROWS_BYTES
        for file, line, values, size in reversed(self.last):
            if rows and size > budget:
                break
            rows.insert(0, TraceHit(file=file, line=line, values=values))
            budget -= size
        return rows

    def summaries(self) -> dict[str, str]:
        shown: dict[str, str] = {}
        size = 0
        for expression, values in self.values.items():
            text = values.text()
            size += len(expression) + len(text) + 4
            if shown and size > VALUES_BYTES:
                break
            shown[expression] = text
        return shown

    def result(self, session_id: str, stopped_because: str, state: State, report: StopReport | None,
               note: str | None) -> TraceResult:
        last = self.last_rows() if self.after_first is not None else []
        return TraceResult(
            session_id=session_id, hits=self.first, total_hits=self.total, stopped_because=stopped_because,
            state=state, report=report, last_hits=last or None,
            skipped=self.total - len(self.first) - len(last),
            more_cursor=self.after_first,
            values=self.summaries() if self.total > 1 else None,
            note=note)


def _never_binds(bp: Breakpoint) -> bool:
    """The debugger said it cannot bind this point at all (not: it binds when its code loads)."""
    return not bp.verified and bool(bp.message) and not (bp.message or "").startswith("not bound yet")


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
        if len(expressions) > MAX_EXPRESSIONS:
            raise UsageError(f"a trace records at most {MAX_EXPRESSIONS} expressions ({len(expressions)} were "
                             "passed); trace fewer at a time")
        if sum(len(e) for e in expressions) > EXPRESSIONS_CHARS:
            raise UsageError(f"a trace's expressions are at most {EXPRESSIONS_CHARS} characters together (each row "
                             "names them); trace shorter ones (a local variable holding the value, a part of it)")
        if self.execution.unseen_stop():
            unseen = await self.execution.report_unseen("no tracepoint was set and nothing was resumed")
            return TraceResult(session_id=core.id, hits=[], total_hits=0, stopped_because="stopped",
                               state=life.state, report=unseen)
        core.traces += 1
        collector = _Collector(core, f"{TRACE_PREFIX}{core.id}-{core.traces}>>", expressions, max_hits)
        paths = [(core.resolve_path(file), line) for file, line in points]
        collector.labels = row_labels([path for path, _ in paths], core.cwd)
        core.trace_log.append("trace", clip(f"trace {core.traces}: " + ", ".join(
            f"{collector.labels[path]}:{line}" for path, line in paths) + " — " + ", ".join(expressions), 400)[0]
            + "\n")
        added: list[Breakpoint] = []
        unbound: list[Breakpoint] = []
        core.trace_lines.claim(collector.token, collector.take)
        try:
            for path, line in paths:
                message = collector.token + f"{path}:{line}" + "".join(
                    _SEPARATOR + backend.trace_interpolation(e) for e in expressions)
                bp = await self.bpsync.add_line(path, line, log_message=message, internal=True)
                added.append(bp)
                if bp.actual_line and bp.actual_line != line:  # before its first hit: rows show where it is
                    collector.moved[(path, line)] = bp.actual_line
            ended_first = life.ended  # the program ended as the points were sent: the answer is its end
            unbound = [] if ended_first else [bp for bp in added if _never_binds(bp)]
            if unbound and len(unbound) == len(added):
                raise UsageError(f"no trace point can be bound, so nothing ran: {unbound_text(unbound)}; "
                                 "trace lines with code (debug_source shows them)")
            since = life.stops if ended_first else await self.execution.run_on()
            reason = await self._wait(collector, since, timeout_s, progress)
            await self.execution.settle_end()  # the hits in transit at an exit
            pending = [] if ended_first else [bp for bp in added if not bp.verified and bp not in unbound]
        finally:
            core.trace_lines.release()
            try:
                await self.bpsync.drop(added)
            except (AdapterError, SessionError):
                log.debug("could not remove tracepoints", exc_info=True)
        report = await self.reporter.report() if life.state != State.running else None
        note = joined("the program ended as the trace points were being set" if ended_first else None,
                       f"never bound (no hits there): {unbound_text(unbound)}" if unbound else None,
                       f"not bound during the trace: {unbound_text(pending)}" if pending else None,
                       self._moved_note(collector),
                       self._stopped_by(report) if reason == "stopped" else None)
        return collector.result(core.id, reason, life.state, report, note)

    def _moved_note(self, collector: _Collector) -> str | None:
        if not collector.moved:
            return None
        moved = list(collector.moved.items())
        return "bound on another line: " + ", ".join(
            f"{collector.labels.get(file, file)}:{line} at line {actual}" for (file, line), actual in moved[:3]) + (
            f" (and {len(moved) - 3} more)" if len(moved) > 3 else "")

    def _stopped_by(self, report: StopReport | None) -> str | None:
        """Which of the agent's breakpoints ended the trace (or what else stopped the program)."""
        stop = self.core.life.stop
        if stop is None:
            return None
        store = self.core.breakpoints
        mine = [bp for i in stop.hit_breakpoint_ids if (bp := store.items.get(i)) is not None and not bp.internal]
        location = report.location if report is not None else None
        if not mine and isinstance(location, Location) and location.file and location.line:
            mine = [bp for bp in store.at(location.file, location.line) if not bp.internal and not bp.log_message]
        if mine:
            bp = mine[0]
            where = f"function {bp.function}" if bp.function else f"watch {bp.watch}" if bp.watch else \
                f"{os.path.basename(bp.file or '')}:{bp.actual_line or bp.line}"
            return f"ended by breakpoint #{bp.id} ({where})"
        return f"ended by a stop ({stop.reason})"

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
                await progress(timeout_s - (deadline - loop.time()), f"tracing… {collector.total} hits")


def unbound_text(bps: list[Breakpoint]) -> str:
    shown = "; ".join(f"{os.path.basename(bp.file or '')}:{bp.line}" + (f": {bp.message}" if bp.message else "")
                      for bp in bps[:3])
    return shown + (f" (and {len(bps) - 3} more)" if len(bps) > 3 else "")
