"""The rdbg backend the registry names (``RdbgBackend``): a Ruby program started under rdbg's DAP server (or one
listening already) and connected to, its events routed, and what rdbg 1.4.0 lacks done in Ruby at a stop.

The jobs it hands on: the command line and the socket (``launch``), the program's pipes (``output``), the Ruby it
evaluates for breakpoints, exceptions and assignments (``ruby``), values and their paths (``values``). The
package docstring lists rdbg's quirks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any, ClassVar, TypeVar

from polydbg.backends.base import (
    AttachSpec,
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
    Variable,
)
from polydbg.backends.dap import wire
from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.kit import returns, thrown, timeouts
from polydbg.backends.rdbg import calls, failures, launch, output, ruby, values
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.errors import AdapterRequestError, EnvironmentProblem, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

START_TIMEOUT_S = 20.0  # ruby loading the debug gem and stopping at the program's first line (~0.2 s here)
EXIT_S = 2.0  # for the process to end once rdbg closed its socket
FILTERS = ("raised", "uncaught", failures.FILTER)
POSTMORTEM = "in `block in postmortem='"  # in the name of the thread rdbg's postmortem stop is on
NO_BINDING = "Error: Can not evaluate on this frame"  # rdbg's answer in a frame of a method written in C (a String's
# inspect at a pause's stop, bare in postmortem)
C_FRAMES = 4  # frames of C methods looked past for one with Ruby's locals
OWN_FRAMES = 64  # frames looked through for one to run polydbg's own Ruby in (a pause may stop in C methods)
RETURN_LOCALS = ("_return",)  # rdbg's locals at a method's return event: what it returns
T = TypeVar("T")


class RdbgBackend(DapBackend):
    name = "rdbg"
    adapter_id = "rdbg"
    evaluate_context: ClassVar[EvaluateContext] = "repl"
    pause_limits: ClassVar[str] = ("rdbg stops a thread only when it runs Ruby code (one blocked in I/O or sleep "
                                   "stops when it wakes)")

    def __init__(self, listener: BackendListener, language: str = "ruby") -> None:
        super().__init__(listener, language)
        self._pipes = output.RubyPipes(self.name, self._proc, self._program_output)
        self._pumps: list[asyncio.Task[Any]] = []
        self._plan: launch.Plan | None = None
        self._stdin: str | None = None
        self._socket_dir: str | None = None
        self._connect_to: tuple[str, int] | str | None = None  # an attach: (host, port) or a UNIX socket
        self._stop_on_entry = False
        self._stopped_thread: int | None = None  # the thread of the stop the program is at, None while it runs
        self._held: asyncio.Future[dict[str, Any]] | None = None  # a stop polydbg makes and keeps to itself
        self._internal_lock = asyncio.Lock()
        self._files: set[str] = set()  # files rdbg holds line breakpoints in (they must be deleted to change)
        self._filters: list[str] = []
        self._functions: list[FunctionBreakpoint] = []
        self._values = values.Values()
        self._finishing: tuple[int, int] | None = None  # a step out's (thread, its stack's depth before it)
        self._root: str | None = None  # a test run's project directory: its failures are shown in its frames
        self._above: dict[int, list[dict[str, Any]]] = {}  # per thread, the framework's frames hidden at this stop
        self._failed: str | None = None  # the object id of the last test failure's exception shown
        self._recorded = calls.Channel()  # where the program's call and exception recorder writes
        self._carried: tuple[int, Variable] | None = None  # what a step out's call returned, shown at the next stop

    # -- starting ---------------------------------------------------------------------------------

    def _tune_capabilities(self) -> None:
        # rdbg 1.4.0 answers setFunctionBreakpoints and setExceptionBreakpoints without doing what they ask, and has
        # no hit conditions, logpoints, setVariable or exceptionInfo: all of them are done here in Ruby
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True, function_breakpoints=True,
            set_variable=True, exception_info=True, exception_filters=FILTERS, exception_types=True)

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        self._socket_dir = tempfile.mkdtemp(prefix="polydbg-rdbg-")
        self._plan = launch.plan(spec, os.path.join(self._socket_dir, "rdbg.sock"))
        self._stop_on_entry = spec.stop_on_entry
        self._root = self._plan.cwd if spec.test else None
        if spec.stdin is not None:
            self._stdin = self._proc.input_file(spec.stdin)
        return {}

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        named = launch.socket_named(spec.program)
        if named is not None:
            self._connect_to = named
        elif spec.pid is not None:
            self._connect_to = launch.PID_SOCKET  # found when connecting: rdbg may print before it listens
            self._program_pid = spec.pid
        else:
            self._connect_to = (spec.address, int(spec.port or 0))
        return {}

    async def _start_adapter(self) -> FramedStream:
        if self._connect_to == launch.PID_SOCKET and self._program_pid is not None:
            self._connect_to = await launch.listening_socket_soon(self._program_pid)
        if self._connect_to is not None:
            return await self._connect(self._connect_to, attach=True)
        assert self._plan is not None and self._socket_dir is not None
        stdin: Any = open(self._stdin, "rb") if self._stdin is not None else asyncio.subprocess.DEVNULL  # noqa: SIM115
        try:
            process = await self._proc.start(self._plan.argv, env=self._plan.env, cwd=self._plan.cwd, stdin=stdin,
                                             drain_stderr=False)
        finally:
            if self._stdin is not None:
                stdin.close()
        assert process.stdout is not None and process.stderr is not None
        try:
            self._pumps = [self._life.spawn(self._pipes.pump(process.stdout, "stdout"), "ruby stdout")]
            try:
                await asyncio.wait_for(self._pipes.waiting(process.stderr), START_TIMEOUT_S)
            except asyncio.TimeoutError as exc:
                raise EnvironmentProblem(f"ruby did not stop at the program's first line within {START_TIMEOUT_S:g} s"
                                         f"{self._proc.stderr_hint()}") from exc
            self._pumps.append(self._life.spawn(self._pipes.pump(process.stderr, "stderr"), "ruby stderr"))
            pid = self._proc.debugger_pid()
            if pid is not None:  # rdbg runs inside the program: the debugger's process is the program's
                self._program_pid = pid
                self._proc.watch_debuggee(pid, self._program_gone)
            self._listener.on_output("console", f"rdbg: {self._plan.gem.describe()}\n")
            socket_path = os.path.join(self._socket_dir, "rdbg.sock")
            await launch.socket_soon(socket_path)
            return await self._connect(socket_path, attach=False)
        except BaseException:
            await self.terminate()
            raise

    async def _connect(self, where: tuple[str, int] | str, attach: bool) -> FramedStream:
        try:
            if isinstance(where, str):
                reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(where, limit=2**24),
                                                        timeouts.CONNECT_S)
                return FramedStream(reader, writer, self.name)
            return await asyncio.wait_for(FramedStream.connect_tcp(where[0], where[1], self.name), timeouts.CONNECT_S)
        except (OSError, asyncio.TimeoutError) as exc:
            at = where if isinstance(where, str) else f"{where[0]}:{where[1]}"
            hint = (" (start the program with rdbg --open --host=127.0.0.1 --port=PORT -- app.rb, or attach by its "
                    "pid)") if attach else self._proc.stderr_hint()
            error = UsageError if attach else EnvironmentProblem
            raise error(f"cannot connect to rdbg at {at}: {exc}{hint}") from exc

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        self._held = asyncio.get_running_loop().create_future()
        arguments = self._launch_arguments(spec)
        # rdbg's "launch" resumes the program at configurationDone; "attach" keeps it stopped there (the entry)
        await self._begin("attach" if self._stop_on_entry else "launch", arguments, self._configuring(configure),
                          timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        # "launch" here too: rdbg's "attach" interrupts the program once more, a stop that would come after the
        # resume (rdbg already interrupts a running program when a client connects)
        self._held = asyncio.get_running_loop().create_future()
        await self._begin("launch", self._attach_arguments(spec), self._configuring(configure), timeout_s)

    def _configuring(self, configure: Configure) -> Configure:
        async def configure_at_a_stop() -> None:
            await self._first_stop()
            # "attach" (stop_on_entry) stops again at configurationDone: that stop is held too
            self._held = asyncio.get_running_loop().create_future() if self._stop_on_entry else None
            await configure()
            if not self._stop_on_entry:
                self._moving()  # configurationDone resumes it ("launch"); a stop may come before its answer
        return configure_at_a_stop

    async def _first_stop(self) -> None:
        """Find the thread rdbg holds at the start: a launched program waits at its first line (no event says
        so); a running one stops at the attach's interrupt (its event)."""
        for thread in (await self._request("threads")).get("threads", []):
            with contextlib.suppress(AdapterRequestError):
                await self.stack_trace(int(thread["id"]), 0, 1)  # its top frame's id kept for configure's Ruby
                self._stopped_thread = int(thread["id"])
                return
        assert self._held is not None
        try:
            stop = await asyncio.wait_for(asyncio.shield(self._held), timeouts.INSPECT_S)
        except asyncio.TimeoutError as exc:
            raise EnvironmentProblem("rdbg did not stop the program when attached: its threads may all be blocked "
                                     "outside Ruby; try again when it runs Ruby code") from exc
        self._stopped_thread = stop.get("threadId") or 1

    async def _configured(self) -> None:
        """configurationDone resumed the program ("launch"), or stopped it ("attach": that stop is the entry)."""
        if self._stop_on_entry:
            await self._request("threads")  # rdbg sends the stop before it reads this: none is left to come
            self._held = None
            self._listener.on_stopped(StopEvent(reason="entry", thread_id=self._stopped_thread or 1))

    # -- the end ----------------------------------------------------------------------------------

    async def _watch_client(self, client: Any) -> None:
        """rdbg closes its socket when the program ends and sends no ``exited``: the end is the process's."""
        await client.closed.wait()
        if self._life.ending:
            return
        process = self._proc.process
        if process is not None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(process.wait(), EXIT_S)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.gather(*self._pumps, return_exceptions=True), EXIT_S)
            if process.returncode is not None:
                self._life.report_exited(process.returncode if process.returncode >= 0 else None)
                self._life.report_terminated(None)
                return
            self._life.report_terminated(await self._proc.exit_cause())
            return
        self._life.report_terminated("rdbg closed the connection: the program ended, or another client took it")

    async def _before_end(self, terminate_debuggee: bool) -> None:
        if terminate_debuggee or self._client is None or self._client.is_closed:
            return
        # a detached program keeps rdbg's breakpoints, and would wait at the next one for a debugger
        with contextlib.suppress(Exception):
            await self._ruby(ruby.forget_all())

    async def _after_end(self, terminate_debuggee: bool) -> None:
        if self._client is not None:  # closed by rdbg (the program ended), its socket is still ours to close
            await self._client.close("session ended")
        if self._socket_dir is not None:
            shutil.rmtree(self._socket_dir, ignore_errors=True)
        await self._recorded.close()

    # -- events -----------------------------------------------------------------------------------

    def _program_output(self, category: str, text: str) -> None:
        self._listener.on_output(category, text)

    def _on_stopped(self, body: dict[str, Any]) -> None:
        self._frames.clear()
        self._values.clear()
        self._above.clear()
        thread = body.get("threadId")
        self._stopped_thread = int(thread) if isinstance(thread, int) else 1
        if self._held is not None and not self._held.done():
            self._held.set_result(body)
            return
        if self._held is not None:  # another stop while polydbg holds one: taken in turn by its owner
            return
        if body.get("reason") == "step" and self._finishing is not None:
            self._life.spawn(self._finish(body, *self._finishing), "step out")
            return
        if body.get("reason") == "step" and "uncaught" in self._filters:
            self._life.spawn(self._maybe_postmortem(body), "postmortem stop")
            return
        if body.get("reason") == "exception" and self._root is not None:
            self._life.spawn(self._place_failure(body, self._root), "test failure")
            return
        self._listener.on_stopped(self._stop_event(body))

    async def _place_failure(self, body: dict[str, Any], root: str) -> None:
        """An exception stop of a test run, shown in the project's frame below the framework's (``failures``); a
        skip's is resumed unseen."""
        if failures.skipped(body.get("text")):
            await self.resume(None)
            return
        thread = self._stopped_thread or 1
        with contextlib.suppress(Exception):  # else the stop is shown as it came
            raw = (await self._request("stackTrace", {"threadId": thread})).get("stackFrames", [])
            if raw:
                identity = await self._request("evaluate", {"expression": failures.IDENTITY, "context": "repl",
                                                            "frameId": int(raw[0]["id"])})
                if identity.get("result") == self._failed and self._stopped_thread == thread:
                    await self.resume(None)  # raised again on its way out (test-unit's _wrap_assertion): shown once
                    return
                self._failed = str(identity.get("result"))
            if self._stopped_thread == thread and (hidden := failures.hidden(raw, root)):
                self._above[thread] = raw[:hidden]
        self._listener.on_stopped(self._stop_event(body))

    def _stop_event(self, body: dict[str, Any]) -> StopEvent:
        reason = str(body.get("reason", "unknown"))
        text = body.get("text") or body.get("description")
        if reason == "breakpoint" and text == "temporary bp":
            reason, text = "step", None
        if reason == "exception" and isinstance(text, str):
            text = values.raised_text(text)
        return StopEvent(reason=reason, thread_id=self._stopped_thread, description=text if reason == "exception"
                         else None, text=text if reason == "exception" else None)

    async def _maybe_postmortem(self, body: dict[str, Any]) -> None:
        """A "step" stop with uncaught exceptions on may be rdbg's postmortem: the program ended by an exception,
        stopped in the frames where it was raised (its thread runs rdbg's ``postmortem=`` hook). A program's
        ``exit`` is such an exception too: resumed."""
        thread = self._stopped_thread or 1
        found = None
        with contextlib.suppress(Exception):  # else the stop is shown as it came
            names = {t.id: t.name for t in await self.threads()}
            if POSTMORTEM in names.get(thread, ""):
                found = await self.exception_info(thread)
        if found is not None and found.type == "SystemExit":
            await self.resume(None)
        elif found is not None:
            text = f"{found.type}: {found.message}"
            self._listener.on_stopped(StopEvent(reason="exception", thread_id=thread, description=text, text=text))
        else:
            self._listener.on_stopped(self._stop_event(body))

    async def resume(self, thread_id: int | None) -> None:
        self._carried = None
        await super().resume(thread_id)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        self._finishing = None
        self._carried = None
        if kind == "out":
            _, depth = await self.stack_trace(thread_id, 0, 1)
            self._finishing = (thread_id, depth or 0)
        await super().step(thread_id, kind)

    async def _finish(self, body: dict[str, Any], thread: int, depth: int) -> None:
        """rdbg's step out (``finish``) stops at the method's return, still in it: one step more reaches the
        caller, where the other debuggers' step out stops."""
        self._finishing = None
        with contextlib.suppress(Exception):
            _, now = await self.stack_trace(thread, 0, 1)
            if now is not None and now >= depth and self._stopped_thread == thread:
                self._carried = await self._outcome_here(thread)
                await super().step(thread, "over")
                return
        self._listener.on_stopped(self._stop_event(body))

    def _moving(self) -> None:
        super()._moving()
        self._values.clear()
        self._above.clear()
        self._stopped_thread = None

    # -- Ruby at a stop ---------------------------------------------------------------------------

    async def _ruby(self, code: str) -> dict[str, Any]:
        """Evaluate polydbg's ``code`` in the program: at the stop it is at, else at a stop made for it (the
        program is interrupted, and resumed after; a breakpoint's stop that came instead is shown)."""
        if self._stopped_thread is not None:
            return await self._evaluate_at(FrameRef(self._stopped_thread, 0), code, OWN_FRAMES)
        return await self._held_stop(lambda: self._evaluate_at(FrameRef(self._stopped_thread or 1, 0), code,
                                                               OWN_FRAMES))

    async def _held_stop(self, work: Callable[[], Awaitable[T]]) -> T:
        async with self._internal_lock:
            held = self._held = asyncio.get_running_loop().create_future()
            try:
                await self._request("pause", {"threadId": 0})
                try:
                    stop = await asyncio.wait_for(asyncio.shield(held), timeouts.INSPECT_S)
                except asyncio.TimeoutError as exc:
                    raise AdapterRequestError(
                        "pause", "rdbg did not stop the program to change its breakpoints (every thread may be blocked "
                        "outside Ruby); change them at a stop") from exc
                result = await work()
            finally:
                self._held = None
            if stop.get("reason") == "pause":
                await self.resume(None)
            else:
                self._listener.on_stopped(self._stop_event(stop))
            return result

    async def _evaluate_at(self, frame: FrameRef, code: str, frames: int = C_FRAMES) -> dict[str, Any]:
        """Evaluate ``code`` in ``frame``, or in the first of the ``frames`` below it that has Ruby's locals (a
        method written in C, ``[C] Kernel#exit``, has none: rdbg answers it cannot evaluate there)."""
        body: dict[str, Any] = {}
        for index in range(frame.index, frame.index + frames):
            try:
                frame_id = await self._frame_id(FrameRef(frame.thread_id, index))
            except AdapterRequestError:
                if body:
                    break  # no frame more: the last answer stands
                raise
            body = await self._request("evaluate", {"expression": code, "context": "repl", "frameId": frame_id})
            if ruby.unquote(str(body.get("result"))) != NO_BINDING:
                break
        return body

    async def _ruby_json(self, code: str) -> Any:
        body = await self._ruby(code)
        failed = ruby.failure(str(body.get("result", "")), body.get("type"))
        if failed is not None:
            raise AdapterRequestError("evaluate", f"rdbg could not run polydbg's Ruby: {failed}")
        try:
            return ruby.decoded(str(body.get("result", "null")))
        except ValueError as exc:
            raise AdapterRequestError("evaluate", "rdbg answered polydbg's Ruby with something else than its value: "
                                      f"{str(body.get('result'))[:200]!r}") from exc

    # -- breakpoints ------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        conditions = [bp.condition or "" for bp in breakpoints]
        errors: list[Any] = [None] * len(breakpoints)
        if file in self._files or any(conditions):
            errors = list(await self._ruby_json(ruby.prepare_lines(file, conditions)))
        self._files.add(file)
        kept = [bp for bp, error in zip(breakpoints, errors, strict=True) if not error]
        sent = [{"line": bp.line, **({"condition": c} if (c := ruby.condition(
            bp.id, bp.condition, bp.hit_condition, bp.log_message)) else {})} for bp in kept]
        if sent:
            await self._request("setBreakpoints", {"source": {"path": file}, "breakpoints": sent})
        return [BreakpointResult(False, message=f"its condition is not Ruby: {error}") if error else
                BreakpointResult(True, line=bp.line) for bp, error in zip(breakpoints, errors, strict=True)]

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        specs = []
        for bp in breakpoints:
            try:
                specs.append((*ruby.method_spec(bp.name), ruby.condition(bp.id, bp.condition, bp.hit_condition, None)))
            except ValueError:
                raise UsageError(f"{bp.name!r} is not a Ruby method name: write Class#method (an instance method), "
                                 "Class.method (a class method) or method (one defined at the top level)") from None
        self._functions = breakpoints
        failures = list(await self._ruby_json(ruby.methods(specs))) if specs or self._functions else []
        return [BreakpointResult(False, message=f"waits for the method to be defined ({failure})") if failure else
                BreakpointResult(True)
                for failure in failures]

    async def set_exception_filters(self, filters: list[str]) -> None:
        self._filters = list(filters)
        classes = ["Exception" if f == "raised" else f for f in filters if f not in ("uncaught", failures.FILTER)]
        if failures.FILTER in filters:
            classes = list(dict.fromkeys([*failures.ASSERTIONS, *classes]))
        await self._ruby(ruby.exceptions(classes, "uncaught" in filters))

    # -- recording while the program runs (calls.py) ---------------------------------------------------

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        """Calls recorded by a TracePoint in the program, armed at a stop (``calls``, ``shims/recorder.rb``)."""
        return await calls.record_calls(self._recorded, spec, sink, self._recorder_ruby, self._gone)

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        return await calls.record_raised(self._recorded, sink, self._recorder_ruby, self._gone)

    async def _recorder_ruby(self, code: str) -> Any:
        if self._connect_to is not None and not isinstance(self._connect_to, str) \
                and self._connect_to[0] not in ("127.0.0.1", "localhost", "::1"):
            raise UsageError("calls are recorded through a socket on this machine: a program attached at "
                             f"{self._connect_to[0]} cannot reach it; trace lines with debug_trace(points=…)")
        return await self._ruby_json(ruby.guarded(ruby.returning_json(code)))

    def _gone(self) -> bool:
        return self._client is None or self._client.is_closed

    # -- frames and values ------------------------------------------------------------------------

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        body = await self._request("stackTrace", {"threadId": thread_id})  # rdbg answers every frame, always
        raw = body.get("stackFrames", [])[len(self._above.get(thread_id, ())):]
        frames = [wire.frame(f) for f in raw[start:start + levels]]
        self._frames.remember(thread_id, start, [int(f["id"]) for f in raw[start:start + levels]])
        return frames, len(raw)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        """A test failure's framework frames (minitest's ``assert``, RSpec's failure notifier) above the test's."""
        return [wire.frame(raw) for raw in self._above.get(thread_id, ())]

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        found = await super().scopes(frame)
        # rdbg 1.4.0's globals scope answers "Not implemented yet..." for every value: left out
        kept = [scope for scope in found if scope.hint != "globals"]
        for scope in kept:
            self._values.scope(scope.ref, frame)
        return kept

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        body = await self._request("variables", self._values.request(ref, start, count))
        found = self._values.children(ref, [wire.variable(v) for v in body.get("variables", [])])
        frame = self._values.frame_of(ref)
        return found if frame is None or frame.index != 0 else await self._with_outcome(frame, found)

    async def _outcome_here(self, thread: int) -> tuple[int, Variable] | None:
        """At a method's return event (rdbg's ``finish`` stop), what it returned (``_return``), named for the
        caller's stop (``kit.returns``)."""
        for scope in await self.scopes(FrameRef(thread, 0)):
            for variable in await self.variables(scope.ref):
                if returns.returned_by(variable.name) is not None:
                    return thread, variable._replace(ref=0)  # its children belong to this stop
            break
        return None

    async def _with_outcome(self, frame: FrameRef, found: list[Variable]) -> list[Variable]:
        """A top frame's locals: rdbg's ``_return`` at a return event named as what the call returned, and a step
        out's value carried from the return event to the caller."""
        if not any(v.name in RETURN_LOCALS for v in found) and (self._carried is None or
                                                                 self._carried[0] != frame.thread_id):
            return found
        frames, _ = await self.stack_trace(frame.thread_id, 0, 1)
        function = frames[0].name if frames else None
        named = [v._replace(name=returns.returned_name(function)) if v.name in RETURN_LOCALS and function else v
                 for v in found]
        if self._carried is not None and self._carried[0] == frame.thread_id:
            named.insert(0, self._carried[1])
        return named

    def returned_by(self, variable: Variable) -> str | None:
        return returns.returned_by(variable.name)

    def length_of(self, parent: Variable, children: list[Variable]) -> int | None:
        return parent.indexed_count or None

    def is_noise(self, variable: Variable) -> bool:
        return variable.name == "#class"

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        thread = frame.thread_id if frame is not None else self._stopped_thread
        if thread is None:
            raise UsageError("rdbg evaluates only in a stopped frame: debug_pause first")
        at = frame or FrameRef(thread, 0)
        raised = failures.RAISED if self._above.get(thread) else "_raised"  # a test failure's: in a frame below
        code = ruby.guarded(thrown.substitute(expression, raised) if thrown.names_it(expression) else expression)
        self._evaluations.refuse_if_busy(thread)
        for index in range(at.index, at.index + C_FRAMES):  # past methods written in C (no locals to evaluate in)
            arguments = {"expression": code, "context": "repl",
                         "frameId": await self._frame_id(FrameRef(thread, index))}
            found = wire.evaluated(expression, await self._evaluations.run(self.client, thread, code, arguments))
            if ruby.unquote(found.value) != NO_BINDING:
                break
        else:
            raise AdapterRequestError("evaluate", "rdbg evaluates nothing in these frames (an exception's frames after "
                                      "the program ended: rdbg 1.4.0 keeps no bindings there); read the values with "
                                      "debug_variables")
        failed = ruby.failure(found.value, found.type)
        if failed is not None:
            if thrown.names_it(expression) and "_raised" in failed:
                raise thrown.not_at_an_exception("rdbg")
            raise AdapterRequestError("evaluate", failed)
        return self._values.evaluated(found, at)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        frame, code = self._values.assignment(ref, name, value)
        body = await self._evaluate_at(frame, ruby.guarded(code))
        found = wire.evaluated(name, body)
        failed = ruby.failure(found.value, found.type)
        if failed is not None:
            raise AdapterRequestError("setVariable", failed)
        return found

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        """The exception of the stop: rdbg lists it among the top frame's locals as ``_raised`` (at a catch
        breakpoint and in postmortem, where rdbg 1.4.0 evaluates nothing)."""
        above = self._above.get(thread_id)
        if above:  # a test failure's: raised in the framework's top frame, hidden
            answer = await self._request("scopes", {"frameId": int(above[0]["id"])})
            scopes = [scope for raw in answer.get("scopes", []) if (scope := wire.scope(raw)).hint != "globals"]
        else:
            scopes = await self.scopes(FrameRef(thread_id, 0))
        for scope in scopes:
            for variable in await self.variables(scope.ref):
                if variable.name in ("_raised", "%raised"):
                    return values.exception(variable)
        return None
