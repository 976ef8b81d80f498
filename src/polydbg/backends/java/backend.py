"""JavaBackend: the Backend protocol over JDWP, straight to the JVM's built-in ``jdwp`` agent.

polydbg listens on a loopback port and the JVM, started with ``suspend=y``, connects to it; requests
are set while the VM waits at its start, then it runs. How each part maps onto JDWP:

- Breakpoints: a file's classes are found by their ``SourceFile`` attribute and package, not by
  class name, so inner, anonymous and lambda classes of the file are covered. Classes not loaded yet
  get a ``ClassPrepare`` request (``SourceNameMatch`` on the file name, suspending only the loading
  thread): when one loads, its line tables are read, the breakpoints set, and the thread resumed.
  Conditions, hit counts and logpoints are checked here at each hit (evaluator.py; a hit that
  does not stop resumes the VM).
- Stops: breakpoint, step and exception events suspend the whole VM (one stop for the agent); a
  step is a ``SingleStep`` request (line size; ``java.*``, ``javax.*``, ``jdk.*``, ``sun.*`` excluded)
  cleared when it ends.
- Values: locals from the method's variable table (visible at the frame's code index), ``this``,
  fields of the class and its superclasses, arrays paged by ``ArrayReference.GetValues``, the JDK's
  collections by their elements (collections.py). Expressions, conditions and set_variable's values
  are evaluated by polydbg (expr.py parses, evaluator.py runs; scope.py is the frame they see).
- Attach (a JVM listening with ``server=y``), method breakpoints, field watchpoints and
  ``debug_command``'s queries: attach.py, methods.py, watch.py and commands.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
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
    Variable,
)
from polydbg.backends.java import attach as java_attach
from polydbg.backends.java import commands as java_commands
from polydbg.backends.java import expr, kotlin, launcher
from polydbg.backends.java import vm as java_vm
from polydbg.backends.java.classes import Classes, Field, JavaClass, matches_file, short_name
from polydbg.backends.java.evaluator import Evaluator, Text
from polydbg.backends.java.methods import MethodBreakpoints
from polydbg.backends.java.scope import StoppedFrame, slot_tag
from polydbg.backends.java.values import STRING_CHARS, Values
from polydbg.backends.java.watch import FieldWatches
from polydbg.backends.kit import hits, runtime
from polydbg.backends.kit.frames import leading
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, UsageError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Location, Modifier, Reader, Suspend, Tag, TypeTag, Value

log = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 30.0
COMPILE_TIMEOUT_S = 120.0
CHILD_CAP = 100
STEP_EXCLUDES = ("java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*", "kotlin.*")
_RUNTIME_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "kotlin.")
_INTERPOLATION = re.compile(r"\{([^{}]+)\}")
_PAUSED = ("the JVM was suspended by debug_pause, and JDWP runs methods only on a thread stopped by an event; set a "
           "breakpoint and continue to it (reading values works here)")
# ThreadReference.Status: what a thread was doing when the JVM suspended it
_THREAD_STATES = {0: "ended", 1: "running", 2: "sleeping", 3: "blocked on a monitor", 4: "waiting", 5: "not started"}
_JVM_THREADS = frozenset({"DestroyJavaVM"})  # the JVM's, though in the main group (it waits for the program's end)


@dataclass
class _Bp:
    spec: SourceBreakpoint
    file: str
    package: str
    requests: dict[int, Location] = field(default_factory=dict)  # JDWP request id → where it is set
    counter: hits.HitCounter = field(default_factory=lambda: hits.HitCounter(None))
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))


@dataclass
class _Ref:
    kind: str  # "locals" | "statics" | "object" | "array" | "collection"
    thread: int = 0  # JDWP thread id (locals)
    frame: int = 0  # shown frame index (locals)
    object_id: int = 0
    name: str | None = None  # the expression naming it


class JavaBackend(Backend):
    """The Backend protocol over JDWP."""

    name = "java"
    evaluate_context: ClassVar[EvaluateContext] = "watch"
    pause_limits: ClassVar[str] = "the JVM did not suspend"

    def __init__(self, listener: BackendListener, language: str = "java") -> None:
        self.language = language
        self._events = OrderedEvents(listener)
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True, set_variable=True,
            exception_info=True,
            exception_filters=("raised", "uncaught"))
        self._proc = procs.DebuggerProcess("java")
        self._client: JdwpClient | None = None
        self._classes: Classes | None = None
        self._values: Values | None = None
        self._evaluator: Evaluator | None = None
        self._invoking: set[int] = set()  # threads running a method for an evaluation
        self._paused = False  # the stop shown is debug_pause's (no method calls then)
        self._entry_class: str | None = None  # the main class's signature, with stop_on_entry
        self._entry_request: int | None = None  # the breakpoint at main's first line
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = False  # the JVM ran past its start (before that, no program class is loaded)
        self._compiled: str | None = None  # the private directory a .java program was compiled into
        self._roots: list[str] = []  # where source files are looked for
        self._sources: dict[tuple[str, str], str | None] = {}  # (package path, SourceFile) → path
        self._packages: dict[str, str] = {}  # file → its package declaration
        # breakpoints
        self._bps: dict[int, _Bp] = {}
        self._files: dict[str, list[int]] = {}
        self._by_request: dict[int, int] = {}
        self._prepare_requests: dict[str, int] = {}  # SourceFile name → ClassPrepare request id
        self._exception_requests: list[int] = []
        self._caught_request: int | None = None
        self._filters: list[str] = []
        # method breakpoints, field watchpoints (methods.py, watch.py), debug_command (commands.py)
        self.capabilities.function_breakpoints = self.capabilities.data_breakpoints = True
        self.capabilities.raw_command = True
        self._methods = MethodBreakpoints(self, self._events.on_breakpoint_changed)
        self._watches = FieldWatches(self, self._events.on_breakpoint_changed)
        # attach (attach.py)
        self._attach_done = False  # the attach completed: terminate ends the JVM (before, it is left alone)
        self._vm_died = False  # the agent reported VM death (an attached JVM's exit, not a lost connection)
        # threads and the current stop
        self._thread_ids: dict[int, int] = {}  # JDWP thread id → polydbg's
        self._jdwp_threads: dict[int, int] = {}
        self._stopped_thread: int | None = None  # JDWP id
        self._computed_messages: dict[int, str | None] = {}  # exception object id → its getMessage()
        self._stopped_name: str | None = None  # its name, when it is not ``main``
        self._system_threads: dict[int, bool] = {}  # JDWP thread → whether it is the JVM's own
        self._groups: dict[int, tuple[str, int]] = {}  # JDWP thread group → (name, parent)
        self._frames: dict[int, list[tuple[int, Location]]] = {}  # JDWP thread → (frame id, location)
        self._hidden: dict[int, int] = {}
        self._exception: Value | None = None
        self._step_request: int | None = None
        self._step_origin: kotlin.StepOrigin | None = None
        self._refs: HandleTable[_Ref] = HandleTable()
        self._reported = False
        # the end
        self._ending = False
        self._terminated = False

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: a .java file, a .jar, a .class file or a class name")
        java = launcher.find_java(spec.runtime)
        program = spec.program
        if program.lower().endswith(".java"):
            self._compiled = tempfile.mkdtemp(prefix="polydbg-java-")
            await launcher.compile_source(launcher.find_javac(java), program, self._compiled,
                                          min(timeout_s, COMPILE_TIMEOUT_S))
        elif program.lower().endswith(".kt"):
            self._compiled = tempfile.mkdtemp(prefix="polydbg-kotlin-")
            await kotlin.compile_source(program, launcher.main_class_of(program).rpartition(".")[0], self._compiled,
                                        min(timeout_s, COMPILE_TIMEOUT_S))
        self._roots = list(dict.fromkeys(self._source_roots(spec) + self._roots))  # + breakpoints' roots
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
            readers = [asyncio.ensure_future(runtime.pump(process.stdout, lambda text: self._events.on_output(
                "stdout", text))), asyncio.ensure_future(runtime.pump(process.stderr, self._stderr))]
            self._tasks.update(readers)
            exited = asyncio.ensure_future(process.wait())
            waiting: set[asyncio.Future[Any]] = {server_ready, exited}
            done, _ = await asyncio.wait(waiting, timeout=min(timeout_s, CONNECT_TIMEOUT_S),
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
        self._spawn(self._watch_process(process, readers))
        await self._connect(reader, writer, timeout_s)
        if spec.stop_on_entry:
            await self._break_at_entry(launcher.entry_class(program, self._compiled))
        await configure()
        self._started = True
        await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        """A JVM whose agent listens (``server=y``; attach.py). It is suspended while the breakpoints are
        set — in the classes it has loaded already, found by a scan — then resumed; one that waits for a
        debugger at its start (``suspend=y``) is started too."""
        host, port = java_attach.address(spec)
        await java_attach.connect(host, port, timeout_s, self._connect)
        self._started = True  # its classes are loaded: breakpoints bind in them at once
        waiting = await java_attach.suspended_at_start(self)
        await self._request(CommandSet.VM, 8, b"", "VirtualMachine.Suspend")
        self._spawn(self._watch_connection(self.client))
        self._roots = list(dict.fromkeys(await java_attach.source_roots(self, spec) + self._roots))
        await self._know_loaded()
        self._events.on_output("console", f"polydbg: attached to the JVM at {host}:{port}; its output is not captured "
                                          "(it goes where the JVM was started)\n")
        await configure()
        for _ in range(2 if waiting else 1):
            await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")
        self._attach_done = True

    async def _know_loaded(self) -> None:
        """Every loaded class outside the JDK with its source file: a breakpoint set now binds at once."""
        loaded = [cls for cls in await java_vm.loaded_classes(self)
                  if not java_vm.is_runtime(cls) and not java_vm.is_hidden(cls)]
        await asyncio.gather(*(self.classes.source(cls) for cls in loaded))

    async def _watch_connection(self, client: JdwpClient) -> None:
        """An attached JVM's end: the agent reports VM death and closes the connection (a JVM killed
        just closes it). Decided after the events before it are handled."""
        await client.closed.wait()
        self._events.deliver(self._attached_end)

    def _attached_end(self) -> None:
        if self._ending or self._terminated:
            return
        self._terminated = True
        if self._vm_died:
            runtime.report_end(self._events, None, "the JVM")
        else:
            self._events.on_terminated("the JVM closed the debug connection without reporting its end: it was killed, "
                                       "or the connection broke")

    def _source_roots(self, spec: LaunchSpec) -> list[str]:
        roots = []
        program = os.path.abspath(spec.program or ".")
        roots.append(os.path.dirname(program))
        if spec.cwd:
            roots.append(spec.cwd)
            roots.append(os.path.join(spec.cwd, "src", "main", "java"))
            roots.append(os.path.join(spec.cwd, "src", "main", "kotlin"))
        arguments = list(spec.runtime_args)
        for flag, value in itertools.pairwise(arguments):
            if flag in ("-cp", "-classpath", "--class-path"):
                for entry in value.split(os.pathsep):
                    if os.path.isdir(entry):
                        roots.append(entry)
                        roots.extend(java_attach.sources_near(entry))
        return list(dict.fromkeys(roots))

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout_s: float) -> None:
        client = self._client = await JdwpClient.connect(reader, writer, min(timeout_s, CONNECT_TIMEOUT_S))
        self._classes = Classes(client)
        self._values = Values(client, self._classes)
        self._evaluator = Evaluator(client, self._classes, self._values, source_of=self._source_path)
        client.on_event("events", lambda body: self._events.refine(self._on_events(body["events"])))

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _stderr(self, text: str) -> None:
        self._proc.remember(text[-600:])
        self._events.on_output("stderr", text)

    async def _watch_process(self, process: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
        """The JVM's exit is the program's (the agent reports VM death, not the exit code)."""
        code = await runtime.exit_code(process, readers)
        if not self._ending and not self._terminated:
            self._terminated = True
            runtime.report_end(self._events, code, "the JVM", self._proc.stderr_hint())

    async def terminate(self) -> None:
        """Ends the program: a launched JVM is killed, an attached one told to exit (VirtualMachine.Exit,
        status 1) — unless the attach did not complete, which leaves it as it was."""
        client = self._client
        if self._attach_done and client is not None and not client.is_closed:
            with contextlib.suppress(Exception):
                await client.request(CommandSet.VM, 10, client.writer().i4(1).bytes(), "VirtualMachine.Exit", 2.0)
        await self._end(kill=True)

    async def detach(self) -> None:
        """Leaves the program running: breakpoints and the step cleared, a stopped JVM resumed, then
        VirtualMachine.Dispose (which cancels every other request and resumes what JDWP suspended)."""
        client = self._client
        if client is not None and not client.is_closed:
            with contextlib.suppress(Exception):
                await client.request(CommandSet.EVENT_REQUEST, 3, b"", "EventRequest.ClearAllBreakpoints", 2.0)
                await self._end_step()
                if self._stopped_thread is not None:
                    self._mark_running()
                    await client.request(CommandSet.VM, 9, b"", "VirtualMachine.Resume", 2.0)
            with contextlib.suppress(Exception):
                await client.request(CommandSet.VM, 6, b"", "VirtualMachine.Dispose", 2.0)
        await self._end(kill=False)

    async def _end(self, kill: bool) -> None:
        self._ending = True
        self._events.cancel()
        if self._client is not None:
            await self._client.close("the session ended")
        await self._proc.end(kill_debuggee=kill)
        for task in list(self._tasks):
            task.cancel()
        if self._compiled is not None:
            shutil.rmtree(self._compiled, ignore_errors=True)
            self._compiled = None

    # -- requests ---------------------------------------------------------------------------------

    @property
    def client(self) -> JdwpClient:
        if self._client is None:
            raise AdapterGoneError("the JVM is not connected")
        return self._client

    @property
    def classes(self) -> Classes:
        if self._classes is None:
            raise AdapterGoneError("the JVM is not connected")
        return self._classes

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            raise AdapterGoneError("the JVM is not connected")
        return self._evaluator

    @property
    def values(self) -> Values:
        if self._values is None:
            raise AdapterGoneError("the JVM is not connected")
        return self._values

    async def _request(self, command_set: int, command: int, data: bytes, label: str) -> Reader:
        return await self.client.request(command_set, command, data, label, INSPECT_TIMEOUT_S)

    async def _event_request(self, kind: int, suspend: int, modifiers: bytes, count: int) -> int:
        data = self.client.writer().u1(kind).u1(suspend).i4(count).bytes() + modifiers
        reply = await self._request(CommandSet.EVENT_REQUEST, 1, data, "EventRequest.Set")
        return int(reply.i4())

    async def _clear_request(self, kind: int, request_id: int) -> None:
        with contextlib.suppress(JdwpRequestError, AdapterGoneError):
            await self._request(CommandSet.EVENT_REQUEST, 2, self.client.writer().u1(kind).i4(request_id).bytes(),
                                "EventRequest.Clear")

    # -- breakpoints ----------------------------------------------------------------------------------

    def _package_of(self, path: str) -> str:
        package = self._packages.get(path)
        if package is None:
            name = launcher.main_class_of(path) if os.path.isfile(path) else ""
            package = self._packages[path] = name.rpartition(".")[0]
        return package

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        path = os.path.abspath(file)
        for bp_id in self._files.pop(path, []):
            await self._remove(bp_id)
        results = []
        package = self._package_of(path)
        self._add_root(path, package)
        for spec in breakpoints:
            bp = _Bp(spec, path, package)
            problem = _expression_problem(spec.condition, spec.log_message)
            if problem:
                bp.result = BreakpointResult(False, message=problem)
                results.append(bp.result)
                continue
            try:
                bp.counter = hits.HitCounter.of(spec.hit_condition)
            except ValueError:
                bp.result = hits.refusal(str(spec.hit_condition))
                results.append(bp.result)
                continue
            self._bps[spec.id] = bp
            self._files.setdefault(path, []).append(spec.id)
            for cls in list(self.classes.by_id.values()):
                if cls.source is not None and matches_file(cls, path, package):
                    await self._bind_in(bp, cls)
            if not bp.result.verified:
                bp.result = BreakpointResult(False, message="not bound yet: no class of this file is loaded; it binds "
                                                            "when one loads")
            results.append(bp.result)
        name = os.path.basename(path)
        if breakpoints and name not in self._prepare_requests:
            modifiers = self.client.writer().u1(Modifier.SOURCE_NAME_MATCH).string(name).bytes()
            self._prepare_requests[name] = await self._event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD,
                                                                     modifiers, 1)
            await self._scan_loaded(name)  # may bind what was reported unbound above
            results = [self._bps[spec.id].result if spec.id in self._bps else result
                       for spec, result in zip(breakpoints, results, strict=True)]
        return results

    async def _scan_loaded(self, source_name: str) -> None:
        """Classes of the file loaded before its ClassPrepare request existed (a breakpoint added later);
        none can be while the JVM waits at its start."""
        if not self._started:
            return
        reply = await self._request(CommandSet.VM, 3, b"", "VirtualMachine.AllClasses")
        for _ in range(reply.i4()):
            tag, class_id, signature = reply.u1(), reply.reference_type(), reply.string()
            reply.i4()
            if signature.startswith("L") and not signature.startswith(("Ljava/", "Ljdk/", "Lsun/", "Ljavax/")):
                self.classes.known(class_id, tag, signature)
        for cls in list(self.classes.by_id.values()):
            if await self.classes.source(cls) == source_name:
                await self._bind_class(cls)

    async def _bind_in(self, bp: _Bp, cls: JavaClass) -> None:
        if any(where.class_id == cls.id for where in bp.requests.values()):
            return
        line, locations = await self.classes.locations_of_line(cls, bp.spec.line)
        for where in locations:
            modifiers = self.client.writer().u1(Modifier.LOCATION_ONLY).location(where).bytes()
            request = await self._event_request(EventKind.BREAKPOINT, Suspend.ALL, modifiers, 1)
            bp.requests[request] = where
            self._by_request[request] = bp.spec.id
        if locations and not bp.result.verified:
            bp.result = BreakpointResult(True, line=line)

    async def _bind_class(self, cls: JavaClass) -> None:
        """A class of a file with breakpoints was loaded: set the ones its methods contain."""
        for path, ids in self._files.items():
            if not matches_file(cls, path, self._package_of(path)):
                continue
            for bp_id in ids:
                bp = self._bps.get(bp_id)
                if bp is None:
                    continue
                was = bp.result.verified
                await self._bind_in(bp, cls)
                if bp.result.verified and not was:
                    self._events.on_breakpoint_changed(bp_id, bp.result)

    async def _remove(self, bp_id: int) -> None:
        bp = self._bps.pop(bp_id, None)
        if bp is None:
            return
        for request in bp.requests:
            self._by_request.pop(request, None)
            await self._clear_request(EventKind.BREAKPOINT, request)

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        """Method breakpoints: ``Class.method``, ``pkg.Class.method``, ``Outer.Inner.method``, a bare
        ``method`` — every overload, in classes loaded now and later (methods.py)."""
        return await self._methods.replace(breakpoints, self._started)

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        """Field watchpoints: ``this.count``, ``obj.field``, ``Class.staticField``, a bare field, read in
        ``frame`` (watch.py)."""
        at = None
        if frame is not None:
            with contextlib.suppress(AdapterRequestError):
                at = await self._frame_at(frame)
        return await self._watches.replace(breakpoints, at)

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """Read-only queries of the JVM (commands.py): ``classes [glob]``, ``methods <Class>``,
        ``fields <Class>``, ``threads``, ``version``, ``classpath``, ``sourcepaths``, ``help``."""
        context = java_commands.Context(self._stopped_thread, self._thread_id, list(self._roots), sorted(self._files))
        return await java_commands.run(self, text, context)

    async def _class_loaded(self, cls: JavaClass) -> None:
        """A prepared class: bind the method breakpoints and static-field watchpoints that wait for it."""
        await self._methods.class_loaded(cls)
        await self._watches.class_loaded(cls)

    async def set_exception_filters(self, filters: list[str]) -> None:
        self._filters = list(filters)
        for request in self._exception_requests:
            await self._clear_request(EventKind.EXCEPTION, request)
        self._exception_requests = []
        if "raised" in filters:  # caught throws: those the JDK throws and catches itself are resumed (_ours)
            writer = self.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(True).boolean(False)
            self._caught_request = await self._event_request(EventKind.EXCEPTION, Suspend.ALL, writer.bytes(), 1)
            self._exception_requests.append(self._caught_request)
        if "uncaught" in filters or "raised" in filters:
            writer = self.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(False).boolean(True)
            self._exception_requests.append(await self._event_request(EventKind.EXCEPTION, Suspend.ALL,
                                                                      writer.bytes(), 1))

    # -- events ---------------------------------------------------------------------------------------

    async def _on_events(self, events: list[Event]) -> None:
        if self._invoking and any(e.thread in self._invoking for e in events if e.kind in _STOPPING):
            await self._resume_vm()  # code an evaluation runs hit a breakpoint, a step or a throw: not a stop
            return
        stop: StopEvent | None = None
        broken: list[str] = []
        thread = 0
        hit_ids: list[int] = []
        resume_thread = False
        for event in events:
            if event.kind == EventKind.CLASS_PREPARE:
                cls = self.classes.known(event.type_id, event.type_tag, event.signature)
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    if event.signature == self._entry_class:
                        await self._set_entry(cls)
                    await self.classes.source(cls)
                    await self._bind_class(cls)
                    await self._class_loaded(cls)
                resume_thread = event.suspend_policy == Suspend.EVENT_THREAD
                thread = event.thread
            elif event.kind == EventKind.BREAKPOINT and event.request_id == self._entry_request:
                thread = event.thread
                self._entry_request = None
                await self._clear_request(EventKind.BREAKPOINT, event.request_id)
                stop = stop or StopEvent("entry", 0, "Paused on entry")
            elif event.kind == EventKind.BREAKPOINT and (method_bp := self._methods.owner(event.request_id)):
                thread = event.thread
                spec = self._methods.spec(method_bp)
                holds = await self._condition_holds(spec.condition if spec else None, thread)
                if holds is not False and self._methods.counts(method_bp):
                    hit_ids.append(method_bp)
                    if isinstance(holds, str):
                        broken.append(holds)
            elif event.kind in (EventKind.FIELD_ACCESS, EventKind.FIELD_MODIFICATION):
                thread = event.thread
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    stop = await self._watches.stop_for(event) or stop
            elif event.kind == EventKind.VM_DEATH:
                self._vm_died = True
            elif event.kind == EventKind.BREAKPOINT:
                bp_id = self._by_request.get(event.request_id)
                thread = event.thread
                if bp_id is not None:
                    verdict = await self._hit(bp_id, thread)
                    if verdict is not None:
                        hit_ids.append(bp_id)
                        if verdict:
                            broken.append(verdict)
            elif event.kind == EventKind.SINGLE_STEP:
                thread = event.thread
                if stop is None and not await self._in_inlined_code(thread, event.location):  # Kotlin's: on
                    stop = StopEvent("step", 0, "Paused after step")
            elif event.kind == EventKind.EXCEPTION:
                thread = event.thread
                if event.request_id == self._caught_request and not await self._ours(event):
                    continue
                self._exception = event.exception
                caught = event.catch_location is not None and event.catch_location.class_id != 0
                stop = StopEvent("exception", 0, f"Paused on {'' if caught else 'uncaught '}exception")
        if hit_ids:
            stop = StopEvent("breakpoint", 0, "Paused on breakpoint" + "".join(f"; {b}" for b in broken),
                             hit_breakpoint_ids=tuple(hit_ids))
        suspended_all = any(e.suspend_policy == Suspend.ALL for e in events)
        if stop is None:
            if suspended_all:
                await self._resume_vm()  # hits that do not count
            elif resume_thread:
                await self._resume_thread(thread)
            return
        if resume_thread:  # a class prepare in the same packet suspended the thread once more
            await self._resume_thread(thread)
        await self._end_step()
        await self._stopped_at(thread)
        if stop.reason == "exception":
            detail = await self._exception_detail()
            if detail is not None:
                stop = stop._replace(text=f"{detail.type}: {detail.message}")
        self._reported = True
        self._events.target.on_stopped(stop._replace(thread_id=self._thread_id(thread), thread_name=self._stopped_name))

    async def _ours(self, event: Event) -> bool:
        """A caught exception concerns the program when its code throws or catches it (a JDK class
        loader throwing and catching ClassNotFoundException does not)."""
        for where in (event.location, event.catch_location):
            if where is not None and where.class_id:
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    if not (await self.classes.get(where.class_id)).name.startswith(_RUNTIME_PACKAGES):
                        return True
        return False

    async def _in_inlined_code(self, thread: int, where: Location | None) -> bool:
        """A step that landed in code a Kotlin inline function of another file put here, back on its first
        line through such code, or in a synthetic method without lines (kotlin.py): it steps on."""
        if where is None or not where.class_id:
            return False
        with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
            cls, method = await self.classes.method(where.class_id, where.method_id)
            if method is not None:
                await self.classes.lines(cls, method)
                line = method.line_at(where.code_index)
                origin = self._step_origin
                if line is None and method.modifiers & 0x1000:  # synthetic, no lines: `fun main()`'s bridge
                    return True
                if await self.classes.inlined(cls, line):
                    if origin is not None:
                        origin.through_inlined = True
                    return True
                if origin is not None and origin.through_inlined:
                    depth = len(await self._all_frames(thread))
                    return origin.same_line(thread, depth, (where.class_id, where.method_id), line)
        return False

    async def _step_from(self, thread: int) -> kotlin.StepOrigin | None:
        frames = await self._all_frames(thread)
        if not frames:
            return None
        where = frames[0][1]
        with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
            cls, method = await self.classes.method(where.class_id, where.method_id)
            if method is not None:
                await self.classes.lines(cls, method)
                return kotlin.StepOrigin(thread, len(frames), (where.class_id, where.method_id),
                                         method.line_at(where.code_index))
        return None

    async def _break_at_entry(self, main_class: str | None) -> None:
        """stop_on_entry: a breakpoint at the first line of the main class's ``main``, set when it loads."""
        if main_class is None:
            self._events.on_output("console", "polydbg: the main class is unknown, so stop_on_entry cannot stop; set "
                                              "a breakpoint in main\n")
            return
        self._entry_class = "L" + main_class.replace(".", "/") + ";"
        modifiers = self.client.writer().u1(Modifier.CLASS_MATCH).string(main_class).bytes()
        await self._event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD, modifiers, 1)

    async def _set_entry(self, cls: JavaClass) -> None:
        for method in (await self.classes.methods(cls)).values():
            if method.name == "main" and method.signature in ("([Ljava/lang/String;)V", "()V"):
                lines = await self.classes.lines(cls, method)
                where = Location(cls.tag, cls.id, method.id, lines[0][0] if lines else 0)
                modifiers = self.client.writer().u1(Modifier.LOCATION_ONLY).location(where).bytes()
                self._entry_request = await self._event_request(EventKind.BREAKPOINT, Suspend.ALL, modifiers, 1)
                return

    async def _hit(self, bp_id: int, thread: int) -> str | None:
        """Whether a breakpoint hit stops: None (its condition is false, its hit count not reached, or it
        is a logpoint, which logs here), "" (it stops), or why its condition could not be evaluated (it
        stops, saying so: a broken condition must not pass silently)."""
        bp = self._bps.get(bp_id)
        if bp is None:
            return None
        spec = bp.spec
        holds = await self._condition_holds(spec.condition, thread)
        if holds is False:
            return None
        if isinstance(holds, str):
            self._counts(bp_id)
            return holds
        if not self._counts(bp_id):
            return None
        if spec.log_message is not None:
            await self._log(spec.log_message, thread)
            return None
        return ""

    async def _condition_holds(self, condition: str | None, thread: int) -> bool | str:
        """A condition's verdict at a hit (True without one), or why it could not be evaluated."""
        if not condition:
            return True
        try:
            return await self.evaluator.truth(condition, self._scope(thread, 0, None))
        except (AdapterRequestError, AdapterTimeoutError) as exc:
            return f"its condition {condition.strip()!r} could not be evaluated: {_reason(exc)}"

    async def _log(self, message: str, thread: int) -> None:
        """A logpoint's line: each ``{expression}`` as Java's string conversion gives it."""
        scope = self._scope(thread, 0, None)
        parts: list[str] = []
        last = 0
        for match in _INTERPOLATION.finditer(message):
            parts.append(message[last:match.start()])
            try:
                found = await self.evaluator.evaluate(match.group(1), scope)
                parts.append(await self.evaluator.text_of(found, scope))
            except (AdapterRequestError, AdapterTimeoutError) as exc:
                parts.append(f"<error: {_reason(exc)}>")
            last = match.end()
        parts.append(message[last:])
        self._events.on_output("console", "".join(parts) + "\n")

    def _scope(self, thread: int, index: int, refusal: str | None) -> StoppedFrame:
        return StoppedFrame(self.client, self.classes, self._frame_of, thread, index, refusal,
                            self._forget_frames, self._invoke)

    def _forget_frames(self, thread: int) -> None:
        self._frames.pop(thread, None)

    async def _frame_of(self, thread: int, index: int) -> tuple[int, Location]:
        _, frame_id, where = await self._frame_at(FrameRef(self._thread_id(thread), index))
        return frame_id, where

    async def _invoke(self, thread: int, request: Awaitable[Reader]) -> Reader:
        self._invoking.add(thread)
        try:
            return await request
        finally:
            self._invoking.discard(thread)

    def _counts(self, bp_id: int) -> bool:
        bp = self._bps.get(bp_id)
        if bp is None:
            return False
        return bp.counter.hit()

    async def _end_step(self) -> None:
        if self._step_request is not None:
            request, self._step_request = self._step_request, None
            await self._clear_request(EventKind.SINGLE_STEP, request)

    async def _stopped_at(self, thread: int) -> None:
        self._stopped_thread = thread
        try:
            name: str | None = await self._thread_name(thread)
        except JdwpRequestError:
            name = None
        self._stopped_name = None if name == "main" else name  # a stop elsewhere names its thread
        await self._hide_runtime_frames(thread)

    async def _resume_vm(self) -> None:
        """Resume a stop the agent is not shown (what was read of it is dropped)."""
        self._frames.clear()
        self._hidden.clear()
        with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
            await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def _resume_thread(self, thread: int) -> None:
        with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
            await self._request(CommandSet.THREAD_REFERENCE, 3, self.client.writer().object_id(thread).bytes(),
                                "ThreadReference.Resume")

    def _thread_id(self, jdwp: int) -> int:
        known = self._thread_ids.get(jdwp)
        if known is None:
            known = self._thread_ids[jdwp] = len(self._thread_ids) + 1
            self._jdwp_threads[known] = jdwp
        return known

    def _jdwp_thread(self, thread_id: int | None) -> int:
        if thread_id is None:
            if self._stopped_thread is None:
                raise AdapterRequestError("thread", "no thread is stopped")
            return self._stopped_thread
        jdwp = self._jdwp_threads.get(thread_id)
        if jdwp is None:
            raise AdapterRequestError("thread", f"no thread {thread_id}; debug_stack(all_threads=true) lists them")
        return jdwp

    def _mark_running(self) -> None:
        self._stopped_thread = None
        self._paused = False
        self._frames.clear()
        self._hidden.clear()
        self._exception = None
        self._refs.clear()
        if self._reported:
            self._reported = False
            self._events.on_continued(None, True)

    # -- execution ------------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        self._mark_running()
        await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        thread = self._jdwp_thread(thread_id)
        depth = {"into": 0, "over": 1, "out": 2}[kind]
        writer = self.client.writer().u1(Modifier.STEP).object_id(thread).i4(1).i4(depth)
        for pattern in STEP_EXCLUDES:
            writer.u1(Modifier.CLASS_EXCLUDE).string(pattern)
        await self._end_step()
        self._step_origin = await self._step_from(thread)
        self._step_request = await self._event_request(EventKind.SINGLE_STEP, Suspend.ALL, writer.bytes(),
                                                       1 + len(STEP_EXCLUDES))
        self._mark_running()
        await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def pause(self, thread_id: int | None) -> None:
        await self._request(CommandSet.VM, 8, b"", "VirtualMachine.Suspend")
        self._paused = True
        thread = await self._pause_thread()  # the frames it reads are this stop's: kept
        await self._stopped_at(thread)
        self._reported = True
        self._events.on_stopped(StopEvent("pause", self._thread_id(thread), "Paused",
                                          thread_name=self._stopped_name))

    async def _pause_thread(self) -> int:
        """The thread a pause shows, the way a busy program is found busy: a thread running the program's
        code (``main`` first), else one waiting with the program's code on its stack (``main`` first), else
        ``main`` while it lives, else the first thread. The JVM's own threads are never picked over these."""
        threads = await self._all_threads()
        user = [(jdwp, name) for jdwp, name, system in threads if not system]
        states = await asyncio.gather(*(self._thread_state(jdwp) for jdwp, _ in user), return_exceptions=True)
        ranked: list[tuple[int, int, int]] = []
        for position, ((jdwp, name), state) in enumerate(zip(user, states, strict=True)):
            main = 0 if name == "main" else 1
            if await self._runs_user_code(jdwp):
                ranked.append(((0 if state == "running" else 2) + main, position, jdwp))
            else:
                ranked.append((4 + main, position, jdwp))
        return min(ranked)[2] if ranked else threads[0][0]

    async def _runs_user_code(self, thread: int) -> bool:
        for _, where in await self._all_frames(thread):
            if not (await self.classes.get(where.class_id)).name.startswith(_RUNTIME_PACKAGES):
                return True
        return False

    # -- inspection ---------------------------------------------------------------------------------

    async def _all_threads(self) -> list[tuple[int, str, bool]]:
        """(JDWP id, name, is the JVM's own) of the live threads: the program's first, in start order,
        then the JVM's own (Reference Handler, Signal Dispatcher, Common-Cleaner …)."""
        reply = await self._request(CommandSet.VM, 4, b"", "VirtualMachine.AllThreads")
        ids = [reply.object_id() for _ in range(reply.i4())]
        names = await asyncio.gather(*(self._thread_name(t) for t in ids), return_exceptions=True)
        system = await asyncio.gather(*(self._is_system(t) for t in ids), return_exceptions=True)
        found = [(t, n if isinstance(n, str) else "?", s is True or n in _JVM_THREADS)
                 for t, n, s in zip(ids, names, system, strict=True)]
        return sorted(found, key=lambda thread: thread[2])  # stable: start order within each part

    async def _thread_name(self, thread: int) -> str:
        reply = await self._request(CommandSet.THREAD_REFERENCE, 1, self.client.writer().object_id(thread).bytes(),
                                    "ThreadReference.Name")
        return reply.string()

    async def _thread_state(self, thread: int) -> str:
        """What the thread was doing when the JVM suspended it (or does now, while it runs)."""
        reply = await self._request(CommandSet.THREAD_REFERENCE, 4, self.client.writer().object_id(thread).bytes(),
                                    "ThreadReference.Status")
        return _THREAD_STATES.get(reply.i4(), "state unknown")

    async def _is_system(self, thread: int) -> bool:
        """Whether the thread is the JVM's own: outside the ``main`` thread group, which every thread
        the program starts (in any group of its own) descends from."""
        known = self._system_threads.get(thread)
        if known is None:
            reply = await self._request(CommandSet.THREAD_REFERENCE, 5, self.client.writer().object_id(
                thread).bytes(), "ThreadReference.ThreadGroup")
            group = reply.object_id()
            if not group:  # ended: no group any more
                return False
            known = True
            while group:
                name, group = await self._thread_group(group)
                if name == "main":
                    known = False
                    break
            self._system_threads[thread] = known
        return known

    async def _thread_group(self, group: int) -> tuple[str, int]:
        """A thread group's name and parent (0 for the top one)."""
        known = self._groups.get(group)
        if known is None:
            writer = self.client.writer().object_id(group)
            name = (await self._request(CommandSet.THREAD_GROUP_REFERENCE, 1, writer.bytes(),
                                        "ThreadGroupReference.Name")).string()
            parent = (await self._request(CommandSet.THREAD_GROUP_REFERENCE, 2, writer.bytes(),
                                          "ThreadGroupReference.Parent")).object_id()
            known = self._groups[group] = (name, parent)
        return known

    async def threads(self) -> list[Thread]:
        """Every live thread with its state, ``worker (sleeping)``: the program's threads first, then
        the JVM's own, marked ``system``; the thread of the stop is ``stopped here``."""
        found = await self._all_threads()
        states = await asyncio.gather(*(self._thread_state(t) for t, _, _ in found), return_exceptions=True)
        out = []
        for (jdwp, name, system), state in zip(found, states, strict=True):
            label = "stopped here" if jdwp == self._stopped_thread else (
                state if isinstance(state, str) else "state unknown")
            out.append(Thread(self._thread_id(jdwp), f"{name} ({'system, ' if system else ''}{label})"))
        return out

    async def _all_frames(self, thread: int) -> list[tuple[int, Location]]:
        frames = self._frames.get(thread)
        if frames is None:
            writer = self.client.writer().object_id(thread).i4(0).i4(-1)
            try:
                reply = await self._request(CommandSet.THREAD_REFERENCE, 6, writer.bytes(), "ThreadReference.Frames")
            except JdwpRequestError as exc:
                if exc.code == 13:  # not suspended: it runs (a thread started after the stop)
                    return []
                raise
            frames = self._frames[thread] = [(reply.frame_id(), reply.location()) for _ in range(reply.i4())]
        return frames

    async def _hide_runtime_frames(self, thread: int) -> None:
        """Leading frames in the JDK (an exception thrown inside it) are hidden when user code is below."""
        frames = await self._all_frames(thread)
        names = [(await self.classes.get(where.class_id)).name for _, where in frames]
        self._hidden[thread] = leading(names, lambda name: name.startswith(_RUNTIME_PACKAGES))

    async def _shown_frames(self, thread: int) -> list[tuple[int, Location]]:
        """The frames from the first one shown, without the lambdas' generated classes below it
        (``Foo$$Lambda$14.run``: no source, between the caller and the lambda's body)."""
        frames = (await self._all_frames(thread))[self._hidden.get(thread, 0):]
        return frames[:1] + [frame for frame in frames[1:]
                             if "$$Lambda" not in (await self.classes.get(frame[1].class_id)).signature]

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        thread = self._jdwp_thread(thread_id)
        shown = await self._shown_frames(thread)
        out = []
        for _, where in shown[start:start + levels]:
            cls, method = await self.classes.method(where.class_id, where.method_id)
            line = None
            if method is not None:
                await self.classes.lines(cls, method)
                line = await self.classes.shown_line(cls, method.line_at(where.code_index))
            name = f"{short_name(cls.signature)}.{method.name if method else '?'}"
            out.append(Frame(name, await self._source_path(cls), line))
        return out, len(shown)

    def _add_root(self, path: str, package: str) -> None:
        """The source root a breakpoint's file lies in (its directory less the package's), so the
        library's other files are found for frames and stops (``src/main/java`` of a library)."""
        directory = os.path.dirname(path)
        suffix = os.sep + package.replace(".", os.sep) if package else ""
        if suffix and not directory.endswith(suffix):
            return
        root = directory[:len(directory) - len(suffix)] if suffix else directory
        if root and root not in self._roots:
            self._roots.append(root)
            self._sources = {key: found for key, found in self._sources.items() if found is not None}

    async def _source_path(self, cls: JavaClass) -> str | None:
        source = await self.classes.source(cls)
        if source is None:
            return None
        key = (cls.package_path, source)
        if self._sources.get(key) is None:
            found = None
            for path in self._files:
                if matches_file(cls, path, self._package_of(path)):
                    found = path
                    break
            if found is None:
                for root in self._roots:
                    for candidate in (os.path.join(root, cls.package_path, source), os.path.join(root, source)):
                        if os.path.isfile(candidate):
                            found = candidate
                            break
                    if found:
                        break
            self._sources[key] = found
        return self._sources[key] or (f"{cls.package_path}/{source}" if cls.package_path else source)

    async def _frame_at(self, frame: FrameRef) -> tuple[int, int, Location]:
        thread = self._jdwp_thread(frame.thread_id)
        shown = await self._shown_frames(thread)
        if not 0 <= frame.index < len(shown):
            raise AdapterRequestError("frame", f"no frame {frame.index}; the stack has {len(shown)} frames")
        frame_id, where = shown[frame.index]
        return thread, frame_id, where

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        thread = self._jdwp_thread(frame.thread_id)
        scopes = [Scope("Locals", self._refs.add(_Ref("locals", thread, frame.index)), hint="locals")]
        _, _, where = await self._frame_at(frame)
        if any(fields for _, fields in await self._static_fields(await self.classes.get(where.class_id))):
            scopes.append(Scope("Statics", self._refs.add(_Ref("statics", thread, frame.index)), expensive=True))
        return scopes

    async def _statics(self, handle: _Ref) -> list[Variable]:
        _, _, where = await self._frame_at(FrameRef(self._thread_id(handle.thread), handle.frame))
        out: list[Variable] = []
        for cls, fields in await self._static_fields(await self.classes.get(where.class_id)):
            values = await self.values.static_values(cls.id, [f.id for f in fields])
            out.extend([await self._variable(f.name, v, f.name) for f, v in zip(fields, values, strict=False)])
        return out

    async def _static_fields(self, first: JavaClass) -> list[tuple[JavaClass, list[Field]]]:
        """The static fields code of ``cls`` names without qualification: its own, those it inherits
        from the program's classes (not the JDK's), then its enclosing classes' (a name once)."""
        found: list[tuple[JavaClass, list[Field]]] = []
        seen: set[str] = set()
        outer = first.signature[:-1] if first.signature.startswith("L") else ""
        cls: JavaClass | None = first
        while cls is not None:
            runtime_ids: set[int] = set()
            ancestor = await self.classes.superclass(cls) if cls.tag == TypeTag.CLASS else None
            while ancestor is not None and not ancestor.name.startswith(_RUNTIME_PACKAGES):
                ancestor = await self.classes.superclass(ancestor)
            if ancestor is not None:
                runtime_ids = {f.id for f in await self.classes.fields(ancestor)}
            fields = [f for f in await self.classes.fields(cls)
                      if f.is_static and f.id not in runtime_ids and f.name not in seen]
            seen.update(f.name for f in fields)
            found.append((cls, fields))
            cls = None
            while "$" in outer and cls is None:  # the enclosing class, when it is loaded
                outer = outer.rpartition("$")[0]
                cls = await self._loaded_class(outer + ";")
        return found

    async def _loaded_class(self, signature: str) -> JavaClass | None:
        reply = await self._request(CommandSet.VM, 2, self.client.writer().string(signature).bytes(),
                                    "VirtualMachine.ClassesBySignature")
        for _ in range(reply.i4()):
            tag, class_id = reply.u1(), reply.reference_type()
            reply.i4()
            return self.classes.known(class_id, tag, signature)
        return None

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        if handle.kind == "locals":
            return await self._locals(handle)
        if handle.kind == "statics":
            return await self._statics(handle)
        if handle.kind == "array":
            length = await self.values.array_length(handle.object_id)
            first = start or 0
            size = count if count is not None else min(CHILD_CAP, length - first)
            items = await self.values.array_items(handle.object_id, first, max(0, min(size, length - first)))
            return [await self._variable(f"[{first + i}]", item, f"{handle.name}[{first + i}]" if handle.name else None)
                    for i, item in enumerate(items)]
        if handle.kind == "collection":  # its elements; by its fields when its layout is not known
            page = await self.values.collections.children(handle.object_id, start or 0,
                                                          CHILD_CAP if count is None else count)
            if page is not None:
                elements = [await self._variable(name, value, None) for name, value in page.named]
                return elements + ([Variable("(limit)", page.note, "note")] if page.note else [])
        listing = await self._fields(handle.object_id, handle.name)
        return listing[start or 0:(start or 0) + count] if count is not None else listing

    async def _locals(self, handle: _Ref) -> list[Variable]:
        thread, frame_id, where = await self._frame_at(FrameRef(self._thread_id(handle.thread), handle.frame))
        cls, method = await self.classes.method(where.class_id, where.method_id)
        if method is None:
            return []
        out: list[Variable] = []
        if not method.is_static:
            reply = await self._request(CommandSet.STACK_FRAME, 3, self.client.writer().object_id(thread).frame_id(
                frame_id).bytes(), "StackFrame.ThisObject")
            this = reply.value()
            if this.value:
                out.append(await self._variable("this", this, "this"))
        variables = await self.classes.variables(cls, method)
        if method.no_variables:
            out.append(Variable("(locals)", "no variable table: recompile with javac -g", "note"))
            return out
        visible = [v for v in variables if v.visible_at(where.code_index) and v.name != "this"]  # shown above
        if not visible:
            return out
        writer = self.client.writer().object_id(thread).frame_id(frame_id).i4(len(visible))
        for variable in visible:
            writer.i4(variable.slot).u1(ord(variable.signature[0]) if variable.signature[0] != "[" else Tag.ARRAY)
        reply = await self._request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues")
        values = [reply.value() for _ in range(reply.i4())]
        for variable, value in zip(visible, values, strict=False):
            shown = await self._variable(variable.name, value, variable.name)
            out.append(shown._replace(type=short_name(variable.signature)) if value.is_object and not value.value
                       else shown)  # null: its declared type
        return out

    async def _fields(self, object_id: int, parent: str | None) -> list[Variable]:
        cls = await self.values.class_of(object_id)
        fields = [f for f in await self.classes.fields(cls) if not f.is_static]
        values = await self.values.field_values(object_id, [f.id for f in fields])
        return [await self._variable(f.name, v, f"{parent}.{f.name}" if parent else None)
                for f, v in zip(fields, values, strict=False)]

    async def _variable(self, name: str, value: Value, evaluate_name: str | None) -> Variable:
        found = await self.values.describe(value)
        ref = 0
        if found.children:
            ref = self._refs.add(_Ref(found.children, object_id=int(value.value), name=evaluate_name))
        return Variable(name, found.text, found.type, ref, evaluate_name, found.length)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        handle = self._refs.get(parent.ref)
        if handle is None or handle.kind not in ("array", "collection"):
            return None
        return await self.variables(parent.ref, start, count)

    def is_noise(self, variable: Variable) -> bool:
        """Kotlin's locals for inlined code (``$i$f$forEach``, ``element$iv``; kotlin.py)."""
        return kotlin.is_noise(variable.name)

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        """The Java subset of ``expr.SUBSET``, in ``frame`` (the stopped thread's top frame by default)."""
        where = frame or FrameRef(self._thread_id(self._jdwp_thread(None)), 0)
        scope = self._scope(self._jdwp_thread(where.thread_id), where.index, _PAUSED if self._paused else None)
        result = await self.evaluator.evaluate(expression, scope)
        name = expression.strip()
        if isinstance(result, Text):
            return Variable(name, json.dumps(result.text[:STRING_CHARS], ensure_ascii=False), "String")
        return await self._variable(name, result, name)

    async def _member_or_none(self, value: Value, name: str) -> Value | None:
        if not value.is_object or not value.value:
            return None
        cls = await self.values.class_of(int(value.value))
        for candidate in await self.classes.fields(cls):
            if candidate.name == name:
                if candidate.is_static:
                    return (await self.values.static_values(cls.id, [candidate.id]))[0]
                return (await self.values.field_values(int(value.value), [candidate.id]))[0]
        return None

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        """A local, a field (instance or static) or an array element, to the value of a Java expression
        converted as assignment converts it; read back from the VM."""
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("setVariable", f"ref {ref} is not valid at this stop")
        stopped = self._jdwp_thread(None)
        refusal = _PAUSED if self._paused else None
        scope = self._scope(handle.thread if handle.kind == "locals" else stopped,
                            handle.frame if handle.kind == "locals" else 0, refusal)
        new = await self.evaluator.evaluate(value, scope)
        if handle.kind == "locals":
            return await self._set_local(handle, name, new, scope)
        if handle.kind == "array":
            return await self._set_element(handle, name, new, scope)
        if handle.kind == "object":
            return await self._set_field(handle, name, new, scope)
        if handle.kind == "statics":
            return await self._set_static(handle, name, new, scope)
        raise AdapterRequestError("setVariable", f"{name} cannot be changed here; change a local, a field or an "
                                                 "array element")

    async def _set_local(self, handle: _Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        _, _, where = await self._frame_at(FrameRef(self._thread_id(handle.thread), handle.frame))
        cls, method = await self.classes.method(where.class_id, where.method_id)
        variables = await self.classes.variables(cls, method) if method is not None else []
        found = next((v for v in variables if v.name == name and v.visible_at(where.code_index)), None)
        if found is None:
            hint = "; `this` cannot be replaced" if name == "this" else ""
            raise AdapterRequestError("setVariable", f"{name!r} is not a local variable of this frame{hint}")
        converted = await self.evaluator.assign(new, found.signature, scope)
        _, frame_id, _ = await self._frame_at(FrameRef(self._thread_id(handle.thread), handle.frame))  # after invokes
        writer = self.client.writer().object_id(handle.thread).frame_id(frame_id).i4(1).i4(found.slot)
        writer.u1(slot_tag(found.signature)).untagged(converted)
        await self._request(CommandSet.STACK_FRAME, 2, writer.bytes(), "StackFrame.SetValues")
        now = await self._scope(handle.thread, handle.frame, None).local(name)
        return await self._variable(name, now if now is not None else converted, name)

    async def _set_field(self, handle: _Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        cls = await self.values.class_of(handle.object_id)
        field = next((f for f in await self.classes.fields(cls) if f.name == name), None)
        if field is None:
            raise AdapterRequestError("setVariable", f"{cls.name} has no field {name!r}")
        converted = await self.evaluator.assign(new, field.signature, scope)
        if field.is_static:
            now = await self._write_static(cls, field, converted)
        else:
            writer = self.client.writer().object_id(handle.object_id).i4(1).field_id(field.id).untagged(converted)
            await self._request(CommandSet.OBJECT_REFERENCE, 3, writer.bytes(), "ObjectReference.SetValues")
            now = (await self.values.field_values(handle.object_id, [field.id]))[0]
        return await self._variable(name, now, f"{handle.name}.{name}" if handle.name else None)

    async def _write_static(self, cls: JavaClass, field: Field, value: Value) -> Value:
        """Set a static field in the class that declares it; the value the VM now holds."""
        owner = await self.evaluator.declaring(cls, field)
        writer = self.client.writer().reference_type(owner).i4(1).field_id(field.id).untagged(value)
        await self._request(CommandSet.CLASS_TYPE, 2, writer.bytes(), "ClassType.SetValues")
        return (await self.values.static_values(owner, [field.id]))[0]

    async def _set_static(self, handle: _Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        _, _, where = await self._frame_at(FrameRef(self._thread_id(handle.thread), handle.frame))
        for cls, fields in await self._static_fields(await self.classes.get(where.class_id)):
            field = next((f for f in fields if f.name == name), None)
            if field is None:
                continue
            converted = await self.evaluator.assign(new, field.signature, scope)
            return await self._variable(name, await self._write_static(cls, field, converted), name)
        raise AdapterRequestError("setVariable", f"{name!r} is not a static field this frame's class sees")

    async def _set_element(self, handle: _Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        match = re.fullmatch(r"\[?\s*(\d+)\s*\]?", name.strip())
        if match is None:
            raise AdapterRequestError("setVariable", f"{name!r} is not an array index; pass [3] or 3")
        index = int(match.group(1))
        length = await self.values.array_length(handle.object_id)
        if index >= length:
            raise AdapterRequestError("setVariable", f"index {index} is out of bounds (length {length})")
        cls = await self.values.class_of(handle.object_id)
        converted = await self.evaluator.assign(new, cls.signature[1:], scope)
        writer = self.client.writer().object_id(handle.object_id).i4(index).i4(1).untagged(converted)
        await self._request(CommandSet.ARRAY_REFERENCE, 3, writer.bytes(), "ArrayReference.SetValues")
        now = (await self.values.array_items(handle.object_id, index, 1))[0]
        return await self._variable(f"[{index}]", now, f"{handle.name}[{index}]" if handle.name else None)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        return await self._exception_detail()

    async def _exception_detail(self) -> ExceptionDetail | None:
        exception = self._exception
        if exception is None or not exception.value:
            return None
        cls = await self.values.class_of(int(exception.value))
        message = await self._member_or_none(exception, "detailMessage")
        text = await self.values.string(int(message.value)) if message is not None and message.value else None
        if text is None:
            key = int(exception.value)
            if key not in self._computed_messages:
                self._computed_messages = {key: await self._computed_message(exception, cls)}
            text = self._computed_messages[key]
        return ExceptionDetail(cls.name, "null" if text is None else text)

    async def _computed_message(self, exception: Value, cls: JavaClass) -> str | None:
        """``getMessage()`` of an exception whose ``detailMessage`` is null, called on the thread stopped
        at the exception event (not after debug_pause: no calls then)."""
        thread = self._stopped_thread
        if thread is None or self._paused:
            return None
        try:
            return await self.evaluator.overridden_message(exception, cls, self._scope(thread, 0, None))
        except AdapterRequestError:
            return None


_STOPPING = frozenset({EventKind.BREAKPOINT, EventKind.SINGLE_STEP, EventKind.EXCEPTION, EventKind.FIELD_ACCESS,
                       EventKind.FIELD_MODIFICATION})


def _expression_problem(condition: str | None, log_message: str | None) -> str | None:
    """Why a condition or a logpoint's ``{expression}`` cannot be evaluated (the breakpoint is not set)."""
    checks = [("condition", condition)] if condition else []
    checks += [(f"{{{e}}} in log_message", e) for e in _INTERPOLATION.findall(log_message or "")]
    for what, text in checks:
        try:
            expr.parse(text or "")
        except expr.ParseError as exc:
            return f"{what} {text!r} is not evaluable Java: {exc}; the breakpoint was not set"
    return None


def _reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, AdapterRequestError) else str(exc)
