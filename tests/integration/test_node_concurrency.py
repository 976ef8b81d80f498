"""Node's threads and async stacks through the MCP tools, on real Node: the callers past each ``await`` (and a
``.then``, a timer) listed after a stopped function's frames, in .ts lines under tsx; a worker thread, running
on its own while the main thread is stopped, inspected once debug_pause(thread_id) paused it; an idle one
refused, saying so; a thread stopped too, chosen, stepped and resumed from another's stop."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.test_node import node_modules

NODE = PROGRAMS / "node"
WORKERS = str(NODE / "workers.js")


@pytest.fixture(autouse=True)
def _node() -> None:
    require("node")


async def stopped_too(tools: Tools, thread: int, deadline_s: float = 30.0) -> dict[str, Any]:
    """debug_stack(all_threads) once ``thread`` is listed as stopped too: the other thread reaches its breakpoint
    on its own time (on a loaded machine, seconds after the first stop was answered). Asked again until then."""
    loop = asyncio.get_running_loop()
    end = loop.time() + deadline_s
    while True:
        listed = await tools("debug_stack", all_threads=True, levels=1)
        names = {t["thread_id"]: t["name"] for t in listed["threads"]}
        if "stopped too" in names.get(thread, "") or loop.time() > end:
            return listed
        await asyncio.sleep(0.1)


def callers(stack: dict[str, Any]) -> list[tuple[str | None, str, str, int]]:
    """The async callers of the one thread listed: (what joins the segment, function, file name, line)."""
    [thread] = stack["threads"]
    return [(a.get("via"), a["function"], a["file"].rsplit("/", 1)[-1], a["line"]) for a in thread["async_frames"]]


async def _await_chain(tools: Tools, name: str) -> None:
    program = str(NODE / name)
    file = program.rsplit("/", 1)[-1]
    def line(marker: str) -> int:
        return line_of(f"node/{name}", marker)
    report = await tools("debug_launch", program=program, breakpoints=[
        {"file": program, "line": line("in leaf")}, {"file": program, "line": line("in then")}])
    assert (report["location"]["function"], report["location"]["line"]) == ("leaf", line("in leaf")), report
    stack = await tools("debug_stack")
    assert [f["function"] for f in stack["threads"][0]["frames"]] == ["leaf"]  # nothing else runs: a timer woke it
    assert callers(stack) == [("await", "middle", file, line("= await leaf(")),
                              ("await", "top", file, line("= await middle(")),
                              (None, "start", file, line("top().then(")),
                              ("Timeout", "(anonymous)", file, line("setTimeout(start"))], stack
    text = await tools.text("debug_stack")
    assert "— await — (async callers: listed, not selectable)" in text, text
    refused = await tools.error("debug_variables", frame_id=1)  # listed, not frames: nothing to read in them
    assert "frame 1 does not exist" in refused, refused
    then = await tools("debug_continue")
    assert then["location"]["line"] == line("in then"), then
    assert callers(await tools("debug_stack")) == [("Promise.then", "start", file, line("top().then(")),
                                                   ("Timeout", "(anonymous)", file, line("setTimeout(start"))]
    done = await tools("debug_continue")
    assert done["exit_code"] == 0 and "total 22" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_an_await_chain_lists_the_awaiting_callers(tools: Tools) -> None:
    await _await_chain(tools, "awaits.js")


async def test_a_typescript_await_chain_under_tsx_lists_them_in_ts_lines(tools: Tools) -> None:
    node_modules()
    await _await_chain(tools, "tsx/awaits.ts")


async def test_a_throw_awaited_through_promise_all_is_explained_and_its_callers_listed_at_a_breakpoint(
        tools: Tools) -> None:
    """V8 counts a throw whose rejection Promise.all waits for as caught: it never pauses; the end says where it
    was thrown and why it did not stop, and a breakpoint there lists the awaiting callers past Promise.all."""
    program = str(NODE / "rejects.js")
    throws = line_of("node/rejects.js", "fetchOne throws")
    ended = await tools("debug_launch", program=program)
    said = ended["output"]["text"]
    assert (ended["state"], ended["exit_code"]) == ("exited", 1), ended
    assert f"uncaught Error: no item 2 at {program}:{throws}" in said and "awaited through Promise.all" in said, said
    await tools("debug_break", file=program, line=throws, condition="id === 2")
    stopped = await tools("debug_restart")
    assert (stopped["location"]["function"], stopped["location"]["line"]) == ("fetchOne", throws), stopped
    def line(marker: str) -> int:
        return line_of("node/rejects.js", marker)
    assert [frame[1:] for frame in callers(await tools("debug_stack"))] == [
        ("(anonymous)", "rejects.js", line("Promise.all(")), ("fetchAll", "rejects.js", line("Promise.all(")),
        ("main", "rejects.js", line("await fetchAll(")), ("(anonymous)", "rejects.js", line("the program starts"))]
    await tools("debug_terminate")


async def test_a_running_worker_is_inspected_once_paused_from_the_main_thread_s_stop(tools: Tools) -> None:
    main_line = line_of("node/workers.js", "main stops here")
    report = await tools("debug_launch", program=WORKERS, breakpoints=[{"file": WORKERS, "line": main_line}])
    assert (report["thread_id"], report["location"]["line"]) == (1, main_line), report
    listed = await tools("debug_stack", all_threads=True)
    threads = {t["thread_id"]: t["name"] for t in listed["threads"]}
    assert threads == {1: "main", 2: "worker 1 (workers.js) (running)"}, threads
    assert "thread 2 lists no frames: debug_stack(thread_id=2) says why" in listed["more"], listed
    for tool in ("debug_variables", "debug_stack"):
        refused = await tools.error(tool, thread_id=2)
        assert "thread 2 (worker 1 (workers.js)) is running, not stopped" in refused, refused
        assert "thread 1 (main) is stopped" in refused and "debug_pause(thread_id=2)" in refused, refused
    assert (await tools("debug_evaluate", expression="heard"))["value"] == '"busy"'  # still the main thread
    paused = await tools("debug_pause", thread_id=2)
    assert (paused["reason"], paused["thread_id"], paused["thread_name"]) == ("pause", 2, "worker 1 (workers.js)")
    assert (paused["location"]["file"], paused["location"]["function"]) == (WORKERS, "(anonymous)"), paused
    assert (await tools("debug_evaluate", expression="rounds > 0 && workerData"))["value"] == '"busy"'  # its own
    stack = await tools("debug_stack", all_threads=True)
    names = {t["thread_id"]: t["name"] for t in stack["threads"]}
    assert stack["current_thread"] == 2 and "stopped too" in names[1], stack
    main_locals = await tools("debug_variables", thread_id=1)  # the main thread, stopped too, read by its id
    assert {v["name"]: v["value"] for v in main_locals["variables"]}["heard"] == '"busy"', main_locals
    main_again = await tools("debug_continue")  # the worker runs on; the main thread's stop is shown again
    assert (main_again["reason"], main_again["thread_id"], main_again["location"]["line"]) == (
        "breakpoint", 1, main_line), main_again
    assert (await tools("debug_evaluate", expression="heard"))["value"] == '"busy"'
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    await tools("debug_terminate")


async def test_an_idle_worker_is_not_paused_and_the_stop_stays(tools: Tools) -> None:
    main_line = line_of("node/workers.js", "main stops here")
    report = await tools("debug_launch", program=WORKERS, args=["idle"],
                         breakpoints=[{"file": WORKERS, "line": main_line}])
    assert report["thread_id"] == 1 and {v["name"]: v["value"] for v in report["locals"]}["heard"] == '"idle"'
    refused = await tools.error("debug_pause", thread_id=2)
    assert "thread 2 (worker 1 (workers.js)) is idle" in refused and "The stop shown stays" in refused, refused
    stack = await tools("debug_stack")
    assert stack["current_thread"] == 1 and stack["threads"][0]["frames"][0]["line"] == main_line, stack
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    await tools("debug_terminate")


async def test_a_thread_stopped_too_is_chosen_stepped_and_resumed_from_another_s_stop(tools: Tools) -> None:
    """The main thread and the worker both stop at a breakpoint (which first, the machine decides): the other's
    stop waits. Chosen with debug_stack(thread_id), it is stepped (the step's stop is the answer) and resumed
    (then the first stop is shown again)."""
    lines = {1: line_of("node/workers.js", "main stops here"),
             2: line_of("node/workers.js", "the worker starts counting")}
    report = await tools("debug_launch", program=WORKERS, breakpoints=[
        {"file": WORKERS, "line": line} for line in lines.values()])
    first = report["thread_id"]
    other = 3 - first
    assert report["location"]["line"] == lines[first], report
    listed = await stopped_too(tools, other)
    assert "stopped too" in {t["thread_id"]: t["name"] for t in listed["threads"]}[other], listed
    for thread, main in ((other, other == 1), (None, first == 1)):  # in the thread named, else the one shown
        seen = (await tools("debug_evaluate", expression="typeof worker", thread_id=thread))["value"]  # main's own
        assert seen == ('"object"' if main else '"undefined"'), (thread, seen)
    chosen = await tools("debug_stack", thread_id=other, levels=1)
    assert chosen["current_thread"] == other and chosen["threads"][0]["frames"][0]["line"] == lines[other]
    stepped = await tools("debug_step", kind="over")
    assert (stepped["reason"], stepped["thread_id"]) == ("step", other), stepped
    assert stepped["location"]["line"] != lines[other], stepped
    again = await tools("debug_continue")  # the thread stepped runs on: the first stop is shown again
    assert (again["reason"], again["thread_id"], again["location"]["line"]) == ("breakpoint", first, lines[first])
    await tools("debug_clear", all=True)
    for _ in range(3):  # the worker may be shown stopped once more (at its breakpoint, before it was cleared)
        report = await tools("debug_continue")
        if report["state"] != "stopped":
            break
    assert report["state"] == "exited" and report["exit_code"] == 0, report
    await tools("debug_terminate")
