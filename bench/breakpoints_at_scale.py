"""Benchmark: 2,000 breakpoints in one file, on every backend — polydbg vs the raw debugger in the same run.

Each backend gets a generated program whose one long file runs N + 1 statements in order (``--breakpoints``,
default N = 2,000), ten to a function (``--per-function``; the entry point calls them one after the other):
Python (debugpy), C built with ``gcc -g -O0`` (lldb-dap and gdb), Go built with ``-gcflags='all=-N -l'``
(delve), JavaScript (node) and Java compiled with ``javac -g`` (the JVM). With all of them in one function
(``--per-function 0``) V8 itself takes 23-51 s here to bind 2,000 breakpoints, raw or through polydbg
(500: 0.7 s, 1,000: 4 s): a file of short functions is the common case, and keeps the run within ~2 minutes.
Two things are timed, ``--reps`` times each, round-robin (polydbg, then the raw debugger, per backend and rep):

  a. launch: a launch with a breakpoint on each of the first N statements, to the first stop;
  b. add one: one more breakpoint, on statement N + 1, while stopped there.

polydbg is driven through its MCP tools on an in-process client (``debug_launch`` with the N breakpoints,
``debug_break``, ``debug_terminate``). The raw debugger is driven by the smallest client that does the same,
sending the file's breakpoints the way its protocol takes them:

  - debugpy, lldb-dap, delve: DAP (``RawDap``); one ``setBreakpoints`` with the N lines before
    ``configurationDone``, then one with N + 1 (DAP replaces a file's breakpoints wholesale). debugpy
    runs with polydbg's two shims (``ADAPTER_SHIM``: TCP_NODELAY; ``DEBUGGEE_SHIM``: pydevd's
    ``_get_code_lines`` memoized), as polydbg runs it: plain debugpy compiles the whole file once per
    breakpoint, which ``--plain-debugpy`` measures once (it costs minutes);
  - gdb: GDB/MI (``native_flow.RawGdb``); N ``-break-insert -f`` written at once, then read (gdb/MI
    takes one location per command), ``-exec-run``; then one ``-break-insert``;
  - node: CDP (``CdpChannel``); N ``Debugger.setBreakpointByUrl`` sent at once under
    ``--inspect-brk``; then one;
  - java: JDWP (``JdwpClient``); when the class is prepared, its methods' line tables read at once,
    then N ``EventRequest.Set`` sent at once; then one.

A backend whose debugger is missing is skipped with the reason. Other work on the machine inflates every
number: the load average is printed at the start and the end.

Target (issue 19, E): adding one breakpoint to a file with 2,000 costs about what the debugger costs (was
~10 s, 30 s+ under load on debugpy).

Run: .venv/bin/python bench/breakpoints_at_scale.py [--reps N] [--breakpoints N] [--per-function N]
     [--only debugpy gdb …] [--plain-debugpy]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcp import Client

from _util import RawDap, become_subreaper, median, report_leftovers, table
from flow import INIT_ARGS, DebugpyRawDap
from java_flow import next_event, start_jvm
from native_flow import RawDapDebugger, RawGdb
from native_flow import Target as NativeTarget
from polydbg.backends.debugpy.process import DEBUGGEE_SHIM
from polydbg.backends.locate import find_lldb_dap
from polydbg.cdp.client import CdpChannel
from polydbg.jdwp.codec import CommandSet, EventKind, Location, Modifier, Suspend
from polydbg.mcp.server import build_server

TIMEOUT = 120.0
BACKENDS = ("debugpy", "lldb-dap", "gdb", "delve", "node", "java")
KEYS = ("polydbg launch", "raw launch", "polydbg add", "raw add")


@dataclass
class Case:
    backend: str  # polydbg's adapter name
    source: str  # the long file the breakpoints are in
    lines: list[int]  # its N + 1 statements' lines: a breakpoint on each of the first N, then one more
    launch: dict[str, Any]  # debug_launch's arguments besides the breakpoints
    program: str  # what the raw debugger runs: a script, an executable, a class directory
    raw_label: str
    times: dict[str, list[float]] = field(default_factory=lambda: {k: [] for k in KEYS})

    @property
    def points(self) -> list[int]:
        return self.lines[:-1]

    @property
    def extra(self) -> int:
        return self.lines[-1]


# ------------------------------------------------------------------------------------------------
# The programs: one long file per language, N + 1 statements run in order.
# ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Language:
    head: str
    function: str  # a function's first line(s); {i} is its number
    statement: str  # one statement (a breakpoint's line)
    end: str  # a function's last line
    main: str  # the entry point's first line(s)
    call: str  # a call of function {i} in the entry point
    tail: str


PYTHON = Language("x = 0\n", "def f{i}():\n    global x\n", "    x += 1\n", "", "def main():\n    global x\n",
                  "    f{i}()\n", "main()\nprint(x)\n")
C = Language("#include <stdio.h>\nstatic volatile int x;\n", "static void f{i}(void) {\n", "    x += 1;\n", "}\n",
             "int main(void) {\n", "    f{i}();\n", '    printf("%d\\n", x);\n    return 0;\n}\n')
GO = Language('package main\n\nimport "fmt"\n\nvar x int\n', "func f{i}() {\n", "\tx++\n", "}\n", "func main() {\n",
              "\tf{i}()\n", "\tfmt.Println(x)\n}\n")
JAVASCRIPT = Language("let x = 0;\n", "function f{i}() {\n", "  x += 1;\n", "}\n", "function main() {\n", "  f{i}();\n",
                      "}\nmain();\nconsole.log(x);\n")
JAVA = Language("public class Big {\n    static int x;\n", "    static void f{i}() {\n", "        x += 1;\n", "    }\n",
                "    public static void main(String[] args) {\n", "        f{i}();\n",
                "        System.out.println(x);\n    }\n}\n")


def generate(path: Path, language: Language, count: int, per_function: int) -> list[int]:
    """Write the program: ``count`` + 1 statements, ``per_function`` to a function called in order from the
    entry point (0: all in the entry point); their lines."""
    total = count + 1
    parts: list[tuple[str, bool]] = [(language.head, False)]
    if per_function:
        groups = [min(per_function, total - start) for start in range(0, total, per_function)]
        for number, size in enumerate(groups):
            parts += [(language.function.replace("{i}", str(number)), False), *[(language.statement, True)] * size,
                      (language.end, False)]
        parts += [(language.main, False), *[(language.call.replace("{i}", str(n)), False) for n in range(len(groups))]]
    else:
        parts += [(language.main, False), *[(language.statement, True)] * total]
    parts.append((language.tail, False))
    lines: list[int] = []
    number = 1
    for text, statement in parts:
        if statement:
            lines.append(number)
        number += text.count("\n")
    path.write_text("".join(text for text, _ in parts))
    return lines


def build(command: list[str], cwd: Path) -> str | None:
    """Why a build failed, or None."""
    try:
        done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{command[0]}: {exc}"
    return None if done.returncode == 0 else f"{' '.join(command[:2])} failed: {done.stderr.strip()[:200]}"


def cases(workdir: Path, count: int, per_function: int, only: set[str], skipped: dict[str, str]) -> list[Case]:
    made: list[Case] = []

    def add(backend: str, problem: Callable[[], str | None], make: Callable[[], Case]) -> None:
        if backend not in only:
            return
        reason = problem()
        if reason is not None:
            skipped[backend] = reason
            return
        made.append(make())

    def missing(*tools: str) -> str | None:
        absent = [t for t in tools if shutil.which(t) is None]
        return f"{', '.join(absent)} not on PATH" if absent else None

    python = workdir / "big.py"
    python_lines = generate(python, PYTHON, count, per_function)
    add("debugpy", lambda: None, lambda: Case("debugpy", str(python), python_lines, {"program": str(python)},
                                              str(python), "DAP: python -m debugpy.adapter + polydbg's shims"))

    c_source, c_program = workdir / "big.c", workdir / "big"
    c_lines = generate(c_source, C, count, per_function)
    c_built: list[str | None] = []

    def c_problem(debugger: str | None) -> str | None:
        if not c_built:
            c_built.append(missing("gcc") or build(["gcc", "-g", "-O0", "-o", str(c_program), str(c_source)], workdir))
        return c_built[0] or debugger

    lldb = find_lldb_dap()
    add("lldb-dap", lambda: c_problem(None if lldb else "no lldb-dap"), lambda: Case(
        "lldb-dap", str(c_source), c_lines, {"program": str(c_program), "adapter": "lldb-dap"}, str(c_program),
        f"DAP: {os.path.basename(lldb or '')} over stdio"))
    add("gdb", lambda: c_problem(missing("gdb")), lambda: Case(
        "gdb", str(c_source), c_lines, {"program": str(c_program), "adapter": "gdb"}, str(c_program),
        "MI: gdb --interpreter=mi3"))

    go_dir = workdir / "go"
    go_dir.mkdir()
    (go_dir / "go.mod").write_text("module big\n\ngo 1.19\n")
    go_lines = generate(go_dir / "main.go", GO, count, per_function)
    go_program = go_dir / "big"
    add("delve", lambda: missing("go", "dlv") or build(["go", "build", "-gcflags=all=-N -l", "-o", str(go_program),
                                                        "."], go_dir),
        lambda: Case("delve", str(go_dir / "main.go"), go_lines, {"program": str(go_program), "adapter": "delve"},
                     str(go_program), "DAP: dlv dap over TCP"))

    script = workdir / "big.js"
    js_lines = generate(script, JAVASCRIPT, count, per_function)
    add("node", lambda: missing("node"), lambda: Case("node", str(script), js_lines, {"program": str(script)},
                                                      str(script), "CDP: node --inspect-brk"))

    java_dir = workdir / "java"
    java_dir.mkdir()
    java_source = java_dir / "Big.java"
    java_lines = generate(java_source, JAVA, count, per_function)
    add("java", lambda: missing("java", "javac") or build(["javac", "-g", "-d", str(java_dir), str(java_source)],
                                                          java_dir),
        lambda: Case("java", str(java_source), java_lines,
                     {"program": "Big", "runtime_args": ["-cp", str(java_dir)], "cwd": str(java_dir)},
                     str(java_dir), "JDWP: java -agentlib:jdwp"))
    return made


# ------------------------------------------------------------------------------------------------
# polydbg through its MCP tools.
# ------------------------------------------------------------------------------------------------

async def tool(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        text = " ".join(getattr(block, "text", "") for block in result.content)
        raise RuntimeError(f"{name} failed: {text[:300]}")
    return dict(result.structured_content or {})


async def polydbg_run(client: Client, case: Case) -> tuple[float, float]:
    began = time.perf_counter()
    report = await tool(client, "debug_launch", **case.launch, timeout_s=TIMEOUT,
                        breakpoints=[{"file": case.source, "line": line} for line in case.points])
    launched = time.perf_counter() - began
    try:
        assert report.get("reason") == "breakpoint" and report["location"]["line"] == case.lines[0], report
        began = time.perf_counter()
        added = await tool(client, "debug_break", file=case.source, line=case.extra)
        took = time.perf_counter() - began
        assert added["breakpoints"][0]["verified"], added
    finally:
        await tool(client, "debug_terminate")
    return launched, took


# ------------------------------------------------------------------------------------------------
# The raw debuggers.
# ------------------------------------------------------------------------------------------------

def dap_lines(case: Case, lines: list[int]) -> dict[str, Any]:
    return {"source": {"path": case.source}, "breakpoints": [{"line": line} for line in lines],
            "lines": list(lines)}


async def dap_run(dap: RawDap, launch: dict[str, Any], adapter_id: str, case: Case,
                  began: float) -> tuple[float, float]:
    """initialize → launch → the file's N breakpoints in one setBreakpoints → stopped; then N + 1."""
    await dap.request("initialize", {**INIT_ARGS, "adapterID": adapter_id})
    launched = dap.send("launch", launch)
    await dap.event("initialized")
    await dap.request("setBreakpoints", dap_lines(case, case.points), timeout=TIMEOUT)
    await dap.request("setExceptionBreakpoints", {"filters": []})
    await dap.request("configurationDone", {})
    await asyncio.wait_for(launched, TIMEOUT)
    await dap.event("stopped", TIMEOUT)
    to_stop = time.perf_counter() - began
    began = time.perf_counter()
    body = await dap.request("setBreakpoints", dap_lines(case, case.lines), timeout=TIMEOUT)
    took = time.perf_counter() - began
    assert len(body["breakpoints"]) == len(case.lines) and body["breakpoints"][-1]["verified"], body["breakpoints"][-1]
    return to_stop, took


async def raw_debugpy(case: Case, shims: bool = True) -> tuple[float, float]:
    began = time.perf_counter()
    dap = await DebugpyRawDap.start(nodelay=shims)
    python = [sys.executable, "-X", "frozen_modules=off", "-c", DEBUGGEE_SHIM] if shims else [sys.executable]
    launch = {"type": "python", "request": "launch", "name": "bench", "program": case.program, "python": python,
              "args": [], "cwd": os.path.dirname(case.program), "console": "internalConsole",
              "redirectOutput": True, "justMyCode": True, "stopOnEntry": False, "subProcess": False}
    try:
        return await dap_run(dap, launch, "debugpy", case, began)
    finally:
        await dap.close()


async def raw_native_dap(case: Case) -> tuple[float, float]:
    """lldb-dap over stdio, delve's DAP server over TCP: native_flow's client, launched as polydbg does."""
    target = NativeTarget(case.backend, "c" if case.backend == "lldb-dap" else "go", case.program, case.source,
                          case.lines[0], "x", os.path.dirname(case.program))
    raw = RawDapDebugger(target)
    began = time.perf_counter()
    try:
        dap = await raw.open()
        return await dap_run(dap, raw.launch_arguments(), "lldb-dap" if case.backend == "lldb-dap" else "go",
                             case, began)
    finally:
        await raw.close()


async def raw_gdb(case: Case) -> tuple[float, float]:
    target = NativeTarget("gdb", "c", case.program, case.source, case.lines[0], "x", os.path.dirname(case.program))
    gdb = RawGdb(target)
    began = time.perf_counter()
    try:
        await gdb.open()
        await gdb.command(f"-file-exec-and-symbols {case.program}")
        await gdb.command("-inferior-tty-set /dev/null")
        inserts = [f"-break-insert -f --source {case.source} --line {line}"
                   for line in case.points]
        await gdb.pipelined(inserts, {"inserts": []}, "inserts")
        await gdb.command("-exec-run")
        stop = await gdb.stopped()
        assert b"breakpoint-hit" in stop, stop
        to_stop = time.perf_counter() - began
        began = time.perf_counter()
        inserted = await gdb.command(f"-break-insert -f --source {case.source} --line {case.extra}")
        took = time.perf_counter() - began
        assert b"addr=" in inserted, inserted
        return to_stop, took
    finally:
        await gdb.close()


async def raw_node(case: Case) -> tuple[float, float]:
    began = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        "node", "--inspect-brk=127.0.0.1:0", case.program, stderr=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.DEVNULL)
    try:
        assert process.stderr is not None
        line = (await process.stderr.readline()).decode()
        client = await CdpChannel.connect(line[line.index("ws://"):].strip())
        pauses: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        client.on_event("Debugger.paused", pauses.put_nowait)
        url = Path(case.source).as_uri()
        await client.request("Runtime.enable")
        await client.request("Debugger.enable")
        await asyncio.gather(*(client.send("Debugger.setBreakpointByUrl", {"url": url, "lineNumber": line - 1})
                               for line in case.points))
        await client.request("Runtime.runIfWaitingForDebugger")
        assert (await asyncio.wait_for(pauses.get(), TIMEOUT))["reason"] == "Break on start"
        await client.request("Debugger.resume")
        await asyncio.wait_for(pauses.get(), TIMEOUT)
        to_stop = time.perf_counter() - began
        began = time.perf_counter()
        placed = await client.request("Debugger.setBreakpointByUrl", {"url": url, "lineNumber": case.extra - 1})
        took = time.perf_counter() - began
        assert placed["locations"], placed
        await client.close()
        return to_stop, took
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


async def raw_java(case: Case) -> tuple[float, float]:
    began = time.perf_counter()
    client, process, events = await start_jvm(case.program, "Big", TIMEOUT)
    try:
        def event_request(kind: int, modifiers: bytes) -> tuple[int, int, bytes]:
            return CommandSet.EVENT_REQUEST, 1, client.writer().u1(kind).u1(Suspend.ALL).i4(1).bytes() + modifiers

        await client.request(*event_request(EventKind.CLASS_PREPARE,
                                            client.writer().u1(Modifier.CLASS_MATCH).string("Big").bytes()))
        await client.request(CommandSet.VM, 9)  # resume
        prepared = await next_event(events, EventKind.CLASS_PREPARE)
        methods = await client.request(CommandSet.REFERENCE_TYPE, 5, client.writer().reference_type(
            prepared.type_id).bytes())
        ids = []
        for _ in range(methods.i4()):
            ids.append(methods.method_id())
            methods.string(), methods.string(), methods.i4()  # name, signature, modifiers
        tables = await client.request_all([(CommandSet.METHOD, 1, client.writer().reference_type(
            prepared.type_id).method_id(method).bytes()) for method in ids], "line tables", TIMEOUT)
        where: dict[int, Location] = {}  # line → its first code index
        for method, table in zip(ids, tables, strict=True):
            assert not isinstance(table, Exception), table
            table.i8(), table.i8()  # the method's first and last code index
            for _ in range(table.i4()):
                index, line = table.i8(), table.i4()
                if line not in where or index < where[line].code_index:
                    where[line] = Location(1, prepared.type_id, method, index)

        def at(line: int) -> tuple[int, int, bytes]:
            return event_request(EventKind.BREAKPOINT, client.writer().u1(Modifier.LOCATION_ONLY).location(
                where[line]).bytes())

        await client.request_all([at(line) for line in case.points], "breakpoints", TIMEOUT)
        await client.request(CommandSet.VM, 9)
        await next_event(events, EventKind.BREAKPOINT)
        to_stop = time.perf_counter() - began
        began = time.perf_counter()
        await client.request(*at(case.extra))
        took = time.perf_counter() - began
        await client.close("done")
        return to_stop, took
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


RAW: dict[str, Callable[[Case], Awaitable[tuple[float, float]]]] = {
    "debugpy": raw_debugpy, "lldb-dap": raw_native_dap, "delve": raw_native_dap, "gdb": raw_gdb, "node": raw_node,
    "java": raw_java}

# ------------------------------------------------------------------------------------------------


def seconds(values: list[float]) -> str:
    return f"{median(values):.2f}" if values else "-"


def milliseconds(values: list[float]) -> str:
    return f"{median(values) * 1000:.1f}" if values else "-"


def ratio(ours: list[float], raw: list[float]) -> str:
    return f"{median(ours) / median(raw):.2f}×" if ours and raw else "-"


async def main_async(reps: int, count: int, per_function: int, only: set[str], plain: bool) -> None:
    load = os.getloadavg()[0]
    print(f"breakpoints at scale — {count:,} breakpoints in one file, {reps} reps, python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, load average {load:.2f}")
    skipped: dict[str, str] = {}
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="polydbg-bench-bps-") as directory:
        made = cases(Path(directory), count, per_function, only, skipped)
        async with Client(build_server()) as client:
            for _ in range(reps):
                for case in made:
                    for variant in ("polydbg", "raw"):
                        run = polydbg_run(client, case) if variant == "polydbg" else RAW[case.backend](case)
                        try:
                            launched, added = await asyncio.wait_for(run, 2 * TIMEOUT)
                        except Exception as exc:
                            failures.append(f"{case.backend} {variant}: {exc!r}"[:300])
                            continue
                        case.times[f"{variant} launch"].append(launched)
                        case.times[f"{variant} add"].append(added)
            plain_times: tuple[float, float] | None = None
            debugpy = next((case for case in made if case.backend == "debugpy"), None)
            if plain and debugpy is not None:
                plain_times = await raw_debugpy(debugpy, shims=False)
    rows = []
    for case in made:
        t = case.times
        rows.append([case.backend, seconds(t["polydbg launch"]), seconds(t["raw launch"]),
                     ratio(t["polydbg launch"], t["raw launch"]), milliseconds(t["polydbg add"]),
                     milliseconds(t["raw add"]), ratio(t["polydbg add"], t["raw add"]), case.raw_label])
    if plain_times is not None:
        rows.append(["debugpy, plain (1 run)", "", f"{plain_times[0]:.2f}", "", "", f"{plain_times[1] * 1000:.1f}",
                     "", "DAP: python -m debugpy.adapter, no shims"])
    table(f"{count:,} breakpoints in one file: launch → first stop (s), one more while stopped (ms); medians of "
          f"{reps}; load average {load:.2f} → {os.getloadavg()[0]:.2f}",
          ["backend", "polydbg launch", "raw launch", "ratio", "polydbg add", "raw add", "ratio", "raw client"], rows)
    for backend, reason in skipped.items():
        print(f"  {backend}: skipped ({reason})")
    for failure in failures:
        print(f"  FAILED {failure}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3, help="runs per backend and variant (default 3)")
    parser.add_argument("--breakpoints", type=int, default=2000, help="breakpoints in the file (default 2,000)")
    parser.add_argument("--per-function", type=int, default=10,
                        help="statements per function (default 10); 0 puts them all in the entry point, where V8 "
                             "takes tens of seconds to bind 2,000 breakpoints")
    parser.add_argument("--only", nargs="+", choices=BACKENDS, default=list(BACKENDS), help="these backends only")
    parser.add_argument("--plain-debugpy", action="store_true",
                        help="also debugpy without polydbg's shims, once (it compiles the file per breakpoint)")
    args = parser.parse_args()
    become_subreaper()
    started = time.perf_counter()
    try:
        asyncio.run(main_async(args.reps, args.breakpoints, args.per_function, set(args.only), args.plain_debugpy))
    finally:
        report_leftovers()
        print(f"benchmark wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
