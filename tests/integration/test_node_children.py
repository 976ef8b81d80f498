"""Worker threads and child Node processes, debugged in the program's session: a test-runner-like
program (tests/programs/node/runner) forks a process per spec file, runs a worker thread and spawns
``process.execPath``; each appears as a named thread, breakpoints hit in all of them, stops that
happen together are shown one at a time, and terminating ends them all."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.test_conformance import still_running
from tests.integration.test_node import node_modules

NODE = PROGRAMS / "node"
RUNNER = NODE / "runner"


@pytest.fixture(autouse=True)
def _node() -> None:
    require("node")


def at(name: str, marker: str) -> dict[str, Any]:
    return {"file": str(RUNNER / name), "line": line_of(f"node/runner/{name}", marker)}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def test_forked_processes_a_worker_and_a_spawned_node_hit_their_breakpoints(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(RUNNER / "runner.js"), breakpoints=[
        at("specs/math.spec.js", "return sum;"), at("checksum.js", "total += name.length"),
        at("report.js", "console.log(label)")])
    assert report["reason"] == "breakpoint", report
    assert re.fullmatch(r"process \d+ \(child\.js\)", report["thread_name"]), report
    assert report["thread_id"] != 1
    assert values(report) == {"a": "2", "b": "3", "sum": "5"}
    assert "debugged in this session as thread" in report["output"]["text"]
    again = await tools("debug_continue")
    assert (again["thread_id"], values(again)["sum"]) == (report["thread_id"], "-5")
    worker = await tools("debug_continue")
    assert worker["thread_name"] == "worker 1 (checksum.js)", worker
    assert worker["location"]["line"] == line_of("node/runner/checksum.js", "total += name.length")
    assert (await tools("debug_evaluate", expression="names.join('+')"))["value"] == '"math.spec.js+strings.spec.js"'
    threads = {t["thread_id"]: t["name"] for t in (await tools("debug_stack", all_threads=True))["threads"]}
    assert threads[1] == "main (running)" and threads[worker["thread_id"]] == "worker 1 (checksum.js)", threads
    changed = await tools.client.call_tool("debug_set_variable", {"name": "total", "value": "100"})
    assert not changed.is_error, changed
    stepped = await tools("debug_step", kind="over")  # a short step: its stop may come before its request returns
    assert (stepped["thread_id"], stepped["location"]["line"]) == (worker["thread_id"], worker["location"]["line"] - 1)
    threads = {t["thread_id"]: t["name"] for t in (await tools("debug_stack", all_threads=True))["threads"]}
    assert threads[worker["thread_id"]] == "worker 1 (checksum.js)", threads  # still the stop shown, not "waiting"
    assert values(await tools("debug_continue"))["total"] == "112"  # the worker saw the new value
    spawned = await tools("debug_continue")
    assert re.fullmatch(r"process \d+ \(report\.js\)", spawned.get("thread_name", "")), spawned.get("note")
    assert values(spawned)["label"].startswith('"reporter v'), spawned
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    text = (await tools("debug_output"))["text"]
    assert re.search(r"passed 3, failed 0, checksum 127, reporter v\d+", text), text
    assert re.search(r"\[process \d+ \(child\.js\) exited with code 0\]", text), text
    assert "[worker 1 (checksum.js) ended]" in text, text
    await tools("debug_terminate")


async def test_processes_stopping_together_are_shown_one_at_a_time(tools: Tools) -> None:
    line = line_of("node/runner/child.js", "test();")
    report = await tools("debug_launch", program=str(RUNNER / "runner.js"),
                         breakpoints=[{"file": str(RUNNER / "child.js"), "line": line}])
    seen: list[tuple[str, str]] = []
    while report["state"] == "stopped":
        assert report["location"]["line"] == line, report
        seen.append((report["thread_name"], values(report)["name"]))
        report = await tools("debug_continue")
    assert report["exit_code"] == 0, report
    tests = sorted(name for _, name in seen)
    assert tests == ['"adds"', '"addsNegatives"', '"shouts"'], seen
    by_process = {process for process, name in seen if name == '"adds"'}
    assert by_process == {process for process, name in seen if name == '"addsNegatives"'}, seen
    assert len({process for process, _ in seen}) == 2, seen
    await tools("debug_terminate")


async def test_terminate_while_a_child_is_stopped_ends_every_process(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(RUNNER / "runner.js"), breakpoints=[
        at("specs/strings.spec.js", "return `${loud}!`;")])
    notes = (report.get("output") or {}).get("text", "")
    if report["state"] == "running":  # quiet for 3 s while a loaded machine started the child: the stop comes next
        report = await tools("debug_continue")
    assert values(report) == {"text": '"hi"', "loud": '"HI"'}, str(report)  # a str: pytest cuts a dict's repr short
    pids = {int(m) for m in re.findall(r"process (\d+)", notes + (report.get("output") or {}).get("text", ""))}
    assert pids, report
    await tools("debug_terminate")
    assert not still_running(pids, 5.0)


async def test_pause_stops_a_busy_child_while_the_program_is_idle(tools: Tools) -> None:
    # The launch answers "running" once the program printed and went quiet; only the child prints: "busy",
    # as it enters its loop (the program forked it, set its timer and went idle before the child started).
    running = await tools("debug_launch", program=str(NODE / "busy.js"), args=["child"])
    assert running["state"] == "running" and "busy" in running["output"]["text"].splitlines(), running
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause", paused
    assert re.fullmatch(r"process \d+ \(busy\.js\)", paused["thread_name"]), paused
    assert paused["location"]["line"] in (line_of("node/busy.js", "while (Date.now()"),
                                          line_of("node/busy.js", "busy loop"))
    await tools("debug_terminate")


async def test_npm_run_is_a_wrapper_its_script_is_debugged(tools: Tools) -> None:
    require("npm")
    report = await tools("debug_launch", program=str(RUNNER / "npm.js"), breakpoints=[
        at("report.js", "console.log(label)")])
    assert re.fullmatch(r"process \d+ \(report\.js\)", report["thread_name"]), report
    assert "(npm)" not in report["output"]["text"], report  # npm itself is not debugged
    done = await tools("debug_continue")
    assert done["exit_code"] == 0 and "npm said: reporter v" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_a_typescript_child_forked_under_tsx_stops_in_its_ts_lines(tools: Tools) -> None:
    node_modules()
    child = NODE / "tsfork" / "child.ts"
    line = line_of("node/tsfork/child.ts", "sum += value * job.id;")
    report = await tools("debug_launch", program=str(NODE / "tsfork" / "parent.ts"),
                         breakpoints=[{"file": str(child), "line": line}])
    assert report["location"] == {"file": str(child), "line": line, "function": "total"}, report
    assert re.fullmatch(r"process \d+ \(child\.ts\)", report["thread_name"]), report
    assert values(report)["value"] == "1"
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["exit_code"] == 0 and "job 7: 42" in done["output"]["text"], done
    await tools("debug_terminate")
