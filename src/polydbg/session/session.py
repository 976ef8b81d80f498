"""One debugging session: the facade the tools call.

The work is split by job — ``state`` (the lifecycle and its one transition function), ``scope``
(what is valid for one stop), ``bpsync`` (breakpoints kept in step with the debugger),
``execution`` (start, resume, step, pause, restart, end; the backend's events), ``inspection``
(stacks, variables, evaluation), ``report`` (the StopReport), ``native`` (memory, disassembly,
registers, watchpoints, raw commands) and ``trace`` (tracepoints) — around one ``SessionCore``.

An inspection that finds the program moved while it was reading answers ``ProgramMovedError``
carrying the report of where the program is now, never another stop's data. The facade applies the
security policy (``polydbg.policy``) to what the agent passes — files against the roots, expressions
against raw-command escapes, raw commands, memory writes — before any of it reaches the debugger.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from polydbg.backends.base import AttachSpec, BackendFactory, LaunchSpec, StepKind
from polydbg.errors import AdapterError, ProgramMovedError, SessionError, UsageError
from polydbg.policy import Policy
from polydbg.session import source as src
from polydbg.session.bplist import listing
from polydbg.session.bpsync import BreakpointSync
from polydbg.session.breakpoints import Breakpoint, BreakpointStore
from polydbg.session.calls import CallTracer
from polydbg.session.core import Progress, SessionCore
from polydbg.session.execution import Execution
from polydbg.session.inspection import Inspector
from polydbg.session.model import (
    Ack,
    BreakpointInfo,
    BreakpointList,
    CommandResult,
    DisassemblyResult,
    EvaluateResult,
    Location,
    MemoryResult,
    SourceResult,
    StackResult,
    State,
    StopReport,
    TraceResult,
    Var,
    VariablesResult,
)
from polydbg.session.native import Native
from polydbg.session.output import OutputBuffer, OutputSlice, whole_lines
from polydbg.session.report import Reporter
from polydbg.session.timetravel import RecordRequest, TimeTravel
from polydbg.session.trace import Tracer

T = TypeVar("T")

READ_MAX = 30_000  # bytes of output one answer holds: with its structured copy, an answer stays under 64 KB

__all__ = ["Progress", "Session"]


class Session:
    def __init__(self, session_id: str, language: str, adapter: str, factory: BackendFactory,
                 target: str, cwd: str | None, policy: Policy | None = None) -> None:
        self.core = core = SessionCore(session_id, language, adapter, factory, target, cwd)
        self.policy = policy if policy is not None else Policy()  # the default allows everything (stdio's)
        self.reveal: frozenset[str] = frozenset()  # names whose values answers show, secret or not (secrets.py)
        self.bpsync = BreakpointSync(core)
        self.inspector = Inspector(core)
        self.reporter = Reporter(core, self.inspector)
        self.execution = Execution(core, self.bpsync, self.inspector, self.reporter)
        self.native = Native(core, self.inspector, self.bpsync)
        self.tracer = Tracer(core, self.bpsync, self.execution, self.inspector, self.reporter)
        self.calls = CallTracer(core, self.execution, self.inspector, self.reporter)
        self.time_travel = TimeTravel(core, self.execution, self.inspector, self.reporter)
        core.configure_more = self.calls.arm_at_start

    # -- identity and state ---------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return self.core.id

    @property
    def language(self) -> str:
        return self.core.language

    @property
    def adapter(self) -> str:
        return self.core.adapter

    @property
    def target(self) -> str:
        return self.core.target

    @property
    def cwd(self) -> str | None:
        return self.core.cwd

    @property
    def state(self) -> State:
        return self.core.life.state

    @property
    def cause(self) -> str | None:
        """What ended it, or why its state is unconfirmed (a request to move it went unanswered)."""
        life = self.core.life
        return f"unconfirmed: {life.unconfirmed}" if life.unconfirmed else life.cause

    @property
    def program_pid(self) -> int | None:
        """The program's process id, once its debugger has said it."""
        backend = self.core.backend_slot
        return backend.program_pid if backend is not None else None

    @property
    def exit_code(self) -> int | None:
        return self.core.life.exit_code

    @property
    def output(self) -> OutputBuffer:
        return self.core.output

    def read_output(self, cursor: int | None, max_bytes: int, stream: str) -> OutputSlice:
        """Output from ``cursor``: every stream (``all``), one of them, or the traces' rows (``trace``); at most
        ``READ_MAX`` bytes, whatever was asked (the slice says more is available)."""
        max_bytes = min(max_bytes, READ_MAX)
        if stream == "trace":
            return whole_lines(self.core.trace_log.read(cursor, max_bytes))
        return self.core.output.read(cursor, max_bytes, None if stream == "all" else frozenset({stream}))

    @property
    def breakpoints(self) -> BreakpointStore:
        return self.core.breakpoints

    @property
    def exception_filters(self) -> list[str]:
        return self.core.exception_filters

    @exception_filters.setter
    def exception_filters(self, filters: list[str]) -> None:
        self.core.exception_filters = list(filters)

    @property
    def last_used(self) -> float:
        return self.core.last_used

    def touch(self) -> None:
        self.core.last_used = time.monotonic()

    def resolve_path(self, file: str) -> str:
        return self.core.resolve_path(file)

    async def unseen_stop_report(self) -> StopReport | None:
        """The report of a stop no answer has shown yet (it happened between calls), once; else None.
        Inspection tools put it in front of their answer, so a stop is never silently skipped."""
        if not self.execution.unseen_stop():
            return None
        return await self.report(note="the program stopped here after the last answer")

    async def _inspect(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run an inspection; if the program moved meanwhile, the error carries the new report."""
        try:
            return await work()
        except ProgramMovedError as exc:
            exc.report = await self.report()
            raise

    # -- lifecycle and execution ----------------------------------------------------------------------

    async def start(self, spec: LaunchSpec | AttachSpec, timeout_s: float, progress: Progress | None) -> StopReport:
        """The first stop (or the exit), with what a launch's trace recorded up to it."""
        try:
            report = await self.execution.start(spec, timeout_s, progress)
        except BaseException:
            self.calls.drop_launch()
            raise
        return await self.calls.launched(report)

    async def resume(self, thread_id: int | None, to: tuple[str, int | str] | None, timeout_s: float,
                     progress: Progress | None, reverse: bool = False, reload: bool = False) -> StopReport:
        place = None
        if to is not None:
            path = self.resolve_path(to[0])
            self.policy.check_path(path, "run-to file")
            place = (to[0], src.line_number(path, to[1]))
        return await self.execution.resume(thread_id, place, timeout_s, progress, reverse, reload)

    async def step(self, kind: StepKind, count: int, thread_id: int | None, timeout_s: float,
                   progress: Progress | None, reverse: bool = False) -> StopReport:
        return await self.execution.step(kind, count, thread_id, timeout_s, progress, reverse)

    async def record(self, action: RecordRequest, checkpoint: int | None, timeout_s: float) -> Ack | StopReport:
        return await self.time_travel.control(action, checkpoint, timeout_s, self.policy.record_limit)

    async def pause(self, thread_id: int | None, timeout_s: float) -> StopReport:
        return await self.execution.pause(thread_id, timeout_s)

    async def restart(self, timeout_s: float, progress: Progress | None) -> StopReport:
        return await self.execution.restart(timeout_s, progress)

    async def terminate(self, detach: bool) -> None:
        try:
            await self.execution.terminate(detach)
        finally:
            if self.core.forwarder is not None:
                await self.core.forwarder.close()

    async def report(self, timed_out: bool = False, note: str | None = None) -> StopReport:
        return await self.reporter.report(timed_out, note)

    async def trace(self, points: Sequence[tuple[str, int | str]], expressions: list[str], max_hits: int,
                    timeout_s: float, progress: Progress | None, where: str | None = None,
                    functions: list[str] | None = None, depth: int = 0) -> TraceResult:
        """Tracepoints; with ``functions``, their calls recorded in the same run (``calls``)."""
        self.policy.check_paths((self.resolve_path(file) for file, _ in points), "trace point file")
        self.policy.check_expressions(self.adapter, *expressions, *([where] if where is not None else []),
                                      *(functions or ()))
        numbered = [(file, src.line_number(self.resolve_path(file), line)) for file, line in points]
        if functions:
            return await self.calls.beside(functions, depth, lambda: self.tracer.trace(
                numbered, expressions, max_hits, timeout_s, progress, where))
        return await self.tracer.trace(numbered, expressions, max_hits, timeout_s, progress, where)

    def trace_at_start(self, functions: list[str]) -> None:
        """Record the calls of ``functions`` (``raised``: exceptions raised) from the program's first line."""
        self.policy.check_expressions(self.adapter, *functions)
        self.calls.prepare_launch(functions)

    async def trace_calls(self, functions: list[str], depth: int, max_hits: int, timeout_s: float,
                          progress: Progress | None) -> TraceResult:
        self.policy.check_expressions(self.adapter, *functions)
        return await self.calls.trace(functions, depth, max_hits, timeout_s, progress)

    # -- breakpoints ------------------------------------------------------------------------------------

    def validate_line(self, path: str, line: int) -> None:
        self.bpsync.validate_line(path, line)

    async def add_line_breakpoint(self, file: str, line: int | str, condition: str | None = None,
                                  hit_condition: str | None = None, log_message: str | None = None,
                                  internal: bool = False) -> Breakpoint:
        """A breakpoint at ``line`` of ``file``: a number, or text on the line (``source.line_number``)."""
        path = self.resolve_path(file)
        if not internal:
            self.policy.check_path(path, "breakpoint file")
            self.policy.check_expressions(self.adapter, condition, hit_condition, log_message)
        number = src.line_number(path, line)
        return await self.bpsync.add_line(file, number, condition, hit_condition, log_message, internal)

    async def add_function_breakpoint(self, function: str, condition: str | None = None,
                                      hit_condition: str | None = None) -> Breakpoint:
        self.policy.check_expressions(self.adapter, function, condition, hit_condition)
        return await self.bpsync.add_function(function, condition, hit_condition)

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self.bpsync.set_exception_filters(filters)

    async def remove_breakpoints(self, bp_id: int | None, file: str | None, everything: bool) -> list[int]:
        return await self.bpsync.remove(bp_id, file, everything)

    def breakpoint_infos(self) -> list[BreakpointInfo]:
        return self.bpsync.infos()

    def breakpoint_list(self, start: int) -> BreakpointList:
        """A page of the agent's breakpoints (by ``start``), bounded however many there are."""
        return listing(self.id, self.breakpoints.visible(), self.exception_filters, start)

    async def watch(self, expression: str, access: str) -> Breakpoint:
        self.policy.check_expressions(self.adapter, expression)
        return await self.native.watch(expression, access)

    # -- inspection -------------------------------------------------------------------------------------

    async def source(self, file: str | None, line: int | None, context: int) -> SourceResult:
        """Numbered source around ``line`` of ``file`` (default: where the program is stopped), the current line
        and the session's breakpoints marked. A ``file`` must lie in the policy's roots unless the program is
        stopped in it."""
        location = await self.current_location()
        if file is None:
            if location is None or not location.file:
                raise UsageError(f"session {self.id} is not stopped at a source line; pass file (and line)")
            path, current = location.file, location.line
        else:
            path = src.checked_path(file, self.resolve_path)
            current = location.line if location is not None and location.file == path else None
            if current is None:
                self.policy.check_path(path, "source file")
        marks = {b.actual_line or b.line or 0 for b in self.breakpoints.in_file(path) if not b.internal}
        return src.view(path, line or current, context, current, marks)

    async def current_location(self) -> Location | None:
        """Where the program is stopped, or None when it is not stopped (or moved while asked, or may have: a
        debugger that left a request to move it unanswered would cost a deadline to ask)."""
        scope = self.core.life.scope
        if scope is None or self.state != State.stopped or self.core.life.unconfirmed:
            return None
        try:
            return await self.inspector.top_location(scope)
        except (UsageError, SessionError, AdapterError):
            return None

    async def stack(self, thread_id: int | None, start: int, levels: int, all_threads: bool) -> StackResult:
        return await self._inspect(lambda: self.inspector.stack(thread_id, start, levels, all_threads))

    async def variables(self, frame_index: int | None, ref: int | None, scope: str | None, start: int,
                        count: int | None, names: list[str] | None, thread_id: int | None = None) -> VariablesResult:
        if ref is None and scope is not None and scope.lower().startswith("reg"):
            return await self.registers(frame_index, thread_id)  # the general-purpose registers, of native code
        return await self._inspect(lambda: self.inspector.variables(frame_index, ref, scope, start, count, names,
                                                                    thread_id))

    async def evaluate(self, expression: str, frame_index: int | None, thread_id: int | None = None) -> EvaluateResult:
        self.policy.check_expressions(self.adapter, expression)
        return await self._inspect(lambda: self.inspector.evaluate(expression, frame_index, thread_id))

    async def set_variable(self, name: str, value: str, frame_index: int | None, ref: int | None,
                           thread_id: int | None = None) -> Var:
        self.policy.check_expressions(self.adapter, name, value)
        return await self._inspect(lambda: self.inspector.set_variable(name, value, frame_index, ref, thread_id))

    # -- native operations ------------------------------------------------------------------------------

    async def memory(self, address: str, count: int, write: str | None, frame_index: int | None,
                     thread_id: int | None = None) -> MemoryResult:
        if write is not None:
            self.policy.require("allow_memory_write", "debug_memory write")
        self.policy.check_expressions(self.adapter, address)
        return await self._inspect(lambda: self.native.memory(address, count, write, frame_index, thread_id))

    async def disassemble(self, address: str | None, count: int, frame_index: int | None,
                          thread_id: int | None = None) -> DisassemblyResult:
        self.policy.check_expressions(self.adapter, address)
        return await self._inspect(lambda: self.native.disassemble(address, count, frame_index, thread_id))

    async def registers(self, frame_index: int | None, thread_id: int | None = None) -> VariablesResult:
        return await self._inspect(lambda: self.native.registers(frame_index, thread_id))

    async def command(self, text: str, frame_index: int | None, thread_id: int | None = None) -> CommandResult:
        self.policy.check_command(self.adapter, text)
        return await self._inspect(lambda: self.native.command(text, frame_index, thread_id))
