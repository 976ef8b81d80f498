"""The MCPServer: lifespan (owns every client's sessions), tools, the workflow prompt, output resources.

Tool schemas are compacted after registration (titles and null-unions dropped) because an agent
pays for every byte of ``tools/list`` on every conversation.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from mcp.server.auth.provider import TokenVerifier
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError, ToolError
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, GetPromptResult, InputRequiredResult
from pydantic import ValidationError

from polydbg import __version__, procs
from polydbg.errors import UnknownSessionError, UsageError
from polydbg.mcp import arguments as arguments_module
from polydbg.mcp import sdk_compat, tools
from polydbg.mcp.clients import manager_of
from polydbg.policy import Policy
from polydbg.session.manager import STDIO_LIMITS, Clients, Limits

RESOURCE_MAX_BYTES = 1_000_000

# Every tool answers with structuredContent built from a pydantic model (session/model.py). Their full
# schemas would cost ~16 KB of tools/list on every conversation, and even a bare {"type": "object"} per
# tool 0.8 KB, so none is advertised (structuredContent needs no outputSchema); the README documents
# the models.

INSTRUCTIONS = (
    "Step-through debugger. debug_launch runs to the first breakpoint and returns a stop report "
    "(location, source, locals, output); debug_step/debug_continue return the next report. Expand values "
    "with debug_variables(ref=...). Every answer is truncated with a hint to get more. session_id defaults "
    "to the most recently used session; frame_id is a frame index from debug_stack (0 = innermost); "
    "timeout_s is how long an execution tool waits for a stop (default 30). debug_launch(record=true) records a "
    "native program (gdb) so debug_step/debug_continue(reverse=true) run backwards; debug_continue(reload=true) "
    "puts edited source into the running program."
)

WORKFLOW = """Debugging workflow with polydbg:
1. Read the failing code, pick the line where state first looks suspicious.
2. debug_launch(program=…, breakpoints=[{file, line}]) — it runs to the first stop and shows the
   location, source and locals. Uncaught exceptions stop where they are raised.
3. Inspect: locals are in the report; debug_variables(ref=…) expands a value, debug_evaluate tests a
   hypothesis, debug_stack shows callers (frame_id=N selects a frame).
4. Move: debug_step(kind=over|into|out), debug_continue (optionally to={file, line}).
5. To watch a value change over many iterations without stopping, use debug_trace.
6. Change a value with debug_set_variable to test a fix; after editing the source,
   debug_continue(reload=true) runs the edited code without a restart (Python, Node, JVM);
   debug_restart keeps breakpoints (and reruns the launch's build).
7. Native code: who wrote a value? debug_launch(…, record=true) (gdb), debug_watch it, then
   debug_continue(reverse=true) runs back to the write; debug_step(reverse=true) steps back.
8. debug_terminate when done.
"""


def lifespan_for(limits: Limits, policy: Policy | None = None) -> Callable[[MCPServer[Clients]],
                                                                          AbstractAsyncContextManager[Clients]]:
    """The server's lifespan: every client's sessions, all ended when the server stops."""
    @asynccontextmanager
    async def lifespan(_server: MCPServer[Clients]) -> AsyncIterator[Clients]:
        clients = Clients(limits, policy)
        async with procs.warm_guards():  # a launch takes a guard started ahead of it (polydbg.warm)
            try:
                yield clients
            finally:
                await clients.close_all()
    return lifespan


# Range limits are enforced by the server's own validation (with a clear error); advertising them costs bytes.
_SERVER_CHECKED = frozenset({"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
_DATA_KEYWORDS = frozenset({"default", "examples", "const", "enum"})


def compact_schema(node: Any, defs: dict[str, Any] | None = None) -> Any:
    """Shrink an input schema to what a model needs: no titles, ``$defs`` inlined, ``anyOf [T, null]``
    collapsed to ``T``, null and false defaults dropped (omitting an optional argument means null)."""
    if defs is None and isinstance(node, dict):
        defs = node.get("$defs", {})
    if isinstance(node, list):
        return [compact_schema(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/") and defs:
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return compact_schema({**defs[ref.removeprefix("#/$defs/")], **siblings}, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DATA_KEYWORDS:  # values, not schemas: copied as they are
            if not (key == "default" and (value is None or value is False)):
                out[key] = value
            continue
        if key in ("$defs", "additionalProperties") and not isinstance(value, dict):
            continue
        if key == "$defs" or (key == "title" and isinstance(value, str)) or key in _SERVER_CHECKED:
            continue
        if key == "properties" and isinstance(value, dict):
            out[key] = {name: compact_schema(prop, defs) for name, prop in value.items()}
            continue
        out[key] = compact_schema(value, defs)
    variants = out.get("anyOf")
    if isinstance(variants, list):
        non_null = [v for v in variants if v != {"type": "null"}]
        if len(non_null) == 1 and len(non_null) < len(variants):
            del out["anyOf"]
            out = {**non_null[0], **out}
    return out


class PolydbgServer(MCPServer[Clients]):
    async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                         context: Context[Clients, Any] | None = None) -> GetPromptResult | InputRequiredResult:
        """An unknown prompt is the client's mistake (-32602, as for an unknown resource), not the SDK's
        "Internal server error" with a traceback in the log that 2026-07-28 makes of it."""
        known = [prompt.name for prompt in await self.list_prompts()]
        if name not in known:
            raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name!r}; prompts: {', '.join(known)}")
        return await super().get_prompt(name, arguments, context)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Context[Clients, Any] | None = None
                        ) -> CallToolResult | InputRequiredResult:
        """Arguments the SDK would drop or choke on are refused first, naming the argument (``arguments``);
        the SDK's own validation errors are rewritten the same way."""
        registered = {tool.name: tool for tool in sdk_compat.registered_tools(self)}
        tool = registered.get(name)
        if tool is None:
            return tools.failure(UsageError(arguments_module.unknown_tool(name, list(registered))), name)
        problem = arguments_module.problem(name, tool.parameters, arguments)
        if problem is not None:
            return tools.failure(UsageError(problem), name)
        arguments = arguments_module.listed(tool.parameters, arguments)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                said = arguments_module.validation_message(name, exc.__cause__, tool.parameters)
                return tools.failure(UsageError(said), name)
            raise


def build_server(limits: Limits = STDIO_LIMITS, token_verifier: TokenVerifier | None = None,
                 auth: AuthSettings | None = None, policy: Policy | None = None) -> MCPServer[Clients]:
    """The server; ``limits`` are each client's (see ``Limits``); ``token_verifier`` and ``auth`` turn on the
    SDK's bearer-token check over HTTP (``polydbg.mcp.http``); ``policy`` is the security policy every tool
    applies (``polydbg.policy``; default: stdio's, everything allowed)."""
    server = PolydbgServer(
        name="polydbg", version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan_for(limits, policy),
        log_level="WARNING", token_verifier=token_verifier, auth=auth,
    )
    tools.register(server)
    for tool in sdk_compat.registered_tools(server):
        tool.parameters = compact_schema(tool.parameters)
        sdk_compat.set_output_schema(tool, None)

    @server.prompt(name="debug_workflow", description="The recommended way to debug with polydbg")
    def debug_workflow() -> str:
        return WORKFLOW

    @server.resource("polydbg://sessions/{session_id}/output", name="session_output",
                     description="All retained output of a debug session", mime_type="text/plain")
    def session_output(session_id: str, ctx: Context) -> str:
        try:
            session = manager_of(ctx).get(session_id)
        except UnknownSessionError as exc:  # another client's session is as unknown as a made-up id
            raise ResourceNotFoundError(str(exc)) from exc
        chunk = session.output.read(None, RESOURCE_MAX_BYTES)
        if chunk.dropped:
            return f"({chunk.dropped} older bytes dropped)\n{chunk.text}"
        return chunk.text

    return server
