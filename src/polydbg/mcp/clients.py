"""Who is calling: the client a tool call's debug sessions belong to.

Over stdio (and with an in-process client) there is one client. Over HTTP a client is its authenticated
principal (the bearer token's client id; ``anonymous`` under ``--no-auth``) together with, on the
2025-11-25 revision, the MCP session it initialized (``Mcp-Session-Id``: assigned by the server, and the
SDK refuses it with any other credential). A sessionless 2026-07-28 request has only its principal, so
sessionless clients holding the same token are one client. Identity never comes from a header a client
can set freely: the session id is the connection's own, the principal is what the token verifier said.

When an MCP session ends (the client's DELETE, or the SDK's idle timeout), its debug sessions end too.
"""

from __future__ import annotations

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.mcpserver import Context
from starlette.requests import HTTPConnection

from polydbg.mcp import sdk_compat
from polydbg.session.manager import Clients, SessionManager

LOCAL = "local"
ANONYMOUS = "anonymous"
_RELEASE_KEY = "polydbg.owner"  # in Connection.state: the connection's sessions end when it closes


def owner_of(ctx: Context) -> str:
    """The key of the calling client: ``local``, or ``<principal>`` / ``<principal>/<MCP session id>``."""
    request = ctx.request_context.request
    if request is None:
        return LOCAL
    user = request.scope.get("user") if isinstance(request, HTTPConnection) else None
    principal = f"token:{user.access_token.client_id}" if isinstance(user, AuthenticatedUser) else ANONYMOUS
    connection = sdk_compat.connection_of(ctx)
    session_id = connection.session_id if connection is not None else None
    return f"{principal}/{session_id}" if session_id else principal


def manager_of(ctx: Context) -> SessionManager:
    """The calling client's sessions (and, the first time an MCP session is seen, ending them with it)."""
    clients = ctx.request_context.lifespan_context
    assert isinstance(clients, Clients)
    owner = owner_of(ctx)
    connection = sdk_compat.connection_of(ctx)
    if connection is not None and connection.session_id and _RELEASE_KEY not in connection.state:
        connection.state[_RELEASE_KEY] = owner
        connection.exit_stack.push_async_callback(clients.release, owner)
    return clients.of(owner)
