"""The Backend over any DAP adapter (``DapBackend``): its lifecycle, the adapter's events, and the
requests by (thread, index); subclasses say how to start the adapter and shape what it answers.

The handshake follows the DAP specification and works for adapters that answer ``launch`` before
or only after ``configurationDone`` (debugpy, lldb-dap): send launch, wait for ``initialized``,
let the session configure breakpoints, send ``configurationDone``, then await the launch answer.
The backend's life (its phase, its background tasks, its one end, its one termination report) is a
``kit.lifecycle.Lifecycle``; subclasses add to the end through ``_before_end`` / ``_after_end``.

Frames are addressed by (thread, index): the adapter's frame ids of the current stop are kept in
``FrameHandles`` and fetched again when the stop moved on. Subclasses hide runtime frames at the top
of a stack by overriding ``_hidden_frames`` and shape frames in ``_frame``. Breakpoint ids are
mapped in ``breakpoints.DapBreakpoints``, evaluations that outlive their deadline are kept by
``evaluation.Evaluations``, and DAP bodies become polydbg's types in ``wire``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, ClassVar

from polydbg import procs, tracee
from polydbg.backends.base import (
    LOGPOINT,
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
    logpoint_line,
)
from polydbg.backends.dap import wire
from polydbg.backends.dap.breakpoints import DapBreakpoints
from polydbg.backends.dap.evaluation import Evaluations
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.frames import FrameHandles
from polydbg.backends.kit.lifecycle import Lifecycle
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

DETACH_S = 5.0  # an adapter's deadline to let go of the program (lldb-dap takes ~0.1 s; woken from SIGSTOP ~1 s)


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
        self._life = Lifecycle(self.name, listener)
        self._initialized = asyncio.Event()
        self._breakpoints = DapBreakpoints(self._request)
        self._frames: FrameHandles[int] = FrameHandles()  # the adapter's frame ids at this stop
        self._evaluations = Evaluations(self.name, self._proc.not_answering)
        self._logpoints = wire.LogpointMessages()
        self._program_pid: int | None = None  # from the adapter's "process" event, or found by a subclass

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
        return wire.frame(raw)

    def _stack_thread(self, thread_id: int) -> int:
        """The thread id to ask ``stackTrace`` for (delve asks for the current OS thread at entry)."""
        return thread_id

    def _shown_total(self, total: object, hidden: int, start: int, count: int) -> int | None:
        return max(0, total - hidden) if isinstance(total, int) else None

    async def _configured(self) -> None:
        """Just after ``configurationDone`` is answered, before the launch or attach answer is awaited (override)."""

    def _data_name(self, expression: str) -> str:
        """The name ``dataBreakpointInfo`` resolves for a watched expression (lldb-dap wants an address)."""
        return expression

    def _moving(self) -> None:
        """The program is about to run: forget what was learnt about the last stop (extend, call super)."""
        self._frames.clear()

    async def _before_end(self, terminate_debuggee: bool) -> None:
        """The end's first step, while the adapter still answers (override)."""

    async def _after_end(self, terminate_debuggee: bool) -> None:
        """The end's last step, once the adapter and its process are gone, whatever failed (override)."""

    async def _let_go(self, answer: asyncio.Future[dict[str, Any]], deadline_s: float) -> None:
        """Wait for the answer to a detach's ``disconnect`` (override: or for the program to be seen let go)."""
        await asyncio.wait_for(asyncio.shield(answer), deadline_s)

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        await self._begin("launch", self._launch_arguments(spec), configure, timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        await self._begin("attach", self._attach_arguments(spec), configure, timeout_s)

    async def _begin(self, command: str, arguments: dict[str, Any], configure: Configure,
                     timeout_s: float) -> None:
        self._life.starting()
        stream = await self._start_adapter()
        client = self._client = DapClient(stream, self.name)
        self._wire_events(client)
        client.start()
        try:
            body = await client.request("initialize", wire.initialize_arguments(self.adapter_id), timeout=timeout_s)
            self.capabilities = wire.capabilities(body)
            self._tune_capabilities()
            started = client.send_request(command, arguments)
            started.add_done_callback(_retrieve)  # its failure is reported through the handshake
            await self._wait_initialized(started, command, timeout_s)
            await configure()
            if body.get("supportsConfigurationDoneRequest", True):
                await client.request("configurationDone", {}, timeout=timeout_s)
                await self._configured()
            await client.wait(started, command, timeout_s)
        except AdapterGoneError as exc:
            raise AdapterGoneError(f"{exc}{self._proc.stderr_hint()}") from exc
        self._life.started()

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

    async def _spawn_stdio_adapter(self, argv: list[str], env: dict[str, str] | None = None) -> FramedStream:
        process = await self._proc.start(argv, env=env)
        assert process.stdout is not None and process.stdin is not None
        return FramedStream(process.stdout, process.stdin, self.name)

    async def terminate(self) -> None:
        await self._life.end(lambda: self._end(terminate_debuggee=True))

    async def detach(self) -> None:
        await self._life.end(lambda: self._end(terminate_debuggee=False))

    async def _end(self, terminate_debuggee: bool) -> None:
        """Run once by the lifecycle, whoever asks first (terminate, detach, a subclass on the program's end).
        A detach the adapter does not answer raises, once everything is ended, saying what became of the
        program (``tracee``: its code is put back first, so it does not die of a breakpoint left in it)."""
        unreleased = ""
        try:
            await self._before_end(terminate_debuggee)
            client = self._client
            self._proc.wake()  # a debugger stopped by a signal can neither detach nor kill the program
            if client is not None and not client.is_closed:
                try:
                    # killing follows anyway when ending; a detach must let the adapter resume the program, so its
                    # deadline is not the one a stalled adapter gets (it may have been woken just now)
                    answer = client.send_request("disconnect", {"terminateDebuggee": terminate_debuggee,
                                                                "restart": False})
                    if terminate_debuggee:
                        await asyncio.wait_for(asyncio.shield(answer), 0.5)
                    else:
                        await self._let_go(answer, DETACH_S)
                except Exception as exc:  # whatever the adapter did, the session ends
                    if not terminate_debuggee:
                        unreleased = self._unreleased(exc)
                await client.close("session ended")
            await self._proc.end(kill_debuggee=terminate_debuggee)
            self._life.report_terminated(None)
        finally:
            await self._after_end(terminate_debuggee)
        if unreleased:
            raise AdapterGoneError(unreleased)

    def _unreleased(self, failure: Exception) -> str:
        """What became of the program when the adapter did not answer its detach (said once it is ended)."""
        why = f"no answer within {DETACH_S:g} s" if isinstance(failure, asyncio.TimeoutError) else str(failure)
        return tracee.detach_failed(self.name, why, self._proc.debuggee_pid or self._proc.watched_pid,
                                    self._evaluations.running())

    # -- events -----------------------------------------------------------------------------------

    def _wire_events(self, client: DapClient) -> None:
        client.on_event("initialized", lambda _b: self._initialized.set())
        client.on_event("stopped", self._on_stopped)
        client.on_event("continued", self._on_continued)
        client.on_event("output", self._on_output)
        client.on_event("exited", self._on_exited)
        client.on_event("terminated", self._on_terminated)
        client.on_event("breakpoint", self._on_breakpoint)
        client.on_event("process", self._on_process)
        self._life.spawn(self._watch_client(client), "adapter connection")

    async def _watch_client(self, client: DapClient) -> None:
        await client.closed.wait()
        if not self._life.ending:
            self._life.report_terminated(await self._proc.exit_cause())

    def _on_exited(self, body: dict[str, Any]) -> None:
        self._life.report_exited(body.get("exitCode"))

    def _on_terminated(self, body: dict[str, Any]) -> None:
        self._life.report_terminated(None)

    def _program_gone(self, cause: str) -> None:
        """The program ended without the adapter saying so (``cause`` says how it was noticed). After an exit the
        adapter did say so and may still be delivering what the program printed (debugpy relays thousands of a
        busy logpoint's lines after the exit): its own end comes once it is done, or after ``AFTER_EXIT_S``."""
        if self._life.exited:
            self._life.spawn(self._end_after_exit(), "end after the exit")
            return
        if self._proc.program_end() is not None:  # the kernel knows how it ended: an exit (the session says how)
            self._life.report_exited(None)
        self._life.report_terminated(cause)

    async def _end_after_exit(self) -> None:
        await asyncio.sleep(timeouts.AFTER_EXIT_S)
        self._life.report_terminated(None)

    def _stop_event(self, body: dict[str, Any]) -> StopEvent:
        """A DAP ``stopped`` body as a StopEvent, the adapter's breakpoint ids mapped to polydbg's."""
        reason = str(body.get("reason", "unknown"))
        return StopEvent(reason=reason, thread_id=body.get("threadId"), description=body.get("description"),
                         text=body.get("text"), hit_breakpoint_ids=self._breakpoints.hits(
                             reason, body.get("hitBreakpointIds")))

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
        text = str(body.get("output", ""))
        if not self._took_logpoint(category, text):
            self._listener.on_output(category, text)

    def _took_logpoint(self, category: str, text: str) -> bool:
        """Whether ``text`` is (part of) a logpoint's message; each one complete is reported as one line."""
        messages = self._logpoints.take(category, text)
        for message in messages or ():
            self._listener.on_output(LOGPOINT, logpoint_line(message))
        return messages is not None

    def _on_breakpoint(self, body: dict[str, Any]) -> None:
        changed = self._breakpoints.changed(body)
        if changed is not None:
            self._listener.on_breakpoint_changed(*changed)

    @property
    def program_pid(self) -> int | None:
        return self._program_pid

    def _on_process(self, body: dict[str, Any]) -> None:
        pid = body.get("systemProcessId")
        if isinstance(pid, int) and pid > 0:
            self._program_pid = pid
        if isinstance(pid, int) and body.get("startMethod", "launch") == "launch":
            self._proc.track_debuggee(pid)
        if isinstance(pid, int):
            self._proc.watch_debuggee(pid, self._program_gone)

    # -- requests ---------------------------------------------------------------------------------

    @property
    def client(self) -> DapClient:
        if self._client is None:
            raise AdapterGoneError(f"{self.name} adapter is not running")
        return self._client

    async def _request(self, command: str, arguments: dict[str, Any] | None = None,
                       timeout: float | None = None) -> dict[str, Any]:
        """A request answered within ``timeout`` (by default the inspection deadline, read now); unanswered, the
        error says why the debugger cannot answer when /proc tells (a process of it stopped by a signal)."""
        try:
            return await self.client.request(command, arguments, timeouts.INSPECT_S if timeout is None else timeout)
        except AdapterTimeoutError as exc:
            why = self._proc.held_by_signal()
            if why is None:
                raise
            raise AdapterTimeoutError(f"{exc}: {why}") from exc

    # -- breakpoints ------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        return await self._breakpoints.set_source(file, breakpoints)

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        return await self._breakpoints.set_functions(breakpoints)

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self._request("setExceptionBreakpoints", {"filters": filters})

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        return await self._breakpoints.set_data(breakpoints, await self._frame_args(frame), self._data_name)

    # -- threads and frames -----------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        body = await self._request("threads")
        return [Thread(int(t["id"]), str(t.get("name", ""))) for t in body.get("threads", [])]

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

    # -- values -----------------------------------------------------------------------------------

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        body = await self._request("scopes", {"frameId": await self._frame_id(frame)})
        return [wire.scope(s) for s in body.get("scopes", [])]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        args: dict[str, Any] = {"variablesReference": ref}
        if start is not None:
            args["start"] = start
        if count is not None:
            args["count"] = count
        body = await self._request("variables", args)
        return [wire.variable(v) for v in body.get("variables", [])]

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        thread = frame.thread_id if frame is not None else None
        self._evaluations.refuse_if_busy(thread)
        arguments = {"expression": expression, "context": context, **await self._frame_args(frame)}
        return wire.evaluated(expression, await self._evaluations.run(self.client, thread, expression, arguments))

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        body = await self._request("setVariable", {"variablesReference": ref, "name": name, "value": value})
        return wire.assigned(name, body)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if not self.capabilities.exception_info:
            return None
        return wire.exception_detail(await self._request("exceptionInfo", {"threadId": thread_id}))

    # -- native operations (DAP readMemory, writeMemory, disassemble, registers, the repl) ----------

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        body = await self._request("readMemory", {"memoryReference": hex(address), "count": count})
        return wire.memory_block(body, address)

    async def write_memory(self, address: int, data: bytes) -> int:
        body = await self._request("writeMemory", {"memoryReference": hex(address),
                                                   "data": wire.base64_text(data)})
        return int(body.get("bytesWritten", len(data)))

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        body = await self._request("disassemble", {"memoryReference": hex(address), "instructionOffset": offset,
                                                   "instructionCount": count, "resolveSymbols": True})
        return wire.instructions(body)

    async def registers(self, frame: FrameRef) -> list[Variable]:
        for scope in await self.scopes(frame):
            if wire.is_register_scope(scope):
                return await self.variables(scope.ref)
        return []

    async def command(self, text: str, frame: FrameRef | None) -> str:
        body = await self._request("evaluate", {"expression": text, "context": "repl",
                                                **await self._frame_args(frame)})
        return str(body.get("result", ""))

    # -- execution --------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        self._moving()
        await self._request("continue", {"threadId": thread_id if thread_id is not None else 0})

    async def step(self, thread_id: int, kind: StepKind) -> None:
        self._moving()
        await self._request(wire.STEP_COMMANDS[kind], {"threadId": thread_id})

    async def pause(self, thread_id: int | None) -> None:
        await self._request("pause", {"threadId": thread_id if thread_id is not None else 0})


def _retrieve(future: asyncio.Future[Any]) -> None:
    """Mark a future's exception as seen (it is raised elsewhere or superseded)."""
    if not future.cancelled():
        future.exception()
