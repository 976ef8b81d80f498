"""Benchmark: the debugging flow on a Ruby program — a raw DAP client to rdbg vs polydbg through MCP.

Program: tests/programs/conformance/conformance.rb (breakpoint in ``add``). Same run, round-robin, after a
discarded warm-up round:

  a. raw: polydbg's ``DapClient`` used directly on rdbg's socket (the thinnest client there is): spawn
     ``ruby -r <debug gem>/lib/debug/open program`` with ``RUBY_DEBUG_SOCK_PATH`` (what ``rdbg --open`` runs),
     read stderr until rdbg says it waits for a debugger, connect, ``initialize``, ``launch``,
     ``setBreakpoints``, ``configurationDone``, wait for the breakpoint's ``stopped``, ``stackTrace``,
     ``scopes``, ``variables``, ``evaluate``, ``continue``, wait for the exit;
  b. polydbg through an in-process MCP client: ``debug_launch`` (with the breakpoint) → ``debug_variables`` →
     ``debug_evaluate`` → ``debug_continue`` (to the exit) → ``debug_terminate``.

Then per-call latency while stopped: ``debug_evaluate`` and ``debug_variables`` through MCP vs the raw
``evaluate`` / ``variables`` requests, ``--iters`` interleaved iterations.

Targets (issue 23): launch → first stop ≤ 1.2× raw; inspection calls ≤ 5 ms median.

Run: .venv/bin/python bench/ruby_flow.py [--runs N] [--iters M]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import tempfile
import time
from typing import Any

from mcp import Client

from _util import ROOT, line_of, median, ms, table
from polydbg import procs
from polydbg.backends.rdbg import gems
from polydbg.dap.client import DapClient
from polydbg.mcp.server import build_server
from polydbg.transport.streams import FramedStream

PROGRAM = str(ROOT / "tests" / "programs" / "conformance" / "conformance.rb")
LINE = line_of("# in add", PROGRAM)
WAITING = b"wait for debugger connection"


class RawRun:
    """The flow with a bare DAP client on rdbg's UNIX socket; times to the first stop and to the end.
    ``guarded``: ruby started under polydbg's guard (``procs.spawn(guarded=True)``), as polydbg starts it, to tell
    the guard's share of polydbg's time from the rest."""

    def __init__(self, guarded: bool = False) -> None:
        self.guarded = guarded

    async def start(self) -> tuple[DapClient, asyncio.subprocess.Process, dict[str, Any]]:
        gem = gems.chosen(os.getcwd())
        assert gem is not None and gem.path is not None, "no debug gem: apt-get install ruby"
        self.directory = tempfile.mkdtemp(prefix="bench-rdbg-")
        socket = os.path.join(self.directory, "rdbg.sock")
        argv = ["ruby", "-r", os.path.join(gem.path, "lib", "debug", "open"), PROGRAM]
        env = {**os.environ, "RUBY_DEBUG_SOCK_PATH": socket}
        process = await (procs.spawn(argv, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL,
                                     guarded=True) if self.guarded else asyncio.create_subprocess_exec(
            *argv, env=env, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE))
        assert process.stderr is not None
        while WAITING not in (line := await process.stderr.readline()):
            assert line, "ruby ended before rdbg listened"
        self.drain = asyncio.ensure_future(process.stderr.read())
        reader, writer = await asyncio.open_unix_connection(socket, limit=2**24)
        client = DapClient(FramedStream(reader, writer, "rdbg"), "rdbg")
        stops: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        initialized = asyncio.Event()
        client.on_event("stopped", stops.put_nowait)
        client.on_event("initialized", lambda _: initialized.set())
        client.start()
        await client.request("initialize", {"adapterID": "rdbg", "linesStartAt1": True, "columnsStartAt1": True,
                                            "pathFormat": "path"})
        launched = client.send_request("launch", {})
        await initialized.wait()
        await client.request("setBreakpoints", {"source": {"path": PROGRAM}, "breakpoints": [{"line": LINE}]})
        await client.request("configurationDone", {})
        await launched
        return client, process, await stops.get()

    async def end(self, client: DapClient, process: asyncio.subprocess.Process) -> None:
        await client.close()
        await process.wait()
        await self.drain
        shutil.rmtree(self.directory, ignore_errors=True)

    async def flow(self) -> tuple[float, float]:
        began = time.perf_counter()
        client, process, stop = await self.start()
        first = time.perf_counter() - began
        frames = (await client.request("stackTrace", {"threadId": stop["threadId"]}))["stackFrames"]
        scopes = (await client.request("scopes", {"frameId": frames[0]["id"]}))["scopes"]
        await client.request("variables", {"variablesReference": scopes[0]["variablesReference"]})
        await client.request("evaluate", {"expression": "a + b", "frameId": frames[0]["id"], "context": "repl"})
        await client.request("continue", {"threadId": stop["threadId"]})
        await client.closed.wait()  # rdbg closes its socket when the program ends
        await self.end(client, process)
        if self.guarded:
            procs.forget_group(process.pid)
        return first, time.perf_counter() - began


async def polydbg_flow(client: Client) -> tuple[float, float, int]:
    began = time.perf_counter()
    calls = 0

    async def call(tool: str, **arguments: Any) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return dict(result.structured_content or {})

    report = await call("debug_launch", program=PROGRAM, breakpoints=[{"file": PROGRAM, "line": LINE}])
    first = time.perf_counter() - began
    assert report["reason"] == "breakpoint", report
    await call("debug_variables")
    await call("debug_evaluate", expression="a + b")
    done = await call("debug_continue")
    assert done["state"] == "exited", done
    await call("debug_terminate")
    return first, time.perf_counter() - began, calls


async def latency(client: Client, iters: int) -> list[list[object]]:
    raw = RawRun()
    dap, process, stop = await raw.start()
    frames = (await dap.request("stackTrace", {"threadId": stop["threadId"]}))["stackFrames"]
    scope = (await dap.request("scopes", {"frameId": frames[0]["id"]}))["scopes"][0]["variablesReference"]
    await client.call_tool("debug_launch", {"program": PROGRAM, "breakpoints": [{"file": PROGRAM, "line": LINE}]})
    samples: dict[str, list[float]] = {k: [] for k in ("raw evaluate", "raw variables", "debug_evaluate",
                                                       "debug_variables")}
    for _ in range(iters):
        t = time.perf_counter()
        await dap.request("evaluate", {"expression": "a + b", "frameId": frames[0]["id"], "context": "repl"})
        samples["raw evaluate"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await dap.request("variables", {"variablesReference": scope})
        samples["raw variables"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await client.call_tool("debug_evaluate", {"expression": "a + b"})
        samples["debug_evaluate"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await client.call_tool("debug_variables", {"count": 20})
        samples["debug_variables"].append(time.perf_counter() - t)
    await client.call_tool("debug_terminate", {})
    process.kill()
    await raw.end(dap, process)
    return [[name, ms(median(values)), ms(min(values))] for name, values in samples.items()]


async def main(runs: int, iters: int) -> None:
    raw, guarded = RawRun(), RawRun(guarded=True)
    raw_first: list[float] = []
    raw_total: list[float] = []
    guarded_first: list[float] = []
    ours_first: list[float] = []
    ours_total: list[float] = []
    calls = 0
    async with Client(build_server()) as client:
        await raw.flow()
        await guarded.flow()
        await polydbg_flow(client)  # warm-up
        for _ in range(runs):
            first, total = await raw.flow()
            raw_first.append(first)
            raw_total.append(total)
            guarded_first.append((await guarded.flow())[0])
            first, total, calls = await polydbg_flow(client)
            ours_first.append(first)
            ours_total.append(total)
        latency_rows = await latency(client, iters)
    table(f"ruby flow, median of {runs} runs (ms)", ["", "raw DAP", "polydbg (MCP)", "ratio"], [
        ["launch → first stop", ms(median(raw_first)), ms(median(ours_first)),
         f"{median(ours_first) / median(raw_first):.2f}×"],
        ["  (raw, ruby under polydbg's guard)", ms(median(raw_first)), ms(median(guarded_first)),
         f"{median(guarded_first) / median(raw_first):.2f}×"],
        ["whole flow", ms(median(raw_total)), ms(median(ours_total)),
         f"{median(ours_total) / median(raw_total):.2f}×"],
        ["tool calls", "", str(calls), ""]])
    table(f"per-call latency while stopped, {iters} iterations (ms)", ["call", "median", "min"], latency_rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.iters))
