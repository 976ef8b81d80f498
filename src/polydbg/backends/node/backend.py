"""NodeBackend: the Backend protocol over the V8 inspector (CDP), for JavaScript and TypeScript.

Node is started with ``--inspect-brk=127.0.0.1:0`` (its first stderr line names the WebSocket) and
is both the debugger and the debuggee. How each part maps onto CDP:

- Breakpoints: a JavaScript file's are ``setBreakpointByUrl`` (V8 binds them when the module loads,
  ``breakpointResolved``). A file reached through a source map (TypeScript) cannot be named before
  its generated script loads, so an *entry breakpoint* on line 0 of every user script pauses each one
  before it runs; the pause reads its map, sets the file's breakpoints by script id, line and column,
  and resumes. Conditions are V8's; hit counts are counted here (a hit that does not count resumes);
  a logpoint is a condition that calls ``console.log`` and answers false.
- Stops: ``Debugger.paused``. Pauses the agent must not see (the start, entry breakpoints, hits that
  do not count, steps that land in Node's internals or unmapped code) are resumed or stepped on
  before anything is reported (``OrderedEvents`` keeps later events behind them).
- Values: RemoteObjects behind a ``HandleTable``; arrays, Maps and Sets are paged by a function run on
  the object (``callFunctionOn``), never by listing 100,000 properties; getters are not invoked.
  Objects fetched for a stop live in one object group, released when the program resumes.
- Pause: ``Debugger.pause`` takes effect at the next JavaScript statement; an idle event loop runs
  none, so a probe script is evaluated after it — if the pause lands in the probe, nothing was
  running: the probe's pause is resumed and the agent is told the program is idle.
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
from polydbg.backends.kit.frames import leading
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.kit.hits import HIT_SYNTAX, parse_hit_condition, satisfied
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node import launcher
from polydbg.backends.node import values as jsv
from polydbg.backends.node.scripts import Scripts, path_of, position, url_of
from polydbg.cdp.client import CdpClient
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, EnvironmentProblem, echo

log = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 10.0
EVALUATE_TIMEOUT_MS = 10_000  # V8 stops an evaluation that runs longer (an endless loop in an expression)
CHILD_CAP = 100  # elements listed before paging
STEP_ON_LIMIT = 60  # steps taken through code that is not the user's before giving up and running on
THREAD_ID = 1
GROUP = "polydbg"  # the object group of everything fetched for a stop
PROBE_URL = "polydbg://idle-probe"
MODULE_WRAPPER = frozenset({"exports", "require", "module", "__filename", "__dirname"})
_BLACKBOX = ["^node:", "/node_modules/"]
_ENTRY_REGEX = r"^file://(?!.*/node_modules/)"
_MERGED_TYPES = frozenset({"local", "block", "catch", "closure", "with", "eval", "module"})
_PREFERRED_SCOPE_NAMES = {"local": "Local", "block": "Block", "catch": "Catch", "closure": "Closure",
                          "module": "Module", "script": "Script", "global": "Global", "with": "With",
                          "eval": "Eval", "wasm-expression-stack": "Wasm stack"}
_INTERPOLATION = re.compile(r"\{([^{}]+)\}")
_SLICE = "function(s, c) { return Array.prototype.slice.call(this, s, s + c); }"
_ENTRIES = ("function(s, c) { const out = []; let i = 0; for (const [k, v] of this) { if (i >= s + c) break; "
            "if (i++ >= s) out.push(k, v); } return out; }")
_VALUES = ("function(s, c) { const out = []; let i = 0; for (const v of this) { if (i >= s + c) break; "
           "if (i++ >= s) out.push(v); } return out; }")
_ASSIGN = "function(k, v) { this[k] = v; return this[k]; }"


@dataclass
class _Bp:
    spec: SourceBreakpoint | FunctionBreakpoint
    file: str | None = None
    natives: list[str] = field(default_factory=list)  # V8 breakpoint ids
    condition: str | None = None  # what V8 evaluates (the condition, a logpoint's console.log)
    hit: tuple[str, int] | None = None
    hits: int = 0
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))


@dataclass
class _Ref:
    kind: str  # "scope" | "merged" | "object"
    frame: int = 0  # the shown frame index (scopes)
    objects: list[tuple[str, str]] = field(default_factory=list)  # (scope type, objectId), innermost first
    obj: dict[str, Any] = field(default_factory=dict)  # the RemoteObject (objects)
    name: str | None = None  # the expression naming it (objects)
    this: dict[str, Any] | None = None  # merged: the frame's ``this`` when it is an instance
    owners: dict[str, int] = field(default_factory=dict)  # merged: variable name → scope number


class NodeBackend(Backend):
    """The Backend protocol over Node's inspector."""

    name = "node"
    evaluate_context: ClassVar[EvaluateContext] = "repl"
    pause_limits: ClassVar[str] = ("no JavaScript was running: the program is idle, waiting on I/O or timers. Set "
                                   "a breakpoint where the next callback runs and debug_continue, or pause again "
                                   "while it is busy")

    def __init__(self, listener: BackendListener, language: str = "javascript") -> None:
        self.language = language
        self._events = OrderedEvents(listener)
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True,
            function_breakpoints=True, set_variable=True, exception_info=True, terminate_request=True,
            child_paging=True, exception_filters=("raised", "uncaught"), raw_command=True)
        self._proc = procs.DebuggerProcess("node")
        self._client: CdpClient | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._scripts = Scripts()
        self._context_id: int | None = None
        self._attached = False
        # breakpoints
        self._bps: dict[int, _Bp] = {}
        self._by_native: dict[str, int] = {}
        self._native_at: dict[str, tuple[str, int, int]] = {}  # V8 id → (script, line, column) it bound to
        self._binding: dict[str, asyncio.Future[list[str]]] = {}  # script id → its mapped breakpoints being set
        self._files: dict[str, list[int]] = {}
        self._functions: list[int] = []
        self._entry_bp: str | None = None
        self._stop_on_entry = False  # report the first user statement (Node's "Break on start", else the first entry)
        self._filters: list[str] = []
        # the current pause
        self._frames: list[dict[str, Any]] = []
        self._hidden = 0
        self._pause_data: dict[str, Any] | None = None
        self._pause_reason = ""
        self._reported = False
        self._stepping: StepKind | None = None
        self._steps_on = 0
        self._pausing = False
        self._idle: asyncio.Future[bool] | None = None
        self._refs: HandleTable[_Ref] = HandleTable()
        # the end
        self._ending = False
        self._terminated = False
        self._unstopped_throw: str | None = None  # an exception that ended the program without a stop

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: the .js, .mjs, .cjs or .ts file to run")
        argv = launcher.command(launcher.find_node(spec.runtime), spec.program, spec.args, spec.runtime_args)
        env = {**os.environ, **dict(spec.env)}
        given = os.open(self._proc.input_file(spec.stdin), os.O_RDONLY) if spec.stdin is not None else None
        try:
            process = await self._proc.start(argv, env=env, cwd=spec.cwd, drain_stderr=False,
                                             stdin=asyncio.subprocess.DEVNULL if given is None else given)
        finally:
            if given is not None:
                os.close(given)
        assert process.stderr is not None and process.stdout is not None
        url = await self._inspector_url(process.stderr, timeout_s)
        readers = [asyncio.ensure_future(self._read_stdout(process.stdout)),
                   asyncio.ensure_future(self._read_stderr(process.stderr))]
        self._tasks.update(readers)
        self._spawn(self._watch_process(process, readers))
        client = await self._connect(url, timeout_s)
        await self._handshake(client, timeout_s)
        self._stop_on_entry = spec.stop_on_entry
        await configure()
        await client.request("Runtime.runIfWaitingForDebugger", timeout=timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        self._attached = True
        host = spec.host or "127.0.0.1"
        if spec.pid is not None:
            try:
                os.kill(spec.pid, signal.SIGUSR1)  # Node opens its inspector (127.0.0.1:9229) on SIGUSR1
            except OSError as exc:
                raise AdapterRequestError("attach", f"cannot signal pid {spec.pid}: {exc}") from exc
            url = await self._discover_after_signal(host, spec.port or 9229, timeout_s)
        else:
            url = await launcher.discover(host, int(spec.port or 9229), min(timeout_s, 5.0))
        client = await self._connect(url, timeout_s)
        await self._handshake(client, timeout_s)
        await configure()
        await client.request("Runtime.runIfWaitingForDebugger", timeout=timeout_s)

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

    async def _connect(self, url: str, timeout_s: float) -> CdpClient:
        client = self._client = await CdpClient.open(url, "node", min(timeout_s, 10.0))
        client.on_event("Debugger.paused", self._on_paused)
        client.on_event("Debugger.resumed", self._on_resumed)
        client.on_event("Debugger.scriptParsed", self._on_script)
        client.on_event("Debugger.breakpointResolved", self._on_resolved)
        client.on_event("Runtime.executionContextCreated", self._on_context)
        client.on_event("Runtime.exceptionThrown", self._on_exception_thrown)
        client.on_event("NodeRuntime.waitingForDisconnect", lambda _: self._spawn(self._program_finished()))
        self._spawn(self._watch_client(client))
        return client

    async def _handshake(self, client: CdpClient, timeout_s: float) -> None:
        requests: list[tuple[str, dict[str, Any]]] = [
            ("Runtime.enable", {}), ("Debugger.enable", {"maxScriptsCacheSize": 10_000_000}),
            ("Debugger.setBlackboxPatterns", {"patterns": _BLACKBOX}),
            ("NodeRuntime.notifyWhenWaitingForDisconnect", {"enabled": True})]
        sent = [(method, client.send(method, params)) for method, params in requests]  # pipelined
        for method, future in sent:
            with contextlib.suppress(AdapterRequestError):  # an older Node lacks NodeRuntime
                await client.wait(future, method, timeout_s)

    def _spawn(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _read_stdout(self, reader: asyncio.StreamReader) -> None:
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while chunk := await reader.read(65536):
            self._events.on_output("stdout", decoder.decode(chunk))
        if tail := decoder.decode(b"", final=True):
            self._events.on_output("stdout", tail)

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
        code = await process.wait()
        with contextlib.suppress(asyncio.TimeoutError):  # its last output first (a child may hold the pipes)
            await asyncio.wait_for(asyncio.shield(asyncio.gather(*readers)), 0.5)
        if not self._ending:
            self._finish(code)

    async def _watch_client(self, client: CdpClient) -> None:
        await client.closed.wait()
        if self._ending or self._terminated:
            return
        if self._attached:
            self._finish(None, "the Node process closed the inspector connection (it exited, or another debugger "
                               "took over)")
        # a launched program's end is reported when its process exits (_watch_process)

    async def _program_finished(self) -> None:
        """Node waits for the debugger to disconnect once the program is done: let it exit."""
        if self._client is not None:
            await self._client.close("the program finished")
        if self._attached:
            self._finish(None)

    def _on_exception_thrown(self, params: dict[str, Any]) -> None:
        """Node reports an exception that is ending the program; if it never paused (an ES module's
        top-level throw counts as caught, nodejs/node#50430), say where it came from at the exit."""
        if self._pause_reason in ("exception", "promiseRejection") or not self._filters:
            return
        details = params.get("exceptionDetails") or {}
        frames = (details.get("stackTrace") or {}).get("callFrames") or []
        where = ""
        for frame in frames:
            path = path_of(str(frame.get("url") or ""))
            if path is not None and "/node_modules/" not in path:
                where = f" at {path}:{int(frame.get('lineNumber', 0)) + 1}"
                break
        self._unstopped_throw = f"uncaught {_exception_text(details)}{where}"

    def _finish(self, code: int | None, cause: str | None = None) -> None:
        if self._terminated:
            return
        self._terminated = True
        if self._unstopped_throw is not None and code:
            self._events.on_output("console", (
                f"polydbg: the program ended on an {self._unstopped_throw}; Node reported it as caught (an ES "
                "module's top-level throw, nodejs/node#50430), so it could not stop there: set a breakpoint on "
                "that line and debug_restart\n"))
        if cause is None and (code is None or code >= 0):
            self._events.on_exited(code)
            self._events.on_terminated(None)
            return
        if cause is None and code is not None:
            try:
                cause = f"node was killed by {signal.Signals(-code).name}"
            except ValueError:
                cause = f"node was killed by signal {-code}"
        self._events.on_terminated(f"{cause}{self._proc.stderr_hint()}")

    async def terminate(self) -> None:
        await self._end(kill=True)

    async def detach(self) -> None:
        client = self._client
        if client is not None and not client.is_closed:
            with contextlib.suppress(Exception):
                for bp in list(self._bps.values()):
                    for native in bp.natives:
                        client.send("Debugger.removeBreakpoint", {"breakpointId": native})
                if self._entry_bp:
                    client.send("Debugger.removeBreakpoint", {"breakpointId": self._entry_bp})
                await client.request("Debugger.disable", timeout=2.0)
                await client.request("Runtime.runIfWaitingForDebugger", timeout=2.0)
        await self._end(kill=False)

    async def _end(self, kill: bool) -> None:
        self._ending = True
        self._events.cancel()
        if self._client is not None:
            await self._client.close("the session ended")
        if not self._attached:
            await self._proc.end(kill_debuggee=kill)
        for task in list(self._tasks):
            task.cancel()

    # -- scripts and contexts ------------------------------------------------------------------------

    def _on_context(self, params: dict[str, Any]) -> None:
        context = params.get("context") or {}
        if (context.get("auxData") or {}).get("isDefault", True) and self._context_id is None:
            self._context_id = context.get("id")

    def _on_script(self, params: dict[str, Any]) -> None:
        script = self._scripts.parsed(params)
        if script.map is not None and self._mapped_bps_for(script.map.sources):
            self._bind_mapped(script.id)

    # -- breakpoints ----------------------------------------------------------------------------------

    @property
    def client(self) -> CdpClient:
        if self._client is None:
            raise AdapterGoneError("node is not connected")
        return self._client

    async def _request(self, method: str, params: dict[str, Any] | None = None,
                       timeout: float = INSPECT_TIMEOUT_S) -> dict[str, Any]:
        return await self.client.request(method, params, timeout)

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
        if any(self._needs_map(p) for p in self._files):
            await self._ensure_entry_bp()
        return results

    @staticmethod
    def _needs_map(path: str) -> bool:
        return not path.lower().endswith(launcher.JS_EXTENSIONS)

    async def _ensure_entry_bp(self) -> None:
        if self._entry_bp is None:
            found = await self._request("Debugger.setBreakpointByUrl",
                                        {"urlRegex": _ENTRY_REGEX, "lineNumber": 0, "columnNumber": 0})
            self._entry_bp = str(found.get("breakpointId"))

    async def _remove(self, bp_id: int) -> None:
        bp = self._bps.pop(bp_id, None)
        if bp is None:
            return
        for native in bp.natives:
            self._by_native.pop(native, None)
            self._native_at.pop(native, None)
            with contextlib.suppress(AdapterRequestError):
                await self._request("Debugger.removeBreakpoint", {"breakpointId": native})

    async def _condition(self, bp: _Bp) -> str | None:
        """The V8 condition for a breakpoint: its condition, with a logpoint's ``console.log`` after it.
        Each expression is compiled first: V8 would treat one that does not parse as never true."""
        spec = bp.spec
        condition = spec.condition
        if condition:
            await self._check_syntax(condition, "condition")
        hit = spec.hit_condition
        bp.hit = None
        if hit:
            try:
                bp.hit = parse_hit_condition(hit)
            except ValueError as exc:
                raise AdapterRequestError("setBreakpoint", f"hit_condition {hit!r} is not understood; "
                                                           f"{HIT_SYNTAX}") from exc
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
        if self._context_id is None:
            return
        found = await self._request("Runtime.compileScript", {
            "expression": f"({expression}\n)", "sourceURL": "", "persistScript": False,
            "executionContextId": self._context_id})
        details = found.get("exceptionDetails")
        if details:
            problem = _exception_text(details)
            raise AdapterRequestError("setBreakpoint", f"{what} {echo(expression)} is not a JavaScript expression "
                                                       f"({problem}); the breakpoint was not set")

    async def _place(self, bp: _Bp) -> BreakpointResult:
        assert isinstance(bp.spec, SourceBreakpoint) and bp.file is not None
        try:
            condition = bp.condition = await self._condition(bp)
        except AdapterRequestError as exc:
            return BreakpointResult(False, message=exc.message)
        mapping = self._scripts.mapping(bp.file)
        if not self._needs_map(bp.file) and not mapping:
            placed = await self._set(bp, "Debugger.setBreakpointByUrl", condition, {
                "url": url_of(bp.file), "lineNumber": bp.spec.line - 1, "columnNumber": 0})
            if isinstance(placed, BreakpointResult):
                return placed
            native, found = placed
            locations = found.get("locations") or []
            if locations:
                return self._bound(bp, locations[0], native)
            return BreakpointResult(False, message="not bound yet: the module has not loaded; it binds when it does")
        results = [await self._bind_one(bp, script.id, condition) for script in mapping]
        bound = next((r for r in results if r.verified), None)
        if bound is not None:
            return bound
        if results:
            return results[0]
        return BreakpointResult(False, message="not bound yet: no loaded script maps to this file; it binds when "
                                               "the module that does loads")

    def _own(self, bp: _Bp, native: str) -> None:
        bp.natives.append(native)
        self._by_native[native] = bp.spec.id

    def _bound(self, bp: _Bp, location: dict[str, Any], native: str) -> BreakpointResult:
        self._native_at[native] = here = position(location)
        return BreakpointResult(True, line=self._scripts.place(*here).line)

    async def _bind_one(self, bp: _Bp, script_id: str, condition: str | None) -> BreakpointResult:
        script = self._scripts.get(script_id)
        assert isinstance(bp.spec, SourceBreakpoint) and bp.file is not None
        if script is None or script.map is None:
            return BreakpointResult(False)
        target = script.map.generated(bp.file, bp.spec.line - 1)
        if target is None:
            return BreakpointResult(False, message=f"no code at or after line {bp.spec.line} in {bp.file}")
        (gen_line, gen_column), _ = target
        location = {"scriptId": script_id, "lineNumber": gen_line, "columnNumber": gen_column}
        placed = await self._set(bp, "Debugger.setBreakpoint", condition, {"location": location})
        if isinstance(placed, BreakpointResult):
            return placed
        native, found = placed
        return self._bound(bp, found.get("actualLocation") or location, native)

    async def _set(self, bp: _Bp, method: str, condition: str | None,
                   params: dict[str, Any]) -> tuple[str, dict[str, Any]] | BreakpointResult:
        """Send one V8 breakpoint request for ``bp``: its id and answer, or the refusal as a result."""
        if condition:
            params["condition"] = condition
        try:
            found = await self._request(method, params)
        except AdapterRequestError as exc:
            return BreakpointResult(False, message=str(exc))
        native = str(found.get("breakpointId"))
        self._own(bp, native)
        return native, found

    def _mapped_bps_for(self, sources: list[str]) -> list[_Bp]:
        wanted = {os.path.normpath(s) for s in sources}
        return [self._bps[i] for path, ids in self._files.items() if path in wanted for i in ids if i in self._bps]

    def _bind_mapped(self, script_id: str) -> asyncio.Future[list[str]]:
        """Set (once per script) the breakpoints of the files a newly loaded mapped script covers."""
        binding = self._binding.get(script_id)
        if binding is None:
            binding = self._binding[script_id] = asyncio.ensure_future(self._bind_script(script_id))
        return binding

    async def _bind_script(self, script_id: str) -> list[str]:
        script = self._scripts.get(script_id)
        if script is None or script.map is None:
            return []
        placed: list[str] = []
        for bp in self._mapped_bps_for(script.map.sources):
            if any(self._native_at.get(n, ("",))[0] == script_id for n in bp.natives):
                continue
            before = len(bp.natives)
            try:
                result = await self._bind_one(bp, script_id, bp.condition)
            except (AdapterRequestError, AdapterTimeoutError) as exc:
                log.info("binding breakpoint %s in script %s failed: %s", bp.spec.id, script_id, exc)
                continue
            placed.extend(bp.natives[before:])
            if result.verified and not bp.result.verified:
                bp.result = result
                self._events.on_breakpoint_changed(bp.spec.id, result)
        return placed

    def _on_resolved(self, params: dict[str, Any]) -> None:
        bp_id = self._by_native.get(str(params.get("breakpointId")))
        bp = self._bps.get(bp_id) if bp_id is not None else None
        if bp is None or bp.result.verified:
            return
        bp.result = self._bound(bp, params.get("location") or {}, str(params.get("breakpointId")))
        self._events.on_breakpoint_changed(bp.spec.id, bp.result)

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        for bp_id in self._functions:
            await self._remove(bp_id)
        self._functions = []
        results = []
        for spec in breakpoints:
            bp = _Bp(spec)
            self._bps[spec.id] = bp
            self._functions.append(spec.id)
            bp.result = await self._place_function(bp)
            results.append(bp.result)
        return results

    async def _place_function(self, bp: _Bp) -> BreakpointResult:
        """A breakpoint on each call of the function the name evaluates to, where it is reachable
        (the stopped frame's scope, else the global one); unreachable names are tried again at each stop."""
        assert isinstance(bp.spec, FunctionBreakpoint)
        try:
            condition = bp.condition = await self._condition(bp)
        except AdapterRequestError as exc:
            return BreakpointResult(False, message=exc.message)
        try:
            found = await self._evaluate_raw(bp.spec.name, 0 if self._frames else None)
        except AdapterRequestError:
            return BreakpointResult(False, message=f"{bp.spec.name} is not reachable from here yet; it is looked up "
                                                   "again at every stop (or set a line breakpoint in it)")
        obj = found.get("result") or {}
        if obj.get("type") != "function" or "objectId" not in obj:
            return BreakpointResult(False, message=f"{bp.spec.name} is {jsv.text_of(obj)}, not a function")
        placed = await self._set(bp, "Debugger.setBreakpointOnFunctionCall", condition, {"objectId": obj["objectId"]})
        if isinstance(placed, BreakpointResult):
            return placed
        return BreakpointResult(True, line=await self._function_location(obj["objectId"]))

    async def _function_location(self, object_id: str) -> int | None:
        found = await self._request("Runtime.getProperties", {"objectId": object_id, "ownProperties": True})
        for prop in found.get("internalProperties") or []:
            if prop.get("name") == "[[FunctionLocation]]":
                return self._scripts.place(*position((prop.get("value") or {}).get("value") or {})).line
        return None

    async def _retry_functions(self) -> None:
        for bp_id in self._functions:
            bp = self._bps.get(bp_id)
            if bp is not None and not bp.result.verified:
                with contextlib.suppress(AdapterRequestError):
                    bp.result = await self._place_function(bp)
                    if bp.result.verified:
                        self._events.on_breakpoint_changed(bp_id, bp.result)

    async def set_exception_filters(self, filters: list[str]) -> None:
        self._filters = list(filters)
        state = "all" if "raised" in filters else "uncaught" if "uncaught" in filters else "none"
        await self._request("Debugger.setPauseOnExceptions", {"state": state})

    # -- stops -----------------------------------------------------------------------------------------

    def _on_paused(self, params: dict[str, Any]) -> None:
        self._frames = list(params.get("callFrames") or [])
        self._pause_data = params.get("data") if isinstance(params.get("data"), dict) else None
        self._pause_reason = str(params.get("reason") or "")
        self._events.refine(self._handle_pause(params))

    async def _handle_pause(self, params: dict[str, Any]) -> None:
        reason = self._pause_reason
        frames = self._frames
        here = position((frames[0].get("location") or {}) if frames else {})
        script_id = here[0]
        script = self._scripts.get(script_id)
        if script is not None and script.url == PROBE_URL:
            if self._idle is not None and not self._idle.done():
                self._idle.set_result(True)
            await self._resume_quietly()
            return
        if self._idle is not None and not self._idle.done():
            self._idle.set_result(False)
        hits = [str(h) for h in params.get("hitBreakpoints") or []]
        user: list[int] = []
        entry = False
        for native in hits:
            if native == self._entry_bp:
                entry = True
            elif (bp_id := self._by_native.get(native)) is not None:
                user.append(bp_id)
        if entry:
            for native in await self._bind_mapped(script_id):
                bp_id = self._by_native.get(native)
                if bp_id is not None and self._native_at.get(native) == here:
                    user.append(bp_id)  # V8 does not stop again where it is paused: this is the hit
        at_user_code = self._scripts.is_user_code(*here)
        if self._stop_on_entry and (entry or reason == "Break on start"):
            if not at_user_code:  # a loader's start (tsx under --import): stop at the first user script instead
                await self._ensure_entry_bp()
                await self._resume_quietly()
                return
            self._stop_on_entry = False
            user.append(0)
        elif reason == "Break on start":
            await self._resume_quietly()
            return
        stopping = [b for b in user if self._counts(b)]
        exception = reason in ("exception", "promiseRejection")
        self._hidden = leading(frames, self._internal_frame) if frames else 0
        if exception:
            event = self._exception_event(reason)
        elif stopping:
            if 0 in stopping:
                event = StopEvent("entry", THREAD_ID, "Paused on entry")
            else:
                event = StopEvent("breakpoint", THREAD_ID, "Paused on breakpoint",
                                  hit_breakpoint_ids=tuple(b for b in stopping if b))
        elif self._stepping is not None:
            if not at_user_code:
                await self._step_on(script_id)
                return
            event = StopEvent("step", THREAD_ID, "Paused after step")
        elif self._pausing:
            event = StopEvent("pause", THREAD_ID, "Paused")
        elif user or entry:
            await self._resume_quietly()  # hits that do not count, or a script's entry
            return
        else:
            event = StopEvent("breakpoint", THREAD_ID, "Paused on debugger statement", text="debugger statement")
        self._stepping = None
        self._steps_on = 0
        self._pausing = False
        self._reported = True
        self._events.target.on_stopped(event)
        if self._functions:
            self._spawn(self._retry_functions())

    def _counts(self, bp_id: int) -> bool:
        if bp_id == 0:
            return True
        bp = self._bps.get(bp_id)
        if bp is None:
            return False
        bp.hits += 1
        return bp.hit is None or satisfied(bp.hit[0], bp.hit[1], bp.hits)

    def _internal_frame(self, frame: dict[str, Any]) -> bool:
        script = self._scripts.get(str((frame.get("location") or {}).get("scriptId")))
        return script is None or script.internal

    def _exception_event(self, reason: str) -> StopEvent:
        detail = self._exception_detail()
        kind = "promise rejection" if reason == "promiseRejection" else "exception"
        uncaught = bool((self._pause_data or {}).get("uncaught"))
        text = f"{detail.type}: {detail.message}" if detail else None
        return StopEvent("exception", THREAD_ID, f"Paused on {'uncaught ' if uncaught else ''}{kind}", text=text)

    def _exception_detail(self) -> ExceptionDetail | None:
        data = self._pause_data
        if data is None:
            return None
        if data.get("subtype") == "error" or data.get("type") == "object":
            description = str(data.get("description") or "")
            first = description.split("\n", 1)[0]
            class_name = str(data.get("className") or "Error")
            message = first[len(class_name) + 2:] if first.startswith(class_name + ":") else first
            if data.get("subtype") != "error":
                message = jsv.text_of(data)
            return ExceptionDetail(class_name, message)
        return ExceptionDetail(jsv.type_of(data), jsv.text_of(data))

    async def _step_on(self, script_id: str) -> None:
        """A step ended outside the user's code: step on (out of Node's internals, through a loader's
        unmapped helpers) until user code, or run on after ``STEP_ON_LIMIT`` steps."""
        self._steps_on += 1
        if self._steps_on > STEP_ON_LIMIT:
            self._stepping = None
            self._steps_on = 0
            await self._resume_quietly()
            return
        script = self._scripts.get(script_id)
        method = "Debugger.stepInto" if script is not None and not script.internal else "Debugger.stepOut"
        with contextlib.suppress(AdapterRequestError):
            await self._request(method)

    async def _resume_quietly(self) -> None:
        with contextlib.suppress(AdapterRequestError, AdapterGoneError):
            await self._request("Debugger.resume")

    def _on_resumed(self, _params: dict[str, Any]) -> None:
        self._frames = []
        self._pause_data = None
        self._refs.clear()
        if self._client is not None and not self._client.is_closed:
            self._client.send("Runtime.releaseObjectGroup", {"objectGroup": GROUP})
        if self._reported:
            self._reported = False
            self._events.on_continued(THREAD_ID, True)

    # -- execution ------------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        await self._request("Debugger.resume")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        self._stepping = kind
        self._steps_on = 0
        method = {"over": "Debugger.stepOver", "into": "Debugger.stepInto", "out": "Debugger.stepOut"}[kind]
        await self._request(method)

    async def pause(self, thread_id: int | None) -> None:
        """Pause at the next statement; when none runs (an idle event loop) say so instead of waiting."""
        self._pausing = True
        loop = asyncio.get_running_loop()
        self._idle = loop.create_future()
        await self._request("Debugger.pause")
        self.client.send("Runtime.evaluate", {"expression": f"void 0\n//# sourceURL={PROBE_URL}", "silent": True})
        try:
            idle = await asyncio.wait_for(asyncio.shield(self._idle), INSPECT_TIMEOUT_S)
        except asyncio.TimeoutError:
            return
        if idle:
            self._pausing = False
            raise AdapterRequestError("pause", f"nothing to pause: {self.pause_limits}")

    # -- inspection ---------------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        return [Thread(THREAD_ID, "main")]

    def _shown(self) -> list[dict[str, Any]]:
        return self._frames[self._hidden:]

    def _frame(self, frame: FrameRef) -> dict[str, Any]:
        shown = self._shown()
        if not 0 <= frame.index < len(shown):
            raise AdapterRequestError("frame", f"no frame {frame.index}; the stack has {len(shown)} frames")
        return shown[frame.index]

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        shown = self._shown()
        frames = []
        for cdp in shown[start:start + levels]:
            place = self._scripts.place(*position(cdp.get("location") or {}))
            frames.append(Frame(cdp.get("functionName") or "(anonymous)", place.file, place.line, place.column))
        return frames, len(shown)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        cdp = self._frame(frame)
        chain = [s for s in cdp.get("scopeChain") or [] if "objectId" in (s.get("object") or {})]
        merged: list[tuple[str, str]] = []
        for s in chain:  # innermost first, up to the script and global scopes
            kind = str(s.get("type"))
            if kind not in _MERGED_TYPES:
                break
            merged.append((kind, s["object"]["objectId"]))
        this = cdp.get("this") or {}
        instance = (this.get("type") == "object" and this.get("subtype") is None and cdp.get("functionName")
                    and this.get("className") not in ("Object", "global", "Window", None))
        scopes = [Scope("Locals", self._refs.add(_Ref("merged", frame.index, merged, this=this if instance else None)),
                        hint="locals")]
        for s in chain:
            kind = str(s.get("type"))
            label = _PREFERRED_SCOPE_NAMES.get(kind, kind)
            if kind == "closure" and s.get("name"):
                label = f"Closure ({s['name']})"
            ref = self._refs.add(_Ref("scope", frame.index, [(kind, s["object"]["objectId"])]))
            scopes.append(Scope(label, ref, expensive=kind == "global"))
        return scopes

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        if handle.kind == "merged":
            return await self._merged(handle)
        if handle.kind == "scope":
            return await self._properties(handle.objects[0][1], None)
        return await self._children(handle, start or 0, count)

    async def _merged(self, handle: _Ref) -> list[Variable]:
        listings = await asyncio.gather(*(
            self._properties(object_id, None, skip_functions=number > 0 and kind in ("closure", "module"))
            for number, (kind, object_id) in enumerate(handle.objects)))
        seen: set[str] = set()
        out: list[Variable] = []
        if handle.this is not None:
            out.append(self._variable("this", handle.this, "this"))
            seen.add("this")
        for number, listing in enumerate(listings):
            for variable in listing:
                if variable.name not in seen:
                    seen.add(variable.name)
                    handle.owners[variable.name] = number
                    out.append(variable)
        return out

    async def _properties(self, object_id: str, parent_name: str | None,
                          skip_functions: bool = False) -> list[Variable]:
        found = await self._request("Runtime.getProperties", {
            "objectId": object_id, "ownProperties": True, "generatePreview": True})
        out = []
        for prop in found.get("result") or []:
            name = str(prop.get("name"))
            value = prop.get("value")
            if value is None:
                if "get" in prop:
                    out.append(Variable(name, "(getter)", "accessor",
                                        evaluate_name=jsv.member_access(parent_name, name)))
                continue
            if skip_functions and value.get("type") == "function":
                continue
            evaluate_name = jsv.member_access(parent_name, name) if parent_name is not None else name
            out.append(self._variable(name, value, evaluate_name))
        for prop in found.get("privateProperties") or []:
            if "value" in prop:
                out.append(self._variable(str(prop.get("name")), prop["value"], None))
        for prop in found.get("internalProperties") or []:
            name = str(prop.get("name"))
            if name in ("[[PromiseState]]", "[[PromiseResult]]", "[[Target]]", "[[Handler]]", "[[BoundThis]]",
                        "[[PrimitiveValue]]", "[[GeneratorState]]") and "value" in prop:
                out.append(self._variable(name, prop["value"], None))
        return out

    def _variable(self, name: str, obj: dict[str, Any], evaluate_name: str | None) -> Variable:
        ref = self._refs.add(_Ref("object", obj=obj, name=evaluate_name)) if jsv.expandable(obj) else 0
        return Variable(name, jsv.text_of(obj), jsv.type_of(obj), ref, evaluate_name, jsv.count_of(obj))

    async def _children(self, handle: _Ref, start: int, count: int | None) -> list[Variable]:
        obj = handle.obj
        subtype = obj.get("subtype")
        object_id = str(obj.get("objectId"))
        total = jsv.count_of(obj)
        if subtype in jsv.INDEXED | jsv.KEYED | jsv.LISTED:
            size = count if count is not None else min(CHILD_CAP, total if total is not None else CHILD_CAP)
            return await self._slice(handle, start, size)
        listing = await self._properties(object_id, handle.name)
        return listing[start:start + count] if count is not None else listing

    async def _slice(self, handle: _Ref, start: int, count: int) -> list[Variable]:
        """Elements ``start..start+count`` of an array, typed array, Map or Set, by a function run on it."""
        subtype = handle.obj.get("subtype")
        function = _ENTRIES if subtype in jsv.KEYED else _VALUES if subtype in jsv.LISTED else _SLICE
        found = await self._request("Runtime.callFunctionOn", {
            "objectId": handle.obj["objectId"], "functionDeclaration": function, "objectGroup": GROUP,
            "arguments": [{"value": start}, {"value": count}], "silent": True})
        result = found.get("result") or {}
        if "objectId" not in result:
            return []
        listed = await self._request("Runtime.getProperties", {
            "objectId": result["objectId"], "ownProperties": True, "generatePreview": True})
        items = [p.get("value") or {} for p in listed.get("result") or [] if str(p.get("name")).isdigit()]
        if subtype in jsv.KEYED:
            return [self._variable(jsv.text_of(k), v, None) for k, v in zip(items[::2], items[1::2], strict=False)]
        name = handle.name
        return [self._variable(str(start + i), item, jsv.member_access(name, str(start + i))
                               if subtype not in jsv.LISTED else None) for i, item in enumerate(items)]

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        handle = self._refs.get(parent.ref)
        if handle is None or handle.kind != "object":
            return None
        return await self._children(handle, start, count)

    def is_noise(self, variable: Variable) -> bool:
        return variable.name in MODULE_WRAPPER and variable.type in ("function", "Module", "Object", "string")

    async def _evaluate_raw(self, expression: str, frame_index: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {"expression": expression, "objectGroup": GROUP, "generatePreview": True,
                                  "silent": True, "timeout": EVALUATE_TIMEOUT_MS}
        if frame_index is not None and self._frames:
            method = "Debugger.evaluateOnCallFrame"
            params["callFrameId"] = self._frame(FrameRef(THREAD_ID, frame_index))["callFrameId"]
        else:
            method = "Runtime.evaluate"
            params["replMode"] = True
            if self._context_id is not None:
                params["contextId"] = self._context_id
        found = await self._request(method, params, timeout=EVALUATE_TIMEOUT_MS / 1000 + INSPECT_TIMEOUT_S)
        details = found.get("exceptionDetails")
        if details:
            raise AdapterRequestError("evaluate", _exception_text(details))
        return found

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        found = await self._evaluate_raw(expression, frame.index if frame is not None else None)
        obj = found.get("result") or {}
        return self._variable(expression, obj, expression)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("setVariable", f"ref {ref} is not valid at this stop")
        frame = FrameRef(THREAD_ID, handle.frame)
        if handle.kind in ("merged", "scope"):
            cdp = self._frame(frame)
            new = (await self._evaluate_raw(value, handle.frame)).get("result") or {}
            number = self._scope_number(cdp, handle, name)
            try:
                if number is None:
                    raise AdapterRequestError("setVariableValue", "not a local scope")
                await self._request("Debugger.setVariableValue", {
                    "scopeNumber": number, "variableName": name, "newValue": _call_argument(new),
                    "callFrameId": cdp["callFrameId"]})
            except AdapterRequestError:  # block scopes (let/const in a block) take an assignment instead
                await self._evaluate_raw(f"{name} = ({value})", handle.frame)
            updated = await self._evaluate_raw(name, handle.frame)
            return self._variable(name, updated.get("result") or {}, name)
        new = (await self._evaluate_raw(value, handle.frame if self._frames else None)).get("result") or {}
        found = await self._request("Runtime.callFunctionOn", {
            "objectId": handle.obj["objectId"], "functionDeclaration": _ASSIGN, "objectGroup": GROUP,
            "arguments": [{"value": name}, _call_argument(new)], "generatePreview": True, "silent": True})
        if found.get("exceptionDetails"):
            raise AdapterRequestError("setVariable", _exception_text(found["exceptionDetails"]))
        return self._variable(name, found.get("result") or {}, jsv.member_access(handle.name, name))

    def _scope_number(self, cdp: dict[str, Any], handle: _Ref, name: str) -> int | None:
        index = handle.owners.get(name, 0) if handle.kind == "merged" else 0
        if index >= len(handle.objects):
            return None
        object_id = handle.objects[index][1]
        for number, s in enumerate(cdp.get("scopeChain") or []):
            if (s.get("object") or {}).get("objectId") == object_id:
                return number if s.get("type") in ("local", "closure", "catch") else None
        return None

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if self._pause_reason not in ("exception", "promiseRejection"):
            return None
        return self._exception_detail()

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
        found = await self._request(method, params)
        return json.dumps(found, indent=1)[:100_000]


def _call_argument(obj: dict[str, Any]) -> dict[str, Any]:
    if "objectId" in obj:
        return {"objectId": obj["objectId"]}
    if "unserializableValue" in obj:
        return {"unserializableValue": obj["unserializableValue"]}
    if obj.get("type") == "undefined":
        return {}
    return {"value": obj.get("value")}


def _exception_text(details: dict[str, Any]) -> str:
    exception = details.get("exception") or {}
    description = exception.get("description")
    if isinstance(description, str) and description:
        return description.split("\n", 1)[0]
    if exception:
        return jsv.text_of(exception)
    return str(details.get("text") or "exception")
