"""Every use of the MCP SDK's private parts, in one place (checked against mcp 2.3.0).

polydbg needs four things the SDK has no public API for: the registered tools (to compact their
input schemas and advertise a plain-object output schema: tools/list is paid for in every
conversation), the low-level server (to serve stdio on the event loop's own pipes instead of the
SDK's worker threads), a request's connection (its MCP session id, the one a client's debug sessions
belong to over HTTP, and its teardown, which ends them), and nothing else.
``tests/unit/mcp/test_sdk_compat.py`` exercises each function against the installed SDK, so an upgrade
that moves one of these fails loudly there.
"""

from __future__ import annotations

from typing import Any

from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool


def registered_tools(server: MCPServer[Any]) -> list[Tool]:
    """The tools added with ``server.tool`` (``MCPServer._tool_manager``)."""
    return server._tool_manager.list_tools()


def set_output_schema(tool: Tool, schema: dict[str, Any] | None) -> None:
    """Advertise ``schema`` as the tool's output schema (None: none). ``Tool.output_schema`` is a cached
    property of its function metadata; the instance value is replaced where the SDK reads it."""
    tool.__dict__["output_schema"] = schema


def lowlevel_server(server: MCPServer[Any]) -> Server[Any]:
    """The low-level ``Server`` an ``MCPServer`` wraps (``MCPServer._lowlevel_server``)."""
    return server._lowlevel_server


def connection_of(ctx: Context) -> Connection | None:
    """The connection a tool call came on (``ServerSession._connection``): ``session_id`` is the MCP
    session id the transport assigned (None on stdio and on sessionless HTTP), ``exit_stack`` unwinds
    when the connection closes."""
    connection = getattr(ctx.request_context.session, "_connection", None)
    return connection if isinstance(connection, Connection) else None
