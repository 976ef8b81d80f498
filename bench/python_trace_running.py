"""Benchmark: a Python call trace begun while the program runs — the stop polydbg makes and hides for it.

``debug_trace(functions=…)`` on a running Python program pauses it, starts and arms the call recorder in the stopped
thread, and resumes it, unseen by the agent (``backends/debugpy/held.py``). The program is
tests/programs/calls/serves.py: a client thread asks a server thread every 20 ms; the server waits in ``accept()``
(C code) in between, the client in ``time.sleep``, the main thread in ``join()``. Each of ``--traces`` traces
records one ``handle`` call (``max_hits=1``). Printed per interpreter: the held stop (pause, start and arm, resume:
logged by the backend) and the whole ``debug_trace`` call (the held stop, then the wait for the next request, up to
20 ms), medians and ranges in ms, and the load average before and after.

Run: .venv/bin/python bench/python_trace_running.py [--traces 20] [--python /path/to/python3.12 …]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import re
import subprocess
import sys
import time

from mcp import Client

from _util import ROOT, call, median, table
from polydbg.mcp.server import build_server

SERVES = str(ROOT / "tests" / "programs" / "calls" / "serves.py")


class _Held(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.ms: list[float] = []

    def emit(self, record: logging.LogRecord) -> None:
        found = re.search(r"held stop took ([\d.]+) ms", record.getMessage())
        if found:
            self.ms.append(float(found.group(1)))


def _version(python: str) -> str:
    return subprocess.run([python, "-c", "import sys; print(sys.version.split()[0])"], capture_output=True, text=True,
                          check=True).stdout.strip()


async def _run(python: str | None, traces: int, held: _Held) -> list[object]:
    held.ms.clear()
    whole: list[float] = []
    async with Client(build_server()) as client:
        await call(client, "debug_launch", program=SERVES, timeout_s=1, **({"python": python} if python else {}))
        for _ in range(traces):
            began = time.perf_counter()
            traced = await call(client, "debug_trace", functions=["handle"], max_hits=1, timeout_s=60)
            whole.append((time.perf_counter() - began) * 1000)
            assert traced["stopped_because"] == "max_hits" and traced["state"] == "running", traced
        await call(client, "debug_terminate")
    return [f"Python {_version(python or sys.executable)}", f"{median(held.ms):.0f}",
            f"{min(held.ms):.0f}–{max(held.ms):.0f}", f"{median(whole):.0f}", f"{min(whole):.0f}–{max(whole):.0f}"]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=int, default=20)
    parser.add_argument("--python", nargs="*", default=[], help="other interpreters (the venv's is always run)")
    args = parser.parse_args()
    held = _Held()
    logger = logging.getLogger("polydbg.backends.debugpy.held")
    logger.setLevel(logging.DEBUG)
    logger.addHandler(held)
    logger.propagate = False
    load = os.getloadavg()[0]
    rows = [await _run(python, args.traces, held) for python in [None, *args.python]]
    table(f"a call trace begun while Python runs ({args.traces} traces; load {load:.1f} → {os.getloadavg()[0]:.1f})",
          ["python", "held stop ms", "range", "debug_trace ms", "range"], rows)


if __name__ == "__main__":
    asyncio.run(main())
