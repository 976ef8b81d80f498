"""``polydbg demo``: start ``polydbg serve`` as a subprocess, drive it with the SDK's client, print the talk."""

from __future__ import annotations

import os
import sys
import time
from importlib import resources
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

PROGRAM = "buggy_average.py"


def _text(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def run_demo(out: Any = sys.stdout) -> int:
    program = str(resources.files("polydbg.demo").joinpath(PROGRAM))
    with open(program, encoding="utf-8") as handle:
        bug_line = next(i for i, line in enumerate(handle, 1) if "the bug" in line)
    params = StdioServerParameters(command=sys.executable, args=["-m", "polydbg", "serve"],
                                   env={**os.environ, "PYTHONUNBUFFERED": "1"})
    steps: list[tuple[str, dict[str, Any]]] = [
        ("debug_launch", {"program": program, "breakpoints": [{"file": program, "line": bug_line}]}),
        ("debug_evaluate", {"expression": "counts[name]"}),
        ("debug_evaluate", {"expression": "total / counts[name]"}),
        ("debug_step", {"kind": "over"}),
        ("debug_variables", {"ref": None}),
        ("debug_clear", {"all": True}),
        ("debug_continue", {}),
        ("debug_terminate", {}),
    ]
    failures = 0
    async with Client(params) as client:
        tools = await client.list_tools()
        print(f"# polydbg demo — {len(tools.tools)} tools; debugging {PROGRAM}\n", file=out)
        for name, arguments in steps:
            if name == "debug_variables":
                arguments = {"scope": "locals", "filter": ["averages", "name", "total"]}
            started = time.perf_counter()
            result = await client.call_tool(name, arguments)
            elapsed = (time.perf_counter() - started) * 1000
            print(f"> {name}({', '.join(f'{k}={v!r}' for k, v in arguments.items())})  [{elapsed:.0f} ms]",
                  file=out)
            print(_text(result) + "\n", file=out)
            if result.is_error:
                failures += 1
    print("The average divides by counts[name] + 1: the fix is total / counts[name]." if not failures
          else f"{failures} call(s) failed", file=out)
    return 1 if failures else 0
