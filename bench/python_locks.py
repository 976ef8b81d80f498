"""Benchmark: ``debug_stack(all_threads=true)`` on a Python program whose threads are stuck on threading locks, with
the lock information (what each thread holds and waits for, the owners, the deadlock: one evaluation of debugpy's
threads helper in the stopped frame) and without it, in the same run.

Program: bench/programs/python_locks.py with N threads (``--threads``, default 200): a Lock deadlock, a quarter of
the rest blocked on an RLock one thread holds, a quarter on a Lock, a quarter in Condition.wait(), the rest in
Event.wait(); main stops afresh at a breakpoint at each ``debug_continue``. Through an in-process MCP client,
``--reps`` stops per mode, the modes taking turns: the first ``debug_stack(all_threads=true)`` of a stop, with the
lock information and without it (``DebugpyProcess.locks`` as the Backend default: none); then, the breakpoint
cleared, as many ``debug_pause`` of the running program (its report reads every thread's locks and the deadlock).
Printed: the medians, their ratio, and the load average at the start and the end.

Target (issue 20, for Java and C; measured here for Python too): with the lock information ≤ 2× the time without.

Run: .venv/bin/python bench/python_locks.py [--threads 200 1000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os

from mcp import Client

from _util import BENCH, line_of, locks_table, measure_locks, with_and_without
from polydbg.backends.base import Backend
from polydbg.backends.debugpy.process import DebugpyProcess
from polydbg.mcp.server import build_server

SOURCE = str(BENCH / "programs" / "python_locks.py")
_locks = DebugpyProcess.locks


def lock_information(on: bool) -> None:
    DebugpyProcess.locks = _locks if on else Backend.locks  # type: ignore[method-assign]


async def measure(client: Client, threads: int, reps: int) -> list[list[object]]:
    stop = await client.call_tool("debug_launch", {"program": SOURCE, "args": [str(threads)], "breakpoints": [
        {"file": SOURCE, "line": line_of("# tick", SOURCE)}], "timeout_s": 120})
    assert (stop.structured_content or {}).get("reason") == "breakpoint", stop
    return [with_and_without(f"{threads:,} threads, {what}", times, requests)
            for what, times, requests in await measure_locks(client, reps, lock_information, 1)]


async def main(counts: list[int], reps: int) -> None:
    load = os.getloadavg()[0]
    rows: list[list[object]] = []
    async with Client(build_server()) as client:
        for threads in counts:
            rows += await measure(client, threads, reps)
    locks_table(reps, load, rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[200])
    parser.add_argument("--reps", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.threads, arguments.reps))
