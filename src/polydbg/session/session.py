"""One debugging session: lifecycle, stops, breakpoints, output, and the StopReport.

The session owns everything that must survive an adapter (re)start — breakpoints, output, the
launch spec — and talks to the debugger only through the ``Backend`` protocol. Every execution
request waits for a state change (stop, exit, termination) under a deadline; every inspection
re-checks after its awaits that the program is still stopped at the same stop.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from polydbg.backends.base import (
    AttachSpec,
    Backend,
    BackendListener,
    BreakpointResult,
    Frame,
    LaunchSpec,
    StepKind,
    StopEvent,
    Thread,
    Variable,
    parse_address,
)
from polydbg.errors import (
    AdapterError,
    AdapterGoneError,
    AdapterRequestError,
    NotStoppedError,
    SessionEndedError,
    UsageError,
)
from polydbg.session import source as src
from polydbg.session.breakpoints import Breakpoint, BreakpointStore, data_spec, function_spec, source_spec
from polydbg.session.model import (
    BreakpointInfo,
    CommandResult,
    DisassemblyResult,
    EvaluateResult,
    ExceptionInfo,
    FrameInfo,
    InstructionInfo,
    Location,
    MemoryResult,
    Output,
    StackResult,
    State,
    StopReport,
    ThreadStack,
    TraceHit,
    TraceResult,
    Var,
    VariablesResult,
)
from polydbg.session.output import OutputBuffer

log = logging.getLogger(__name__)
T = TypeVar("T")

Progress = Callable[[float, str], Awaitable[None]]
BackendFactory = Callable[[BackendListener], Backend]

REPORT_LOCALS = 12
REPORT_VALUE_CHARS = 80
REPORT_OUTPUT_BYTES = 480
REPORT_SOURCE_CONTEXT = 3
REPORT_LINE_CHARS = 100
VALUE_CHARS = 400
EVALUATE_CHARS = 4000
_OUTPUT_STREAMS = {"stdout": "stdout", "stderr": "stderr"}


_HEX = re.compile(r"0x[0-9a-fA-F]+")


def hexdump(address: int, data: bytes, width: int = 16) -> str:
    """Classic hex dump: address, hex bytes, printable ASCII."""
    lines = []
    for offset in range(0, len(data), width):
        row = data[offset:offset + width]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"{address + offset:#014x}  {row.hex(' '):<{width * 3 - 1}}  |{text}|")
    return "\n".join(lines)


def clip(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[: limit - 1] + "…", True


@dataclass
class _RefInfo:
    variable: Variable
    frame_id: int | None


class _Events:
    """Forwards one backend's events to the session, ignoring a backend the session has replaced."""

    def __init__(self, session: Session, generation: int) -> None:
        self._session = session
        self._generation = generation

    def _live(self) -> bool:
        return self._session._generation == self._generation

    def on_stopped(self, event: StopEvent) -> None:
        if self._live():
            self._session._on_stopped(event)

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        if self._live():
            self._session._on_continued()

    def on_output(self, category: str, text: str) -> None:
        if self._live():
            self._session._on_output(category, text)

    def on_exited(self, exit_code: int | None) -> None:
        if self._live():
            self._session._on_exited(exit_code)

    def on_terminated(self, cause: str | None) -> None:
        if self._live():
            self._session._on_terminated(cause)

    def on_breakpoint_changed(self, adapter_id: int, result: BreakpointResult) -> None:
        if self._live():
            bp = self._session.breakpoints.by_adapter_id(adapter_id)
            if bp is not None:
                bp.apply(result)


class Session:
    def __init__(self, session_id: str, language: str, adapter: str, factory: BackendFactory,
                 target: str, cwd: str | None) -> None:
        self.id = session_id
        self.language = language
        self.adapter = adapter
        self.target = target
        self.cwd = cwd
        self.state = State.starting
        self.cause: str | None = None
        self.exit_code: int | None = None
        self.output = OutputBuffer()
        self.breakpoints = BreakpointStore()
        self.exception_filters: list[str] = []
        self.last_used = time.monotonic()
        self._factory = factory
        self._backend: Backend | None = None
        self._generation = 0
        self._spec: LaunchSpec | AttachSpec | None = None
        self._stop: StopEvent | None = None
        self._stop_gen = 0
        self._hits_counted_gen = 0
        self._changed = asyncio.Event()
        self._report_cursor = 0
        self._refs: dict[int, _RefInfo] = {}
        self._frames: dict[int, list[Frame]] = {}
        self._child_cache: dict[int, list[Variable]] = {}
        self._scope_refs: set[int] = set()
        self._threads: list[Thread] | None = None
        self._acting = False
        self._trace_sink: Callable[[str], str] | None = None
        self._cleanups: set[asyncio.Task[None]] = set()

    # -- backend events ---------------------------------------------------------------------------

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    def _forget_stop_data(self) -> None:
        self._refs.clear()
        self._frames.clear()
        self._child_cache.clear()
        self._scope_refs.clear()
        self._threads = None

    def _on_stopped(self, event: StopEvent) -> None:
        self._forget_stop_data()
        self._stop = event
        self._stop_gen += 1
        self.state = State.stopped
        for adapter_id in event.hit_breakpoint_ids:
            bp = self.breakpoints.by_adapter_id(adapter_id)
            if bp is not None:
                bp.hits += 1
                self._hits_counted_gen = self._stop_gen
        self._notify()

    def _on_continued(self) -> None:
        if not self._acting and self.state == State.stopped:
            self._forget_stop_data()
            self.state = State.running
            self._notify()

    def _on_output(self, category: str, text: str) -> None:
        if self._trace_sink is not None:
            text = self._trace_sink(text)
        self.output.append(_OUTPUT_STREAMS.get(category, "console"), text)

    def _on_exited(self, exit_code: int | None) -> None:
        self.exit_code = exit_code
        if self.state != State.terminated:
            self.state = State.exited
        self._notify()

    def _on_terminated(self, cause: str | None) -> None:
        if self.state != State.exited:
            self.state = State.terminated
            self.cause = cause or self.cause or "the debug adapter ended the session"
        backend = self._backend
        if backend is not None:  # reap the adapter now; the session itself stays readable
            task = asyncio.get_running_loop().create_task(backend.terminate())
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)
        self._notify()

    # -- helpers ------------------------------------------------------------------------------------

    @property
    def backend(self) -> Backend:
        if self._backend is None or self.state in (State.terminated, State.exited):
            raise SessionEndedError(self._ended_text())
        return self._backend

    def _ended_text(self) -> str:
        if self.state == State.exited:
            return (f"the program of session {self.id} has exited (code {self.exit_code}); "
                    "start it again with debug_restart, or end the session with debug_terminate")
        if self.state == State.terminated:
            return (f"session {self.id} has terminated ({self.cause}); "
                    "start a new one with debug_launch or debug_restart")
        return f"session {self.id} is not connected to a debugger yet"

    def touch(self) -> None:
        self.last_used = time.monotonic()

    def require_stopped(self) -> StopEvent:
        if self.state == State.stopped and self._stop is not None:
            return self._stop
        if self.state in (State.exited, State.terminated):
            raise SessionEndedError(self._ended_text())
        raise NotStoppedError(f"the program of session {self.id} is {self.state.value}, not stopped; "
                              "call debug_pause to interrupt it, or debug_continue to wait for the next stop")

    def resolve_path(self, file: str) -> str:
        path = os.path.expanduser(file)
        if not os.path.isabs(path):
            path = os.path.join(self.cwd or os.getcwd(), path)
        return os.path.normpath(path)

    async def _call(self, awaitable: Awaitable[T]) -> T:
        """Await a backend call; a vanished adapter ends the session here, with its cause."""
        try:
            return await awaitable
        except AdapterGoneError as exc:
            if self.state not in (State.exited, State.terminated):
                self.state = State.terminated
                self.cause = f"the {self.adapter} adapter is gone: {exc}"
                self._notify()
            raise SessionEndedError(self._ended_text()) from None

    # -- start --------------------------------------------------------------------------------------

    async def start(self, spec: LaunchSpec | AttachSpec, timeout_s: float, progress: Progress | None) -> StopReport:
        """Start the adapter and the program (or attach), apply breakpoints, wait for the first stop."""
        self._spec = spec
        self._generation += 1
        self.state = State.starting
        self._stop = None
        self.exit_code = None
        self.cause = None
        self._forget_stop_data()
        backend = self._backend = self._factory(_Events(self, self._generation))
        gen = self._stop_gen
        deadline = asyncio.get_running_loop().time() + timeout_s
        try:
            if isinstance(spec, LaunchSpec):
                await backend.launch(spec, self._configure, timeout_s)
            else:
                await backend.attach(spec, self._configure, timeout_s)
        except AdapterError as exc:
            await backend.terminate()
            self.state = State.terminated
            self.cause = str(exc)
            raise UsageError(f"could not start the program: {exc}") if isinstance(exc, AdapterRequestError) \
                else SessionEndedError(f"could not start the debugger: {exc}") from None
        except BaseException:  # a usage or environment problem (or cancellation) after the backend spawned
            await backend.terminate()
            self.state = State.terminated
            raise
        if self.state == State.starting:
            self.state = State.running
        if isinstance(spec, AttachSpec) and not self.breakpoints.visible():
            return await self.report()  # nothing to wait for: report it attached and running
        remaining = max(0.0, deadline - asyncio.get_running_loop().time())
        timed_out = await self._wait_change(gen, remaining, progress)
        return await self.report(timed_out=timed_out)

    async def _configure(self) -> None:
        backend = self._backend
        assert backend is not None
        for file in sorted(self.breakpoints.files()):
            await self._send_file_breakpoints(file)
        if self.breakpoints.functions():
            await self._send_function_breakpoints()
        if self.breakpoints.watches() and backend.capabilities.data_breakpoints:
            await self._send_watches(None)
        await backend.set_exception_filters(list(self.exception_filters))

    async def _send_file_breakpoints(self, file: str) -> None:
        bps = sorted(self.breakpoints.in_file(file), key=lambda b: b.id)
        results = await self._connected_backend().set_breakpoints(file, [source_spec(b) for b in bps])
        for bp, result in zip(bps, results, strict=False):
            bp.apply(result)

    async def _send_function_breakpoints(self) -> None:
        bps = sorted(self.breakpoints.functions(), key=lambda b: b.id)
        results = await self._connected_backend().set_function_breakpoints([function_spec(b) for b in bps])
        for bp, result in zip(bps, results, strict=False):
            bp.apply(result)

    async def _send_watches(self, frame_id: int | None) -> None:
        bps = sorted(self.breakpoints.watches(), key=lambda b: b.id)
        results = await self._connected_backend().set_data_breakpoints([data_spec(b) for b in bps], frame_id)
        for bp, result in zip(bps, results, strict=False):
            bp.apply(result)

    def _connected_backend(self) -> Backend:
        """The backend, also while starting (the handshake sends breakpoints through it)."""
        if self._backend is None:
            raise SessionEndedError(self._ended_text())
        return self._backend

    def _live_backend(self) -> Backend | None:
        """The backend when breakpoint changes can be sent now, else None (they wait for start)."""
        if self._backend is None or self.state in (State.exited, State.terminated):
            return None
        return self._backend

    # -- breakpoints ----------------------------------------------------------------------------------

    def validate_line(self, path: str, line: int) -> None:
        lines = src.read_lines(path)
        if line < 1 or line > len(lines):
            raise UsageError(f"line {line} is outside {path} (it has {len(lines)} lines); "
                             f"pass a line between 1 and {len(lines)}")

    async def add_line_breakpoint(self, file: str, line: int, condition: str | None = None,
                                  hit_condition: str | None = None, log_message: str | None = None,
                                  internal: bool = False) -> Breakpoint:
        path = self.resolve_path(file)
        self.validate_line(path, line)
        bp = self.breakpoints.add(file=path, line=line, condition=condition, hit_condition=hit_condition,
                                  log_message=log_message, internal=internal)
        if self._live_backend() is not None and self.state != State.starting:
            try:
                await self._call(self._send_file_breakpoints(path))
            except AdapterRequestError as exc:
                self.breakpoints.remove(bp.id)
                raise UsageError(f"the debugger rejected the breakpoint at {path}:{line}: {exc}") from None
        return bp

    async def add_function_breakpoint(self, function: str, condition: str | None = None,
                                      hit_condition: str | None = None) -> Breakpoint:
        backend = self._live_backend()
        if backend is not None and not backend.capabilities.function_breakpoints:
            raise UsageError(f"{self.adapter} does not support function breakpoints; "
                             "set a line breakpoint on the function's first line instead")
        bp = self.breakpoints.add(function=function, condition=condition, hit_condition=hit_condition)
        if backend is not None and self.state != State.starting:
            await self._call(self._send_function_breakpoints())
        return bp

    async def set_exception_filters(self, filters: list[str]) -> None:
        backend = self._live_backend()
        if backend is not None and backend.capabilities.exception_filters:
            unknown = [f for f in filters if f not in backend.capabilities.exception_filters]
            if unknown:
                raise UsageError(f"unknown exception filter(s) {unknown}; {self.adapter} offers "
                                 f"{list(backend.capabilities.exception_filters)}")
        self.exception_filters = list(dict.fromkeys(filters))
        if backend is not None:
            await self._call(backend.set_exception_filters(self.exception_filters))

    async def remove_breakpoints(self, bp_id: int | None, file: str | None, everything: bool) -> list[int]:
        if everything:
            doomed = self.breakpoints.visible()
        elif bp_id is not None:
            bp = self.breakpoints.items.get(bp_id)
            if bp is None or bp.internal:
                known = [b.id for b in self.breakpoints.visible()]
                raise UsageError(f"no breakpoint with id {bp_id}; existing ids: {known or 'none'}")
            doomed = [bp]
        elif file is not None:
            path = self.resolve_path(file)
            doomed = [b for b in self.breakpoints.in_file(path) if not b.internal]
            if not doomed:
                raise UsageError(f"no breakpoints in {path}; see debug_breakpoints")
        else:
            raise UsageError("say which breakpoints to remove: id, file, or all=true")
        files = {b.file for b in doomed if b.file}
        functions = any(b.function for b in doomed)
        watches = any(b.watch for b in doomed)
        for bp in doomed:
            self.breakpoints.remove(bp.id)
        if self._live_backend() is not None and self.state != State.starting:
            for path in sorted(f for f in files if f):
                await self._call(self._send_file_breakpoints(path))
            if functions:
                await self._call(self._send_function_breakpoints())
            if watches:
                await self._call(self._send_watches(None))
        return [b.id for b in doomed]

    def breakpoint_infos(self) -> list[BreakpointInfo]:
        return [bp.info() for bp in self.breakpoints.visible()]

    # -- execution ------------------------------------------------------------------------------------

    async def _wait_change(self, gen: int, timeout_s: float, progress: Progress | None) -> bool:
        """Wait until a new stop, an exit or a termination; True when the deadline passed first."""
        loop = asyncio.get_running_loop()
        started = loop.time()
        deadline = started + timeout_s
        while self._stop_gen == gen and self.state in (State.running, State.starting):
            remaining = deadline - loop.time()
            if remaining <= 0:
                return True
            changed = self._changed
            try:
                await asyncio.wait_for(changed.wait(), min(remaining, 1.0))
            except asyncio.TimeoutError:
                if progress is not None:
                    await progress(loop.time() - started, f"running… {loop.time() - started:.0f}s")
        return False

    async def _run(self, action: Callable[[], Awaitable[None]], timeout_s: float,
                   progress: Progress | None) -> bool:
        gen = self._stop_gen
        self._acting = True
        try:
            self._forget_stop_data()
            self.state = State.running
            self._notify()
            try:
                await self._call(action())
            except AdapterRequestError as exc:
                if self._stop_gen == gen:
                    self.state = State.stopped
                raise UsageError(f"the debugger refused: {exc}") from None
        finally:
            self._acting = False
        return await self._wait_change(gen, timeout_s, progress)

    def _thread(self, thread_id: int | None) -> int:
        if thread_id is not None:
            return thread_id
        if self._stop is not None and self._stop.thread_id is not None:
            return self._stop.thread_id
        return 0

    async def resume(self, thread_id: int | None, to: tuple[str, int] | None, timeout_s: float,
                     progress: Progress | None) -> StopReport:
        if self.state == State.running and to is None:  # already running: wait for the next stop
            timed_out = await self._wait_change(self._stop_gen, timeout_s, progress)
            return await self.report(timed_out=timed_out)
        self.require_stopped()
        backend = self.backend
        target: Breakpoint | None = None
        if to is not None:
            target = await self.add_line_breakpoint(to[0], to[1], internal=True)
        try:
            timed_out = await self._run(lambda: backend.resume(self._thread(thread_id)), timeout_s, progress)
        finally:
            if target is not None:
                self.breakpoints.remove(target.id)
                if self._live_backend() is not None and target.file:
                    try:
                        await self._send_file_breakpoints(target.file)
                    except AdapterError:
                        log.debug("could not remove run-to-location breakpoint", exc_info=True)
        note = None
        if target is not None and self.state == State.stopped:
            location = await self._top_location()
            if location is not None and location.file == target.file and location.line == target.line:
                note = f"reached {os.path.basename(target.file or '')}:{target.line}"
        return await self.report(timed_out=timed_out, note=note)

    async def step(self, kind: StepKind, count: int, thread_id: int | None, timeout_s: float,
                   progress: Progress | None) -> StopReport:
        self.require_stopped()
        backend = self.backend
        thread = self._thread(thread_id)
        timed_out = False
        note = None
        for done in range(count):
            timed_out = await self._run(functools.partial(backend.step, thread, kind), timeout_s, progress)
            if timed_out or self.state != State.stopped:
                break
            if self._stop is not None and self._stop.reason not in ("step", "goto") and done + 1 < count:
                note = f"stopped after {done + 1} of {count} steps ({self._stop.reason})"
                break
            thread = self._thread(None)
        return await self.report(timed_out=timed_out, note=note)

    async def pause(self, thread_id: int | None, timeout_s: float) -> StopReport:
        if self.state == State.stopped:
            return await self.report(note="already stopped")
        backend = self.backend
        gen = self._stop_gen
        threads = await self._call(backend.threads()) if thread_id is None else []
        target = thread_id if thread_id is not None else (threads[0].id if threads else 0)
        await self._call(backend.pause(target))
        timed_out = await self._wait_change(gen, timeout_s, None)
        return await self.report(timed_out=timed_out)

    async def restart(self, timeout_s: float, progress: Progress | None) -> StopReport:
        if not isinstance(self._spec, LaunchSpec):
            raise UsageError("debug_restart restarts launched programs; for an attached one, "
                             "debug_terminate(detach=true) and debug_attach again")
        if self._backend is not None:
            old = self._backend
            self._generation += 1  # silence the old backend's events
            await old.terminate()
        for bp in self.breakpoints.items.values():
            bp.hits = 0
            bp.verified = False
            bp.data_id = None  # addresses change with the new process
        self.output.append("console", "--- restarted ---\n")
        self._report_cursor = self.output.total
        return await self.start(self._spec, timeout_s, progress)

    async def terminate(self, detach: bool) -> None:
        backend = self._backend
        self._generation += 1
        if backend is not None:
            if detach:
                await backend.detach()
            else:
                await backend.terminate()
        self.state = State.terminated
        self.cause = "detached" if detach else "terminated by debug_terminate"
        self._notify()

    # -- inspection -----------------------------------------------------------------------------------

    async def _threads_now(self) -> list[Thread]:
        """The threads at this stop (asked once per stop)."""
        if self._threads is None:
            self._threads = await self._call(self.backend.threads())
        return self._threads

    async def _frames_of(self, thread_id: int, needed: int) -> list[Frame]:
        frames = self._frames.get(thread_id)
        if frames is None or (len(frames) < needed and len(frames) >= 20):
            levels = max(20, needed)
            got, _total = await self._call(self.backend.stack_trace(thread_id, 0, levels))
            frames = self._frames[thread_id] = got
        return frames

    async def frame(self, index: int | None, thread_id: int | None = None) -> Frame:
        stop = self.require_stopped()
        thread = thread_id if thread_id is not None else (stop.thread_id or 0)
        wanted = index or 0
        if wanted < 0:
            raise UsageError("frame_id is a 0-based frame index (0 = innermost); pass 0 or more")
        frames = await self._frames_of(thread, wanted + 1)
        if wanted >= len(frames):
            raise UsageError(f"frame {wanted} does not exist: thread {thread} has {len(frames)} frames "
                             f"(0..{len(frames) - 1}); see debug_stack")
        return frames[wanted]

    async def current_location(self) -> Location | None:
        """Where the program is stopped, or None when it is not stopped."""
        if self.state != State.stopped:
            return None
        return await self._top_location()

    async def _top_location(self) -> Location | None:
        try:
            top = await self.frame(0)
        except (UsageError, NotStoppedError, SessionEndedError, AdapterError):
            return None
        return Location(file=top.file, line=top.line, function=top.name)

    def _remember(self, variables: list[Variable], frame_id: int | None) -> None:
        for variable in variables:
            if variable.ref:
                self._refs[variable.ref] = _RefInfo(variable, frame_id)

    def _var(self, variable: Variable, limit: int = VALUE_CHARS) -> Var:
        value, cut = clip(variable.value, limit)
        return Var(name=variable.name, value=value, type=variable.type, ref=variable.ref or None,
                   truncated=cut or None)

    async def _children(self, ref: int) -> list[Variable]:
        cached = self._child_cache.get(ref)
        if cached is None:
            cached = await self._call(self.backend.variables(ref))
            assert cached is not None
            self._child_cache[ref] = cached
        return cached

    async def _locals(self, frame: Frame) -> tuple[list[Var], int]:
        scopes = await self._call(self.backend.scopes(frame.id))
        scope = next((s for s in scopes if not s.expensive), None)
        if scope is None:
            return [], 0
        self._refs[scope.ref] = _RefInfo(Variable(name=scope.name, value=""), frame.id)
        self._scope_refs.add(scope.ref)
        variables = [v for v in await self._children(scope.ref) if not self._is_noise(v)]
        self._remember(variables, frame.id)
        shown = [self._var(v, REPORT_VALUE_CHARS) for v in variables[:REPORT_LOCALS]]
        return shown, max(0, len(variables) - REPORT_LOCALS)

    def _is_noise(self, variable: Variable) -> bool:
        is_noise = getattr(self._backend, "is_noise", None)
        return bool(is_noise(variable)) if is_noise is not None else False

    async def report(self, timed_out: bool = False, note: str | None = None) -> StopReport:
        """The StopReport for the current state (location, source, locals, exception, new output)."""
        report = StopReport(session_id=self.id, state=self.state, timed_out=timed_out, note=note)
        if self.state == State.stopped and self._stop is not None:
            stop = self._stop
            gen = self._stop_gen
            report.reason = stop.reason
            report.description = stop.text or stop.description
            report.thread_id = stop.thread_id
            try:
                top = await self.frame(0)
                report.location = Location(file=top.file, line=top.line, function=top.name)
                if top.file and top.line and os.path.isfile(top.file):
                    marks = {b.actual_line or b.line for b in self.breakpoints.in_file(top.file)
                             if not b.internal}
                    report.source = src.excerpt(top.file, top.line, REPORT_SOURCE_CONTEXT, top.line,
                                                {m for m in marks if m}, REPORT_LINE_CHARS)[0]
                self._count_hit_by_location(top, gen)
                report.locals, report.locals_more = await self._locals(top)
                if stop.reason == "exception" and stop.thread_id is not None:
                    detail = await self._call(self.backend.exception_info(stop.thread_id))
                    if detail is not None:
                        message, _ = clip(detail.message, 300)
                        report.exception = ExceptionInfo(type=detail.type, message=message)
            except (NotStoppedError, SessionEndedError):
                report.state = self.state
            except (AdapterError, UsageError) as exc:
                report.note = f"{note + '; ' if note else ''}could not read the stop details: {exc}"
        elif self.state == State.exited:
            report.exit_code = self.exit_code
        elif self.state == State.terminated:
            report.note = self.cause
        report.output = self._output_since_report()
        return report

    def _count_hit_by_location(self, top: Frame, gen: int) -> None:
        """Hit counts for adapters that do not name the breakpoint in the stop event."""
        if self._hits_counted_gen == gen or self._stop is None or self._stop.reason != "breakpoint":
            return
        self._hits_counted_gen = gen
        if top.file and top.line:
            for bp in self.breakpoints.at(top.file, top.line):
                bp.hits += 1

    def _output_since_report(self) -> Output | None:
        total = self.output.total
        if total == self._report_cursor:
            return None
        start = max(self._report_cursor, self.output.first_cursor, total - REPORT_OUTPUT_BYTES)
        chunk = self.output.read(start, REPORT_OUTPUT_BYTES)
        skipped = start - self._report_cursor
        earlier = max(self._report_cursor, self.output.first_cursor) if skipped else None
        self._report_cursor = total
        return Output(text=chunk.text, next_cursor=chunk.next_cursor, truncated=skipped, earlier_cursor=earlier)

    async def stack(self, thread_id: int | None, start: int, levels: int, all_threads: bool) -> StackResult:
        stop = self.require_stopped()
        backend = self.backend
        threads = await self._threads_now()
        names = {t.id: t.name for t in threads}
        if all_threads:
            wanted = [t.id for t in threads]
        else:
            wanted = [thread_id if thread_id is not None else (stop.thread_id or (threads[0].id if threads else 0))]
            if thread_id is not None and thread_id not in names:
                raise UsageError(f"no thread {thread_id}; threads: {sorted(names)}")
        result = StackResult(session_id=self.id, threads=[])
        for tid in wanted:
            frames, total = await self._call(backend.stack_trace(tid, start, levels))
            result.threads.append(ThreadStack(
                thread_id=tid, name=names.get(tid, ""), total=total,
                frames=[FrameInfo(index=start + i, function=f.name, file=f.file, line=f.line)
                        for i, f in enumerate(frames)]))
            if total is not None and start + len(frames) < total:
                result.more = f"more frames: debug_stack(start={start + len(frames)}, levels={levels})"
        return result

    async def variables(self, frame_index: int | None, ref: int | None, scope: str | None, start: int,
                        count: int, names: list[str] | None) -> VariablesResult:
        self.require_stopped()
        if start < 0 or count < 1:
            raise UsageError("start must be ≥ 0 and count ≥ 1")
        result = VariablesResult(session_id=self.id, start=start, variables=[])
        if ref is not None:
            info = self._refs.get(ref)
            if info is None:
                raise UsageError(f"ref {ref} is not valid at this stop (refs expire when the program moves); "
                                 "take a fresh ref from the latest report or debug_variables")
            parent, frame_id = info.variable, info.frame_id
            result.ref = ref
        else:
            frame = await self.frame(frame_index)
            scopes = await self._call(self.backend.scopes(frame.id))
            assert isinstance(scopes, list)
            result.scopes = [s.name for s in scopes]
            chosen = scopes[0] if scopes and scope is None else next(
                (s for s in scopes if scope and (s.name.lower().startswith(scope.lower())
                                                 or (s.hint or "").lower() == scope.lower())), None)
            if chosen is None:
                raise UsageError(f"no scope {scope!r} in frame {frame_index or 0}; scopes: {result.scopes}")
            self._refs[chosen.ref] = _RefInfo(Variable(name=chosen.name, value=""), frame.id)
            self._scope_refs.add(chosen.ref)
            ref, parent, frame_id = chosen.ref, Variable(name=chosen.name, value=""), frame.id
            result.scope = chosen.name
            result.ref = ref
        children = [v for v in await self._children(ref) if ref not in self._scope_refs or not self._is_noise(v)]
        if names:
            wanted = set(names)
            children = [v for v in children if v.name in wanted]
            missing = wanted - {v.name for v in children}
            if missing and not children:
                raise UsageError(f"no variables named {sorted(missing)} here; call without filter to list them")
        total = self._known_total(parent, children)
        page = children[start:start + count]
        if len(page) < count and total is not None and start + len(page) < total:
            sliced = await self._call(self.backend.child_slice(parent, start, count, frame_id))
            if isinstance(sliced, list) and sliced:
                page = sliced
        self._remember(page, frame_id)
        result.variables = [self._var(v) for v in page]
        result.total = total if total is not None else len(children)
        end = start + len(page)
        if result.total is not None and end < result.total:
            result.more = f"{result.total - end} more: debug_variables(ref={ref}, start={end}, count={count})"
        return result

    def _known_total(self, parent: Variable, children: list[Variable]) -> int | None:
        if parent.indexed_count is not None:
            return parent.indexed_count + (parent.named_count or 0)
        length = getattr(self._backend, "length_of", None)
        if length is not None:
            value = length(parent, children)
            if isinstance(value, int):
                return value
        return None

    async def evaluate(self, expression: str, frame_index: int | None) -> EvaluateResult:
        self.require_stopped()
        if not expression.strip():
            raise UsageError("expression is empty; pass an expression such as 'len(items)'")
        frame = await self.frame(frame_index)
        context = getattr(self._backend, "evaluate_context", "watch")
        try:
            value = await self._call(self.backend.evaluate(expression, frame.id, context))
        except AdapterRequestError as exc:
            raise UsageError(f"cannot evaluate {expression!r}: {exc}") from None
        assert isinstance(value, Variable)
        self._remember([value], frame.id)
        text, truncated = clip(value.value, EVALUATE_CHARS)
        self._child_cache.clear()  # an expression may have side effects
        return EvaluateResult(session_id=self.id, expression=expression, value=text, type=value.type,
                              ref=value.ref or None, truncated=truncated)

    async def set_variable(self, name: str, value: str, frame_index: int | None, ref: int | None) -> Var:
        self.require_stopped()
        backend = self.backend
        if not backend.capabilities.set_variable:
            raise UsageError(f"{self.adapter} cannot set variables; use debug_evaluate with an assignment")
        if ref is None:
            frame = await self.frame(frame_index)
            scopes = await self._call(backend.scopes(frame.id))
            assert isinstance(scopes, list)
            for scope in scopes:
                if scope.expensive:
                    continue
                children = await self._children(scope.ref)
                if any(v.name == name for v in children):
                    ref = scope.ref
                    break
            if ref is None:
                raise UsageError(f"no variable {name!r} in frame {frame_index or 0}; "
                                 "list them with debug_variables, or pass ref= for a member")
            frame_id: int | None = frame.id
        else:
            info = self._refs.get(ref)
            if info is None:
                raise UsageError(f"ref {ref} is not valid at this stop; take a fresh one from debug_variables")
            frame_id = info.frame_id
        try:  # adapters may "succeed" on a value that does not parse (pydevd keeps the old value)
            await self._call(backend.evaluate(value, frame_id, "watch"))
        except AdapterRequestError as exc:
            raise UsageError(f"cannot set {name} = {value}: the value does not evaluate here: {exc}") from None
        try:
            updated = await self._call(backend.set_variable(ref, name, value))
        except AdapterRequestError as exc:
            raise UsageError(f"cannot set {name} = {value}: {exc}") from None
        assert isinstance(updated, Variable)
        self._child_cache.clear()
        self._remember([updated], frame_id)
        return self._var(updated)

    # -- native operations ------------------------------------------------------------------------------

    def _native(self, capability: str, tool: str) -> Backend:
        backend = self.backend
        if not getattr(backend.capabilities, capability):
            what = "native programs (C, C++, Rust, Go)" if self.language == "python" else "this debugger"
            raise UsageError(f"{tool} is not supported by {self.adapter}: it works with {what}"
                             + ("; for Python use debug_evaluate" if self.language == "python" else ""))
        return backend

    async def resolve_address(self, address: str, frame_index: int | None) -> int:
        """A number (0x… or decimal) as is; anything else is evaluated and must give an address."""
        text = address.strip()
        try:
            return int(text, 0)
        except ValueError:
            pass
        frame = await self.frame(frame_index)
        try:
            value = await self._call(self.backend.evaluate(text, frame.id, "watch"))
        except AdapterRequestError as exc:
            raise UsageError(f"cannot evaluate {text!r}: {exc}") from None
        if value.memory_reference:
            parsed = parse_address(value.memory_reference)
            if parsed is not None:
                return parsed
        found = _HEX.search(value.value)
        if found is None:
            raise UsageError(f"{text!r} = {clip(value.value, 80)[0]} is not an address; pass a pointer, &variable, "
                             "or a number such as 0x7ffd1234")
        return int(found.group(0), 16)

    async def memory(self, address: str, count: int, write: str | None, frame_index: int | None) -> MemoryResult:
        self.require_stopped()
        backend = self._native("memory", "debug_memory")
        at = await self.resolve_address(address, frame_index)
        written = None
        if write is not None:
            try:
                data = bytes.fromhex(write.replace(" ", "").removeprefix("0x"))
            except ValueError:
                raise UsageError(f"write must be hex bytes such as '48 65 6c 6c 6f', not {write!r}") from None
            written = await self._call(backend.write_memory(at, data))
            self._child_cache.clear()
            count = max(count, len(data))
        try:
            block = await self._call(backend.read_memory(at, count))
        except AdapterRequestError as exc:
            raise UsageError(f"cannot read memory at {hex(at)}: {exc}") from None
        return MemoryResult(session_id=self.id, address=hex(block.address), count=len(block.data),
                            hex=block.data.hex(), dump=hexdump(block.address, block.data),
                            unreadable=block.unreadable, written=written)

    async def disassemble(self, address: str | None, count: int, frame_index: int | None) -> DisassemblyResult:
        self.require_stopped()
        backend = self._native("disassemble", "debug_disassemble")
        frame = await self.frame(frame_index)
        if address is not None:
            at, offset = await self.resolve_address(address, frame_index), 0
        elif frame.pc is not None:
            at, offset = frame.pc, -min(count // 3, 8)  # a few instructions before the pc for context
        else:
            raise UsageError("this frame has no instruction pointer; pass address")
        try:
            instructions = await self._call(backend.disassemble(at, count, offset))
        except AdapterRequestError as exc:
            raise UsageError(f"cannot disassemble at {hex(at)}: {exc}") from None
        return DisassemblyResult(
            session_id=self.id, pc=hex(frame.pc) if frame.pc is not None else None,
            instructions=[InstructionInfo(address=hex(i.address), text=i.text, symbol=i.symbol, line=i.line,
                                          current=i.address == frame.pc) for i in instructions])

    async def registers(self, frame_index: int | None) -> VariablesResult:
        self.require_stopped()
        backend = self._native("registers", "debug_registers")
        frame = await self.frame(frame_index)
        found = await self._call(backend.registers(frame.id))
        self._remember(found, frame.id)
        return VariablesResult(session_id=self.id, scope="Registers", variables=[self._var(v) for v in found],
                               total=len(found))

    async def watch(self, expression: str, access: str) -> Breakpoint:
        backend = self._live_backend()
        if backend is not None:
            self._native("data_breakpoints", "debug_watch")
        bp = self.breakpoints.add(watch=expression, access=access)
        if backend is not None and self.state != State.starting:
            frame_id = (await self.frame(0)).id if self.state == State.stopped else None
            try:
                await self._call(self._send_watches(frame_id))
            except AdapterRequestError as exc:
                self.breakpoints.remove(bp.id)
                raise UsageError(f"cannot watch {expression!r}: {exc}") from None
            if not bp.verified:
                self.breakpoints.remove(bp.id)
                await self._call(self._send_watches(frame_id))
                raise UsageError(f"cannot watch {expression!r}: {bp.message or 'the debugger refused'}; watch an "
                                 "lvalue such as a global, a local in the current frame, or *(int*)0x…")
        return bp

    async def command(self, text: str, frame_index: int | None) -> CommandResult:
        backend = self._native("raw_command", "debug_command")
        frame_id = (await self.frame(frame_index)).id if self.state == State.stopped else None
        try:
            output = await self._call(backend.command(text, frame_id))
        except AdapterRequestError as exc:
            raise UsageError(f"{self.adapter} refused {text!r}: {exc}") from None
        self._forget_stop_data()  # a raw command may change anything
        clipped, cut = clip(output, EVALUATE_CHARS)
        return CommandResult(session_id=self.id, command=text, output=clipped, truncated=cut)

    # -- tracepoints ----------------------------------------------------------------------------------

    async def trace(self, points: list[tuple[str, int]], expressions: list[str], max_hits: int,
                    timeout_s: float, progress: Progress | None) -> TraceResult:
        backend = self.backend
        if self.state not in (State.stopped, State.running):
            raise SessionEndedError(self._ended_text())
        if not backend.capabilities.log_points:
            raise UsageError(f"{self.adapter} has no logpoints, so tracing without stopping is unavailable; "
                             "use conditional breakpoints with debug_continue instead")
        # A printable token (str.splitlines treats \x1c-\x1e as line breaks) and a unit separator.
        token = f"<<polydbg-trace-{self.id}-{self._stop_gen}>>"
        sep = "\x1f"
        hits: list[TraceHit] = []
        total = 0
        done = asyncio.Event()
        added: list[Breakpoint] = []
        interpolate = getattr(backend, "trace_interpolation", None)

        def sink(text: str) -> str:
            """Take the trace lines out of an output chunk; return what remains for the program's output."""
            nonlocal total
            if token not in text:
                return text
            rest = []
            for line in text.split("\n"):
                if not line.startswith(token):
                    rest.append(line)
                    continue
                parts = line[len(token):].split(sep)
                where, values = parts[0], parts[1:]
                file, _, lineno = where.rpartition(":")
                total += 1
                if len(hits) < max_hits:
                    pairs = zip(expressions, values, strict=False)
                    hits.append(TraceHit(file=file, line=int(lineno) if lineno.isdigit() else 0,
                                         values={e: clip(v, 200)[0] for e, v in pairs}))
                if total >= max_hits:
                    done.set()
            return "\n".join(rest)

        self._trace_sink = sink
        try:
            for file, line in points:
                path = self.resolve_path(file)
                message = token + f"{path}:{line}" + "".join(
                    sep + (interpolate(e) if interpolate is not None else "{" + e + "}") for e in expressions)
                added.append(await self.add_line_breakpoint(path, line, log_message=message, internal=True))
            gen = self._stop_gen
            if self.state == State.stopped:
                await self._run(lambda: backend.resume(self._thread(None)), 0, None)
            reason = await self._wait_trace(done, gen, timeout_s, progress)
        finally:
            for bp in added:
                self.breakpoints.remove(bp.id)
            if self._live_backend() is not None:
                for path in sorted({bp.file for bp in added if bp.file}):
                    try:
                        await self._send_file_breakpoints(path)
                    except AdapterError:
                        log.debug("could not remove tracepoints", exc_info=True)
            self._trace_sink = None
        report = await self.report() if self.state != State.running else None
        return TraceResult(session_id=self.id, hits=hits, total_hits=total, stopped_because=reason,
                           state=self.state, report=report)

    async def _wait_trace(self, done: asyncio.Event, gen: int, timeout_s: float,
                          progress: Progress | None) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            if done.is_set():
                return "max_hits"
            if self.state in (State.exited, State.terminated):
                return str(self.state.value)
            if self._stop_gen != gen:
                return "stopped"
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "timeout"
            changed = asyncio.ensure_future(self._changed.wait())
            finished = asyncio.ensure_future(done.wait())
            try:
                await asyncio.wait({changed, finished}, timeout=min(remaining, 1.0),
                                   return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()
                finished.cancel()
            if progress is not None and not done.is_set():
                await progress(timeout_s - (deadline - loop.time()), "tracing…")
