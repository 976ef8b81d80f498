"""JavaBackend: the Backend protocol over JDWP, straight to the JVM's built-in ``jdwp`` agent.

polydbg listens on a loopback port and the JVM, started with ``suspend=y``, connects to it; requests
are set while the VM waits at its start, then it runs. How each part maps onto JDWP:

- Breakpoints: a file's classes are found by their ``SourceFile`` attribute and package, not by
  class name, so inner, anonymous and lambda classes of the file are covered. Classes not loaded yet
  get a ``ClassPrepare`` request (``SourceNameMatch`` on the file name, suspending only the loading
  thread): when one loads, its line tables are read, the breakpoints set, and the thread resumed.
  Hit counts are counted here (a hit that does not count resumes the VM).
- Stops: breakpoint, step and exception events suspend the whole VM (one stop for the agent); a
  step is a ``SingleStep`` request (line size; ``java.*``, ``javax.*``, ``jdk.*``, ``sun.*`` excluded)
  cleared when it ends.
- Values: locals from the method's variable table (visible at the frame's code index), ``this``,
  fields of the class and its superclasses, arrays paged by ``ArrayReference.GetValues``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
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
from polydbg.backends.java import launcher
from polydbg.backends.java.classes import Classes, JavaClass, matches_file, short_name
from polydbg.backends.java.values import Values
from polydbg.backends.kit import runtime
from polydbg.backends.kit.frames import leading
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.kit.hits import HIT_SYNTAX, parse_hit_condition, satisfied
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, UsageError, echo
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Location, Modifier, Reader, Suspend, Tag, Value

log = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 10.0
CONNECT_TIMEOUT_S = 30.0
COMPILE_TIMEOUT_S = 120.0
CHILD_CAP = 100
STEP_EXCLUDES = ("java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*")
_RUNTIME_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.")
_PATH_PART = re.compile(r"\s*(?:\.\s*([A-Za-z_$][\w$]*)|\[\s*(-?\d+)\s*\])")
_NAME = re.compile(r"\s*([A-Za-z_$][\w$]*)")


@dataclass
class _Bp:
    spec: SourceBreakpoint
    file: str
    package: str
    requests: dict[int, Location] = field(default_factory=dict)  # JDWP request id → where it is set
    hit: tuple[str, int] | None = None
    hits: int = 0
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))


@dataclass
class _Ref:
    kind: str  # "locals" | "object" | "array"
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
            hit_conditional_breakpoints=True, exception_info=True, terminate_request=True, child_paging=True,
            exception_filters=("raised", "uncaught"))
        self._proc = procs.DebuggerProcess("java")
        self._client: JdwpClient | None = None
        self._classes: Classes | None = None
        self._values: Values | None = None
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
        # threads and the current stop
        self._thread_ids: dict[int, int] = {}  # JDWP thread id → polydbg's
        self._jdwp_threads: dict[int, int] = {}
        self._stopped_thread: int | None = None  # JDWP id
        self._frames: dict[int, list[tuple[int, Location]]] = {}  # JDWP thread → (frame id, location)
        self._hidden: dict[int, int] = {}
        self._exception: Value | None = None
        self._step_request: int | None = None
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
        self._roots = self._source_roots(spec)
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
        await configure()
        self._started = True
        await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        raise AdapterRequestError("attach", "attaching to a running JVM is not supported yet; launch the program "
                                            "with debug_launch")

    def _source_roots(self, spec: LaunchSpec) -> list[str]:
        roots = []
        program = os.path.abspath(spec.program or ".")
        roots.append(os.path.dirname(program))
        if spec.cwd:
            roots.append(spec.cwd)
            roots.append(os.path.join(spec.cwd, "src", "main", "java"))
        arguments = list(spec.runtime_args)
        for flag, value in itertools.pairwise(arguments):
            if flag in ("-cp", "-classpath", "--class-path"):
                roots.extend(p for p in value.split(os.pathsep) if os.path.isdir(p))
        return list(dict.fromkeys(roots))

    async def _connect(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout_s: float) -> None:
        client = self._client = await JdwpClient.connect(reader, writer, min(timeout_s, CONNECT_TIMEOUT_S))
        self._classes = Classes(client)
        self._values = Values(client, self._classes)
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
        await self._end(kill=True)

    async def detach(self) -> None:
        client = self._client
        if client is not None and not client.is_closed:
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
        for spec in breakpoints:
            bp = _Bp(spec, path, package)
            if spec.condition or spec.log_message:
                bp.result = BreakpointResult(False, message="conditions and log messages are not evaluated on Java "
                                                            "yet; set the breakpoint without them")
                results.append(bp.result)
                continue
            if spec.hit_condition:
                try:
                    bp.hit = parse_hit_condition(spec.hit_condition)
                except ValueError:
                    bp.result = BreakpointResult(False, message=f"hit_condition {spec.hit_condition!r} is not "
                                                                f"understood; {HIT_SYNTAX}")
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
            await self._scan_loaded(name)
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
        return [BreakpointResult(False, message="method breakpoints are not supported on Java yet; set a line "
                                                "breakpoint on the method's first line") for _ in breakpoints]

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
        stop: StopEvent | None = None
        thread = 0
        hits: list[int] = []
        resume_thread = False
        for event in events:
            if event.kind == EventKind.CLASS_PREPARE:
                cls = self.classes.known(event.type_id, event.type_tag, event.signature)
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    await self.classes.source(cls)
                    await self._bind_class(cls)
                resume_thread = event.suspend_policy == Suspend.EVENT_THREAD
                thread = event.thread
            elif event.kind == EventKind.BREAKPOINT:
                bp_id = self._by_request.get(event.request_id)
                if bp_id is not None and self._counts(bp_id):
                    hits.append(bp_id)
                thread = event.thread
            elif event.kind == EventKind.SINGLE_STEP:
                thread = event.thread
                if stop is None:
                    stop = StopEvent("step", 0, "Paused after step")
            elif event.kind == EventKind.EXCEPTION:
                thread = event.thread
                if event.request_id == self._caught_request and not await self._ours(event):
                    continue
                self._exception = event.exception
                caught = event.catch_location is not None and event.catch_location.class_id != 0
                stop = StopEvent("exception", 0, f"Paused on {'' if caught else 'uncaught '}exception")
        if hits:
            stop = StopEvent("breakpoint", 0, "Paused on breakpoint", hit_breakpoint_ids=tuple(hits))
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
        self._events.target.on_stopped(stop._replace(thread_id=self._thread_id(thread)))

    async def _ours(self, event: Event) -> bool:
        """A caught exception concerns the program when its code throws or catches it (a JDK class
        loader throwing and catching ClassNotFoundException does not)."""
        for where in (event.location, event.catch_location):
            if where is not None and where.class_id:
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    if not (await self.classes.get(where.class_id)).name.startswith(_RUNTIME_PACKAGES):
                        return True
        return False

    def _counts(self, bp_id: int) -> bool:
        bp = self._bps.get(bp_id)
        if bp is None:
            return False
        bp.hits += 1
        return bp.hit is None or satisfied(bp.hit[0], bp.hit[1], bp.hits)

    async def _end_step(self) -> None:
        if self._step_request is not None:
            request, self._step_request = self._step_request, None
            await self._clear_request(EventKind.SINGLE_STEP, request)

    async def _stopped_at(self, thread: int) -> None:
        self._stopped_thread = thread
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
        self._step_request = await self._event_request(EventKind.SINGLE_STEP, Suspend.ALL, writer.bytes(),
                                                       1 + len(STEP_EXCLUDES))
        self._mark_running()
        await self._request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def pause(self, thread_id: int | None) -> None:
        await self._request(CommandSet.VM, 8, b"", "VirtualMachine.Suspend")
        thread = await self._pause_thread()  # the frames it reads are this stop's: kept
        await self._stopped_at(thread)
        self._reported = True
        self._events.on_stopped(StopEvent("pause", self._thread_id(thread), "Paused"))

    async def _pause_thread(self) -> int:
        """The thread a pause shows: ``main`` while it lives, else the first thread running user code."""
        threads = await self._all_threads()
        for jdwp, name in threads:
            if name == "main":
                return jdwp
        for jdwp, _ in threads:
            frames = await self._all_frames(jdwp)
            for _, where in frames:
                cls = await self.classes.get(where.class_id)
                if not cls.name.startswith(_RUNTIME_PACKAGES):
                    return jdwp
        return threads[0][0]

    # -- inspection ---------------------------------------------------------------------------------

    async def _all_threads(self) -> list[tuple[int, str]]:
        reply = await self._request(CommandSet.VM, 4, b"", "VirtualMachine.AllThreads")
        ids = [reply.object_id() for _ in range(reply.i4())]
        names = await asyncio.gather(*(self._request(CommandSet.THREAD_REFERENCE, 1, self.client.writer().object_id(
            t).bytes(), "ThreadReference.Name") for t in ids), return_exceptions=True)
        return [(t, n.string() if not isinstance(n, BaseException) else "?") for t, n in zip(ids, names, strict=False)]

    async def threads(self) -> list[Thread]:
        found = await self._all_threads()
        return [Thread(self._thread_id(t), name) for t, name in found]

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
        frames = await self._all_frames(thread)
        return frames[self._hidden.get(thread, 0):]

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        thread = self._jdwp_thread(thread_id)
        shown = await self._shown_frames(thread)
        out = []
        for _, where in shown[start:start + levels]:
            cls, method = await self.classes.method(where.class_id, where.method_id)
            line = None
            if method is not None:
                await self.classes.lines(cls, method)
                line = method.line_at(where.code_index)
            name = f"{short_name(cls.signature)}.{method.name if method else '?'}"
            out.append(Frame(name, await self._source_path(cls), line))
        return out, len(shown)

    async def _source_path(self, cls: JavaClass) -> str | None:
        source = await self.classes.source(cls)
        if source is None:
            return None
        key = (cls.package_path, source)
        if key not in self._sources:
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
            self._sources[key] = found or (f"{cls.package_path}/{source}" if cls.package_path else source)
        return self._sources[key]

    async def _frame_at(self, frame: FrameRef) -> tuple[int, int, Location]:
        thread = self._jdwp_thread(frame.thread_id)
        shown = await self._shown_frames(thread)
        if not 0 <= frame.index < len(shown):
            raise AdapterRequestError("frame", f"no frame {frame.index}; the stack has {len(shown)} frames")
        frame_id, where = shown[frame.index]
        return thread, frame_id, where

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        thread = self._jdwp_thread(frame.thread_id)
        return [Scope("Locals", self._refs.add(_Ref("locals", thread, frame.index)), hint="locals")]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        if handle.kind == "locals":
            return await self._locals(handle)
        if handle.kind == "array":
            length = await self.values.array_length(handle.object_id)
            first = start or 0
            size = count if count is not None else min(CHILD_CAP, length - first)
            items = await self.values.array_items(handle.object_id, first, max(0, min(size, length - first)))
            return [await self._variable(f"[{first + i}]", item, f"{handle.name}[{first + i}]" if handle.name else None)
                    for i, item in enumerate(items)]
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
        visible = [v for v in variables if v.visible_at(where.code_index)]
        if not visible:
            return out
        writer = self.client.writer().object_id(thread).frame_id(frame_id).i4(len(visible))
        for variable in visible:
            writer.i4(variable.slot).u1(ord(variable.signature[0]) if variable.signature[0] != "[" else Tag.ARRAY)
        reply = await self._request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues")
        values = [reply.value() for _ in range(reply.i4())]
        for variable, value in zip(visible, values, strict=False):
            out.append(await self._variable(variable.name, value, variable.name))
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
        if handle is None or handle.kind != "array":
            return None
        return await self.variables(parent.ref, start, count)

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        """Names, field paths, ``arr[i]`` and ``arr.length`` (the full Java expression subset is to come)."""
        where = frame or FrameRef(self._thread_id(self._jdwp_thread(None)), 0)
        match = _NAME.match(expression)
        if match is None:
            raise AdapterRequestError("evaluate", f"{echo(expression)} is not understood: evaluating Java supports "
                                                  "names, field paths (a.b.c), arr[i] and arr.length so far")
        name = match.group(1)
        value = await self._lookup(name, where)
        at = match.end()
        path = name
        while at < len(expression.rstrip()):
            part = _PATH_PART.match(expression, at)
            if part is None:
                raise AdapterRequestError("evaluate", f"{echo(expression)} is not understood past {path!r}: evaluating "
                                                      "Java supports names, field paths (a.b.c), arr[i] and arr.length "
                                                      "so far")
            at = part.end()
            value = await self._member(value, path, part.group(1), part.group(2))
            path = expression[:at].strip()
        return await self._variable(expression.strip(), value, expression.strip())

    async def _lookup(self, name: str, frame: FrameRef) -> Value:
        thread, frame_id, where = await self._frame_at(frame)
        cls, method = await self.classes.method(where.class_id, where.method_id)
        if method is not None:
            for variable in await self.classes.variables(cls, method):
                if variable.name == name and variable.visible_at(where.code_index):
                    writer = self.client.writer().object_id(thread).frame_id(frame_id).i4(1).i4(variable.slot).u1(
                        ord(variable.signature[0]) if variable.signature[0] != "[" else Tag.ARRAY)
                    reply = await self._request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues")
                    reply.i4()
                    return reply.value()
            if not method.is_static:
                reply = await self._request(CommandSet.STACK_FRAME, 3, self.client.writer().object_id(
                    thread).frame_id(frame_id).bytes(), "StackFrame.ThisObject")
                this = reply.value()
                if name == "this":
                    return this
                found = await self._member_or_none(this, name)
                if found is not None:
                    return found
        for candidate in await self.classes.fields(cls):
            if candidate.name == name and candidate.is_static:
                return (await self.values.static_values(cls.id, [candidate.id]))[0]
        raise AdapterRequestError("evaluate", f"{name!r} is not a local variable, a field or a static field here")

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

    async def _member(self, value: Value, path: str, name: str | None, index: str | None) -> Value:
        if not value.is_object or not value.value:
            raise AdapterRequestError("evaluate", f"{path} is {'null' if value.is_object else 'a primitive'}: it has "
                                                  "no members")
        object_id = int(value.value)
        if index is not None:
            length = await self.values.array_length(object_id)
            position = int(index)
            if not 0 <= position < length:
                raise AdapterRequestError("evaluate", f"index {position} is out of bounds for {path} (length {length})")
            return (await self.values.array_items(object_id, position, 1))[0]
        assert name is not None
        if name == "length" and value.tag == Tag.ARRAY:
            return Value(Tag.INT, await self.values.array_length(object_id))
        found = await self._member_or_none(value, name)
        if found is None:
            raise AdapterRequestError("evaluate", f"{path} has no field {name!r}")
        return found

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        raise AdapterRequestError("setVariable", "changing values is not supported on Java yet")

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        return await self._exception_detail()

    async def _exception_detail(self) -> ExceptionDetail | None:
        exception = self._exception
        if exception is None or not exception.value:
            return None
        cls = await self.values.class_of(int(exception.value))
        message = await self._member_or_none(exception, "detailMessage")
        text = await self.values.string(int(message.value)) if message is not None and message.value else "null"
        return ExceptionDetail(cls.name, text)
