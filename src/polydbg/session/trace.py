"""Tracepoints: run without stopping, recording expressions at locations, then answer with the hits.

Each point becomes an internal logpoint whose message starts with a token unique to this trace. Its
lines arrive in the logpoints' stream and are taken out of it (``output.TraceLines``) as hits: every
one is counted, up to ``max_hits``, which ends the trace at once (the lines still in transit are
dropped, never shown as output). After an exit the trace waits for the debugger to report the
program's end, so the hits in transit at the exit are counted too.

Every row goes to the session's trace log, which ``debug_output(stream="trace")`` pages. The answer leads with
what the rows add up to, as an agent reading 1,000 rows would otherwise count by hand (a lost update of 371 of 498
increments was counted so): per expression the values with their counts (``tally.Tally``); when the debugger
names the thread of each hit (``Backend.trace_thread``) and several hit, each thread's hits and values and how
many values more than one thread saw; where a ``where`` condition (evaluated at every hit beside the
expressions) held, how often, the first and last such hit and the cursor of the first. Then the first rows, in
what the summary leaves of the budget, and the last ones. The
logpoints are removed afterwards, whatever ended the trace (max hits, a stop, the exit, the deadline).
A point the debugger can never bind (a comment line to debugpy) is named at once, and when no point
binds nothing runs; a trace a stop ends names the agent's breakpoint that stopped it.
"""

from __future__ import annotations

import asyncio
import collections
import logging
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
from polydbg.session.tally import Tally

log = logging.getLogger(__name__)

# A printable token (str.splitlines treats \x1c-\x1e as line breaks) and a unit separator.
_SEPARATOR = "\x1f"
MAX_EXPRESSIONS = 32
ANSWER_BYTES = 2000  # a trace's answer, in bytes of its text
HEAD_BYTES = 150  # of which its first line, a note and the line that says how to read the rows left out
REPORT_BYTES = 600  # the report of the stop or the exit that ended the trace
REPORT_HEAD_BYTES = 250  # of which the lines besides its source it keeps (where, and how to read the rest)
FIRST_ROWS_BYTES = 800  # the first rows at most, when the summary leaves room
LAST_ROWS_BYTES = 250  # the last rows at most, when the first do not reach them
LAST_ROWS = 8
ROW_CHARS = 300  # a row as the answer quotes it (the trace log holds all of it)
ROW_BYTES = 2000  # one row's values together (each value at most VALUE_CHARS)
VALUE_CHARS = 200
VALUES_BYTES = 400  # the expressions' summaries together (the first expression's always)
THREADS_BYTES = 360  # the threads' lines together (the first thread's always)
WHERE_BYTES = 350  # the where line (the rows it quotes are cut to fit)
THREADS_SHOWN = 4  # threads a summary details, the busiest first
THREAD_CHARS = 110  # a thread's line
THREADS_KEPT = 64  # threads counted apart (the others together)
THREAD_DISTINCT = 1_000  # distinct values counted per expression per thread
THREAD_EXPRESSIONS = 4  # the expressions counted per thread (the first ones)
WHERE_ROW_CHARS = 120  # a row the where line quotes, at most
WHERE_MARK = "  ← where"  # ends a row of the trace log where the where condition held
EXPRESSIONS_CHARS = 2000  # all of a trace's expressions together: every row names them
# What a `where` expression's value reads as when it does not hold, in the languages traced.
_FALSY = frozenset({"", "false", "False", "0", "0.0", "-0", "None", "null", "nil", "undefined", "NaN", "''", '""',
                    "[]", "{}", "()", "set()", "<nil>"})


def locals_bytes(report: StopReport) -> int:
    """About the bytes a report's locals take as rendered (``  name (type) = value [ref=N]`` a line, and the line
    that says how to read a cut value)."""
    listed = report.locals or []
    return sum(len(f"  {v.name} ({v.type}) = {v.value} [ref=999]".encode()) + 1 for v in listed) + 90 * bool(listed)


def row_text(label: str, line: int, values: dict[str, str], thread: str | None = None) -> str:
    """One hit as the answer and the trace log show it: ``where [thread]  expr=value, …``."""
    return f"{label}:{line}" + (f" [{thread}]" if thread else "") + "  " + ", ".join(
        f"{e}={v}" for e, v in values.items())


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


def _summary_bytes(values: dict[str, str] | None, threads: list[str] | None, where: str | None) -> int:
    return sum(len(e) + len(v) + 3 for e, v in (values or {}).items()) + \
        sum(len(line) + 1 for line in threads or []) + len(where or "") + len("rows:\n")


def answered(size: int) -> int:
    """The bytes a row of ``size`` bytes in the trace log takes in the answer (indented, cut to ROW_CHARS)."""
    return min(size, ROW_CHARS + 1) + 2


def holds(value: str) -> bool | None:
    """Whether a `where` expression's value (as the debugger wrote it) holds; None for an error."""
    if value.startswith("<error"):
        return None
    return value.strip() not in _FALSY


class _Thread:
    """One thread's hits: how many, and what the first expressions took in it (a thread's line has room for few)."""

    def __init__(self, expressions: list[str]) -> None:
        self.hits = 0
        self.values = {e: Tally(THREAD_DISTINCT) for e in expressions[:THREAD_EXPRESSIONS]}


class _Where:
    """A condition evaluated at every hit: how often it held, the first and last hit where it did."""

    def __init__(self, expression: str) -> None:
        self.expression = expression
        self.held = 0
        self.errors = 0
        self.error: str | None = None
        self.first: tuple[int, TraceHit, int] | None = None  # hit number, the row, its cursor in the trace log
        self.last: tuple[int, TraceHit] | None = None

    def add(self, value: str, number: int, row: TraceHit, cursor: int) -> bool:
        """Count hit ``number``'s value of the condition; whether it held."""
        verdict = holds(value)
        if verdict is None:
            self.errors += 1
            self.error = self.error or value
        elif verdict:
            self.held += 1
            if self.first is None:
                self.first = (number, row, cursor)
            self.last = (number, row)
        return bool(verdict)

    def text(self, total: int, labels: dict[str, str], several_threads: bool) -> str:
        """``where …: held at 14 of 101 hits; first at hit 4 (row), last at hit 95 (row); rows from the first:
        debug_output(…)``, within WHERE_BYTES (the rows quoted are cut to fit)."""
        errors = f"; not evaluated at {self.errors}: {clip(self.error or '', 60)[0]}" if self.errors else ""
        said = f"where {clip(self.expression, 60)[0]}: "
        if self.first is None or self.last is None:
            return said + f"never held in {total} hits" + errors
        number, row, cursor = self.first
        rows = [(number, row)] + ([self.last] if self.last[0] != number else [])
        said += f"held at {self.held} of {total} hits; "
        after = f"; rows from the first: debug_output(stream=\"trace\", cursor={cursor})" + errors
        room = (WHERE_BYTES - len(said) - len(after)) // len(rows) - len("first at hit  (), ") - len(str(total))
        quoted = [f"hit {n} ({clip(self._row(r, labels, several_threads), max(30, min(WHERE_ROW_CHARS, room)))[0]})"
                  for n, r in rows]
        return said + "first at " + quoted[0] + (f", last at {quoted[1]}" if len(quoted) > 1 else "") + after

    @staticmethod
    def _row(row: TraceHit, labels: dict[str, str], several_threads: bool) -> str:
        return row_text(labels.get(row.file, row.file), row.line, row.values, row.thread if several_threads else None)


class _Collector:
    """The hits of one trace: counted up to ``max_hits``, each a row of the trace log, the first and last rows
    kept for the answer, the values counted per expression (and per thread when the debugger says which thread
    hit), and the hits where ``where`` held."""

    def __init__(self, core: SessionCore, token: str, expressions: list[str], max_hits: int,
                 threaded: bool = False, where: str | None = None) -> None:
        self.core = core
        self.token = token
        self.expressions = expressions
        self.max_hits = max_hits
        self.threaded = threaded  # each line carries the thread after its place
        self.total = 0
        self.done = asyncio.Event()
        self.labels: dict[str, str] = {}
        self.moved: dict[tuple[str, int], int] = {}  # a point the debugger bound on another line
        self.first: list[tuple[TraceHit, int, int]] = []  # the first rows: each with its cursor and size
        self.first_bytes = 0
        self.after_first: int | None = None  # the trace log's cursor just after the first rows
        self.last: collections.deque[tuple[TraceHit, int, int]] = collections.deque(maxlen=LAST_ROWS)
        self.values = {e: Tally() for e in expressions}
        self.threads: dict[str, _Thread] = {}
        self.other_threads = 0  # hits of threads past THREADS_KEPT
        self.where = _Where(where) if where is not None else None
        self.value_chars = max(20, min(VALUE_CHARS, ROW_BYTES // max(1, len(expressions))))

    def take(self, line: str) -> None:
        """One tracepoint line (after the token): ``file:line``, the thread, the values, the where's, separated."""
        if self.total >= self.max_hits:
            return  # in transit when max_hits ended the trace
        where, *raw = line.split(_SEPARATOR)
        thread = clip(raw.pop(0), 60)[0] if self.threaded and raw else None
        condition = raw.pop() if self.where is not None and len(raw) > len(self.expressions) else None
        file, _, number = where.rpartition(":")
        lineno = int(number) if number.isdigit() else 0
        lineno = self.moved.get((file, lineno), lineno)
        values = {e: clip(v, self.value_chars)[0] for e, v in zip(self.expressions, raw, strict=False)}
        self.total += 1
        row = TraceHit(file=file, line=lineno, values=values, thread=thread)
        text = row_text(self.labels.get(file, file), lineno, values, thread)
        size = len(text.encode()) + 1
        cursor = self.core.trace_log.total
        if not self.last and (not self.first or self.first_bytes + size <= FIRST_ROWS_BYTES):
            self.first.append((row, cursor, size))
            self.first_bytes += size
        else:
            if not self.last:
                self.after_first = cursor
            self.last.append((row, cursor, size))
        held = self.where is not None and condition is not None and self.where.add(condition, self.total, row, cursor)
        self.core.trace_log.append("trace", text + (WHERE_MARK if held else "") + "\n")
        for expression, value in values.items():
            self.values[expression].add(value, thread)
        if thread is not None:
            self._count_thread(thread, values)
        if self.total >= self.max_hits:
            self.done.set()

    def _count_thread(self, thread: str, values: dict[str, str]) -> None:
        counted = self.threads.get(thread)
        if counted is None:
            if len(self.threads) >= THREADS_KEPT:
                self.other_threads += 1
                return
            counted = self.threads[thread] = _Thread(self.expressions)
        counted.hits += 1
        for expression, tally in counted.values.items():
            if expression in values:
                tally.add(values[expression])

    def summaries(self) -> dict[str, str]:
        """Per expression, the values it took with their counts (the first expression's always)."""
        shown: dict[str, str] = {}
        size = 0
        for expression, values in self.values.items():
            text = values.text()
            size += len(expression) + len(text) + 3
            if shown and size > VALUES_BYTES:
                break
            shown[expression] = text
        return shown

    def thread_lines(self, detailed: bool = True) -> list[str] | None:
        """With several threads: each (the busiest first) with its hits and what each expression took in it,
        and how many values more than one thread saw (a lost update: two threads read the same count)."""
        if len(self.threads) < 2:
            return None
        busiest = sorted(self.threads.items(), key=lambda item: -item[1].hits)
        head = self._hits_line(busiest)
        shared = [(e, t.shared) for e, t in self.values.items() if t.shared]
        tail = [] if not shared else [f"  {shared[0][0]}: {shared[0][1]} values seen in more than one thread"] \
            if len(shared) == 1 else [clip("  values seen in more than one thread: " + ", ".join(
                f"{e} {count}" for e, count in shared), THREAD_CHARS)[0]]
        room = THREADS_BYTES - len(head) - sum(len(line) + 1 for line in tail)
        details: list[str] = []
        for name, counted in busiest[:THREADS_SHOWN if detailed else 0]:
            line = clip(f"  {name}: {counted.hits} hits; " + "; ".join(
                f"{e} {t.brief()}" for e, t in counted.values.items()), THREAD_CHARS)[0]
            if len(line) + 1 > room:
                break
            details.append(line)
            room -= len(line) + 1
        return [head, *details, *tail]

    def _hits_line(self, busiest: list[tuple[str, _Thread]]) -> str:
        """``threads: 4, hits: server_3 328, server_1 250, …`` (the busiest first), within THREAD_CHARS."""
        line = f"threads: {len(busiest)}{'+' if self.other_threads else ''}, hits:"
        for shown, (name, counted) in enumerate(busiest):
            more = len(busiest) - shown
            entry = f" {clip(name, 30)[0]} {counted.hits},"
            if len(line) + len(entry) + len(f" … {more} more ({self.other_threads} hits)") > THREAD_CHARS:
                rest = sum(each.hits for _, each in busiest[shown:]) + self.other_threads
                return line + f" … {more}{'+' if self.other_threads else ''} more ({rest} hits)"
            line += entry
        return line.rstrip(",") + (f", others {self.other_threads}" if self.other_threads else "")

    def result(self, session_id: str, stopped_because: str, state: State, report: StopReport | None,
               note: str | None) -> TraceResult:
        """The answer: the summary, then as many first rows as fit beside it, the last rows, the cursor of the
        first row left out."""
        values = self.summaries() if self.total > 1 else None
        threads = self.thread_lines()
        several = threads is not None
        where = self.where.text(self.total, self.labels, several) if self.where is not None and self.total else None
        # a report keeps its source lines and its locals whatever its budget (its output gives way): the stop's own
        # facts come before the rows
        reserved = 0 if report is None else max(REPORT_BYTES, len((report.source or "").encode()) + REPORT_HEAD_BYTES
                                                + locals_bytes(report))
        room = ANSWER_BYTES - HEAD_BYTES - reserved
        summary = _summary_bytes(values, threads, where)
        if summary > room and threads:  # each thread's values give way first (their hits stay)
            threads = self.thread_lines(detailed=False)
            summary = _summary_bytes(values, threads, where)
        while summary > room and values and len(values) > 1:  # then the last expressions' (the first's stays)
            values = dict(list(values.items())[:-1])
            summary = _summary_bytes(values, threads, where)
        budget = room - summary
        first_budget = min(FIRST_ROWS_BYTES, budget - min(LAST_ROWS_BYTES, budget // 3))
        kept = 0
        used = 0
        for _, _, size in self.first:
            if used + answered(size) > first_budget and (kept or used + answered(size) > budget):
                break  # the first row is shown whenever it fits at all
            kept += 1
            used += answered(size)
        rest = self.first[kept:] + list(self.last)
        last: list[TraceHit] = []
        left = min(LAST_ROWS_BYTES, budget - used)
        for row, _, size in reversed(rest[-LAST_ROWS:]):
            if answered(size) > left:
                break
            last.insert(0, row)
            left -= answered(size)
        skipped = self.total - kept - len(last)
        more_cursor = self.first[kept][1] if kept < len(self.first) else self.after_first
        if not several:  # a thread named on every row says nothing
            last = [row.model_copy(update={"thread": None}) for row in last]
        return TraceResult(
            session_id=session_id, total_hits=self.total,
            hits=[row if several else row.model_copy(update={"thread": None}) for row, _, _ in self.first[:kept]],
            stopped_because=stopped_because, state=state, report=report, last_hits=last or None,
            skipped=skipped, more_cursor=more_cursor, values=values, threads=threads, where=where, note=note)


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
                    timeout_s: float, progress: Progress | None, where: str | None = None) -> TraceResult:
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
        if sum(len(e) for e in expressions) + len(where or "") > EXPRESSIONS_CHARS:
            raise UsageError(f"a trace's expressions are at most {EXPRESSIONS_CHARS} characters together (each row "
                             "names them); trace shorter ones (a local variable holding the value, a part of it)")
        if self.execution.unseen_stop():
            unseen = await self.execution.report_unseen("no tracepoint was set and nothing was resumed")
            return TraceResult(session_id=core.id, hits=[], total_hits=0, stopped_because="stopped",
                               state=life.state, report=unseen)
        core.traces += 1
        thread_piece = backend.trace_thread()
        collector = _Collector(core, f"{TRACE_PREFIX}{core.id}-{core.traces}>>", expressions, max_hits,
                               threaded=thread_piece is not None, where=where)
        paths = [(core.resolve_path(file), line) for file, line in points]
        collector.labels = row_labels([path for path, _ in paths], core.cwd)
        core.trace_log.append("trace", clip(f"trace {core.traces}: " + ", ".join(
            f"{collector.labels[path]}:{line}" for path, line in paths) + " — " + ", ".join(expressions)
            + (f" where {where}" if where is not None else ""), 400)[0] + "\n")
        added: list[Breakpoint] = []
        unbound: list[Breakpoint] = []
        core.trace_lines.claim(collector.token, collector.take)
        try:
            for path, line in paths:
                message = collector.token + f"{path}:{line}" + "".join(
                    _SEPARATOR + piece for piece in [
                        *([thread_piece] if thread_piece is not None else []),
                        *(backend.trace_interpolation(e) for e in expressions),
                        *([backend.trace_interpolation(where)] if where is not None else [])])
                bp = await self.bpsync.add_line(path, line, log_message=message, internal=True)
                added.append(bp)
                if bp.actual_line and bp.actual_line != line:  # before its first hit: rows show where it is
                    collector.moved[(path, line)] = bp.actual_line
            ended_first = life.ended  # the program ended as the points were sent: the answer is its end
            unbound = [] if ended_first else [bp for bp in added if _never_binds(bp)]
            if unbound and len(unbound) == len(added):
                refused = [bp for bp in unbound if "expression" in (bp.message or "")]
                advice = "fix the expression (it is evaluated in the program's language at each hit)" if refused \
                    else "trace lines with code (debug_source shows them)"
                raise UsageError(f"no trace point can be bound, so nothing ran: "
                                 f"{unbound_text(refused or unbound)}; {advice}")
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
    """Each point's place and the debugger's reason, which speaks of the logpoint a trace point is made of."""
    shown = "; ".join(f"{os.path.basename(bp.file or '')}:{bp.line}" +
                      (f": {(bp.message or '').replace(' in log_message', '')}" if bp.message else "")
                      for bp in bps[:3])
    return shown + (f" (and {len(bps) - 3} more)" if len(bps) > 3 else "")
