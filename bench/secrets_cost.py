"""Benchmark: what redacting secrets (``session/secrets.py``) costs the inspection calls.

Two in-process polydbg servers, one with ``allow_secrets`` off (the default: every answer is redacted) and
one with it on, each stopped at bench/programs/flow_target.py's breakpoint; the inspection calls an agent
makes at a stop (locals, globals, evaluations, the stack, the output) run alternately on the two, each first
in every other round, so load on the machine falls on both alike. Prints each call's median per variant and
the difference; then the redactor alone on an answer's model (µs per answer).

Run: .venv/bin/python bench/secrets_cost.py [--iters N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

from mcp import Client

from _util import PROGRAM, line_of
from polydbg.mcp.server import build_server
from polydbg.policy import Policy
from polydbg.session.model import VariablesResult
from polydbg.session.secrets import Redactor

BP_LINE = line_of("mean = total / len(values)")
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("debug_variables", {}),
    ("debug_variables", {"scope": "globals"}),
    ("debug_evaluate", {"expression": "values"}),
    ("debug_evaluate", {"expression": "{'password': 'x' * 12, 'user': 'bob', 'n': list(range(20))}"}),
    ("debug_stack", {}),
    ("debug_output", {}),
]


@contextlib.asynccontextmanager
async def stopped(allow: bool) -> AsyncIterator[Client]:
    policy = Policy.load("stdio", ".", flags={"allow_secrets": allow}, environ={}, user_config="/nonexistent")
    async with Client(build_server(policy=policy)) as client:
        result = await client.call_tool("debug_launch", {"program": PROGRAM,
                                                         "breakpoints": [{"file": PROGRAM, "line": BP_LINE}]})
        assert not result.is_error and (result.structured_content or {}).get("state") == "stopped", result
        yield client


async def main_async(iters: int) -> None:
    times: dict[tuple[str, bool], list[float]] = {}
    async with stopped(False) as redacted, stopped(True) as allowed:
        for round_ in range(iters):
            pair = ((False, redacted), (True, allowed))
            for allow, client in pair if round_ % 2 else pair[::-1]:  # neither always goes first
                for tool, args in CALLS:
                    start = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    times.setdefault((f"{tool} {args}", allow), []).append(time.perf_counter() - start)
                    assert not result.is_error, result
        listing = await redacted.call_tool("debug_variables", {})
    print(f"{'call':70} {'redacted ms':>12} {'allowed ms':>11} {'diff':>7}")
    total = {False: 0.0, True: 0.0}
    for tool, args in CALLS:
        key = f"{tool} {args}"
        off, on = statistics.median(times[key, False]) * 1e3, statistics.median(times[key, True]) * 1e3
        total[False] += off
        total[True] += on
        print(f"{key[:70]:70} {off:12.3f} {on:11.3f} {(off - on) / on:+7.1%}")
    print(f"{'all the calls':70} {total[False]:12.3f} {total[True]:11.3f} "
          f"{(total[False] - total[True]) / total[True]:+7.1%}")
    model = VariablesResult.model_validate(listing.structured_content)
    runs = 2000
    start = time.perf_counter()
    for _ in range(runs):
        Redactor().model(model)
    print(f"the redactor alone on a listing of {len(model.variables)} locals: "
          f"{(time.perf_counter() - start) / runs * 1e6:.1f} µs")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=40, help="rounds of the calls per variant (default 40)")
    asyncio.run(main_async(parser.parse_args().iters))


if __name__ == "__main__":
    main()
