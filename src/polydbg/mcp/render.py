"""Compact text renderings of the tool answers: what the model reads (the JSON is for programs).

Paths are shown relative to the session's working directory when they lie inside it (tool arguments
resolve relative to it too, so a path copied from an answer can be passed back) and absolute
otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from polydbg.session.inspection import clip
from polydbg.session.model import (
    BreakpointInfo,
    BreakpointList,
    CallTrace,
    CommandResult,
    DisassemblyResult,
    EvaluateResult,
    LockState,
    MemoryResult,
    Output,
    OutputResult,
    SessionList,
    SourceResult,
    StackResult,
    State,
    StopReport,
    TestResult,
    TraceHit,
    TraceResult,
    Var,
    VariablesResult,
)
from polydbg.session.trace import REPORT_BYTES, ROW_CHARS, row_labels, row_text


def _short(path: str | None, base: str | None) -> str:
    if not path:
        return "?"
    if not base or not os.path.isabs(path):
        return path
    try:
        rel = os.path.relpath(path, base)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel


def _where(file: str | None, line: int | None, base: str | None) -> str:
    if not file:
        return "(no source)"
    return f"{_short(file, base)}:{line}" if line else _short(file, base)


def var_line(v: Var, indent: str = "  ") -> str:
    kind = f" ({v.type})" if v.type else ""
    ref = f" [ref={v.ref}]" if v.ref else ""
    return f"{indent}{v.name}{kind} = {v.value}{ref}"


REPORT_BUDGET = 2000  # bytes of text for a default stop report
_MORE = re.compile(r"^… and (\d+) more")  # a summary's last line, when it lists only the first functions


def stop_report(r: StopReport, budget: int = REPORT_BUDGET, base: str | None = None,
                locals_budget: int | None = None) -> str:
    """The report as a model reads it, held under ``budget`` bytes: output is cut first (debug_output
    has all of it), then trailing locals (debug_variables lists them) — those only past ``locals_budget`` when
    given (a trace's answer gives the stop's own facts their room before its rows)."""
    fixed = [_report_head(r, base)]
    if r.test:
        fixed.append(test_line(r.test))
    fixed.extend(deadlock_line(cycle) for cycle in r.deadlocks or [])
    if r.note:
        fixed.append(f"note: {r.note}")
    if r.exception:
        fixed.append(f"exception: {r.exception.type}" + (f": {r.exception.message}" if r.exception.message else ""))
        fixed.extend(f"  {line}" for line in r.exception.details or [])
    fixed.extend(f"returned: {line}" for line in r.returned or [])
    if r.trace:
        traced = call_trace(r.trace, f"trace: {_counted(r.trace.calls, 'call')}, {r.trace.raised} raised")
        fixed.extend(traced)
        budget += len("\n".join(traced).encode())  # the trace is bounded by its own budget, beside the report's
    if r.source:
        fixed.append(r.source)
    shown = [var_line(v) for v in r.locals or []]
    hidden = r.locals_more

    def assemble(output_limit: int | None) -> str:
        lines = list(fixed)
        if r.locals is not None:
            lines.append("locals:" if shown or hidden else "locals: none")
            lines.extend(shown)
            if hidden:
                lines.append(f"  … {hidden} more: debug_variables(frame_id=0)")
            cut = [v for v in r.locals if v.truncated]
            if cut:
                lines.append("  (… = value cut: debug_evaluate(expression=NAME)"
                             + (" or debug_variables(ref=N))" if any(v.ref for v in cut) else ")"))
        if r.output:
            lines.extend(_output_lines(r.output, output_limit))
        return "\n".join(lines)

    text = assemble(None)
    if len(text.encode()) > budget and r.output:
        # the most output that fits: searched, as its lines are indented and a cut adds a hint
        low, high = 0, len(r.output.text.encode()) + len((r.output.logpoints or "").encode())
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if len(assemble(middle).encode()) <= budget else (low, middle - 1)
        text = assemble(low)
    while len(text.encode()) > max(budget, locals_budget or 0) and shown:
        shown.pop()
        hidden += 1
        text = assemble(0 if r.output else None)
    return text


def _output_lines(o: Output, limit: int | None) -> list[str]:
    """The output section, then the logpoints' (when apart); with ``limit``, only the last ``limit`` bytes of
    them together, the logpoints' lines kept first."""
    logged = (o.logpoints or "").encode()
    logged_limit = None if limit is None else min(len(logged), limit)
    start = o.earlier_cursor if o.earlier_cursor is not None else o.next_cursor - len(o.text.encode())
    lines = _tail_lines("output:", o.text, o.truncated, None if limit is None else limit - len(logged),
                        f"debug_output(cursor={start})") if o.text or o.logpoints is None else []
    if o.logpoints is not None:
        lines += _tail_lines("logpoints:", o.logpoints, o.logpoints_truncated, logged_limit,
                             f'debug_output(stream="logpoints", cursor={o.logpoints_cursor})')
    return lines


def _tail_lines(title: str, text: str, truncated: int, limit: int | None, earlier: str) -> list[str]:
    """A section of text; with ``limit``, its last ``limit`` bytes, saying how to read what was left out."""
    data = text.encode()
    kept = data if limit is None or len(data) <= limit else data[len(data) - max(0, limit):]
    if len(kept) < len(data) and 0 <= kept.find(b"\n") < len(kept) - 1:
        kept = kept[kept.find(b"\n") + 1:]  # from a line's start
    body = kept.decode(errors="ignore")
    skipped = truncated + len(data) - len(body.encode())
    lines = [title]
    if skipped:
        lines.append(f"  … {skipped} earlier bytes: {earlier}")
    if body.strip("\n"):
        lines.append(_indent(body.rstrip("\n")))
    return lines


def _report_head(r: StopReport, base: str | None) -> str:
    head = f"[{r.session_id}] {r.state.value}"
    if r.state == State.stopped:
        head += f" ({r.reason}"
        if r.description and r.description != r.reason:
            head += f": {r.description}"
        head += ")"
        if r.location:
            loc = r.location
            head += f" at {_where(loc.file, loc.line, base)} in {loc.function or '?'}"
        if r.thread_id is not None:
            head += f", thread {r.thread_id}" + (f" ({r.thread_name})" if r.thread_name else "")
    elif r.state == State.exited:
        head += f" with code {r.exit_code}" if r.exit_code is not None or not r.description else f" ({r.description})"
    elif r.timed_out:
        head += " (still running at the deadline: debug_pause to interrupt, or debug_continue to wait more)"
    return head


def deadlock_line(cycle: str) -> str:
    """A deadlock's sentence ("deadlock: thread 2 … holds …"), its first word in capitals to stand out."""
    return "DEADLOCK" + cycle.removeprefix("deadlock") if cycle.startswith("deadlock") else f"DEADLOCK: {cycle}"


def test_line(t: TestResult) -> str:
    took = f" in {t.seconds:.2f} s" if t.seconds is not None else ""
    line = f"test {t.name} ({t.runner}): {t.outcome}{took}" + (f": {t.summary}" if t.summary else "")
    if t.closest:
        line += f"\nclosest: {', '.join(t.closest)}"
    return line


def _indent(text: str, prefix: str = "  ") -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


def breakpoint_line(b: BreakpointInfo, base: str | None = None) -> str:
    if b.kind == "function":
        where = f"function {b.function}"
    elif b.kind == "data":
        where = f"watch {b.watch} ({b.access})"
    else:
        where = _where(b.file, b.line, base)
        if b.actual_line and b.actual_line != b.line:
            where += f" (moved to line {b.actual_line})"
    extra = []
    if b.condition:
        extra.append(f"if {b.condition}")
    if b.hit_condition:
        extra.append(f"hits {b.hit_condition}")
    if b.log_message:
        extra.append(f"log {b.log_message!r}")
    state = "verified" if b.verified else "pending"
    if b.message:
        state += f": {b.message}"
    tail = f" [{', '.join(extra)}]" if extra else ""
    return f"#{b.id} {where}{tail} — {state}, {b.hits} hits"


def breakpoint_list(r: BreakpointList, base: str | None = None) -> str:
    lines = []
    if r.total is not None:
        shown = f"#{r.breakpoints[0].id}–#{r.breakpoints[-1].id}" if r.breakpoints else "none"
        lines.append(f"{r.total} breakpoints, {shown} shown (from {r.start or 0}): {r.by_file}")
    lines += [breakpoint_line(b, base) for b in r.breakpoints] or ([] if r.total else ["no breakpoints"])
    if r.more:
        lines.append(f"… {(r.total or 0) - (r.start or 0) - len(r.breakpoints)} more: {r.more}")
    lines.append(f"exceptions: {', '.join(r.exception_filters) or 'none'}")
    return "\n".join(lines)


def stack(r: StackResult, base: str | None = None) -> str:
    lines = [deadlock_line(cycle) for cycle in r.deadlocks or []]
    for t in r.threads:
        same = ""
        if t.same:
            ids = ", ".join(map(str, t.same_ids or []))
            same = f" and {t.same:,} more with these frames ({ids}{', …' if t.same > len(t.same_ids or []) else ''})"
        current = " (current)" if r.current_thread is not None and t.thread_id == r.current_thread else ""
        lines.append(f"thread {t.thread_id} {t.name}".rstrip() + current + same + ":")
        if t.locks is not None:
            lines.append(f"  {lock_line(t.locks)}")
        for f in t.frames:
            where = _where(f.file, f.line, base)
            lines.append(f"  {f'#{f.index}' if f.index >= 0 else '(above #0)'} {f.function} at {where}")
        for a in t.async_frames or []:
            if a.via:
                lines.append(f"  — {a.via} — (async callers: listed, not selectable)")
            lines.append(f"     {a.function} at {_where(a.file, a.line, base)}")
    if r.tasks:
        lines.append(f"pending tasks ({len(r.tasks)}):")
        for task in r.tasks:
            chain = " → ".join(f"{f.function} at {_where(f.file, f.line, base)}" for f in task.frames or [])
            lines.append(f"  {task.name}: awaits {task.awaiting}" + (f"; {chain}" if chain else ""))
    if r.more:
        lines.append(r.more)
    return "\n".join(lines)


def lock_line(locks: LockState) -> str:
    """What a thread holds and waits for, in a line."""
    said = [locks.state] if locks.state else []
    if locks.holds:
        more = f" and {locks.holds_more} more" if locks.holds_more else ""
        said.append(f"holds {', '.join(locks.holds)}{more}")
    if locks.waits_for:
        owner = f" (held by thread {locks.owner})" if locks.owner is not None else " (owner not recorded)"
        said.append(f"waits for {locks.waits_for}{owner}")
    return "; ".join(said) or "no locks"


def variables(r: VariablesResult) -> str:
    head = f"{r.scope or f'ref {r.ref}'}"
    if r.total is not None:
        head += f" ({r.total} items" + (f", from {r.start}" if r.start else "") + ")"
    if r.ref is not None and r.scope:
        head += f" [ref={r.ref}]"
    lines = [head + ":"]
    lines.extend(var_line(v) for v in r.variables)
    if not r.variables:
        lines.append("  (none)")
    if r.more:
        lines.append(f"  … {r.more}")
    if r.scopes and len(r.scopes) > 1:
        lines.append(f"scopes: {', '.join(r.scopes)}")
    return "\n".join(lines)


def evaluate(r: EvaluateResult) -> str:
    kind = f" ({r.type})" if r.type else ""
    text = f"{r.expression}{kind} = {r.value}"
    if r.ref:
        text += f"\nexpand: debug_variables(ref={r.ref})"
    if r.truncated:
        text += "\n(value truncated; expand it with debug_variables(ref=…) or evaluate a part of it)"
    return text


def sessions(r: SessionList, bases: Mapping[str, str | None] | None = None) -> str:
    """One line per session; a location's path relative to that session's ``bases`` entry (its cwd), as its
    stop reports show it."""
    if not r.sessions:
        return "no sessions"
    lines = []
    for s in r.sessions:
        mark = "*" if s.session_id == r.current else " "
        line = f"{mark}{s.session_id} {s.state.value} {s.language}/{s.adapter} {s.target}"
        if s.pid is not None and f"pid {s.pid}" not in s.target:
            line += f" (pid {s.pid})"
        if s.location and s.location.file:
            line += f" at {_where(s.location.file, s.location.line, (bases or {}).get(s.session_id))}"
        if s.exit_code is not None:
            line += f" exit {s.exit_code}"
        if s.cause:
            line += f" ({s.cause})"
        lines.append(line)
    return "\n".join(lines)


def source(r: SourceResult, base: str | None = None) -> str:
    return f"{_short(r.file, base)} lines {r.start}-{r.end} of {r.total_lines}:\n{r.text}"


def output(r: OutputResult) -> str:
    lines = []
    if r.dropped:
        lines.append(f"({r.dropped} older bytes were dropped by the retention limit)")
    lines.append(r.text if r.text else "(no output)")
    lines.append(f"next_cursor={r.next_cursor}" + (" (more available)" if r.more else "") + f"; {r.state.value}")
    return "\n".join(lines)


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def call_trace(c: CallTrace, head: str) -> list[str]:
    """A call trace's summary, then its rows (how to read those left out between the first and the last)."""
    lines = [head] + ([f"note: {c.note}"] if c.note else []) + [f"  {line}" for line in c.summary]
    more = [f"  … {_counted(c.skipped, 'more row')}: debug_output(stream=\"trace\", "
            f"cursor={c.more_cursor})"] \
        if c.skipped and c.more_cursor is not None else []
    if c.rows:
        lines.append("calls:")
        lines.extend(f"  {row}" for row in c.rows)
        lines.extend(more if c.last_rows else [])
        lines.extend(f"  {row}" for row in c.last_rows or [])
    if c.raised_rows:
        lines.append("raised:")
        lines.extend(f"  {row}" for row in c.raised_rows)
    return lines if c.last_rows else lines + more


def _report_first(report: StopReport, traced: int, base: str | None) -> str:
    """The report of the stop that ended a trace, before the trace's ``traced`` bytes take their room: the stop's
    own facts (where, why, source, locals) whole within a report's budget, its output in what the trace leaves."""
    return stop_report(report, budget=max(REPORT_BYTES, REPORT_BUDGET - traced), base=base,
                       locals_budget=REPORT_BUDGET)


def fitted_trace(c: CallTrace, head: str, budget: int) -> list[str]:
    """A call trace's lines within ``budget`` bytes (at least its head, its first summary line and where the rest
    is): its last rows give way first, then its first rows from the last (the line that says how to read those
    left out points at the first one gone), its raised rows, then its summary's lines after the first."""
    def fits(c: CallTrace) -> bool:
        return len("\n".join(call_trace(c, head)).encode()) <= budget

    cursors = c.row_cursors or []
    while not fits(c):
        if c.last_rows:
            c = c.model_copy(update={"last_rows": None, "skipped": c.skipped + len(c.last_rows)})
        elif c.rows and len(cursors) >= len(c.rows):
            c = c.model_copy(update={"rows": c.rows[:-1], "skipped": c.skipped + 1,
                                     "more_cursor": cursors[len(c.rows) - 1]})
        elif c.raised_rows and c.more_cursor is not None:
            c = c.model_copy(update={"raised_rows": c.raised_rows[:-1] or None, "skipped": c.skipped + 1})
        elif len(listed := [line for line in c.summary if not line.startswith("… and ")]) > 1:
            more = len(listed) - 1 + sum(int(m[1]) for line in c.summary if (m := _MORE.match(line)))
            c = c.model_copy(update={"summary": [listed[0], f"… and {more} more (every row: "
                                                            f"debug_output(stream=\"trace\"))"]})
        else:
            break
    return call_trace(c, head)


def trace(r: TraceResult, base: str | None = None) -> str:
    """The summary first (what each expression took, with counts; each thread's hits when several; where the
    `where` condition held), then the first rows, how to read those between, the last ones, the calls recorded in
    the same run, then the report (in what is left of the budget). Rows name their thread when several threads
    hit."""
    calls = r.calls
    if calls is not None and not r.hits and r.total_hits == calls.calls + calls.raised:  # only calls were traced
        head = (f"[{r.session_id}] {_counted(calls.calls, 'call')}, {calls.raised} raised "
                f"({r.stopped_because}); program {r.state.value}")
        if r.report is None:
            return "\n".join(call_trace(calls, head))
        report = _report_first(r.report, len("\n".join(call_trace(calls, head)).encode()) + 1, base)
        return "\n".join([*fitted_trace(calls, head, REPORT_BUDGET - len(report.encode()) - 1), report])
    traced = [] if calls is None else call_trace(
        calls, f"also recorded: {_counted(calls.calls, 'call')}, {calls.raised} raised")
    labels = row_labels([h.file for h in r.hits + (r.last_hits or [])], base)
    several = r.threads is not None

    def row(h: TraceHit) -> str:
        return "  " + clip(row_text(labels[h.file], h.line, h.values, h.thread if several else None), ROW_CHARS)[0]

    def assemble(last: list[TraceHit]) -> tuple[list[str], str]:
        lines = [f"[{r.session_id}] {_counted(r.total_hits, 'hit')} ({r.stopped_because}); program {r.state.value}"]
        if r.note:
            lines.append(f"note: {r.note}")
        lines.extend(f"{e}: {v}" for e, v in (r.values or {}).items())
        lines.extend(r.threads or [])
        if r.where:
            lines.append(r.where)
        if len(lines) > 1 + bool(r.note) and r.hits:
            lines.append("rows:")
        lines.extend(row(h) for h in r.hits)
        skipped = r.skipped + len(r.last_hits or []) - len(last)
        if skipped and r.more_cursor is not None:
            lines.append(f"  … {skipped} more rows: debug_output(stream=\"trace\", cursor={r.more_cursor})")
        lines.extend(row(h) for h in last)
        lines.extend(traced)
        report = ""
        if r.report is not None:
            used = len("\n".join(lines).encode()) + 1  # and the line break before the report
            report = stop_report(r.report, budget=max(REPORT_BYTES, REPORT_BUDGET - used), base=base)
        return lines + ([report] if report else []), report

    lines, report = assemble(r.last_hits or [])
    if r.last_hits and r.report is not None:
        fewer, whole = assemble([])
        if whole != report:  # the last rows give way to the report's locals and output (the log has every row)
            lines = fewer
    return "\n".join(lines)


def memory(r: MemoryResult) -> str:
    head = f"{r.count} bytes at {r.address}"
    if r.written is not None:
        head = f"wrote {r.written} bytes; " + head
    lines = [head + ":", r.dump] if r.dump else [head]
    if r.unreadable:
        lines.append(f"({r.unreadable} more bytes unreadable)")
    return "\n".join(lines)


def disassembly(r: DisassemblyResult) -> str:
    lines = []
    for i in r.instructions:
        mark = "=>" if i.current else "  "
        symbol = f" <{i.symbol}>" if i.symbol else ""
        lines.append(f"{mark} {i.address}{symbol}: {i.text}")
    return "\n".join(lines) if lines else "(no instructions)"


def command(r: CommandResult) -> str:
    text = r.output.rstrip("\n") or "(no output)"
    return text + ("\n(output truncated)" if r.truncated else "")
