"""The delve backend the registry names (``DelveBackend``): ``dlv dap`` started and connected to (or a
user's ``dlv --headless`` server reached), its events routed, its values tidied, and its end.

The jobs it hands on: the launch it builds (``build``), dlv's pipes and output events (``output``), which goroutine
a stop is shown on and which frames are hidden (``stops``), what a step returned (``returns``), and memory and raw
commands (``native``). The package docstring says how dlv is started and lists delve's quirks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import shutil
from collections.abc import Sequence
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    TRACE_THREAD,
    AttachSpec,
    BackendListener,
    BreakpointResult,
    Configure,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    FunctionBreakpoint,
    LaunchSpec,
    MemoryBlock,
    Scope,
    SourceBreakpoint,
    StepKind,
    Thread,
    ThreadLocks,
    Variable,
)
from polydbg.backends.dap import wire
from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.delve import assign, build, calls, goroutines, native, output, races, testfail, waits
from polydbg.backends.delve.returns import StepReturns
from polydbg.backends.delve.stops import PROGRAM_VANISHED, DelveStops, unquote
from polydbg.backends.delve.values import METADATA, plain, tidy
from polydbg.backends.kit import returns as outcomes
from polydbg.backends.kit import thrown, timeouts
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.recording import CallSink, CallSpec, Recorder
from polydbg.backends.timecontrol import Reloaded, RestartNeeded
from polydbg.errors import AdapterRequestError, EnvironmentProblem, UsageError, echo
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

START_TIMEOUT_S = 10.0  # dlv dap printing the line that says it listens
KILLED_WHILE_STOPPED_POLL_S = 0.25  # how often a stopped program's threads are looked at (see _notice_killed)
FATAL_ERROR = "fatal error"  # delve's exception type for the runtime's fatal errors (a deadlock)
DETAIL_LINES = 12  # goroutines listed with a fatal error (a report shows 12 lines of an exception's details)
# polydbg's ids of the internal function breakpoints (the session's ids are positive)
RACE_BREAKPOINT = -20  # races.py's, on the race detector's symbolizer
FAILURE_BREAKPOINT = -21  # testfail.py's, on testing's Fail
_INSTALL = ("install delve: `go install github.com/go-delve/delve/cmd/dlv@latest` (then put $(go env GOPATH)/bin "
            "on PATH) or your package manager's delve package")


class DelveBackend(DapBackend):
    name = "delve"
    adapter_id = "go"
    evaluate_context: ClassVar[EvaluateContext] = "clipboard"  # values not cut at 256 chars; strings to 4 KiB

    def __init__(self, listener: BackendListener, language: str = "go") -> None:
        ordered = OrderedEvents(listener)  # a pause or fatal error is moved to a user goroutine first
        super().__init__(ordered, language)
        self._ordered = ordered
        self._workdir: str | None = None  # dlv's working directory (where it builds)
        self._env: dict[str, str] | None = None
        self._build_dir: str | None = None  # our temporary directory for delve's output binary
        self._connect_to: tuple[str, int] | None = None  # a user's dlv --headless server
        self._build_error: str | None = None
        self._pipes = output.DlvPipes(self.name, self._proc, self._program_output)
        self._pumps: list[asyncio.Task[Any]] = []
        self._breakpoint_files: set[str] = set()  # cleared on detaching from a multi-client server
        self._capped: int | None = None  # goroutines delve listed, when it said it left some out
        self._left_out: str | None = None  # what the last listing left out
        self._stops = DelveStops(ordered, self._frames, self._request, self._stop_event, self._connected,
                                 self._program_gone)
        self._waits = waits.Waits(self._evaluate_in, self._stops.top_frames, lambda: self._stops.goroot,
                                  lambda: self._stops.generation)
        self._listed: tuple[int, list[int]] | None = None  # (stop, goroutine ids) of the last threads answer
        self._refs: tuple[int, dict[int, FrameRef]] = (-1, {})  # (stop, value ref → the frame it was read in)
        self._instructions = races.SharedInstructions(self._request)  # races.py's and calls.py's
        self._races = races.RaceStops(self._request, ordered.refine, self._stops.take, self._moving,
                                      self._instructions.send)
        self._functions: list[FunctionBreakpoint] = []  # the session's (races.py and testfail.py add their own)
        self._failures: testfail.TestFailures | None = None  # a test run's failures, placed
        self._calls: calls.DelveCalls | None = None  # the call trace recording (calls.py)
        self._traced: list[FunctionBreakpoint] = []  # its function breakpoints
        self._executable: str | None = None  # the one delve built, or the user's
        self._returns = StepReturns(self._request, ordered.refine, self._instructions.send, self._resume_at,
                                    self._frames)
        self._builds = False  # delve builds the program (from source): a restart builds it again

    # -- starting ---------------------------------------------------------------------------------

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        planned = build.launch(spec)
        self._workdir, self._build_dir, self._env = planned.workdir, planned.build_dir, planned.env
        self._executable = planned.arguments.get("output") or planned.arguments.get("program")
        self._builds = planned.arguments.get("mode") in ("debug", "test")
        if spec.test:  # stopped where testing fails the test, not in package testing (testfail.py)
            self._failures = testfail.TestFailures(self._stops)
        return planned.arguments

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        args = build.attach_arguments(spec)
        if spec.pid is None:
            self._connect_to = (spec.address, int(spec.port or 0))
        self._env = build.go_env()
        return args

    @property
    def _remote(self) -> bool:
        """Attached to a user's dlv --headless server."""
        return self._connect_to is not None

    async def _start_adapter(self) -> FramedStream:
        if self._connect_to is not None:
            host, port = self._connect_to
            try:
                return await asyncio.wait_for(FramedStream.connect_tcp(host, port, self.name), timeouts.CONNECT_S)
            except (OSError, asyncio.TimeoutError) as exc:
                raise UsageError(f"cannot connect to a delve server at {host}:{port} ({exc}); start one with "
                                 f"dlv --headless --listen={host}:{port} --accept-multiclient --api-version=2 "
                                 "exec ./yourbinary") from exc
        dlv = shutil.which("dlv")
        if dlv is None:
            raise EnvironmentProblem(f"dlv is not on PATH; {_INSTALL}")
        process = await self._proc.start([dlv, "dap", "--listen", "127.0.0.1:0"], env=self._env,
                                         cwd=self._workdir, stdin=asyncio.subprocess.DEVNULL, drain_stderr=False)
        assert process.stdout is not None and process.stderr is not None
        self._pumps = [self._life.spawn(self._pipes.pump(process.stderr, "stderr"), "dlv stderr")]
        try:
            try:
                host, port = await asyncio.wait_for(self._pipes.listening(process.stdout), START_TIMEOUT_S)
            except asyncio.TimeoutError as exc:
                raise EnvironmentProblem(f"dlv dap did not start listening within {START_TIMEOUT_S:g} s"
                                         f"{self._proc.stderr_hint()}") from exc
            self._pumps.append(self._life.spawn(self._pipes.pump(process.stdout, "stdout"), "dlv stdout"))
            try:
                return await asyncio.wait_for(FramedStream.connect_tcp(host, port, self.name), timeouts.CONNECT_S)
            except (OSError, asyncio.TimeoutError) as exc:
                raise EnvironmentProblem(f"cannot connect to dlv dap at {host}:{port}: {exc}") from exc
        except BaseException:
            await self.terminate()  # the session ends only adapters that started
            raise

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        async def configure_started() -> None:
            self._track_debuggee()
            await configure()
            await self._send_functions(race_stops=True)

        try:
            await super().launch(spec, configure_started, timeout_s)
        except AdapterRequestError as exc:
            raise AdapterRequestError(exc.command, build.build_failure(
                self._build_error, exc.message, spec.program)) from exc

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        # An attached program's output never passes through dlv: all dlv prints is its own.
        async def configure_with_races() -> None:
            await configure()
            await self._send_functions(race_stops=True)

        try:
            await super().attach(spec, configure_with_races, timeout_s)
            if spec.pid is not None:
                self._program_pid = spec.pid
                self._life.spawn(self._notice_killed(spec.pid), f"program {spec.pid} killed while stopped")
        except AdapterRequestError as exc:
            message = exc.message
            if self._remote and "no debugger found" in message:
                message = ("the delve server has no program to attach to (a `dlv dap` server starts one only on "
                           "launch): start the program under dlv --headless --listen=:PORT --accept-multiclient "
                           "--api-version=2 exec ./yourbinary, or use debug_launch")
            elif spec.pid is not None and ("permitted" in message or "ptrace" in message):
                message += ("; attaching needs ptrace rights: run as the program's user with "
                            "kernel.yama.ptrace_scope=0, or with CAP_SYS_PTRACE")
            raise AdapterRequestError(exc.command, message) from exc

    def _track_debuggee(self) -> None:
        """The launched program is dlv's child (in its own process group): remember it so it is killed with us."""
        self._pipes.program_started = True
        dlv = {stat.pid for stat in procs.descendants(self._proc.pid or 0) if stat.name == "dlv"}
        for child in procs.live_processes():
            if child.ppid in dlv:
                self._program_pid = child.pid
                self._proc.track_debuggee(child.pid)
                self._proc.watch_debuggee(child.pid, self._program_gone)
                self._life.spawn(self._notice_killed(child.pid), f"program {child.pid} killed while stopped")

    async def _notice_killed(self, pid: int) -> None:
        """End the session when the program is killed while delve holds it stopped. delve waits on the program
        only while it runs, so its killed threads stay zombies, which the pidfd watch does not count as an
        end, and delve says nothing until it is asked to resume it; so while stopped, the threads are looked
        at every ``KILLED_WHILE_STOPPED_POLL_S`` (a read of /proc, only while stopped)."""
        while not self._life.terminated:
            await asyncio.sleep(KILLED_WHILE_STOPPED_POLL_S)
            if self._stops.stopped and procs.threads_all_exited(pid):
                self._program_gone(PROGRAM_VANISHED)
                return

    def _tune_capabilities(self) -> None:
        caps = self.capabilities
        caps.hit_conditional_breakpoints = True  # delve parses hitCondition but does not advertise it
        caps.memory = True  # no readMemory: through [N]uint8 casts
        caps.registers = True
        caps.raw_command = True
        caps.data_breakpoints = False  # delve 1.20's DAP server has no data breakpoints
        caps.stops_on_faults = True  # an unrecovered panic, a fatal error

    def _connected(self) -> bool:
        return self._client is not None and not self._client.is_closed

    # -- events -----------------------------------------------------------------------------------

    def _on_stopped(self, body: dict[str, Any]) -> None:
        if self._returns.claims(body) or self._races.claims(body) or (self._calls is not None
                                                                       and self._calls.claims(body)):
            return
        panicked = self._returns.stopped(body)  # a step's end: what the function it left returned, or raised
        if panicked is not None:
            self._ordered.refine(panicked)
        self._stops.take(body)

    def _program_output(self, category: str, text: str) -> None:
        if category == "stderr":
            self._races.text.heard(text)  # a race report's text, for its stop
        elif self._failures is not None and category == "stdout":
            self._failures.output(text)  # a test failure's message, for its stop
        self._ordered.on_output(category, text)

    def _on_continued(self, body: dict[str, Any]) -> None:
        if self._ordered.refining:
            return  # the refinement resuming a goroutine for a moment: not the program moving on
        self._moving()
        super()._on_continued(body)

    def _on_output(self, body: dict[str, Any]) -> None:
        text = str(body.get("output", ""))
        category = str(body.get("category", "console"))
        if text.startswith("Build Error:"):
            self._build_error = text
        if category == "console":
            listed = goroutines.capped(text)
            if listed is not None:  # delve's word on its own listing, not the program's output
                self._capped = listed
                return
            code = output.exit_status(text)
            if code is not None:
                self._life.report_exited(code)
            if code is not None or output.is_housekeeping(text):
                return
        elif "line" in body and (message := output.logpoint_text(text)) is not None:  # delve prefixes logpoints
            body = {**body, "output": message}
        super()._on_output(body)

    def _on_terminated(self, body: dict[str, Any]) -> None:
        if not self._life.ending and not self._life.terminated:
            # The program ended: delve reports its exit status only while disconnecting, so end here.
            self._life.spawn(self.terminate(), "end at the program's end")
            return
        super()._on_terminated(body)

    # -- execution and breakpoints ------------------------------------------------------------------

    def _moving(self) -> None:
        super()._moving()
        self._stops.moving()
        self._returns.moving()
        self._races.forget()

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        self._breakpoint_files.add(file)
        return await super().set_breakpoints(file, breakpoints)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        """A step from a test failure's stop goes on from the test's line, not inside package testing."""
        if self._stops.above(thread_id) and not await self._stops.leave_hidden(thread_id, kind):
            return
        await self._returns.arm(thread_id, kind)  # what the function it may leave returns (returns.py)
        await super().step(thread_id, kind)

    async def resume(self, thread_id: int | None) -> None:
        await self._returns.disarm()  # the last step's RETs (returns.py)
        await super().resume(thread_id)

    async def _resume_at(self, thread: int, command: str = "continue") -> None:  # after a stop of polydbg's own
        self._moving()
        await self._request(command, {"threadId": thread})

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        self._functions = list(breakpoints)
        return await self._send_functions(race_stops=self._races.symbolizer_id is not None)

    async def _send_functions(self, race_stops: bool) -> list[BreakpointResult]:
        """The session's function breakpoints, with the internal ones that apply, kept out of the answer: with
        ``race_stops`` the one a race report stops at (races.py: bound only in a -race build), and in a test
        run the one on testing's Fail (testfail.py)."""
        internal = [FunctionBreakpoint(RACE_BREAKPOINT, races.SYMBOLIZER)] if race_stops else []
        internal += self._traced
        if self._failures is not None:
            internal.append(FunctionBreakpoint(FAILURE_BREAKPOINT, testfail.FAIL_FUNCTION))
        if not self._functions and not internal and self._calls is None:  # (a call trace's are taken away)
            return []
        results = await super().set_function_breakpoints(self._functions + internal)
        bound = {breakpoint.id for breakpoint, result in zip(internal, results[len(self._functions):], strict=False)
                 if result.verified}
        if race_stops:
            self._races.symbolizer_id = self._bound(RACE_BREAKPOINT, bound)
        if self._calls is not None and not self._calls.stopped:
            self._calls.bound({traced.id: native for traced in self._traced
                               if (native := self._bound(traced.id, bound)) is not None},
                              dict(zip((breakpoint.id for breakpoint in internal), results[len(self._functions):],
                                       strict=False)))
        if self._failures is not None:
            self._failures.native_id = self._bound(FAILURE_BREAKPOINT, bound)
            if self._failures.native_id is None:
                log.warning("delve: no breakpoint on %s: a test's failures stop nowhere", testfail.FAIL_FUNCTION)
        return results[:len(self._functions)]

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        """Every call of ``spec.functions``, recorded by stops taken and resumed at once (calls.py)."""
        if self._calls is not None and not self._calls.stopped:
            raise UsageError("a call trace is already recording in this session: let it end first")

        async def arm(wanted: list[FunctionBreakpoint]) -> None:
            self._traced = wanted
            await self._send_functions(race_stops=self._races.symbolizer_id is not None)
        trace = calls.DelveCalls(self._request, self._ordered.refine, self._resume_at, arm, self._instructions.send,
                                 spec, sink, build.module_path(self._workdir))
        self._calls = trace
        await trace.arm()
        refused = await trace.refusal(self._executable)
        if refused is not None:
            await trace.stop()
            raise refused
        return trace

    def _bound(self, internal_id: int, bound: set[int]) -> int | None:
        """delve's id of an internal function breakpoint, when it bound."""
        return self._breakpoints.ids.native_of(internal_id) if internal_id in bound else None

    # -- threads and frames -----------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        """delve's goroutines; when it lists only some (at most 1,024), how many there are (goroutines.py)."""
        self._capped = None
        found = await super().threads()
        self._listed = (self._stops.generation, [thread.id for thread in found])
        self._left_out = None
        if self._capped is not None:
            self._left_out = goroutines.left_out(len(found), await goroutines.counted(self._evaluate_unshaped))
        return found

    def threads_left_out(self) -> str | None:
        return self._left_out

    async def _goroutine_ids(self) -> list[int]:
        """The goroutines at this stop (the last listing's, when it was this stop's)."""
        if self._listed is None or self._listed[0] != self._stops.generation:
            await self.threads()
        assert self._listed is not None
        return self._listed[1]

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        """Each goroutine's state (Go's wait reason), the mutex it waits for and the ones it holds (waits.py)."""
        return await self._waits.locks(thread_ids, self._goroutine_ids)

    async def _hidden_frames(self, thread_id: int) -> int:
        return await self._stops.hidden_frames(thread_id)

    # At the entry point there is no goroutine yet (delve names "thread 1"): the current OS thread's stack is listed
    def _stack_thread(self, thread_id: int) -> int:
        return 0 if self._stops.at_entry else thread_id

    def _frame(self, raw: dict[str, Any]) -> Frame | None:  # (its frames past the runtime's entry unknown: "???")
        if self._stops.at_entry and raw.get("name") == "???":
            return None
        self._returns.seen(raw)
        return super()._frame(raw)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        """At a test failure, the frames hidden above the test's (Fail, Errorf, testify's: testfail.py); on a
        goroutine parked in the runtime, what it is blocked in (sync.(*Mutex).Lock, time.Sleep): the
        standard library's frames hidden above its own code."""
        failed = self._stops.above(thread_id)
        if failed:
            return failed
        frames = [DapBackend._frame(self, raw) for raw in await self._stops.library_above(thread_id)]
        return [frame for frame in frames if frame is not None]

    def _shown_total(self, total: object, hidden: int, start: int, count: int) -> int | None:
        return start + count if self._stops.at_entry else super()._shown_total(total, hidden, start, count)

    # -- values -----------------------------------------------------------------------------------

    def trace_thread(self) -> str:
        """The goroutine, from the ``> [Go N]: `` delve puts in front of a logpoint's line (``output``)."""
        return TRACE_THREAD

    def is_noise(self, variable: Variable) -> bool:
        """Unnamed results (~r0, ~r1): garbage until the function returns."""
        return variable.name.startswith("~r")

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        found = await super().scopes(frame)
        self._remember_frame(frame, [scope.ref for scope in found])
        self._returns.scopes(frame, [scope.ref for scope in found])
        return found

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        found = [tidy(v) for v in await super().variables(ref, start, count) if v.name not in METADATA]
        self._remember_frame(self._frame_of(ref), [v.ref for v in found])
        return self._returns.variables(ref, found, start)

    def returned_by(self, variable: Variable) -> str | None:
        return outcomes.returned_by(variable.name)  # a step's, first among frame 0's locals (returns.py)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        """Elements ``start..start+count`` of a slice, array or map (delve loads 64 at first)."""
        if not parent.ref or not parent.indexed_count:
            return None
        body = await self._request("variables", {"variablesReference": parent.ref, "filter": "indexed",
                                                 "start": start, "count": count})
        found = [tidy(plain(v)) for v in body.get("variables", [])]
        self._remember_frame(self._frame_of(parent.ref) or frame, [v.ref for v in found])
        return found

    async def reload(self, thread_id: int | None) -> Reloaded:
        """Go code cannot change in a running program; a restart of a program delve builds builds it again."""
        raise RestartNeeded("delve cannot change a running Go program's code", rebuilds=self._builds)

    async def set_exception_filters(self, filters: list[str]) -> None:
        """Go has no exceptions to choose: every unrecovered panic (and fatal error) stops where it happens."""
        if filters:
            raise UsageError(
                f"delve takes no exception filters or types ({echo(filters)}): Go has panics, not exceptions, and "
                "every panic that is not recovered stops the program where it panicked, with its value ($exception); a "
                "panic's type cannot be chosen. To stop at every panic, recovered ones too, "
                "debug_break(function=\"runtime.gopanic\")")
        await super().set_exception_filters(filters)

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        """``$exception`` is the value of the panic the goroutine is in (``runtime.curg._panic.arg``); at a test's
        failure (``t.Errorf``: no panic) the failure's message, as a Go string."""
        if thrown.names_it(expression):
            try:
                found = await self.evaluate(thrown.substitute(expression, "runtime.curg._panic.arg"), frame, context)
            except AdapterRequestError as exc:
                if "_panic" not in exc.message and "nil" not in exc.message:
                    raise
                failure = await self.exception_info(frame.thread_id) if frame is not None else None
                if failure is None or failure.type != testfail.FAILURE_TYPE:
                    raise thrown.not_at_an_exception("delve") from exc
                said = thrown.message(expression, failure.message, "string")
                if expression.strip() == thrown.NAME:
                    return said
                found = await self.evaluate(thrown.substitute(expression, said.value), frame, context)
            return found._replace(name=expression, evaluate_name=expression)
        value = tidy(await super().evaluate(expression, frame, context))
        if value.memory_reference is None and (value.type or "").startswith(("*", "unsafe.Pointer")):
            # delve shows a pointer as *<target> and sends no memoryReference: ask for the address
            with contextlib.suppress(AdapterRequestError):
                address = native.number((await super().evaluate(f"uintptr({expression})", frame, "watch")).value)
                if address is not None:
                    value = value._replace(memory_reference=hex(address))
        self._remember_frame(frame, [value.ref])
        return value

    def _remember_frame(self, frame: FrameRef | None, refs: list[int]) -> None:
        """Which frame the values behind ``refs`` were read in (set_variable needs it; delve ignores it)."""
        if self._refs[0] != self._stops.generation:
            self._refs = (self._stops.generation, {})
        if frame is not None:
            self._refs[1].update((ref, frame) for ref in refs if ref)

    def _frame_of(self, ref: int) -> FrameRef | None:
        return self._refs[1].get(ref) if self._refs[0] == self._stops.generation else None

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        """Set ``name`` in the frame it was read in, through its address (assign.py: delve's setVariable
        works in its current goroutine's topmost frame only)."""
        frame = self._frame_of(ref)
        target = next((v for v in await DapBackend.variables(self, ref) if v.name == name), None)
        if frame is None or target is None or not target.evaluate_name or not target.type:
            return await super().set_variable(ref, name, value)

        async def evaluate(expression: str) -> Variable:
            return await DapBackend.evaluate(self, expression, frame, "watch")
        address = await assign.address_of(evaluate, target.evaluate_name)
        if address is None:
            if await self._stops.is_delves_own(frame):
                return await super().set_variable(ref, name, value)
            raise UsageError(f"delve cannot set {name} in frame {frame.index} of thread {frame.thread_id}: it has no "
                             "address there (kept in a register by an optimised build), and delve sets such a "
                             "variable only in the topmost frame of the goroutine it stopped")
        new = await assign.value_for(evaluate, value, target.type)
        holder = await DapBackend.evaluate(self, assign.slot(target.type, address), None, "watch")
        if not holder.ref:
            return await super().set_variable(ref, name, value)
        body = await self._request("setVariable", {"variablesReference": holder.ref, "name": "[0]", "value": new})
        return wire.assigned(name, body)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        detail = self._races.detail_of(thread_id) or self._stops.moved_exception(thread_id)
        if detail is None:
            delve_s = await super().exception_info(thread_id)
            if delve_s is None:
                return None
            detail = ExceptionDetail(type=delve_s.type, message=unquote(delve_s.message))
        if detail.type == FATAL_ERROR and not detail.details:
            # what Go prints after "fatal error: all goroutines are asleep" (each goroutine's wait), read live
            ids = await self._goroutine_ids()
            found = await self.locks(ids)
            detail = detail._replace(details=tuple(waits.summary(self._waits.goroutines(), found, DETAIL_LINES)))
        return detail

    # -- native operations ------------------------------------------------------------------------

    async def _evaluate_in(self, expression: str, frame_id: int | None, whole: bool = False) -> Variable | None:
        """An expression in one of delve's frames (any goroutine's; None: its current goroutine's topmost), its
        value ``whole`` or as delve cuts it; None when delve cannot evaluate it."""
        where = {} if frame_id is None else {"frameId": frame_id}
        try:
            body = await self._request("evaluate", {"expression": expression, **where,
                                                    "context": "clipboard" if whole else "watch"})
        except AdapterRequestError:
            return None
        return wire.evaluated(expression, body)

    async def _evaluate_unshaped(self, expression: str) -> Variable:
        return await super().evaluate(expression, None, "watch")

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        return await native.read_memory(self._evaluate_unshaped, self._request, address, count)

    async def write_memory(self, address: int, data: bytes) -> int:
        return await native.write_memory(self._evaluate_unshaped, self._request, address, data)

    async def registers(self, frame: FrameRef) -> list[Variable]:
        """The frame's registers: delve lists them as a scope, switched on just for this read."""
        await self._dlv("config showRegisters true", frame)
        try:
            scopes = await self.scopes(frame)
            scope = next((s for s in scopes if s.name.lower() == "registers"), None)
            if scope is None:
                return []
            return [Variable(name=v.name.strip(), value=v.value, evaluate_name=v.evaluate_name)
                    for v in await super().variables(scope.ref)]
        finally:
            await self._dlv("config showRegisters false", frame)

    async def command(self, text: str, frame: FrameRef | None) -> str:
        command = native.dlv_command(text)
        try:
            return await self._dlv(command, frame)
        except AdapterRequestError as exc:
            refusal = native.unavailable(command, exc)
            if refusal is not None:
                raise refusal from exc
            raise

    async def _dlv(self, command: str, frame: FrameRef | None) -> str:
        return await super().command(f"dlv {command}", frame)

    # -- ending -----------------------------------------------------------------------------------

    async def _before_end(self, terminate_debuggee: bool) -> None:
        client = self._client
        if self._remote and not terminate_debuggee and client is not None and not client.is_closed:
            # A multi-client server keeps this client's breakpoints and leaves the program halted.
            with contextlib.suppress(Exception):
                for file in sorted(self._breakpoint_files):
                    await client.request("setBreakpoints", {"source": {"path": file}, "breakpoints": []},
                                         timeout=2.0)
                await client.request("setFunctionBreakpoints", {"breakpoints": []}, timeout=2.0)
                if self._stops.stopped:
                    await client.request("continue", {"threadId": 0}, timeout=2.0)

    async def _after_end(self, terminate_debuggee: bool) -> None:
        if self._pumps:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*self._pumps, return_exceptions=True), 1.0)
            for task in self._pumps:
                task.cancel()
        if self._build_dir is not None:
            shutil.rmtree(self._build_dir, ignore_errors=True)

