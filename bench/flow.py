"""Benchmark: the canonical debugging flow, raw debugpy vs raw debugpy + TCP_NODELAY vs polydbg over MCP.

Flow: launch bench/programs/flow_target.py with a breakpoint → stop → stackTrace → scopes → variables
→ evaluate → next → stackTrace/scopes/variables → continue → exit. Measured as

  a. raw DAP (this file's own client) to ``python -m debugpy.adapter``, plain debugpy;
  b. the same client with polydbg's TCP_NODELAY shims on the adapter and the debuggee;
  c. polydbg through a real stdio MCP client (``polydbg serve``): the full flow (8 tool calls) and
     the minimal one an agent needs when it relies on the StopReport (launch, evaluate, step, continue).

Then a per-call micro-benchmark while stopped at the breakpoint: raw DAP requests (NODELAY) vs the
polydbg session layer in-process vs MCP tool calls in-process and over stdio, with the DAP requests
each polydbg call issues counted, so the per-call overhead is the call's median minus the raw medians
of exactly those requests.

Run: .venv/bin/python bench/flow.py [--reps N] [--iters M]
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import functools
import itertools
import json
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from _util import (
    POLYDBG,
    PROGRAM,
    RawDap,
    Sink,
    become_subreaper,
    line_of,
    median,
    ms,
    report_leftovers,
    table,
)
from polydbg.backends.base import LaunchSpec
from polydbg.backends.debugpy.process import ADAPTER_SHIM, DEBUGGEE_SHIM
from polydbg.dap.client import DapClient
from polydbg.mcp.server import build_server
from polydbg.session.manager import SessionManager
from polydbg.session.session import Session

BP_LINE = line_of("mean = total / len(values)")
EXPRESSION = "total * 2 + len(values)"
EXPECTED = str(sum(range(50)) * 2 + 50)
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONSTARTUP"}

INIT_ARGS = {
    "clientID": "bench", "clientName": "bench", "adapterID": "debugpy", "pathFormat": "path",
    "linesStartAt1": True, "columnsStartAt1": True, "supportsVariableType": True,
    "supportsRunInTerminalRequest": False, "supportsProgressReporting": False, "supportsMemoryReferences": True,
}
INSPECTIONS = ("stackTrace", "scopes", "variables", "evaluate")
INSPECTION_TOOLS = ("debug_stack", "debug_variables", "debug_evaluate")
WARMUP = 3
PHASES = ("P1 launch → stopped, locals read", "P2 evaluate + step + locals read", "P3 continue → exit reported",
          "P4 teardown")



def new_sink() -> Sink:
    return collections.defaultdict(list)


# ------------------------------------------------------------------------------------------------
# a/b. A raw DAP client: Content-Length framing over the adapter's stdio, nothing else.
# ------------------------------------------------------------------------------------------------

class DebugpyRawDap(RawDap):
    """The raw baseline: ``python -m debugpy.adapter`` over stdio, plain or with the NODELAY shim."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        assert process.stdout is not None and process.stdin is not None
        super().__init__(process.stdout, process.stdin)
        self.process = process

    @classmethod
    async def start(cls, nodelay: bool) -> DebugpyRawDap:
        argv = [sys.executable, "-c", ADAPTER_SHIM] if nodelay else [sys.executable, "-m", "debugpy.adapter"]
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=ENV, start_new_session=True, limit=1 << 22)
        return cls(process)

    async def close(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(Exception):
                await self.request("disconnect", {"terminateDebuggee": True, "restart": False}, timeout=3.0)
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 3.0)
        except asyncio.TimeoutError:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
            await self.process.wait()
        await self.stop_reading()


def launch_args(nodelay: bool) -> dict[str, Any]:
    python = [sys.executable, "-X", "frozen_modules=off", "-c", DEBUGGEE_SHIM] if nodelay else [sys.executable]
    return {"type": "python", "request": "launch", "name": "bench", "program": PROGRAM, "python": python,
            "args": [], "cwd": os.path.dirname(PROGRAM), "console": "internalConsole", "redirectOutput": True,
            "justMyCode": True, "stopOnEntry": False, "showReturnValue": True, "subProcess": False}


async def raw_start(nodelay: bool, sink: Sink | None = None) -> tuple[DebugpyRawDap, int]:
    """Adapter up, debuggee launched, breakpoint set, stopped at it: (client, thread id)."""
    dap = await DebugpyRawDap.start(nodelay)
    try:
        await dap.request("initialize", INIT_ARGS, sink)
        launch_sent = time.perf_counter()
        launched = dap.send("launch", launch_args(nodelay))
        await dap.event("initialized")
        await dap.request("setBreakpoints", {"source": {"path": PROGRAM}, "breakpoints": [{"line": BP_LINE}],
                                             "lines": [BP_LINE]}, sink)
        await dap.request("setExceptionBreakpoints", {"filters": ["uncaught"]}, sink)
        await dap.request("configurationDone", {}, sink)
        await asyncio.wait_for(launched, 20.0)
        stopped = await dap.event("stopped")
        if sink is not None:
            sink["(launch sent → stopped event)"].append(time.perf_counter() - launch_sent)
    except BaseException:
        await dap.close()
        raise
    return dap, int(stopped["threadId"])


async def raw_locals(dap: DebugpyRawDap, thread: int, sink: Sink) -> tuple[int, int]:
    """stackTrace → scopes → variables of the top frame: (frame id, line)."""
    stack = await dap.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 20}, sink)
    top = stack["stackFrames"][0]
    scopes = await dap.request("scopes", {"frameId": top["id"]}, sink)
    variables = await dap.request("variables", {"variablesReference": scopes["scopes"][0]["variablesReference"]},
                                  sink)
    assert any(v["name"] == "values" for v in variables["variables"]), variables
    return int(top["id"]), int(top["line"])


async def raw_flow(nodelay: bool) -> tuple[dict[str, float], Sink]:
    """Phase durations (seconds) and request latencies of one raw flow."""
    sink = new_sink()
    marks = [time.perf_counter()]
    dap, thread = await raw_start(nodelay, sink)
    try:
        frame, line = await raw_locals(dap, thread, sink)
        assert line == BP_LINE, line
        marks.append(time.perf_counter())
        result = await dap.request("evaluate", {"expression": EXPRESSION, "frameId": frame, "context": "watch"}, sink)
        assert result["result"] == EXPECTED, result
        await dap.request("next", {"threadId": thread}, sink)
        thread = int((await dap.event("stopped"))["threadId"])
        _, line = await raw_locals(dap, thread, sink)
        assert line == BP_LINE + 1, line
        marks.append(time.perf_counter())
        await dap.request("continue", {"threadId": thread}, sink)
        await dap.event("terminated")
        marks.append(time.perf_counter())
    finally:
        await dap.close()
    marks.append(time.perf_counter())
    return dict(zip(PHASES, (b - a for a, b in itertools.pairwise(marks)), strict=True)), sink


# ------------------------------------------------------------------------------------------------
# c. polydbg over MCP.
# ------------------------------------------------------------------------------------------------

def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


async def tool(client: Client, name: str, sink: Sink | None = None, **arguments: Any) -> dict[str, Any]:
    started = time.perf_counter()
    result = await client.call_tool(name, arguments)
    elapsed = time.perf_counter() - started
    if result.is_error:
        raise RuntimeError(f"{name}({arguments}) failed: {text_of(result)}")
    if sink is not None:
        sink[name].append(elapsed)
    return dict(result.structured_content or {})


def launch_tool_args() -> dict[str, Any]:
    return {"program": PROGRAM, "python": sys.executable, "breakpoints": [{"file": PROGRAM, "line": BP_LINE}]}


async def mcp_flow(client: Client, minimal: bool) -> tuple[dict[str, float], Sink, int]:
    """Phase durations (seconds), tool latencies, and the tool calls the agent made up to the exit."""
    sink = new_sink()
    marks = [time.perf_counter()]
    report = await tool(client, "debug_launch", sink, **launch_tool_args())
    assert report["state"] == "stopped" and report["location"]["line"] == BP_LINE, report
    assert any(v["name"] == "values" for v in report["locals"]), report
    marks.append(time.perf_counter())
    if not minimal:
        stack = await tool(client, "debug_stack", sink)
        assert stack["threads"][0]["frames"][0]["line"] == BP_LINE, stack
        await tool(client, "debug_variables", sink)
    value = await tool(client, "debug_evaluate", sink, expression=EXPRESSION)
    assert value["value"] == EXPECTED, value
    report = await tool(client, "debug_step", sink)
    assert report["location"]["line"] == BP_LINE + 1, report
    assert any(v["name"] == "total" for v in report["locals"]), report
    if not minimal:
        variables = await tool(client, "debug_variables", sink)
        assert any(v["name"] == "total" for v in variables["variables"]), variables
    marks.append(time.perf_counter())
    report = await tool(client, "debug_continue", sink)
    assert report["state"] in ("exited", "terminated"), report
    marks.append(time.perf_counter())
    calls = sum(len(v) for v in sink.values())
    await tool(client, "debug_terminate", sink)
    marks.append(time.perf_counter())
    return dict(zip(PHASES, (b - a for a, b in itertools.pairwise(marks)), strict=True)), sink, calls


def stdio_server() -> StdioServerParameters:
    return StdioServerParameters(command=POLYDBG, args=["serve"])


# ------------------------------------------------------------------------------------------------
# Section 1: the flow, N repetitions of each variant, round-robin.
# ------------------------------------------------------------------------------------------------

RAW, RAW_ND = "raw debugpy (plain)", "raw debugpy + NODELAY"
FULL, MINIMAL = "polydbg MCP stdio, full flow", "polydbg MCP stdio, minimal flow"
VARIANTS = (RAW, RAW_ND, FULL, MINIMAL)


async def bench_flow(reps: int) -> dict[str, Any]:
    phases: dict[str, list[dict[str, float]]] = {v: [] for v in VARIANTS}
    latencies: dict[str, Sink] = {v: new_sink() for v in VARIANTS}
    calls: dict[str, int] = {}
    async with Client(stdio_server()) as client:
        for rep in range(reps + 1):  # round 0 is a discarded warm-up
            for variant in VARIANTS:
                if variant.startswith("raw"):
                    times, sink = await raw_flow(nodelay=variant == RAW_ND)
                    calls[variant] = sum(len(v) for k, v in sink.items() if not k.startswith("("))
                else:
                    times, sink, calls[variant] = await mcp_flow(client, minimal=variant == MINIMAL)
                if rep == 0:
                    continue
                phases[variant].append(times)
                for key, values in sink.items():
                    latencies[variant][key].extend(values)

    def to_exit(variant: str) -> list[float]:
        return [sum(run[p] for p in PHASES[:3]) for run in phases[variant]]

    def total(variant: str) -> list[float]:
        return [sum(run.values()) for run in phases[variant]]

    rows = []
    for variant in VARIANTS:
        keys = INSPECTIONS if variant.startswith("raw") else INSPECTION_TOOLS
        inspections = [x for k in keys for x in latencies[variant].get(k, [])]
        unit = "DAP requests" if variant.startswith("raw") else "tool calls + terminate"
        rows.append([variant, ms(median(to_exit(variant))), ms(min(to_exit(variant))), ms(median(total(variant))),
                     f"{median(to_exit(variant)) / median(to_exit(RAW_ND)):.2f}",
                     f"{median(total(variant)) / median(total(RAW_ND)):.2f}",
                     f"{min(to_exit(variant)) / min(to_exit(RAW_ND)):.2f}",
                     f"{calls[variant]} {unit}", ms(median(inspections)) if inspections else "-"])
    table(f"Flow: launch → bp → inspect → evaluate → step → inspect → continue → exit "
          f"({reps} runs each, round-robin, after 1 warm-up round)",
          ["variant", "to exit: median ms", "to exit: min ms", "incl. teardown: median ms",
           "÷ raw NODELAY (to exit)", "÷ raw NODELAY (teardown)", "÷ raw NODELAY (min)", "agent calls",
           "inspection median ms"], rows)
    print("  'to exit' = until the exit is reported (raw: terminated event; polydbg: debug_continue returns);")
    print("  'incl. teardown' adds disconnect + adapter exit (raw) / debug_terminate (polydbg).")
    print("  inspection: raw = stackTrace/scopes/variables/evaluate requests; polydbg = debug_stack/debug_variables/")
    print("  debug_evaluate tool calls (the minimal flow needs only debug_evaluate: the StopReports carry the rest).")

    phase_rows = []
    for phase in PHASES:
        meds = {v: median([run[phase] for run in phases[v]]) for v in VARIANTS}
        phase_rows.append([phase, *(ms(meds[v]) for v in VARIANTS), f"{(meds[MINIMAL] - meds[RAW_ND]) * 1000:+.2f}"])
    table("Flow phases (median ms)", ["phase", *VARIANTS, "minimal − raw NODELAY"], phase_rows)
    print("  raw: P1 = spawn adapter … stopped event + stackTrace/scopes/variables; P2 = evaluate, next, stopped,")
    print("  stackTrace/scopes/variables. polydbg: P1 = debug_launch; P2 = the calls between launch and continue.")

    req_rows = []
    for name in ("initialize", "setBreakpoints", "configurationDone", "(launch sent → stopped event)",
                 *INSPECTIONS, "next", "continue"):
        req_rows.append([name, *(ms(median(latencies[v][name])) for v in (RAW, RAW_ND))])
    table("Raw DAP request latency inside the flow (median ms; initialize includes adapter start-up)",
          ["request / phase", RAW, RAW_ND], req_rows)

    tool_rows = []
    for name in ("debug_launch", "debug_stack", "debug_variables", "debug_evaluate", "debug_step",
                 "debug_continue", "debug_terminate"):
        row = [name]
        for variant in (FULL, MINIMAL):
            values = latencies[variant][name]
            row += [ms(median(values)), ms(max(values))] if values else ["-", "-"]
        tool_rows.append(row)
    table("polydbg tool-call latency inside the flow (ms, stdio MCP client)",
          ["tool", "full: median", "full: max", "minimal: median", "minimal: max"], tool_rows)
    return {"to_exit": {v: median(to_exit(v)) for v in VARIANTS}, "total": {v: median(total(v)) for v in VARIANTS},
            "calls": calls}


# ------------------------------------------------------------------------------------------------
# Section 2: per-call latency while stopped at the breakpoint.
# ------------------------------------------------------------------------------------------------

_issued: list[str] = []
_original_request = DapClient.send_request


def _counting_request(self: DapClient, command: str,
                      arguments: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
    _issued.append(command)
    return _original_request(self, command, arguments)


async def session_start() -> tuple[SessionManager, Session]:
    manager = SessionManager()
    session = manager.create("python", None, os.path.basename(PROGRAM), os.path.dirname(PROGRAM))
    await session.add_line_breakpoint(PROGRAM, BP_LINE)
    session.exception_filters = ["uncaught"]
    spec = LaunchSpec(program=PROGRAM, cwd=os.path.dirname(PROGRAM), runtime=sys.executable)
    report = await manager.start(session, spec, 30.0, None)
    assert report.location is not None and report.location.line == BP_LINE, report
    return manager, session


class LeanMcp:
    """A minimal MCP client over stdio (newline-delimited JSON-RPC, no validation): isolates the server's cost."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.next_id = 0

    @classmethod
    async def start(cls) -> LeanMcp:
        process = await asyncio.create_subprocess_exec(
            POLYDBG, "serve", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=ENV, limit=1 << 22)
        lean = cls(process)
        await lean.rpc("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                      "clientInfo": {"name": "bench-lean", "version": "0"}})
        lean.write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return lean

    def write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 60.0)
            if not line:
                raise ConnectionError("polydbg serve closed stdout")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message["result"])

    async def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.rpc("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content']}")
        return dict(result.get("structuredContent") or {})

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 10.0)
        except asyncio.TimeoutError:
            self.process.kill()
            await self.process.wait()


class Measured:
    """One polydbg call path: its latencies and the DAP requests it issued per call."""

    def __init__(self, label: str, counted: bool) -> None:
        self.label = label
        self.counted = counted
        self.times = new_sink()
        self.requests: dict[str, list[collections.Counter[str]]] = collections.defaultdict(list)

    async def run(self, op: str, call: Callable[[], Awaitable[Any]]) -> None:
        mark = len(_issued)
        started = time.perf_counter()
        await call()
        self.times[op].append(time.perf_counter() - started)
        if self.counted:
            self.requests[op].append(collections.Counter(_issued[mark:]))

    def issued(self, op: str, skip: int) -> dict[str, float]:
        """Mean DAP requests per call of ``op`` (by command), ignoring the first ``skip`` calls."""
        calls = self.requests[op][skip:]
        total: collections.Counter[str] = collections.Counter()
        for counter in calls:
            total.update(counter)
        return {name: count / len(calls) for name, count in total.items()}


OPS = {"evaluate": "debug_evaluate", "variables": "debug_variables", "stack": "debug_stack",
       "floor": "debug_output"}
SESSION = "session layer, in-process"
INPROC = "MCP, in-process SDK client"
STDIO = "MCP stdio, SDK client"
LEAN = "MCP stdio, lean JSON-RPC client"


async def bench_calls(iters: int, plain_iters: int) -> dict[str, Any]:
    DapClient.send_request = _counting_request  # type: ignore[method-assign]
    raw_plain_sink, raw_sink = new_sink(), new_sink()
    paths = {label: Measured(label, counted=label in (SESSION, INPROC)) for label in (SESSION, INPROC, STDIO, LEAN)}
    manager: SessionManager | None = None
    dap = plain = None
    lean: LeanMcp | None = None
    try:
        dap, thread = await raw_start(nodelay=True)
        plain, plain_thread = await raw_start(nodelay=False)
        manager, session = await session_start()
        lean = await LeanMcp.start()
        async with Client(build_server()) as inproc, Client(stdio_server()) as stdio:
            for client in (inproc, stdio):
                await tool(client, "debug_launch", **launch_tool_args())
            await lean.call_tool("debug_launch", **launch_tool_args())
            frame = (await raw_locals(dap, thread, new_sink()))[0]
            plain_frame = (await raw_locals(plain, plain_thread, new_sink()))[0]

            async def raw_round(client: DebugpyRawDap, tid: int, frame: int, sink: Sink) -> None:
                await client.request("threads", None, sink)
                await client.request("stackTrace", {"threadId": tid, "startFrame": 0, "levels": 20}, sink)
                scopes = await client.request("scopes", {"frameId": frame}, sink)
                await client.request("variables", {"variablesReference": scopes["scopes"][0]["variablesReference"]},
                                     sink)
                await client.request("evaluate", {"expression": EXPRESSION, "frameId": frame, "context": "watch"},
                                     sink)

            sdk_clients = {INPROC: inproc, STDIO: stdio}
            for i in range(iters + WARMUP):  # the first rounds warm up and are dropped below
                await raw_round(dap, thread, frame, raw_sink)
                if i < plain_iters:
                    await raw_round(plain, plain_thread, plain_frame, raw_plain_sink)
                measured = paths[SESSION]
                await measured.run("evaluate", lambda: session.evaluate(EXPRESSION, None))
                await measured.run("variables", lambda: session.variables(None, None, None, 0, 50, None))
                await measured.run("stack", lambda: session.stack(None, 0, 20, False))
                for label, client in sdk_clients.items():
                    measured = paths[label]
                    await measured.run("evaluate", functools.partial(tool, client, "debug_evaluate",
                                                                     expression=EXPRESSION))
                    await measured.run("variables", functools.partial(tool, client, "debug_variables"))
                    await measured.run("stack", functools.partial(tool, client, "debug_stack"))
                    await measured.run("floor", functools.partial(tool, client, "debug_output"))
                measured = paths[LEAN]
                await measured.run("evaluate", lambda: lean.call_tool("debug_evaluate", expression=EXPRESSION))
                await measured.run("variables", lambda: lean.call_tool("debug_variables"))
                await measured.run("stack", lambda: lean.call_tool("debug_stack"))
                await measured.run("floor", lambda: lean.call_tool("debug_output"))
            for client in (inproc, stdio):
                await tool(client, "debug_terminate")
            await lean.call_tool("debug_terminate")
    finally:
        DapClient.send_request = _original_request  # type: ignore[method-assign]
        for raw in (dap, plain):
            if raw is not None:
                await raw.close()
        if manager is not None:
            await manager.close_all()
        if lean is not None:
            await lean.close()

    for sink in (raw_sink, *(m.times for m in paths.values())):
        for key in sink:
            sink[key] = sink[key][WARMUP:]
    raw_plain_sink = {k: v[1:] for k, v in raw_plain_sink.items()}

    def p90(values: list[float]) -> float:
        return sorted(values)[int(len(values) * 0.9)]

    table(f"Raw DAP request latency while stopped (ms; NODELAY: {iters} samples, plain: {plain_iters - 1})",
          ["request", "NODELAY median", "NODELAY min", "NODELAY p90", "plain median"],
          [[name, ms(median(raw_sink[name])), ms(min(raw_sink[name])), ms(p90(raw_sink[name])),
            ms(median(raw_plain_sink[name]))] for name in ("threads", "stackTrace", "scopes", "variables", "evaluate")])

    # DAP requests per call are counted in-process (wrapping DapClient.send_request); the stdio servers run the same
    # code, so the same tool issues the same requests there.
    issued = {op: paths[INPROC].issued(op, WARMUP) for op in OPS}
    issued_session = {op: paths[SESSION].issued(op, WARMUP) for op in ("evaluate", "variables", "stack")}

    def raw_cost(requests: dict[str, float]) -> float:
        return sum(count * median(raw_sink[name]) for name, count in requests.items())

    def described(requests: dict[str, float]) -> str:
        if not requests:
            return "none"
        return " + ".join(name if count == 1 else f"{name}×{count:.2g}" for name, count in sorted(requests.items()))

    rows = []
    overheads: dict[str, dict[str, float]] = collections.defaultdict(dict)
    for label, measured in paths.items():
        for op, tool_name in OPS.items():
            if op not in measured.times:
                continue
            requests = issued_session[op] if label == SESSION else issued[op]
            call = median(measured.times[op])
            cost = raw_cost(requests)
            overheads[label][op] = call - cost
            name = f"session.{op}" if label == SESSION else tool_name
            rows.append([f"{label}: {name}", ms(call), ms(min(measured.times[op])), ms(p90(measured.times[op])),
                         described(requests), ms(cost), ms(call - cost)])
    table(f"Per-call latency and overhead over raw DAP + NODELAY while stopped ({iters} calls each, interleaved)",
          ["call", "median ms", "min ms", "p90 ms", "DAP requests per call", "raw cost ms", "overhead ms"], rows)
    print("  raw cost = Σ requests issued per call × the raw NODELAY median of that request (counted in-process by")
    print("  wrapping DapClient.send_request). debug_output issues no DAP request: it is the MCP round-trip floor.")
    print("  The SDK client validates each result (pydantic, and jsonschema against the advertised outputSchema);")
    print("  the lean client only parses JSON, like a host that does no validation.")
    return {"paths": paths, "overheads": overheads}


# ------------------------------------------------------------------------------------------------

def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


async def main_async(reps: int, iters: int, plain_iters: int) -> None:
    print(f"polydbg flow benchmark — python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"breakpoint {os.path.relpath(PROGRAM)}:{BP_LINE}, load average {os.getloadavg()[0]:.2f}")
    flow = await bench_flow(reps)
    calls = await bench_calls(iters, plain_iters)

    paths: dict[str, Measured] = calls["paths"]
    overheads: dict[str, dict[str, float]] = calls["overheads"]
    inspect_ops = ("evaluate", "variables", "stack")

    def inspection(label: str) -> float:
        return median([x for op in inspect_ops for x in paths[label].times[op]])

    def worst(label: str) -> float:
        return max(overheads[label][op] for op in inspect_ops)

    full = flow["total"][FULL] / flow["total"][RAW_ND]
    minimal = flow["to_exit"][MINIMAL] / flow["to_exit"][RAW_ND]
    minimal_calls = flow["calls"][MINIMAL]
    rows = [
        [f"inspection tool call median ({STDIO})", "≤ 5 ms", f"{ms(inspection(STDIO))} ms",
         verdict(inspection(STDIO) <= 0.005)],
        [f"inspection tool call median ({LEAN})", "≤ 5 ms", f"{ms(inspection(LEAN))} ms",
         verdict(inspection(LEAN) <= 0.005)],
    ]
    for label in (STDIO, LEAN, INPROC, SESSION):
        rows.append([f"per-call overhead, worst of evaluate/variables/stack ({label})", "≤ 2 ms",
                     f"{ms(worst(label))} ms", verdict(worst(label) <= 0.002)])
    rows += [
        ["full flow incl. teardown ÷ raw NODELAY (medians)", "≤ 1.10×", f"{full:.2f}×", verdict(full <= 1.10)],
        ["minimal flow to exit ÷ raw NODELAY (medians)", "≤ 1.10×", f"{minimal:.2f}×", verdict(minimal <= 1.10)],
        ["tool calls for the flow (minimal)", "≤ 5", f"{minimal_calls} (+ debug_terminate = {minimal_calls + 1})",
         verdict(minimal_calls + 1 <= 5)],
    ]
    table("Targets", ["metric", "target", "measured", "verdict"], rows)
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} (other work on this {os.cpu_count()}-core machine "
          "inflates every number)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5, help="flow repetitions per variant (default 5)")
    parser.add_argument("--iters", type=int, default=60, help="calls per micro-benchmark (default 60)")
    parser.add_argument("--plain-iters", type=int, default=12, help="plain-debugpy request rounds (default 12)")
    args = parser.parse_args()
    become_subreaper()
    started = time.perf_counter()
    try:
        asyncio.run(main_async(args.reps, args.iters, args.plain_iters))
    finally:
        report_leftovers()
        print(f"benchmark wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
