"""Benchmark: ``debug_stack(all_threads=true)`` and ``debug_pause`` on a Go program whose goroutines are stuck,
with the lock information (each goroutine's wait reason, the sync.Mutex it waits for and the one it holds,
the channel it blocks on, the deadlock) and without it, in the same run.

Program: bench/programs/go/locks with N goroutines (``--goroutines``, default 200): two transfers deadlocked
on each other's sync.Mutex, a third of the rest waiting for a mutex main holds, a third receiving from a
channel nobody sends on, the rest sleeping; main stops afresh at a breakpoint at each ``debug_continue``.
Through an in-process MCP client, ``--reps`` stops per mode, the modes taking turns: the first
``debug_stack(all_threads=true)`` of a stop, with the lock information and without it (``DelveBackend.locks``
as the Backend default: none); then, the breakpoint cleared, as many ``debug_pause`` of the running program
(its report reads every goroutine's locks for the deadlocks). Printed: the medians, their ratio, the DAP
requests a call made, and the load average at the start and the end.

Target (issue 20): with the lock information ≤ 2× the time without it, on 200 threads.

Run: .venv/bin/python bench/go_locks.py [--goroutines 200 1000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
from typing import Any

from mcp import Client

from _util import BENCH, line_of, locks_table, measure_locks, with_and_without
from polydbg.backends.base import Backend
from polydbg.backends.delve.backend import DelveBackend
from polydbg.dap.client import DapClient
from polydbg.mcp.server import build_server

PACKAGE = str(BENCH / "programs" / "go" / "locks")
SOURCE = os.path.join(PACKAGE, "main.go")
SENT = [0]
_send = DapClient.send_request
_locks = DelveBackend.locks


def counted(self: DapClient, command: str, arguments: dict[str, Any] | None = None) -> Any:
    SENT[0] += 1
    return _send(self, command, arguments)


def lock_information(on: bool) -> None:
    DelveBackend.locks = _locks if on else Backend.locks  # type: ignore[method-assign]


async def measure(client: Client, goroutines: int, reps: int) -> list[list[object]]:
    stop = await client.call_tool("debug_launch", {"program": PACKAGE, "args": [str(goroutines)], "breakpoints": [
        {"file": SOURCE, "line": line_of("// tick", SOURCE)}], "timeout_s": 300})
    assert (stop.structured_content or {}).get("reason") == "breakpoint", stop
    await client.call_tool("debug_continue", {"timeout_s": 30})  # each measured stack is a fresh stop's
    return [with_and_without(f"{goroutines:,} goroutines, {what}", times, requests)
            for what, times, requests in await measure_locks(client, reps, lock_information, 1, lambda: SENT[0])]


async def main(counts: list[int], reps: int) -> None:
    DapClient.send_request = counted  # type: ignore[method-assign]
    load = os.getloadavg()[0]
    rows: list[list[object]] = []
    async with Client(build_server()) as client:
        for goroutines in counts:
            rows += await measure(client, goroutines, reps)
    locks_table(reps, load, rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--goroutines", type=int, nargs="+", default=[200])
    parser.add_argument("--reps", type=int, default=5)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.goroutines, arguments.reps))
