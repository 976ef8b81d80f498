"""The MCPServer: lifespan (owns the SessionManager), tools, the workflow prompt, output resources.

Tool schemas are compacted after registration (titles and null-unions dropped) because an agent
pays for every byte of ``tools/list`` on every conversation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from mcp.server.mcpserver import Context, MCPServer

from polydbg import __version__
from polydbg.mcp import tools
from polydbg.session.manager import SessionManager

RESOURCE_MAX_BYTES = 1_000_000

INSTRUCTIONS = (
    "Step-through debugger. debug_launch runs to the first breakpoint and returns a stop report "
    "(location, source, locals, output); debug_step/debug_continue return the next report. Expand values "
    "with debug_variables(ref=…). Every answer is truncated with a hint to get more."
)

WORKFLOW = """Debugging workflow with polydbg:
1. Read the failing code, pick the line where state first looks suspicious.
2. debug_launch(program=…, breakpoints=[{file, line}]) — it runs to the first stop and shows the
   location, source and locals. Uncaught exceptions stop where they are raised.
3. Inspect: locals are in the report; debug_variables(ref=…) expands a value, debug_evaluate tests a
   hypothesis, debug_stack shows callers (frame_id=N selects a frame).
4. Move: debug_step(kind=over|into|out), debug_continue (optionally to={file, line}).
5. To watch a value change over many iterations without stopping, use debug_trace.
6. Change a value with debug_set_variable to test a fix; debug_restart keeps breakpoints.
7. debug_terminate when done.
"""


@asynccontextmanager
async def lifespan(_server: MCPServer[SessionManager]) -> AsyncIterator[SessionManager]:
    manager = SessionManager()
    try:
        yield manager
    finally:
        await manager.close_all()


def compact_schema(node: Any) -> Any:
    """Drop what a model does not need from a JSON schema: titles, ``anyOf [T, null]``, null defaults."""
    if isinstance(node, list):
        return [compact_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact_schema(prop) for name, prop in value.items()}
            continue
        out[key] = compact_schema(value)
    variants = out.get("anyOf")
    if isinstance(variants, list):
        non_null = [v for v in variants if v != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(variants):
            del out["anyOf"]
            out = {**non_null[0], **out}
    return out


def build_server() -> MCPServer[SessionManager]:
    server: MCPServer[SessionManager] = MCPServer(
        name="polydbg", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan,
        log_level="WARNING",
    )
    tools.register(server)
    for tool in server._tool_manager.list_tools():
        tool.parameters = compact_schema(tool.parameters)
        if tool.output_schema is not None:
            tool.__dict__["output_schema"] = compact_schema(tool.output_schema)

    @server.prompt(name="debug_workflow", description="The recommended way to debug with polydbg")
    def debug_workflow() -> str:
        return WORKFLOW

    @server.resource("polydbg://sessions/{session_id}/output", name="session_output",
                     description="All retained output of a debug session", mime_type="text/plain")
    def session_output(session_id: str, ctx: Context) -> str:
        session = tools.manager_of(ctx).get(session_id)
        chunk = session.output.read(None, RESOURCE_MAX_BYTES)
        if chunk.dropped:
            return f"({chunk.dropped} older bytes dropped)\n{chunk.text}"
        return chunk.text

    return server
