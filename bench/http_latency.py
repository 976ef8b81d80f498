"""Benchmark: MCP over Streamable HTTP vs over stdio, and many HTTP clients at once.

Program: bench/programs/flow_target.py, stopped at its breakpoint. Same run, two parts:

  1. Latency while stopped, ``--iters`` interleaved rounds: ``debug_evaluate`` (one DAP round trip
     underneath) and ``debug_output`` (none: the transport's floor) on three kinds of connection to real
     ``polydbg serve`` subprocesses — stdio, HTTP on the 2025-11-25 revision (``initialize``,
     ``Mcp-Session-Id``, an SSE stream per answer) and HTTP on 2026-07-28 (sessionless, a JSON answer),
     both with the bearer token — each twice: through the SDK's Python client, and through a lean client
     written here (newline JSON-RPC on the pipes; HTTP/1.1 keep-alive on one socket, no validation), which
     isolates what the server costs. Target (issue 10): an inspection call over HTTP ≤ 2 ms more than over
     stdio (medians; judged on the lean clients, the SDK client's own HTTP cost shown beside it).
  2. Load: ``--clients`` HTTP clients (2025-11-25, each its own MCP session) at once, each running
     ``--sessions`` debug sessions at once: ``debug_launch`` (to the breakpoint) → 3× ``debug_evaluate`` →
     ``debug_step`` → ``debug_continue`` (to the exit) → ``debug_terminate``. Target: 20 clients × 2
     sessions without an error on this machine.

Run: .venv/bin/python bench/http_latency.py [--iters N] [--clients N] [--sessions N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from _util import POLYDBG, PROGRAM, ROOT, become_subreaper, line_of, median, ms, report_leftovers, table

TOKEN = "bench-token-" + "b" * 32
BP_LINE = line_of("mean = total / len(values)")
STDIO, HTTP_2025, HTTP_2026 = "stdio", "HTTP 2025-11-25", "HTTP 2026-07-28"


def _quantile(values: list[float], q: float) -> float:
    data = sorted(values)
    return data[min(len(data) - 1, int(q * len(data)))] if data else float("nan")


def _text(result: Any) -> str:
    return "\n".join(b.text for b in result.content if isinstance(b, TextContent))


async def call(client: Client, name: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    if result.is_error or result.structured_content is None:
        raise RuntimeError(f"{name}: {_text(result)}")
    return dict(result.structured_content)


@contextlib.asynccontextmanager
async def http_server() -> AsyncIterator[str]:
    """``polydbg serve --http --port 0`` (token in the environment); yields its URL."""
    env = {**os.environ, "POLYDBG_TOKEN": TOKEN}
    process = await asyncio.create_subprocess_exec(POLYDBG, "serve", "--http", "--port", "0", cwd=str(ROOT),
                                                   env=env, stdin=subprocess.DEVNULL,
                                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    url = None
    while url is None:
        line = (await asyncio.wait_for(process.stderr.readline(), 30)).decode()
        if not line:
            raise RuntimeError("polydbg serve --http did not start")
        if "serving MCP over Streamable HTTP at" in line:
            url = line.split()[-1]

    async def drain() -> None:
        assert process.stderr is not None
        while await process.stderr.readline():
            pass

    drainer = asyncio.get_running_loop().create_task(drain())
    try:
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), 20)
        except asyncio.TimeoutError:
            process.kill()
            await process.wait()
        drainer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await drainer


@contextlib.asynccontextmanager
async def http_client(url: str, mode: str) -> AsyncIterator[Client]:
    async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {TOKEN}"},
                                  timeout=httpx2.Timeout(60, read=300)) as http, \
            Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


def launch_args() -> dict[str, Any]:
    return {"program": PROGRAM, "breakpoints": [{"file": PROGRAM, "line": BP_LINE}]}


# -- lean clients: what the server costs, without a client library's ---------------------------------------


class LeanStdio:
    """Newline-delimited JSON-RPC on ``polydbg serve``'s pipes."""

    async def open(self) -> LeanStdio:
        self.process = await asyncio.create_subprocess_exec(
            POLYDBG, "serve", cwd=str(ROOT), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, limit=1 << 22)
        self.next_id = 0
        await self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                      "clientInfo": {"name": "bench-lean", "version": "0"}})
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")

    async def rpc(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.process.stdout is not None
        while True:
            message = json.loads(await asyncio.wait_for(self.process.stdout.readline(), 60))
            if message.get("id") == self.next_id:
                return dict(message["result"])

    async def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.rpc("tools/call", {"name": name, "arguments": arguments})
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content']}")
        return dict(result["structuredContent"])

    async def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await asyncio.wait_for(self.process.wait(), 20)


class LeanHttp:
    """MCP over HTTP/1.1 keep-alive on one socket: a POST per message, a JSON or SSE answer read whole."""

    def __init__(self, url: str, modern: bool) -> None:
        self.authority = url.split("//", 1)[1].split("/", 1)[0]
        self.modern = modern
        self.session: str | None = None
        self.next_id = 0
        self.meta = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                     "io.modelcontextprotocol/clientInfo": {"name": "bench-lean", "version": "0"},
                     "io.modelcontextprotocol/clientCapabilities": {}}

    async def _connect(self) -> None:
        host, port = self.authority.rsplit(":", 1)
        self.reader, self.writer = await asyncio.open_connection(host, int(port))

    async def open(self) -> LeanHttp:
        await self._connect()
        if not self.modern:
            await self.rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                          "clientInfo": {"name": "bench-lean", "version": "0"}})
            await self._post({"jsonrpc": "2.0", "method": "notifications/initialized"}, "")
        return self

    async def _post(self, message: dict[str, Any], method: str, name: str = "") -> bytes:
        body = json.dumps(message, separators=(",", ":")).encode()
        headers = ["POST /mcp HTTP/1.1", f"Host: {self.authority}", f"Authorization: Bearer {TOKEN}",
                   "Accept: application/json, text/event-stream", "Content-Type: application/json",
                   f"Content-Length: {len(body)}"]
        if self.modern:
            headers += ["MCP-Protocol-Version: 2026-07-28", f"Mcp-Method: {method}"] + (
                [f"Mcp-Name: {name}"] if name else [])
        elif self.session:
            headers += ["MCP-Protocol-Version: 2025-11-25", f"Mcp-Session-Id: {self.session}"]
        request = ("\r\n".join(headers) + "\r\n\r\n").encode() + body
        self.writer.write(request)
        status = await self.reader.readline()
        if not status:  # uvicorn closes a connection idle for 5 s: open another, as any HTTP client does
            await self._connect()
            self.writer.write(request)
            status = await self.reader.readline()
        if not status.startswith(b"HTTP/1.1 2"):
            raise ConnectionError(f"{method}: {status.decode(errors='replace').strip() or 'connection closed'}")
        length = None
        while (line := await self.reader.readline()) != b"\r\n":
            if not line:
                raise ConnectionError(f"{method}: connection closed")
            key, _, value = line.decode().partition(":")
            if key.lower() == "content-length":
                length = int(value)
            elif key.lower() == "mcp-session-id":
                self.session = value.strip()
        if length is not None:
            return await self.reader.readexactly(length)
        data = b""  # chunked (an SSE stream that ends with the answer)
        while (size := int((await self.reader.readline()).strip(), 16)) != 0:
            data += await self.reader.readexactly(size)
            await self.reader.readline()
        await self.reader.readline()
        return data

    async def rpc(self, method: str, params: dict[str, Any], name: str = "") -> dict[str, Any]:
        self.next_id += 1
        if self.modern:
            params = {**params, "_meta": self.meta}
        raw = await self._post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params},
                               method, name)
        if raw.startswith(b"{"):
            return dict(json.loads(raw)["result"])
        data = [line[5:] for line in raw.split(b"\r\n") if line.startswith(b"data:")]
        return dict(json.loads(data[-1])["result"])

    async def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        result = await self.rpc("tools/call", {"name": name, "arguments": arguments}, name)
        if result.get("isError"):
            raise RuntimeError(f"{name}: {result['content']}")
        return dict(result["structuredContent"])

    async def close(self) -> None:
        if hasattr(self, "writer"):
            self.writer.close()
            await self.writer.wait_closed()


class SdkCaller:
    def __init__(self, client: Client) -> None:
        self.client = client

    async def call_tool(self, name: str, **arguments: Any) -> dict[str, Any]:
        return await call(self.client, name, **arguments)


# -- part 1: latency --------------------------------------------------------------------------------------

PATHS = [f"{kind} {transport}" for kind in ("SDK", "lean") for transport in (STDIO, HTTP_2025, HTTP_2026)]


async def bench_latency(url: str, iters: int) -> dict[str, dict[str, list[float]]]:
    times: dict[str, dict[str, list[float]]] = {label: {"evaluate": [], "output": []} for label in PATHS}
    stdio = StdioServerParameters(command=POLYDBG, args=["serve"], cwd=str(ROOT))
    lean_stdio = await LeanStdio().open()
    lean_2025, lean_2026 = LeanHttp(url, modern=False), LeanHttp(url, modern=True)
    try:
        async with Client(stdio) as on_stdio, http_client(url, "legacy") as on_2025, \
                http_client(url, "2026-07-28") as on_2026:
            await lean_2025.open()
            await lean_2026.open()
            callers: dict[str, Any] = dict(zip(PATHS, [SdkCaller(on_stdio), SdkCaller(on_2025), SdkCaller(on_2026),
                                                       lean_stdio, lean_2025, lean_2026], strict=True))
            sessions = {}
            for label, caller in callers.items():
                report = await caller.call_tool("debug_launch", **launch_args())
                assert report["state"] == "stopped", report
                sessions[label] = report["session_id"]
            for round_ in range(iters + 3):  # the first 3 rounds warm up
                for label, caller in callers.items():
                    for op, name, arguments in (("evaluate", "debug_evaluate", {"expression": "total + 1"}),
                                                ("output", "debug_output", {})):
                        began = time.perf_counter()
                        await caller.call_tool(name, session_id=sessions[label], **arguments)
                        if round_ >= 3:
                            times[label][op].append(time.perf_counter() - began)
            for label, caller in callers.items():
                await caller.call_tool("debug_terminate", session_id=sessions[label])
    finally:
        for lean in (lean_stdio, lean_2025, lean_2026):
            await lean.close()
    return times


# -- part 2: load ---------------------------------------------------------------------------------------------


async def one_session(client: Client, record: dict[str, list[float]]) -> None:
    began = time.perf_counter()
    report = await call(client, "debug_launch", **launch_args())
    record["launch"].append(time.perf_counter() - began)
    if report["state"] != "stopped":
        raise RuntimeError(f"launch did not stop at the breakpoint: {report['state']}")
    session_id = report["session_id"]
    for _ in range(3):
        began = time.perf_counter()
        value = await call(client, "debug_evaluate", expression="total + 1", session_id=session_id)
        record["evaluate"].append(time.perf_counter() - began)
        if value["value"] != "1226":
            raise RuntimeError(f"evaluate gave {value['value']}")
    began = time.perf_counter()
    await call(client, "debug_step", session_id=session_id)
    record["step"].append(time.perf_counter() - began)
    began = time.perf_counter()
    done = await call(client, "debug_continue", session_id=session_id, timeout_s=120)
    record["continue"].append(time.perf_counter() - began)
    if done["state"] != "exited":
        raise RuntimeError(f"continue ended {done['state']}")
    await call(client, "debug_terminate", session_id=session_id)


async def one_client(url: str, sessions: int, record: dict[str, list[float]], errors: list[str]) -> None:
    try:
        async with http_client(url, "legacy") as client:
            results = await asyncio.gather(*(one_session(client, record) for _ in range(sessions)),
                                           return_exceptions=True)
            errors.extend(f"{type(r).__name__}: {r}" for r in results if isinstance(r, BaseException))
            listed = await call(client, "debug_sessions")
            if listed["sessions"]:
                errors.append(f"sessions left: {listed['sessions']}")
    except Exception as exc:
        errors.append(f"client: {type(exc).__name__}: {exc}")


async def bench_load(url: str, clients: int, sessions: int) -> tuple[float, dict[str, list[float]], list[str]]:
    record: dict[str, list[float]] = {"launch": [], "evaluate": [], "step": [], "continue": []}
    errors: list[str] = []
    began = time.perf_counter()
    await asyncio.gather(*(one_client(url, sessions, record, errors) for _ in range(clients)))
    return time.perf_counter() - began, record, errors


async def main_async(iters: int, clients: int, sessions: int) -> None:
    print(f"polydbg HTTP benchmark — python {sys.version.split()[0]}, {os.cpu_count()} cores, "
          f"breakpoint {os.path.relpath(PROGRAM)}:{BP_LINE}, load average {os.getloadavg()[0]:.2f}")
    async with http_server() as url:
        times = await bench_latency(url, iters)
        rows = []
        for label, ops in times.items():
            base = label.split(" ", 1)[0] + " " + STDIO
            for op, values in ops.items():
                rows.append([f"{op} ({label})", len(values), ms(median(values)), ms(_quantile(values, 0.9)),
                             ms(median(values) - median(times[base][op]))])
        table(f"Latency while stopped ({iters} interleaved rounds), ms",
              ["call (client, transport)", "n", "median", "p90", "vs stdio, same client"], rows)

        wall, record, errors = await bench_load(url, clients, sessions)
        rows = [[op, len(v), ms(median(v)), ms(_quantile(v, 0.9)), ms(max(v) if v else float("nan"))]
                for op, v in record.items()]
        table(f"Load: {clients} clients × {sessions} sessions at once ({wall:.1f} s wall), ms",
              ["tool", "calls", "median", "p90", "max"], rows)
        for error in errors[:10]:
            print(f"  error: {error}")

    def extra(kind: str, http: str) -> float:
        return median(times[f"{kind} {http}"]["evaluate"]) - median(times[f"{kind} {STDIO}"]["evaluate"])

    flows = len(record["continue"])
    rows = []
    for http in (HTTP_2026, HTTP_2025):
        rows.append([f"debug_evaluate over {http} − over stdio (medians, lean clients: the server's cost)", "≤ 2 ms",
                     f"{ms(extra('lean', http))} ms", "PASS" if extra("lean", http) <= 0.002 else "MISS"])
        rows.append(["  the same through the SDK's Python client (its own HTTP cost included)", "(shown)",
                     f"{ms(extra('SDK', http))} ms", "-"])
    table("Targets", ["metric", "target", "measured", "verdict"], [
        *rows,
        [f"{clients} clients × {sessions} sessions at once", "no error",
         f"{len(errors)} errors, {flows}/{clients * sessions} flows done",
         "PASS" if not errors and flows == clients * sessions else "MISS"],
    ])
    print(f"  load average at the end: {os.getloadavg()[0]:.2f} (other work on this {os.cpu_count()}-core machine "
          "inflates every number)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iters", type=int, default=60, help="latency rounds (default 60)")
    parser.add_argument("--clients", type=int, default=20, help="HTTP clients at once (default 20)")
    parser.add_argument("--sessions", type=int, default=2, help="debug sessions per client (default 2)")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # a SIGTERM unwinds too: the server is stopped
    become_subreaper()
    started = time.perf_counter()
    try:
        asyncio.run(main_async(args.iters, args.clients, args.sessions))
    finally:
        report_leftovers()
        print(f"benchmark wall time: {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
