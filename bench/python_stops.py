"""Benchmark: how long a Python stop takes to arrive after a ``debug_continue`` and after a ``debug_step``, in a
program that recorded calls and in one that did not.

pydevd woke the thread it resumed or stepped through another thread's event (the one of the last info in its set of
threads), so the thread waited out its 0.2 s poll whenever its own info was not last: 210 ms a stop in a launch that
recorded calls and in a program with idle threads, against ~6 ms (the debuggee shim now wakes the right thread).
Each case is a fresh launch of bench/programs/calls_target.py stopped in its loop; from there, through an in-process
MCP client, ``--stops`` continues to the breakpoint in ``work`` and as many steps over, timed one after another:

- plain: no trace, no other thread;
- launch trace: ``debug_launch(trace=["work"])``, every call recorded from the first line;
- trace at a stop: ``debug_trace(functions=["work"])`` begun at the first stop, which ends at the next hit;
- idle threads: four threads waiting on an Event beside the loop, no trace.

Printed: ms per stop of each, the median of ``--runs`` rounds, and the load average at the start and end.
Run: .venv/bin/python bench/python_stops.py [--stops 20] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from typing import Any

from mcp import Client

from _util import BENCH, line_of, median, table
from polydbg.mcp.server import build_server

PROGRAM = str(BENCH / "programs" / "calls_target.py")
BODY = {"file": PROGRAM, "line": line_of("# body", PROGRAM)}
CASES = {"plain": ((), "0", False), "launch trace": (("work",), "0", False), "trace at a stop": ((), "0", True),
         "idle threads": ((), "4", False)}


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error and result.structured_content is not None, (tool, arguments, result)
    return dict(result.structured_content)


async def per_stop(client: Client, tool: str, stops: int, **arguments: Any) -> float:
    began = time.perf_counter()
    for _ in range(stops):
        assert (await call(client, tool, **arguments))["state"] == "stopped"
    return (time.perf_counter() - began) / stops * 1000


async def case(client: Client, trace: tuple[str, ...], idle: str, at_stop: bool, stops: int) -> tuple[float, float]:
    report = await call(client, "debug_launch", program=PROGRAM, args=["1000000", idle], trace=list(trace),
                        breakpoints=[BODY])
    assert report.get("reason") == "breakpoint", report
    if at_stop:
        traced = await call(client, "debug_trace", functions=["work"])
        assert traced["state"] == "stopped", traced
    continued = await per_stop(client, "debug_continue", stops)
    stepped = await per_stop(client, "debug_step", stops, kind="over")
    await call(client, "debug_terminate")
    return continued, stepped


async def main(stops: int, runs: int) -> None:
    load = os.getloadavg()[0]
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in CASES}
    async with Client(build_server()) as client:
        for _ in range(runs):
            for name, (trace, idle, at_stop) in CASES.items():
                times[name].append(await case(client, trace, idle, at_stop, stops))
    rows = [[name, f"{median(c for c, _ in runs_):.1f}", f"{median(s for _, s in runs_):.1f}"]
            for name, runs_ in times.items()]
    table(f"ms per stop: {stops} continues and {stops} steps over, median of {runs} runs; load average {load:.1f} → "
          f"{os.getloadavg()[0]:.1f}", ["", "continue to a hit", "step over"], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--stops", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.stops, arguments.runs))
