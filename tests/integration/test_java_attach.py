"""The java backend's method breakpoints, field watchpoints, raw queries (debug_command) and attach /
detach, through the MCP tools on a real JVM. Attached JVMs are started here and always killed."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

JAVA = PROGRAMS / "java"
TICKER = JAVA / "shop" / "Ticker.java"


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


def at(marker: str) -> dict[str, Any]:
    return {"file": str(TICKER), "line": line_of("java/shop/Ticker.java", marker)}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


def where(report: dict[str, Any]) -> tuple[str, int]:
    return report["location"]["function"], report["location"]["line"]


def line(marker: str) -> int:
    return line_of("java/shop/Ticker.java", marker)


async def breakpoints(tools: Tools) -> dict[int, dict[str, Any]]:
    return {b["id"]: b for b in (await tools("debug_breakpoints"))["breakpoints"]}


# -- method breakpoints -------------------------------------------------------------------------------


async def test_method_breakpoints_bind_loaded_and_later_classes_every_overload_and_hit_counts(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(TICKER), args=["3"], breakpoints=[at("// start")])
    assert where(report) == ("Ticker.main", line("// start")), report
    add = (await tools("debug_break", function="Ticker.add"))["breakpoints"][0]  # loaded: bound at once
    assert add["verified"] and "Ticker.add(int), Ticker.add(String)" in add["message"], add
    put = (await tools("debug_break", function="shop.Ticker.Box.put"))["breakpoints"][0]  # Box loads later
    assert not put["verified"] and "binds when one loads" in put["message"], put
    missing = (await tools("debug_break", function="Ticker.nosuch"))["breakpoints"][0]
    assert not missing["verified"] and "no method 'nosuch' (it has: add, main, read)" in missing["message"], missing
    bad = await tools.text("debug_break", function="Ticker.add(int")
    assert "not a method name" in bad, bad
    await tools("debug_clear", id=missing["id"])

    first = await tools("debug_continue")
    assert first["reason"] == "breakpoint" and where(first) == ("Ticker.add", line("// add int")), first
    assert values(first)["n"] == "0", first
    second = await tools("debug_continue")
    assert where(second) == ("Ticker.add", line("// add string")) and values(second)["s"] == '"ab"', second
    third = await tools("debug_continue")
    assert where(third) == ("Ticker.add", line("// add int")) and values(third)["n"] == "100", third
    boxed = await tools("debug_continue")
    assert where(boxed) == ("Ticker.Box.put", line("// box put")), boxed
    assert (await breakpoints(tools))[put["id"]]["verified"], "bound when Box loaded"
    outer = await tools("debug_break", function="Ticker$Box.put")  # the binary name works too
    assert outer["breakpoints"][0]["verified"], outer

    await tools("debug_clear", all=True)
    counted = (await tools("debug_break", function="add", hit_condition="== 4"))["breakpoints"][0]  # bare name
    assert counted["verified"], counted
    fourth = await tools("debug_continue")  # add(1), add("ab"), other.add(100), then add(2)
    assert where(fourth) == ("Ticker.add", line("// add int")) and values(fourth)["n"] == "2", fourth
    assert (await breakpoints(tools))[counted["id"]]["hits"] == 1
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert "count 9 ticks 3 tick 2" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_method_breakpoints_set_before_any_class_loads_bind_on_restart(tools: Tools) -> None:
    await tools("debug_launch", program=str(TICKER), args=["1"], breakpoints=[at("// start")])
    await tools("debug_break", function="Ticker.<init>")
    await tools("debug_break", function="read")
    restarted = await tools("debug_restart")  # everything is sent again before shop.Ticker loads
    assert where(restarted) == ("Ticker.main", line("// start")), restarted
    built = await tools("debug_continue")
    assert where(built) == ("Ticker.<init>", line("Ticker(String name) {")), built  # its super() call
    assert values(built)["name"] == '"t1"', built
    again = await tools("debug_continue")
    assert values(again)["name"] == '"t2"', again
    reading = await tools("debug_continue")
    assert where(reading) == ("Ticker.read", line("// read count")), reading
    await tools("debug_terminate")


# -- field watchpoints --------------------------------------------------------------------------------


async def test_watch_an_objects_field_and_a_static_field(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(TICKER), args=["3"], breakpoints=[at("// tick")])
    assert values(report)["i"] == "0", report
    mine = (await tools("debug_watch", expression="t.count"))["breakpoints"][0]
    assert mine["verified"] and "of that object only (the one t is now" in mine["message"], mine
    static = (await tools("debug_watch", expression="Ticker.ticks"))["breakpoints"][0]
    assert static["verified"] and "static field Ticker.ticks" in static["message"], static
    local = await tools.error("debug_watch", expression="i")
    assert "'i' is a local variable: the JVM watches fields only" in local, local
    unknown = await tools.error("debug_watch", expression="t.nothing")
    assert "t (Ticker) has no field 'nothing' (its fields: ticks, label, count, name)" in unknown, unknown
    await tools("debug_clear", id=1)

    tick = await tools("debug_continue")
    assert tick["reason"] == "data breakpoint" and tick["description"] == "Ticker.ticks: 0 → 1", tick
    assert where(tick) == ("Ticker.main", line("// tick")), tick
    added = await tools("debug_continue")
    assert added["description"] == "t.count: 2 → 3" and where(added) == ("Ticker.add", line("// add int")), added
    added = await tools("debug_continue")
    assert added["description"] == "t.count: 3 → 5" and where(added)[1] == line("// add string"), added
    tick = await tools("debug_continue")  # other.add(100) writes another Ticker's count: no stop
    assert tick["description"] == "Ticker.ticks: 1 → 2", tick
    listed = await breakpoints(tools)
    assert (listed[mine["id"]]["hits"], listed[static["id"]]["hits"]) == (2, 2), listed
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    await tools("debug_terminate")


async def test_watch_reads_of_this_and_writes_in_every_object(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(TICKER), args=["3"], breakpoints=[at("// read count")])
    assert where(report) == ("Ticker.read", line("// read count")), report
    read = (await tools("debug_watch", expression="count", access="read"))["breakpoints"][0]
    assert read["verified"] and "of this object only (object id" in read["message"], read
    await tools("debug_clear", id=1)
    seen = await tools("debug_continue")
    assert seen["reason"] == "data breakpoint" and seen["description"] == "Ticker.count read: 2", seen
    assert where(seen) == ("Ticker.read", line("// read count")), seen
    await tools("debug_clear", all=True)
    every = (await tools("debug_watch", expression="Ticker.count"))["breakpoints"][0]
    assert "in every Ticker object" in every["message"], every
    written = [(await tools("debug_continue"))["description"] for _ in range(3)]
    assert written == ["Ticker.count: 2 → 3", "Ticker.count: 3 → 5", "Ticker.count: 100 → 200"], written
    label = (await tools("debug_watch", expression="label", access="readWrite"))["breakpoints"][0]
    assert label["verified"] and "static field Ticker.label" in label["message"], label
    await tools("debug_clear", id=every["id"])
    changed = await tools("debug_continue")
    assert changed["description"] == 'Ticker.label: "tick 0" → "tick 1"', changed
    not_loaded = await tools.error("debug_watch", expression="Nowhere.field")
    assert "class Nowhere is not loaded" in not_loaded, not_loaded
    await tools("debug_terminate")


# -- debug_command ------------------------------------------------------------------------------------


async def test_raw_queries(tools: Tools) -> None:
    await tools("debug_launch", program=str(TICKER), args=["3"], breakpoints=[at("// tick")])

    async def run(command: str) -> str:
        return str((await tools("debug_command", command=command))["output"])

    assert "shop.Ticker\n" in await run("classes") + "\n"
    found = await run("classes Ticker")
    assert "shop.Ticker" in found and "shop.Ticker$Box" in found and "2 loaded classes" in found, found
    methods = await run("methods Ticker")
    assert f"void add(int)  lines {line('// add int')}-{line('// add int') + 1}" in methods, methods
    assert "void add(String)" in methods and "static void main(String[])" in methods, methods
    assert "Ticker(String)" in methods, methods
    fields = await run("fields shop.Ticker")
    assert "static int ticks = 0" in fields and 'static String label = "start"' in fields, fields
    assert "final String name" in fields, fields
    threads = await run("threads")
    assert any(row.startswith("*") and "main" in row for row in threads.splitlines()), threads
    assert "JDWP" in await run("version")
    assert "class path:" in await run("classpath")
    assert str(TICKER) in await run("sourcepaths")
    assert "classes [glob]" in await run("help")
    refused = await tools.error("debug_command", command="frobnicate")
    assert "unknown Java query 'frobnicate'; accepted: classes [glob]" in refused, refused
    missing = await tools.error("debug_command", command="methods Nowhere")
    assert "no loaded class is named Nowhere" in missing, missing
    await tools("debug_terminate")


# -- attach and detach --------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ticker")
    subprocess.run(["javac", "-g", "-d", str(out), str(TICKER)], check=True, timeout=120)
    return out


@contextmanager
def jvm(classes: Path, *args: str, suspend: str = "n") -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A JVM running shop.Ticker with the jdwp agent listening on a free loopback port; killed at the end."""
    port = _free_port()
    process = subprocess.Popen(
        ["java", f"-agentlib:jdwp=transport=dt_socket,server=y,suspend={suspend},address=127.0.0.1:{port}",
         "-cp", str(classes), "shop.Ticker", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        assert process.stdout is not None
        assert b"Listening for transport dt_socket" in process.stdout.readline()
        yield process, port
    finally:
        process.kill()
        process.communicate(timeout=30)


async def _exits(process: subprocess.Popen[bytes], timeout_s: float = 15.0) -> int | None:
    for _ in range(int(timeout_s * 20)):
        if process.poll() is not None:
            return process.returncode
        await asyncio.sleep(0.05)
    return None


async def test_attach_binds_in_loaded_classes_detach_leaves_it_running_terminate_ends_it(
        tools: Tools, classes: Path) -> None:
    with jvm(classes, "-1", "20") as (process, port):
        report = await tools("debug_attach", port=port, language="java", breakpoints=[at("// tick")])
        assert report["reason"] == "breakpoint" and where(report) == ("Ticker.main", line("// tick")), report
        assert report["location"]["file"] == str(TICKER), report
        assert "output is not captured" in report["output"]["text"], report
        busy = await tools.error("debug_attach", port=port, language="java")
        assert f"nothing listens on 127.0.0.1:{port}" in busy and "already has a debugger" in busy, busy
        method = (await tools("debug_break", function="Ticker.read"))["breakpoints"][0]
        assert method["verified"], method
        reading = await tools("debug_continue")
        assert where(reading) == ("Ticker.read", line("// read count")), reading
        watched = (await tools("debug_watch", expression="this.count"))["breakpoints"][0]
        assert watched["verified"], watched
        await tools("debug_terminate", detach=True)
        await asyncio.sleep(0.5)
        assert process.poll() is None, "detached: it keeps running"

        again = await tools("debug_attach", port=port, language="java", breakpoints=[at("// box put")])
        assert again["reason"] == "breakpoint" and where(again) == ("Ticker.Box.put", line("// box put")), again
        assert int(values(again)["v"]) > 0, again  # it ran on after the detach, unsuspended
        await tools("debug_terminate")
        assert await _exits(process) == 1, "terminate ends an attached JVM (VirtualMachine.Exit)"


async def test_attach_by_pid_to_a_jvm_waiting_for_its_debugger_and_its_exit(tools: Tools, classes: Path) -> None:
    with jvm(classes, "2", suspend="y") as (process, _port):
        report = await tools("debug_attach", pid=process.pid, breakpoints=[at("// tick")])  # language from the pid
        assert report["reason"] == "breakpoint" and values(report)["i"] == "0", report
        await tools("debug_clear", all=True)
        done = await tools("debug_continue")
        assert done["state"] == "exited" and done.get("exit_code") is None, done  # not ours: no exit status
        assert await _exits(process) == 0
        await tools("debug_terminate")


@asynccontextmanager
async def _server(answer: bytes) -> AsyncIterator[int]:
    async def reply(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(reply, "127.0.0.1", 0)
    try:
        yield int(server.sockets[0].getsockname()[1])
    finally:
        server.close()
        await server.wait_closed()


async def test_attach_errors_say_what_to_do(tools: Tools) -> None:
    port = _free_port()
    nothing = await tools.error("debug_attach", port=port, language="java")
    assert f"nothing listens on 127.0.0.1:{port}: start the JVM with -agentlib:jdwp=" in nothing, nothing
    assert "server=y" in nothing, nothing
    async with _server(b"HTTP/1.1 400 Bad Request\r\n\r\n") as web:
        other = await tools.error("debug_attach", port=web, language="java")
    assert f"127.0.0.1:{web} is not a JVM's jdwp agent" in other, other
    plain = await asyncio.create_subprocess_exec("sleep", "30")
    try:
        said = await tools.error("debug_attach", pid=plain.pid, language="java")
        assert "was not started with the jdwp agent" in said, said
    finally:
        plain.kill()
        await plain.wait()

