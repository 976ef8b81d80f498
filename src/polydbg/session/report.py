"""The StopReport: where and why the program stopped, the source around it, its locals, the
exception, and the output since the last report — everything the agent needs next, in one answer.

A report is built for one stop scope. If the program moves while the report is being read, it is
built again for the new state (a few times at most), so a report never mixes two stops; the new
output is taken only once the rest is settled.
"""

from __future__ import annotations

import os

from polydbg.backends.base import Frame, FrameRef, StopEvent
from polydbg.errors import AdapterError, ProgramMovedError, SessionEndedError, UsageError
from polydbg.session import source as src
from polydbg.session.core import SessionCore
from polydbg.session.inspection import Inspector, clip
from polydbg.session.model import ExceptionInfo, Location, Output, State, StopReport
from polydbg.session.output import OutputTail
from polydbg.session.scope import StopScope

REPORT_OUTPUT_BYTES = 480
REPORT_SOURCE_CONTEXT = 3
REPORT_LINE_CHARS = 100
PAUSE_LOOK = 12  # frames looked through for one with source, below a pause in library code
REBUILDS = 3  # a program that keeps stopping and resuming gets a report without stop details after this
# stops whose report says which threads wait for each other's locks: a pause (a program that hangs), and an
# exception (a runtime that found its threads deadlocked: Go's "all goroutines are asleep")
DEADLOCK_REASONS = frozenset({"pause", "exception"})
_LOGPOINTS = frozenset({"logpoints"})
MESSAGE_CHARS = 300  # an exception's message in a report
_DIFF_MARKS = ("- ", "+ ", "? ", "-  ", "+  ")  # a changed line of a diff (difflib's ndiff, jest's, pytest's)


def exception_message(message: str) -> str:
    """An exception's message, cut to ``MESSAGE_CHARS``. A long one that holds a diff (an assertion's on two large
    values: unittest's ``assertEqual`` of two dicts of 300 keys) keeps its first line and the diff's changed lines
    with a line either side: cut at its start it showed the first of 300 equal keys, and not the one that differed."""
    if len(message) <= MESSAGE_CHARS:
        return message
    lines = message.splitlines()
    changed = [n for n, line in enumerate(lines) if n and line.lstrip(" E>").startswith(_DIFF_MARKS)]
    if not changed or len("\n".join(lines[:changed[-1] + 1])) < MESSAGE_CHARS:  # the cut keeps them all
        return clip(message, MESSAGE_CHARS)[0]
    kept = sorted({n for at in changed for n in (at - 1, at, at + 1) if 0 < n < len(lines)})
    parts, last = [clip(lines[0], MESSAGE_CHARS // 2)[0]], 0
    for n in kept:
        if n > last + 1:
            parts.append(f"… {n - last - 1} lines")
        parts.append(lines[n])
        last = n
    if last < len(lines) - 1:
        parts.append(f"… {len(lines) - 1 - last} lines")
    return clip("\n".join(parts), MESSAGE_CHARS)[0]
_NOT_LOGPOINTS = frozenset({"stdout", "stderr", "console"})


class Reporter:
    def __init__(self, core: SessionCore, inspector: Inspector) -> None:
        self.core = core
        self.inspector = inspector

    async def report(self, timed_out: bool = False, note: str | None = None) -> StopReport:
        """The StopReport for the current state."""
        life = self.core.life
        report = StopReport(session_id=self.core.id, state=life.state, timed_out=timed_out, note=note)
        for _attempt in range(REBUILDS):
            report = StopReport(session_id=self.core.id, state=life.state, timed_out=timed_out, note=note)
            scope = life.scope
            if life.state != State.stopped or scope is None:
                break
            try:
                await self._stop_details(report, scope)
            except (ProgramMovedError, SessionEndedError):
                continue  # report the state it moved to (an ended session reports how it ended)
            scope.reported = True
            break
        else:
            report.note = _joined(note, "the program kept stopping and resuming while this report was read")
        if report.state == State.exited:
            report.exit_code = life.exit_code
            report.description = life.cause  # what ended it when no exit code did (a signal)
            if self.core.test is not None:
                report.test = await self.core.test.result(life.exit_code, self.core.output)
        elif report.state == State.terminated:
            report.note = _joined(report.note, life.cause)
        report.output = self._output_since_report()
        return report

    async def _stop_details(self, report: StopReport, scope: StopScope) -> None:
        stop = scope.stop
        report.reason = stop.reason
        report.description = stop.text or stop.description
        report.thread_id = scope.thread
        report.thread_name = stop.thread_name if scope.thread == stop.thread_id else None
        try:
            frame, top = await self.inspector.frame(scope, 0)
            if stop.reason == "pause" and not (top.file and os.path.isfile(top.file)):
                frame, top = await self._own_frame(scope, frame, top, report)
            report.location = Location(file=top.file, line=top.line, function=top.name)
            near: set[str] = set()
            if top.file and top.line and os.path.isfile(top.file):
                marks = {b.actual_line or b.line for b in self.core.breakpoints.in_file(top.file) if not b.internal}
                report.source = src.excerpt(top.file, top.line, REPORT_SOURCE_CONTEXT, top.line,
                                            {m for m in marks if m}, REPORT_LINE_CHARS)[0]
                near = src.names_near(top.file, top.line)
            self._count_hit_by_location(scope, top.file, top.line)
            report.note = _joined(report.note, self._removed_since(stop, top.file, top.line))
            report.locals, report.locals_more, returned = await self.inspector.report_locals(scope, frame, near)
            if stop.reason == "step":
                report.returned = returned or None
            if stop.reason == "exception" and stop.thread_id is not None:
                detail = await self.core.read(scope, self.core.backend.exception_info(stop.thread_id))
                if detail is not None:
                    report.exception = ExceptionInfo(type=detail.type, message=exception_message(detail.message),
                                                     details=[clip(line, 200)[0] for line in detail.details[:12]]
                                                     or None)
            if stop.reason in DEADLOCK_REASONS:
                report.deadlocks = await self.inspector.deadlocks(scope) or None
        except (AdapterError, UsageError) as exc:
            self.core.life.check(scope)
            report.note = _joined(report.note, f"could not read the stop details: {exc}")

    async def _own_frame(self, scope: StopScope, frame: FrameRef, top: Frame,
                         report: StopReport) -> tuple[FrameRef, Frame]:
        """A pause lands wherever the threads are, mostly in the runtime's or the C library's code (a futex wait,
        ``Object.wait``): the report shows the first frame whose source is here, and says which it is, so its
        locals are the program's, not the library's."""
        for index in range(1, PAUSE_LOOK):
            try:
                ref, candidate = await self.inspector.frame(scope, index)
            except UsageError:  # the stack ends before a frame with source
                break
            if candidate.file and os.path.isfile(candidate.file):
                report.note = _joined(report.note, f"paused in {top.name} (no source here); shown: frame {index}, "
                                                   f"{candidate.name}: debug_variables(frame_id={index}) reads it")
                return ref, candidate
        return frame, top

    def _count_hit_by_location(self, scope: StopScope, file: str | None, line: int | None) -> None:
        """Hit counts for debuggers that do not name the breakpoint in the stop event."""
        if scope.hits_counted or scope.stop.reason != "breakpoint":
            return
        scope.hits_counted = True
        if file and line:
            for bp in self.core.breakpoints.at(file, line):
                bp.hits += 1

    def _removed_since(self, stop: StopEvent, file: str | None, line: int | None) -> str | None:
        """Why a breakpoint stop is where no breakpoint is set: it was made before the agent removed the
        breakpoint, and is shown only now (another process's stop was shown meanwhile, and this one waited)."""
        store = self.core.breakpoints
        if not stop.held or stop.reason != "breakpoint" or any(i in store.items for i in stop.hit_breakpoint_ids):
            return None
        if file and line and any(not bp.internal for bp in store.at(file, line)):
            return None
        removed = store.retired_at(file, line, stop.hit_breakpoint_ids)
        if not removed:
            return None
        ids = ", ".join(str(bp.id) for bp in removed)
        who = stop.thread_name or "the program"
        return (f"{who} stopped here at breakpoint {ids} before it was removed; its stop waited while another "
                "was shown. debug_continue resumes it")

    def _output_since_report(self) -> Output | None:
        output = self.core.output
        since = self.core.report_cursor
        total = output.total
        if total == since:
            return None
        logged = output.tail(since, REPORT_OUTPUT_BYTES, _LOGPOINTS)
        if logged is not None:  # each tail apart: the program's output does not cut the logpoints' lines away
            rest = output.tail(since, REPORT_OUTPUT_BYTES, _NOT_LOGPOINTS) or OutputTail("", 0, total)
            self.core.report_cursor = total
            return Output(text=rest.text, next_cursor=total, truncated=rest.skipped, earlier_cursor=rest.first,
                          logpoints=logged.text,
                          logpoints_truncated=logged.skipped, logpoints_cursor=logged.first)
        start = max(since, output.first_cursor, total - REPORT_OUTPUT_BYTES)
        chunk = output.read(start, REPORT_OUTPUT_BYTES)
        skipped = start - since
        earlier = max(since, output.first_cursor) if skipped else None
        self.core.report_cursor = total
        return Output(text=chunk.text, next_cursor=chunk.next_cursor, truncated=skipped, earlier_cursor=earlier)


def _joined(first: str | None, second: str | None) -> str | None:
    if first and second:
        return f"{first}; {second}"
    return first or second
