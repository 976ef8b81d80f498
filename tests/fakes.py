"""Fakes at the Backend seam, for the session's unit tests: a ``FakeBackend`` that answers from the stop it is
at, can hold any call at a gate the test opens, records what it is sent (breakpoint groups, exception filters),
and can bind a line elsewhere, fail a call or act once a call is answered (stop after a step), replays the
calls and exceptions a test gives it to the recorders armed when the program runs; and a
``RecordingListener`` that keeps what a backend reports and lets a test wait for it.

The real debuggers are driven by the integration tests; these stand in only where a test must decide exactly
what happens while the session awaits the backend.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from polydbg.backends.base import (
    AttachSpec,
    Backend,
    BackendListener,
    BreakpointResult,
    Capabilities,
    Configure,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    FunctionBreakpoint,
    LaunchSpec,
    Scope,
    SourceBreakpoint,
    StepKind,
    StopEvent,
    Thread,
    ThreadLocks,
    Variable,
)
from polydbg.backends.recording import CallRecord, CallSink, CallSpec, RaisedRecord, RaisedSink
from polydbg.backends.timecontrol import RecordAction, Reloaded, ReverseKind
from polydbg.errors import AdapterGoneError, UsageError


class RecordingListener:
    """A ``BackendListener`` that records every event as (kind, value)."""

    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.stopped = asyncio.Event()
        self._arrived = asyncio.Event()  # replaced after each event: set when the next one arrives

    def _record(self, kind: str, value: Any) -> None:
        self.events.append((kind, value))
        self._arrived.set()
        self._arrived = asyncio.Event()

    def kinds(self) -> list[str]:
        return [kind for kind, _ in self.events]

    async def until(self, kind: str, count: int = 1, timeout_s: float = 2.0) -> None:
        """Wait, within a deadline, until ``count`` events of ``kind`` have been recorded."""
        async def arrived() -> None:
            while self.kinds().count(kind) < count:
                await self._arrived.wait()
        await asyncio.wait_for(arrived(), timeout_s)

    def on_stopped(self, event: StopEvent) -> None:
        self._record("stopped", event)
        self.stopped.set()

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        self._record("continued", thread_id)

    def on_output(self, category: str, text: str) -> None:
        self._record("output", (category, text))

    def on_exited(self, exit_code: int | None) -> None:
        self._record("exited", exit_code)

    def on_terminated(self, cause: str | None) -> None:
        self._record("terminated", cause)

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        self._record("breakpoint", (bp_id, result))


class FakeBackend(Backend):
    name = "fake"

    def __init__(self, listener: BackendListener, program: str) -> None:
        self.listener = listener
        self.language = "python"
        self.program = program
        self.capabilities = Capabilities(set_variable=True, log_points=True, conditional_breakpoints=True)
        self.stop_no = 0
        self.gates: dict[str, asyncio.Event] = {}  # method name → held until the test sets it
        self.entered: dict[str, asyncio.Event] = defaultdict(asyncio.Event)  # set when a held call arrives
        self.failed: dict[str, asyncio.Event] = defaultdict(asyncio.Event)  # set as a call raises its failure
        self.calls: list[str] = []
        self.die_on_step = False
        self.terminated = False
        # what the debugger was sent, in order: ("breakpoints", (file, specs)), ("functions", specs), ("filters", names)
        self.sent: list[tuple[str, Any]] = []
        self.moved_lines: dict[int, int] = {}  # a requested line → the line the debugger binds it to
        self.unbound_lines: dict[int, str] = {}  # a requested line → why the debugger cannot bind it
        self.failures: dict[str, BaseException] = {}  # method name → raised when it is called (after its gate)
        self.after: dict[str, Callable[[], None]] = {}  # method name → what the debugger does once it answered
        self.locals: list[Variable] | None = None  # a frame's locals (None: x and obj)
        self.exception: ExceptionDetail | None = None  # what exception_info answers
        self.stacks: dict[Thread, list[Frame]] | None = None  # the threads and their frames (None: main, one frame)
        self.thread_locks: dict[int, ThreadLocks] = {}  # what locks() answers
        self.frames_asked: list[FrameRef] = []  # the frames scopes() and evaluate() were asked about, in order
        self.pid: int | None = None  # the program's process id, as a debugger names it
        self.frameless_hint: str | None = None  # why a thread lists no frames ({id}: its id)
        # recording: what the program does when it runs (delivered to the armed recorders at launch or resume)
        self.runs_calls: list[CallRecord] = []
        self.runs_raised: list[RaisedRecord] = []
        self.still_running: list[CallRecord] = []  # delivered (ended=False) when the call recorder stops
        self.known_functions: list[str] | None = None  # None: any name; else others are refused with the closest
        self.recorder_notes: list[str] = []
        self.call_spec: CallSpec | None = None
        self.call_sink: CallSink | None = None
        self.raised_sink: RaisedSink | None = None
        # time control: what reload() answers, the reverse runs asked (thread, kind), the checkpoints saved
        self.reloaded = Reloaded()
        self.reversed: list[tuple[int, str]] = []
        self.checkpoints = 0

    @property
    def program_pid(self) -> int | None:
        return self.pid

    def hold(self, method: str) -> asyncio.Event:
        gate = self.gates[method] = asyncio.Event()
        return gate

    async def _enter(self, method: str) -> None:
        self.calls.append(method)
        self.entered[method].set()
        gate = self.gates.get(method)
        if gate is not None:
            await gate.wait()
        failure = self.failures.get(method)
        if failure is not None:
            self.failed[method].set()
            raise failure

    def _then(self, method: str) -> None:
        reaction = self.after.get(method)
        if reaction is not None:
            reaction()

    def stop_again(self, reason: str = "breakpoint", hit: tuple[int, ...] = ()) -> None:
        self.stop_no += 1
        self.listener.on_stopped(StopEvent(reason, 1, hit_breakpoint_ids=hit))

    def sent_files(self, file: str) -> list[list[SourceBreakpoint]]:
        """Every group of breakpoints sent for ``file``, oldest first."""
        return [value[1] for kind, value in self.sent if kind == "breakpoints" and value[0] == file]

    # -- lifecycle
    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        await configure()
        self.run_recorded()
        self.stop_again()

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        await configure()  # an attached program runs on: it stops when a test says so

    async def terminate(self) -> None:
        self.terminated = True

    async def detach(self) -> None:
        self.terminated = True

    # -- breakpoints
    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        self.sent.append(("breakpoints", (file, list(breakpoints))))
        await self._enter("set_breakpoints")
        return [BreakpointResult(False, message=self.unbound_lines[bp.line]) if bp.line in self.unbound_lines
                else BreakpointResult(True, self.moved_lines.get(bp.line, bp.line)) for bp in breakpoints]

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        self.sent.append(("functions", list(breakpoints)))
        return [BreakpointResult(True) for _ in breakpoints]

    async def set_exception_filters(self, filters: list[str]) -> None:
        self.sent.append(("filters", list(filters)))

    # -- execution
    async def resume(self, thread_id: int | None) -> None:
        await self._enter("resume")
        self.listener.on_continued(thread_id, True)
        self.run_recorded()
        self._then("resume")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        await self._enter("step")
        if self.die_on_step:
            raise AdapterGoneError("fake adapter closed its connection")
        self._then("step")

    async def pause(self, thread_id: int | None) -> None:
        await self._enter("pause")
        self.stop_again("pause")

    # -- time control
    async def reverse(self, thread_id: int, kind: ReverseKind) -> None:
        await self._enter("reverse")
        self.reversed.append((thread_id, kind))
        self.listener.on_continued(thread_id, True)
        self._then("reverse")

    async def reload(self, thread_id: int | None) -> Reloaded:
        await self._enter("reload")
        return self.reloaded

    async def record(self, action: RecordAction, limit: int) -> str:
        await self._enter("record")
        return f"recording {action} (at most {limit:,} instructions)"

    async def checkpoint(self) -> int:
        await self._enter("checkpoint")
        self.checkpoints += 1
        return self.checkpoints

    async def restore(self, number: int) -> None:
        await self._enter("restore")
        self.listener.on_continued(None, True)
        self.stop_again("checkpoint")

    # -- recording
    def run_recorded(self) -> None:
        """The program runs: what it calls and raises reaches the armed recorders, once."""
        calls, self.runs_calls = self.runs_calls, []
        raised, self.runs_raised = self.runs_raised, []
        calls_to, raised_to = self.call_sink, self.raised_sink
        if calls_to is not None:
            for call in calls:
                calls_to(call)
        if raised_to is not None:
            for exception in raised:
                raised_to(exception)

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> _FakeRecorder:
        await self._enter("record_calls")
        unknown = [f for f in spec.functions if self.known_functions is not None and f not in self.known_functions]
        if unknown:
            closest = ", ".join(self.known_functions or [])
            raise UsageError(f"no function {unknown[0]} in the program; closest: {closest}")
        self.call_spec, self.call_sink = spec, sink
        return _FakeRecorder(self, "calls")

    async def record_raised(self, sink: RaisedSink) -> _FakeRecorder:
        await self._enter("record_raised")
        self.raised_sink = sink
        return _FakeRecorder(self, "raised")

    # -- inspection
    async def threads(self) -> list[Thread]:
        await self._enter("threads")
        return list(self.stacks) if self.stacks is not None else [Thread(1, "main")]

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        at = self.stop_no
        await self._enter("stack_trace")
        if self.stacks is not None:
            frames = next(frames for thread, frames in self.stacks.items() if thread.id == thread_id)
            return frames[start:start + levels], len(frames)
        return [Frame(f"f{at}", self.program, 1 + at)][start:start + levels], 1

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        at = self.stop_no
        self.frames_asked.append(frame)
        await self._enter("scopes")
        return [Scope("Locals", 100 + at)]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        at = self.stop_no
        await self._enter("variables")
        if ref >= 1000:
            return [Variable("item", f"child of {ref} at stop {at}")]
        if self.locals is not None:
            return list(self.locals)
        return [Variable("x", f"x at stop {at}"), Variable("obj", f"obj at stop {at}", ref=1000 + at)]

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        at = self.stop_no
        if frame is not None:
            self.frames_asked.append(frame)
        await self._enter("evaluate")
        return Variable(expression, f"{expression} at stop {at}")

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        await self._enter("set_variable")
        return Variable(name, value)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        return self.exception

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        await self._enter("locks")
        return {tid: state for tid, state in self.thread_locks.items() if tid in thread_ids}

    def frameless(self, thread: Thread) -> str | None:
        return self.frameless_hint.format(id=thread.id) if self.frameless_hint is not None else None


class _FakeRecorder:
    def __init__(self, backend: FakeBackend, kind: str) -> None:
        self.backend = backend
        self.kind = kind

    async def stop(self) -> list[str]:
        backend = self.backend
        backend.calls.append(f"stop {self.kind}")
        if self.kind == "calls" and backend.call_sink is not None:
            for call in backend.still_running:
                backend.call_sink(call)
            backend.call_sink = None
            return list(backend.recorder_notes)
        backend.raised_sink = None
        return []
