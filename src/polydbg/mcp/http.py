"""MCP over Streamable HTTP: ``polydbg serve --http``.

The app is the SDK's own (``MCPServer.streamable_http_app``) under uvicorn, so the SDK's checks apply
to every request: its Host/Origin allow-lists (``TransportSecuritySettings``: a bad Host is refused with
421, a bad Origin with 403), its request body limit (413) and its cap on open MCP sessions (503), and
its bearer-token middleware (no token or a wrong one: 401). One endpoint serves both protocol revisions
the SDK speaks: 2025-11-25 (``initialize``, ``Mcp-Session-Id``) and 2026-07-28 (sessionless).

The token is ``POLYDBG_TOKEN`` or, failing that, one generated once and kept in
``$XDG_STATE_HOME/polydbg/token`` (``~/.local/state/polydbg/token``; the file 0600, its directory 0700),
compared in constant time. Only loopback is served unless ``--allow-remote`` says otherwise, and never
without a token; ``--no-auth`` (for test instances such as the MCP conformance suite, which cannot send
a token) is refused anywhere but loopback. TLS is a reverse proxy's job (README).

Who owns which debug session is ``polydbg.mcp.clients``; the per-client limits are ``HTTP_LIMITS``.
"""

from __future__ import annotations

import gc
import hmac
import ipaddress
import os
import secrets
import shlex
import socket
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from polydbg.mcp.server import build_server
from polydbg.policy import Policy
from polydbg.session.manager import Limits

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
TOKEN_ENV = "POLYDBG_TOKEN"
MIN_TOKEN_CHARS = 16
PRINCIPAL = "polydbg-token"  # the client id every holder of the token authenticates as
# Per client: 8 programs running at once, 16 sessions kept (ended ones stay readable; each keeps at most
# 4 MiB of output); 64 running for all clients together.
HTTP_LIMITS = Limits(live=8, kept=16, server_live=64)
MAX_REQUEST_BYTES = 4 * 1024 * 1024  # a tool call's JSON (debug_launch's stdin is the big one)
MAX_MCP_SESSIONS = 256  # open MCP sessions (2025-11-25 clients); an idle one closes after 30 minutes
_LOOPBACK_NAMES = ("localhost",)


class StartupError(Exception):
    """Why the server will not start, said to the user (exit status 2)."""


@dataclass(frozen=True)
class HttpOptions:
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allow_remote: bool = False
    no_auth: bool = False
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()


@dataclass(frozen=True)
class Token:
    value: str = field(repr=False)
    where: str  # "POLYDBG_TOKEN" or the file's path
    shell: str  # how a shell reads it: "$POLYDBG_TOKEN" or "$(cat /path)"


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


# -- the token ---------------------------------------------------------------------------------------------


def state_dir() -> Path:
    """``$XDG_STATE_HOME/polydbg`` (an absolute XDG_STATE_HOME only, as the spec says), else
    ``~/.local/state/polydbg``."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "polydbg"


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise StartupError(f"{path} is not a directory of yours; remove it, or set {TOKEN_ENV}")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)


def _checked(token: str, where: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token) or not token.isprintable():
        raise StartupError(f"the token in {where} must be at least {MIN_TOKEN_CHARS} printable characters without "
                           "spaces (python -c 'import secrets; print(secrets.token_urlsafe(32))' makes one)")
    return token


def _read_token_file(path: Path) -> str:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise StartupError(f"{path} is not a regular file of yours; remove it and start again for a new token")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise StartupError(f"{path} can be read by others (mode {stat.S_IMODE(info.st_mode):04o}); the token may "
                               "have leaked: remove the file and start again for a new one")
        with os.fdopen(os.dup(fd), "r", encoding="utf-8") as file:
            return _checked(file.read(), str(path))
    finally:
        os.close(fd)


def load_token(environ: dict[str, str] | None = None) -> Token:
    """``POLYDBG_TOKEN``, else the token file, made (0600, in a 0700 directory) the first time."""
    env = os.environ if environ is None else environ
    if env.get(TOKEN_ENV):
        return Token(_checked(env[TOKEN_ENV], TOKEN_ENV), TOKEN_ENV, f"${TOKEN_ENV}")
    directory = state_dir()
    _private_dir(directory)
    path = directory / "token"
    shell = f"$(cat {shlex.quote(str(path))})"
    try:
        return Token(_read_token_file(path), str(path), shell)
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another server made it meanwhile
        return Token(_read_token_file(path), str(path), shell)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(token + "\n")
    return Token(token, str(path), shell)


class StaticTokenVerifier:
    """The SDK's ``TokenVerifier`` for one shared secret, compared in constant time."""

    def __init__(self, token: str) -> None:
        self._expected = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if hmac.compare_digest(token.encode(), self._expected):
            return AccessToken(token=token, client_id=PRINCIPAL, scopes=[])
        return None


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


def build_app(options: HttpOptions, port: int, token: Token | None, policy: Policy | None = None) -> Starlette:
    """The SDK's Streamable HTTP app for polydbg, with the token check unless ``token`` is None; ``policy``
    defaults to the HTTP defaults for the current directory."""
    if policy is None:
        policy = Policy.defaults("http", os.getcwd())
    if token is None:
        server = build_server(HTTP_LIMITS, policy=policy)
    else:
        auth = AuthSettings(issuer_url=url_of(options.host, port),  # type: ignore[arg-type]  # pydantic parses it
                            resource_server_url=None)  # no OAuth metadata: there is no authorization server
        server = build_server(HTTP_LIMITS, token_verifier=StaticTokenVerifier(token.value), auth=auth,
                              policy=policy)
    return server.streamable_http_app(streamable_http_path=MCP_PATH, max_request_body_size=MAX_REQUEST_BYTES,
                                      max_sessions=MAX_MCP_SESSIONS,
                                      transport_security=security_settings(options, port), host=options.host)


def banner(options: HttpOptions, port: int, token: Token | None) -> str:
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
                  "polydbg: other clients (Codex, Cursor, VS Code, Gemini CLI, Zed): README, Configure your client"]
    if not is_loopback(options.host):
        lines.append("polydbg: serving beyond loopback over plain HTTP: put a TLS reverse proxy in front (README)")
    return "\n".join(lines) + "\n"


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
    sock = bind(options.host, options.port)
    port = int(sock.getsockname()[1])
    app = build_app(options, port, token, policy)
    # http="httptools" (a dependency): uvicorn's pure-Python h11 costs ~0.9 ms more per answer.
    config = uvicorn.Config(app, log_config=None, access_log=False, ws="none", lifespan="on", http="httptools",
                            timeout_graceful_shutdown=3, server_header=False)
    err.write(banner(options, port, token))
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
