"""Benchmark: how long ``debug_launch(test=…)`` takes to reach a failing pytest assertion, against pytest run without
a debugger plus what polydbg's launch costs on its own.

The issue's bound: reaching the failing assertion of a pytest test takes at most 1.3× (pytest's own run of the
test + polydbg's launch of a program that does nothing). Three timings, round-robin after a discarded warm-up
round, on tests/programs/pytests:

  pytest        ``python -m pytest <id> -q`` without a debugger, the whole run (fails, exit 1);
  launch        ``debug_launch`` of an empty script to its exit through the same MCP server (debugpy's start);
  test by name  ``debug_launch(test=<id>)`` to its stop at the failing assertion (the answer holds the locals).

Run: .venv/bin/python bench/python_test_by_name.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

from mcp import Client

from _util import ROOT, median, table
from polydbg.mcp.server import build_server

PROJECT = ROOT / "tests" / "programs" / "pytests"
FAILING = "tests/test_prices.py::TestBulk::test_bulk_discount[10]"


async def plain_pytest() -> float:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(sys.executable, "-m", "pytest", FAILING, "-q", cwd=PROJECT,
                                                   stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    if await process.wait() != 1:
        raise RuntimeError("pytest should fail this test (exit 1)")
    return time.monotonic() - started


async def launch_only(client: Client, empty: str) -> float:
    started = time.monotonic()
    result = await client.call_tool("debug_launch", {"program": empty, "timeout_s": 60})
    took = time.monotonic() - started
    if (result.structured_content or {}).get("state") != "exited":
        raise RuntimeError(f"the empty script should exit: {result.structured_content}")
    await client.call_tool("debug_terminate", {})
    return took


async def test_by_name(client: Client) -> float:
    started = time.monotonic()
    result = await client.call_tool("debug_launch", {"test": FAILING, "cwd": str(PROJECT), "timeout_s": 60})
    took = time.monotonic() - started
    report = result.structured_content or {}
    if report.get("state") != "stopped" or report.get("reason") != "exception":
        raise RuntimeError(f"the test should stop at its assertion: {report}")
    await client.call_tool("debug_terminate", {})
    return took


async def main(runs: int) -> None:
    empty = os.path.join(tempfile.mkdtemp(prefix="polydbg-bench-"), "empty.py")
    Path(empty).write_text("pass\n")
    kinds = ("pytest", "launch", "test by name")
    times: dict[str, list[float]] = {k: [] for k in kinds}
    async with Client(build_server()) as client:
        for round_ in range(runs + 1):
            measured = [await plain_pytest(), await launch_only(client, empty), await test_by_name(client)]
            if round_:  # the first round warms the caches
                for kind, took in zip(kinds, measured, strict=True):
                    times[kind].append(took)
    pytest_s, launch_s, test_s = (median(times[k]) for k in kinds)
    table(f"a failing pytest test by name, median of {runs} runs (s), load average {os.getloadavg()[0]:.1f}",
          ["", "s"], [*([k, f"{median(times[k]):.3f}"] for k in kinds),
                      ["test by name / (pytest + launch)", f"{test_s / (pytest_s + launch_s):.2f}×"]])


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    asyncio.run(main(parser.parse_args().runs))
