"""The MCP tools: each validates its arguments, calls the session layer, and renders the answer.

Every tool returns a ``CallToolResult`` built by ``answer``: compact text for the model plus the
pydantic model as ``structuredContent``. A ``PolydbgError`` becomes an ``isError`` result whose
text is the error's message verbatim (the SDK would otherwise reduce an exception to a bare
"Error executing tool X"); anything unexpected is logged and reported without killing the server.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, TypeVar

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field

from polydbg import procs
from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.registry import (
    BACKENDS,
    break_filters,
    infer_language,
    normalize_language,
    sniff_binary,
)
from polydbg.errors import PolydbgError, UsageError
from polydbg.mcp import render
from polydbg.session import source as src
from polydbg.session.manager import SessionManager
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
from polydbg.session.session import Progress, Session

log = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
M = TypeVar("M", bound=BaseModel)

# Only what differs from the spec's defaults is sent: every byte of tools/list costs the agent.
READ_ONLY = ToolAnnotations(read_only_hint=True)
CONTROL = None
DESTRUCTIVE = ToolAnnotations(destructive_hint=True)


class BreakpointSpec(BaseModel):
    file: str
    line: int
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None


class Place(BaseModel):
    file: str
    line: int


SessionId = str | None  # the server instructions say it defaults to the most recently used session
Timeout = Annotated[float, Field(gt=0, le=3600)]
FrameIndex = Annotated[int | None, Field(ge=0)]
BreakOn = Literal["uncaught", "raised", "none"]


def answer(model: BaseModel, text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json", exclude_none=True))


def failure(text: str) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


async def guarded(work: Callable[[], Awaitable[CallToolResult]], tool: str) -> CallToolResult:
    try:
        return await work()
    except PolydbgError as exc:
        return failure(str(exc))
    except Exception as exc:
        log.exception("%s failed unexpectedly", tool)
        return failure(f"internal error in {tool}: {type(exc).__name__}: {exc}. The server and the other "
                       "sessions are unaffected; debug_sessions shows their state.")


async def on_session(ctx: Context, session_id: str | None, tool: str,
                     call: Callable[[Session], Awaitable[M]], show: Callable[[M], str]) -> CallToolResult:
    """The shape of most tools: find the session, make one call on it, render the answer."""
    async def work() -> CallToolResult:
        result = await call(manager_of(ctx).get(session_id))
        return answer(result, show(result))
    return await guarded(work, tool)


def progress_of(ctx: Context) -> Progress:
    async def report(elapsed: float, message: str) -> None:
        try:
            await ctx.report_progress(elapsed, None, message)
        except Exception:  # a client without progress support must not break the wait
            log.debug("progress notification failed", exc_info=True)
    return report


def manager_of(ctx: Context) -> SessionManager:
    manager = ctx.request_context.lifespan_context
    assert isinstance(manager, SessionManager)
    return manager


def _break_filters(session: Session, mode: BreakOn) -> list[str]:
    """The adapter's exception filters for ``break_on_exception`` (each backend declares its map)."""
    return break_filters(session.adapter, mode)


async def _apply_breakpoints(session: Session, specs: list[BreakpointSpec] | None) -> None:
    for spec in specs or []:
        await session.add_line_breakpoint(spec.file, spec.line, spec.condition, spec.hit_condition,
                                          spec.log_message)


async def run_build(command: str, cwd: str, timeout_s: float) -> None:
    """Run ``build`` (e.g. ``gcc -g -O0 -o app app.c``) before launching; its failure is the answer."""
    process = await procs.spawn(["/bin/sh", "-c", command], cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                stderr=asyncio.subprocess.STDOUT)
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except asyncio.TimeoutError:
        await procs.kill_group(process.pid)
        await procs.reap(process)
        raise UsageError(f"build {command!r} did not finish within {timeout_s:g} s") from None
    finally:
        procs.forget_group(process.pid)
    if process.returncode != 0:
        text = output.decode("utf-8", "replace")[-2000:]
        raise UsageError(f"build {command!r} failed (exit {process.returncode}):\n{text}")


def attach_language(pid: int | None, language: str | None, adapter: str | None, program: str | None) -> str:
    """The language of an attach target: explicit, else from the process's executable or the adapter."""
    if language:
        return normalize_language(language)
    if pid is not None:
        try:
            os.kill(pid, 0)
            exe = os.readlink(f"/proc/{pid}/exe")
        except ProcessLookupError:
            raise UsageError(f"no process {pid}; pass the pid of a running process") from None
        except OSError:
            exe = ""
        if os.path.basename(exe).startswith("python"):
            return "python"
        return sniff_binary(exe) or "c"
    if program:
        return infer_language(program, None, None)
    if adapter:
        return BACKENDS[adapter].languages[0] if adapter in BACKENDS else "python"
    return "python"


def _existing_dir(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    full = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(full):
        raise UsageError(f"{what} {path!r} is not a directory; pass an existing directory")
    return full


def register(server: MCPServer[SessionManager]) -> None:
    """Add every tool to an ``MCPServer``.

    The return annotations name each tool's answer model for readers; ``structured_output=False``
    stops the SDK from re-validating what ``answer`` already built from that model (and from
    generating 18 output schemas at start-up).
    """

    def tool(annotations: ToolAnnotations | None) -> Callable[[F], F]:
        return server.tool(annotations=annotations, structured_output=False)

    @tool(CONTROL)
    async def debug_launch(
        ctx: Context,
        program: Annotated[str | None, Field(description="script, executable, Go dir")] = None,
        module: Annotated[str | None, Field(description="python -m")] = None,
        args: list[str] | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        language: str | None = None,
        adapter: str | None = None,
        python: Annotated[str | None, Field(description="interpreter")] = None,
        breakpoints: list[BreakpointSpec] | None = None,
        stop_on_entry: bool = False,
        break_on_exception: BreakOn = "uncaught",
        core: str | None = None,
        build: Annotated[str | None, Field(description="shell command run first")] = None,
        timeout_s: Timeout = 30,
    ) -> Annotated[CallToolResult, StopReport]:
        """Start a program with breakpoints; run to the first stop."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            if bool(program) == bool(module):
                raise UsageError("pass exactly one of program (a path) or module (for python -m)")
            work_dir = _existing_dir(cwd, "cwd")
            path = None
            if program:
                path = os.path.abspath(os.path.join(work_dir or os.getcwd(), os.path.expanduser(program)))
                if build:
                    await run_build(build, work_dir or os.path.dirname(path), timeout_s)
                if not os.path.exists(path):
                    raise UsageError(f"program {program!r} not found (looked for {path}); pass an existing "
                                     "file, absolute or relative to cwd")
            core_path = None
            if core is not None:
                core_path = os.path.abspath(os.path.expanduser(core))
                if not os.path.isfile(core_path) or path is None:
                    raise UsageError(f"core {core!r} is not a file, or program is missing; pass the executable as "
                                     "program and the core dump it produced as core")
            lang = infer_language(path, module, language)
            home = (path if os.path.isdir(path) else os.path.dirname(path)) if path else None
            session = manager.create(lang, adapter, os.path.basename(path) if path else f"-m {module}",
                                     work_dir or home or os.getcwd())
            try:
                for pending in manager.take_pending():
                    await session.add_line_breakpoint(pending.file, pending.line, pending.condition,
                                                      pending.hit_condition, pending.log_message)
                await _apply_breakpoints(session, breakpoints)
                session.exception_filters = _break_filters(session, break_on_exception)
            except PolydbgError:
                await manager.remove(session, detach=False)
                raise
            spec = LaunchSpec(program=path, module=module, args=tuple(args or ()), cwd=work_dir or home,
                              env=tuple(sorted((env or {}).items())), python=python, stop_on_entry=stop_on_entry,
                              core=core_path)
            report = await manager.start(session, spec, timeout_s, progress_of(ctx))
            return answer(report, render.stop_report(report))
        return await guarded(work, "debug_launch")

    @tool(CONTROL)
    async def debug_attach(
        ctx: Context,
        pid: int | None = None,
        host: str | None = None,
        port: Annotated[int | None, Field(ge=1, le=65535)] = None,
        path_mappings: Annotated[dict[str, str] | None, Field(description="{local: remote}")] = None,
        breakpoints: list[BreakpointSpec] | None = None,
        language: str | None = None,
        adapter: str | None = None,
        program: str | None = None,
        break_on_exception: BreakOn = "uncaught",
        timeout_s: Timeout = 30,
    ) -> Annotated[CallToolResult, StopReport]:
        """Attach to a pid, or a debug server at host:port."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            if (pid is None) == (port is None):
                raise UsageError("pass pid (a running process) or port (and host) of a listening debug "
                                 "server, e.g. one started with python -m debugpy --listen 5678")
            lang = attach_language(pid, language, adapter, program)
            target = f"pid {pid}" if pid is not None else f"{host or '127.0.0.1'}:{port}"
            session = manager.create(lang, adapter, target, None)
            try:
                await _apply_breakpoints(session, breakpoints)
            except PolydbgError:
                await manager.remove(session, detach=True)
                raise
            session.exception_filters = _break_filters(session, break_on_exception)
            spec = AttachSpec(pid=pid, host=host, port=port,
                              path_mappings=tuple(sorted((path_mappings or {}).items())),
                              program=os.path.abspath(program) if program else None)
            report = await manager.start(session, spec, timeout_s, progress_of(ctx))
            return answer(report, render.stop_report(report))
        return await guarded(work, "debug_attach")

    @tool(READ_ONLY)
    async def debug_sessions(ctx: Context) -> Annotated[CallToolResult, SessionList]:
        """List sessions."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            infos = []
            for s in manager.all():
                location = await s.current_location()
                infos.append(SessionInfo(session_id=s.id, state=s.state, language=s.language, adapter=s.adapter,
                                         target=s.target, location=location, exit_code=s.exit_code,
                                         cause=s.cause))
            result = SessionList(sessions=infos, current=manager.current_id())
            return answer(result, render.sessions(result))
        return await guarded(work, "debug_sessions")

    @tool(DESTRUCTIVE)
    async def debug_terminate(ctx: Context, detach: bool = False,
                              session_id: SessionId = None) -> Annotated[CallToolResult, Ack]:
        """End a session: kill the program, or detach."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            session = manager.get(session_id)
            await manager.remove(session, detach)
            result = Ack(session_id=session.id, message=f"session {session.id} ended"
                         + (" (detached; the program keeps running)" if detach else ""))
            return answer(result, result.message)
        return await guarded(work, "debug_terminate")

    @tool(CONTROL)
    async def debug_break(
        ctx: Context,
        file: str | None = None,
        line: Annotated[int | None, Field(ge=1)] = None,
        function: str | None = None,
        condition: str | None = None,
        hit_condition: Annotated[str | None, Field(description="e.g. >= 3")] = None,
        log_message: Annotated[str | None, Field(description="print {expr}s, no stop")] = None,
        exception: Annotated[list[str] | None, Field(description="raised, uncaught")] = None,
        session_id: SessionId = None,
    ) -> Annotated[CallToolResult, BreakpointList]:
        """Add a breakpoint (file+line or function) or set exception filters."""
        async def work() -> CallToolResult:
            manager = manager_of(ctx)
            chosen = [x is not None for x in (file, function, exception)]
            if sum(chosen) != 1:
                raise UsageError("pass one of: file and line, function, or exception")
            if file is not None and line is None:
                raise UsageError("a line breakpoint needs line as well as file")
            if session_id is None and not manager.all():
                if file is None or line is None:
                    raise UsageError("no session yet: only file+line breakpoints can wait for the next "
                                     "debug_launch; pass function/exception settings to debug_launch instead")
                pending = BreakpointSpec(file=os.path.abspath(file), line=line, condition=condition,
                                         hit_condition=hit_condition, log_message=log_message)
                src.read_lines(pending.file)
                manager.add_pending(pending)
                result = BreakpointList(session_id="", breakpoints=[], exception_filters=[])
                return answer(result, f"no session yet: breakpoint at {pending.file}:{line} will be set by the "
                                      "next debug_launch")
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
            return answer(result, render.breakpoint_line(bp.info()))
        return await guarded(work, "debug_break")

    @tool(CONTROL)
    async def debug_clear(ctx: Context, id: int | None = None, file: str | None = None, all: bool = False,
                          session_id: SessionId = None) -> Annotated[CallToolResult, Ack]:
        """Remove breakpoints."""
        async def work() -> CallToolResult:
            session = manager_of(ctx).get(session_id)
            removed = await session.remove_breakpoints(id, file, all)
            result = Ack(session_id=session.id, message=f"removed breakpoints {removed}" if removed
                         else "no breakpoints to remove")
            return answer(result, result.message)
        return await guarded(work, "debug_clear")

    @tool(READ_ONLY)
    async def debug_breakpoints(ctx: Context, session_id: SessionId = None) -> Annotated[CallToolResult,
                                                                                         BreakpointList]:
        """List breakpoints, verified lines, hits."""
        async def work() -> CallToolResult:
            session = manager_of(ctx).get(session_id)
            result = BreakpointList(session_id=session.id, breakpoints=session.breakpoint_infos(),
                                    exception_filters=session.exception_filters)
            return answer(result, render.breakpoint_list(result))
        return await guarded(work, "debug_breakpoints")

    @tool(CONTROL)
    async def debug_continue(ctx: Context, thread_id: int | None = None,
                             to: Annotated[Place | None, Field(description="run to")] = None,
                             timeout_s: Timeout = 30,
                             session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Resume; wait for the next stop."""
        place = (to.file, to.line) if to else None
        return await on_session(ctx, session_id, "debug_continue",
                                lambda s: s.resume(thread_id, place, timeout_s, progress_of(ctx)), render.stop_report)

    @tool(CONTROL)
    async def debug_step(ctx: Context, kind: Literal["over", "into", "out"] = "over",
                         count: Annotated[int, Field(ge=1, le=1000)] = 1, thread_id: int | None = None,
                         timeout_s: Timeout = 30,
                         session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Step; report the stop."""
        return await on_session(ctx, session_id, "debug_step",
                                lambda s: s.step(kind, count, thread_id, timeout_s, progress_of(ctx)),
                                render.stop_report)

    @tool(CONTROL)
    async def debug_pause(ctx: Context, thread_id: int | None = None, timeout_s: Timeout = 10,
                          session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Interrupt the program."""
        return await on_session(ctx, session_id, "debug_pause",
                                lambda s: s.pause(thread_id, timeout_s), render.stop_report)

    @tool(CONTROL)
    async def debug_restart(ctx: Context, timeout_s: Timeout = 30,
                            session_id: SessionId = None) -> Annotated[CallToolResult, StopReport]:
        """Restart, keeping breakpoints."""
        return await on_session(ctx, session_id, "debug_restart",
                                lambda s: s.restart(timeout_s, progress_of(ctx)), render.stop_report)

    @tool(READ_ONLY)
    async def debug_stack(ctx: Context, thread_id: int | None = None, start: Annotated[int, Field(ge=0)] = 0,
                          levels: Annotated[int, Field(ge=1, le=1000)] = 20, all_threads: bool = False,
                          session_id: SessionId = None) -> Annotated[CallToolResult, StackResult]:
        """Call stack."""
        return await on_session(ctx, session_id, "debug_stack",
                                lambda s: s.stack(thread_id, start, levels, all_threads), render.stack)

    @tool(READ_ONLY)
    async def debug_variables(
        ctx: Context,
        frame_id: FrameIndex = None,
        ref: int | None = None,
        scope: Annotated[str | None, Field(description="locals, globals, ...")] = None,
        start: Annotated[int, Field(ge=0)] = 0,
        count: Annotated[int, Field(ge=1, le=1000)] = 50,
        filter: Annotated[list[str] | None, Field(description="names")] = None,
        session_id: SessionId = None,
    ) -> Annotated[CallToolResult, VariablesResult]:
        """A frame's variables, or a value's children."""
        return await on_session(ctx, session_id, "debug_variables",
                                lambda s: s.variables(frame_id, ref, scope, start, count, filter), render.variables)

    @tool(CONTROL)
    async def debug_evaluate(ctx: Context, expression: str, frame_id: FrameIndex = None,
                             session_id: SessionId = None) -> Annotated[CallToolResult, EvaluateResult]:
        """Evaluate an expression."""
        return await on_session(ctx, session_id, "debug_evaluate",
                                lambda s: s.evaluate(expression, frame_id), render.evaluate)

    @tool(CONTROL)
    async def debug_set_variable(ctx: Context, name: str, value: str, frame_id: FrameIndex = None,
                                 ref: int | None = None,
                                 session_id: SessionId = None) -> Annotated[CallToolResult, Var]:
        """Set a variable (or member of ref)."""
        return await on_session(ctx, session_id, "debug_set_variable",
                                lambda s: s.set_variable(name, value, frame_id, ref),
                                lambda v: "set " + render.var_line(v, indent=""))

    @tool(READ_ONLY)
    async def debug_source(ctx: Context, file: str | None = None, line: Annotated[int | None, Field(ge=1)] = None,
                           context: Annotated[int, Field(ge=0, le=200)] = 10,
                           session_id: SessionId = None) -> Annotated[CallToolResult, SourceResult]:
        """Source around a line (default: the stop)."""
        async def work() -> CallToolResult:
            result = await source_view(manager_of(ctx), file, line, context, session_id)
            return answer(result, render.source(result))
        return await guarded(work, "debug_source")

    @tool(READ_ONLY)
    async def debug_output(ctx: Context, cursor: Annotated[int | None, Field(ge=0)] = None,
                           stream: Literal["all", "stdout", "stderr", "console"] = "all",
                           max_bytes: Annotated[int, Field(ge=1, le=1_000_000)] = 8000,
                           session_id: SessionId = None) -> Annotated[CallToolResult, OutputResult]:
        """Program output from a cursor."""
        async def work() -> CallToolResult:
            session = manager_of(ctx).get(session_id)
            streams = None if stream == "all" else frozenset({stream})
            chunk = session.output.read(cursor, max_bytes, streams)
            result = OutputResult(session_id=session.id, text=chunk.text, next_cursor=chunk.next_cursor,
                                  dropped=chunk.dropped, more=chunk.more, state=session.state)
            return answer(result, render.output(result))
        return await guarded(work, "debug_output")

    @tool(CONTROL)
    async def debug_trace(ctx: Context, points: list[Place], expressions: list[str],
                          max_hits: Annotated[int, Field(ge=1, le=10_000)] = 50, timeout_s: Timeout = 30,
                          session_id: SessionId = None) -> Annotated[CallToolResult, TraceResult]:
        """Run, recording expressions at points without stopping."""
        async def work() -> CallToolResult:
            if not points or not expressions:
                raise UsageError("pass at least one point {file, line} and one expression")
            session = manager_of(ctx).get(session_id)
            result = await session.trace([(p.file, p.line) for p in points], expressions, max_hits, timeout_s,
                                         progress_of(ctx))
            return answer(result, render.trace(result))
        return await guarded(work, "debug_trace")


    @tool(READ_ONLY)
    async def debug_memory(ctx: Context, address: Annotated[str, Field(description="0x... or expression")],
                           count: Annotated[int, Field(ge=1, le=65536)] = 64,
                           write: Annotated[str | None, Field(description="hex bytes")] = None,
                           frame_id: FrameIndex = None,
                           session_id: SessionId = None) -> Annotated[CallToolResult, MemoryResult]:
        """Read (or write) memory."""
        return await on_session(ctx, session_id, "debug_memory",
                                lambda s: s.memory(address, count, write, frame_id), render.memory)

    @tool(READ_ONLY)
    async def debug_disassemble(ctx: Context, address: str | None = None,
                                count: Annotated[int, Field(ge=1, le=500)] = 20, frame_id: FrameIndex = None,
                                session_id: SessionId = None) -> Annotated[CallToolResult, DisassemblyResult]:
        """Disassemble around the pc."""
        return await on_session(ctx, session_id, "debug_disassemble",
                                lambda s: s.disassemble(address, count, frame_id), render.disassembly)

    @tool(READ_ONLY)
    async def debug_registers(ctx: Context, frame_id: FrameIndex = None,
                              session_id: SessionId = None) -> Annotated[CallToolResult, VariablesResult]:
        """Registers of a frame."""
        return await on_session(ctx, session_id, "debug_registers",
                                lambda s: s.registers(frame_id), render.variables)

    @tool(CONTROL)
    async def debug_watch(ctx: Context, expression: str, access: Literal["write", "read", "readWrite"] = "write",
                          session_id: SessionId = None) -> Annotated[CallToolResult, BreakpointList]:
        """Stop when an lvalue is written (or read)."""
        async def watched(s: Session) -> BreakpointList:
            bp = await s.watch(expression, access)
            return BreakpointList(session_id=s.id, breakpoints=[bp.info()], exception_filters=s.exception_filters)
        return await on_session(ctx, session_id, "debug_watch", watched,
                                lambda r: render.breakpoint_line(r.breakpoints[0]))

    @tool(CONTROL)
    async def debug_command(ctx: Context, command: str, frame_id: FrameIndex = None,
                            session_id: SessionId = None) -> Annotated[CallToolResult, CommandResult]:
        """Run a raw debugger command."""
        return await on_session(ctx, session_id, "debug_command",
                                lambda s: s.command(command, frame_id), render.command)


async def source_view(manager: SessionManager, file: str | None, line: int | None, context: int,
                      session_id: str | None) -> SourceResult:
    session = manager.get(session_id) if (session_id or file is None or not os.path.isabs(file)) \
        and manager.all() else None
    current = None
    if file is None:
        if session is None:
            raise UsageError("no file given and no session stopped; pass file (and line)")
        location = await session.current_location()
        if location is None or not location.file:
            raise UsageError(f"session {session.id} is not stopped at a source line; pass file (and line)")
        path = location.file
        current = location.line
        line = line or current
    else:
        path = session.resolve_path(file) if session else os.path.abspath(file)
        if session is not None:
            location = await session.current_location()
            if location is not None and location.file == path:
                current = location.line
    lines = src.read_lines(path)
    if line is not None and line > len(lines):
        raise UsageError(f"line {line} is past the end of {path} ({len(lines)} lines)")
    center = line or 1
    marks: set[int] = set()
    if session is not None:
        marks = {b.actual_line or b.line or 0 for b in session.breakpoints.in_file(path) if not b.internal}
    text, first, last, total = src.excerpt(path, center, context, current, marks)
    return SourceResult(file=path, start=first, end=last, total_lines=total, text=text)
