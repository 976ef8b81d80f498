"""Benchmark: what async stacks cost a Node program (``Debugger.setAsyncCallStackDepth``).

V8 keeps a stack's callers past an ``await``, a ``.then`` or a timer only once a depth is set, by a hook
on every promise; polydbg sets it (``targets.ASYNC_DEPTH``) so that ``debug_stack`` lists a stopped
function's awaiting callers. This measures the price, on bench/programs/node_awaits.js, which times its
work alone (Node's start and the debugger's set-up are not in it):

  awaits  100,000 iterations of ``sum += await value(i)`` (two awaits and a promise each): code that does
          nothing but await, the worst case;
  deep    20,000 such iterations, each 30 synchronous calls deep (V8 records the stack at each await);
  files   every file of a directory (npm's own, ~2,000 files, or this repository) read with
          ``fs.promises``, 16 at a time: I/O-bound, as real programs are.

Each workload runs, round-robin after a discarded warm-up round, under: plain ``node`` (no inspector);
a raw CDP client (polydbg's ``CdpChannel``) with ``Runtime`` and ``Debugger`` enabled (what a debugger
costs anyway), and with async depths 1 and 32 on top, recording V8's default 200 frames of each segment or
16 (``Runtime.setMaxCallStackSizeToCapture``, as polydbg does); and polydbg through an in-process MCP client
(``debug_launch`` without breakpoints, to the exit), with async stacks off (``ASYNC_DEPTH`` set to 0 in
this process) and as it ships. The table shows medians (ms), and the async stacks' cost over the
debugger without them.

Run: .venv/bin/python bench/node_async_stacks.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import Client

from _util import BENCH, ROOT, median, table
from polydbg.backends.node import targets
from polydbg.cdp.client import CdpChannel
from polydbg.mcp.server import build_server

PROGRAM = str(BENCH / "programs" / "node_awaits.js")
NPM = Path("/usr/lib/node_modules/npm")
WORKLOADS = {"awaits": ["awaits", "100000"], "deep": ["deep", "20000", "30"],
             "files": ["files", str(NPM if NPM.is_dir() else ROOT)]}
_ELAPSED = re.compile(r"elapsed ([0-9.]+)")


def elapsed(output: str) -> float:
    found = _ELAPSED.search(output)
    if found is None:
        raise RuntimeError(f"the program did not report its time: {output[-400:]!r}")
    return float(found.group(1))


async def plain(args: list[str]) -> float:
    process = await asyncio.create_subprocess_exec("node", PROGRAM, *args, stdout=asyncio.subprocess.PIPE)
    out, _ = await process.communicate()
    return elapsed(out.decode())


async def raw(args: list[str], depth: int | None, frames: int | None = None) -> float:
    """The program under a bare CDP client: Runtime and Debugger enabled, and the async depth and the frames
    recorded of each segment when given."""
    process = await asyncio.create_subprocess_exec(
        "node", "--inspect-brk=127.0.0.1:0", PROGRAM, *args, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE)
    assert process.stderr is not None and process.stdout is not None
    line = (await process.stderr.readline()).decode()
    client = await CdpChannel.connect(line[line.index("ws://"):].strip())
    done = asyncio.Event()
    client.on_event("NodeRuntime.waitingForDisconnect", lambda _: done.set())
    def resume(_: dict[str, Any]) -> None:  # "Break on start"
        client.send("Debugger.resume")
    client.on_event("Debugger.paused", resume)
    await client.request("Runtime.enable")
    await client.request("Debugger.enable")
    await client.request("NodeRuntime.notifyWhenWaitingForDisconnect", {"enabled": True})
    if frames is not None:
        await client.request("Runtime.setMaxCallStackSizeToCapture", {"size": frames})
    if depth is not None:
        await client.request("Debugger.setAsyncCallStackDepth", {"maxDepth": depth})
    await client.request("Runtime.runIfWaitingForDebugger")
    output = asyncio.ensure_future(process.stdout.read())
    await done.wait()
    await client.close()
    await process.wait()
    return elapsed((await output).decode())


async def through_polydbg(client: Client, args: list[str], depth: int) -> float:
    targets.ASYNC_DEPTH = depth  # read when each target is prepared
    report = await client.call_tool("debug_launch", {"program": PROGRAM, "args": args, "timeout_s": 300})
    state = (report.structured_content or {}).get("state")
    while state == "running":  # a launch may answer "running" before the program is done
        report = await client.call_tool("debug_continue", {"timeout_s": 300})
        state = (report.structured_content or {}).get("state")
    assert state == "exited", report
    output = await client.call_tool("debug_output", {})
    await client.call_tool("debug_terminate", {})
    return elapsed(str((output.structured_content or {}).get("text")))


async def main(runs: int) -> None:
    load = os.getloadavg()[0]
    shipped, recorded = targets.ASYNC_DEPTH, targets.ASYNC_FRAMES_RECORDED
    variants: dict[str, Callable[[Client, list[str]], Awaitable[float]]] = {
        "node, no debugger": lambda _c, a: plain(a),
        "raw CDP, Debugger.enable": lambda _c, a: raw(a, None),
        "raw CDP, async depth 1": lambda _c, a: raw(a, 1),
        "raw CDP, async depth 32": lambda _c, a: raw(a, 32),
        f"raw CDP, async depth 32, {recorded} frames": lambda _c, a: raw(a, 32, recorded),
        "polydbg, async stacks off": lambda c, a: through_polydbg(c, a, 0),
        f"polydbg (async depth {shipped}, {recorded} frames)": lambda c, a: through_polydbg(c, a, shipped),
    }
    times: dict[tuple[str, str], list[float]] = {}
    began = time.perf_counter()
    async with Client(build_server()) as client:
        for round_ in range(runs + 1):
            for workload, args in WORKLOADS.items():
                for name, run in variants.items():
                    took = await run(client, args)
                    if round_:  # the first round warms the page cache and Node's code cache
                        times.setdefault((workload, name), []).append(took)
    targets.ASYNC_DEPTH = shipped
    rows: list[list[Any]] = []
    for name in variants:
        row: list[Any] = [name]
        for workload in WORKLOADS:
            row.append(f"{median(times[(workload, name)]):.0f}")
        rows.append(row)
    table(f"Node with and without async stacks, median of {runs} runs (ms of the work alone), load average "
          f"{load:.1f} → {os.getloadavg()[0]:.1f}, {time.perf_counter() - began:.0f} s",
          ["", *WORKLOADS], rows)
    cost: list[list[Any]] = []
    for label, off, on in (("raw CDP: depth 32 / Debugger.enable", "raw CDP, Debugger.enable",
                            "raw CDP, async depth 32"),
                           (f"raw CDP: depth 32, {recorded} frames / Debugger.enable", "raw CDP, Debugger.enable",
                            f"raw CDP, async depth 32, {recorded} frames"),
                           ("polydbg: as shipped / async stacks off", "polydbg, async stacks off",
                            f"polydbg (async depth {shipped}, {recorded} frames)")):
        row = [label]
        for workload in WORKLOADS:
            without, with_ = median(times[(workload, off)]), median(times[(workload, on)])
            row.append(f"{with_ / without:.2f}×")
        cost.append(row)
    per_await = (median(times[("awaits", f"raw CDP, async depth 32, {recorded} frames")])
                 - median(times[("awaits", "raw CDP, Debugger.enable")])) / 200_000 * 1000
    cost.append(["per await (awaits workload), µs", f"{per_await:.1f}", "", ""])
    table("the async stacks' cost", ["", *WORKLOADS], cost)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
