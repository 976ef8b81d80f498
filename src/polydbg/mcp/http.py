"""MCP over Streamable HTTP: ``polydbg serve --http``.

The app is the SDK's own (``MCPServer.streamable_http_app``) under uvicorn, so the SDK's checks apply
to every request: its Host/Origin allow-lists (``TransportSecuritySettings``: a bad Host is refused with
421, a bad Origin with 403), its request body limit (413) and its cap on open MCP sessions (503), and
its bearer-token middleware (no token or a wrong one: 401). One endpoint serves both protocol revisions
the SDK speaks: 2025-11-25 (``initialize``, ``Mcp-Session-Id``) and 2026-07-28 (sessionless).

The tokens (``POLYDBG_TOKEN`` or a generated one, and named clients' own) are ``polydbg.mcp.tokens``.
Only loopback is served unless ``--allow-remote`` says otherwise, and never without a token;
``--no-auth`` (for test instances such as the MCP conformance suite, which cannot send a token) is
refused anywhere but loopback. TLS is a reverse proxy's job (README).

Who owns which debug session is ``polydbg.mcp.clients``; the per-client limits are ``HTTP_LIMITS``.
"""

from __future__ import annotations

import gc
import ipaddress
import os
import socket
import sys
from dataclasses import dataclass
from typing import TextIO

from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from polydbg.mcp import arguments
from polydbg.mcp.server import build_server
from polydbg.mcp.tokens import TOKEN_ENV, ClientTokens, StartupError, Token, TokenVerifier, load_token
from polydbg.policy import Policy
from polydbg.session.manager import Limits

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
# Per client: 8 programs running at once, 16 sessions kept (ended ones stay readable; each keeps at most
# 4 MiB of output); 64 running for all clients together.
HTTP_LIMITS = Limits(live=8, kept=16, server_live=64)
MAX_REQUEST_BYTES = 4 * 1024 * 1024  # a tool call's JSON (debug_launch's stdin is the big one)
MAX_MCP_SESSIONS = 256  # open MCP sessions (2025-11-25 clients); an idle one closes after 30 minutes
_LOOPBACK_NAMES = ("localhost",)


@dataclass(frozen=True)
class HttpOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allow_remote: bool = False
    no_auth: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


def is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_options(options: HttpOptions) -> None:
    """Refuse the combinations that would expose the debugger."""
    loopback = is_loopback(options.host)
    if options.no_auth and not loopback:
        raise StartupError(f"--no-auth serves anyone who can reach the port; it is only allowed on loopback "
                           f"(--host 127.0.0.1), not on {options.host}")
    if options.no_auth and options.allow_remote:
        raise StartupError("--no-auth and --allow-remote cannot be combined: remote clients need the token")
    if not loopback and not options.allow_remote:
        raise StartupError(f"--host {options.host} is not a loopback address: whoever reaches it can run programs "
                           "as you. Pass --allow-remote to serve it anyway (the bearer token stays required; put a "
                           "TLS reverse proxy in front, see the README), or use --host 127.0.0.1")
    if not 0 <= options.port <= 65535:
        raise StartupError(f"--port {options.port} is not a port number (0 picks a free one)")


# -- the app -----------------------------------------------------------------------------------------------


def _authority(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _wildcard(host: str) -> bool:
    return host in ("", "0.0.0.0", "::", "[::]")


def _names_of_this_machine() -> set[str]:
    names = {socket.gethostname(), socket.getfqdn()}
    try:
        for info in socket.getaddrinfo(socket.gethostname(), None):
            names.add(str(info[4][0]))
    except OSError:
        pass
    return {n for n in names if n}


def security_settings(options: HttpOptions, port: int) -> TransportSecuritySettings:
    """Host and Origin allow-lists: loopback names on the bound port, the names a remote client may use when
    remote is allowed, and whatever ``--allowed-host`` / ``--allowed-origin`` add."""
    names = {"127.0.0.1", "localhost", "::1"}
    if options.allow_remote:
        if _wildcard(options.host):
            names |= _names_of_this_machine()
        else:
            names.add(options.host.strip("[]"))
    hosts = sorted(_authority(n, port) for n in names)
    origins = sorted(f"http://{_authority(n, port)}" for n in names)
    for extra in options.allowed_hosts:
        hosts.append(extra)
        if ":" not in extra.rsplit("]", 1)[-1]:
            hosts.append(f"{extra}:*")
    origins.extend(options.allowed_origins)
    return TransportSecuritySettings(enable_dns_rebinding_protection=True, allowed_hosts=hosts,
                                     allowed_origins=origins)


def url_of(host: str, port: int) -> str:
    shown = socket.gethostname() if _wildcard(host) else host.strip("[]")
    return f"http://{_authority(shown, port)}{MCP_PATH}"


def build_app(options: HttpOptions, port: int, token: Token | None, policy: Policy | None = None,
              clients: ClientTokens | None = None) -> Starlette:
    """The SDK's Streamable HTTP app for polydbg, with the token check unless ``token`` is None (named
    clients' tokens from ``clients`` too); ``policy`` defaults to the HTTP defaults for the current
    directory."""
    if policy is None:
        policy = Policy.defaults("http", os.getcwd())
    if token is None:
        server = build_server(HTTP_LIMITS, policy=policy)
    else:
        auth = AuthSettings(issuer_url=url_of(options.host, port),  # type: ignore[arg-type]  # pydantic parses it
                            resource_server_url=None)  # no OAuth metadata: there is no authorization server
        server = build_server(HTTP_LIMITS, token_verifier=TokenVerifier(token.value, clients), auth=auth,
                              policy=policy)
    return server.streamable_http_app(streamable_http_path=MCP_PATH, max_request_body_size=MAX_REQUEST_BYTES,
                                      max_sessions=MAX_MCP_SESSIONS,
                                      transport_security=security_settings(options, port), host=options.host)


def banner(options: HttpOptions, port: int, token: Token | None, clients: ClientTokens | None = None) -> str:
    """What start-up says on stderr: where it serves, where the token is, the line that connects a client."""
    url = url_of(options.host, port)
    lines = [f"polydbg: serving MCP over Streamable HTTP at {url}"]
    if token is None:
        lines += ["polydbg: WARNING: --no-auth: NO TOKEN IS CHECKED. Any process on this machine can run programs "
                  "as you through this server. Use it only for test instances.",
                  f"polydbg: connect: claude mcp add --transport http polydbg {url}"]
    else:
        where = (f"the token is in {token.where} (mode 0600)" if token.where != TOKEN_ENV
                 else f"the token is ${TOKEN_ENV}")
        lines += [f"polydbg: {where}; clients send it as the header Authorization: Bearer <token>",
                  f"polydbg: connect: claude mcp add --transport http polydbg {url} "
                  f"--header \"Authorization: Bearer {token.shell}\"",
                  "polydbg: other clients (Codex, Cursor, VS Code, Gemini CLI, Zed): README, Serve over HTTP"]
        if clients is not None and (names := sorted(clients.current())):
            lines.append(f"polydbg: named clients, each with its own token and sessions ({clients.path}): "
                         + ", ".join(names))
        else:
            lines.append("polydbg: to keep agents' sessions apart, give each its own token: polydbg token new NAME")
    if not is_loopback(options.host):
        lines.append("polydbg: serving beyond loopback over plain HTTP: put a TLS reverse proxy in front (README)")
    return "\n".join(lines) + "\n"


_OWS = (b" ", b"\t")  # the optional whitespace around a header value


class TrimmedHeaderValues:
    """Header values without the spaces and tabs around them, as RFC 9110 section 5.5 defines a field value.

    uvicorn's httptools parser keeps a value's trailing whitespace (its h11 parser drops it), and the SDK
    compares ``Mcp-Name``, ``Mcp-Method`` and ``MCP-Protocol-Version`` with the request body exactly: without
    this, ``Mcp-Name: debug_launch `` is refused with 400 HeaderMismatch (the MCP conformance suite's
    http-header-validation scenario sends it)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and any(value[:1] in _OWS or value[-1:] in _OWS for _, value in scope["headers"]):
            scope = {**scope, "headers": [(name, value.strip(b" \t")) for name, value in scope["headers"]]}
        await self.app(scope, receive, send)


class MarkedSurrogates:
    """A request body whose JSON holds a lone surrogate escape (``"\\ud800"``) reaches the SDK with it marked
    (``arguments.mark_lone_surrogates``): the SDK's parser refuses the whole message with "Parse error" and
    no id, where the tool can answer naming the argument. Bodies over the SDK's limit pass untouched (it
    answers 413)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more, first = 0, True, None
        while more and size <= MAX_REQUEST_BYTES:
            message = await receive()
            if message["type"] != "http.request":
                first = message
                break
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            more = message.get("more_body", False)
        body = b"".join(chunks)
        if not more and first is None:
            body = arguments.mark_lone_surrogates(body.decode("utf-8", "surrogateescape")).encode(
                "utf-8", "surrogateescape")
        replayed = [{"type": "http.request", "body": body, "more_body": more}] if first is None else [first]

        async def replay() -> Message:
            return replayed.pop() if replayed else await receive()
        await self.app(scope, replay, send)


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (0: a free port)."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host.strip("[]") or None, port, type=socket.SOCK_STREAM,
                                                             flags=socket.AI_PASSIVE)[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise StartupError(f"cannot serve on {host}: {exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise StartupError(f"cannot listen on {_authority(host, port)}: {exc.strerror or exc}") from exc
    sock.setblocking(False)
    return sock


async def serve_http(options: HttpOptions, policy: Policy | None = None, err: TextIO = sys.stderr) -> None:
    """Serve until SIGINT/SIGTERM; every session's programs end when the server does."""
    import uvicorn

    check_options(options)
    token = None if options.no_auth else load_token()
    clients = None if options.no_auth else ClientTokens()
    sock = bind(options.host, options.port)
    port = int(sock.getsockname()[1])
    app = build_app(options, port, token, policy, clients)
    # http="httptools" (a dependency): uvicorn's pure-Python h11 costs ~0.9 ms more per answer.
    config = uvicorn.Config(TrimmedHeaderValues(MarkedSurrogates(app)), log_config=None, access_log=False, ws="none",
                            lifespan="on", http="httptools", timeout_graceful_shutdown=3, server_header=False)
    err.write(banner(options, port, token, clients))
    if policy is not None:
        err.write("polydbg: " + policy.describe().replace("\n", "\npolydbg: ") + "\n")
    # The SDK's and pydantic's start-up objects (~90,000) live as long as the server: out of the collector's
    # sight, a full collection takes microseconds instead of ~70 ms in the middle of some request.
    gc.collect()
    gc.freeze()
    err.flush()
    try:
        await uvicorn.Server(config).serve(sockets=[sock])
    finally:
        sock.close()
