"""The MCP tools: each validates its arguments, calls the session layer, and renders the answer.

Every tool returns a ``CallToolResult``: compact text for the model plus the pydantic model as
``structuredContent``. A ``PolydbgError`` becomes an ``isError`` result whose text is the error's
message verbatim and whose structured content names its kind (``{"error": "usage", …}``); a
``ProgramMovedError`` also carries the report of where the program is now. Anything unexpected is
logged and reported (kind ``internal``) without harming the server or other sessions. Inspection
tools put the report of a stop no answer has shown yet in front of their answer.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from polydbg.errors import PolydbgError, ProgramMovedError, UsageError, echo
from polydbg.mcp import render
from polydbg.mcp.clients import manager_of
from polydbg.session import launching
from polydbg.session import source as src
from polydbg.session.bplist import removed_text
from polydbg.session.breakpoints import BreakpointRequest
from polydbg.session.manager import Clients, SessionManager
from polydbg.session.model import (
    Ack,
    BreakpointList,
    CommandResult,
    DisassemblyResult,
    EvaluateResult,
    MemoryResult,
    OutputResult,
    SessionInfo,
    SessionList,
    SourceResult,
    StackResult,
    StopReport,
    TraceResult,
    Var,
    VariablesResult,
)
from polydbg.session.secrets import Redactor
from polydbg.session.session import Progress, Session

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)

# Every tool says what it does to the program and the session, in as few bytes as that takes (the
# spec's defaults: not read-only, destructive, not idempotent). Hints of a read-only tool stop there.
READ_ONLY = ToolAnnotations(read_only_hint=True)
# Adds something beside what exists (a session, a watchpoint): nothing is lost; a second call adds another.
ADDS = ToolAnnotations(destructive_hint=False)
# Loses nothing, and the same call again changes nothing more (debug_break finds its twin; a paused
# program stays paused).
REPEATABLE = ToolAnnotations(destructive_hint=False, idempotent_hint=True)
# Runs the program's or the debugger's code: state moves on and cannot be wound back.
RUNS = ToolAnnotations(destructive_hint=True)
# Removes or overwrites (breakpoints, values, bytes, the program); the same call again does nothing more.
OVERWRITES = ToolAnnotations(destructive_hint=True, idempotent_hint=True)


# A line number, or text on the line (agents often know the statement, not its number).
LineOrText = Annotated[int, Field(ge=1)] | str
Line = Annotated[LineOrText, Field(description="number, or text on the line")]


class BreakpointSpec(BaseModel):
    file: str
    line: LineOrText  # said once, in debug_break's line: a number, or text on the line
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None

    def request(self) -> BreakpointRequest:
        return BreakpointRequest(self.file, self.line, self.condition, self.hit_condition, self.log_message)


class Place(BaseModel):
    file: str
    line: LineOrText


SessionId = str | None  # the server instructions say it defaults to the most recently used session
Timeout = Annotated[float, Field(gt=0, le=3600)]
FrameIndex = Annotated[int | None, Field(ge=0)]
BreakOn = Literal["uncaught", "raised", "none"]
Show = Callable[[M, str | None], str]  # renders an answer; the second argument is the session's cwd


FUNCTIONS = "f, mod.f, Class.m, file.py:f; raised: exceptions"
POINTS_MAX_HITS = 50
CALLS_MAX_HITS = 10_000
RESTORE_TIMEOUT_S = 30.0  # a checkpoint's restore switches processes: no run to wait out

# No answer's text is longer, whatever the program or the input: each tool pages and cuts its own lists far
# below this (2 KB by default); this is the net under them.
ANSWER_LIMIT = 64 * 1024


def answer(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=bounded(text))],
                          structured_content=model.model_dump(mode="json", exclude_none=True))


class Secrets:
    """The one place answers that carry program data pass through before they are rendered: with
    ``allow_secrets`` off, each model is redacted (``session/secrets.py``), text and structured content alike,
    and the answer ends with a note saying once what was hidden and how to allow it."""

    def __init__(self, manager: SessionManager, session: Session | None) -> None:
        self.policy = manager.policy
        self.redactor = None if self.policy.allow_secrets else Redactor(session.reveal if session else ())

    def __call__(self, model: M) -> M:
        return model if self.redactor is None else self.redactor.model(model)

    def noted(self, response: CallToolResult) -> CallToolResult:
        note = self.redactor.note(lambda what: self.policy.refusal("allow_secrets", what)) if self.redactor else None
        if note is not None and response.content and isinstance(response.content[0], TextContent):
            response.content[0].text += f"\nnote: {note}"
            if response.structured_content is not None:
                response.structured_content["redacted"] = note
        return response


def bounded(text: str, limit: int = ANSWER_LIMIT) -> str:
    """``text`` cut to ``limit`` bytes of UTF-8, saying so."""
    data = text.encode()
    if len(data) <= limit:
        return text
    kept = data[:limit - 200].decode(errors="ignore")
    return (f"{kept}\n… answer cut at {limit // 1024} KB of {len(data):,} bytes; ask for less (the tool's start, "
            "count, levels or max_bytes arguments page the rest)")


def failure(error: Exception, tool: str) -> CallToolResult:
    """An ``isError`` result that says what kind of error it is, and where the program is if it moved."""
    if isinstance(error, PolydbgError):
        kind, text = error.kind, str(error)
    else:
        log.error("%s failed unexpectedly", tool, exc_info=error)
        kind = "internal"
        text = (f"internal error in {tool}: {type(error).__name__}: {error}. The server and the other sessions are "
                "unaffected; debug_sessions shows their state.")
    structured: dict[str, Any] = {"error": kind, "message": text}
    if isinstance(error, ProgramMovedError) and isinstance(error.report, StopReport):
        text = f"{text}\n{render.stop_report(error.report)}"
        structured["report"] = error.report.model_dump(mode="json", exclude_none=True)
    return CallToolResult(content=[TextContent(type="text", text=bounded(text))], structured_content=structured,
                          is_error=True)


async def guarded(work: Callable[[], Awaitable[CallToolResult]], tool: str) -> CallToolResult:
    try:
        return await work()
    except Exception as exc:
        return failure(exc, tool)


async def on_session(ctx: Context, session_id: str | None, tool: str, call: Callable[[Session], Awaitable[M]],
                     show: Show[M], announce: bool = False,
                     check: Callable[[SessionManager], None] | None = None) -> CallToolResult:
    """The shape of most tools: find the session, make one call on it, render the answer. With
    ``announce``, a stop no earlier answer has shown comes first; ``check`` refuses before the session is
    looked up (the policy: its refusal names the setting, with or without a session)."""
    async def work() -> CallToolResult:
        manager = manager_of(ctx)
        if check is not None:
            check(manager)
        session = manager.get(session_id)
        secrets = Secrets(manager, session)
        unseen = await session.unseen_stop_report() if announce else None
        try:
            result = secrets(await call(session))
        except ProgramMovedError as moved:
            moved.report = secrets(moved.report) if isinstance(moved.report, BaseModel) else moved.report
            raise
        response = answer(result, show(result, session.cwd))
        if unseen is not None:
            unseen = secrets(unseen)
            first = response.content[0]
            assert isinstance(first, TextContent)
            first.text = f"{render.stop_report(unseen, base=session.cwd)}\n\n{first.text}"
            assert response.structured_content is not None
            response.structured_content["stop"] = unseen.model_dump(mode="json", exclude_none=True)
        return secrets.noted(response)
    return await guarded(work, tool)


async def on_manager(ctx: Context, tool: str, call: Callable[[SessionManager], Awaitable[StopReport]],
                     reveal: list[str] | None = None) -> CallToolResult:
    """Launch and attach: a new session's first report; ``reveal`` names what its answers show, secret or not."""
    async def work() -> CallToolResult:
        manager = manager_of(ctx)
        report = await call(manager)
        session = manager.get(report.session_id) if report.session_id in manager.ids() else None
        if session is not None:
            session.reveal = frozenset(reveal or ())
        secrets = Secrets(manager, session)
        report = secrets(report)
        return secrets.noted(answer(report, render.stop_report(report, base=session.cwd if session else None)))
    return await guarded(work, tool)


def progress_of(ctx: Context) -> Progress:
    async def report(elapsed: float, message: str) -> None:
        try:
            await ctx.report_progress(elapsed, None, message)
        except Exception:  # a client without progress support must not break the wait
            log.debug("progress notification failed", exc_info=True)
    return report


def _plain(show: Callable[[M], str]) -> Show[M]:
    """A renderer with no paths in it."""
    return lambda result, _cwd: show(result)


def _report(result: StopReport, cwd: str | None) -> str:
    return render.stop_report(result, base=cwd)


def register(server: MCPServer[Clients]) -> None:
    """Add every tool to an ``MCPServer``.

    The return annotations name each tool's answer model for readers; ``structured_output=False``
    stops the SDK from re-validating what ``answer`` already built from that model (and from
    generating output schemas at start-up).
    """

    def tool(annotations: ToolAnnotations | None) -> Callable[[F], F]:
        return server.tool(annotations=annotations, structured_output=False)

    @tool(ADDS)
    async def debug_launch(
        ctx: Context,
        program: Annotated[str | None, Field(description="script, executable, Go dir")] = None,
        test: Annotated[str | None, Field(description="t.py::test_x, a.B.test_x, test_x")] = None,
        module: Annotated[str | None, Field(description="python -m")] = None,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        language: str | None = None,
        adapter: str | None = None,
        python: str | None = None,
        breakpoints: list[BreakpointSpec] | None = None,
        stop_on_entry: bool = False,
        break_on_exception: BreakOn = "uncaught",
        core: str | None = None,
        build: Annotated[str | None, Field(description="shell command run first")] = None,
        stdin: Annotated[str | None, Field(description="program input")] = None,
        node: str | None = None,
        runtime_args: Annotated[list[str] | None, Field(description="node or JVM flags")] = None,
        trace: Annotated[list[str] | None, Field(description="as debug_trace functions")] = None,
        record: bool | Literal["rr"] = False,  # gdb records, for reverse steps (said in the server instructions)
        reveal: list[str] | None = None,  # names never redacted: the redaction note says so
        timeout_s: Timeout = 30,
    ) -> Annotated[CallToolResult, StopReport]:
        """Start a program; run to the first stop."""
        request = launching.LaunchRequest(
            program=program, module=module, args=tuple(args or ()), cwd=cwd, env=env, language=language,
            adapter=adapter, runtimes={k: v for k, v in (("python", python), ("node", node)) if v is not None},
            breakpoints=[b.request() for b in breakpoints or ()], stop_on_entry=stop_on_entry,
            break_on_exception=break_on_exception, core=core, build=build, stdin=stdin,
            runtime_args=tuple(runtime_args or ()), test=test, trace=tuple(trace or ()),
            record="rr" if record == "rr" else "full" if record else None)
        return await on_manager(ctx, "debug_launch",
                                lambda m: launching.launch(m, request, timeout_s, progress_of(ctx)), reveal)

    @tool(ADDS)
    async def debug_attach(
        ctx: Context,
        pid: Annotated[int | None, Field(ge=1)] = None,
        host: str | None = None,
        port: Annotated[int | None, Field(ge=1, le=65535)] = None,
        path_mappings: Annotated[dict[str, str] | None, Field(description="{local: remote}")] = None,
        breakpoints: list[BreakpointSpec] | None = None,
        language: str | None = None,
        adapter: str | None = None,
        program: Annotated[str | None, Field(description="or docker://name")] = None,
        break_on_exception: BreakOn = "uncaught",
        reveal: list[str] | None = None,  # as debug_launch's
        timeout_s: Timeout = 30,
    ) -> Annotated[CallToolResult, StopReport]:
        """Attach to a pid (a container's too; +port: a server in it), or host:port."""
        request = launching.AttachRequest(
            pid=pid, host=host, port=port, path_mappings=path_mappings,
            breakpoints=[b.request() for b in breakpoints or ()], language=language, adapter=adapter,
            program=program, break_on_exception=break_on_exception)
        return await on_manager(ctx, "debug_attach",
                                lambda m: launching.attach(m, request, timeout_s, progress_of(ctx)), reveal)

    @tool(READ_ONLY)
    async def debug_sessions(ctx: Context) -> Annotated[CallToolResult, SessionList]:
        """List sessions."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            infos = []
            for s in manager.all():
                location = await s.current_location()
                infos.append(SessionInfo(session_id=s.id, state=s.state, language=s.language, adapter=s.adapter,
                                         target=s.target, pid=s.program_pid, location=location,
                                         exit_code=s.exit_code, cause=s.cause))
            result = SessionList(sessions=infos, current=manager.current_id())
            return answer(result, render.sessions(result, {s.id: s.cwd for s in manager.all()}))
        return await guarded(work, "debug_sessions")

    @tool(OVERWRITES)
    async def debug_terminate(ctx: Context, detach: bool = False,
                              session_id: SessionId = None) -> Annotated[CallToolResult, Ack]:
        """End a session: kill, or detach."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            session = manager.get(session_id)
            await manager.remove(session, detach)
            result = Ack(session_id=session.id, message=f"session {session.id} ended"
                         + (" (detached; the program keeps running)" if detach else ""))
            return answer(result, result.message)
        return await guarded(work, "debug_terminate")

    @tool(REPEATABLE)
    async def debug_break(
        ctx: Context,
        file: str | None = None,
        line: Line | None = None,
        function: str | None = None,
        condition: str | None = None,
        hit_condition: Annotated[str | None, Field(description="e.g. >= 3")] = None,
        log_message: Annotated[str | None, Field(description="print {expr}s, no stop")] = None,
        exception: Annotated[list[str] | None, Field(description="raised, uncaught, or type names")] = None,
        session_id: SessionId = None,
    ) -> Annotated[CallToolResult, BreakpointList]:
        """Add a breakpoint (file+line, function) or exception filters."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            if sum(x is not None for x in (file, function, exception)) != 1:
                raise UsageError("pass one of: file and line, function, or exception")
            if file is not None and line is None:
                raise UsageError("a line breakpoint needs line as well as file")
            if session_id is None and not manager.all():
                if file is None or line is None:
                    raise UsageError("no session yet: only file+line breakpoints can wait for the next "
                                     "debug_launch; pass function/exception settings to debug_launch instead")
                pending = launching.check_breakpoint(BreakpointRequest(file, line, condition, hit_condition,
                                                                       log_message), policy=manager.policy)
                manager.add_pending(pending)
                result = BreakpointList(session_id="", breakpoints=[], exception_filters=[])
                return answer(result, f"no session yet: breakpoint at {pending.file}:{pending.line} will be set by "
                                      "the next debug_launch")
            session = manager.get(session_id)
            if exception is not None:
                await session.set_exception_filters(exception)
                result = BreakpointList(session_id=session.id, breakpoints=[],
                                        exception_filters=session.exception_filters)
                return answer(result, f"exceptions: {', '.join(session.exception_filters) or 'none'}")
            if function is not None:
                bp = await session.add_function_breakpoint(function, condition, hit_condition)
            else:
                assert file is not None and line is not None
                bp = await session.add_line_breakpoint(file, line, condition, hit_condition, log_message)
            result = BreakpointList(session_id=session.id, breakpoints=[bp.info()],
                                    exception_filters=session.exception_filters)
            chosen = f" (line {bp.line} holds {echo(line, 80)})" if isinstance(line, str) and not line.isdigit() else ""
            return answer(result, render.breakpoint_line(bp.info(), session.cwd) + chosen)
        return await guarded(work, "debug_break")

    @tool(OVERWRITES)
    async def debug_clear(ctx: Context, id: int | None = None, file: str | None = None, all: bool = False,
                          session_id: SessionId = None) -> Annotated[CallToolResult, Ack]:
        """Remove breakpoints."""
        async def removed(s: Session) -> Ack:
            gone = await s.remove_breakpoints(id, file, all)
            return Ack(session_id=s.id, message=removed_text(gone))
        return await on_session(ctx, session_id, "debug_clear", removed, _plain(lambda a: a.message))

    @tool(READ_ONLY)
    async def debug_breakpoints(ctx: Context, start: Annotated[int, Field(ge=0)] = 0,
                                session_id: SessionId = None) -> Annotated[CallToolResult, BreakpointList]:
        """List breakpoints, verified lines, hits."""
        async def listed(s: Session) -> BreakpointList:
            return s.breakpoint_list(start)
        return await on_session(ctx, session_id, "debug_breakpoints", listed, render.breakpoint_list)

    @tool(RUNS)
    async def debug_continue(ctx: Context, thread_id: int | None = None,
                             to: Annotated[Place | None, Field(description="run to")] = None,
                             reverse: bool = False,
                             reload: Annotated[bool, Field(description="apply edits first")] = False,
                             timeout_s: Timeout = 30,
                             session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Resume until the next stop."""
        place = (to.file, to.line) if to else None
        return await on_session(ctx, session_id, "debug_continue",
                                lambda s: s.resume(thread_id, place, timeout_s, progress_of(ctx), reverse, reload),
                                _report)

    @tool(RUNS)
    async def debug_step(ctx: Context, kind: Literal["over", "into", "out"] = "over",
                         count: Annotated[int, Field(ge=1, le=1000)] = 1, thread_id: int | None = None,
                         reverse: bool = False, timeout_s: Timeout = 30,
                         session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Step; report the stop."""
        return await on_session(ctx, session_id, "debug_step",
                                lambda s: s.step(kind, count, thread_id, timeout_s, progress_of(ctx), reverse), _report)

    @tool(RUNS)
    async def debug_record(ctx: Context, action: Literal["start", "stop", "save", "restore"] = "start",
                           checkpoint: int | None = None,
                           session_id: SessionId = None) -> Annotated[CallToolResult, Ack | StopReport]:
        """gdb recording for reverse steps; checkpoints."""
        def show(result: Ack | StopReport, cwd: str | None) -> str:
            return result.message if isinstance(result, Ack) else render.stop_report(result, base=cwd)
        return await on_session(ctx, session_id, "debug_record",
                                lambda s: s.record(action, checkpoint, RESTORE_TIMEOUT_S), show)

    @tool(REPEATABLE)
    async def debug_pause(ctx: Context, thread_id: int | None = None, timeout_s: Timeout = 10,
                          session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Interrupt the program."""
        return await on_session(ctx, session_id, "debug_pause", lambda s: s.pause(thread_id, timeout_s), _report)

    @tool(RUNS)
    async def debug_restart(ctx: Context, timeout_s: Timeout = 30,
                            session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Restart, keeping breakpoints."""
        return await on_session(ctx, session_id, "debug_restart",
                                lambda s: s.restart(timeout_s, progress_of(ctx)), _report)

    @tool(READ_ONLY)
    async def debug_stack(ctx: Context, thread_id: int | None = None, start: Annotated[int, Field(ge=0)] = 0,
                          levels: Annotated[int, Field(ge=1, le=1000)] = 20, all_threads: bool = False,
                          session_id: SessionId = None) -> Annotated[CallToolResult, StackResult]:
        """Call stack."""
        return await on_session(ctx, session_id, "debug_stack",
                                lambda s: s.stack(thread_id, start, levels, all_threads), render.stack, True)

    @tool(READ_ONLY)
    async def debug_variables(
        ctx: Context,
        frame_id: FrameIndex = None,
        ref: int | None = None,
        scope: Annotated[str | None, Field(description="locals, globals, registers…")] = None,
        start: Annotated[int, Field(ge=0)] = 0,
        count: Annotated[int | None, Field(ge=1, le=1000)] = None,
        filter: Annotated[list[str] | None, Field(description="names")] = None,
        thread_id: int | None = None,
        session_id: SessionId = None,
    ) -> Annotated[CallToolResult, VariablesResult]:
        """A frame's variables, or a value's children."""
        return await on_session(ctx, session_id, "debug_variables",
                                lambda s: s.variables(frame_id, ref, scope, start, count, filter, thread_id),
                                _plain(render.variables), True)

    @tool(RUNS)
    async def debug_evaluate(ctx: Context, expression: str, frame_id: FrameIndex = None, thread_id: int | None = None,
                             session_id: SessionId = None) -> Annotated[CallToolResult, EvaluateResult]:
        """Evaluate an expression ($exception: the exception)."""
        return await on_session(ctx, session_id, "debug_evaluate",
                                lambda s: s.evaluate(expression, frame_id, thread_id),
                                _plain(render.evaluate), True)

    @tool(OVERWRITES)
    async def debug_set_variable(ctx: Context, name: str, value: str, frame_id: FrameIndex = None,
                                 ref: int | None = None, thread_id: int | None = None,
                                 session_id: SessionId = None) -> Annotated[CallToolResult, Var]:
        """Set a variable (or member of ref)."""
        return await on_session(ctx, session_id, "debug_set_variable",
                                lambda s: s.set_variable(name, value, frame_id, ref, thread_id),
                                _plain(lambda v: "set " + render.var_line(v, indent="")), True)

    @tool(READ_ONLY)
    async def debug_source(ctx: Context, file: str | None = None, line: Annotated[int | None, Field(ge=1)] = None,
                           context: Annotated[int, Field(ge=0, le=200)] = 10,
                           session_id: SessionId = None) -> Annotated[CallToolResult, SourceResult]:
        """Source around a line (default: stop)."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            wants_session = session_id or file is None or not os.path.isabs(file)
            session = manager.get(session_id) if wants_session and manager.all() else None
            result = await session.source(file, line, context) if session is not None \
                else src.view_file(file, line, context, manager.policy)
            return answer(result, render.source(result, session.cwd if session else None))
        return await guarded(work, "debug_source")

    @tool(READ_ONLY)
    async def debug_output(ctx: Context, cursor: Annotated[int | None, Field(ge=0)] = None,
                           stream: Literal["all", "stdout", "stderr", "logpoints", "console", "trace"] = "all",
                           max_bytes: Annotated[int, Field(ge=1, le=30_000)] = 2000,
                           session_id: SessionId = None) -> Annotated[CallToolResult, OutputResult]:
        """Program output from a cursor (trace: debug_trace's rows)."""
        async def read(s: Session) -> OutputResult:
            chunk = s.read_output(cursor, max_bytes, stream)
            return OutputResult(session_id=s.id, text=chunk.text, next_cursor=chunk.next_cursor,
                                dropped=chunk.dropped, more=chunk.more, state=s.state)
        return await on_session(ctx, session_id, "debug_output", read, _plain(render.output))

    @tool(RUNS)
    async def debug_trace(ctx: Context, points: list[Place] | None = None, expressions: list[str] | None = None,
                          functions: Annotated[list[str] | None, Field(description=FUNCTIONS)] = None,
                          depth: Annotated[int, Field(ge=0, le=10, description="callees too")] = 0,
                          max_hits: Annotated[int | None, Field(ge=1, le=1_000_000, description="50; calls 10000")]
                          = None, timeout_s: Timeout = 30,
                          where: Annotated[str | None, Field(description="condition: its first/last hit")] = None,
                          session_id: SessionId = None) -> Annotated[CallToolResult, TraceResult]:
        """Run; record expressions at points, or calls; no stop."""
        async def traced(s: Session) -> TraceResult:
            if functions and not points and not expressions:
                if where:
                    raise UsageError("where is for points and expressions (it is evaluated at each hit); a call "
                                     "trace's summary counts each function's arguments and returned values already")
                return await s.trace_calls(functions, depth, max_hits or CALLS_MAX_HITS, timeout_s, progress_of(ctx))
            if not points or not expressions:
                raise UsageError("pass at least one point {file, line} and one expression, or functions (or both)")
            return await s.trace([(p.file, p.line) for p in points], expressions, max_hits or POINTS_MAX_HITS,
                                 timeout_s, progress_of(ctx), where or None, functions, depth)
        return await on_session(ctx, session_id, "debug_trace", traced, render.trace)

    @tool(OVERWRITES)
    async def debug_memory(ctx: Context, address: Annotated[str, Field(description="0x... or expression")],
                           count: Annotated[int, Field(ge=1, le=65536)] = 64,
                           write: Annotated[str | None, Field(description="hex bytes")] = None,
                           frame_id: FrameIndex = None, thread_id: int | None = None,
                           session_id: SessionId = None) -> Annotated[CallToolResult, MemoryResult]:
        """Read (or write) memory."""
        return await on_session(ctx, session_id, "debug_memory",
                                lambda s: s.memory(address, count, write, frame_id, thread_id), _plain(render.memory),
                                True)

    @tool(READ_ONLY)
    async def debug_disassemble(ctx: Context, address: str | None = None,
                                count: Annotated[int, Field(ge=1, le=500)] = 20, frame_id: FrameIndex = None,
                                thread_id: int | None = None,
                                session_id: SessionId = None) -> Annotated[CallToolResult, DisassemblyResult]:
        """Disassemble at the pc."""
        return await on_session(ctx, session_id, "debug_disassemble",
                                lambda s: s.disassemble(address, count, frame_id, thread_id),
                                _plain(render.disassembly), True)

    @tool(ADDS)
    async def debug_watch(ctx: Context, expression: str, access: Literal["write", "read", "readWrite"] = "write",
                          session_id: SessionId = None) -> Annotated[CallToolResult, BreakpointList]:
        """Stop when an lvalue is written (or read)."""
        async def watched(s: Session) -> BreakpointList:
            bp = await s.watch(expression, access)
            return BreakpointList(session_id=s.id, breakpoints=[bp.info()], exception_filters=s.exception_filters)
        return await on_session(ctx, session_id, "debug_watch", watched,
                                _plain(lambda r: render.breakpoint_line(r.breakpoints[0])))

    @tool(RUNS)
    async def debug_command(ctx: Context, command: str, frame_id: FrameIndex = None, thread_id: int | None = None,
                            session_id: SessionId = None) -> Annotated[CallToolResult, CommandResult]:
        """Run a raw debugger command."""
        return await on_session(ctx, session_id, "debug_command", lambda s: s.command(command, frame_id, thread_id),
                                _plain(render.command), check=lambda m: m.check_command(session_id, command))
