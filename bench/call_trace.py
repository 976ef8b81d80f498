"""Benchmark: what one recorded call costs, against a line trace and a ``debug_continue`` per hit, per language.

Each language's program calls a small function N times in a loop, after a line the bench stops at first (a
breakpoint; the program is launched afresh for each way). From that stop, through an in-process MCP client:

- call trace: ``debug_trace(functions=[the function], max_hits=N)``, every call recorded with its argument and value;
- line trace: ``debug_trace(points=[the function's line], expressions=[its argument], max_hits=N)``;
- continue per hit: a breakpoint in the function and ``debug_continue`` ``--continues`` times;
- the program alone: ``debug_continue`` to its end with no breakpoint (the loop under the debugger, no trace).

Printed per language: the time per call (per hit) of each way, in ms, and the load average at the start and end.
On Node, the callees of a ``depth`` too: ``main`` traced with ``depth=1`` (each ``work`` call recorded as its
callee), and ``other`` traced with ``depth=1`` (``work`` is bound as its callee; main's calls of it are not
recorded, the page decides so at each entry).
Target (issue 21): a call trace costs ≤ 1 ms per recorded call on Python, Node and Java. A language is a function
``(client, calls, continues) -> row`` in ``LANGUAGES``: the others add theirs beside Python's.

Native code (gdb, lldb-dap) also prints what callees cost: the C program's ``work`` calls ``half``, traced with
``depth=0`` (one record a call) and ``depth=1`` (two: ``half`` bound as ``work``'s callee), from fresh launches.

Run: .venv/bin/python bench/call_trace.py [--calls 20000] [--continues 100]
     [--languages python node java go php ruby gdb lldb]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client

from _util import BENCH, call, line_of, table, timed
from polydbg.mcp.server import build_server

Row = list[object]
PYTHON = str(BENCH / "programs" / "calls_target.py")
NODE = str(BENCH / "programs" / "calls_target.js")
JAVA = str(BENCH / "programs" / "java" / "CallsTarget.java")
GO = str(BENCH / "programs" / "calls_target.go")
PHP = str(BENCH / "programs" / "calls_target.php")
C = str(BENCH / "programs" / "calls_target.c")
RUBY = str(BENCH / "programs" / "calls_target.rb")


async def per_call(client: Client, launch: dict[str, Any], start: dict[str, Any], function: str,
                   body: dict[str, Any], expression: str, calls: int, continues: int) -> Row:
    """The four ways on one program: ``launch``'s arguments, ``start`` the place to stop at first, ``function`` and
    ``body`` (its line) what is traced; each way from a fresh launch; ms per call (per hit)."""
    async def fresh(*places: dict[str, Any]) -> None:
        report = await call(client, "debug_launch", **launch, breakpoints=list(places), timeout_s=120)
        assert report.get("reason") == "breakpoint", report

    costs: Row = []
    await fresh(start)
    took, traced = await timed(client, "debug_trace", functions=[function], max_hits=calls, timeout_s=600)
    assert traced["total_hits"] == calls, traced
    costs.append(f"{took / calls * 1000:.3f}")
    await call(client, "debug_terminate")
    await fresh(start)
    took, traced = await timed(client, "debug_trace", points=[body], expressions=[expression], max_hits=calls,
                               timeout_s=600)
    assert traced["total_hits"] == calls, traced
    costs.append(f"{took / calls * 1000:.3f}")
    await call(client, "debug_terminate")
    await fresh(start, body)
    await call(client, "debug_continue")  # to the first hit
    began = time.perf_counter()
    for _ in range(continues):
        assert (await call(client, "debug_continue"))["state"] == "stopped"
    costs.append(f"{(time.perf_counter() - began) / continues * 1000:.3f}")
    await call(client, "debug_terminate")
    await fresh(start)
    took, ended = await timed(client, "debug_continue", timeout_s=600)
    assert ended["state"] == "exited", ended
    costs.append(f"{took / calls * 1000:.4f}")
    await call(client, "debug_terminate")
    return costs


async def python(client: Client, calls: int, continues: int) -> Row:
    return ["python (debugpy)", *await per_call(
        client, {"program": PYTHON, "args": [str(calls)]}, {"file": PYTHON, "line": line_of("# start", PYTHON)},
        "work", {"file": PYTHON, "line": line_of("# body", PYTHON)}, "i", calls, continues)]


async def node(client: Client, calls: int, continues: int) -> Row:
    return ["node (CDP)", *await per_call(
        client, {"program": NODE, "args": [str(calls)]}, {"file": NODE, "line": line_of("// start", NODE)},
        "work", {"file": NODE, "line": line_of("// body", NODE)}, "i", calls, continues)]


async def node_callees(client: Client, calls: int) -> Row:
    """ms per call of ``work`` recorded as main's callee, and called outside any recorded call (bound, unrecorded)."""
    costs: Row = []
    for function, recorded in (("main", calls + 1), ("other", 2)):
        report = await call(client, "debug_launch", program=NODE, args=[str(calls)], timeout_s=120,
                            breakpoints=[{"file": NODE, "line": line_of("// run", NODE)}])
        assert report.get("reason") == "breakpoint", report
        took, traced = await timed(client, "debug_trace", functions=[function], depth=1, max_hits=calls + 1,
                                   timeout_s=600)
        assert traced["calls"]["calls"] == recorded, traced
        costs.append(f"{took / calls * 1000:.4f}")
        await call(client, "debug_terminate")
    return ["node (CDP)", *costs]


async def java(client: Client, calls: int, continues: int) -> Row:
    classes = tempfile.mkdtemp(prefix="polydbg-bench-calls-")
    compiled = await asyncio.create_subprocess_exec("javac", "-g", "-d", classes, JAVA)
    assert await compiled.wait() == 0, "javac failed"
    return ["java (JDWP)", *await per_call(
        client, {"program": "CallsTarget", "args": [str(calls)], "runtime_args": ["-cp", classes], "cwd": classes},
        {"file": JAVA, "line": line_of("// start", JAVA)}, "CallsTarget.work",
        {"file": JAVA, "line": line_of("// body", JAVA)}, "i", calls, continues)]


async def go(client: Client, calls: int, continues: int) -> Row:
    return ["go (delve)", *await per_call(
        client, {"program": GO, "args": [str(calls)]}, {"file": GO, "line": line_of("// start", GO)},
        "main.work", {"file": GO, "line": line_of("// body", GO)}, "i", calls, continues)]


async def ruby(client: Client, calls: int, continues: int) -> Row:
    return ["ruby (rdbg)", *await per_call(
        client, {"program": RUBY, "args": [str(calls)]}, {"file": RUBY, "line": line_of("# start", RUBY)},
        "work", {"file": RUBY, "line": line_of("# body", RUBY)}, "i", calls, continues)]


async def php(client: Client, calls: int, continues: int) -> Row:
    return ["php (Xdebug)", *await per_call(
        client, {"program": PHP, "args": [str(calls)]}, {"file": PHP, "line": line_of("// start", PHP)},
        "work", {"file": PHP, "line": line_of("// body", PHP)}, "$i", calls, continues)]


def c_program() -> str:
    built = os.path.join(tempfile.mkdtemp(prefix="polydbg-bench-calls-"), "calls_target")
    subprocess.run(["gcc", "-g", "-O0", "-o", built, C], check=True)
    return built


def native(adapter: str) -> Callable[[Client, int, int], Awaitable[Row]]:
    async def row(client: Client, calls: int, continues: int) -> Row:
        program = c_program()
        return [f"c ({adapter})", *await per_call(
            client, {"program": program, "args": [str(calls)], "adapter": adapter},
            {"file": C, "line": line_of("/* start", C)}, "work", {"file": C, "line": line_of("/* body", C)}, "i",
            calls, continues)]
    return row


async def callees(client: Client, adapter: str, calls: int) -> Row:
    """ms per call of ``work`` traced alone and with its callee (depth 1), and per record with it."""
    program = c_program()
    costs: Row = [f"c ({adapter})"]
    for depth in (0, 1):
        report = await call(client, "debug_launch", program=program, args=[str(calls)], adapter=adapter,
                            breakpoints=[{"file": C, "line": line_of("/* start", C)}], timeout_s=120)
        assert report.get("reason") == "breakpoint", report
        records = calls * (depth + 1)
        took, traced = await timed(client, "debug_trace", functions=["work"], depth=depth, max_hits=records,
                                   timeout_s=600)
        assert traced["total_hits"] == records, traced
        costs.append(f"{took / calls * 1000:.3f}")
        if depth:
            costs.append(f"{took / records * 1000:.3f}")
        await call(client, "debug_terminate")
    return costs


LANGUAGES: dict[str, Callable[[Client, int, int], Awaitable[Row]]] = {"python": python, "node": node, "java": java,
                                                                     "go": go, "php": php, "ruby": ruby,
                                                                     "gdb": native("gdb"), "lldb": native("lldb-dap")}
NATIVE = {"gdb": "gdb", "lldb": "lldb-dap"}


async def main(calls: int, continues: int, languages: list[str]) -> None:
    load = os.getloadavg()[0]
    rows = []
    async with Client(build_server()) as client:
        for language in languages:
            rows.append(await LANGUAGES[language](client, calls, continues))
        depths = [await callees(client, NATIVE[language], calls) for language in languages if language in NATIVE]
        node_depth = [await node_callees(client, calls)] if "node" in languages else []
    table(f"ms per call: {calls:,} calls traced, {continues} continues; load average {load:.1f} → "
          f"{os.getloadavg()[0]:.1f}", ["", "call trace", "line trace", "continue per hit", "program alone"], rows)
    if depths:
        table(f"native callees, ms: {calls:,} calls of work; load average {os.getloadavg()[0]:.1f}",
              ["", "depth 0, per call", "depth 1, per call of work", "depth 1, per record"], depths)
    if node_depth:
        table("ms per call of a callee (depth=1)", ["", "recorded as a callee", "bound, called outside"], node_depth)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=20_000)
    parser.add_argument("--continues", type=int, default=100)
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES), choices=list(LANGUAGES))
    arguments = parser.parse_args()
    asyncio.run(main(arguments.calls, arguments.continues, arguments.languages))
