"""Benchmark: what a JavaScript test run by name costs under polydbg, and what pausing on caught exceptions adds.

A test runner catches whatever a test throws, so ``debug_launch(test=…)`` pauses on caught exceptions (the node
backend's ``failures`` filter) and judges each pause: a stop where it fails the test, else a resume. Node's and
the dependencies' own caught exceptions never pause (blackboxed); the user's code pauses at each exception it
throws, caught or not, up to ``failures.BUDGET`` of them. This runs a jest project (made in a temporary
directory, with tests/programs/node/runners' jest) whose tests are:

  plain     one passing expect;
  catches   a test that throws and catches N exceptions in the user's code (the worst case);
  fails     a failing expect: the time to the stop at it.

Each runs, round-robin after a discarded warm-up round, as plain jest (``node jest.js --runInBand -t …``,
no inspector), under polydbg without the filter (``break_on_exception="none"``), and as it ships. The table
shows medians (s, wall time of the whole run: jest's start, its transform, the debugger's set-up).

Run: .venv/bin/python bench/node_test_failures.py [--runs N] [--throws N]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from mcp import Client

from _util import ROOT, median, table
from polydbg.mcp.server import build_server

RUNNERS = ROOT / "tests" / "programs" / "node" / "runners"
TESTS = """
function risky(i) {{ if (i >= 0) throw new Error("no " + i); return i; }}
test("plain", () => {{ expect(1 + 1).toBe(2); }});
test("catches", () => {{
  let caught = 0;
  for (let i = 0; i < {throws}; i++) {{ try {{ risky(i); }} catch (e) {{ caught++; }} }}
  expect(caught).toBe({throws});
}});
test("fails", () => {{ const got = 1 + 1; expect(got).toBe(3); }});
"""
CASES = ("plain", "catches", "fails")


def project(throws: int) -> str:
    home = tempfile.mkdtemp(prefix="polydbg-bench-jest-")
    os.symlink(RUNNERS / "node_modules", Path(home) / "node_modules")
    (Path(home) / "package.json").write_text('{"name": "bench", "private": true, "scripts": {"test": "jest"}}')
    (Path(home) / "cases.test.js").write_text(TESTS.format(throws=throws))
    return home


async def plain(home: str, case: str) -> float:
    started = time.monotonic()
    process = await asyncio.create_subprocess_exec(
        "node", str(RUNNERS / "node_modules" / "jest" / "bin" / "jest.js"), "--runInBand", "-t", f"^{case}$",
        "--runTestsByPath", "cases.test.js", cwd=home, stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL)
    await process.wait()
    return time.monotonic() - started


async def debugged(client: Client, home: str, case: str, mode: str) -> float:
    started = time.monotonic()
    result = await client.call_tool("debug_launch", {"test": f"cases.test.js::{case}", "cwd": home,
                                                     "break_on_exception": mode, "timeout_s": 120})
    took = time.monotonic() - started
    report = result.structured_content or {}
    expected = "stopped" if case == "fails" and mode == "uncaught" else "exited"
    if report.get("state") != expected:
        raise RuntimeError(f"{case} ({mode}): {report}")
    await client.call_tool("debug_terminate", {})
    return took


async def main(runs: int, throws: int) -> None:
    if not (RUNNERS / "node_modules" / "jest").is_dir():
        raise SystemExit(f"{RUNNERS} has no node_modules: run npm ci there first")
    home = project(throws)
    kinds = ("jest", "polydbg, no filter", "polydbg (failures)")
    times: dict[tuple[str, str], list[float]] = {(k, c): [] for k in kinds for c in CASES}
    async with Client(build_server()) as client:
        for round_ in range(runs + 1):
            for case in CASES:
                measured = [await plain(home, case), await debugged(client, home, case, "none"),
                            await debugged(client, home, case, "uncaught")]
                if round_:  # the first round warms the caches
                    for kind, took in zip(kinds, measured, strict=True):
                        times[(kind, case)].append(took)
    rows = [[kind, *(f"{median(times[(kind, case)]):.2f}" for case in CASES)] for kind in kinds]
    table(f"a jest test by name, median of {runs} runs (s of the whole run; 'catches' throws {throws}), load "
          f"average {os.getloadavg()[0]:.1f}", ["", *CASES], rows)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--throws", type=int, default=1000)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.throws))
