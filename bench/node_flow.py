"""Benchmark: the debugging flow on a JavaScript program — a raw CDP client vs polydbg through MCP.

Program: tests/programs/conformance/conformance.js (breakpoint in ``add``). Same run, round-robin,
after a discarded warm-up round:

  a. raw: polydbg's ``CdpChannel`` used directly (the thinnest client there is): spawn
     ``node --inspect-brk=127.0.0.1:0``, read the URL, ``Runtime.enable``, ``Debugger.enable``,
     ``setBreakpointByUrl``, ``runIfWaitingForDebugger``, resume "Break on start", wait for the
     breakpoint's pause, ``getProperties`` of the local scope, ``evaluateOnCallFrame``, resume, wait
     for the exit;
  b. polydbg through an in-process MCP client: ``debug_launch`` (with the breakpoint) →
     ``debug_variables`` → ``debug_evaluate`` → ``debug_continue`` (to the exit) → ``debug_terminate``.

Then per-call latency while stopped: ``debug_evaluate`` and ``debug_variables`` through MCP vs the raw
``evaluateOnCallFrame`` / ``getProperties`` requests, ``--iters`` interleaved iterations.

Targets (issue 8): launch → first stop ≤ 1.2× raw; inspection calls ≤ 5 ms median; ≤ 5 tool calls.

Run: .venv/bin/python bench/node_flow.py [--runs N] [--iters M]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

from mcp import Client

from _util import ROOT, median, ms, table
from polydbg.cdp.client import CdpChannel
from polydbg.mcp.server import build_server

PROGRAM = str(ROOT / "tests" / "programs" / "conformance" / "conformance.js")


def _line(marker: str) -> int:
    return next(n for n, text in enumerate(Path(PROGRAM).read_text().splitlines(), 1) if marker in text)


LINE = _line("// in add")


class RawRun:
    """The flow with a bare CDP client; times to the first stop and to the end."""

    async def start(self) -> tuple[CdpChannel, asyncio.subprocess.Process, dict[str, Any]]:
        process = await asyncio.create_subprocess_exec(
            "node", "--inspect-brk=127.0.0.1:0", PROGRAM, stderr=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL)
        assert process.stderr is not None
        line = (await process.stderr.readline()).decode()
        client = await CdpChannel.connect(line[line.index("ws://"):].strip())
        pauses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        client.on_event("Debugger.paused", pauses.put_nowait)
        self.pauses = pauses
        await client.request("Runtime.enable")
        await client.request("Debugger.enable")
        await client.request("Debugger.setBreakpointByUrl", {"url": Path(PROGRAM).as_uri(), "lineNumber": LINE - 1})
        await client.request("Runtime.runIfWaitingForDebugger")
        start = await pauses.get()
        assert start["reason"] == "Break on start"
        await client.request("Debugger.resume")
        return client, process, await pauses.get()

    async def flow(self) -> tuple[float, float]:
        began = time.perf_counter()
        client, process, paused = await self.start()
        first = time.perf_counter() - began
        frame = paused["callFrames"][0]
        await client.request("Runtime.getProperties", {"objectId": frame["scopeChain"][0]["object"]["objectId"],
                                                       "ownProperties": True, "generatePreview": True})
        await client.request("Debugger.evaluateOnCallFrame", {"callFrameId": frame["callFrameId"],
                                                              "expression": "a + b"})
        await client.request("Debugger.resume")
        await client.close()
        await process.wait()
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
    cdp, process, paused = await raw.start()
    frame = paused["callFrames"][0]
    scope = frame["scopeChain"][0]["object"]["objectId"]
    await client.call_tool("debug_launch", {"program": PROGRAM, "breakpoints": [{"file": PROGRAM, "line": LINE}]})
    samples: dict[str, list[float]] = {k: [] for k in ("raw evaluate", "raw getProperties", "debug_evaluate",
                                                       "debug_variables")}
    for _ in range(iters):
        t = time.perf_counter()
        await cdp.request("Debugger.evaluateOnCallFrame", {"callFrameId": frame["callFrameId"], "expression": "a + b"})
        samples["raw evaluate"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await cdp.request("Runtime.getProperties", {"objectId": scope, "ownProperties": True, "generatePreview": True})
        samples["raw getProperties"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await client.call_tool("debug_evaluate", {"expression": "a + b"})
        samples["debug_evaluate"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await client.call_tool("debug_variables", {"count": 20})
        samples["debug_variables"].append(time.perf_counter() - t)
    await client.call_tool("debug_terminate", {})
    await cdp.close()
    process.kill()
    await process.wait()
    return [[name, ms(median(values)), ms(min(values))] for name, values in samples.items()]


async def main(runs: int, iters: int) -> None:
    raw = RawRun()
    raw_first: list[float] = []
    raw_total: list[float] = []
    ours_first: list[float] = []
    ours_total: list[float] = []
    calls = 0
    async with Client(build_server()) as client:
        await raw.flow()
        await polydbg_flow(client)  # warm-up
        for _ in range(runs):
            first, total = await raw.flow()
            raw_first.append(first)
            raw_total.append(total)
            first, total, calls = await polydbg_flow(client)
            ours_first.append(first)
            ours_total.append(total)
        rows = latency(client, iters)
        latency_rows = await rows
    table(f"node flow, median of {runs} runs (ms)", ["", "raw CDP", "polydbg (MCP)", "ratio"], [
        ["launch → first stop", ms(median(raw_first)), ms(median(ours_first)),
         f"{median(ours_first) / median(raw_first):.2f}×"],
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
