"""A Backend over any DAP adapter; subclasses say how to start the adapter and shape launch args.

The handshake follows the DAP specification and works for adapters that answer ``launch`` before
or only after ``configurationDone`` (debugpy, lldb-dap): send launch, wait for ``initialized``,
let the session configure breakpoints, send ``configurationDone``, then await the launch answer.

At the seam, breakpoints carry polydbg's ids (the adapter's ids are mapped in two ``IdMap``s: one for
breakpoints, one for data breakpoints, which adapters number apart) and frames are addressed by
(thread, index): the adapter's frame ids of the current stop are kept in ``FrameHandles`` and
fetched again when the stop moved on. Subclasses hide runtime frames at the top of a stack by
overriding ``_hidden_frames`` and shape frames in ``_frame``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import time
from dataclasses import dataclass
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
from polydbg.backends.kit.frames import FrameHandles
from polydbg.backends.kit.handles import IdMap
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

INSPECT_TIMEOUT_S = 10.0
BREAKPOINT_TIMEOUT_PER_S = 0.05  # extra deadline per breakpoint in one request (1,500 take debugpy > 10 s)


@dataclass(frozen=True)
class _Evaluation:
    expression: str
    future: asyncio.Future[dict[str, Any]]
    since: float
_STEP_COMMANDS: dict[StepKind, str] = {"over": "next", "into": "stepIn", "out": "stepOut"}


class DapBackend(Backend):
    """Generic DAP backend. Subclasses implement ``_start_adapter`` and the ``_*_arguments`` hooks."""

    name = "dap"
    adapter_id = "polydbg"
    evaluate_context: ClassVar[EvaluateContext] = "watch"

    def __init__(self, listener: BackendListener, language: str = "") -> None:
        self._listener = listener
        self.language = language
        self.capabilities = Capabilities()
        self._client: DapClient | None = None
        self._proc = procs.DebuggerProcess(self.name)
        self._initialized = asyncio.Event()
        self._ending = False
        self._ended: asyncio.Future[None] | None = None
        self._terminated_reported = False
        self._tasks: set[asyncio.Task[None]] = set()  # background work, referenced so it is not collected
        self._bp_ids: IdMap[int] = IdMap()  # polydbg id ↔ the adapter's breakpoint id
        self._data_ids: IdMap[int] = IdMap()  # polydbg id ↔ the adapter's data breakpoint id
        self._frames: FrameHandles[int] = FrameHandles()  # the adapter's frame ids at this stop
        self._evaluating: dict[int | None, _Evaluation] = {}  # expressions still running past their deadline

    # -- subclass hooks ---------------------------------------------------------------------------

    async def _start_adapter(self) -> FramedStream:
        raise NotImplementedError

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        raise NotImplementedError

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        raise NotImplementedError

    def _tune_capabilities(self) -> None:
        """Adjust capabilities for adapter quirks (override)."""

    async def _hidden_frames(self, thread_id: int) -> int:
        """How many frames at the top of the thread's stack are not shown at this stop (override)."""
        return 0

    def _frame(self, raw: dict[str, Any]) -> Frame | None:
        """A DAP stack frame as a Frame; None ends the listing (override to shape names, paths)."""
        source = raw.get("source") or {}
        return Frame(name=str(raw.get("name", "?")), file=source.get("path") or source.get("name") or None,
                     line=raw.get("line") or None, column=raw.get("column") or None,
                     pc=parse_address(raw.get("instructionPointerReference")))

    def _moving(self) -> None:
        """The program is about to run: forget what was learnt about the last stop (extend, call super)."""
        self._frames.clear()

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
            await client.wait(started, command, timeout_s)
        except AdapterGoneError as exc:
            raise AdapterGoneError(f"{exc}{self._proc.stderr_hint()}") from exc

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
        client.on_event("continued", self._on_continued)
        client.on_event("output", self._on_output)
        client.on_event("exited", lambda b: self._listener.on_exited(b.get("exitCode")))
        client.on_event("terminated", lambda _b: self._report_terminated(None))
        client.on_event("breakpoint", self._on_breakpoint)
        client.on_event("process", self._on_process)
        self._in_background(self._watch_client(client))

    def _in_background(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _watch_client(self, client: DapClient) -> None:
        await client.closed.wait()
        if not self._ending:
            self._report_terminated(await self._proc.exit_cause())

    def _report_terminated(self, cause: str | None) -> None:
        if not self._terminated_reported:
            self._terminated_reported = True
            self._listener.on_terminated(cause)

    def _stop_event(self, body: dict[str, Any]) -> StopEvent:
        """A DAP ``stopped`` body as a StopEvent, the adapter's breakpoint ids mapped to polydbg's."""
        reason = str(body.get("reason", "unknown"))
        ids = self._data_ids if "data" in reason else self._bp_ids
        hits = tuple(bp_id for n in body.get("hitBreakpointIds") or () if isinstance(n, int)
                     and (bp_id := ids.id_of(n)) is not None)
        return StopEvent(reason=reason, thread_id=body.get("threadId"), description=body.get("description"),
                         text=body.get("text"), hit_breakpoint_ids=hits)

    def _on_stopped(self, body: dict[str, Any]) -> None:
        self._frames.clear()
        self._listener.on_stopped(self._stop_event(body))

    def _on_continued(self, body: dict[str, Any]) -> None:
        self._frames.clear()
        self._listener.on_continued(body.get("threadId"), bool(body.get("allThreadsContinued", True)))

    def _on_output(self, body: dict[str, Any]) -> None:
        category = str(body.get("category", "console"))
        if category == "telemetry":
            return
        self._listener.on_output(category, str(body.get("output", "")))

    def _on_breakpoint(self, body: dict[str, Any]) -> None:
        bp = body.get("breakpoint") or {}
        native = bp.get("id")
        bp_id = self._bp_ids.id_of(native) if isinstance(native, int) else None
        if bp_id is not None:
            self._listener.on_breakpoint_changed(bp_id, _breakpoint_result(bp))

    def _on_process(self, body: dict[str, Any]) -> None:
        pid = body.get("systemProcessId")
        if isinstance(pid, int) and body.get("startMethod", "launch") == "launch":
            self._proc.track_debuggee(pid)
        if isinstance(pid, int):
            self._proc.watch_debuggee(pid, self._report_terminated)

    async def _spawn_stdio_adapter(self, argv: list[str], env: dict[str, str] | None = None) -> FramedStream:
        process = await self._proc.start(argv, env=env)
        assert process.stdout is not None and process.stdin is not None
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

    def _bind(self, ids: IdMap[int], specs: list[Any], answers: list[dict[str, Any]]) -> list[BreakpointResult]:
        """Results in spec order; each adapter id the answer gives is bound to the spec's polydbg id."""
        results = []
        for spec, answer in zip(specs, answers, strict=False):
            if isinstance(answer.get("id"), int):
                ids.bind(spec.id, answer["id"])
            results.append(_breakpoint_result(answer))
        return results

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        wire = [{"line": bp.line, **_options(bp.condition, bp.hit_condition, bp.log_message)} for bp in breakpoints]
        body = await self._request("setBreakpoints", {"source": {"path": file}, "breakpoints": wire,
                                                      "lines": [b.line for b in breakpoints]},
                                   _breakpoints_timeout(len(breakpoints)))
        return self._bind(self._bp_ids, breakpoints, body.get("breakpoints", []))

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        wire = [{"name": bp.name, **_options(bp.condition, bp.hit_condition, None)} for bp in breakpoints]
        body = await self._request("setFunctionBreakpoints", {"breakpoints": wire},
                                   _breakpoints_timeout(len(breakpoints)))
        return self._bind(self._bp_ids, breakpoints, body.get("breakpoints", []))

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self._request("setExceptionBreakpoints", {"filters": filters})

    async def threads(self) -> list[Thread]:
        body = await self._request("threads")
        return [Thread(int(t["id"]), str(t.get("name", ""))) for t in body.get("threads", [])]

    def _stack_thread(self, thread_id: int) -> int:
        """The thread id to ask ``stackTrace`` for (delve asks for the current OS thread at entry)."""
        return thread_id

    def _shown_total(self, total: object, hidden: int, start: int, count: int) -> int | None:
        return max(0, total - hidden) if isinstance(total, int) else None

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        hidden = await self._hidden_frames(thread_id)
        body = await self._request("stackTrace", {"threadId": self._stack_thread(thread_id),
                                                  "startFrame": start + hidden, "levels": levels})
        frames: list[Frame] = []
        ids: list[int] = []
        for raw in body.get("stackFrames", []):
            frame = self._frame(raw)
            if frame is None:
                break
            frames.append(frame)
            ids.append(int(raw["id"]))
        self._frames.remember(thread_id, start, ids)
        return frames, self._shown_total(body.get("totalFrames"), hidden, start, len(frames))

    async def _frame_id(self, frame: FrameRef) -> int:
        """The adapter's id of a frame at this stop (listed again when the stop moved on)."""
        known = self._frames.get(frame)
        if known is None:
            await self.stack_trace(frame.thread_id, frame.index, 1)
            known = self._frames.get(frame)
            if known is None:
                raise AdapterRequestError("stackTrace", f"thread {frame.thread_id} has no frame {frame.index}")
        return known

    async def _frame_args(self, frame: FrameRef | None) -> dict[str, Any]:
        return {} if frame is None else {"frameId": await self._frame_id(frame)}

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        body = await self._request("scopes", {"frameId": await self._frame_id(frame)})
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

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        thread = frame.thread_id if frame is not None else None
        earlier = self._evaluating.get(thread)
        if earlier is not None and not earlier.future.done():
            raise AdapterTimeoutError(
                f"{earlier.expression!r} is still running in the program (for "
                f"{time.monotonic() - earlier.since:.0f} s) and {self.name} evaluates one expression at a time "
                "on a thread, so this one would wait behind it. An endless expression cannot be interrupted: "
                "debug_terminate ends the session")
        arguments = {"expression": expression, "context": context, **await self._frame_args(frame)}
        future = self.client.send_request("evaluate", arguments)
        try:
            body = await self.client.wait(future, "evaluate", INSPECT_TIMEOUT_S)
        except AdapterTimeoutError as exc:
            self._evaluating[thread] = _Evaluation(expression, future, time.monotonic() - INSPECT_TIMEOUT_S)
            raise AdapterTimeoutError(
                f"the expression is still running after {INSPECT_TIMEOUT_S:g} s (an endless loop or a call "
                f"that waits?): the program stays stopped, but {self.name} cannot interrupt an evaluation "
                "and evaluates nothing else on this thread until it ends. debug_terminate ends the "
                "session") from exc
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

    async def registers(self, frame: FrameRef) -> list[Variable]:
        for scope in await self.scopes(frame):
            if "register" in scope.name.lower() or (scope.hint or "").lower() == "registers":
                return await self.variables(scope.ref)
        return []

    def _data_name(self, expression: str) -> str:
        """The name ``dataBreakpointInfo`` resolves for a watched expression (lldb-dap wants an address)."""
        return expression

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        """Resolve each expression with dataBreakpointInfo, then replace the adapter's watchpoints."""
        resolved: list[DataBreakpoint] = []
        failed: dict[int, BreakpointResult] = {}
        frame_args = await self._frame_args(frame)
        for index, bp in enumerate(breakpoints):
            if bp.data_id is None:
                info = await self._request("dataBreakpointInfo", {"name": self._data_name(bp.expression),
                                                                  **frame_args})
                data_id = info.get("dataId")
                if not data_id:
                    reason = str(info.get("description") or "the debugger cannot watch it")
                    failed[index] = BreakpointResult(False, message=f"cannot watch {bp.expression!r}: {reason}"
                                                     + ("" if frame is not None else " (pause the program first)"))
                    continue
                bp = bp._replace(data_id=str(data_id))
            resolved.append(bp)
        body = await self._request("setDataBreakpoints", {"breakpoints": [
            {"dataId": bp.data_id, "accessType": bp.access} for bp in resolved]})
        answers = iter(result._replace(data_id=bp.data_id) for bp, result in zip(
            resolved, self._bind(self._data_ids, resolved, body.get("breakpoints", [])), strict=False))
        return [failed[i] if i in failed else next(answers, BreakpointResult(False, message="no answer"))
                for i in range(len(breakpoints))]

    async def command(self, text: str, frame: FrameRef | None) -> str:
        body = await self._request("evaluate", {"expression": text, "context": "repl",
                                                **await self._frame_args(frame)})
        return str(body.get("result", ""))

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if not self.capabilities.exception_info:
            return None
        body = await self._request("exceptionInfo", {"threadId": thread_id})
        return ExceptionDetail(type=str(body.get("exceptionId", "exception")),
                               message=str(body.get("description") or ""))

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
        await self._proc.end(kill_debuggee=terminate_debuggee)
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
        exception_filters=filters,
        memory=bool(body.get("supportsReadMemoryRequest")),
        disassemble=bool(body.get("supportsDisassembleRequest")),
        data_breakpoints=bool(body.get("supportsDataBreakpoints")),
    )


def _breakpoint_result(bp: dict[str, Any]) -> BreakpointResult:
    return BreakpointResult(verified=bool(bp.get("verified", False)), line=bp.get("line"), message=bp.get("message"))


def _variable(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"),
                    memory_reference=v.get("memoryReference"))


def _breakpoints_timeout(count: int) -> float:
    return INSPECT_TIMEOUT_S + BREAKPOINT_TIMEOUT_PER_S * count
