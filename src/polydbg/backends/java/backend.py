"""JavaBackend: the Backend protocol over JDWP, straight to the JVM's built-in ``jdwp`` agent — its
lifecycle (launch, attach, the end), the connection, and the routing of the agent's events; every other
job is a part of its own, which this class builds once and delegates to.

Launch: a ``.java`` or ``.kt`` program is compiled first (launcher.py, kotlin.py); polydbg listens on a
loopback port and the JVM, started with ``suspend=y``, connects to it; requests are set while the VM
waits at its start (``configure``), then it runs. Only the JVM polydbg started may connect; anything
else is turned away. The JVM's exit is the program's: its status comes from the process (the agent
reports VM death, not the exit code), after its output has been read.

Attach (attach.py): a JVM whose agent listens (``server=y``) is suspended while the breakpoints are set
— in the classes it has loaded already, found by one scan — then resumed (twice when it waited at its
start for a debugger). Its end is the agent's VM death before the connection closes; a connection closed
without one is a JVM killed, or a broken connection. terminate tells an attached JVM to exit
(``VirtualMachine.Exit``, status 1) once the attach completed, and leaves it as it was before.

The parts share ``vm.Vm`` (the connection and its caches) and the current stop (``threads.CurrentStop``):
sources.py finds source files, threads.py the threads and frames, breakpoints.py line breakpoints and
stop_on_entry, methods.py method breakpoints, watch.py field watchpoints, exceptions.py exception
filters and details, conditions.py conditions and logpoints, stepping.py steps, stops.py turns composite
events into stops, inspection.py reads and sets values, commands.py answers ``debug_command``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Sequence
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    TRACE_THREAD,
    AttachSpec,
    Backend,
    BackendListener,
    BreakpointResult,
    Capabilities,
    Configure,
    DataBreakpoint,
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
from polydbg.backends.java import attach as java_attach
from polydbg.backends.java import commands as java_commands
from polydbg.backends.java import kotlin, launcher, mainclass
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.breakpoints import EntryBreakpoint, LineBreakpoints
from polydbg.backends.java.calltrace import CallTrace
from polydbg.backends.java.conditions import Conditions
from polydbg.backends.java.exceptions import FILTERS as EXCEPTION_FILTERS
from polydbg.backends.java.exceptions import Exceptions
from polydbg.backends.java.inspection import Inspection
from polydbg.backends.java.methods import MethodBreakpoints
from polydbg.backends.java.monitors import Monitors
from polydbg.backends.java.reentry import Reentry
from polydbg.backends.java.reload import Reloader
from polydbg.backends.java.sources import Sources, launch_roots
from polydbg.backends.java.stepping import Stepping
from polydbg.backends.java.stops import Stops
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.watch import FieldWatches
from polydbg.backends.kit import returns, runtime, timeouts
from polydbg.backends.kit.lifecycle import Lifecycle, Phase
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.backends.timecontrol import Reloaded
from polydbg.errors import AdapterRequestError, AdapterTimeoutError, UsageError
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import CommandSet, EventKind

CONNECT_BACK_S = 30.0  # from the JVM's start until its agent connects back (a JVM start, not a socket's answer)
END_REQUEST_S = 2.0  # each request of the end (VirtualMachine.Exit, Dispose …): the JVM may be going


class JavaBackend(Backend):
    """The Backend protocol over JDWP."""

    name = "java"
    evaluate_context: ClassVar[EvaluateContext] = "watch"
    pause_limits: ClassVar[str] = "the JVM did not suspend"

    def __init__(self, listener: BackendListener, language: str = "java") -> None:
        self.language = language
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True, set_variable=True,
            exception_info=True, exception_filters=EXCEPTION_FILTERS, exception_types=True, function_breakpoints=True,
            data_breakpoints=True, raw_command=True)
        self._events = OrderedEvents(listener)
        self._life = Lifecycle("java", self._events)
        self._proc = procs.DebuggerProcess("java")
        self._compiled: str | None = None  # the private directory a .java or .kt program was compiled into
        self._java: str | None = None  # the java a launched program runs on
        self._attached = False  # the JVM was attached to (not launched): terminate asks it to exit
        self._attached_pid: int | None = None  # the JVM's pid when attached by pid
        self._vm_died = False  # the agent reported VM death (an attached JVM's exit, not a lost connection)
        self._stderr_text = ""  # the JVM's last stderr, for a launch's error
        changed = self._events.on_breakpoint_changed
        vm = self._vm = jvm.Vm()
        self._sources = Sources(vm, lambda: self._lines.files())
        threads = self._threads = Threads(vm, self._sources)
        conditions = Conditions(vm, threads, self._events.on_output)
        self._lines = LineBreakpoints(vm, self._sources, conditions, changed, self._classes_may_be_loaded)
        self._entry = EntryBreakpoint(vm, self._events.on_output)
        self._main = mainclass.MainClassWatch(vm)
        self._methods = MethodBreakpoints(vm, changed)
        self._watches = FieldWatches(vm, changed)
        self._exceptions = Exceptions(vm, threads)
        self._stepping = Stepping(vm, threads)
        self._inspection = Inspection(vm, threads)
        self._monitors = Monitors(vm, threads)
        reentry = Reentry(vm, threads)
        self._stops = Stops(vm, threads, lines=self._lines, entry=self._entry, methods=self._methods,
                            watches=self._watches, exceptions=self._exceptions, stepping=self._stepping,
                            conditions=conditions, listener=self._events.target, internal=reentry.take)
        self._reloader = Reloader(vm, threads, self._sources, self._lines, self._methods, reentry,
                                  lambda: self._compiled, lambda: self._java)

    def _classes_may_be_loaded(self) -> bool:
        """Whether the JVM may have loaded program classes: not while a launched one waits at its start."""
        return self._attached or self._life.phase >= Phase.STARTED

    # -- launch and attach ------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: a .java file, a .jar, a .class file or a class name")
        self._life.starting()
        self._reloader.began()
        java = self._java = launcher.find_java(spec.runtime)
        program = spec.program
        if program.lower().endswith(".java"):
            self._compiled = tempfile.mkdtemp(prefix="polydbg-java-")
            await launcher.compile_source(launcher.find_javac(java), program, self._compiled,
                                          min(timeout_s, timeouts.COMPILE_S))
        elif program.lower().endswith(".kt"):
            self._compiled = tempfile.mkdtemp(prefix="polydbg-kotlin-")
            await kotlin.compile_source(program, launcher.main_class_of(program).rpartition(".")[0], self._compiled,
                                        min(timeout_s, timeouts.COMPILE_S))
        self._sources.add_roots(launch_roots(spec))
        server_ready: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
            asyncio.get_running_loop().create_future())

        def connected(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if server_ready.done():
                writer.close()  # only the JVM we started connects; anything else is turned away
            else:
                server_ready.set_result((reader, writer))

        server = await asyncio.start_server(connected, "127.0.0.1", 0)
        try:
            port = int(server.sockets[0].getsockname()[1])
            argv = launcher.command(java, port, program, spec.args, spec.runtime_args, self._compiled)
            env = {**os.environ, **dict(spec.env)}
            given = os.open(self._proc.input_file(spec.stdin), os.O_RDONLY) if spec.stdin is not None else None
            try:
                process = await self._proc.start(argv, env=env, cwd=spec.cwd, drain_stderr=False,
                                                 stdin=asyncio.subprocess.DEVNULL if given is None else given)
            finally:
                if given is not None:
                    os.close(given)
            assert process.stdout is not None and process.stderr is not None
            readers = [self._life.spawn(runtime.pump(process.stdout, lambda text: self._events.on_output(
                "stdout", text)), "stdout"), self._life.spawn(runtime.pump(process.stderr, self._stderr), "stderr")]
            exited = asyncio.ensure_future(process.wait())
            waiting: set[asyncio.Future[Any]] = {server_ready, exited}
            done, _ = await asyncio.wait(waiting, timeout=min(timeout_s, CONNECT_BACK_S),
                                         return_when=asyncio.FIRST_COMPLETED)
            if server_ready not in done:
                exited.cancel()
                if exited in done:
                    await asyncio.wait_for(asyncio.shield(asyncio.gather(*readers)), 1.0)
                    raise UsageError(f"the JVM exited before its debug agent connected{self._proc.stderr_hint()}")
                raise AdapterTimeoutError(f"the JVM's debug agent did not connect within {timeout_s:g} s"
                                          f"{self._proc.stderr_hint()}")
            exited.cancel()
        finally:
            server.close()
        reader, writer = server_ready.result()
        self._life.spawn(self._watch_process(process, readers), "the JVM's exit")
        await self._connect(reader, writer, timeout_s)
        main = mainclass.main_class(program, spec.runtime_args, self._compiled)
        if main is not None:
            await self._main.request(main)
        if spec.stop_on_entry:
            await self._entry.request(launcher.entry_class(program, self._compiled))
        await configure()
        self._life.started()
        await self._vm.resume()
        if main is not None:
            code = await self._main.wait(min(timeout_s, CONNECT_BACK_S))
            if code is not None:
                raise mainclass.not_loaded(main, code, self._stderr_text,
                                           mainclass.classpath(argv, env, spec.cwd or os.getcwd()),
                                           program if program.lower().endswith(".java") else None)

    @property
    def program_pid(self) -> int | None:
        """The JVM's: the process launched under the guard, or the one attached to by pid."""
        return self._attached_pid if self._attached else self._proc.debugger_pid()

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        """A JVM whose agent listens (``server=y``; attach.py). It is suspended while the breakpoints are
        set — in the classes it has loaded already, found by a scan — then resumed; one that waits for a
        debugger at its start (``suspend=y``) is started too."""
        self._attached = True  # its classes are loaded: breakpoints bind in them at once
        self._attached_pid = spec.pid
        self._life.starting()
        self._reloader.began()
        host, port = java_attach.address(spec)
        await java_attach.connect(host, port, timeout_s, self._connect)
        waiting = await java_attach.suspended_at_start(self._vm)
        await self._vm.suspend()
        self._life.spawn(self._watch_connection(self._vm.client), "the JVM's connection")
        self._sources.add_roots(await java_attach.source_roots(self._vm, spec))
        await jvm.program_classes(self._vm)  # known with their source files: a breakpoint set now binds at once
        self._events.on_output("console", f"polydbg: attached to the JVM at {host}:{port}; its output is not captured "
                                          "(it goes where the JVM was started)\n")
        await configure()
        for _ in range(2 if waiting else 1):
            await self._vm.resume()
        self._life.started()  # the attach completed: terminate ends the JVM (before, it is left alone)

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout_s: float) -> None:
        client = await JdwpClient.connect(reader, writer, min(timeout_s, timeouts.HANDSHAKE_S))
        self._vm.connect(client, self._sources.path)
        client.on_event("events", self._route)

    def _route(self, body: dict[str, Any]) -> None:
        """A composite event packet: VM death is the lifecycle's; the rest becomes a stop or a quiet
        resume (stops.py), with later events kept waiting meanwhile."""
        events = body["events"]
        if any(event.kind == EventKind.VM_DEATH for event in events):
            self._vm_died = True
        self._main.seen(events)
        if self._stops.recording is not None:
            self._stops.recording.arrived(events)
        self._events.refine(self._stops.handle(events))

    def _stderr(self, text: str) -> None:
        self._proc.remember(text[-600:])
        self._stderr_text = (self._stderr_text + text)[-4000:]
        self._events.on_output("stderr", text)

    # -- the end --------------------------------------------------------------------------------------

    async def _watch_process(self, process: asyncio.subprocess.Process, readers: list[asyncio.Task[Any]]) -> None:
        """The JVM's exit is the program's (the agent reports VM death, not the exit code)."""
        code = await runtime.exit_code(process, readers)
        if self._main.exited(code) or self._life.ending or self._life.terminated:
            return  # (an exit before the main class loaded is the launch's error)
        runtime.report_end(self._life, code, "the JVM", self._proc.stderr_hint())

    async def _watch_connection(self, client: JdwpClient) -> None:
        """An attached JVM's end: the agent reports VM death and closes the connection (a JVM killed
        just closes it). Decided after the events before it are handled."""
        await client.closed.wait()
        self._events.deliver(self._attached_end)

    def _attached_end(self) -> None:
        if self._life.ending or self._life.terminated:
            return
        if self._vm_died:
            self._life.report_exited(None)
            self._life.report_terminated(None)
        else:
            self._life.report_terminated("the JVM closed the debug connection without reporting its end: it was "
                                         "killed, or the connection broke")

    async def terminate(self) -> None:
        """Ends the program: a launched JVM is killed, an attached one told to exit (VirtualMachine.Exit,
        status 1) — unless the attach did not complete, which leaves it as it was."""
        client = self._vm.connection
        if self._attached and self._life.is_started and client is not None and not client.is_closed:
            with contextlib.suppress(Exception):
                await client.request(CommandSet.VM, 10, client.writer().i4(1).bytes(), "VirtualMachine.Exit",
                                     END_REQUEST_S)
        await self._life.end(lambda: self._end(kill=True))

    async def detach(self) -> None:
        """Leaves the program running: breakpoints and the step cleared, a stopped JVM resumed, then
        VirtualMachine.Dispose (which cancels every other request and resumes what JDWP suspended)."""
        client = self._vm.connection
        if client is not None and not client.is_closed:
            with contextlib.suppress(Exception):
                await client.request(CommandSet.EVENT_REQUEST, 3, b"", "EventRequest.ClearAllBreakpoints",
                                     END_REQUEST_S)
                await self._stepping.end()
                if self._threads.stop.thread is not None:
                    self._mark_running()
                    await client.request(CommandSet.VM, 9, b"", "VirtualMachine.Resume", END_REQUEST_S)
            with contextlib.suppress(Exception):
                await client.request(CommandSet.VM, 6, b"", "VirtualMachine.Dispose", END_REQUEST_S)
        await self._life.end(lambda: self._end(kill=False))

    async def _end(self, kill: bool) -> None:
        self._events.cancel()
        client = self._vm.connection
        if client is not None:
            await client.close("the session ended")
        await self._proc.end(kill_debuggee=kill)
        if self._compiled is not None:
            shutil.rmtree(self._compiled, ignore_errors=True)
            self._compiled = None

    # -- breakpoints ----------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        return await self._lines.replace(file, breakpoints)

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        if self._stops.recording is not None and not self._stops.recording.stopped:
            raise UsageError("a call trace is already recording in this session: let it end first")
        trace = CallTrace(self._vm, self._threads, spec, sink)
        self._stops.recording = trace  # before its requests: their first events may come at once
        try:
            await trace.arm()
        except BaseException:
            await trace.stop()
            raise
        return trace

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        """Method breakpoints: ``Class.method``, ``pkg.Class.method``, ``Outer.Inner.method``, a bare
        ``method`` — every overload, in classes loaded now and later (methods.py)."""
        return await self._methods.replace(breakpoints, self._classes_may_be_loaded())

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        """Field watchpoints: ``this.count``, ``obj.field``, ``Class.staticField``, a bare field, read in
        ``frame`` (watch.py)."""
        at = None
        if frame is not None:
            with contextlib.suppress(AdapterRequestError):
                at = await self._threads.frame_at(frame)
        return await self._watches.replace(breakpoints, at)

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self._exceptions.set_filters(filters)

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Every throw the program's code makes or catches, recorded on the throwing thread (raised.py)."""
        return await self._exceptions.record_raised(sink)

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """Read-only queries of the JVM (commands.py): ``classes [glob]``, ``methods <Class>``,
        ``fields <Class>``, ``threads``, ``version``, ``classpath``, ``sourcepaths``, ``help``."""
        context = java_commands.Context(self._threads.stop.thread, self._threads.id_of, list(self._sources.roots),
                                        sorted(self._lines.files()))
        return await java_commands.run(self._vm, text, context)

    # -- execution ------------------------------------------------------------------------------------

    def _mark_running(self) -> None:
        """The program moves on: what was read at the stop is dropped (and the session told, if it was shown)."""
        reported = self._threads.stop.clear()
        self._threads.forget_frames()
        self._inspection.clear()
        if reported:
            self._events.on_continued(None, True)

    async def resume(self, thread_id: int | None) -> None:
        self._mark_running()
        await self._vm.resume()

    async def step(self, thread_id: int, kind: StepKind) -> None:
        thread = self._threads.jdwp(thread_id)
        call = self._threads.calls.running(thread)
        if call is not None:  # the step would end only once the call returns: refused now, not after a deadline
            raise AdapterRequestError("step", call.cannot_step())
        await self._stepping.begin(thread, kind)
        self._mark_running()
        await self._vm.resume()

    async def reload(self, thread_id: int | None) -> Reloaded:
        """The edited source files recompiled and their classes redefined, the stopped method re-entered (reload.py)."""
        stop = self._threads.stop
        thread = self._threads.jdwp(thread_id) if thread_id is not None and stop.thread is not None else None
        done = await self._reloader.reload(thread, stop.thread is not None)
        if done.reentered is not None:  # the thread's frames and what was read of them are the popped code's
            self._inspection.clear()
            stop.exception, stop.returned = None, None
        return done

    async def pause(self, thread_id: int | None) -> None:
        await self._vm.suspend()
        stop = self._threads.stop
        stop.paused = True
        thread = await self._threads.pause_thread()  # the frames it reads are this stop's: kept
        await self._threads.stopped_at(thread)
        stop.reported = True
        self._events.on_stopped(StopEvent("pause", self._threads.id_of(thread), "Paused", thread_name=stop.name))

    # -- inspection -----------------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        return await self._threads.listing()

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        return await self._threads.stack_trace(thread_id, start, levels)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        """The JDK's and test frameworks' frames hidden above the program's (a failed assertEquals: JUnit's
        Assert frames above the test's line)."""
        return await self._threads.above(thread_id)

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        """Monitors held (and the frame that took each), the monitor or java.util.concurrent lock each thread
        waits for and its owner, Object.wait() and parking (monitors.py)."""
        return await self._monitors.locks(thread_ids)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        return await self._inspection.scopes(frame)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        return await self._inspection.variables(ref, start, count)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        return await self._inspection.child_slice(parent, start, count)

    def trace_thread(self) -> str:
        """The hitting thread's name, written in by the logpoint's line (``conditions``)."""
        return TRACE_THREAD

    def is_noise(self, variable: Variable) -> bool:
        return self._inspection.is_noise(variable)

    def returned_by(self, variable: Variable) -> str | None:
        return returns.returned_by(variable.name)  # a step's method exit, first among frame 0's locals (stepping.py)

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        return await self._inspection.evaluate(expression, frame)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await self._inspection.set_variable(ref, name, value)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        return await self._exceptions.detail()
