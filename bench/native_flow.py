"""Benchmark: the canonical debugging flow on native programs — raw lldb-dap / gdb MI / delve vs polydbg.

A C program (bench/programs/native_target.c, gcc -g -O0) under lldb-dap and under gdb, and a Go
program (bench/programs/go, go build -gcflags='all=-N -l', launched in delve's exec mode) under delve.
Flow: launch with a breakpoint → stop → stack → variables (scopes + variables) → evaluate → step
(next) → re-inspect → continue → exit, measured in the same run, round-robin (after a discarded warm-up
round; delve gets 3 × the runs, its launches stall ~200 ms now and then), three ways per backend:

  a. raw: this file's own minimal clients talking to the debugger directly — DAP over lldb-dap's
     stdio, DAP over TCP to ``dlv dap --listen 127.0.0.1:0`` (delve picks the port and prints it),
     and an MI driver for ``gdb --interpreter=mi3`` that writes token-prefixed commands and reads
     lines until ``<token>^…`` or ``*stopped`` (no MI parser). The DAP clients send the launch
     arguments polydbg's backends send (same adapter settings), so the comparison is of the clients;
  b. polydbg's session layer in-process (``SessionManager.create`` / ``start``, ``Session.stack`` /
     ``variables`` / ``evaluate`` / ``step`` / ``resume``, ``manager.remove``);
  c. polydbg through a real stdio MCP client (``python -m polydbg serve``): ``debug_launch`` (with
     adapter and breakpoints) → ``debug_stack`` → ``debug_variables`` → ``debug_evaluate`` →
     ``debug_step`` → ``debug_variables`` → ``debug_continue`` → ``debug_terminate``.

Then per-call latency while stopped at the breakpoint, ``--iters`` interleaved iterations: raw
requests (DAP stackTrace / scopes / variables / evaluate, and threads; MI -stack-list-frames /
-stack-list-variables / -data-evaluate-expression, and what polydbg's gdb backend also sends) vs the
session-layer call vs the MCP tool through an in-process client, with the session's per-stop caches
cleared before every polydbg call (the stop scope's ``forget_reads``) so each one reaches the debugger (and
re-reads threads / the frame, as the first call after a stop does), and with the frame cache kept (only
the variables cache cleared, as later calls at the same stop).
The requests each polydbg call issues are counted (wrapping ``DapClient.send_request`` / ``MiClient.send``).

Targets: whole flow ≤ 1.2× raw per backend; MI inspection ≤ 5 ms median through polydbg; lldb-dap and
delve per-call overhead ≤ 2 ms median.

Run: .venv/bin/python bench/native_flow.py [--runs N] [--delve-runs N] [--iters M]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import itertools
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from _util import (
    BENCH,
    RawDap,
    Sink,
    become_subreaper,
    cleanup_leftovers,
    cmdline,
    descendants,
    line_of,
    median,
    ms,
    table,
)
from polydbg.backends.base import LaunchSpec
from polydbg.backends.lldb.launch import COMMAND_PREFIX
from polydbg.backends.locate import find_lldb_dap
from polydbg.dap.client import DapClient
from polydbg.mcp.server import build_server
from polydbg.mi.client import MiClient
from polydbg.session.manager import SessionManager
from polydbg.session.session import Session

C_SOURCE = str(BENCH / "programs" / "native_target.c")
GO_DIR = BENCH / "programs" / "go"
GO_SOURCE = str(GO_DIR / "main.go")
MARKER = "marker: breakpoint"
EXPECTED = "2453"  # total * 2 + origin.x = 1225 * 2 + 3
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}
TIMEOUT = 30.0
WARMUP = 3
PHASES = ("P1 launch → stopped, stack + locals read", "P2 inspect, evaluate, step, re-inspect", "P3 continue → exit",
          "P4 teardown")
RAW, SESSION, MCP = "raw", "polydbg session layer", "polydbg MCP stdio"
VARIANTS = (RAW, SESSION, MCP)
INIT_ARGS = {
    "clientID": "bench", "clientName": "bench", "pathFormat": "path", "linesStartAt1": True,
    "columnsStartAt1": True, "supportsVariableType": True, "supportsRunInTerminalRequest": False,
    "supportsProgressReporting": False, "supportsMemoryReferences": True,
}



def new_sink() -> Sink:
    return collections.defaultdict(list)


@dataclass
class Target:
    backend: str  # the polydbg adapter name: lldb-dap, gdb, delve
    language: str
    program: str  # the built executable
    source: str
    line: int
    expression: str
    workdir: str
    raw_label: str = ""
    runs: int = 5
    lingering: dict[str, list[str]] = field(default_factory=lambda: collections.defaultdict(list))


# ------------------------------------------------------------------------------------------------
# Raw clients.
# ------------------------------------------------------------------------------------------------

async def end_process(process: asyncio.subprocess.Process, helpers: list[int], grace_s: float = 3.0) -> None:
    """Wait for a process to exit (else kill its group), then kill the helpers it started that survive it."""
    try:
        await asyncio.wait_for(process.wait(), grace_s)
    except asyncio.TimeoutError:
        with contextlib.suppress(OSError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()
    for pid in helpers:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


class RawDapDebugger:
    """A raw DAP session: lldb-dap over stdio, or delve's DAP server over TCP."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.process: asyncio.subprocess.Process | None = None
        self.dap: RawDap | None = None
        self.pumps: list[asyncio.Task[None]] = []
        self.thread = 0
        self.context = "clipboard" if target.backend == "delve" else "watch"  # what polydbg's backend uses

    async def _pump(self, reader: asyncio.StreamReader) -> None:
        while await reader.read(65536):
            pass

    async def open(self) -> RawDap:
        if self.target.backend == "lldb-dap":
            adapter = find_lldb_dap()
            assert adapter is not None
            self.process = await asyncio.create_subprocess_exec(
                adapter, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL, env=ENV, start_new_session=True, limit=1 << 22)
            assert self.process.stdout is not None and self.process.stdin is not None
            self.dap = RawDap(self.process.stdout, self.process.stdin)
            return self.dap
        self.process = await asyncio.create_subprocess_exec(
            "dlv", "dap", "--listen", "127.0.0.1:0", stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=ENV, cwd=self.target.workdir,
            start_new_session=True)
        assert self.process.stdout is not None and self.process.stderr is not None
        while True:
            line = (await asyncio.wait_for(self.process.stdout.readline(), TIMEOUT)).decode()
            if not line:
                raise RuntimeError("dlv dap exited before listening")
            found = re.search(r"listening at: *(\S+):(\d+)", line)
            if found:
                break
        self.pumps = [asyncio.get_running_loop().create_task(self._pump(stream))
                      for stream in (self.process.stdout, self.process.stderr)]
        reader, writer = await asyncio.open_connection(found.group(1), int(found.group(2)), limit=1 << 22)
        writer.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.dap = RawDap(reader, writer)
        return self.dap

    def launch_arguments(self) -> dict[str, Any]:
        t = self.target
        if t.backend == "lldb-dap":
            return {"name": "bench", "type": "lldb-dap", "request": "launch", "program": t.program, "args": [],
                    "cwd": t.workdir, "stopOnEntry": False, "commandEscapePrefix": COMMAND_PREFIX,
                    "enableAutoVariableSummaries": True, "enableSyntheticChildDebugging": False,
                    "displayExtendedBacktrace": False,
                    "initCommands": ["?settings set symbols.enable-lldb-index-cache true"]}
        return {"request": "launch", "mode": "exec", "program": t.program, "args": [], "cwd": t.workdir,
                "stopOnEntry": False, "hideSystemGoroutines": True}

    async def start(self, sink: Sink | None = None) -> None:
        """Adapter up, program launched with the breakpoint, stopped at it."""
        dap = await self.open()
        adapter_id = "lldb-dap" if self.target.backend == "lldb-dap" else "go"
        await dap.request("initialize", {**INIT_ARGS, "adapterID": adapter_id}, sink)
        launched = dap.send("launch", self.launch_arguments())
        await dap.event("initialized")
        await dap.request("setBreakpoints", {"source": {"path": self.target.source},
                                             "breakpoints": [{"line": self.target.line}]}, sink)
        await dap.request("setExceptionBreakpoints", {"filters": []}, sink)
        await dap.request("configurationDone", {}, sink)
        await asyncio.wait_for(launched, TIMEOUT)
        self.thread = int((await dap.event("stopped"))["threadId"])

    async def locals(self, sink: Sink | None = None) -> tuple[int, int, list[str]]:
        """stackTrace → scopes → variables of the top frame: (frame id, line, variable names)."""
        assert self.dap is not None
        stack = await self.dap.request("stackTrace", {"threadId": self.thread, "startFrame": 0, "levels": 20}, sink)
        top = stack["stackFrames"][0]
        scopes = await self.dap.request("scopes", {"frameId": top["id"]}, sink)
        variables = await self.dap.request(
            "variables", {"variablesReference": scopes["scopes"][0]["variablesReference"]}, sink)
        return int(top["id"]), int(top["line"]), [v["name"] for v in variables["variables"]]

    async def evaluate(self, frame: int, sink: Sink | None = None) -> str:
        assert self.dap is not None
        body = await self.dap.request("evaluate", {"expression": self.target.expression, "frameId": frame,
                                                   "context": self.context}, sink)
        return str(body["result"])

    async def step(self) -> None:
        assert self.dap is not None
        await self.dap.request("next", {"threadId": self.thread})
        self.thread = int((await self.dap.event("stopped"))["threadId"])

    async def run_to_exit(self) -> None:
        assert self.dap is not None
        await self.dap.request("continue", {"threadId": self.thread})
        await self.dap.ended(TIMEOUT)

    async def close(self) -> None:
        process, dap = self.process, self.dap
        if process is None:
            return
        helpers = descendants(process.pid)  # lldb-server, the debuggee if still there
        if dap is not None and process.returncode is None:
            with contextlib.suppress(Exception):
                await dap.request("disconnect", {"terminateDebuggee": True, "restart": False}, timeout=3.0)
            dap.writer.close()
        await end_process(process, helpers)
        if dap is not None:
            await dap.stop_reading()
        for pump in self.pumps:
            pump.cancel()
        self.process = self.dap = None


class RawGdb:
    """A raw GDB/MI driver: token-prefixed commands, lines read until ``<token>^`` or ``*stopped``."""

    _LINE = re.compile(rb'line="(\d+)"')
    _VALUE = re.compile(rb'\^done,value="((?:[^"\\]|\\.)*)"')

    def __init__(self, target: Target) -> None:
        self.target = target
        self.process: asyncio.subprocess.Process | None = None
        self.token = 0

    async def open(self) -> None:
        self.process = await asyncio.create_subprocess_exec(
            "gdb", "--interpreter=mi3", "-q", "-nx", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=ENV, start_new_session=True, limit=1 << 24)

    async def _until(self, prefix: bytes) -> bytes:
        assert self.process is not None and self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), TIMEOUT)
            if not line:
                raise ConnectionError("gdb closed its output")
            if line.startswith(prefix):
                if b"^error" in line[:20]:
                    raise RuntimeError(line.decode(errors="replace").strip())
                return line

    def write(self, command: str) -> bytes:
        assert self.process is not None and self.process.stdin is not None
        self.token += 1
        self.process.stdin.write(f"{self.token}{command}\n".encode())
        return f"{self.token}^".encode()

    async def command(self, command: str, sink: Sink | None = None, label: str | None = None) -> bytes:
        started = time.perf_counter()
        line = await self._until(self.write(command))
        if sink is not None:
            sink[label or command.split()[0]].append(time.perf_counter() - started)
        return line

    async def pipelined(self, commands: list[str], sink: Sink, label: str) -> None:
        started = time.perf_counter()
        prefixes = [self.write(c) for c in commands]
        for prefix in prefixes:
            await self._until(prefix)
        sink[label].append(time.perf_counter() - started)

    async def stopped(self) -> bytes:
        return await self._until(b"*stopped")

    async def start(self, sink: Sink | None = None) -> None:
        await self.open()
        t = self.target
        await self.command(f"-file-exec-and-symbols {t.program}", sink)
        await self.command(f"-environment-cd {t.workdir}", sink)
        await self.command("-inferior-tty-set /dev/null", sink)
        await self.command(f"-break-insert {t.source}:{t.line}", sink)
        await self.command("-exec-run", sink)
        stop = await self.stopped()
        assert b"breakpoint-hit" in stop, stop

    async def locals(self, sink: Sink | None = None) -> tuple[int, list[str]]:
        frames = await self.command("-stack-list-frames", sink)
        found = self._LINE.search(frames)
        assert found is not None, frames
        variables = await self.command("-stack-list-variables --simple-values", sink)
        return int(found.group(1)), re.findall(r'name="([^"]+)"', variables.decode())

    async def evaluate(self, sink: Sink | None = None) -> str:
        line = await self.command(f'-data-evaluate-expression "{self.target.expression}"', sink)
        found = self._VALUE.search(line)
        assert found is not None, line
        return found.group(1).decode()

    async def step(self) -> None:
        await self.command("-exec-next")
        stop = await self.stopped()
        assert b"end-stepping-range" in stop, stop

    async def run_to_exit(self) -> None:
        await self.command("-exec-continue")
        stop = await self.stopped()
        assert b"exited" in stop, stop

    async def close(self) -> None:
        process = self.process
        if process is None:
            return
        helpers = descendants(process.pid)
        if process.returncode is None and process.stdin is not None:
            with contextlib.suppress(ConnectionError, RuntimeError, asyncio.TimeoutError):
                self.write("-gdb-exit")
                await process.stdin.drain()
        await end_process(process, helpers)
        self.process = None


# ------------------------------------------------------------------------------------------------
# Section 1: the flow.
# ------------------------------------------------------------------------------------------------

def lingering(target: Target, variant: str, seen: set[int]) -> None:
    """Processes (other than the MCP server) still alive right after a teardown returned."""
    for pid in descendants(os.getpid()):
        line = cmdline(pid)
        if "polydbg serve" in line or pid in seen:
            continue
        seen.add(pid)
        target.lingering[variant].append(f"{pid}: {line[:100]}")


async def raw_flow(target: Target) -> list[float]:
    marks = [time.perf_counter()]
    raw: RawDapDebugger | RawGdb = RawGdb(target) if target.backend == "gdb" else RawDapDebugger(target)
    try:
        await raw.start()
        if isinstance(raw, RawGdb):
            line, names = await raw.locals()
            assert line == target.line and "total" in names, (line, names)
            marks.append(time.perf_counter())
            assert (await raw.evaluate()) == EXPECTED
            await raw.step()
            line, names = await raw.locals()
        else:
            frame, line, names = await raw.locals()
            assert line == target.line and "total" in names, (line, names)
            marks.append(time.perf_counter())
            assert (await raw.evaluate(frame)).startswith(EXPECTED)
            await raw.step()
            _, line, names = await raw.locals()
        assert line == target.line + 1 and "mean" in names, (line, names)
        marks.append(time.perf_counter())
        await raw.run_to_exit()
        marks.append(time.perf_counter())
    finally:
        await raw.close()
    marks.append(time.perf_counter())
    return [b - a for a, b in itertools.pairwise(marks)]


async def session_flow(target: Target) -> list[float]:
    marks = [time.perf_counter()]
    manager = SessionManager()
    session = manager.create(target.language, target.backend, os.path.basename(target.program), target.workdir)
    try:
        await session.add_line_breakpoint(target.source, target.line)
        report = await manager.start(session, LaunchSpec(program=target.program, cwd=target.workdir), TIMEOUT, None)
        assert report.location is not None and report.location.line == target.line, report
        marks.append(time.perf_counter())
        stack = await session.stack(None, 0, 20, False)
        assert stack.threads[0].frames[0].line == target.line, stack
        variables = await session.variables(None, None, None, 0, 50, None)
        assert any(v.name == "total" for v in variables.variables), variables
        value = await session.evaluate(target.expression, None)
        assert value.value.startswith(EXPECTED), value
        report = await session.step("over", 1, None, TIMEOUT, None)
        assert report.location is not None and report.location.line == target.line + 1, report
        variables = await session.variables(None, None, None, 0, 50, None)
        assert any(v.name == "mean" for v in variables.variables), variables
        marks.append(time.perf_counter())
        report = await session.resume(None, None, TIMEOUT, None)
        assert report.state in ("exited", "terminated"), report
        marks.append(time.perf_counter())
    finally:
        await manager.remove(session, False)
    marks.append(time.perf_counter())
    return [b - a for a, b in itertools.pairwise(marks)]


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def tool(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        raise RuntimeError(f"{name}({arguments}) failed: {text_of(result)}")
    return dict(result.structured_content or {})


def launch_tool_args(target: Target) -> dict[str, Any]:
    return {"program": target.program, "adapter": target.backend,
            "breakpoints": [{"file": target.source, "line": target.line}]}


async def mcp_flow(client: Client, target: Target) -> list[float]:
    marks = [time.perf_counter()]
    report = await tool(client, "debug_launch", **launch_tool_args(target))
    try:
        assert report["state"] == "stopped" and report["location"]["line"] == target.line, report
        marks.append(time.perf_counter())
        stack = await tool(client, "debug_stack")
        assert stack["threads"][0]["frames"][0]["line"] == target.line, stack
        variables = await tool(client, "debug_variables")
        assert any(v["name"] == "total" for v in variables["variables"]), variables
        value = await tool(client, "debug_evaluate", expression=target.expression)
        assert value["value"].startswith(EXPECTED), value
        report = await tool(client, "debug_step")
        assert report["location"]["line"] == target.line + 1, report
        variables = await tool(client, "debug_variables")
        assert any(v["name"] == "mean" for v in variables["variables"]), variables
        marks.append(time.perf_counter())
        report = await tool(client, "debug_continue")
        assert report["state"] in ("exited", "terminated"), report
        marks.append(time.perf_counter())
    finally:
        await tool(client, "debug_terminate")
    marks.append(time.perf_counter())
    return [b - a for a, b in itertools.pairwise(marks)]


async def bench_flow(targets: list[Target]) -> dict[str, dict[str, float]]:
    """Every backend × variant once per round, round-robin; round 0 is a discarded warm-up."""
    phases: dict[tuple[str, str], list[list[float]]] = collections.defaultdict(list)
    seen: set[int] = set()
    server = StdioServerParameters(command=sys.executable, args=["-m", "polydbg", "serve"], env=ENV)
    async with Client(server) as client:
        for rnd in range(max(t.runs for t in targets) + 1):
            for target in targets:
                if rnd > target.runs:
                    continue
                for variant in VARIANTS:
                    if variant == RAW:
                        times = await raw_flow(target)
                    elif variant == SESSION:
                        times = await session_flow(target)
                    else:
                        times = await mcp_flow(client, target)
                    lingering(target, variant, seen)
                    if rnd:
                        phases[target.backend, variant].append(times)

    totals: dict[str, dict[str, float]] = {}
    rows = []
    for target in targets:
        def to_exit(variant: str, t: Target = target) -> list[float]:
            return [sum(run[:3]) for run in phases[t.backend, variant]]

        def whole(variant: str, t: Target = target) -> list[float]:
            return [sum(run) for run in phases[t.backend, variant]]

        base_exit, base_whole = median(to_exit(RAW)), median(whole(RAW))
        fastest = min(run[0] for v in VARIANTS for run in phases[target.backend, v])
        totals[target.backend] = {}
        for variant in VARIANTS:
            label = target.raw_label if variant == RAW else variant
            totals[target.backend][variant] = median(whole(variant)) / base_whole
            totals[target.backend][variant + " to exit"] = median(to_exit(variant)) / base_exit
            rows.append([f"{target.backend}: {label}", ms(median(to_exit(variant))), ms(min(to_exit(variant))),
                         ms(median(whole(variant))), ms(min(whole(variant))),
                         f"{median(to_exit(variant)) / base_exit:.2f}×", f"{median(whole(variant)) / base_whole:.2f}×",
                         f"{min(whole(variant)) / min(whole(RAW)):.2f}×",
                         f"{sum(run[0] > fastest + 0.15 for run in phases[target.backend, variant])}/{target.runs}",
                         str(len(target.lingering[variant]))])
    table("Flow: launch → bp → stack → variables → evaluate → next → variables → continue → exit "
          f"(runs: {', '.join(f'{t.backend} {t.runs}' for t in targets)}; round-robin, after 1 warm-up round)",
          ["backend: variant", "to exit: median ms", "to exit: min ms", "whole flow: median ms",
           "whole flow: min ms", "÷ raw (to exit)", "÷ raw (whole flow)", "÷ raw (min whole)", "launch stalls",
           "left alive after teardown"], rows)
    print("  'to exit' = until the exit is reported (raw: the first DAP exited/terminated event, MI *stopped")
    print("  exited-normally; polydbg: resume / debug_continue returns); 'whole flow' adds the teardown (raw:")
    print("  disconnect or -gdb-exit and the debugger's exit; polydbg: manager.remove / debug_terminate). Raw MI")
    print("  reads locals with -stack-list-variables --simple-values. 'left alive': processes still running when a")
    print("  teardown returned (the MCP server itself excepted). 'launch stalls': runs whose P1 took > 150 ms more")
    print("  than the backend's fastest P1 — delve stalls ~200 ms between launch and its initialized event in about")
    print("  a quarter of launches, raw and polydbg alike, hence more delve runs (--delve-runs).")
    for target in targets:
        for variant in VARIANTS:
            for line in target.lingering[variant]:
                print(f"  still alive when {target.backend} / {variant} teardown returned: {line}")

    phase_rows = []
    for phase_index, phase in enumerate(PHASES):
        row = [phase]
        for target in targets:
            for variant in VARIANTS:
                row.append(ms(median([run[phase_index] for run in phases[target.backend, variant]])))
        phase_rows.append(row)
    headers = ["phase"] + [f"{t.backend} {v.replace('polydbg ', '')}" for t in targets for v in VARIANTS]
    table("Flow phases (median ms)", headers, phase_rows)
    print("  P1: raw = start the debugger … stopped event + stack and locals read; polydbg = launch (its StopReport")
    print("  reads the stack and locals). P2: raw = evaluate, next, stack + locals; polydbg = stack, variables,")
    print("  evaluate, step (its report reads locals), variables. The first locals read at a stop is the costly one.")
    return totals


# ------------------------------------------------------------------------------------------------
# Section 2: per-call latency while stopped at the breakpoint.
# ------------------------------------------------------------------------------------------------

_issued: list[str] = []
_created: list[Session] = []
_dap_request = DapClient.send_request
_mi_send = MiClient.send
_create = SessionManager.create


def _counting_request(self: DapClient, command: str,
                      arguments: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
    _issued.append(command)
    return _dap_request(self, command, arguments)


def mi_label(command: str) -> str:
    """An MI command without its thread/frame/expression arguments: what kind of request it is."""
    text = re.sub(r"--(?:thread|frame) \d+ ", "", command)
    if text.startswith("-interpreter-exec") and "whatis" in text:
        return "whatis (console)"
    words = text.split()
    if words and words[0] == "-stack-list-variables":
        return f"{words[0]} {words[-1]}"
    return words[0] if words else text


def _counting_send(self: MiClient, command: str) -> Any:
    _issued.append(mi_label(command))
    return _mi_send(self, command)


def _recording_create(self: SessionManager, *args: Any, **kwargs: Any) -> Session:
    session = _create(self, *args, **kwargs)
    _created.append(session)
    return session


SessionManager.create = _recording_create  # type: ignore[method-assign]

OPS = ("stack", "variables", "evaluate")
TOOLS = {"stack": "debug_stack", "variables": "debug_variables", "evaluate": "debug_evaluate"}
# The raw request(s) that do what each polydbg call does, given the frame.
DAP_EQUIVALENT = {"stack": ("stackTrace",), "variables": ("scopes", "variables"), "evaluate": ("evaluate",)}
MI_EQUIVALENT = {"stack": ("-stack-list-frames",), "variables": ("-stack-list-variables --simple-values",),
                 "evaluate": ("-data-evaluate-expression",)}
MI_RAW = ("-thread-info", "-stack-list-frames", "-stack-list-variables --simple-values",
          "-stack-list-variables --all-values", "-data-evaluate-expression", "whatis (console)",
          "pipelined --simple-values + --all-values", "pipelined evaluate + whatis")
DAP_RAW = ("threads", "stackTrace", "scopes", "variables", "evaluate")


@dataclass
class CallResults:
    raw: Sink
    times: dict[str, Sink]  # path → op → seconds
    issued: dict[str, dict[str, dict[str, float]]]  # path → op → request → mean count per call


S_CLEARED, S_KEPT = "session, caches cleared", "session, frame cache kept"
M_CLEARED, M_KEPT = "MCP in-process, caches cleared", "MCP in-process, frame cache kept"
PATHS = (S_CLEARED, S_KEPT, M_CLEARED, M_KEPT)


async def bench_calls(target: Target, iters: int) -> CallResults:
    """Interleaved: a raw round, then each polydbg path's stack / variables / evaluate.

    "caches cleared": the stop scope's ``forget_reads()`` before every call, so the call re-reads what it needs
    (threads, the frame) — every call reaches the debugger. "frame cache kept": only the variables cache is
    cleared, as within one stop after its report: each call sends just its own request(s).
    """
    raw: RawDapDebugger | RawGdb = RawGdb(target) if target.backend == "gdb" else RawDapDebugger(target)
    raw_sink = new_sink()
    times: dict[str, Sink] = {path: new_sink() for path in PATHS}
    counts: dict[str, dict[str, list[collections.Counter[str]]]] = {
        path: collections.defaultdict(list) for path in PATHS}
    manager = SessionManager()
    DapClient.send_request = _counting_request  # type: ignore[method-assign]
    MiClient.send = _counting_send  # type: ignore[method-assign]
    try:
        await raw.start()
        sessions: dict[str, Session] = {}
        for path in (S_CLEARED, S_KEPT):
            session = manager.create(target.language, target.backend, os.path.basename(target.program),
                                     target.workdir)
            await session.add_line_breakpoint(target.source, target.line)
            report = await manager.start(session, LaunchSpec(program=target.program, cwd=target.workdir),
                                         TIMEOUT, None)
            assert report.location is not None and report.location.line == target.line, report
            sessions[path] = session
        async with Client(build_server()) as cleared, Client(build_server()) as kept:
            clients = {M_CLEARED: cleared, M_KEPT: kept}
            for path, client in clients.items():
                report_dict = await tool(client, "debug_launch", **launch_tool_args(target))
                assert report_dict["location"]["line"] == target.line, report_dict
                sessions[path] = _created[-1]
            if isinstance(raw, RawGdb):
                ctx = "--thread 1 --frame 0 "
                expression = f'"{target.expression}"'

                async def raw_round() -> None:
                    assert isinstance(raw, RawGdb)
                    await raw.command("-thread-info", raw_sink)
                    await raw.command("-stack-list-frames --thread 1 0 20", raw_sink)
                    await raw.command(f"-stack-list-variables {ctx}--simple-values", raw_sink,
                                      "-stack-list-variables --simple-values")
                    await raw.command(f"-stack-list-variables {ctx}--all-values", raw_sink,
                                      "-stack-list-variables --all-values")
                    await raw.command(f"-data-evaluate-expression {ctx}{expression}", raw_sink)
                    await raw.command(f'-interpreter-exec {ctx}console "whatis {target.expression}"', raw_sink,
                                      "whatis (console)")
                    await raw.pipelined([f"-stack-list-variables {ctx}--simple-values",
                                         f"-stack-list-variables {ctx}--all-values"], raw_sink,
                                        "pipelined --simple-values + --all-values")
                    await raw.pipelined([f"-data-evaluate-expression {ctx}{expression}",
                                         f'-interpreter-exec {ctx}console "whatis {target.expression}"'], raw_sink,
                                        "pipelined evaluate + whatis")
            else:
                assert raw.dap is not None
                dap = raw.dap
                frame = (await raw.locals())[0]

                async def raw_round() -> None:
                    assert isinstance(raw, RawDapDebugger)
                    await dap.request("threads", None, raw_sink)
                    await dap.request("stackTrace", {"threadId": raw.thread, "startFrame": 0, "levels": 20}, raw_sink)
                    scopes = await dap.request("scopes", {"frameId": frame}, raw_sink)
                    await dap.request("variables", {"variablesReference": scopes["scopes"][0]["variablesReference"]},
                                      raw_sink)
                    await raw.evaluate(frame, raw_sink)

            async def measure(path: str, op: str) -> None:
                session = sessions[path]
                scope = session.core.life.scope
                assert scope is not None
                if path in (S_CLEARED, M_CLEARED):
                    scope.forget_reads()  # every call reaches the debugger, re-reading threads / frames
                else:
                    scope.forget_values()  # variables reach the debugger; frames stay cached
                if path in clients:
                    args = {"expression": target.expression} if op == "evaluate" else {}
                    call: Awaitable[Any] = tool(clients[path], TOOLS[op], **args)
                elif op == "stack":
                    call = session.stack(None, 0, 20, False)
                elif op == "variables":
                    call = session.variables(None, None, None, 0, 50, None)
                else:
                    call = session.evaluate(target.expression, None)
                mark = len(_issued)
                started = time.perf_counter()
                await call
                times[path][op].append(time.perf_counter() - started)
                counts[path][op].append(collections.Counter(_issued[mark:]))

            for _ in range(iters + WARMUP):
                await raw_round()
                for path in PATHS:
                    for op in OPS:
                        await measure(path, op)
            for client in clients.values():
                await tool(client, "debug_terminate")
    finally:
        DapClient.send_request = _dap_request  # type: ignore[method-assign]
        MiClient.send = _mi_send  # type: ignore[method-assign]
        await manager.close_all()
        await raw.close()

    for sink in (raw_sink, *times.values()):
        for key in sink:
            sink[key] = sink[key][WARMUP:]
    issued: dict[str, dict[str, dict[str, float]]] = {}
    for path, by_op in counts.items():
        issued[path] = {}
        for op, calls in by_op.items():
            total: collections.Counter[str] = collections.Counter()
            for counter in calls[WARMUP:]:
                total.update(counter)
            issued[path][op] = {name: n / len(calls[WARMUP:]) for name, n in total.items()}
    return CallResults(raw_sink, times, issued)


def report_calls(target: Target, res: CallResults, iters: int) -> dict[str, dict[str, float]]:
    mi = target.backend == "gdb"
    names = MI_RAW if mi else DAP_RAW
    table(f"{target.backend}: raw request latency while stopped ({target.raw_label}; ms, {iters} samples)",
          ["request", "median", "min", "p90"],
          [[name, ms(median(res.raw[name])), ms(min(res.raw[name])),
            ms(sorted(res.raw[name])[int(len(res.raw[name]) * 0.9)])] for name in names])

    equivalent = MI_EQUIVALENT if mi else DAP_EQUIVALENT

    def raw_equiv(op: str) -> float:
        return sum(median(res.raw[name]) for name in equivalent[op])

    def raw_cost(requests: dict[str, float]) -> float:
        return sum(count * median(res.raw[name]) for name, count in requests.items() if name in res.raw)

    def described(requests: dict[str, float]) -> str:
        if not requests:
            return "none"
        return " + ".join(name if count == 1 else f"{name}×{count:.2g}" for name, count in sorted(requests.items()))

    rows = []
    summary: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for path, by_op in res.times.items():
        for op in OPS:
            call = median(by_op[op])
            requests = res.issued[path][op]
            equiv, cost = raw_equiv(op), raw_cost(requests)
            summary[path][op] = call
            summary[path][op + " vs equiv"] = call - equiv
            summary[path][op + " vs issued"] = call - cost
            name = TOOLS[op] if path.startswith("MCP") else f"session.{op}"
            rows.append([f"{path}: {name}", ms(call), ms(min(by_op[op])), " + ".join(equivalent[op]), ms(equiv),
                         ms(call - equiv), described(requests), ms(cost), ms(call - cost)])
    table(f"{target.backend}: polydbg per-call latency while stopped (ms, {iters} calls each, interleaved with raw)",
          ["call", "median", "min", "raw equivalent", "raw equiv. median", "overhead vs equiv.",
           "requests issued per call", "raw cost of those", "overhead vs issued"], rows)
    print("  caches cleared = the stop scope's forget_reads() before each call: it re-reads threads / the top frame,")
    print("  as the first call after a stop does; frame cache kept = only the variables cache is cleared, as later")
    print("  calls at the same stop. raw cost = Σ requests issued per call × their raw median (counted by wrapping")
    print("  DapClient.send_request / MiClient.send)."
          + (" polydbg pipelines its MI pairs (see the 'pipelined' raw rows), so the sum overstates their raw cost."
             if mi else ""))
    return summary


# ------------------------------------------------------------------------------------------------

def build_c(workdir: str) -> str:
    program = os.path.join(workdir, "native_target")
    subprocess.run(["gcc", "-g", "-O0", "-o", program, C_SOURCE], check=True, timeout=120)
    return program


def build_go(workdir: str) -> str:
    program = os.path.join(workdir, "go_target")
    subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", program, "."], cwd=GO_DIR, check=True,
                   capture_output=True, timeout=300)
    return program


def delve_problem() -> str | None:
    """Why the delve part cannot run here, or None."""
    from polydbg.backends.registry import BACKENDS

    if BACKENDS["delve"].find() is None or shutil.which("go") is None:
        return "dlv or go is not on PATH"
    return None


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


async def main_async(runs: int, delve_runs: int, iters: int, workdir: str) -> None:
    print(f"polydbg native flow benchmark — python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    targets: list[Target] = []
    c_program = build_c(workdir)
    c_line = line_of(MARKER, C_SOURCE)
    if find_lldb_dap() is not None:
        targets.append(Target("lldb-dap", "c", c_program, C_SOURCE, c_line, "total * 2 + origin.x", workdir,
                              f"raw DAP over stdio to {os.path.basename(find_lldb_dap() or '')}", runs))
    else:
        print("lldb-dap: skipped (no lldb-dap on PATH)")
    if shutil.which("gdb") is not None:
        targets.append(Target("gdb", "c", c_program, C_SOURCE, c_line, "total * 2 + origin.x", workdir,
                              "raw MI driver to gdb --interpreter=mi3", runs))
    else:
        print("gdb: skipped (no gdb on PATH)")
    problem = delve_problem()
    if problem is None:
        try:
            go_program = build_go(workdir)
        except (subprocess.SubprocessError, OSError) as exc:
            problem = f"go build failed: {exc}"
    if problem is None:
        delve = Target("delve", "go", go_program, GO_SOURCE, line_of(MARKER, GO_SOURCE), "total*2 + origin.X",
                       workdir, "raw DAP over TCP to dlv dap", delve_runs)
        try:  # one smoke flow through polydbg: the backend may still be in progress
            await session_flow(delve)
            targets.append(delve)
        except Exception as exc:
            problem = f"a polydbg flow through delve failed: {exc!r}"[:300]
    if problem is not None:
        print(f"delve: skipped ({problem})")
    print("targets: " + "; ".join(f"{t.backend} — {os.path.relpath(t.source)}:{t.line}, evaluate {t.expression!r}"
                                  for t in targets))

    ratios = await bench_flow(targets)
    summaries = {}
    for target in targets:
        summaries[target.backend] = report_calls(target, await bench_calls(target, iters), iters)

    rows = []
    for target in targets:
        for variant in (SESSION, MCP):
            whole, to_exit = ratios[target.backend][variant], ratios[target.backend][variant + " to exit"]
            rows.append([f"{target.backend}: whole flow ÷ raw ({variant})", "≤ 1.20×", f"{whole:.2f}×",
                         verdict(whole <= 1.2)])
            rows.append([f"{target.backend}: flow to exit ÷ raw ({variant})", "≤ 1.20×", f"{to_exit:.2f}×",
                         verdict(to_exit <= 1.2)])
    for target in targets:
        summary = summaries[target.backend]
        for path in PATHS:
            if target.backend == "gdb":
                worst = max(summary[path][op] for op in OPS)
                rows.append([f"gdb: slowest MI inspection call median ({path})", "≤ 5 ms", f"{ms(worst)} ms",
                             verdict(worst <= 0.005)])
            else:
                for kind in ("vs equiv", "vs issued"):
                    worst = max(summary[path][f"{op} {kind}"] for op in OPS)
                    rows.append([f"{target.backend}: worst per-call overhead {kind.replace('vs', 'vs raw')} ({path})",
                                 "≤ 2 ms", f"{ms(worst)} ms", verdict(worst <= 0.002)])
    table("Targets", ["metric", "target", "measured", "verdict"], rows)
    print("  overhead vs raw equiv = polydbg call − the raw request(s) doing the same given the frame (stack:")
    print("  stackTrace / -stack-list-frames; variables: scopes+variables / -stack-list-variables --simple-values;")
    print("  evaluate: evaluate / -data-evaluate-expression). overhead vs raw issued = polydbg call − Σ raw medians")
    print("  of the requests it actually sent (with caches cleared it re-reads threads / the frame first).")
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="flow runs per backend and variant (default 5)")
    parser.add_argument("--delve-runs", type=int, default=None,
                        help="flow runs for delve, whose launches stall now and then (default 3 × --runs)")
    parser.add_argument("--iters", type=int, default=60, help="calls per per-call measurement (default 60)")
    args = parser.parse_args()
    delve_runs = args.delve_runs if args.delve_runs is not None else 3 * args.runs
    if shutil.which("gcc") is None:
        sys.exit("needs gcc")
    become_subreaper()
    started = time.perf_counter()
    workdir = tempfile.mkdtemp(prefix="polydbg-native-bench-")
    try:
        asyncio.run(main_async(args.runs, delve_runs, args.iters, workdir))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
        left = cleanup_leftovers()
        if left:
            print(f"\nleftover processes: {len(left)}, killed now:")
            for line in left:
                print(f"  {line}")
        else:
            print("\nleftover processes: none")
        print(f"benchmark wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
