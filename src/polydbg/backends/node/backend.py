"""NodeBackend: the Backend protocol over the V8 inspector — its life and the routing of CDP events.

This module starts Node (``launcher``) or reaches a running one, connects to its main target, routes
each target's CDP events to the part that owns them, and ends the session once (``kit.Lifecycle``):
the targets as they come and go are ``targets``, breakpoints ``breakpoints``, pauses, stepping and
``debug_pause`` ``stops``, values ``inspection``, raw commands ``commands``. What the debugger is and
its quirks are in the package's docstring (``polydbg.backends.node``).

A launched program's end is its process's exit (read here, with its output pipes); an attached one's
is its inspector connection closing. Node waits for the debugger to disconnect once a program is
done (``NodeRuntime.waitingForDisconnect``): the connection is closed so it can exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    LOGPOINT,
    TRACE_THREAD,
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
    Thread,
    Variable,
    logpoint_line,
)
from polydbg.backends.kit import returns, runtime, timeouts
from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.backends.kit.lifecycle import Lifecycle
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node import commands, compile_errors, conditions, failures, inspection, launcher
from polydbg.backends.node import values as jsv
from polydbg.backends.node.breakpoints import FILTERS as EXCEPTION_FILTERS
from polydbg.backends.node.breakpoints import Breakpoints
from polydbg.backends.node.calls import CallRecording, search_home
from polydbg.backends.node.children import ChildReports
from polydbg.backends.node.reload import reload as reload_edited
from polydbg.backends.node.scripts import PathMap, path_of
from polydbg.backends.node.stops import PAUSE_LIMITS, Stops
from polydbg.backends.node.target import Target
from polydbg.backends.node.targets import Targets, prepare
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.backends.timecontrol import Reloaded
from polydbg.cdp.client import CdpChannel
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, UsageError, echo
from polydbg.namespaces import Forwarder

ASYNC_FRAMES = 20  # the callers past awaits listed at most (V8 keeps up to targets.ASYNC_DEPTH segments)


class NodeBackend(Backend):
    """The Backend protocol over Node's inspector."""

    name = "node"
    evaluate_context: ClassVar[EvaluateContext] = "repl"
    pause_limits: ClassVar[str] = PAUSE_LIMITS
    threads_stop_apart: ClassVar[bool] = True

    def __init__(self, listener: BackendListener, language: str = "javascript") -> None:
        self.language = language
        self._gate = StopGate(listener, lambda thread: thread)
        self._events = OrderedEvents(GatedListener(self._gate))  # the program's (and its main thread's) events
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True,
            function_breakpoints=True, set_variable=True, exception_info=True,
            exception_filters=EXCEPTION_FILTERS, exception_types=True, raw_command=True)
        self._life = Lifecycle("node", self._events)
        self._proc = procs.DebuggerProcess("node")
        self._attached = False
        self._forwarder: Forwarder | None = None  # attached in a container: its inspector's port, on ours
        self._targets = Targets(self._life, self._gate, self._events, route=self._route,
                                configure=self._configure_target, forget=self._forget_target)
        self._breakpoints = Breakpoints(self._targets)
        self._stops = Stops(self._targets, self._breakpoints, self._life, self._gate)
        self._children = ChildReports(self._targets.on_child_report)
        self._protocol = commands.Protocol()  # the methods Node knows, read when an answer needs them
        self._unstopped_throw: str | None = None  # an exception that ended the program without a stop
        self._cwd: str | None = None
        self._program: str | None = None  # a launch's script: its folder holds the functions a trace names
        self._build_error: asyncio.Task[str | None] | None = None  # a TypeScript loader's refusal, being read

    # -- launch and attach --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: the .js, .mjs, .cjs or .ts file to run")
        self._life.starting()
        self._cwd = spec.cwd
        self._program = spec.program
        self._breakpoints.workers_run_tests = spec.test and failures.workers_run_tests(spec.program)
        argv = launcher.command(launcher.find_node(spec.runtime), spec.program, spec.args, spec.runtime_args)
        env = self._children.environment({**os.environ, **dict(spec.env)}, self._children.open())
        given = os.open(self._proc.input_file(spec.stdin), os.O_RDONLY) if spec.stdin is not None else None
        try:
            process = await self._proc.start(argv, env=env, cwd=spec.cwd, drain_stderr=False,
                                             stdin=asyncio.subprocess.DEVNULL if given is None else given)
        finally:
            if given is not None:
                os.close(given)
        assert process.stderr is not None and process.stdout is not None
        url = await launcher.read_inspector_url(process.stderr, self._proc, timeout_s)
        readers = [self._life.spawn(runtime.pump(process.stdout, lambda text: self._events.on_output("stdout", text)),
                                    "stdout"),
                   self._life.spawn(launcher.read_stderr(process.stderr, self._proc,
                                                         lambda text: self._events.on_output("stderr", text)),
                                    "stderr")]
        self._life.spawn(self._watch_process(process, readers), "process watch")
        main = await self._connect_main(url, timeout_s, _node_under(process.pid))
        self._stops.stop_on_entry = spec.stop_on_entry
        await configure()
        await main.request("Runtime.runIfWaitingForDebugger", timeout=timeout_s)
        self._life.started()

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        self._life.starting()
        self._attached = True
        self._targets.paths = PathMap(spec.path_mappings)
        host = spec.address
        if spec.pid is not None:
            try:
                os.kill(spec.pid, signal.SIGUSR1)  # Node opens its inspector (127.0.0.1:9229) on SIGUSR1
            except OSError as exc:
                raise AdapterRequestError("attach", f"cannot signal pid {spec.pid}: {exc}") from exc
            port = spec.port or 9229
            if spec.namespaces is not None and spec.namespaces.net:  # its 127.0.0.1 is the container's own
                self._forwarder = Forwarder(spec.pid, port)
                host, port = "127.0.0.1", await self._forwarder.start()
            url = await launcher.discover_after_signal(host, port, timeout_s)
        else:
            url = await launcher.discover(host, int(spec.port or 9229), min(timeout_s, 5.0))
        main = await self._connect_main(url, timeout_s, spec.pid)
        await configure()
        await main.request("Runtime.runIfWaitingForDebugger", timeout=timeout_s)
        self._life.started()

    @property
    def program_pid(self) -> int | None:
        main = self._targets.find_main()
        return main.pid if main is not None else None

    async def _connect_main(self, url: str, timeout_s: float, pid: int | None) -> Target:
        client = await CdpChannel.connect(url, "node", min(timeout_s, timeouts.CONNECT_S))
        main = self._targets.add(client, "main", "main", self._events, pid, inspector=launcher.http_address(url))
        client.on_event("Runtime.exceptionThrown", self._on_exception_thrown)
        def finished(_: dict[str, Any]) -> None:
            self._life.spawn(self._program_finished(), "program finished")
        client.on_event("NodeRuntime.waitingForDisconnect", finished)
        self._life.spawn(self._watch_main(client), "main connection watch")
        await prepare(main, timeout_s)
        return main

    # -- routing ------------------------------------------------------------------------------------------

    def _route(self, target: Target) -> None:
        """A new target's CDP events to the parts that own them (``Targets`` keeps its own)."""
        channel = target.channel
        channel.on_event("Debugger.paused", lambda params: self._stops.on_paused(target, params))
        channel.on_event("Debugger.resumed", lambda _: self._stops.on_resumed(target))
        channel.on_event("Debugger.scriptParsed", lambda params: self._breakpoints.on_script(target, params))
        channel.on_event("Debugger.breakpointResolved", lambda params: self._breakpoints.on_resolved(target, params))
        channel.on_event("Runtime.consoleAPICalled", lambda params: self._on_console(target, params))
        channel.on_event("Runtime.bindingCalled", lambda params: self._on_binding(target, params))

    def _on_binding(self, target: Target, params: dict[str, Any]) -> None:
        if self._stops.recording is not None:
            self._stops.recording.on_binding(target, params)

    def _on_console(self, target: Target, params: dict[str, Any]) -> None:
        line = conditions.logged_line(params)
        if line is not None:  # a trace's mark of the thread: the target that logged (main, a worker, a child)
            self._events.on_output(LOGPOINT, logpoint_line(line.replace(TRACE_THREAD, target.name, 1)))

    async def _configure_target(self, target: Target) -> None:
        await self._breakpoints.configure(target)
        if self._stops.recording is not None and not self._stops.recording.stopped:
            await self._stops.recording.arm(target)

    def _forget_target(self, target: Target) -> None:
        self._breakpoints.forget(target)

    # -- the program's end ---------------------------------------------------------------------------------

    async def _watch_process(self, process: asyncio.subprocess.Process, readers: list[asyncio.Task[Any]]) -> None:
        code = await runtime.exit_code(process, readers)
        if not self._life.ending:
            self._finish(code)

    async def _watch_main(self, client: CdpChannel) -> None:
        await client.closed.wait()
        if self._life.ending or self._life.terminated:
            return
        if self._attached:
            self._finish(None, "the Node process closed the inspector connection (it exited, or another debugger "
                               "took over)")
        # a launched program's end is reported when its process exits (_watch_process)

    async def _program_finished(self) -> None:
        """Node waits for the debugger to disconnect once the program is done: let it exit (once what is
        still read of the exception that ended it has been read)."""
        if self._build_error is not None:
            await asyncio.wait({self._build_error}, timeout=timeouts.INSPECT_S)
        main = self._targets.find_main()
        if main is not None:
            await main.channel.close("the program finished")
        if self._attached:
            self._finish(None)

    def _on_exception_thrown(self, params: dict[str, Any]) -> None:
        """Node reports an exception that is ending the program: a TypeScript loader's refusal of a file is
        the program's end (``compile_errors``); one that never paused (V8 counted it as caught: a rejection
        awaited through Promise.all, an ES module's top-level throw, nodejs/node#50430) is explained at the exit,
        with where it came from."""
        main = self._targets.find_main()
        details = params.get("exceptionDetails") or {}
        if main is not None and self._build_error is None and _maybe_compile_error(details.get("exception") or {}):
            self._build_error = self._life.spawn(self._read_build_error(main, details.get("exception") or {}))
            return
        if ((main is not None and main.pause_reason in ("exception", "promiseRejection"))
                or not self._breakpoints.breaks_on_exceptions):
            return
        frames = (details.get("stackTrace") or {}).get("callFrames") or []
        where = ""
        for frame in frames:
            path = path_of(str(frame.get("url") or ""))
            path = None if path is None else self._targets.paths.local(path)
            if path is not None and "/node_modules/" not in path:
                where = f" at {path}:{int(frame.get('lineNumber', 0)) + 1}"
                break
        self._unstopped_throw = f"uncaught {jsv.exception_text(details)}{where}"

    async def _read_build_error(self, main: Target, exception: dict[str, Any]) -> str | None:
        """The whole text of a compile error (an ES module's arrives as a plain Error, its preview cut)."""
        text = str(exception.get("description") or "")
        if not compile_errors.is_compile_error(text) and "objectId" in exception:
            with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
                found = await main.request("Runtime.callFunctionOn", {
                    "objectId": exception["objectId"], "returnByValue": True,
                    "functionDeclaration": "function() { return String(this && this.message); }"})
                text = str((found.get("result") or {}).get("value") or "")
        return compile_errors.describe(text, self._cwd)

    def _finish(self, code: int | None, cause: str | None = None) -> None:
        """Report the program's end, once: a build error as what ended it."""
        if self._life.terminated:
            return
        task = self._build_error
        build_error = task.result() if task is not None and task.done() and not task.cancelled() else None
        if build_error is not None and code:
            self._life.report_terminated(f"{build_error}\nnode exited with code {code}: fix the file and "
                                         "debug_restart")
            return
        if self._unstopped_throw is not None and code:
            self._events.on_output("console", (
                f"polydbg: the program ended on an {self._unstopped_throw}; Node reported it as caught, so it could "
                "not stop there (V8 counts a throw as caught when a promise handler was to receive it: a rejection "
                "awaited through Promise.all or given to a .then, an ES module's top-level throw, nodejs/node#50430): "
                "set a breakpoint on that line and debug_restart\n"))
        if cause is not None:
            self._life.report_terminated(f"{cause}{self._proc.stderr_hint()}")
            return
        runtime.report_end(self._life, code, "node", self._proc.stderr_hint())

    # -- the session's end ----------------------------------------------------------------------------------

    async def terminate(self) -> None:
        async def work() -> None:
            if self._attached:
                await self._kill_attached()
            await self._close(kill=True)
        await self._life.end(work)

    async def _kill_attached(self) -> None:
        """Ending an attached program as ending a launched one does: SIGKILL, sent by the program to itself
        (it may be on another host), evaluated also while it is paused or busy (Node runs inspector
        messages between statements); it does not answer, so the wait is short."""
        main = self._targets.find_main()
        if main is None or main.channel.is_closed:
            return
        with contextlib.suppress(Exception):
            await main.channel.request("Runtime.evaluate", {"expression": "process.kill(process.pid, 'SIGKILL')"},
                                       timeout=1.0)
        if self._forwarder is not None:  # in a container it may be pid 1 there, which ignores its own SIGKILL
            with contextlib.suppress(ProcessLookupError):
                os.kill(self._forwarder.pid, signal.SIGKILL)

    async def detach(self) -> None:
        async def work() -> None:
            for target in self._targets.all():
                channel = target.channel
                if channel.is_closed:
                    continue
                with contextlib.suppress(Exception):
                    self._breakpoints.release(target)
                    await channel.request("Debugger.disable", timeout=2.0)
                    await channel.request("Runtime.runIfWaitingForDebugger", timeout=2.0)
            await self._close(kill=False)
        await self._life.end(work)

    async def _close(self, kill: bool) -> None:
        self._children.close()
        for target in self._targets.all():
            target.events.cancel()
        self._events.cancel()
        for target in sorted(self._targets.all(), key=lambda t: t.kind == "main"):  # the main connection last
            await target.channel.close("the session ended")
        if not self._attached:
            await self._proc.end(kill_debuggee=kill)
        if self._forwarder is not None:  # after the connections it carries
            await self._forwarder.close()

    # -- breakpoints and execution ------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        self._check_connected()
        return await self._breakpoints.set_breakpoints(file, breakpoints)

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        self._check_connected()
        return await self._breakpoints.set_function_breakpoints(breakpoints)

    def _check_connected(self) -> None:
        """Once the program has run, no live target means its connection closed as it finished (Node waits for
        the debugger to let go, then exits): a change has nowhere to go, and the session reads the exit."""
        if self._life.is_started and not self._targets.live():
            raise AdapterGoneError("node is not connected: the program has finished")

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        self._check_connected()
        if self._stops.recording is not None and not self._stops.recording.stopped:
            raise UsageError("a call trace is already recording in this session: let it end first")
        home = search_home(self._program, self._cwd or os.getcwd())
        recording = CallRecording(spec, sink, home, self._targets.paths, self._targets.live, self._disarm)
        await recording.resolve(self._targets.live())
        self._stops.recording = recording
        await self._breakpoints.record_exceptions(True, recording.mapped)
        for target in self._targets.live():
            await recording.arm(target)
        return recording

    async def _disarm(self) -> None:
        self._stops.recording = None
        await self._breakpoints.record_exceptions(False)

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self._breakpoints.set_exception_filters(filters)

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Every throw with a frame of the user's code, recorded at a pause resumed at once (raised.py)."""
        await self._breakpoints.record_raised(sink)
        return _RaisedRecorder(self._breakpoints, sink)

    async def resume(self, thread_id: int | None) -> None:
        await self._stops.resume(thread_id)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        await self._stops.step(thread_id, kind)

    async def pause(self, thread_id: int | None) -> None:
        await self._stops.pause(thread_id)

    async def reload(self, thread_id: int | None) -> Reloaded:
        """The edited files put into every target, the stopped thread's changed function re-entered (``reload``)."""
        self._check_connected()
        return await reload_edited(self._targets, self._breakpoints, thread_id, self._cwd)

    # -- inspection -------------------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        """Every target; in a session of several, each but the one whose stop is shown says what it does."""
        live = self._targets.live()
        if len(live) == 1:
            return [Thread(live[0].thread_id, live[0].name)]
        return [Thread(t.thread_id, t.name + self._state(t)) for t in live]

    def _state(self, target: Target) -> str:
        if target.thread_id == self._gate.shown:
            return ""
        if target.reported:
            return " (stopped too: its stop is reported when the shown one is resumed)"
        if target.held:
            return " (starting: its breakpoints are being set)"
        return " (running)"

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        """A stopped thread's frames; a running one has none to read (Node stops each thread on its own)."""
        target = self._targets.get(thread_id)
        if not target.paused:
            raise AdapterRequestError("stackTrace", self._running(target))
        return target.stack_trace(start, levels)

    def frameless(self, thread: Thread) -> str | None:
        target = self._targets.find(thread.id)
        return self._running(target) if target is not None and not target.paused else None

    def _running(self, target: Target) -> str:
        """Why a thread that runs while another is stopped lists no frames, and how to see them."""
        stopped = [f"thread {t.thread_id} ({t.name})" for t in self._targets.live() if t.paused]
        return (f"thread {target.thread_id} ({target.name}) is running, not stopped: Node stops each thread on its "
                f"own, and {' and '.join(stopped) or 'no thread'} {'is' if len(stopped) < 2 else 'are'} stopped. "
                f"debug_pause(thread_id={target.thread_id}) pauses it to inspect it (the stop shown now waits, and "
                "is shown again once it resumes)")

    async def async_callers(self, thread_id: int) -> list[tuple[str, list[Frame]]]:
        return self._targets.get(thread_id).async_callers(ASYNC_FRAMES)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        return inspection.scopes(self._targets.get(frame.thread_id), frame.index)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        return await inspection.variables(self._targets.of_ref(ref), ref, start, count)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        target = self._targets.of_ref(parent.ref)
        handle = target.refs.get(parent.ref)
        if handle is None or handle.kind != "object":
            return None
        return await inspection.children(target, handle, start, count)

    def trace_interpolation(self, expression: str) -> str:
        """A trace's value, a string quoted (``conditions.AS_VALUE``); refused when its braces, quotes or backticks
        would end it elsewhere in the message (``conditions.pieces``)."""
        piece = "{" + conditions.AS_VALUE + expression + "}"
        if conditions.interpolated(piece) != [expression]:
            raise UsageError(f"the trace expression {echo(expression)} does not end where it begins: a brace, quote "
                             "or backtick in it is left open or closes what it did not open; balance it (one inside "
                             "a string is fine: \"}\"), or trace a local variable holding the value")
        return piece

    def trace_thread(self) -> str:
        """The target that hit (main, a worker, a child process), named as the stacks name it (``_on_console``)."""
        return TRACE_THREAD

    def is_noise(self, variable: Variable) -> bool:
        return inspection.is_noise(variable)

    def returned_by(self, variable: Variable) -> str | None:
        return returns.returned_by(variable.name)  # listed first among frame 0's locals (node/returns.py)

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        target = self._targets.get(frame.thread_id if frame is not None else None)
        return await inspection.evaluate_variable(target, expression, frame.index if frame is not None else None)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await inspection.set_variable(self._targets.of_ref(ref), ref, name, value)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        return self._targets.get(thread_id).frames_above()

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        target = self._targets.get(thread_id)
        if target.pause_reason not in ("exception", "promiseRejection") or not target.paused:
            return None
        return target.exception_detail()

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """A raw CDP method: ``Debugger.getScriptSource {"scriptId": "42"}``, the answer as JSON; ``help
        [Domain[.method]]`` lists the domains, a domain's methods, a method's parameters."""
        target = self._targets.get(frame.thread_id if frame is not None else None)
        asked, topic = commands.help_topic(text)
        if asked:
            return await self._protocol.help(target.inspector, topic)
        method, params = commands.parse(text)
        return await commands.send(target, self._protocol, method, params)


def _node_under(guard: int) -> int | None:
    """The pid of the Node a launch started: the only child of its guard (``polydbg.guard``)."""
    try:
        with open(f"/proc/{guard}/task/{guard}/children", encoding="ascii") as handle:
            children = handle.read().split()
    except OSError:
        return None
    return int(children[0]) if len(children) == 1 else None


def _maybe_compile_error(exception: dict[str, Any]) -> bool:
    """Whether an uncaught exception looks like a TypeScript loader's compile error: by its text, or by the
    preview of the plain Error Node's ESM loader rethrows it as."""
    props = {p.get("name"): p.get("value") for p in (exception.get("preview") or {}).get("properties") or []}
    return (compile_errors.is_compile_error(str(exception.get("description") or ""))
            or props.get("name") == "TransformError"
            or compile_errors.is_compile_error(str(props.get("message") or "")))


class _RaisedRecorder:
    def __init__(self, breakpoints: Breakpoints, sink: RaisedSink) -> None:
        self._breakpoints = breakpoints
        self._sink = sink

    async def stop(self) -> list[str]:
        if self._breakpoints.raised_sink is self._sink:
            await self._breakpoints.record_raised(None)
        return []
