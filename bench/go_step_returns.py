"""Benchmark: what a Go step out costs when it reports what the function returned (delve/returns.py).

A step out (debug_step kind "out") through an in-process MCP client, from a line of a function called in a loop
(bench/programs/go_returns.go, built by delve), with the return value read (its RETs armed, the stop at the RET,
a stepOut from it) and without it (``StepReturns.arm`` switched off: delve's plain stepOut), interleaved:

- a leaf with two results (weigh): the RET is reached once;
- fib(12) from its top frame: its 232 inner calls each return through a RET whose condition delve judges (and
  through delve's own return breakpoint, whose condition it judges too);
- a step over weigh's return line (debug_step kind "over"), and over a line that does not return (where the RETs
  are not armed: the cost of looking at frame 0's line).

Each round: debug_continue to the breakpoint (not timed), then the step (timed). Aim: ≤ 2× a plain step out.

Run: .venv/bin/python bench/go_step_returns.py [--reps N]
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from mcp import Client

from _util import BENCH, call, line_of, table, timed, with_and_without
from polydbg.backends.delve import returns
from polydbg.mcp.server import build_server

PROGRAM = str(BENCH / "programs" / "go_returns.go")
ARM = returns.StepReturns.arm


def switch(on: bool) -> None:
    async def off(self: returns.StepReturns, thread: int, kind: Any) -> None:
        await self.disarm()
    returns.StepReturns.arm = ARM if on else off  # type: ignore[method-assign]


async def measure(client: Client, marker: str, condition: str | None, reps: int, kind: str = "out",
                  returns_value: bool = True) -> dict[bool, list[float]]:
    breakpoint: dict[str, Any] = {"file": PROGRAM, "line": line_of(marker, PROGRAM)}
    if condition:
        breakpoint["condition"] = condition
    await call(client, "debug_launch", program=PROGRAM, breakpoints=[breakpoint])
    times: dict[bool, list[float]] = {True: [], False: []}
    for rep in range(reps * 2 + 2):
        on = rep % 2 == 0
        switch(on)
        took, answer = await timed(client, "debug_step", kind=kind)
        assert answer["reason"] == "step", answer
        assert ("returned" in answer) == (on and returns_value), answer
        if rep >= 2:  # the first of each: a warm-up (the disassembly of the function)
            times[on].append(took)
        await call(client, "debug_continue")
    switch(True)
    await call(client, "debug_terminate")
    return times


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=20)
    reps = parser.parse_args().reps
    async with Client(build_server()) as client:
        leaf = await measure(client, "// leaf", None, reps)
        recursion = await measure(client, "if n < 2", "n == 12", reps)
        over_return = await measure(client, "return total, nil", None, reps, "over")
        over_line = await measure(client, "// leaf", None, reps, "over", returns_value=False)
    table(f"Go step out, with the return value vs without (median of {reps}, ms)",
          ["step out of", "with", "without", "ratio"],
          [with_and_without("weigh (a leaf, two results)", leaf, None)[:4],
           with_and_without("fib(12) (232 inner calls)", recursion, None)[:4],
           with_and_without("over weigh's return line", over_return, None)[:4],
           with_and_without("over a line that does not return", over_line, None)[:4]])


if __name__ == "__main__":
    asyncio.run(main())
