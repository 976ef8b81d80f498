"""Benchmark: ``debug_stack(all_threads=true)`` on a C program whose threads are stuck on pthread mutexes, with the
lock information (each blocked thread's mutex and owner, what the owners hold, the deadlock) and without it
(``Backend.locks`` as the Backend default: none), in the same run, on gdb and lldb-dap.

Program: bench/programs/native/locks.c with N threads (``--threads``, default 200): a deadlocked pair, the rest
blocked on a mutex main holds; main stops afresh at a breakpoint at each ``debug_continue``. ``--reps`` stops per
mode, the modes taking turns; printed: the medians and their ratio, and the load average.

Target (issue 20): with the lock information ≤ 2× the time without it, on 200 threads.

Run: .venv/bin/python bench/native_locks.py [--threads 200] [--reps 5] [--adapters gdb lldb-dap]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time

from mcp import Client

from _util import BENCH, line_of, median, table
from polydbg.backends.base import Backend
from polydbg.backends.gdb.backend import GdbMiBackend
from polydbg.backends.lldb.backend import LldbDapBackend
from polydbg.mcp.server import build_server

SOURCE = str(BENCH / "programs" / "native" / "locks.c")
BACKENDS: dict[str, type[GdbMiBackend] | type[LldbDapBackend]] = {"gdb": GdbMiBackend, "lldb-dap": LldbDapBackend}
REAL = {name: cls.locks for name, cls in BACKENDS.items()}


async def measure(client: Client, program: str, adapter: str, threads: int, reps: int) -> list[object]:
    stop = await client.call_tool("debug_launch", {"program": program, "args": [str(threads)], "adapter": adapter,
                                                   "breakpoints": [{"file": SOURCE, "line": line_of("/* tick */",
                                                                                                    SOURCE)}],
                                                   "timeout_s": 120})
    assert (stop.structured_content or {}).get("reason") == "breakpoint", stop
    cls = BACKENDS[adapter]
    took: dict[bool, list[float]] = {True: [], False: []}
    deadlocks = 0
    for _ in range(reps):
        for with_locks in (True, False):
            cls.locks = REAL[adapter] if with_locks else Backend.locks  # type: ignore[method-assign]
            again = await client.call_tool("debug_continue", {"timeout_s": 30})
            assert (again.structured_content or {}).get("reason") == "breakpoint", again
            began = time.perf_counter()
            answer = await client.call_tool("debug_stack", {"all_threads": True})
            took[with_locks].append(time.perf_counter() - began)
            assert not answer.is_error, answer
            if with_locks:
                deadlocks = len((answer.structured_content or {}).get("deadlocks") or [])
    cls.locks = REAL[adapter]  # type: ignore[method-assign]
    await client.call_tool("debug_terminate", {})
    with_ms, without_ms = median(took[True]) * 1e3, median(took[False]) * 1e3
    return [adapter, threads, f"{without_ms:.0f} ms", f"{with_ms:.0f} ms", f"{with_ms / without_ms:.2f}×", deadlocks]


async def run(options: argparse.Namespace, program: str) -> list[list[object]]:
    async with Client(build_server()) as client:
        return [await measure(client, program, adapter, options.threads, options.reps) for adapter in options.adapters]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--adapters", nargs="+", default=list(BACKENDS))
    options = parser.parse_args()
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        program = os.path.join(tmp, "locks")
        subprocess.run(["gcc", "-g", "-O0", "-pthread", "-o", program, SOURCE], check=True)
        rows = asyncio.run(run(options, program))
    table(f"debug_stack(all_threads=true), median of {options.reps} (load {load:.1f} → {os.getloadavg()[0]:.1f})",
          ["adapter", "threads", "without locks", "with locks", "ratio", "deadlocks"], rows)


if __name__ == "__main__":
    main()
