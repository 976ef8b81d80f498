"""Benchmark: ``debug_stack(all_threads=true)`` on a JVM whose threads are stuck on locks, with the lock
information (what each thread holds and waits for, the owners, the deadlocks) and without it, in the same run.

Program: bench/programs/java/Locks.java with N threads (``--threads``, default 200): a monitor and a
ReentrantLock deadlock, a quarter of the rest blocked entering a monitor one thread holds, a quarter parked on
a ReentrantLock one thread holds, a quarter in ``Object.wait()``, the rest parked on a latch; main stops
afresh at a breakpoint at each ``debug_continue``. Through an in-process MCP client, after one call that
reads what both modes read once (classes, methods, source files), ``--reps`` stops per mode, the modes taking
turns: the first ``debug_stack(all_threads=true)`` of a stop (nothing read yet), with
the lock information and without it (``JavaBackend.locks`` as the Backend default: none); then, the
breakpoint cleared, as many ``debug_pause`` of the running program (its report ranks the threads, reads the
stop's locals and, with them, every thread's locks and the deadlocks). Printed: the medians, their ratio, the
JDWP requests a stack call made (``JdwpClient.send`` counted), and the load average at the start and the end
(other work on the machine inflates every time).

Target (issue 20): with the lock information ≤ 2× the time without it, on 200 threads.

Run: .venv/bin/python bench/java_locks.py [--threads 200 1000] [--reps 5]
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections import Counter
from typing import Any

from mcp import Client

from _util import BENCH, line_of, locks_table, measure_locks, with_and_without
from polydbg.backends.base import Backend
from polydbg.backends.java.backend import JavaBackend
from polydbg.jdwp.client import JdwpClient
from polydbg.mcp.server import build_server

SOURCE = str(BENCH / "programs" / "java" / "Locks.java")
SENT: Counter[str] = Counter()
_send = JdwpClient.send
_locks = JavaBackend.locks


def switch(with_locks: bool) -> None:
    JavaBackend.locks = _locks if with_locks else Backend.locks  # type: ignore[method-assign]


def counted(self: JdwpClient, command_set: int, command: int, data: bytes = b"", label: str | None = None) -> Any:
    SENT[label or "?"] += 1
    return _send(self, command_set, command, data, label)


async def measure(client: Client, threads: int, reps: int) -> list[list[object]]:
    stop = await client.call_tool("debug_launch", {"program": SOURCE, "args": [str(threads)], "breakpoints": [
        {"file": SOURCE, "line": line_of("// tick", SOURCE)}], "timeout_s": 300})
    assert (stop.structured_content or {}).get("reason") == "breakpoint", stop
    await client.call_tool("debug_stack", {"all_threads": True})  # classes, methods, sources: read once for both
    await client.call_tool("debug_continue", {"timeout_s": 30})
    return [with_and_without(f"{threads:,} threads, {what}", times, requests)
            for what, times, requests in await measure_locks(client, reps, switch, 2, lambda: sum(SENT.values()))]


async def main(counts: list[int], reps: int) -> None:
    JdwpClient.send = counted  # type: ignore[method-assign]
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
