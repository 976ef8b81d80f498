"""Each private part of the MCP SDK polydbg relies on, exercised against the installed SDK: an upgrade
that moves one fails here, by name, instead of somewhere in the server."""

from __future__ import annotations

from mcp import Client
from mcp.server.connection import Connection
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import Context, MCPServer

from polydbg.mcp import sdk_compat
from polydbg.mcp.server import build_server


def test_registered_tools_are_the_server_s_tools() -> None:
    server: MCPServer[None] = MCPServer(name="probe")

    @server.tool()
    def probe(x: int) -> int:
        """A probe."""
        return x

    [tool] = sdk_compat.registered_tools(server)
    assert tool.name == "probe" and "x" in tool.parameters["properties"]


async def test_an_output_schema_set_here_is_what_tools_list_says() -> None:
    server: MCPServer[None] = MCPServer(name="probe")

    @server.tool()
    def probe(x: int) -> int:
        """A probe."""
        return x

    [tool] = sdk_compat.registered_tools(server)
    sdk_compat.set_output_schema(tool, {"type": "object", "title": "mine"})
    [listed] = await server.list_tools()
    assert listed.output_schema == {"type": "object", "title": "mine"}
    sdk_compat.set_output_schema(tool, None)
    [listed] = await server.list_tools()
    assert listed.output_schema is None


def test_the_lowlevel_server_is_reachable() -> None:
    server = build_server()
    assert isinstance(sdk_compat.lowlevel_server(server), Server)
    assert sdk_compat.lowlevel_server(server).name == "polydbg"


async def test_a_tool_call_s_connection_is_reachable() -> None:
    seen: list[Connection | None] = []
    server: MCPServer[None] = MCPServer(name="probe")

    @server.tool()
    def probe(ctx: Context) -> str:
        """A probe."""
        seen.append(sdk_compat.connection_of(ctx))
        return "ok"

    for mode in ("legacy", "auto"):
        async with Client(server, mode=mode) as client:
            await client.call_tool("probe", {})
    assert len(seen) == 2
    for connection in seen:
        assert isinstance(connection, Connection)
        assert connection.session_id is None  # in-process: no MCP session id (HTTP sets one: test_http.py)
        assert connection.exit_stack is not None and isinstance(connection.state, dict)
