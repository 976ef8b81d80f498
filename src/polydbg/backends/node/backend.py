"""NodeBackend: the Backend protocol over the V8 inspector (CDP), for JavaScript and TypeScript.

Node is started with ``--inspect-brk=127.0.0.1:0`` (its first stderr line names the WebSocket) and
is both the debugger and the debuggee. How each part maps onto CDP:

- Targets: the program's main thread, each worker thread (``NodeWorker``, attached while it waits
  at its start) and each child Node process (announced by ``boot.cjs``, see ``children``) is a
  ``Target``, shown to the agent as a thread. Breakpoints and exception settings go to every target;
  each stops on its own, and a ``StopGate`` shows one stop at a time (the others wait, stopped, and
  are shown as the answer to the next resume).
- Breakpoints: a JavaScript file's are ``setBreakpointByUrl`` (V8 binds them when the module loads,
  ``breakpointResolved``). A file reached through a source map (TypeScript) cannot be named before
  its generated script loads, so an *entry breakpoint* on line 0 of every user script pauses each one
  before it runs; the pause reads its map, sets the file's breakpoints by script id, line and column,
  and resumes. Conditions are V8's; hit counts are counted here (a hit that does not count resumes);
  a logpoint is a condition that calls ``console.log`` and answers false.
- Stops: ``Debugger.paused``. Pauses the agent must not see (the start, entry breakpoints, hits that
  do not count, steps that land in Node's internals or unmapped code) are resumed or stepped on
  before anything is reported (``OrderedEvents`` keeps later events behind them).
- Attach: to ``host:port`` of ``node --inspect`` (its ``/json/list`` names the WebSocket), or a pid
  (SIGUSR1 opens its inspector). ``path_mappings`` ({local: remote}) make a script's ``file://`` path
  the local one and a breakpoint's file the URL the program loads (``PathMap``).
- Pause: ``Debugger.pause`` takes effect at the next JavaScript statement; an idle event loop runs
  none, so a probe script is evaluated after it — if the pause lands in the probe, nothing was
  running: the probe's pause is resumed and the other targets are tried; if all are idle the agent
  is told so.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import os
import re
import signal
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
from polydbg.backends.kit import hits, runtime
from polydbg.backends.kit.frames import leading
from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node import launcher
from polydbg.backends.node import values as jsv
from polydbg.backends.node.children import ChildReports
from polydbg.backends.node.scripts import PathMap, Scripts, path_of, position, url_of
from polydbg.backends.node.target import INSPECT_TIMEOUT_S, REF_RANGE, Target, exception_text
from polydbg.cdp.client import CdpChannel, WorkerStream
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, EnvironmentProblem, echo

log = logging.getLogger(__name__)

STEP_ON_LIMIT = 60  # steps taken through code that is not the user's before giving up and running on
MAIN_THREAD = 1
PROBE_URL = "polydbg://idle-probe"
MODULE_WRAPPER = frozenset({"exports", "require", "module", "__filename", "__dirname"})
_BLACKBOX = ["^node:", "/node_modules/"]
_ENTRY_REGEX = r"^file://(?!.*/node_modules/)"
_INTERPOLATION = re.compile(r"\{([^{}]+)\}")
_BUNDLER_PREFIXES = ("__vite_ssr_", "__vi_import_", "__webpack_")


@dataclass
class _Bp:
    spec: SourceBreakpoint | FunctionBreakpoint
    file: str | None = None
    natives: list[tuple[Target, str]] = field(default_factory=list)  # (target, V8 breakpoint id)
    condition: str | None = None  # what V8 evaluates (the condition, a logpoint's console.log)
    counter: hits.HitCounter = field(default_factory=lambda: hits.HitCounter(None))
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))


class NodeBackend(Backend):
    """The Backend protocol over Node's inspector."""

    name = "node"
    evaluate_context: ClassVar[EvaluateContext] = "repl"
    pause_limits: ClassVar[str] = ("no JavaScript was running: the program is idle, waiting on I/O or timers. Set "
                                   "a breakpoint where the next callback runs and debug_continue, or pause again "
                                   "while it is busy")

    def __init__(self, listener: BackendListener, language: str = "javascript") -> None:
        self.language = language
        self._gate = StopGate(listener, lambda thread: thread)
        self._events = OrderedEvents(GatedListener(self._gate))  # the program's (and its main thread's) events
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True,
            function_breakpoints=True, set_variable=True, exception_info=True,
            exception_filters=("raised", "uncaught"), raw_command=True)
        self._proc = procs.DebuggerProcess("node")
        self._tasks: set[asyncio.Task[None]] = set()
        self._attached = False
        self._paths = PathMap()  # an attach's path_mappings: scripts' paths are the local ones
        self._targets: dict[int, Target] = {}
        self._next_thread = MAIN_THREAD
        self._children = ChildReports(self._on_child_report)
        self._starting: set[asyncio.Task[None]] = set()  # children and workers being attached, not yet let run
        self._child_exits: dict[int, int] = {}  # pid → exit code a child announced
        # breakpoints
        self._bps: dict[int, _Bp] = {}
        self._files: dict[str, list[int]] = {}
        self._functions: list[int] = []
        self._stop_on_entry = False  # report the first user statement (Node's "Break on start", else the first entry)
        self._filters: list[str] = []
        # the end
        self._ending = False
        self._terminated = False
        self._unstopped_throw: str | None = None  # an exception that ended the program without a stop

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: the .js, .mjs, .cjs or .ts file to run")
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
        url = await self._inspector_url(process.stderr, timeout_s)
        readers = [asyncio.ensure_future(runtime.pump(process.stdout, lambda text: self._events.on_output("stdout",
                                                                                                          text))),
                   asyncio.ensure_future(self._read_stderr(process.stderr))]
        self._tasks.update(readers)
        self._spawn(self._watch_process(process, readers))
        main = await self._connect_main(url, timeout_s)
        self._stop_on_entry = spec.stop_on_entry
        await configure()
        await main.request("Runtime.runIfWaitingForDebugger", timeout=timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        self._attached = True
        self._paths = PathMap(spec.path_mappings)
        host = spec.address
        if spec.pid is not None:
            try:
                os.kill(spec.pid, signal.SIGUSR1)  # Node opens its inspector (127.0.0.1:9229) on SIGUSR1
            except OSError as exc:
                raise AdapterRequestError("attach", f"cannot signal pid {spec.pid}: {exc}") from exc
            url = await self._discover_after_signal(host, spec.port or 9229, timeout_s)
        else:
            url = await launcher.discover(host, int(spec.port or 9229), min(timeout_s, 5.0))
        main = await self._connect_main(url, timeout_s)
        await configure()
        await main.request("Runtime.runIfWaitingForDebugger", timeout=timeout_s)

    async def _discover_after_signal(self, host: str, port: int, timeout_s: float) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(timeout_s, 5.0)
        while True:
            try:
                return await launcher.discover(host, port, 1.0)
            except AdapterGoneError:
                if loop.time() >= deadline:
                    raise
            await asyncio.sleep(0.05)

    async def _inspector_url(self, stderr: asyncio.StreamReader, timeout_s: float) -> str:
        """Node's first stderr line names the inspector; anything else first is why it did not start."""
        seen: list[str] = []

        async def first_url() -> str | None:
            while raw := await stderr.readline():
                line = raw.decode("utf-8", "replace")
                url = launcher.inspector_url(line) if line.startswith("Debugger listening") else None
                if url:
                    return url
                seen.append(line)
                self._proc.remember(line)
            return None

        try:
            found = await asyncio.wait_for(first_url(), timeout_s)
        except asyncio.TimeoutError as exc:
            raise AdapterTimeoutError(f"node did not open its inspector within {timeout_s:g} s"
                                      f"{self._proc.stderr_hint()}") from exc
        if found is None:
            raise EnvironmentProblem(f"node exited before its inspector opened: {''.join(seen).strip()[-800:]}")
        return found

    async def _connect_main(self, url: str, timeout_s: float) -> Target:
        client = await CdpChannel.connect(url, "node", min(timeout_s, 10.0))
        main = self._add_target(client, "main", "main", self._events)
        client.on_event("Runtime.exceptionThrown", self._on_exception_thrown)
        client.on_event("NodeRuntime.waitingForDisconnect", lambda _: self._spawn(self._program_finished()))
        self._spawn(self._watch_main(client))
        await self._prepare(main, timeout_s)
        return main

    def _add_target(self, channel: CdpChannel, kind: str, name: str, events: OrderedEvents,
                    pid: int | None = None, parent: Target | None = None) -> Target:
        thread, self._next_thread = self._next_thread, self._next_thread + 1
        target = Target(thread, name, channel, events, kind, pid, parent, scripts=Scripts(self._paths))
        self._targets[thread] = target
        channel.on_event("Debugger.paused", lambda params: self._on_paused(target, params))
        channel.on_event("Debugger.resumed", lambda _: self._on_resumed(target))
        channel.on_event("Debugger.scriptParsed", lambda params: self._on_script(target, params))
        channel.on_event("Debugger.breakpointResolved", lambda params: self._on_resolved(target, params))
        channel.on_event("Runtime.executionContextCreated", lambda params: self._on_context(target, params))
        channel.on_event("NodeWorker.attachedToWorker", lambda params: self._on_worker(target, params))
        channel.on_event("NodeWorker.receivedMessageFromWorker", lambda params: self._worker_message(target, params))
        channel.on_event("NodeWorker.detachedFromWorker", lambda params: self._worker_detached(target, params))
        return target

    async def _prepare(self, target: Target, timeout_s: float) -> None:
        requests: list[tuple[str, dict[str, Any]]] = [
            ("Runtime.enable", {}), ("Debugger.enable", {"maxScriptsCacheSize": 10_000_000}),
            ("Debugger.setBlackboxPatterns", {"patterns": _BLACKBOX}),
            ("NodeWorker.enable", {"waitForDebuggerOnStart": True})]
        if target.kind != "worker":
            requests.append(("NodeRuntime.notifyWhenWaitingForDisconnect", {"enabled": True}))
        sent = [(method, target.channel.send(method, params)) for method, params in requests]  # pipelined
        for method, future in sent:
            with contextlib.suppress(AdapterRequestError):  # an older Node lacks NodeRuntime or NodeWorker
                await target.channel.wait(future, method, timeout_s)

    def _spawn(self, work: Awaitable[None], starting: bool = False) -> None:
        """Run ``work`` beside the session; ``starting``: it attaches a new child or worker, and until
        that is let run a pause waits for it (``_settled``)."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if starting:
            self._starting.add(task)
            task.add_done_callback(self._starting.discard)

    async def _read_stderr(self, reader: asyncio.StreamReader) -> None:
        """The program's stderr, without Node's own inspector lines (read in chunks: a line may be huge)."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        pending = ""
        while True:
            chunk = await reader.read(65536)
            pending += decoder.decode(chunk, final=not chunk)
            lines = pending.split("\n")
            pending = lines.pop()  # the line still being written
            tail = ""
            if not chunk or len(pending) > 4096:  # the end, or a line too long to hold back
                tail, pending = pending, ""
            text = "".join(line + "\n" for line in lines if not launcher.INSPECTOR_LINES.match(line))
            if tail and not launcher.INSPECTOR_LINES.match(tail):
                text += tail
            if text:
                self._proc.remember(text[-600:])
                self._events.on_output("stderr", text)
            if not chunk:
                return

    async def _watch_process(self, process: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> None:
        code = await runtime.exit_code(process, readers)
        if not self._ending:
            self._finish(code)

    async def _watch_main(self, client: CdpChannel) -> None:
        await client.closed.wait()
        if self._ending or self._terminated:
            return
        if self._attached:
            self._finish(None, "the Node process closed the inspector connection (it exited, or another debugger "
                               "took over)")
        # a launched program's end is reported when its process exits (_watch_process)

    async def _program_finished(self) -> None:
        """Node waits for the debugger to disconnect once the program is done: let it exit."""
        main = self._targets.get(MAIN_THREAD)
        if main is not None:
            await main.channel.close("the program finished")
        if self._attached:
            self._finish(None)

    def _on_exception_thrown(self, params: dict[str, Any]) -> None:
        """Node reports an exception that is ending the program; if it never paused (an ES module's
        top-level throw counts as caught, nodejs/node#50430), say where it came from at the exit."""
        main = self._targets.get(MAIN_THREAD)
        if (main is not None and main.pause_reason in ("exception", "promiseRejection")) or not self._filters:
            return
        details = params.get("exceptionDetails") or {}
        frames = (details.get("stackTrace") or {}).get("callFrames") or []
        where = ""
        for frame in frames:
            path = path_of(str(frame.get("url") or ""))
            path = None if path is None else self._paths.local(path)
            if path is not None and "/node_modules/" not in path:
                where = f" at {path}:{int(frame.get('lineNumber', 0)) + 1}"
                break
        self._unstopped_throw = f"uncaught {exception_text(details)}{where}"

    def _finish(self, code: int | None, cause: str | None = None) -> None:
        if self._terminated:
            return
        self._terminated = True
        if self._unstopped_throw is not None and code:
            self._events.on_output("console", (
                f"polydbg: the program ended on an {self._unstopped_throw}; Node reported it as caught (an ES "
                "module's top-level throw, nodejs/node#50430), so it could not stop there: set a breakpoint on "
                "that line and debug_restart\n"))
        if cause is None:
            runtime.report_end(self._events, code, "node", self._proc.stderr_hint())
        else:
            self._events.on_terminated(f"{cause}{self._proc.stderr_hint()}")

    async def terminate(self) -> None:
        if self._attached:
            await self._kill_attached()
        await self._end(kill=True)

    async def _kill_attached(self) -> None:
        """Ending an attached program as ending a launched one does: SIGKILL, sent by the program to itself
        (it may be on another host), evaluated also while it is paused or busy (Node runs inspector
        messages between statements); it does not answer, so the wait is short."""
        main = self._targets.get(MAIN_THREAD)
        if main is None or main.channel.is_closed:
            return
        with contextlib.suppress(Exception):
            await main.channel.request("Runtime.evaluate", {"expression": "process.kill(process.pid, 'SIGKILL')"},
                                       timeout=1.0)

    async def detach(self) -> None:
        for target in list(self._targets.values()):
            channel = target.channel
            if channel.is_closed:
                continue
            with contextlib.suppress(Exception):
                for bp in list(self._bps.values()):
                    for owner, native in bp.natives:
                        if owner is target:
                            channel.send("Debugger.removeBreakpoint", {"breakpointId": native})
                if target.entry_bp:
                    channel.send("Debugger.removeBreakpoint", {"breakpointId": target.entry_bp})
                await channel.request("Debugger.disable", timeout=2.0)
                await channel.request("Runtime.runIfWaitingForDebugger", timeout=2.0)
        await self._end(kill=False)

    async def _end(self, kill: bool) -> None:
        self._ending = True
        self._children.close()
        for target in list(self._targets.values()):
            target.events.cancel()
        self._events.cancel()
        for target in sorted(self._targets.values(), key=lambda t: t.kind == "main"):  # the main connection last
            await target.channel.close("the session ended")
        if not self._attached:
            await self._proc.end(kill_debuggee=kill)
        for task in list(self._tasks):
            task.cancel()

    # -- workers and child processes -----------------------------------------------------------------

    def _on_worker(self, owner: Target, params: dict[str, Any]) -> None:
        session = str(params.get("sessionId") or "")
        info = params.get("workerInfo") or {}
        where = path_of(str(info.get("url") or ""))
        label = os.path.basename(where) if where else str(info.get("title") or "worker")
        stream = owner.workers[session] = WorkerStream(owner.channel, session, f"node worker {session}")
        channel = CdpChannel(stream, stream.name)
        name = f"worker {info.get('workerId') or session} ({label})"
        if owner.kind != "main":
            name += f" of {owner.name}"
        target = self._add_target(channel, "worker", name, OrderedEvents(GatedListener(self._gate)), owner.pid, owner)
        target.held = bool(params.get("waitingForDebugger", True))
        channel.start()
        self._spawn(self._start_target(target, target.held), starting=True)

    def _worker_message(self, owner: Target, params: dict[str, Any]) -> None:
        stream = owner.workers.get(str(params.get("sessionId") or ""))
        if stream is not None:
            stream.deliver(str(params.get("message") or ""))

    def _worker_detached(self, owner: Target, params: dict[str, Any]) -> None:
        stream = owner.workers.pop(str(params.get("sessionId") or ""), None)
        if stream is not None:
            stream.detached()

    def _on_child_report(self, report: dict[str, Any]) -> None:
        pid = int(report.get("pid") or 0)
        if "exit" in report:
            self._child_exits[pid] = int(report.get("exit") or 0)
            return
        url = str(report.get("url") or "")
        if not url.startswith("ws://") or self._ending:
            return
        argv = [str(a) for a in report.get("argv") or []]
        label = os.path.basename(argv[0]) if argv else "node"
        self._spawn(self._attach_child(pid, url, f"process {pid} ({label})"), starting=True)

    async def _attach_child(self, pid: int, url: str, name: str) -> None:
        try:
            client = await CdpChannel.connect(url, f"node {pid}", INSPECT_TIMEOUT_S)
        except AdapterGoneError as exc:
            self._events.on_output("console", f"[child {name} could not be debugged: {exc}]\n")
            return
        target = self._add_target(client, "process", name, OrderedEvents(GatedListener(self._gate)), pid)
        target.held = True  # in boot.cjs's waitForDebugger
        client.on_event("NodeRuntime.waitingForDisconnect", lambda _: self._spawn(client.close("it finished")))
        await self._start_target(target, True)

    async def _start_target(self, target: Target, waiting: bool) -> None:
        """A new worker or child process: the session's breakpoints and exception settings, then run it."""
        self._spawn(self._watch_target(target))
        try:
            await self._prepare(target, INSPECT_TIMEOUT_S)
            await self._configure_target(target)
            self._events.on_output("console", f"[{target.name} started: debugged in this session as thread "
                                              f"{target.thread_id}]\n")
        except (AdapterRequestError, AdapterGoneError, AdapterTimeoutError) as exc:
            log.info("node: configuring %s failed: %s", target.name, exc)
        finally:
            if waiting and not target.channel.is_closed:
                with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
                    await target.request("Runtime.runIfWaitingForDebugger")
            target.held = False

    async def _configure_target(self, target: Target) -> None:
        for bp_id in [i for ids in self._files.values() for i in ids]:
            bp = self._bps.get(bp_id)
            if bp is not None and isinstance(bp.spec, SourceBreakpoint):
                self._improve(target, bp, await self._place_in(target, bp))
        if any(self._needs_map(p) for p in self._files):
            await self._ensure_entry_bp(target)
        if self._filters:
            await target.request("Debugger.setPauseOnExceptions", {"state": self._exception_state()})

    async def _watch_target(self, target: Target) -> None:
        await target.channel.closed.wait()
        self._target_ended(target)

    def _target_ended(self, target: Target) -> None:
        if target.ended:
            return
        target.ended = True
        target.events.cancel()
        self._targets.pop(target.thread_id, None)
        for bp in self._bps.values():
            bp.natives = [(owner, native) for owner, native in bp.natives if owner is not target]
        for stream in target.workers.values():
            stream.detached()
        self._gate.ended(target.thread_id)
        if self._ending or self._terminated or target.kind == "main":
            return
        if target.kind == "process" and target.pid in self._child_exits:
            self._events.on_output("console", f"[{target.name} exited with code {self._child_exits[target.pid]}]\n")
        else:
            self._events.on_output("console", f"[{target.name} ended]\n")

    # -- scripts and contexts ------------------------------------------------------------------------

    @staticmethod
    def _on_context(target: Target, params: dict[str, Any]) -> None:
        context = params.get("context") or {}
        if (context.get("auxData") or {}).get("isDefault", True) and target.context_id is None:
            target.context_id = context.get("id")

    def _on_script(self, target: Target, params: dict[str, Any]) -> None:
        script = target.scripts.parsed(params)
        if script.map is not None and self._mapped_bps_for(script.map.sources):
            self._bind_mapped(target, script.id)

    # -- targets ----------------------------------------------------------------------------------------

    @property
    def _main(self) -> Target:
        main = self._targets.get(MAIN_THREAD)
        if main is None:
            raise AdapterGoneError("node is not connected")
        return main

    def _target(self, thread_id: int | None) -> Target:
        if thread_id is None:
            shown = self._gate.shown
            return self._targets.get(shown, self._main) if shown is not None else self._main
        target = self._targets.get(thread_id)
        if target is None:
            raise AdapterRequestError("thread", f"thread {thread_id} has ended or never existed; debug_stack lists "
                                                "the live ones")
        return target

    def _target_of_ref(self, ref: int) -> Target:
        base = ref // REF_RANGE
        target = self._main if base == 0 else self._targets.get(base)
        if target is None:
            raise AdapterRequestError("variables", f"ref {ref} belongs to a thread that has ended")
        return target

    def _live(self) -> list[Target]:
        return [t for t in self._targets.values() if not t.ended and not t.channel.is_closed]

    # -- breakpoints ----------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        path = os.path.normpath(file)
        for bp_id in self._files.pop(path, []):
            await self._remove(bp_id)
        results = []
        for spec in breakpoints:
            bp = _Bp(spec, file=path)
            self._bps[spec.id] = bp
            self._files.setdefault(path, []).append(spec.id)
            bp.result = await self._place(bp)
            results.append(bp.result)
        if self._needs_map(path):
            for target in self._live():
                await self._ensure_entry_bp(target)
        return results

    @staticmethod
    def _needs_map(path: str) -> bool:
        return not path.lower().endswith(launcher.JS_EXTENSIONS)

    @staticmethod
    async def _ensure_entry_bp(target: Target) -> None:
        if target.entry_bp is None:
            found = await target.request("Debugger.setBreakpointByUrl",
                                         {"urlRegex": _ENTRY_REGEX, "lineNumber": 0, "columnNumber": 0})
            target.entry_bp = str(found.get("breakpointId"))

    async def _remove(self, bp_id: int) -> None:
        bp = self._bps.pop(bp_id, None)
        if bp is None:
            return
        for target, native in bp.natives:
            target.by_native.pop(native, None)
            target.native_at.pop(native, None)
            if not target.ended:
                with contextlib.suppress(AdapterRequestError, AdapterGoneError):
                    await target.request("Debugger.removeBreakpoint", {"breakpointId": native})

    async def _condition(self, bp: _Bp) -> str | None:
        """The V8 condition for a breakpoint: its condition, with a logpoint's ``console.log`` after it.
        Each expression is compiled first: V8 would treat one that does not parse as never true."""
        spec = bp.spec
        condition = spec.condition
        if condition:
            await self._check_syntax(condition, "condition")
        try:
            bp.counter = hits.HitCounter.of(spec.hit_condition)
        except ValueError as exc:
            raise AdapterRequestError("setBreakpoint", str(hits.refusal(str(spec.hit_condition)).message)) from exc
        message = spec.log_message if isinstance(spec, SourceBreakpoint) else None
        if message is None:
            return condition or None
        expressions = _INTERPOLATION.findall(message)
        for expression in expressions:
            await self._check_syntax(expression, f"{{{expression}}} in log_message")
        fmt = _INTERPOLATION.sub("\x00", message.replace("%", "%%")).replace("\x00", "%s")
        arguments = "".join(
            f", (() => {{ try {{ return ({e}); }} catch (e) {{ return '<error: ' + (e && e.message) + '>'; }} }})()"
            for e in expressions)
        log_call = f"(console.log({json.dumps(fmt)}{arguments}), false)"
        return f"({condition}) && {log_call}" if condition else log_call

    async def _check_syntax(self, expression: str, what: str) -> None:
        main = self._main
        if main.context_id is None:
            return
        found = await main.request("Runtime.compileScript", {
            "expression": f"({expression}\n)", "sourceURL": "", "persistScript": False,
            "executionContextId": main.context_id})
        details = found.get("exceptionDetails")
        if details:
            problem = exception_text(details)
            raise AdapterRequestError("setBreakpoint", f"{what} {echo(expression)} is not a JavaScript expression "
                                                       f"({problem}); the breakpoint was not set")

    async def _place(self, bp: _Bp) -> BreakpointResult:
        """Set ``bp`` in every live target: the first place it bound, else the program's answer."""
        try:
            bp.condition = await self._condition(bp)
        except AdapterRequestError as exc:
            return BreakpointResult(False, message=exc.message)
        results = [await self._place_in(target, bp) for target in self._live()]
        bound = next((r for r in results if r.verified), None)
        return bound or (results[0] if results else BreakpointResult(False, message="node is not connected"))

    async def _place_in(self, target: Target, bp: _Bp) -> BreakpointResult:
        assert isinstance(bp.spec, SourceBreakpoint) and bp.file is not None
        condition = bp.condition
        mapping = target.scripts.mapping(bp.file)
        if not self._needs_map(bp.file) and not mapping:
            placed = await self._set(target, bp, "Debugger.setBreakpointByUrl", condition, {
                "url": url_of(self._paths.remote(bp.file)), "lineNumber": bp.spec.line - 1, "columnNumber": 0})
            if isinstance(placed, BreakpointResult):
                return placed
            native, found = placed
            locations = found.get("locations") or []
            if locations:
                return self._bound(target, locations[0], native)
            return BreakpointResult(False, message="not bound yet: the module has not loaded; it binds when it does")
        results = [await self._bind_one(target, bp, script.id, condition) for script in mapping]
        bound = next((r for r in results if r.verified), None)
        if bound is not None:
            return bound
        if results:
            return results[0]
        return BreakpointResult(False, message="not bound yet: no loaded script maps to this file; it binds when "
                                               "the module that does loads")

    @staticmethod
    def _bound(target: Target, location: dict[str, Any], native: str) -> BreakpointResult:
        target.native_at[native] = here = position(location)
        return BreakpointResult(True, line=target.scripts.place(*here).line)

    async def _bind_one(self, target: Target, bp: _Bp, script_id: str, condition: str | None) -> BreakpointResult:
        script = target.scripts.get(script_id)
        assert isinstance(bp.spec, SourceBreakpoint) and bp.file is not None
        if script is None or script.map is None:
            return BreakpointResult(False)
        found_place = script.map.generated(bp.file, bp.spec.line - 1)
        if found_place is None:
            return BreakpointResult(False, message=f"no code at or after line {bp.spec.line} in {bp.file}")
        (gen_line, gen_column), _ = found_place
        location = {"scriptId": script_id, "lineNumber": gen_line, "columnNumber": gen_column}
        placed = await self._set(target, bp, "Debugger.setBreakpoint", condition, {"location": location})
        if isinstance(placed, BreakpointResult):
            return placed
        native, found = placed
        return self._bound(target, found.get("actualLocation") or location, native)

    @staticmethod
    async def _set(target: Target, bp: _Bp, method: str, condition: str | None,
                   params: dict[str, Any]) -> tuple[str, dict[str, Any]] | BreakpointResult:
        """Send one V8 breakpoint request for ``bp``: its id and answer, or the refusal as a result."""
        if condition:
            params["condition"] = condition
        try:
            found = await target.request(method, params)
        except AdapterRequestError as exc:
            return BreakpointResult(False, message=str(exc))
        native = str(found.get("breakpointId"))
        bp.natives.append((target, native))
        target.by_native[native] = bp.spec.id
        return native, found

    def _mapped_bps_for(self, sources: list[str]) -> list[_Bp]:
        wanted = {os.path.normpath(s) for s in sources}
        return [self._bps[i] for path, ids in self._files.items() if path in wanted for i in ids if i in self._bps]

    def _bind_mapped(self, target: Target, script_id: str) -> asyncio.Future[list[str]]:
        """Set (once per script) the breakpoints of the files a newly loaded mapped script covers."""
        binding = target.binding.get(script_id)
        if binding is None:
            binding = target.binding[script_id] = asyncio.ensure_future(self._bind_script(target, script_id))
        return binding

    async def _bind_script(self, target: Target, script_id: str) -> list[str]:
        script = target.scripts.get(script_id)
        if script is None or script.map is None:
            return []
        placed: list[str] = []
        for bp in self._mapped_bps_for(script.map.sources):
            mine = [n for owner, n in bp.natives if owner is target]
            if any(target.native_at.get(n, ("",))[0] == script_id for n in mine):
                continue
            before = len(bp.natives)
            try:
                result = await self._bind_one(target, bp, script_id, bp.condition)
            except (AdapterRequestError, AdapterTimeoutError, AdapterGoneError) as exc:
                log.info("binding breakpoint %s in script %s failed: %s", bp.spec.id, script_id, exc)
                continue
            placed.extend(native for _, native in bp.natives[before:])
            self._improve(target, bp, result)
        return placed

    @staticmethod
    def _improve(target: Target, bp: _Bp, result: BreakpointResult) -> None:
        """A breakpoint bound somewhere (a target, a script) for the first time: the session hears of it."""
        if result.verified and not bp.result.verified:
            bp.result = result
            target.events.on_breakpoint_changed(bp.spec.id, result)

    def _on_resolved(self, target: Target, params: dict[str, Any]) -> None:
        native = str(params.get("breakpointId"))
        bp_id = target.by_native.get(native)
        bp = self._bps.get(bp_id) if bp_id is not None else None
        if bp is None:
            return
        self._improve(target, bp, self._bound(target, params.get("location") or {}, native))

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        for bp_id in self._functions:
            await self._remove(bp_id)
        self._functions = []
        results = []
        for spec in breakpoints:
            bp = _Bp(spec)
            self._bps[spec.id] = bp
            self._functions.append(spec.id)
            try:
                bp.condition = await self._condition(bp)
            except AdapterRequestError as exc:
                bp.result = BreakpointResult(False, message=exc.message)
            else:
                bp.result = await self._place_function(self._target(None), bp)
            results.append(bp.result)
        return results

    async def _place_function(self, target: Target, bp: _Bp) -> BreakpointResult:
        """A breakpoint on each call of the function the name evaluates to, where it is reachable
        (the stopped frame's scope, else the global one); unreachable names are tried again at each stop."""
        assert isinstance(bp.spec, FunctionBreakpoint)
        try:
            found = await target.evaluate_raw(bp.spec.name, 0 if target.paused else None)
        except AdapterRequestError:
            return BreakpointResult(False, message=f"{bp.spec.name} is not reachable from here yet; it is looked up "
                                                   "again at every stop (or set a line breakpoint in it)")
        obj = found.get("result") or {}
        if obj.get("type") != "function" or "objectId" not in obj:
            return BreakpointResult(False, message=f"{bp.spec.name} is {jsv.text_of(obj)}, not a function")
        placed = await self._set(target, bp, "Debugger.setBreakpointOnFunctionCall", bp.condition,
                                 {"objectId": obj["objectId"]})
        if isinstance(placed, BreakpointResult):
            return placed
        return BreakpointResult(True, line=await self._function_location(target, obj["objectId"]))

    @staticmethod
    async def _function_location(target: Target, object_id: str) -> int | None:
        found = await target.request("Runtime.getProperties", {"objectId": object_id, "ownProperties": True})
        for prop in found.get("internalProperties") or []:
            if prop.get("name") == "[[FunctionLocation]]":
                return target.scripts.place(*position((prop.get("value") or {}).get("value") or {})).line
        return None

    async def _retry_functions(self, target: Target) -> None:
        for bp_id in self._functions:
            bp = self._bps.get(bp_id)
            if bp is not None and not any(owner is target for owner, _ in bp.natives):
                with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
                    self._improve(target, bp, await self._place_function(target, bp))

    def _exception_state(self) -> str:
        return "all" if "raised" in self._filters else "uncaught" if "uncaught" in self._filters else "none"

    async def set_exception_filters(self, filters: list[str]) -> None:
        self._filters = list(filters)
        for target in self._live():
            await target.request("Debugger.setPauseOnExceptions", {"state": self._exception_state()})

    # -- stops -----------------------------------------------------------------------------------------

    def _on_paused(self, target: Target, params: dict[str, Any]) -> None:
        target.on_paused(params)
        target.events.refine(self._handle_pause(target, params))

    async def _handle_pause(self, target: Target, params: dict[str, Any]) -> None:
        reason = target.pause_reason
        own = params.get("callFrames") or []
        top = target.scripts.get(position((own[0].get("location") or {}) if own else {})[0])
        in_probe = top is not None and top.url == PROBE_URL
        # Idle only when nothing ran beneath the probe. Node also runs the inspector's messages from an
        # interrupt of running JavaScript, so the probe can run (and the pause land) on top of a busy
        # thread's frames: that thread was busy, and this pause, the probe's frame hidden, is the answer.
        if in_probe and len(own) == 1:
            if target.idle is not None and not target.idle.done():
                target.idle.set_result(True)
            if target.paused:
                await self._resume_quietly(target)
            return
        if target.idle is not None and not target.idle.done():
            target.idle.set_result(False)
        if not target.paused:  # over before it was handled (Node undoes a pause inside its own message loops)
            return
        frames = target.frames
        here = position((frames[0].get("location") or {}) if frames else {})
        script_id = here[0]
        hit_natives = [str(h) for h in params.get("hitBreakpoints") or []]
        user: list[int] = []
        entry = False
        for native in hit_natives:
            if native == target.entry_bp:
                entry = True
            elif (bp_id := target.by_native.get(native)) is not None:
                user.append(bp_id)
        if entry:
            for native in await self._bind_mapped(target, script_id):
                bp_id = target.by_native.get(native)
                if bp_id is not None and target.native_at.get(native) == here:
                    user.append(bp_id)  # V8 does not stop again where it is paused: this is the hit
        at_user_code = target.scripts.is_user_code(*here)
        on_entry = self._stop_on_entry and target.kind == "main"
        if on_entry and (entry or reason == "Break on start"):
            if not at_user_code:  # a loader's start (tsx under --import): stop at the first user script instead
                await self._ensure_entry_bp(target)
                await self._resume_quietly(target)
                return
            self._stop_on_entry = False
            user.append(0)
        elif reason == "Break on start":
            await self._resume_quietly(target)
            return
        stopping = [b for b in user if self._counts(b)]
        exception = reason in ("exception", "promiseRejection")
        target.hidden = leading(frames, lambda frame: self._internal_frame(target, frame)) if frames else 0
        if in_probe and frames:
            target.hidden = max(target.hidden, 1)
        thread = target.thread_id
        if exception:
            event = self._exception_event(target, reason)
        elif stopping:
            if 0 in stopping:
                event = StopEvent("entry", thread, "Paused on entry")
            else:
                event = StopEvent("breakpoint", thread, "Paused on breakpoint",
                                  hit_breakpoint_ids=tuple(b for b in stopping if b))
        elif target.stepping is not None:
            if not at_user_code:
                await self._step_on(target, script_id)
                return
            event = StopEvent("step", thread, "Paused after step")
        elif target.pausing:
            event = StopEvent("pause", thread, "Paused")
        elif user or entry:
            await self._resume_quietly(target)  # hits that do not count, or a script's entry
            return
        else:
            event = StopEvent("breakpoint", thread, "Paused on debugger statement", text="debugger statement")
        target.stepping = None
        target.steps_on = 0
        target.pausing = False
        target.reported = True
        if target.kind != "main":
            event = event._replace(thread_name=target.name)
        target.events.target.on_stopped(event)
        if self._functions:
            self._spawn(self._retry_functions(target))

    def _counts(self, bp_id: int) -> bool:
        if bp_id == 0:
            return True
        bp = self._bps.get(bp_id)
        if bp is None:
            return False
        return bp.counter.hit()

    @staticmethod
    def _internal_frame(target: Target, frame: dict[str, Any]) -> bool:
        script = target.scripts.get(str((frame.get("location") or {}).get("scriptId")))
        return script is None or script.internal

    @staticmethod
    def _exception_event(target: Target, reason: str) -> StopEvent:
        detail = target.exception_detail()
        kind = "promise rejection" if reason == "promiseRejection" else "exception"
        uncaught = bool((target.pause_data or {}).get("uncaught"))
        text = f"{detail.type}: {detail.message}" if detail else None
        return StopEvent("exception", target.thread_id, f"Paused on {'uncaught ' if uncaught else ''}{kind}",
                         text=text)

    async def _step_on(self, target: Target, script_id: str) -> None:
        """A step ended outside the user's code: step on (out of Node's internals, through a loader's
        unmapped helpers) until user code, or run on after ``STEP_ON_LIMIT`` steps."""
        target.steps_on += 1
        if target.steps_on > STEP_ON_LIMIT:
            target.stepping = None
            target.steps_on = 0
            await self._resume_quietly(target)
            return
        script = target.scripts.get(script_id)
        method = "Debugger.stepInto" if script is not None and not script.internal else "Debugger.stepOut"
        with contextlib.suppress(AdapterRequestError, AdapterGoneError):
            await target.run(method)

    @staticmethod
    async def _resume_quietly(target: Target) -> None:
        with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
            await target.run("Debugger.resume")

    @staticmethod
    def _on_resumed(target: Target) -> None:
        target.on_resumed()
        if target.reported:
            target.reported = False
            target.events.on_continued(target.thread_id, False)

    # -- execution ------------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        if thread_id is None:
            for target in self._live():
                if target.paused:
                    await target.run("Debugger.resume")
            self._gate.resumed(None)
            return
        target = self._target(thread_id)
        await target.run("Debugger.resume")
        self._gate.resumed(target.thread_id)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        target = self._target(thread_id)
        target.stepping = kind
        target.steps_on = 0
        method = {"over": "Debugger.stepOver", "into": "Debugger.stepInto", "out": "Debugger.stepOut"}[kind]
        await target.run(method)
        self._gate.resumed(target.thread_id)

    async def pause(self, thread_id: int | None) -> None:
        """Pause at the next statement; when the thread is idle, pause the busy ones among the others;
        when every one is idle (an idle event loop runs no JavaScript) say so instead of waiting.

        Children and workers being attached are waited for first: each is about to run, and one still
        held at its start (``waitForDebugger``) evaluates the probe there, which would read as idle."""
        await self._settled()
        first = self._target(thread_id)
        if not await self._pause_one(first):
            return
        await self._settled()  # one announced while the first was probed
        others = [t for t in self._live() if t is not first and not t.paused and not t.held]
        stopped = await asyncio.gather(*(self._pause_one(t) for t in others), return_exceptions=True)
        if not all(result is True for result in stopped) or any(t.reported for t in self._live()):
            return  # a pause landed, or a thread stopped meanwhile (a child at a breakpoint): that is the answer
        if self._starting:
            raise AdapterRequestError("pause", "nothing paused: the running threads are idle and "
                                               f"{len(self._starting)} child process(es) or worker(s) are still "
                                               "being attached (they have not run yet); pause again")
        raise AdapterRequestError("pause", f"nothing to pause: {self.pause_limits}")

    async def _settled(self) -> None:
        """Wait, at most ``INSPECT_TIMEOUT_S``, until no child or worker is being attached."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + INSPECT_TIMEOUT_S
        while self._starting and (remaining := deadline - loop.time()) > 0:
            await asyncio.wait(set(self._starting), timeout=remaining)

    @staticmethod
    async def _pause_one(target: Target) -> bool:
        """Pause one target: True when it was idle (its pause landed in the probe and was resumed)."""
        target.pausing = True
        target.idle = asyncio.get_running_loop().create_future()
        await target.request("Debugger.pause")
        target.channel.send("Runtime.evaluate", {"expression": f"void 0\n//# sourceURL={PROBE_URL}", "silent": True})
        try:
            idle = await asyncio.wait_for(asyncio.shield(target.idle), INSPECT_TIMEOUT_S)
        except asyncio.TimeoutError:
            return False
        if idle:
            target.pausing = False
        return idle

    # -- inspection ---------------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        """Every target; in a session of several, each says whether it runs or waits to be shown."""
        live = self._live()
        if len(live) == 1:
            return [Thread(live[0].thread_id, live[0].name)]
        return [Thread(t.thread_id, t.name + ("" if t.thread_id == self._gate.shown else
                                              " (stopped: shown after this stop)" if t.reported else " (running)"))
                for t in live]

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        return self._target(thread_id).stack_trace(start, levels)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        return self._target(frame.thread_id).scopes(frame.index)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        return await self._target_of_ref(ref).variables(ref, start, count)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        target = self._target_of_ref(parent.ref)
        handle = target.refs.get(parent.ref)
        if handle is None or handle.kind != "object":
            return None
        return await target.children(handle, start, count)

    def is_noise(self, variable: Variable) -> bool:
        """Module clutter: CommonJS's wrapper arguments, a bundler's or vitest's import bindings."""
        if variable.name.startswith(_BUNDLER_PREFIXES):
            return True
        return variable.name in MODULE_WRAPPER and variable.type in ("function", "Module", "Object", "string")

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        target = self._target(frame.thread_id if frame is not None else None)
        found = await target.evaluate_raw(expression, frame.index if frame is not None else None)
        return target.variable(expression, found.get("result") or {}, expression)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await self._target_of_ref(ref).set_variable(ref, name, value)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        target = self._target(thread_id)
        if target.pause_reason not in ("exception", "promiseRejection") or not target.paused:
            return None
        return target.exception_detail()

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """A raw CDP method: ``Debugger.getScriptSource {"scriptId": "42"}``; the answer as JSON."""
        method, _, rest = text.strip().partition(" ")
        if not re.fullmatch(r"[A-Z]\w*\.\w+", method):
            raise AdapterRequestError("command", f"{echo(method)} is not a CDP method; pass Domain.method followed "
                                                 'by JSON params, e.g. Runtime.evaluate {"expression": "1+1"}')
        try:
            params = json.loads(rest) if rest.strip() else {}
        except ValueError as exc:
            raise AdapterRequestError("command", f"the params are not JSON ({exc})") from exc
        if not isinstance(params, dict):
            raise AdapterRequestError("command", "the params must be a JSON object")
        target = self._target(frame.thread_id if frame is not None else None)
        found = await target.request(method, params)
        return json.dumps(found, indent=1)[:100_000]
