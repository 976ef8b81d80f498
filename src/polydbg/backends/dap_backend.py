"""A Backend over any DAP adapter; subclasses say how to start the adapter and shape launch args.

The handshake follows the DAP specification and works for adapters that answer ``launch`` before
or only after ``configurationDone`` (debugpy, lldb-dap): send launch, wait for ``initialized``,
let the session configure breakpoints, send ``configurationDone``, then await the launch answer.
"""

from __future__ import annotations

import asyncio
import base64
import collections
import contextlib
import logging
import os
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    AttachSpec,
    BackendListener,
    BreakpointResult,
    Capabilities,
    Configure,
    DataBreakpoint,
    ExceptionDetail,
    Frame,
    FunctionBreakpoint,
    Instruction,
    LaunchSpec,
    MemoryBlock,
    Scope,
    SourceBreakpoint,
    StepKind,
    StopEvent,
    Thread,
    Variable,
    parse_address,
)
from polydbg.dap.client import DapClient, wait_response
from polydbg.errors import AdapterGoneError, AdapterTimeoutError, EnvironmentProblem
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 10.0
_STEP_COMMANDS: dict[StepKind, str] = {"over": "next", "into": "stepIn", "out": "stepOut"}


class DapBackend:
    """Generic DAP backend. Subclasses implement ``_start_adapter`` and the ``_*_arguments`` hooks."""

    name = "dap"
    adapter_id = "polydbg"
    # debug_launch's break_on_exception (uncaught / raised / none) → this adapter's exception filters
    BREAK_ON_EXCEPTION: ClassVar[dict[str, tuple[str, ...]]] = {}

    def __init__(self, listener: BackendListener, language: str = "") -> None:
        self._listener = listener
        self.language = language
        self.capabilities = Capabilities()
        self._client: DapClient | None = None
        self._process: asyncio.subprocess.Process | None = None
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=20)
        self._debuggee_pgid: int | None = None
        self._initialized = asyncio.Event()
        self._ending = False
        self._ended: asyncio.Future[None] | None = None
        self._terminated_reported = False
        self.debuggee_pid: int | None = None
        self._tasks: set[asyncio.Task[None]] = set()  # background readers, referenced so they are not collected

    # -- subclass hooks ---------------------------------------------------------------------------

    @staticmethod
    def find() -> str | None:
        """Where this backend's debugger is installed, or None (used for defaults and doctor)."""
        raise NotImplementedError

    async def _start_adapter(self) -> FramedStream:
        raise NotImplementedError

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        raise NotImplementedError

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        raise NotImplementedError

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        await self._begin("launch", self._launch_arguments(spec), configure, timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        await self._begin("attach", self._attach_arguments(spec), configure, timeout_s)

    async def _begin(self, command: str, arguments: dict[str, Any], configure: Configure,
                     timeout_s: float) -> None:
        stream = await self._start_adapter()
        client = self._client = DapClient(stream, self.name)
        self._wire_events(client)
        client.start()
        try:
            body = await client.request("initialize", {
                "clientID": "polydbg", "clientName": "polydbg", "adapterID": self.adapter_id,
                "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True,
                "supportsVariableType": True, "supportsRunInTerminalRequest": False,
                "supportsProgressReporting": False, "supportsMemoryReferences": True,
            }, timeout=timeout_s)
            self.capabilities = _capabilities(body)
            self._tune_capabilities()
            started = client.send_request(command, arguments)
            started.add_done_callback(_retrieve)  # its failure is reported through the handshake
            await self._wait_initialized(started, command, timeout_s)
            await configure()
            if body.get("supportsConfigurationDoneRequest", True):
                await client.request("configurationDone", {}, timeout=timeout_s)
            await wait_response(started, command, timeout_s, self.name)
        except AdapterGoneError as exc:
            raise AdapterGoneError(f"{exc}{self._stderr_hint()}") from None

    def _tune_capabilities(self) -> None:
        """Adjust capabilities for adapter quirks (override)."""

    async def _wait_initialized(self, started: asyncio.Future[dict[str, Any]], command: str,
                                timeout_s: float) -> None:
        waiter: asyncio.Future[Any] = asyncio.ensure_future(self._initialized.wait())
        pending: set[asyncio.Future[Any]] = {waiter, started}
        try:
            done, _ = await asyncio.wait(pending, timeout=timeout_s,
                                         return_when=asyncio.FIRST_COMPLETED)
            if not done:
                raise AdapterTimeoutError(f"{self.name} did not become ready within {timeout_s:g} s")
            if started in done and started.exception() is not None:
                raise started.exception()  # type: ignore[misc]
            if not self._initialized.is_set():
                await asyncio.wait_for(self._initialized.wait(), timeout_s)
        finally:
            waiter.cancel()

    def _wire_events(self, client: DapClient) -> None:
        client.on_event("initialized", lambda _b: self._initialized.set())
        client.on_event("stopped", self._on_stopped)
        client.on_event("continued", lambda b: self._listener.on_continued(
            b.get("threadId"), bool(b.get("allThreadsContinued", True))))
        client.on_event("output", self._on_output)
        client.on_event("exited", lambda b: self._listener.on_exited(b.get("exitCode")))
        client.on_event("terminated", lambda _b: self._report_terminated(None))
        client.on_event("breakpoint", self._on_breakpoint)
        client.on_event("process", self._on_process)
        self._tasks.add(asyncio.get_running_loop().create_task(self._watch_client(client)))

    async def _watch_client(self, client: DapClient) -> None:
        await client.closed.wait()
        if not self._ending:
            code = None
            if self._process is not None:
                with contextlib.suppress(asyncio.TimeoutError):
                    code = await asyncio.wait_for(self._process.wait(), 1.0)
            cause = f"{self.name} adapter exited unexpectedly"
            if code is not None:
                cause += f" (exit code {code})"
            self._report_terminated(cause + self._stderr_hint())

    def _report_terminated(self, cause: str | None) -> None:
        if not self._terminated_reported:
            self._terminated_reported = True
            self._listener.on_terminated(cause)

    def _on_stopped(self, body: dict[str, Any]) -> None:
        self._listener.on_stopped(StopEvent(
            reason=str(body.get("reason", "unknown")),
            thread_id=body.get("threadId"),
            description=body.get("description"),
            text=body.get("text"),
            hit_breakpoint_ids=tuple(body.get("hitBreakpointIds") or ()),
            all_threads_stopped=bool(body.get("allThreadsStopped", True)),
        ))

    def _on_output(self, body: dict[str, Any]) -> None:
        category = str(body.get("category", "console"))
        if category == "telemetry":
            return
        self._listener.on_output(category, str(body.get("output", "")))

    def _on_breakpoint(self, body: dict[str, Any]) -> None:
        bp = body.get("breakpoint") or {}
        if isinstance(bp.get("id"), int):
            self._listener.on_breakpoint_changed(bp["id"], _breakpoint_result(bp))

    def _on_process(self, body: dict[str, Any]) -> None:
        pid = body.get("systemProcessId")
        if isinstance(pid, int) and body.get("startMethod", "launch") == "launch":
            self.debuggee_pid = pid
            with contextlib.suppress(OSError):
                self._debuggee_pgid = os.getpgid(pid)
                procs.track_group(self._debuggee_pgid)

    def _remember_stderr(self, line: str) -> None:
        self._stderr_tail.append(line)

    def _stderr_hint(self) -> str:
        tail = "".join(self._stderr_tail).strip()
        return f"; adapter stderr: {tail[-600:]}" if tail else ""

    async def _drain_stderr(self, reader: asyncio.StreamReader) -> None:
        while True:
            line = await reader.readline()
            if not line:
                return
            text = line.decode("utf-8", "replace")
            log.debug("%s stderr: %s", self.name, text.rstrip())
            self._remember_stderr(text)

    async def _spawn_stdio_adapter(self, argv: list[str], env: dict[str, str] | None = None) -> FramedStream:
        try:
            process = await procs.spawn(argv, env=env)
        except OSError as exc:
            raise EnvironmentProblem(f"cannot start {self.name} adapter {argv[0]!r}: {exc}") from None
        self._process = process
        assert process.stdout is not None and process.stdin is not None and process.stderr is not None
        self._tasks.add(asyncio.get_running_loop().create_task(self._drain_stderr(process.stderr)))
        return FramedStream(process.stdout, process.stdin, self.name)

    # -- requests ---------------------------------------------------------------------------------

    @property
    def client(self) -> DapClient:
        if self._client is None:
            raise AdapterGoneError(f"{self.name} adapter is not running")
        return self._client

    async def _request(self, command: str, arguments: dict[str, Any] | None = None,
                       timeout: float = INSPECT_TIMEOUT_S) -> dict[str, Any]:
        return await self.client.request(command, arguments, timeout)

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        wire = [{"line": bp.line, **_options(bp.condition, bp.hit_condition, bp.log_message)} for bp in breakpoints]
        body = await self._request("setBreakpoints", {"source": {"path": file}, "breakpoints": wire,
                                                      "lines": [b.line for b in breakpoints]})
        return [_breakpoint_result(b) for b in body.get("breakpoints", [])]

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        wire = [{"name": bp.name, **_options(bp.condition, bp.hit_condition, None)} for bp in breakpoints]
        body = await self._request("setFunctionBreakpoints", {"breakpoints": wire})
        return [_breakpoint_result(b) for b in body.get("breakpoints", [])]

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self._request("setExceptionBreakpoints", {"filters": filters})

    async def threads(self) -> list[Thread]:
        body = await self._request("threads")
        return [Thread(int(t["id"]), str(t.get("name", ""))) for t in body.get("threads", [])]

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        body = await self._request("stackTrace", {"threadId": thread_id, "startFrame": start, "levels": levels})
        frames = []
        for f in body.get("stackFrames", []):
            source = f.get("source") or {}
            frames.append(Frame(id=int(f["id"]), name=str(f.get("name", "?")),
                                file=source.get("path") or source.get("name"),
                                line=f.get("line") or None, column=f.get("column"),
                                pc=parse_address(f.get("instructionPointerReference"))))
        total = body.get("totalFrames")
        return frames, total if isinstance(total, int) else None

    async def scopes(self, frame_id: int) -> list[Scope]:
        body = await self._request("scopes", {"frameId": frame_id})
        return [Scope(name=str(s.get("name", "")), ref=int(s.get("variablesReference", 0)),
                      expensive=bool(s.get("expensive", False)), hint=s.get("presentationHint"))
                for s in body.get("scopes", [])]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        args: dict[str, Any] = {"variablesReference": ref}
        if start is not None:
            args["start"] = start
        if count is not None:
            args["count"] = count
        body = await self._request("variables", args)
        return [_variable(v) for v in body.get("variables", [])]

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame_id: int | None = None) -> list[Variable] | None:
        return None

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable:
        args: dict[str, Any] = {"expression": expression, "context": context}
        if frame_id is not None:
            args["frameId"] = frame_id
        body = await self._request("evaluate", args)
        return Variable(name=expression, value=str(body.get("result", "")), type=body.get("type"),
                        ref=int(body.get("variablesReference", 0)), evaluate_name=expression,
                        indexed_count=body.get("indexedVariables"), named_count=body.get("namedVariables"),
                        memory_reference=body.get("memoryReference"))

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        body = await self._request("setVariable", {"variablesReference": ref, "name": name, "value": value})
        return Variable(name=name, value=str(body.get("value", "")), type=body.get("type"),
                        ref=int(body.get("variablesReference", 0)))

    # -- native operations (DAP readMemory, writeMemory, disassemble, data breakpoints) -------------

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        body = await self._request("readMemory", {"memoryReference": hex(address), "count": count})
        data = base64.b64decode(body.get("data") or "")
        start = parse_address(body.get("address"))
        return MemoryBlock(address=start if start is not None else address, data=data,
                           unreadable=int(body.get("unreadableBytes") or 0))

    async def write_memory(self, address: int, data: bytes) -> int:
        body = await self._request("writeMemory", {"memoryReference": hex(address),
                                                   "data": base64.b64encode(data).decode()})
        return int(body.get("bytesWritten", len(data)))

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        body = await self._request("disassemble", {"memoryReference": hex(address), "instructionOffset": offset,
                                                   "instructionCount": count, "resolveSymbols": True})
        out = []
        for item in body.get("instructions", []):
            at = parse_address(item.get("address"))
            if at is None:
                continue
            location = item.get("location") or {}
            out.append(Instruction(address=at, text=str(item.get("instruction", "")), symbol=item.get("symbol"),
                                   file=location.get("path"), line=item.get("line")))
        return out

    async def registers(self, frame_id: int) -> list[Variable]:
        for scope in await self.scopes(frame_id):
            if "register" in scope.name.lower() or (scope.hint or "").lower() == "registers":
                return await self.variables(scope.ref)
        return []

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame_id: int | None) -> list[BreakpointResult]:
        """Resolve each expression with dataBreakpointInfo, then replace the adapter's watchpoints."""
        wire: list[dict[str, Any]] = []
        results: list[BreakpointResult | None] = []
        data_ids: list[str] = []
        for bp in breakpoints:
            data_id = bp.data_id
            if data_id is None:
                args: dict[str, Any] = {"name": bp.expression}
                if frame_id is not None:
                    args["frameId"] = frame_id
                info = await self._request("dataBreakpointInfo", args)
                data_id = info.get("dataId")
                if not data_id:
                    results.append(BreakpointResult(False, message=str(info.get("description") or
                                                                       f"cannot watch {bp.expression!r}")))
                    continue
            wire.append({"dataId": data_id, "accessType": bp.access})
            data_ids.append(str(data_id))
            results.append(None)
        body = await self._request("setDataBreakpoints", {"breakpoints": wire})
        answers = iter(_breakpoint_result(b)._replace(data_id=data_id)
                       for b, data_id in zip(body.get("breakpoints", []), data_ids, strict=False))
        return [r if r is not None else next(answers, BreakpointResult(False, message="no answer"))
                for r in results]

    async def command(self, text: str, frame_id: int | None) -> str:
        args: dict[str, Any] = {"expression": text, "context": "repl"}
        if frame_id is not None:
            args["frameId"] = frame_id
        body = await self._request("evaluate", args)
        return str(body.get("result", ""))

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if not self.capabilities.exception_info:
            return None
        body = await self._request("exceptionInfo", {"threadId": thread_id})
        return ExceptionDetail(type=str(body.get("exceptionId", "exception")),
                               message=str(body.get("description") or ""))

    def _moving(self) -> None:
        """The program is about to run: forget what a subclass learnt about the last stop (override)."""

    async def resume(self, thread_id: int | None) -> None:
        self._moving()
        await self._request("continue", {"threadId": thread_id if thread_id is not None else 0})

    async def step(self, thread_id: int, kind: StepKind) -> None:
        self._moving()
        await self._request(_STEP_COMMANDS[kind], {"threadId": thread_id})

    async def pause(self, thread_id: int | None) -> None:
        await self._request("pause", {"threadId": thread_id if thread_id is not None else 0})

    async def terminate(self) -> None:
        await self._end_once(terminate_debuggee=True)

    async def detach(self) -> None:
        await self._end_once(terminate_debuggee=False)

    async def _end_once(self, terminate_debuggee: bool) -> None:
        """Idempotent: the first caller does the work, later callers wait for it."""
        if self._ended is None:
            self._ended = asyncio.ensure_future(self._end(terminate_debuggee))
        await asyncio.shield(self._ended)

    async def _end(self, terminate_debuggee: bool) -> None:
        self._ending = True
        client = self._client
        if client is not None and not client.is_closed:
            with contextlib.suppress(Exception):
                # killing follows anyway when ending; a detach must let the adapter resume the program
                await client.request("disconnect", {"terminateDebuggee": terminate_debuggee, "restart": False},
                                     timeout=0.5 if terminate_debuggee else 2.0)
            await client.close("session ended")
        if terminate_debuggee and self._debuggee_pgid is not None:
            await procs.kill_group(self._debuggee_pgid, grace_s=0.5)
        if self._process is not None:
            await procs.kill_group(self._process.pid, grace_s=0.5)
            await procs.reap(self._process, 1.0)
        self._report_terminated(None)


def _options(condition: str | None, hit_condition: str | None, log_message: str | None) -> dict[str, str]:
    """The optional fields of a DAP breakpoint, only those that are set."""
    fields = {"condition": condition, "hitCondition": hit_condition, "logMessage": log_message}
    return {key: value for key, value in fields.items() if value}


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen (it is raised elsewhere or superseded)."""
    if not future.cancelled():
        future.exception()


def _capabilities(body: dict[str, Any]) -> Capabilities:
    filters = tuple(str(f.get("filter")) for f in body.get("exceptionBreakpointFilters", []) or []
                    if isinstance(f, dict) and f.get("filter"))
    return Capabilities(
        conditional_breakpoints=bool(body.get("supportsConditionalBreakpoints")),
        hit_conditional_breakpoints=bool(body.get("supportsHitConditionalBreakpoints")),
        log_points=bool(body.get("supportsLogPoints")),
        function_breakpoints=bool(body.get("supportsFunctionBreakpoints")),
        set_variable=bool(body.get("supportsSetVariable")),
        exception_info=bool(body.get("supportsExceptionInfoRequest")),
        terminate_request=bool(body.get("supportsTerminateRequest")),
        child_paging=False,
        exception_filters=filters,
        memory=bool(body.get("supportsReadMemoryRequest")),
        disassemble=bool(body.get("supportsDisassembleRequest")),
        data_breakpoints=bool(body.get("supportsDataBreakpoints")),
        extra={k: bool(v) for k, v in body.items() if k.startswith("supports") and isinstance(v, bool)},
    )


def _breakpoint_result(bp: dict[str, Any]) -> BreakpointResult:
    return BreakpointResult(verified=bool(bp.get("verified", False)), line=bp.get("line"),
                            adapter_id=bp.get("id"), message=bp.get("message"))


def _variable(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"),
                    memory_reference=v.get("memoryReference"))
