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
import time
from typing import Any

from mcp import Client

from _util import BENCH, line_of, locks_table, with_and_without
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
    took: dict[bool, list[float]] = {True: [], False: []}
    sent: dict[bool, list[int]] = {True: [], False: []}
    deadlocks: dict[bool, int] = {}
    for _ in range(reps):
        for with_locks in (True, False):
            again = await client.call_tool("debug_continue", {"timeout_s": 30})
            assert (again.structured_content or {}).get("reason") == "breakpoint", again
            lock_information(with_locks)
            SENT[0] = 0
            began = time.perf_counter()
            answer = await client.call_tool("debug_stack", {"all_threads": True})
            took[with_locks].append(time.perf_counter() - began)
            sent[with_locks].append(SENT[0])
            assert not answer.is_error, answer
            deadlocks[with_locks] = len((answer.structured_content or {}).get("deadlocks") or [])
    await client.call_tool("debug_clear", {"all": True})
    paused: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(reps):
        for with_locks in (True, False):
            lock_information(with_locks)
            running = await client.call_tool("debug_continue", {"timeout_s": 0.2})
            assert (running.structured_content or {}).get("state") == "running", running
            began = time.perf_counter()
            report = await client.call_tool("debug_pause", {})
            paused[with_locks].append(time.perf_counter() - began)
            assert len((report.structured_content or {}).get("deadlocks") or []) == int(with_locks), report
    lock_information(True)
    await client.call_tool("debug_terminate", {})
    assert deadlocks == {True: 1, False: 0}, deadlocks
    return [with_and_without(f"{goroutines:,} goroutines, {what}", times, requests)
            for what, times, requests in (("debug_stack(all_threads=true)", took, sent), ("debug_pause", paused, None))]


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
