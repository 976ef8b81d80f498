"""Command line: ``polydbg [serve]`` (MCP over stdio), ``polydbg doctor``, ``polydbg demo``."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import logging
import os
import signal
import sys
from types import FrameType

from polydbg import __version__, procs


def _setup_logging() -> None:
    level = os.environ.get("POLYDBG_LOG_LEVEL", "WARNING").upper()
    log_file = os.environ.get("POLYDBG_LOG_FILE")
    handler: logging.Handler = logging.FileHandler(log_file) if log_file else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler], force=True)


def _on_signal(signum: int, _frame: FrameType | None) -> None:
    procs.kill_all_now()
    raise SystemExit(128 + signum)


def serve() -> int:
    """Serve MCP on stdin/stdout until the client goes away or a signal arrives."""
    _setup_logging()
    atexit.register(procs.kill_all_now)
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGINT, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal)
    from polydbg.mcp.server import build_server
    from polydbg.mcp.stdio import serve_stdio

    asyncio.run(serve_stdio(build_server()))
    return 0


def doctor() -> int:
    from polydbg.doctor import report

    text, ok = report()
    print(text)
    return 0 if ok else 1


def demo() -> int:
    from polydbg.demo.run import run_demo

    _setup_logging()
    return asyncio.run(run_demo())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="polydbg", description="MCP debugging server for AI agents.")
    parser.add_argument("--version", action="version", version=f"polydbg {__version__}")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("serve", help="serve MCP over stdio (the default)")
    sub.add_parser("doctor", help="show which debug adapters are found and how to install the others")
    sub.add_parser("demo", help="debug a bundled buggy program through the MCP server and print the transcript")
    args = parser.parse_args(argv)
    command = args.command or "serve"
    sys.exit({"serve": serve, "doctor": doctor, "demo": demo}[command]())
