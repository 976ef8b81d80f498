"""Command line: ``polydbg [serve]`` (MCP over stdio), ``polydbg serve --http`` (Streamable HTTP),
``polydbg doctor``, ``polydbg demo``."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import gc
import logging
import os
import signal
import sys
from collections.abc import Iterator
from types import FrameType
from typing import TYPE_CHECKING, Literal, NoReturn

from polydbg import __version__, procs
from polydbg import policy as security

if TYPE_CHECKING:
    from polydbg.policy import Policy


def _setup_logging() -> None:
    level = os.environ.get("POLYDBG_LOG_LEVEL", "WARNING").upper()
    log_file = os.environ.get("POLYDBG_LOG_FILE")
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    procs.kill_all_now()
    raise SystemExit(128 + signum)


def serve(args: argparse.Namespace | None = None) -> int:
    """Serve MCP on stdin/stdout until the client goes away, or over HTTP (``--http``) until a signal."""
    _setup_logging()
    atexit.register(procs.kill_all_now)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    if args is not None and args.http:
        return serve_http(args)
    with _collector_paused():
        from polydbg.mcp.server import build_server
        from polydbg.mcp.stdio import serve_stdio

        server = build_server(policy=load_policy(args, "stdio"))
    asyncio.run(serve_stdio(server))
    return 0


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """Import the SDK with the garbage collector off, then freeze what it made: its ~90,000 objects live as long
    as the server, and collecting them while they are made cost ~170 ms of start-up (and every full
    collection later ~70 ms) for nothing."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def leave(code: int) -> NoReturn:
    """End the process once serving is over, without the interpreter's teardown: every debugger and program
    has been ended and the MCP stream written by now, and tearing down the SDK's objects one by one took
    ~150 ms of the client's wait (exit after stdin EOF 164 ms, ~12 ms this way). What an exit would still
    do is done here: the atexit work (no process left behind) and flushing the logs and standard streams."""
    procs.kill_all_now()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(code)


def load_policy(args: argparse.Namespace | None, transport: Literal["stdio", "http"]) -> Policy:
    """The security policy from ``polydbg serve``'s flags, POLYDBG_* and polydbg.toml (see SECURITY.md); a bad
    setting stops start-up with exit status 2."""
    try:
        return security.Policy.load(transport, os.getcwd(), args)
    except security.PolicyConfigError as exc:
        print(f"polydbg: {exc}", file=sys.stderr)
        raise SystemExit(2) from exc


def serve_http(args: argparse.Namespace) -> int:
    with _collector_paused():
        from polydbg.mcp import http
        from polydbg.mcp.tokens import StartupError

        policy = load_policy(args, "http")

    options = http.HttpOptions(host=args.host, port=args.port, allow_remote=args.allow_remote,
                               no_auth=args.no_auth, allowed_hosts=tuple(args.allowed_host),
                               allowed_origins=tuple(args.allowed_origin))
    try:
        asyncio.run(http.serve_http(options, policy))
    except StartupError as exc:
        print(f"polydbg: {exc}", file=sys.stderr)
        return 2
    return 0


DEFAULT_HOST = "127.0.0.1"  # polydbg.mcp.http's defaults, named here so that parsing imports no SDK
DEFAULT_PORT = 8765


def _serve_arguments(serve_parser: argparse.ArgumentParser) -> None:
    security.add_arguments(serve_parser)
    http = serve_parser.add_argument_group("Streamable HTTP (instead of stdio)")
    http.add_argument("--http", action="store_true", help="serve MCP over Streamable HTTP at /mcp")
    http.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default {DEFAULT_HOST})")
    http.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0: a free one)")
    http.add_argument("--allow-remote", action="store_true",
                      help="allow a non-loopback --host (the token stays required; put TLS in front)")
    http.add_argument("--no-auth", action="store_true",
                      help="check no token: loopback-only, for test instances (e.g. the MCP conformance suite)")
    http.add_argument("--allowed-host", action="append", default=[], metavar="HOST[:PORT]",
                      help="another Host header to accept (a reverse proxy's name); repeatable")
    http.add_argument("--allowed-origin", action="append", default=[], metavar="ORIGIN",
                      help="another Origin to accept (e.g. https://proxy.example); repeatable")


def doctor(args: argparse.Namespace | None = None) -> int:
    from polydbg.doctor import report

    text, ok = report()
    print(text)
    print()
    for transport in ("stdio", "http"):  # the settings polydbg serve would start with here, given the same flags
        try:
            print(security.Policy.load(transport, os.getcwd(), args).describe())
        except security.PolicyConfigError as exc:
            print(f"policy ({transport}): {exc}")
            ok = False
    return 0 if ok else 1


def token(args: argparse.Namespace) -> int:
    """``polydbg token new|list|revoke``: named clients' tokens for ``serve --http`` (polydbg.mcp.tokens)."""
    from polydbg.mcp import tokens

    store = tokens.ClientTokens()
    try:
        if args.action == "new":
            value = store.new(args.name)
            print(value)  # on stdout alone, for $(polydbg token new NAME)
            print(f"polydbg: client {args.name!r} added to {store.path}; a running server accepts it at once. The "
                  f"client sends it as the header Authorization: Bearer <token>", file=sys.stderr)
        elif args.action == "revoke":
            store.revoke(args.name)
            print(f"polydbg: client {args.name!r} revoked; a running server refuses its token at once (its debug "
                  "sessions end when their MCP sessions do)", file=sys.stderr)
        else:
            names = store.names()
            print("\n".join(names) if names else f"no named clients (the server's own token is client "
                                                  f"{tokens.DEFAULT_CLIENT!r}); add one: polydbg token new NAME")
    except tokens.StartupError as exc:
        print(f"polydbg: {exc}", file=sys.stderr)
        return 2
    return 0


def demo() -> int:
    from polydbg.demo.run import run_demo

    _setup_logging()
    return asyncio.run(run_demo())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="polydbg", description="MCP debugging server for AI agents.")
    parser.add_argument("--version", action="version", version=f"polydbg {__version__}")
    sub = parser.add_subparsers(dest="command")
    serve_parser = sub.add_parser("serve", help="serve MCP over stdio (the default), or over HTTP with --http")
    _serve_arguments(serve_parser)
    doctor_parser = sub.add_parser("doctor", help="show which debug adapters are found and how to install the others, "
                                                  "and the policy serve would start with (given the same flags)")
    security.add_arguments(doctor_parser)
    sub.add_parser("demo", help="debug a bundled buggy program through the MCP server and print the transcript")
    token_parser = sub.add_parser("token", help="named clients' tokens for serve --http: each its own sessions")
    actions = token_parser.add_subparsers(dest="action", required=True)
    actions.add_parser("new", help="make a token for a client and print it").add_argument("name")
    actions.add_parser("revoke", help="stop accepting a client's token").add_argument("name")
    actions.add_parser("list", help="the named clients")
    args = parser.parse_args(argv)
    if args.command == "serve" and not args.http:
        http_only: list[tuple[str, object, object]] = [
            ("--host", args.host, DEFAULT_HOST), ("--port", args.port, DEFAULT_PORT),
            ("--allow-remote", args.allow_remote, False), ("--no-auth", args.no_auth, False),
            ("--allowed-host", args.allowed_host, []), ("--allowed-origin", args.allowed_origin, [])]
        given = [flag for flag, value, default in http_only if value != default]
        if given:
            serve_parser.error(f"{', '.join(given)}: for --http only (stdio has no host, port or token)")
    if args.command in (None, "serve"):
        leave(serve(args if args.command else None))
    if args.command == "token":
        sys.exit(token(args))
    if args.command == "doctor":
        sys.exit(doctor(args))
    sys.exit(demo())
