"""The java backend at runtime, through the MCP tools on a real JVM: threads (names, states, stops in
workers and pools, pausing a busy worker), output (stdout and stderr apart, 100 MB without a stall),
values (every primitive, null, non-ASCII text, statics, inherited fields, scoping, ``this``), an
uncaught exception, and no JVM left behind."""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from polydbg.mcp import render
from polydbg.session.model import StackResult
from tests.conftest import PROGRAMS, Tools, line_of, process_table, require

JAVA = PROGRAMS / "java"
_PROGRAMS = ("Workers", "Joiner", "Streams", "Flood", "Values", "Uncaught")
_JVM_OF = re.compile(rf"\bjava\b.*-agentlib:jdwp.*\b({'|'.join(_PROGRAMS)})\b")


def _jvms() -> dict[int, str]:
    """Live JVMs (started with the jdwp agent) running one of this file's programs."""
    return {pid: cmd for pid, (_, cmd) in process_table().items() if _JVM_OF.search(cmd)}


@pytest.fixture(autouse=True)
def _java_and_no_jvm_left() -> Iterator[None]:
    require("java", "javac")
    before = set(_jvms())
    yield
    left = {pid: cmd for pid, cmd in _jvms().items() if pid not in before}
    for pid in list(left):  # a JVM being killed may take a moment to go
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            left.pop(pid)
            continue
        try:
            if select.select([fd], [], [], 5.0)[0]:
                left.pop(pid)
        finally:
            os.close(fd)
    assert not left, f"JVMs left behind: {left}"


def at(name: str, marker: str) -> dict[str, Any]:
    return {"file": str(JAVA / name), "line": line_of(f"java/{name}", marker)}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or report.get("variables") or []}


def types(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["type"] for v in report.get("locals") or report.get("variables") or []}


async def _threads(tools: Tools) -> list[dict[str, Any]]:
    """Every thread of the all-threads listing, its pages followed (their locks take room)."""
    listed: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {}
    while True:
        page = await tools("debug_stack", all_threads=True, levels=50, **arguments)
        listed += page["threads"]
        following = re.search(r"more from thread (\d+)", page.get("more") or "")
        if following is None:
            return listed
        arguments = {"thread_id": int(following.group(1))}


def _functions(thread: dict[str, Any]) -> list[str]:
    return [f["function"] for f in thread["frames"]]


async def _whole(tools: Tools, thread: dict[str, Any]) -> list[str]:
    """A thread's whole stack (the all-threads listing keeps only what fits)."""
    return _functions((await tools("debug_stack", thread_id=thread["thread_id"], levels=50))["threads"][0])


async def test_threads_show_their_states_and_a_stop_in_a_worker_names_it(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Workers.java"), breakpoints=[
        at("Workers.java", "worker breakpoint"), at("Workers.java", "main breakpoint")])
    assert report["reason"] == "breakpoint" and report["thread_name"] == "worker-1", report
    assert report["location"]["function"] == "Workers.work" and values(report) == {"seed": "20", "doubled": "40"}
    assert f"thread {report['thread_id']} worker-1 (stopped here) (current):" in await tools.text("debug_stack")

    threads = await _threads(tools)
    names = [t["name"] for t in threads]
    system = [i for i, name in enumerate(names) if "(system, " in name]
    assert system and system == list(range(system[0], len(names))), names  # the JVM's own come last
    assert {"Reference Handler", "Signal Dispatcher"} <= {names[i].partition(" (")[0] for i in system}, names
    by_name = {t["name"]: t for t in threads}
    for expected in ("main (waiting)", "sleeper (sleeping)", "waiter (waiting)", "holder (sleeping)",
                     "blocked (blocked on a monitor)", "worker-1 (stopped here)"):
        assert expected in names[:system[0]], (expected, names)
    worker = by_name["worker-1 (stopped here)"]
    assert worker["thread_id"] == report["thread_id"]
    # the worker's own stack, without the lambda's generated class between its body and Thread.run
    assert [f.rstrip("0123456789") for f in _functions(worker)] == [
        "Workers.work", "Workers.lambda$main$", "Thread.run"], worker
    assert worker["frames"][1]["line"] == line_of("java/Workers.java", "in the worker thread"), worker
    assert (await _whole(tools, by_name["main (waiting)"]))[-1] == "Workers.main"
    blocked = by_name["blocked (blocked on a monitor)"]["frames"][0]
    # HotSpot places a thread blocked entering a monitor just past its monitorenter: the block's first line
    assert blocked["line"] in (line_of("java/Workers.java", "blocked here"),
                               line_of("java/Workers.java", "never")), blocked
    caller = await tools("debug_variables", frame_id=1, thread_id=worker["thread_id"])  # (main is current now)
    assert values(caller) == {"main": 'Thread "main"', "local": "20"}, caller  # main: captured by the lambda

    pooled = await tools("debug_continue")
    assert pooled["thread_name"] == "pool-worker" and values(pooled) == {"seed": "5", "doubled": "10"}, pooled
    assert "worker got 41" in pooled["output"]["text"]
    stack = (await tools("debug_stack"))["threads"][0]
    assert stack["name"] == "pool-worker (stopped here)", stack
    assert stack["frames"][1]["line"] == line_of("java/Workers.java", "in the pool"), stack
    assert "ThreadPoolExecutor.runWorker" in _functions(stack), stack

    in_main = await tools("debug_continue")
    assert in_main["location"]["line"] == line_of("java/Workers.java", "main breakpoint"), in_main
    assert in_main.get("thread_name") is None and values(in_main)["fromPool"] == "11", in_main
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert "main done 11" in done["output"]["text"]
    await tools("debug_terminate")


async def test_pausing_shows_the_busy_worker_while_main_waits_in_join(tools: Tools) -> None:
    running = await tools("debug_launch", program=str(JAVA / "Joiner.java"), timeout_s=1)
    assert running["state"] == "running", running
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause" and paused["thread_name"] == "busy-worker", paused
    assert paused["location"]["function"] == "Joiner.lambda$main$0", paused
    assert paused["location"]["line"] in (line_of("java/Joiner.java", "busy loop"),
                                          line_of("java/Joiner.java", "busy worker")), paused
    assert "spins" in values(paused), paused
    threads = await _threads(tools)
    assert [t["name"] for t in threads[:2]] == ["main (waiting)", "busy-worker (stopped here)"], threads
    assert (await _whole(tools, threads[0]))[-1] == "Joiner.main", threads[0]
    assert all("(system, " in t["name"] for t in threads[2:]), threads
    await tools("debug_terminate")


async def test_stdout_and_stderr_are_kept_apart(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Streams.java"),
                         breakpoints=[at("Streams.java", "after output")])
    assert report["reason"] == "breakpoint", report
    assert "to stdout: héllo" in report["output"]["text"] and "to stderr: wörld" in report["output"]["text"]
    done = await tools("debug_continue")
    assert done["exit_code"] == 0, done
    stdout = await tools("debug_output", cursor=0, stream="stdout")
    stderr = await tools("debug_output", cursor=0, stream="stderr")
    assert stdout["text"] == "to stdout: héllo\nstdout again\n", stdout
    assert stderr["text"] == "to stderr: wörld\n", stderr
    await tools("debug_terminate")


@pytest.fixture(scope="module")
def flood(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    """Flood compiled ahead (the timings compare running it, not compiling it), and how long it takes
    without polydbg, its output read through a pipe."""
    require("java", "javac")
    root = tmp_path_factory.mktemp("flood")
    subprocess.run(["javac", "-g", "-d", str(root), str(JAVA / "Flood.java")], check=True, timeout=120)
    started = time.monotonic()
    plain = subprocess.run([shutil.which("java") or "java", "-cp", str(root), "Flood"], capture_output=True,
                           check=True, timeout=300)
    alone = time.monotonic() - started
    assert len(plain.stdout) > 100 * 2**20
    return root / "Flood.class", alone


async def test_a_hundred_megabytes_of_output_runs_to_the_end_keeping_a_bounded_tail(
        tools: Tools, flood: tuple[Path, float]) -> None:
    program, alone = flood
    started = time.monotonic()
    done = await tools("debug_launch", program=str(program), cwd=str(program.parent), timeout_s=240)
    if done["state"] != "exited":
        done = await tools("debug_continue", timeout_s=240)
    debugged = time.monotonic() - started
    print(f"\n100 MB to stdout: {alone:.2f} s alone, {debugged:.2f} s under polydbg")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert done["output"]["text"].endswith("flood done\nflood stderr end\n"), done["output"]["text"][-200:]
    assert debugged < max(60.0, 20 * alone), (alone, debugged)
    start = await tools("debug_output", cursor=0, max_bytes=100)
    assert start["dropped"] >= 95 * 2**20, start  # the head is gone: only a bounded tail is kept
    tail = await tools("debug_output", cursor=start["next_cursor"], stream="stderr", max_bytes=30_000)
    assert tail["text"] == "flood stderr end\n", tail
    await tools("debug_terminate")


async def test_values_primitives_null_text_statics_inherited_fields_and_this(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Values.java"), breakpoints=[
        at("Values.java", "primitives set"), at("Values.java", "instance method")])
    assert report["reason"] == "breakpoint", report
    assert values(report) == {
        "args": "String[0] {}", "b": "-7", "s": "1234", "c": "'é'", "ascii": "'A'", "i": "-123456",
        "l": "9000000000", "f": "1.5", "d": "-0.25", "yes": "true", "nothing": "null", "text": '"naïve ☃ 日本"',
    }, report  # empty, later and derived are declared further down: not shown yet
    assert types(report) == {
        "args": "String[]", "b": "byte", "s": "short", "c": "char", "ascii": "char", "i": "int", "l": "long",
        "f": "float", "d": "double", "yes": "boolean", "nothing": "String", "text": "String"}, report
    statics = await tools("debug_variables", scope="statics")
    assert values(statics) == {"total": "42", "greeting": '"grüße ☕"'}, statics
    assert (await tools("debug_variables"))["scopes"] == ["Locals", "Statics"]

    method = await tools("debug_continue")
    assert method["location"]["function"] == "Values.Derived.describe", method
    assert [v["name"] for v in method["locals"]] == ["this", "factor"], method  # `this` once
    this = method["locals"][0]
    assert this["type"] == "Values.Derived" and this["value"].startswith("Values.Derived {"), this
    fields = await tools("debug_variables", ref=this["ref"])
    assert values(fields) == {"weight": "2.5", "mark": "'Ω'", "baseName": '"bäse"', "baseCount": "7"}, fields
    statics = await tools("debug_variables", scope="statics")
    # its own, the one it inherits from Base, then the enclosing class's
    assert values(statics) == {"KIND": '"derived"', "created": "1", "total": "42", "greeting": '"grüße ☕"'}
    done = await tools("debug_continue")
    assert done["exit_code"] == 0, done
    assert "bäse32.5-123455-71234éA90000000001.5-0.25truenullnaïve ☃ 日本null42" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_an_uncaught_exception_stops_where_it_is_thrown_then_exits_1(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Uncaught.java"))
    assert report["reason"] == "exception", report
    assert report["location"] == {"file": str(JAVA / "Uncaught.java"), "line": line_of("java/Uncaught.java",
                                  "// throws"), "function": "Uncaught.fail"}, report
    assert report["description"] == "java.lang.IllegalArgumentException: bad input: xyz ü", report
    assert report["exception"] == {"type": "java.lang.IllegalArgumentException", "message": "bad input: xyz ü"}
    assert values(report) == {"what": '"xyz"', "depth": "2"}, report
    stack = (await tools("debug_stack"))["threads"][0]
    assert _functions(stack) == ["Uncaught.fail", "Uncaught.call", "Uncaught.main"], stack
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1, done
    stderr = (await tools("debug_output", cursor=0, stream="stderr"))["text"]
    thrown = 'Exception in thread "main" java.lang.IllegalArgumentException: bad input: xyz ü\n'
    assert stderr.startswith(thrown), stderr
    assert "\tat Uncaught.fail(Uncaught.java:4)\n\tat Uncaught.call(Uncaught.java:8)" in stderr, stderr
    assert (await tools("debug_output", cursor=0, stream="stdout"))["text"] == "before\n"
    await tools("debug_terminate")


async def test_the_stacks_of_many_threads_are_grouped_cut_and_paged_within_bounds(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Crowd.java"), args=["400", "3"],
                         breakpoints=[at("Crowd.java", "all started")])
    assert report["reason"] == "breakpoint", report
    text = await tools.text("debug_stack", all_threads=True, levels=2)
    assert len(text) <= 2000, len(text)  # was one entry per thread: ~160 KB
    assert "crowd-0 (sleeping) and 39 more with these frames" in text, text  # 2 frames: 10 ways to sleep
    covered, pages, start = 0, 0, None  # 10 lines × 3 depths: 30 stacks, more than a page holds
    representatives: set[int] = set()
    while pages < 100:
        page = await tools("debug_stack", all_threads=True, **({"thread_id": start} if start else {}))
        assert len(render.stack(StackResult.model_validate(page), str(JAVA))) <= 2000  # paths from the cwd
        pages += 1
        for thread in page["threads"]:
            assert thread["thread_id"] not in representatives and len(thread["frames"]) <= 20, thread
            representatives.add(thread["thread_id"])
            covered += 1 + thread.get("same", 0)
        more = page.get("more") or ""
        if "all_threads=true, thread_id=" not in more:
            break
        start = int(more.rpartition("thread_id=")[2].partition(",")[0])
    assert pages > 1 and covered > 400, (pages, covered)  # every crowd thread (and main, and the JVM's) once
    deepest = (await tools("debug_stack", thread_id=max(representatives), levels=100))["threads"][0]
    assert len(deepest["frames"]) > 3, deepest  # one thread's whole stack, asked for by its id
    await tools("debug_terminate")
