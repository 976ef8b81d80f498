"""Benchmark: every thread's stack of a JVM with thousands of threads (``debug_stack(all_threads=true)``).

Program: bench/programs/java/Many.java with N threads parked on a latch (``--threads``, default 1,000
and 5,000), stopped on a breakpoint in main. Through an in-process MCP client, per N: the first
``debug_stack(all_threads=true, levels=2)`` of the stop (every thread's name, state and frames read),
the same call again (read from what the stop cached), and the default ``debug_stack(all_threads=true)``;
each with its time, the text's size, the whole answer's (text and structured copy) and the JDWP
requests it made (``JdwpClient.send`` counted). Other work on the machine inflates the times: the load
average is printed with them.

Targets (issue 19): every answer ≤ 2 KB of text by default (was 2.16 MB with 5,000 threads), and fast
(was 4.5–8 s).

Run: .venv/bin/python bench/java_threads.py [--threads 1000 5000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections import Counter
from typing import Any

from mcp import Client

from _util import BENCH, line_of, table
from polydbg.jdwp.client import JdwpClient
from polydbg.mcp.server import build_server

SOURCE = str(BENCH / "programs" / "java" / "Many.java")
SENT: Counter[str] = Counter()
_send = JdwpClient.send


def counted(self: JdwpClient, command_set: int, command: int, data: bytes = b"", label: str | None = None) -> Any:
    SENT[label or "?"] += 1
    return _send(self, command_set, command, data, label)


async def measure(client: Client, threads: int) -> list[list[object]]:
    stop = await client.call_tool("debug_launch", {"program": SOURCE, "args": [str(threads)], "breakpoints": [
        {"file": SOURCE, "line": line_of("// stop here", SOURCE)}], "timeout_s": 300})
    assert (stop.structured_content or {}).get("reason") == "breakpoint", stop
    rows: list[list[object]] = []
    for label, arguments in (("first, levels=2", {"levels": 2}), ("again, levels=2", {"levels": 2}),
                             ("default levels", {})):
        SENT.clear()
        began = time.perf_counter()
        answer = await client.call_tool("debug_stack", {"all_threads": True, **arguments})
        took = time.perf_counter() - began
        text = "".join(getattr(block, "text", "") for block in answer.content)
        whole = len(text.encode()) + len(json.dumps(answer.structured_content).encode())
        rows.append([f"{threads:,} threads, {label}", f"{took:.2f}", f"{len(text.encode()):,}", f"{whole:,}",
                     f"{sum(SENT.values()):,}"])
    await client.call_tool("debug_terminate", {})
    return rows


async def main(counts: list[int]) -> None:
    JdwpClient.send = counted  # type: ignore[method-assign]
    load = os.getloadavg()[0]
    rows: list[list[object]] = []
    async with Client(build_server()) as client:
        for threads in counts:
            rows += await measure(client, threads)
    table(f"debug_stack(all_threads=true), load average {load:.1f} → {os.getloadavg()[0]:.1f}",
          ["", "s", "text bytes", "answer bytes", "JDWP requests"], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, nargs="+", default=[1000, 5000])
    asyncio.run(main(parser.parse_args().threads))
