"""Benchmark: the debugging flow on a PHP program — a raw minimal DBGp listener vs polydbg through MCP.

Program: tests/programs/conformance/conformance.php (breakpoint in ``add``). Same run, round-robin, after a
discarded warm-up round:

  a. raw: a listening socket and polydbg's ``DbgpClient`` used directly (the thinnest client there is): spawn
     ``php -dxdebug.mode=debug -dxdebug.start_with_request=yes -dxdebug.client_port=N``, accept, read ``init``,
     ``breakpoint_set``, ``run`` to the break, ``context_get``, ``eval``, ``run`` to the end, wait for the exit;
  b. polydbg through an in-process MCP client: ``debug_launch`` (with the breakpoint) → ``debug_variables`` →
     ``debug_evaluate`` → ``debug_continue`` (to the exit) → ``debug_terminate``.

The raw flow runs a second time with PHP under polydbg's process guard (``polydbg.guard``: what the program
starts must not outlive polydbg), which every launch pays (a Python start, ~15–35 ms here) and a bare
listener does not: the ratio against it is what polydbg's own work costs.

Then per-call latency while stopped: ``debug_evaluate`` and ``debug_variables`` through MCP vs the raw ``eval``
and ``context_get``, ``--iters`` interleaved iterations.

Targets (issue 23): launch → first stop ≤ 1.2× raw; inspection calls ≤ 5 ms median.

Run: .venv/bin/python bench/php_flow.py [--runs N] [--iters M]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path

from mcp import Client

from _util import ROOT, call, line_of, median, ms, table
from polydbg import procs
from polydbg.dbgp.client import DbgpClient, Element
from polydbg.dbgp.stream import DbgpStream
from polydbg.mcp.server import build_server

PROGRAM = str(ROOT / "tests" / "programs" / "conformance" / "conformance.php")
LINE = line_of("// in add", PROGRAM)


class RawRun:
    """The flow with a bare DBGp listener; times to the first stop and to the end (PHP under the guard or not)."""

    def __init__(self, guarded: bool = False) -> None:
        self.guarded = guarded

    async def start(self) -> tuple[DbgpClient, asyncio.subprocess.Process, asyncio.AbstractServer]:
        connected: asyncio.Future[DbgpClient] = asyncio.get_running_loop().create_future()
        init: asyncio.Future[Element] = asyncio.get_running_loop().create_future()

        def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            client = DbgpClient(DbgpStream(reader, writer), "raw")
            client.on_event("init", lambda body: None if init.done() else init.set_result(body["element"]))
            client.start()
            connected.set_result(client)

        server = await asyncio.start_server(accept, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        process = await procs.spawn(
            ["php", "-dxdebug.mode=debug", "-dxdebug.start_with_request=yes", "-dxdebug.client_host=127.0.0.1",
             f"-dxdebug.client_port={port}", PROGRAM], stdout=asyncio.subprocess.DEVNULL,
            stdin=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL, guarded=self.guarded)
        client = await connected
        await init
        await client.request("breakpoint_set", [("t", "line"), ("f", Path(PROGRAM).as_uri()), ("n", str(LINE))])
        stop = await client.wait(client.send("run"), "run", 30)
        assert stop.get("status") == "break", stop.attrib
        return client, process, server

    async def flow(self) -> tuple[float, float]:
        began = time.perf_counter()
        client, process, server = await self.start()
        first = time.perf_counter() - began
        await client.request("context_get", [("d", "0")])
        await client.request("eval", (), "$a + $b")
        end = await client.wait(client.send("run"), "run", 30)
        assert end.get("status") == "stopping", end.attrib
        await client.close()
        server.close()
        await process.wait()
        return first, time.perf_counter() - began


async def polydbg_flow(client: Client) -> tuple[float, float]:
    began = time.perf_counter()
    report = await call(client, "debug_launch", program=PROGRAM, breakpoints=[{"file": PROGRAM, "line": LINE}])
    first = time.perf_counter() - began
    assert report["reason"] == "breakpoint", report
    await call(client, "debug_variables")
    await call(client, "debug_evaluate", expression="$a + $b")
    done = await call(client, "debug_continue")
    assert done["state"] == "exited", done
    await call(client, "debug_terminate")
    return first, time.perf_counter() - began


async def latency(client: Client, iters: int) -> list[list[object]]:
    raw, process, server = await RawRun().start()
    await call(client, "debug_launch", program=PROGRAM, breakpoints=[{"file": PROGRAM, "line": LINE}])
    samples: dict[str, list[float]] = {k: [] for k in ("raw eval", "raw context_get", "debug_evaluate",
                                                       "debug_variables")}
    for _ in range(iters):
        for name, work in (("raw eval", raw.request("eval", (), "$a + $b")),
                           ("raw context_get", raw.request("context_get", [("d", "0")])),
                           ("debug_evaluate", call(client, "debug_evaluate", expression="$a + $b")),
                           ("debug_variables", call(client, "debug_variables", count=20))):
            began = time.perf_counter()
            await work
            samples[name].append(time.perf_counter() - began)
    await call(client, "debug_terminate")
    await raw.close()
    server.close()
    process.kill()
    await process.wait()
    return [[name, ms(median(values)), ms(min(values))] for name, values in samples.items()]


async def main(runs: int, iters: int) -> None:
    raw, guarded = RawRun(), RawRun(guarded=True)
    raw_first: list[float] = []
    raw_total: list[float] = []
    guarded_first: list[float] = []
    guarded_total: list[float] = []
    ours_first: list[float] = []
    ours_total: list[float] = []
    async with Client(build_server()) as client:
        await raw.flow()
        await guarded.flow()
        await polydbg_flow(client)  # warm-up
        for _ in range(runs):
            first, total = await raw.flow()
            raw_first.append(first)
            raw_total.append(total)
            first, total = await guarded.flow()
            guarded_first.append(first)
            guarded_total.append(total)
            first, total = await polydbg_flow(client)
            ours_first.append(first)
            ours_total.append(total)
        latency_rows = await latency(client, iters)
    def ratios(ours: list[float], bare: list[float], under_guard: list[float]) -> list[str]:
        return [ms(median(bare)), ms(median(under_guard)), ms(median(ours)), f"{median(ours) / median(bare):.2f}×",
                f"{median(ours) / median(under_guard):.2f}×"]

    table(f"PHP flow (Xdebug), median of {runs} runs (ms)",
          ["", "raw DBGp", "raw, PHP under the guard", "polydbg (MCP)", "ratio", "ratio (guarded)"], [
              ["launch → first stop", *ratios(ours_first, raw_first, guarded_first)],
              ["whole flow", *ratios(ours_total, raw_total, guarded_total)],
              ["tool calls", "", "", "5", "", ""]])
    table(f"per-call latency while stopped, {iters} iterations (ms)", ["call", "median", "min"], latency_rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.iters))
