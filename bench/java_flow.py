"""Benchmark: the debugging flow on a Java program — a raw JDWP client vs polydbg through MCP.

Program: bench/programs/java/Flow.java, compiled once with ``javac -g`` (both sides launch the same
class, so the compile is not measured). Same run, round-robin, after a discarded warm-up round:

  a. raw: polydbg's ``JdwpClient`` used directly: listen on loopback, spawn the JVM with
     ``-agentlib:jdwp=…,server=n,suspend=y``, handshake, IDSizes, a ClassPrepare request for the
     class, resume, set the breakpoint from the line table when it loads, resume, wait for the hit,
     Frames + VariableTable + GetValues (the locals), resume, wait for the JVM's exit;
  b. polydbg through an in-process MCP client: ``debug_launch`` (with the breakpoint) →
     ``debug_evaluate`` → ``debug_continue`` (to the exit) → ``debug_terminate``.

Then per-call latency while stopped (``debug_evaluate`` of ``n * 2`` and of ``result + n``,
``debug_variables``, against the raw StackFrame.GetValues), and the cost of a conditional breakpoint
per hit: the time to run the loop with a breakpoint whose condition is false until the last
iteration, minus the same loop without it, divided by the iterations.

Targets (issue 9): launch → first stop ≤ 1.3× raw; inspection calls ≤ 5 ms median; a condition
≤ 2 ms per hit; ≤ 5 tool calls.

Run: .venv/bin/python bench/java_flow.py [--runs N] [--iters M] [--hits K]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client

from _util import BENCH, median, ms, table
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Location, Modifier, Suspend, Tag
from polydbg.mcp.server import build_server

SOURCE = BENCH / "programs" / "java" / "Flow.java"


def _line(marker: str) -> int:
    return next(n for n, text in enumerate(SOURCE.read_text().splitlines(), 1) if marker in text)


SQUARE, LOOP, AFTER = _line("// in square"), _line("// in loop"), _line("// after loop")


async def start_jvm(classes: str, main_class: str, timeout: float = 30.0
                    ) -> tuple[JdwpClient, asyncio.subprocess.Process, asyncio.Queue[Event]]:
    """A JVM started suspended, connected to a bare JDWP client (it dials a port we listen on); its events queued."""
    accepted: asyncio.Future[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = (
        asyncio.get_running_loop().create_future())
    server = await asyncio.start_server(lambda r, w: accepted.set_result((r, w)), "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    process = await asyncio.create_subprocess_exec(
        "java", f"-agentlib:jdwp=transport=dt_socket,server=n,address=127.0.0.1:{port},suspend=y",
        "-cp", classes, main_class, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        reader, writer = await asyncio.wait_for(accepted, timeout)
        client = await JdwpClient.connect(reader, writer, timeout)
    except BaseException:
        process.kill()
        await process.wait()
        raise
    finally:
        server.close()
    events: asyncio.Queue[Event] = asyncio.Queue()

    def queue(body: dict[str, Any]) -> None:
        for event in body["events"]:
            events.put_nowait(event)

    client.on_event("events", queue)
    return client, process, events


class RawRun:
    """The flow with a bare JDWP client; times to the first stop and to the end."""

    def __init__(self, classes: str) -> None:
        self.classes = classes

    async def start(self) -> tuple[JdwpClient, asyncio.subprocess.Process, Event, asyncio.Queue[Event]]:
        client, process, events = await start_jvm(self.classes, "Flow")

        async def event_request(kind: int, suspend: int, modifiers: bytes, count: int) -> None:
            data = client.writer().u1(kind).u1(suspend).i4(count).bytes() + modifiers
            await client.request(CommandSet.EVENT_REQUEST, 1, data)

        await event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD,
                            client.writer().u1(Modifier.CLASS_MATCH).string("Flow").bytes(), 1)
        await client.request(CommandSet.VM, 9)
        prepared = await next_event(events, EventKind.CLASS_PREPARE)
        methods = await client.request(CommandSet.REFERENCE_TYPE, 5, client.writer().reference_type(
            prepared.type_id).bytes())
        where = None
        for _ in range(methods.i4()):
            method_id, name, _, _ = methods.method_id(), methods.string(), methods.string(), methods.i4()
            if name == "square":
                table_reply = await client.request(CommandSet.METHOD, 1, client.writer().reference_type(
                    prepared.type_id).method_id(method_id).bytes())
                table_reply.i8()
                table_reply.i8()
                lines = [(table_reply.i8(), table_reply.i4()) for _ in range(table_reply.i4())]
                index = min(code for code, line in lines if line == SQUARE)
                where = Location(1, prepared.type_id, method_id, index)
        assert where is not None
        await event_request(EventKind.BREAKPOINT, Suspend.ALL, client.writer().u1(Modifier.LOCATION_ONLY).location(
            where).bytes(), 1)
        await client.request(CommandSet.THREAD_REFERENCE, 3, client.writer().object_id(prepared.thread).bytes())
        hit = await next_event(events, EventKind.BREAKPOINT)
        return client, process, hit, events

    async def locals(self, client: JdwpClient, hit: Event) -> None:
        frames = await client.request(CommandSet.THREAD_REFERENCE, 6, client.writer().object_id(hit.thread).i4(
            0).i4(1).bytes())
        frames.i4()
        frame_id = frames.frame_id()
        assert hit.location is not None
        table_reply = await client.request(CommandSet.METHOD, 2, client.writer().reference_type(
            hit.location.class_id).method_id(hit.location.method_id).bytes())
        table_reply.i4()
        slots = [(table_reply.i8(), table_reply.string(), table_reply.string(), table_reply.i4(), table_reply.i4())
                 for _ in range(table_reply.i4())]
        writer = client.writer().object_id(hit.thread).frame_id(frame_id).i4(len(slots))
        for slot in slots:
            writer.i4(slot[4]).u1(Tag.INT)
        await client.request(CommandSet.STACK_FRAME, 1, writer.bytes())

    async def flow(self) -> tuple[float, float]:
        began = time.perf_counter()
        client, process, hit, _ = await self.start()
        first = time.perf_counter() - began
        await self.locals(client, hit)
        await client.request(CommandSet.VM, 9)
        await process.wait()
        await client.close("done")
        return first, time.perf_counter() - began


async def next_event(events: asyncio.Queue[Event], kind: int) -> Event:
    while True:
        event = await asyncio.wait_for(events.get(), 30)
        if event.kind == kind:
            return event


async def polydbg_flow(client: Client, classes: str) -> tuple[float, float, int]:
    began = time.perf_counter()
    calls = 0

    async def call(tool: str, **arguments: Any) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        result = await client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        return dict(result.structured_content or {})

    report = await call("debug_launch", program="Flow", runtime_args=["-cp", classes], cwd=classes,
                        breakpoints=[{"file": str(SOURCE), "line": SQUARE}])
    first = time.perf_counter() - began
    assert report["reason"] == "breakpoint", report
    await call("debug_evaluate", expression="n * 2")
    done = await call("debug_continue")
    assert done["state"] == "exited", done
    await call("debug_terminate")
    return first, time.perf_counter() - began, calls


async def latency(client: Client, classes: str, iters: int) -> list[list[object]]:
    raw = RawRun(classes)
    jdwp, process, hit, _ = await raw.start()
    await client.call_tool("debug_launch", {"program": "Flow", "runtime_args": ["-cp", classes], "cwd": classes,
                                            "breakpoints": [{"file": str(SOURCE), "line": SQUARE}]})
    samples: dict[str, list[float]] = {k: [] for k in ("raw Frames+VariableTable+GetValues", "debug_evaluate n * 2",
                                                       "debug_evaluate Integer.toString(n).length()",
                                                       "debug_variables")}
    for _ in range(iters):
        t = time.perf_counter()
        await raw.locals(jdwp, hit)
        samples["raw Frames+VariableTable+GetValues"].append(time.perf_counter() - t)
        for expression in ("n * 2", "Integer.toString(n).length()"):
            t = time.perf_counter()
            result = await client.call_tool("debug_evaluate", {"expression": expression})
            assert not result.is_error, result.content
            samples[f"debug_evaluate {expression}"].append(time.perf_counter() - t)
        t = time.perf_counter()
        await client.call_tool("debug_variables", {"count": 20})
        samples["debug_variables"].append(time.perf_counter() - t)
    await client.call_tool("debug_terminate", {})
    await jdwp.close("done")
    process.kill()
    await process.wait()
    return [[name, ms(median(values)), ms(min(values))] for name, values in samples.items()]


async def condition_cost(client: Client, classes: str, hits: int) -> tuple[float, float]:
    """Seconds to run the loop of ``hits`` iterations from a stop before it to a stop after it, with a
    never-true-until-the-end conditional breakpoint in it, and without."""
    durations = []
    for condition in (None, f"i == {hits - 1}"):
        report = await client.call_tool("debug_launch", {
            "program": "Flow", "args": ["3", str(hits)], "runtime_args": ["-cp", classes], "cwd": classes,
            "breakpoints": [{"file": str(SOURCE), "line": SQUARE}]})
        assert not report.is_error, report.content
        lines = [{"file": str(SOURCE), "line": AFTER}]
        if condition:
            lines.insert(0, {"file": str(SOURCE), "line": LOOP, "condition": condition})
        for spec in lines:
            added = await client.call_tool("debug_break", spec)
            assert not added.is_error, added.content
        began = time.perf_counter()
        stop = await client.call_tool("debug_continue", {"timeout_s": 120})
        durations.append(time.perf_counter() - began)
        body = dict(stop.structured_content or {})
        assert body.get("reason") == "breakpoint", body
        await client.call_tool("debug_terminate", {})
    return durations[0], durations[1]


async def main(runs: int, iters: int, hits: int) -> None:
    classes = tempfile.mkdtemp(prefix="polydbg-bench-java-")
    try:
        compiled = await asyncio.create_subprocess_exec("javac", "-g", "-d", classes, str(SOURCE))
        assert await compiled.wait() == 0, "javac failed"
        shutil.copy(SOURCE, Path(classes) / SOURCE.name)
        raw = RawRun(classes)
        raw_first: list[float] = []
        raw_total: list[float] = []
        ours_first: list[float] = []
        ours_total: list[float] = []
        calls = 0
        async with Client(build_server()) as client:
            await raw.flow()
            await polydbg_flow(client, classes)  # warm-up
            for _ in range(runs):
                first, total = await raw.flow()
                raw_first.append(first)
                raw_total.append(total)
                first, total, calls = await polydbg_flow(client, classes)
                ours_first.append(first)
                ours_total.append(total)
            latency_rows = await latency(client, classes, iters)
            plain, conditional = await condition_cost(client, classes, hits)
        table(f"java flow, median of {runs} runs (ms)", ["", "raw JDWP", "polydbg (MCP)", "ratio"], [
            ["launch → first stop", ms(median(raw_first)), ms(median(ours_first)),
             f"{median(ours_first) / median(raw_first):.2f}×"],
            ["whole flow", ms(median(raw_total)), ms(median(ours_total)),
             f"{median(ours_total) / median(raw_total):.2f}×"],
            ["tool calls", "", str(calls), ""]])
        table(f"per-call latency while stopped, {iters} iterations (ms)", ["call", "median", "min"], latency_rows)
        table(f"conditional breakpoint, {hits} hits (ms)", ["", "value"], [
            ["loop without the breakpoint", ms(plain)], ["loop with a false condition", ms(conditional)],
            ["cost per hit", ms((conditional - plain) / hits)]])
    finally:
        shutil.rmtree(classes, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--iters", type=int, default=50)
    parser.add_argument("--hits", type=int, default=500)
    options = parser.parse_args()
    asyncio.run(main(options.runs, options.iters, options.hits))
