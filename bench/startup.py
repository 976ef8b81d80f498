"""Benchmark: start-up and exit of ``polydbg serve`` against the best peer's MCP debugger, in the same run.

An agent's client starts the server at every session and ends it at every exit, and waits for both:
(a) spawn → ``initialize`` answered, (b) stdin closed (after a ``tools/list``) → the process gone, each the
median of ``--runs`` round-robin runs of polydbg and the peer (``@debugmcp/mcp-debugger``, the Node MCP
debugger; install it with ``npm install --prefix bench/.peer @debugmcp/mcp-debugger``, or pass ``--peer
CMD``); (c) where polydbg's start-up goes: the interpreter alone, the SDK's import, polydbg's own modules
and ``build_server()`` timed inside one interpreter (with the collector paused as ``polydbg serve`` does,
and without, to show what pausing it saves).

Run: .venv/bin/python bench/startup.py [--runs N] [--peer CMD]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time

from _util import BENCH, POLYDBG, median, table

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
THEN = [{"jsonrpc": "2.0", "method": "notifications/initialized"}, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}]
PEER = BENCH / ".peer" / "node_modules" / ".bin" / "mcp-debugger"

# polydbg's start-up split into parts, each timed inside one interpreter (perf_counter around the imports).
PHASES = """
import gc, json, sys, time
paused = sys.argv[1] == "paused"
t0 = time.perf_counter()
if paused:
    gc.disable()
import mcp.server.mcpserver, mcp.server.stdio
t1 = time.perf_counter()
from polydbg.mcp.server import build_server
from polydbg.mcp.stdio import serve_stdio
import polydbg.cli
t2 = time.perf_counter()
build_server()
t3 = time.perf_counter()
if paused:
    gc.freeze()
    gc.enable()
print(json.dumps([t1 - t0, t2 - t1, t3 - t2]))
"""


# Bytecode cached as an installed package has it (pip compiles at install): a PYTHONDONTWRITEBYTECODE in the
# environment would otherwise make every start compile polydbg's own modules again (~130 ms).
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
       "PYTHONPYCACHEPREFIX": os.path.join(tempfile.gettempdir(), "polydbg-bench-pycache")}


def one_run(command: list[str], end_by: str = "eof") -> tuple[float, float]:
    """(spawn → initialize answered, stdin closed (or SIGTERM) → exited), in seconds; inf: still there 5 s later."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                               env=ENV)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    process.stdin.flush()
    answer = process.stdout.readline()
    started = time.perf_counter() - start
    assert b'"id":1' in answer.replace(b" ", b""), answer
    process.stdin.write("".join(json.dumps(m) + "\n" for m in THEN).encode())
    process.stdin.flush()
    process.stdout.readline()
    closing = time.perf_counter()
    if end_by == "eof":
        process.stdin.close()
    else:
        process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return started, float("inf")
    return started, time.perf_counter() - closing


def phases(paused: bool) -> list[float]:
    done = subprocess.run([sys.executable, "-c", PHASES, "paused" if paused else "on"], capture_output=True,
                          text=True, check=True, env=ENV)
    return list(json.loads(done.stdout))


def interpreter() -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=ENV)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--peer", default=str(PEER) + " stdio" if PEER.exists() else None,
                        help="the peer's stdio server command (default: bench/.peer's mcp-debugger stdio)")
    options = parser.parse_args()
    commands = {"polydbg serve": [POLYDBG, "serve"]}
    if options.peer:
        commands["peer (" + os.path.basename(shlex.split(options.peer)[0]) + ")"] = shlex.split(options.peer)
    else:
        print("no peer: npm install --prefix bench/.peer @debugmcp/mcp-debugger (or --peer CMD)", file=sys.stderr)
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    for command in commands.values():  # warm the page cache and the bytecode caches
        one_run(command)
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    terms: dict[str, list[float]] = {name: [] for name in commands}
    split: dict[bool, list[list[float]]] = {True: [], False: []}
    python: list[float] = []
    for _ in range(options.runs):
        for name, command in commands.items():
            runs[name].append(one_run(command))
            terms[name].append(one_run(command, "sigterm")[1])
        for paused in (True, False):
            split[paused].append(phases(paused))
        python.append(interpreter())

    def fmt(seconds: float) -> str:
        return "inf" if seconds == float("inf") else f"{seconds * 1000:.0f}"

    baseline = median(s for s, _ in runs["polydbg serve"])
    peer_start = next((median(s for s, _ in r) for n, r in runs.items() if n != "polydbg serve"), None)
    rows = []
    for name, results in runs.items():
        start = median(s for s, _ in results)
        ratio = f"{start / peer_start:.2f}x" if peer_start else ""
        rows.append([name, fmt(start), ratio, fmt(median(e for _, e in results)), fmt(max(e for _, e in results)),
                     fmt(median(terms[name]))])
    table(f"Start-up and exit, median of {options.runs} round-robin runs (ms; inf: not gone 5 s later)",
          ["server", "spawn → initialize answered", "vs peer", "stdin EOF → exited", "worst", "SIGTERM → exited"],
          rows)
    parts = ["the SDK's import (mcp.server.mcpserver, stdio)", "polydbg's own modules", "build_server() (22 tools)"]
    table("Where polydbg's start-up goes (ms, median, inside one interpreter)",
          ["part", "collector paused (as serve does)", "collector on"],
          [["python -c pass (whole process)", fmt(median(python)), ""]]
          + [[part, fmt(median(r[i] for r in split[True])), fmt(median(r[i] for r in split[False]))]
             for i, part in enumerate(parts)]
          + [["sum of the parts", fmt(median(sum(r) for r in split[True])), fmt(median(sum(r) for r in split[False]))]])
    print(f"\npolydbg serve start-up {fmt(baseline)} ms; load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
