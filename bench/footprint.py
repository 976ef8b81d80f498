"""Benchmark: what polydbg costs before any debugging happens — tools/list bytes, start-up time, memory.

(a) tools/list as a client receives it, whole and per tool (name+description / inputSchema / outputSchema);
(b) start-up: ``python -c "import mcp.server.mcpserver"`` vs ``python -c "from polydbg.mcp.server import
    build_server; build_server()"`` (median wall time), plus ``polydbg serve`` spawn → initialize answered,
    and the modules polydbg imports on top of the SDK (``-X importtime``);
(c) memory: VmRSS (and PSS) of ``polydbg serve`` after the MCP handshake, and of its whole process tree
    (server + debugpy adapter + launcher + debuggee) while stopped at a breakpoint; raw debugpy for reference.

Run: .venv/bin/python bench/footprint.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

from mcp import Client, StdioServerParameters
from mcp_types import TextContent

from _util import (
    POLYDBG,
    PROGRAM,
    become_subreaper,
    cmdline,
    descendants,
    line_of,
    median,
    pss_kb,
    report_leftovers,
    rss_kb,
    table,
)
from flow import raw_start

BP_LINE = line_of("mean = total / len(values)")
SDK_IMPORT = "import mcp.server.mcpserver"
POLYDBG_IMPORT = "from polydbg.mcp.server import build_server; build_server()"
KIB = 1024


def compact(obj: Any) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def mib(kb: int) -> str:
    return f"{kb / 1024:.1f}"


def verdict(ok: bool) -> str:
    return "PASS" if ok else "MISS"


def role(pid: int) -> str:
    cmd = cmdline(pid)
    if "polydbg serve" in cmd or cmd.endswith("polydbg"):
        return "polydbg serve"
    if re.search(r"debugpy/launcher \d+ --", cmd):
        return "debugpy launcher"
    if "debugpy.adapter" in cmd or "debugpy/adapter" in cmd:
        return "debugpy adapter"
    if os.path.basename(PROGRAM) in cmd:
        return "debuggee (+ pydevd)"
    return cmd[:40]


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error:
        text = "\n".join(b.text for b in result.content if isinstance(b, TextContent))
        raise RuntimeError(f"{name} failed: {text}")
    return dict(result.structured_content or {})


def server_pid() -> int:
    serving = [pid for pid in descendants(os.getpid()) if role(pid) == "polydbg serve"]
    assert len(serving) == 1, [(pid, cmdline(pid)) for pid in descendants(os.getpid())]
    return serving[0]


# ------------------------------------------------------------------------------------------------
# (a) tools/list
# ------------------------------------------------------------------------------------------------

async def wire_tools_list() -> tuple[int, int]:
    """Bytes of the initialize and tools/list answers exactly as ``polydbg serve`` writes them (JSON-RPC lines)."""
    process = await asyncio.create_subprocess_exec(
        POLYDBG, "serve", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, limit=1 << 22)
    assert process.stdin is not None and process.stdout is not None
    try:
        sizes = []
        for request in (
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}},
        ):
            process.stdin.write(compact(request) + b"\n")
            if "id" in request:
                line = await asyncio.wait_for(process.stdout.readline(), 30.0)
                sizes.append(len(line.rstrip(b"\n")))
        return sizes[0], sizes[1]
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 10.0)


async def bench_tools_list() -> int:
    async with Client(StdioServerParameters(command=POLYDBG, args=["serve"])) as client:
        listing = await client.list_tools()
    whole = listing.model_dump(mode="json", by_alias=True, exclude_none=True)
    total = len(compact(whole))
    rows = []
    for tool in whole["tools"]:
        head = {k: v for k, v in tool.items() if k not in ("inputSchema", "outputSchema")}
        rows.append([tool["name"], len(compact(tool)), len(compact(head)), len(compact(tool.get("inputSchema", {}))),
                     len(compact(tool.get("outputSchema", {}))) if "outputSchema" in tool else 0])
    rows.sort(key=lambda r: -int(r[1]))
    sums = [sum(int(r[i]) for r in rows) for i in range(1, 5)]
    rows.append([f"all {len(rows)} tools (sum)", *sums])
    rows.append(["tools/list result, compact JSON", total, "", "", ""])
    init_bytes, wire_bytes = await wire_tools_list()
    rows.append(["tools/list JSON-RPC line as written by the server", wire_bytes, "", "", ""])
    rows.append(["initialize JSON-RPC line (incl. instructions)", init_bytes, "", "", ""])
    table("tools/list size (bytes, compact UTF-8 JSON of model_dump(mode='json', by_alias=True, exclude_none=True))",
          ["tool", "total", "name+description+annotations", "inputSchema", "outputSchema"], rows)
    return total


# ------------------------------------------------------------------------------------------------
# (b) start-up
# ------------------------------------------------------------------------------------------------

def timed_run(code: str, env: dict[str, str]) -> tuple[float, float, str]:
    """(wall seconds, child CPU seconds, stdout) of ``python -c code``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), done.stdout


async def serve_until_initialized(env: dict[str, str]) -> float:
    started = time.perf_counter()
    process = await asyncio.create_subprocess_exec(
        POLYDBG, "serve", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, env=env)
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(compact({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}}) + b"\n")
    await asyncio.wait_for(process.stdout.readline(), 60.0)
    elapsed = time.perf_counter() - started
    process.stdin.close()
    await asyncio.wait_for(process.wait(), 10.0)
    return elapsed


def import_times(code: str, env: dict[str, str]) -> dict[str, tuple[int, int]]:
    """module → (self µs, cumulative µs) from ``-X importtime``."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-c", code], env=env, check=True,
                          capture_output=True, text=True)
    out = {}
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+(\d+) \|\s+(\d+) \|(\s*)(\S+)", line)
        if found:
            out[found.group(4)] = (int(found.group(1)), int(found.group(2)))
    return out


# In one interpreter: the SDK is imported first, then what polydbg adds is timed on its own (no process noise).
ADDED_IN_PROCESS = (SDK_IMPORT + "; import time; t0 = time.perf_counter(); from polydbg.mcp.server import build_server"
                    "; t1 = time.perf_counter(); build_server(); t2 = time.perf_counter(); print(t1 - t0, t2 - t1)")


async def bench_startup(runs: int) -> tuple[float, float]:
    cache = tempfile.mkdtemp(prefix="polydbg-bench-pycache-")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = cache  # warm, private bytecode cache: independent of the repo's .pyc state
    commands = {"python -c pass": "pass", f'python -c "{SDK_IMPORT}"': SDK_IMPORT,
                f'python -c "{POLYDBG_IMPORT}"': POLYDBG_IMPORT}
    try:
        for code in commands.values():  # warm-up: fills the bytecode cache and the page cache
            timed_run(code, env)
        await serve_until_initialized(env)
        wall: dict[str, list[float]] = {label: [] for label in commands}
        cpu: dict[str, list[float]] = {label: [] for label in commands}
        added_in_process: list[float] = []
        import_part: list[float] = []
        build_part: list[float] = []
        serve: list[float] = []
        for _ in range(runs):
            for label, code in commands.items():
                w, c, _ = timed_run(code, env)
                wall[label].append(w)
                cpu[label].append(c)
            imported, built = (float(x) for x in timed_run(ADDED_IN_PROCESS, env)[2].split())
            import_part.append(imported)
            build_part.append(built)
            added_in_process.append(imported + built)
            serve.append(await serve_until_initialized(env))
        sdk_modules = import_times(SDK_IMPORT, env)
        our_modules = import_times(POLYDBG_IMPORT, env)
    finally:
        shutil.rmtree(cache, ignore_errors=True)

    def fmt(seconds: float, sign: bool = False) -> str:
        return f"{seconds * 1000:+.0f}" if sign else f"{seconds * 1000:.0f}"

    labels = list(commands)
    rows = [[label, fmt(median(wall[label])), fmt(min(wall[label])), fmt(max(wall[label])), fmt(median(cpu[label]))]
            for label in labels]
    sdk, ours = labels[1], labels[2]
    added_wall = median(wall[ours]) - median(wall[sdk])
    rows.append(["difference polydbg − SDK", fmt(added_wall, True), fmt(min(wall[ours]) - min(wall[sdk]), True), "",
                 fmt(median(cpu[ours]) - median(cpu[sdk]), True)])
    rows.append(["same interpreter: polydbg import + build_server() after the SDK", fmt(median(added_in_process)),
                 fmt(min(added_in_process)), fmt(max(added_in_process)), ""])
    rows.append(["  of which: import polydbg.mcp.server", fmt(median(import_part)), fmt(min(import_part)),
                 fmt(max(import_part)), ""])
    rows.append(["  of which: build_server() (SDK builds 18 tool schemas)", fmt(median(build_part)),
                 fmt(min(build_part)), fmt(max(build_part)), ""])
    rows.append(["polydbg serve: spawn → initialize answered", fmt(median(serve)), fmt(min(serve)), fmt(max(serve)),
                 ""])
    table(f"Start-up (ms, {runs} runs each, interleaved, warm private bytecode cache)",
          ["command", "wall median", "wall min", "wall max", "CPU median"], rows)

    extra = {name: t for name, t in our_modules.items() if name not in sdk_modules}
    top = sorted(extra.items(), key=lambda kv: -kv[1][0])[:8]
    table(f"Modules polydbg imports on top of the SDK (-X importtime, one run): {len(extra)} modules, "
          f"{sum(t[0] for t in extra.values()) / 1000:.0f} ms self time in total",
          ["module", "self ms", "cumulative ms"], [[n, f"{s / 1000:.1f}", f"{c / 1000:.1f}"] for n, (s, c) in top])
    return added_wall, median(added_in_process)


# ------------------------------------------------------------------------------------------------
# (c) memory
# ------------------------------------------------------------------------------------------------

def tree_rows(root: int) -> tuple[list[list[object]], int, int]:
    pids = [root, *descendants(root)]
    rows: list[list[object]] = []
    total_rss = total_pss = 0
    for pid in pids:
        rss, pss = rss_kb(pid), pss_kb(pid)
        total_rss += rss
        total_pss += pss
        rows.append([role(pid), pid, os.getpgid(pid), mib(rss), mib(pss)])
    return rows, total_rss, total_pss


async def bench_memory() -> tuple[int, int]:
    async with Client(StdioServerParameters(command=POLYDBG, args=["serve"])) as client:
        pid = server_pid()
        await asyncio.sleep(0.5)
        idle_rss, idle_pss = rss_kb(pid), pss_kb(pid)
        await client.list_tools()
        listed_rss = rss_kb(pid)
        report = await call(client, "debug_launch", program=PROGRAM, python=sys.executable,
                            breakpoints=[{"file": PROGRAM, "line": BP_LINE}])
        assert report["state"] == "stopped", report
        await asyncio.sleep(0.5)
        rows, stopped_rss, stopped_pss = tree_rows(pid)
        await call(client, "debug_continue")
        await call(client, "debug_terminate")
        await asyncio.sleep(0.5)
        after_rss = rss_kb(pid)

    # The same debuggee under plain debugpy (no polydbg): the adapter's tree while stopped at the breakpoint.
    dap, _thread = await raw_start(nodelay=False)
    try:
        await asyncio.sleep(0.5)
        raw_rows, raw_rss, raw_pss = tree_rows(dap.process.pid)
    finally:
        await dap.close()

    table("polydbg serve memory (MiB)", ["moment", "VmRSS", "PSS"], [
        ["after the MCP initialize handshake (idle)", mib(idle_rss), mib(idle_pss)],
        ["after tools/list", mib(listed_rss), ""],
        ["after one debug session ended", mib(after_rss), ""],
    ])
    rows.append(["total", "", "", mib(stopped_rss), mib(stopped_pss)])
    table("Process tree while stopped at the breakpoint, through polydbg (MiB; found via /proc PPid links)",
          ["process", "pid", "pgid", "VmRSS", "PSS"], rows)
    raw_rows.append(["total", "", "", mib(raw_rss), mib(raw_pss)])
    table("For reference: plain debugpy tree (adapter + launcher + debuggee) at the same breakpoint (MiB)",
          ["process", "pid", "pgid", "VmRSS", "PSS"], raw_rows)
    return idle_rss, stopped_rss


async def main_async(runs: int) -> None:
    print(f"polydbg footprint benchmark — python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"load average {os.getloadavg()[0]:.2f}")
    tools_bytes = await bench_tools_list()
    added, added_in_process = await bench_startup(runs)
    idle, stopped = await bench_memory()
    table("Targets (KB = 1024 bytes, MB = MiB)", ["metric", "target", "measured", "verdict"], [
        ["tools/list, compact JSON", "≤ 8 KB (8192 B)", f"{tools_bytes} B ({tools_bytes / KIB:.1f} KB)",
         verdict(tools_bytes <= 8 * KIB)],
        ["start-up added over importing the SDK (wall, median − median)", "≤ 100 ms", f"{added * 1000:+.0f} ms",
         verdict(added <= 0.100)],
        ["start-up added over importing the SDK (same interpreter)", "≤ 100 ms",
         f"{added_in_process * 1000:.0f} ms", verdict(added_in_process <= 0.100)],
        ["idle VmRSS of polydbg serve", "≤ 75 MB", f"{mib(idle)} MB", verdict(idle <= 75 * KIB)],
        ["VmRSS of polydbg + adapter + launcher + debuggee at a breakpoint", "≤ 160 MB", f"{mib(stopped)} MB",
         verdict(stopped <= 160 * KIB)],
    ])
    print(f"  load average at the end: {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="start-up runs per command (default 5)")
    args = parser.parse_args()
    become_subreaper()
    started = time.perf_counter()
    try:
        asyncio.run(main_async(args.runs))
    finally:
        report_leftovers()
        print(f"benchmark wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
