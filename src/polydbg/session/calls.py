"""Call traces and raised-exception logs: the backend's recorders armed, the program run, the records answered.

Two ways in. ``debug_trace(functions=…)`` on a stopped or running program arms the recorders
(``Backend.record_calls``, ``Backend.record_raised``: ``backends/recording.py``), resumes, and answers once
``max_hits`` records came, the program stopped, it ended or the deadline passed. A launch with ``trace`` arms them
while the debugger is configured, before the program's first line, so a test run is recorded whole: the launch's
answer (its first stop, the exit, the test's verdict) carries what was recorded up to it, and the recording ends
there. Either way the recorders are stopped before the answer, whatever ended the trace, and what they say (a
function never reached, records they dropped) is in its note. Among the functions, ``raised`` names the log of
every exception the user's code raised.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable

from polydbg.backends.base import Backend, LaunchSpec
from polydbg.backends.recording import CallSpec, Recorder
from polydbg.errors import AdapterError, SessionEndedError, SessionError, UsageError
from polydbg.session.calllog import CallLog
from polydbg.session.core import Progress, SessionCore
from polydbg.session.execution import Execution
from polydbg.session.inspection import Inspector, joined
from polydbg.session.model import CallTrace, State, StopReport, TraceResult
from polydbg.session.report import Reporter

log = logging.getLogger(__name__)

RAISED = "raised"  # among the functions: every exception the user's code raises
MAX_FUNCTIONS = 32
FUNCTION_CHARS = 300
LAUNCH_MAX_CALLS = 10_000  # a launch's trace records this many at most (its answer summarises them all)
UNDER_WAY_FRAMES = 50  # the stopped thread's frames read for a named function's call under way


def _last_name(name: str) -> str:
    """A function's own name, the last word of how a debugger or the user writes it, its parameters left out."""
    words = re.findall(r"\w+", re.sub(r"\([^()]*\)$", "", name.strip()))
    return words[-1] if words else ""


def split_functions(functions: list[str]) -> tuple[tuple[str, ...], bool]:
    """The functions to record, without repeats, and whether ``raised`` was among them; bad names refused."""
    names = [f.strip() for f in functions]
    wanted = tuple(dict.fromkeys(n for n in names if n and n != RAISED))
    if len(wanted) > MAX_FUNCTIONS:
        raise UsageError(f"a trace records the calls of at most {MAX_FUNCTIONS} functions ({len(wanted)} were "
                         "passed); trace fewer at a time, or record their callees with depth")
    for name in wanted:
        if len(name) > FUNCTION_CHARS or any(char in name for char in "\0\n\r"):
            raise UsageError(f"{name[:60]!r} is not a function's name; pass names such as parse_date, "
                             "dates.parse_date, Parser.parse or dates.py:parse_date")
    if not wanted and RAISED not in names:
        raise UsageError("pass at least one function's name (or \"raised\": every exception raised)")
    return wanted, RAISED in names


class Recording:
    """One trace's recorders and the log their records go to."""

    def __init__(self, core: SessionCore, functions: tuple[str, ...], raised: bool, depth: int,
                 max_records: int) -> None:
        self.core = core
        self.spec = CallSpec(functions, depth, max_records)
        self.raised = raised
        self.log = CallLog(core.trace_log, core.cwd, max_records, both=bool(functions) and raised)
        self.recorders: list[Recorder] = []
        self.notes: list[str] = []
        self.bounded: asyncio.Task[None] | None = None
        self.under_way: list[str] = []  # the functions named whose call the stopped thread was in as it began
        core.traces += 1
        what = ", ".join([*functions, *([RAISED] if raised else [])])
        core.trace_log.append("trace", f"trace {core.traces}: calls of {what[:400]}"
                                       + (f" and their callees to depth {depth}" if depth and functions else "")
                                       + "\n")

    async def arm(self, backend: Backend) -> None:
        """Arm the recorders; one that fails disarms those already armed."""
        try:
            if self.spec.functions:
                self.recorders.append(await backend.record_calls(self.spec, self.log.call))
            if self.raised:
                try:
                    self.recorders.append(await backend.record_raised(self.log.exception))
                except UsageError as exc:
                    if not self.spec.functions:
                        raise
                    self.notes.append(f"exceptions raised not recorded: {exc}")  # the calls still are
        except BaseException:
            await self.stop()
            raise

    def stop_at_bound(self) -> None:
        """Disarm as soon as ``max_records`` came (the program runs on without the recorders' cost)."""
        async def at_bound() -> None:
            await self.log.done.wait()
            await self.stop()
        self.bounded = asyncio.ensure_future(at_bound())

    async def stop(self) -> None:
        """Disarm every recorder (their pending records delivered), keeping their notes."""
        if self.bounded is not None and self.bounded is not asyncio.current_task():
            self.bounded.cancel()
        recorders, self.recorders = self.recorders, []
        for recorder in recorders:
            try:
                self.notes.extend(await recorder.stop())
            except (AdapterError, SessionError) as exc:
                self.notes.append(f"the recording could not be stopped cleanly: {exc}")

    def result(self) -> CallTrace:
        self.log.flush()
        bound = (f"recorded the first {self.log.total} (max_hits: pass a larger one for more)"
                 if self.log.done.is_set() else None)
        under_way = (f"{', '.join(self.under_way)} {'was' if len(self.under_way) == 1 else 'were'} on the stopped "
                     "thread's stack as the trace began: a call under way is not recorded, nor its callees; begin the "
                     "trace before the call (at a breakpoint on its caller's line, or with debug_launch(trace=[…]))"
                     ) if self.under_way else None
        return self.log.result(joined(bound, *self.notes, under_way))


class CallTracer:
    def __init__(self, core: SessionCore, execution: Execution, inspector: Inspector, reporter: Reporter) -> None:
        self.core = core
        self.execution = execution
        self.inspector = inspector
        self.reporter = reporter
        self.at_start: Recording | None = None  # a launch's trace, armed as the debugger is configured

    # -- a launch's trace -----------------------------------------------------------------------------------

    def prepare_launch(self, functions: list[str]) -> None:
        """Record ``functions`` from the program's first line until the launch's answer."""
        names, raised = split_functions(functions)
        self.at_start = Recording(self.core, names, raised, 0, LAUNCH_MAX_CALLS)

    async def arm_at_start(self) -> None:
        """Called as the debugger is configured (before the program runs): the launch's recorders armed."""
        recording = self.at_start
        if recording is not None and not recording.recorders:
            await recording.arm(self.core.connected_backend())
            recording.stop_at_bound()

    async def launched(self, report: StopReport) -> StopReport:
        """The launch's first answer, with what was recorded up to it; the recording ends here."""
        recording, self.at_start = self.at_start, None
        if recording is None:
            return report
        spec = self.core.spec
        if isinstance(spec, LaunchSpec):  # a restart records nothing: its backend need not prepare
            self.core.spec = spec._replace(recorded=False)
        await recording.stop()
        return report.model_copy(update={"trace": recording.result()})

    def drop_launch(self) -> None:
        """The launch failed: its recorders end with its debugger."""
        if self.at_start is not None and self.at_start.bounded is not None:
            self.at_start.bounded.cancel()
        self.at_start = None

    # -- debug_trace(functions=…) -----------------------------------------------------------------------------

    async def trace(self, functions: list[str], depth: int, max_hits: int, timeout_s: float,
                    progress: Progress | None) -> TraceResult:
        core, life = self.core, self.core.life
        names, raised = split_functions(functions)
        if life.state not in (State.stopped, State.running):
            raise SessionEndedError(life.ended_text())
        if self.execution.unseen_stop():
            unseen = await self.execution.report_unseen("nothing was recorded and nothing was resumed")
            return TraceResult(session_id=core.id, hits=[], total_hits=0, stopped_because="stopped",
                               state=life.state, report=unseen)
        under_way = await self._under_way(names) if life.state == State.stopped else []
        recording = Recording(core, names, raised, depth, max_hits)
        recording.under_way = under_way
        await core.call(recording.arm(core.backend))
        try:
            since = await self.execution.run_on()
            reason = await self._wait(recording, since, timeout_s, progress)
            await self.execution.settle_end()  # the records in transit at an exit
        finally:
            await recording.stop()
        report = await self.reporter.report() if life.state != State.running else None
        calls = recording.result()
        return TraceResult(session_id=core.id, hits=[], total_hits=recording.log.total, stopped_because=reason,
                           state=life.state, report=report, calls=calls)

    async def _under_way(self, names: tuple[str, ...]) -> list[str]:
        """The functions named whose call the stopped thread is in (its stack's first ``UNDER_WAY_FRAMES``), by
        their last name (``outer``, ``Version.Set`` in ``semver.(*Version).Set``, ``math_fmod(L)``): a trace begun
        there records nothing of that call, and said "never called: outer"."""
        scope = self.core.life.stopped_scope()
        thread = scope.thread or scope.stop.thread_id
        if thread is None:
            return []
        try:
            frames, _ = await self.core.read(scope, self.core.backend.stack_trace(thread, 0, UNDER_WAY_FRAMES))
        except (AdapterError, SessionError):
            return []
        running = {_last_name(frame.name) for frame in frames} - {""}
        return [name for name in names if _last_name(name) in running]

    async def beside(self, functions: list[str], depth: int,
                     trace: Callable[[], Awaitable[TraceResult]]) -> TraceResult:
        """A line trace (``trace``) with calls recorded in the same run: ``max_hits`` counts the lines' hits, the
        calls are bounded by ``LAUNCH_MAX_CALLS``."""
        names, raised = split_functions(functions)
        if self.core.life.state not in (State.stopped, State.running):
            raise SessionEndedError(self.core.life.ended_text())
        recording = Recording(self.core, names, raised, depth, LAUNCH_MAX_CALLS)
        await self.core.call(recording.arm(self.core.backend))
        try:
            result = await trace()
        finally:
            await recording.stop()
        return result.model_copy(update={"calls": recording.result()})

    async def _wait(self, recording: Recording, since: int, timeout_s: float, progress: Progress | None) -> str:
        """Until ``max_hits`` records, a stop, the program's end or the deadline: which came first."""
        life = self.core.life
        changed = asyncio.ensure_future(self.execution.wait_change(since, timeout_s, progress))
        bound = asyncio.ensure_future(recording.log.done.wait())
        try:
            await asyncio.wait({changed, bound}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (changed, bound):
                waiting.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await waiting
        if recording.log.done.is_set():
            return "max_hits"
        if life.ended:
            return str(life.state.value)
        return "stopped" if life.stops != since else "timeout"
