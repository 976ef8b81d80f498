"""XdebugBackend: the Backend protocol over Xdebug's DBGp — its life (launch, attach, the end), the connections
PHP makes to it, and the routing of each connection's breaks.

polydbg listens on a loopback port and PHP connects to it (``launcher.settings``): once for a script (the
program), once per request for a web server (``php -S``, PHP-FPM started with the settings), each connection
a thread (``request.Request``). A connection is set up while PHP waits at its start — features, output,
every breakpoint (``breakpoints``) — then run. Stops come as the answer to the continuation that ran it; the
break is judged here (a breakpoint's hit count, a logpoint, a step, an exception) and shown through a
``StopGate``: one stop at a time, another request's waiting until the shown one resumes. Values are
``inspection``'s.

A launched script's end is its process's exit; a web server runs until the session ends, its requests coming
and going as threads; an attached session (``debug_attach(language="php", port=N)``) only listens, for PHP
started elsewhere with the settings it prints.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import tempfile
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    LOGPOINT,
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
    Variable,
    logpoint_line,
)
from polydbg.backends.kit import returns, runtime, timeouts
from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.backends.kit.lifecycle import Lifecycle
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.backends.xdebug import launcher, tracing
from polydbg.backends.xdebug.breakpoints import FILTERS, GONE, UNCAUGHT, Breakpoints
from polydbg.backends.xdebug.checks import INTERPOLATION
from polydbg.backends.xdebug.inspection import PAGE, Inspection
from polydbg.backends.xdebug.request import ENDED, RUNNING, STARTING, STOPPED, PathMap, Request
from polydbg.dbgp.client import DbgpClient, Element, text_of
from polydbg.dbgp.stream import DbgpStream
from polydbg.errors import AdapterRequestError, AdapterTimeoutError, UsageError

CONNECT_BACK_S = 30.0  # from PHP's start until Xdebug connects (a cold start under load, not a socket's answer)
_STEPS = {"over": "step_over", "into": "step_into", "out": "step_out"}
_UNCAUGHT = re.compile(r"^Uncaught (?P<type>[\w\\]+):? ?(?P<message>.*?)(?: in (?P<where>\S+:\d+))?"
                       r"(?:\nStack trace:.*)?$", re.DOTALL)
PAUSE_LIMITS = ("Xdebug 3.2 reads no command while PHP runs (its supports_async is 0), so a running script cannot "
                "be paused: set a breakpoint on a line it runs (debug_break), or put xdebug_break(); in the code")


class XdebugBackend(Backend):
    """The Backend protocol over Xdebug."""

    name = "xdebug"
    evaluate_context: ClassVar[EvaluateContext] = "repl"
    pause_limits: ClassVar[str] = PAUSE_LIMITS
    threads_stop_apart: ClassVar[bool] = True

    def __init__(self, listener: BackendListener, language: str = "php") -> None:
        self.language = language
        self._gate = StopGate(listener, lambda thread: thread)
        self._events = GatedListener(self._gate)
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True, set_variable=True,
            exception_info=True, exception_filters=FILTERS, exception_types=True)
        self._life = Lifecycle("xdebug", self._events)
        self._proc = procs.DebuggerProcess("php")
        self._breakpoints = Breakpoints()
        self._inspection = Inspection()
        self._paths = PathMap()
        self._requests: dict[int, Request] = {}
        self._next_thread = 1
        self._server: asyncio.AbstractServer | None = None
        self._first: asyncio.Future[Request] | None = None  # a script's connection, awaited by launch
        self._copy_output = True  # stdout -c 1 (a web request's output is its response) or -c 2 (a script's)
        self._test: str | None = None  # a test run's runner script
        self._attached = False
        self._trace_dir: str | None = None  # a launched PHP's trace files (xdebug.mode=debug,trace)
        self._throws = tracing.Throws(self._user_stops, lambda file, line: bool(self._breakpoints.at(file, line)))

    # -- launch and attach ------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: the .php script (or, with runtime_args=[\"-S\", "
                                                "\"127.0.0.1:8000\"], the router script or document root to serve)")
        self._life.starting()
        self._test = os.path.abspath(spec.program) if spec.test else None
        php, load = launcher.require_php(spec.runtime)
        serving = launcher.serves(spec.runtime_args)
        self._copy_output = serving is not None
        port = await self._listen("127.0.0.1", 0)
        if serving is None:
            self._first = asyncio.get_running_loop().create_future()
        if serving is None:  # a script: Xdebug's trace mode, for call recordings
            self._trace_dir = tempfile.mkdtemp(prefix="polydbg-xdebug-")
        argv = launcher.command(php, load, port, spec.program, spec.args, spec.runtime_args, self._trace_dir)
        env = {**os.environ, **dict(spec.env), **(launcher.TRIGGER if self._trace_dir is not None else {})}
        given = os.open(self._proc.input_file(spec.stdin), os.O_RDONLY) if spec.stdin is not None else None
        try:
            process = await self._proc.start(argv, env=env, cwd=spec.cwd, drain_stderr=False,
                                             stdin=asyncio.subprocess.DEVNULL if given is None else given)
        finally:
            if given is not None:
                os.close(given)
        assert process.stdout is not None and process.stderr is not None
        readers = [self._life.spawn(runtime.pump(process.stdout, lambda text: self._events.on_output("stdout", text)),
                                    "stdout"),
                   self._life.spawn(runtime.pump(process.stderr, self._stderr), "stderr")]
        watch = self._life.spawn(self._watch_process(process, readers), "php's exit")
        if serving is not None:
            await configure()
            self._life.started()
            self._events.on_output("console", f"polydbg: PHP's built-in server listens on http://{serving}/; each "
                                              "request is a thread of this session and stops at the breakpoints\n")
            return
        assert self._first is not None
        done, _ = await asyncio.wait({self._first, watch}, timeout=min(timeout_s, CONNECT_BACK_S),
                                     return_when=asyncio.FIRST_COMPLETED)
        if self._first not in done:
            if watch in done:
                raise UsageError(f"php exited before Xdebug connected{self._proc.stderr_hint()}")
            raise AdapterTimeoutError(f"Xdebug did not connect within {timeout_s:g} s{self._proc.stderr_hint()}")
        request = self._first.result()
        await configure()
        await self._breakpoints.sync(request)
        self._life.started()
        request.entry = spec.stop_on_entry
        self._continue(request, "step_into" if spec.stop_on_entry else "run")

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        """Listen for PHP started elsewhere with Xdebug's settings (``host``:``port``, 127.0.0.1 by default)."""
        if spec.pid is not None or spec.port is None:
            raise UsageError("Xdebug cannot be attached to a running PHP process: PHP connects to the debugger as a "
                             "script or request starts. debug_attach(language=\"php\", port=9003) listens on that "
                             "port; then start PHP with " + " ".join(f"-d{s}" for s in launcher.settings(9003)))
        self._life.starting()
        self._attached = True
        self._paths = PathMap(spec.path_mappings)
        port = await self._listen(spec.address, spec.port)
        await configure()
        self._life.started()
        host = spec.host_in_url
        flags = " ".join(f"-d{s}" for s in launcher.settings(port, spec.address))
        self._events.on_output("console", (
            f"polydbg: listening on {host}:{port} for PHP with Xdebug; each script run or web request that connects "
            f"is a thread. Start PHP with: php {flags} script.php\n{launcher.FPM_ADVICE}\n"))

    async def _listen(self, host: str, port: int) -> int:
        try:
            self._server = await asyncio.start_server(self._connected, host, port)
        except OSError as exc:
            raise UsageError(f"cannot listen on {host}:{port} for Xdebug: {exc.strerror or exc}; pick another port "
                             "(Xdebug's default is 9003)") from exc
        return int(self._server.sockets[0].getsockname()[1])

    @property
    def program_pid(self) -> int | None:
        return None if self._attached else self._proc.debugger_pid()

    def _stderr(self, text: str) -> None:
        self._proc.remember(text[-600:])
        self._events.on_output("stderr", text)

    async def _watch_process(self, process: asyncio.subprocess.Process, readers: list[asyncio.Task[Any]]) -> None:
        code = await runtime.exit_code(process, readers)
        if self._life.ending or self._life.terminated or (self._first is not None and not self._first.done()):
            return
        runtime.report_end(self._life, code, "php", self._proc.stderr_hint())

    # -- connections ------------------------------------------------------------------------------------

    def _connected(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._life.ending:
            writer.close()
            return
        self._life.spawn(self._serve(DbgpStream(reader, writer)), "an Xdebug connection")

    async def _serve(self, stream: DbgpStream) -> None:
        """A new connection: its init packet, its setup, then it runs (a script's waits for launch to run it)."""
        thread_id = self._next_thread
        self._next_thread += 1
        client = DbgpClient(stream, f"xdebug request {thread_id}")
        init: asyncio.Future[Element] = asyncio.get_running_loop().create_future()
        client.on_event("init", lambda body: None if init.done() else init.set_result(body["element"]))
        client.on_event("stream", lambda body: self._events.on_output("stdout", body["text"]))
        client.start()
        try:
            packet = await asyncio.wait_for(init, timeouts.HANDSHAKE_S)
        except asyncio.TimeoutError:
            await client.close("no init packet: not Xdebug")
            return
        except asyncio.CancelledError:
            await client.close("the session ended")
            raise
        request = Request(client, thread_id, self._paths)
        request.test = self._test
        request.pid = int(packet.get("appid") or 0) or None
        self._requests[thread_id] = request
        self._life.spawn(self._watch_connection(request), f"request {thread_id}'s end")
        try:
            await self._setup(request, packet)
        except GONE:
            return
        if self._first is not None and not self._first.done():
            self._first.set_result(request)
            return
        try:
            await self._breakpoints.sync(request)
        except GONE:
            return
        self._continue(request, "run")

    async def _setup(self, request: Request, packet: Element) -> None:
        client = request.client
        features = [("max_children", str(PAGE)), ("max_data", "4096"), ("max_depth", "1")]
        futures = [client.send("feature_set", [("n", name), ("v", value)]) for name, value in features]
        futures.append(client.send("stdout", [("c", "1" if self._copy_output else "2")]))
        if self._copy_output:  # a web request: name the thread after it
            futures.append(client.send("eval", (), "($_SERVER['REQUEST_METHOD'] ?? 'php') . ' ' . "
                                                   "($_SERVER['REQUEST_URI'] ?? ($_SERVER['SCRIPT_NAME'] ?? ''))"))
        await asyncio.wait(futures, timeout=timeouts.INSPECT_S)
        named = futures[-1]
        if self._copy_output and named.done() and not named.cancelled() and named.exception() is None:
            prop = named.result().find("property")
            if prop is not None:
                request.name = f"{text_of(prop)} (request {request.thread_id})"
        elif not self._copy_output:
            request.name = os.path.basename(self._paths.local(packet.get("fileuri")) or "main")

    async def _watch_connection(self, request: Request) -> None:
        await request.client.closed.wait()
        await request.client.close("the script ended")  # its socket too, when PHP closed first
        request.state = ENDED
        self._requests.pop(request.thread_id, None)
        self._gate.ended(request.thread_id)

    # -- running and stopping -----------------------------------------------------------------------------

    def _continue(self, request: Request, command: str) -> None:
        if (command == "step_out") != request.returns:  # a step out's answer carries what the call returned
            request.returns = command == "step_out"
            request.client.send("feature_set", [("n", "breakpoint_include_return_value"),
                                                ("v", "1" if request.returns else "0")]).add_done_callback(_quiet)
        answer = request.go(command)
        self._life.spawn(self._answered(request, command, answer), f"request {request.thread_id} runs")

    async def _answered(self, request: Request, command: str, answer: asyncio.Future[Element]) -> None:
        try:
            stop = await answer
            if stop.get("status") == "break":
                if self._throws.calls is not None:
                    await self._throws.calls.settle(request)
                stop, command = await self._throws.on_break(request, stop, command)
        except (*GONE, asyncio.CancelledError):
            return
        if stop.get("status") != "break":  # "stopping": the script is done; Xdebug waits for us to let go
            request.state = ENDED
            await request.client.close("the script ended")
            return
        try:
            await self._breakpoints.sync(request)
        except GONE:
            return
        request.state, request.stop = STOPPED, stop
        request.returned = stop.find("return_value") if command == "step_out" else None
        event = await self._judge(request, command, stop)
        if event is None:
            self._continue(request, "run")
        else:
            self._events.on_stopped(event)

    async def _judge(self, request: Request, command: str, stop: Element) -> StopEvent | None:
        """What a break is: an exception, a step's end, a breakpoint that counts (None: one to run on from —
        a hit its hit condition skips, a logpoint)."""
        message = stop.find("message")
        file = request.paths.local(message.get("filename")) if message is not None else None
        line_text = message.get("lineno") if message is not None else None
        line = int(line_text) if line_text and line_text.isdigit() else None
        kind = message.get("exception") if message is not None else None
        tid = request.thread_id
        if kind and message is not None:
            if kind == UNCAUGHT and "*" in self._breakpoints.exceptions and text_of(message).startswith("Uncaught "):
                return None  # its throw was a stop already (raised): PHP's end on it is not another
            detail = self._exception(request)
            if detail is None or (request.test is not None and kind != UNCAUGHT and not await request.in_user_code()):
                return None  # PHPUnit handling a test's failure again, in its own code
            return StopEvent("exception", tid, f"{detail.type}: {detail.message}", detail.message,
                             thread_name=request.name)
        if request.entry:  # stop_on_entry's first step
            request.entry = False
            return StopEvent("entry", tid, thread_name=request.name)
        if command.startswith("step_"):
            return StopEvent("step", tid, thread_name=request.name)
        stopping: list[int] = []
        for placed in self._breakpoints.at(file, line):
            if not placed.counter.hit():
                continue
            if placed.spec.log_message is not None:
                await self._log(request, placed.spec.log_message)
            else:
                stopping.append(placed.spec.id)
        if stopping:
            return StopEvent("breakpoint", tid, hit_breakpoint_ids=tuple(stopping), thread_name=request.name)
        if self._breakpoints.at(file, line):
            return None
        return StopEvent("breakpoint", tid, "xdebug_break()", thread_name=request.name)

    async def _log(self, request: Request, message: str) -> None:
        parts: list[str] = []
        last = 0
        for found in INTERPOLATION.finditer(message):
            parts.append(message[last:found.start()])
            try:
                value = await self._inspection.evaluate(request, found.group(1), 0, None)
                parts.append(value.value)
            except (AdapterRequestError, UsageError) as exc:
                parts.append(f"<error: {exc}>")
            last = found.end()
        parts.append(message[last:])
        self._inspection.clear()
        self._events.on_output(LOGPOINT, logpoint_line("".join(parts)))

    # -- execution ------------------------------------------------------------------------------------

    def _stopped(self, thread_id: int | None, action: str) -> Request:
        tid = thread_id if thread_id is not None else self._gate.shown
        request = self._requests.get(tid) if tid is not None else None
        if request is None:
            live = ", ".join(f"{r.thread_id} ({r.name})" for r in self._requests.values()) or "none"
            raise AdapterRequestError(action, f"no request {tid} is connected (threads: {live})")
        if request.state != STOPPED:
            raise AdapterRequestError(action, request.not_stopped())
        return request

    def _run(self, request: Request, command: str) -> None:
        tid = request.thread_id
        if tid != self._gate.shown:
            self._gate.take(tid)
        self._inspection.clear()
        self._gate.continued(tid, False)
        self._continue(request, command)
        self._gate.resumed(tid)

    async def resume(self, thread_id: int | None) -> None:
        self._run(self._stopped(thread_id, "continue"), "run")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        self._run(self._stopped(thread_id, "step"), _STEPS[kind])

    async def pause(self, thread_id: int | None) -> None:
        raise UsageError(PAUSE_LIMITS)

    # -- breakpoints ----------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        results = self._breakpoints.replace(file, breakpoints)
        await self._sync_stopped()
        return results

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        return [BreakpointResult(False, message="PHP function breakpoints are not offered yet; set a line breakpoint "
                                                "on the function's first line") for _ in breakpoints]

    async def set_exception_filters(self, filters: list[str]) -> None:
        self._breakpoints.set_exceptions(filters)
        await self._sync_stopped()

    # -- recording while PHP runs (tracing.py) ---------------------------------------------------------------

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        """Every call of ``spec.functions`` (and their callees to ``spec.depth``), from Xdebug's function trace."""
        if self._throws.calls is not None and not self._throws.calls.stopped:
            raise UsageError("a call trace is already recording in this session: let it end first")
        request = self._waiting("record calls")
        await tracing.refuse_missing(request, spec.functions)
        calls = tracing.Calls(spec, sink, self._trace_dir or tempfile.gettempdir(), self._arm_throws)
        await calls.join(request)
        self._throws.calls = calls
        await self._arm_throws()
        return calls

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Every exception the user's code throws, caught or not, where it was caught (tracing.Throws)."""
        self._waiting("record raised exceptions")
        self._throws.raised = tracing.RaisedLog(sink, self._arm_throws)
        await self._arm_throws()
        return self._throws.raised

    def _waiting(self, action: str) -> Request:
        """The request a recording starts in: the shown stop's, or the script's waiting at its start."""
        waiting = [r for r in self._requests.values() if r.state in (STOPPED, STARTING)]
        shown = self._requests.get(self._gate.shown) if self._gate.shown is not None else None
        request = shown if shown is not None and shown.state == STOPPED else (waiting[0] if waiting else None)
        if request is None:
            raise UsageError(f"cannot {action} while PHP runs: {PAUSE_LIMITS}; or debug_launch(trace=[…]) to record "
                             "the run from its start")
        return request

    async def _arm_throws(self) -> None:
        """polydbg's own breakpoint on every throw while a recording runs."""
        self._breakpoints.set_internal(("*",) if self._throws.armed else ())
        await self._sync_stopped()

    async def _user_stops(self, request: Request, kind: str) -> bool:
        """Whether a throw of ``kind`` is one of the agent's exception stops."""
        names = [n for n in self._breakpoints.exceptions if n != UNCAUGHT]
        if not names or "*" in names or kind in names:
            return bool(names)
        classes = [n for n in names if n not in tracing.ERROR_KINDS]
        if not classes:
            return False
        test = " || ".join(f"is_a('{kind}', '{n}', true)" for n in classes if re.fullmatch(r"[\\\w]+", n))
        try:
            prop = (await request.client.request("eval", (), test or "false", timeouts.INSPECT_S)).find("property")
        except GONE:
            return True
        return prop is not None and text_of(prop) == "1"

    def returned_by(self, variable: Variable) -> str | None:
        return returns.returned_by(variable.name)

    async def _sync_stopped(self) -> None:
        """Requests that read commands now get the change; running ones get it at their next break."""
        for request in list(self._requests.values()):
            if request.state in (STOPPED, STARTING) and not request.client.is_closed:
                with contextlib.suppress(*GONE):
                    await self._breakpoints.sync(request)

    # -- inspection -----------------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        live = [r for r in self._requests.values() if r.state != ENDED]
        if len(live) == 1:
            return [Thread(live[0].thread_id, live[0].name)]
        return [Thread(r.thread_id, r.name + self._state(r)) for r in live]

    def _state(self, request: Request) -> str:
        if request.thread_id == self._gate.shown:
            return ""
        if request.state == STOPPED:
            return " (stopped too: its stop is shown when the shown one resumes)"
        return " (running)" if request.state == RUNNING else " (starting)"

    def frameless(self, thread: Thread) -> str | None:
        request = self._requests.get(thread.id)
        return request.not_stopped() if request is not None and request.state != STOPPED else None

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        request = self._stopped(thread_id, "stackTrace")
        frames = [request.frame(f) for f in await request.stack()]
        if not frames:  # PHP's end on an uncaught exception: the frames are gone, its place is in the message
            message = request.stop.find("message") if request.stop is not None else None
            if message is not None:
                line = message.get("lineno") or ""
                frames = [Frame("{uncaught}", request.paths.local(message.get("filename")),
                                int(line) if line.isdigit() else None)]
        return frames[start:start + levels], len(frames)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        request = self._requests.get(thread_id)
        return [request.frame(f) for f in reversed(request.hidden())] if request is not None else []

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        request = self._stopped(frame.thread_id, "scopes")
        if not await request.stack():
            return []
        return self._inspection.scopes(request, frame)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        return await self._inspection.variables(ref, start, count)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        return await self._inspection.child_slice(parent, start, count)

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        request = self._stopped(frame.thread_id if frame is not None else None, "evaluate")
        await request.stack()
        depth = request.depth(frame.index if frame is not None else 0)
        detail = self._exception(request)
        return await self._inspection.evaluate(request, expression, depth,
                                               (detail.type, detail.message) if detail is not None else None)

    def is_noise(self, variable: Variable) -> bool:
        """A local not assigned yet (Xdebug lists every variable the function names)."""
        return variable.type == "uninitialized"

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await self._inspection.set_variable(ref, name, value)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        request = self._requests.get(thread_id)
        return self._exception(request) if request is not None else None

    def _exception(self, request: Request) -> ExceptionDetail | None:
        message = request.stop.find("message") if request.stop is not None else None
        kind = message.get("exception") if message is not None else None
        if message is None or not kind:
            return None
        text = text_of(message)
        if kind != UNCAUGHT:
            return ExceptionDetail(kind, text)
        found = _UNCAUGHT.match(text)
        if found is None:
            return ExceptionDetail(kind, text)
        return ExceptionDetail(found.group("type"), found.group("message").strip(), (
            "PHP reports an uncaught exception once nothing is left to catch it: the frames and their locals are "
            f"gone. To stop where it is thrown, with its locals: debug_break(exception=[\"{found.group('type')}\"]) "
            "and debug_restart",))

    # -- the end --------------------------------------------------------------------------------------

    async def terminate(self) -> None:
        """A launched PHP is killed; attached, the stopped requests end (DBGp ``stop``: PHP ends the request as at
        an ``exit``, with what it printed so far), running ones run on, and the server — php -S, PHP-FPM, Apache,
        which polydbg did not start — is left running."""
        await self._life.end(lambda: self._end(kill=True))

    async def detach(self) -> None:
        """Every stopped request runs on without the debugger (``detach``), the listening socket closes."""
        for request in list(self._requests.values()):
            if request.state == STOPPED:
                with contextlib.suppress(*GONE):
                    await request.client.request("detach", timeout=2.0)
        await self._life.end(lambda: self._end(kill=False))

    async def _end(self, kill: bool) -> None:
        if self._server is not None:
            self._server.close()
        for request in list(self._requests.values()):
            if kill and self._attached and request.state == STOPPED:  # a request ends (PHP's exit), its server not
                with contextlib.suppress(*GONE):
                    await request.client.request("stop", timeout=2.0)
            await request.client.close("the session ended")
        if not self._attached:
            await self._proc.end(kill_debuggee=kill)
        calls = self._throws.calls
        if calls is not None and not calls.done:  # read to its end by the recording's stop
            calls.remove_directory = True
        elif self._trace_dir is not None:
            shutil.rmtree(self._trace_dir, ignore_errors=True)


def _quiet(future: asyncio.Future[Element]) -> None:
    if not future.cancelled():
        future.exception()
