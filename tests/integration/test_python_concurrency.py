"""Python's threads and asyncio tasks through the MCP tools, on debugpy: a pause of a program whose threads are all
blocked in C code (which debugpy alone never stops), the Lock deadlock it reports with each thread's line, an RLock's
owner, a lock taken by a bare acquire() said to have no recorded owner, a Condition's waiter; a blocked thread's
locals read, evaluated in and changed while another thread is stopped; asyncio's pending tasks with what each
awaits, a coroutine's awaiting tasks, and a pause of an idle event loop."""

from __future__ import annotations

import os
import re
from typing import Any

from tests.conftest import PROGRAMS, Tools, line_of

LOCKS = str(PROGRAMS / "python_concurrency" / "locks.py")
TASKS = str(PROGRAMS / "python_concurrency" / "tasks.py")


def line(name: str, marker: str) -> int:
    return line_of(f"python_concurrency/{name}", marker)


def by_name(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in stack["threads"]}


async def all_stuck(tools: Tools) -> dict[str, int]:
    """locks.py stopped in main once every worker is stuck; thread ids by name."""
    report = await tools("debug_launch", program=LOCKS, args=["stop"],
                         breakpoints=[{"file": LOCKS, "line": line("locks.py", "# all stuck")}])
    assert report["reason"] == "breakpoint", report
    return {name: t["thread_id"] for name, t in by_name(await tools("debug_stack", all_threads=True)).items()}


async def test_a_pause_stops_threads_all_blocked_in_c_and_reports_their_deadlock(tools: Tools) -> None:
    ids = await all_stuck(tools)
    running = await tools("debug_continue", timeout_s=1)  # main joins the workers: no thread runs Python now
    assert running["state"] == "running", running
    paused = await tools("debug_pause")
    assert paused["state"] == "stopped" and paused["reason"] == "pause", paused
    assert paused["thread_id"] == ids["MainThread"], paused
    assert paused["location"]["line"] == line("locks.py", "worker.join()"), paused
    left_at, right_at = line("locks.py", "# left blocks"), line("locks.py", "# right blocks")
    cycle = re.compile(
        rf"deadlock: thread {ids['left']} \(left\) at locks\.py:{left_at} holds threading\.Lock LEFT at 0x[0-9a-f]+ "
        rf"and waits for threading\.Lock RIGHT at 0x[0-9a-f]+, held by thread {ids['right']} \(right\) at "
        rf"locks\.py:{right_at}, which waits for threading\.Lock LEFT at 0x[0-9a-f]+, held by thread {ids['left']}$")
    assert len(paused["deadlocks"]) == 1 and cycle.match(paused["deadlocks"][0]), paused["deadlocks"]
    listing = await tools("debug_stack", all_threads=True)
    assert not any("probe" in t["name"] for t in listing["threads"]), listing  # polydbg's own thread is not shown
    assert listing["deadlocks"] == paused["deadlocks"], listing
    refused = await tools.error("debug_step")  # main is in join(): it would never step, the program read as running
    said = f"thread {ids['MainThread']} is blocked in C code (in Thread.join() of 'left'), where debugpy cannot stop it"
    assert said in refused, refused
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"
    await tools("debug_terminate")


async def test_an_rlocks_owner_a_bare_acquire_a_condition_wait_and_a_pause_of_a_chosen_thread(tools: Tools) -> None:
    ids = await all_stuck(tools)
    threads = by_name(await tools("debug_stack", all_threads=True))
    keeper, reentrant = threads["keeper"]["locks"], threads["reentrant"]["locks"]
    assert re.fullmatch(r"threading\.RLock RECORDS at 0x[0-9a-f]+", keeper["holds"][0]), keeper
    assert reentrant["waits_for"] == keeper["holds"][0] and reentrant["owner"] == ids["keeper"], reentrant
    bare = threads["bare"]["locks"]
    assert bare["waits_for"].startswith("threading.Lock GATE at ") and bare.get("owner") is None, bare
    assert threads["sleeper"]["locks"] == {"holds_more": 0, "state": "in Condition.wait()"}, threads["sleeper"]
    assert threads["MainThread"].get("locks") is None, threads["MainThread"]  # at a print: it waits for nothing
    text = await tools.text("debug_stack", thread_id=ids["bare"])
    assert re.search(r"waits for threading\.Lock GATE at 0x[0-9a-f]+ \(owner not recorded\)", text), text
    assert (await tools("debug_continue", timeout_s=1))["state"] == "running"
    paused = await tools("debug_pause", thread_id=ids["keeper"])  # the thread asked for, though blocked in a sleep
    assert paused["thread_id"] == ids["keeper"] and paused["reason"] == "pause", paused
    assert paused["location"]["line"] == line("locks.py", "# keeper sleeps"), paused
    await tools("debug_terminate")


async def test_a_thread_blocked_in_c_is_read_evaluated_in_and_changed_while_main_is_stopped(tools: Tools) -> None:
    ids = await all_stuck(tools)
    keeper = ids["keeper"]
    listed = await tools("debug_variables", thread_id=keeper)
    assert [(v["name"], v["value"]) for v in listed["variables"]] == [("held", "2")], listed
    assert (await tools("debug_evaluate", thread_id=keeper, expression="held * 21"))["value"] == "42"
    assert (await tools("debug_evaluate", expression="len(workers)"))["value"] == "6"  # main's frame still
    changed = await tools("debug_set_variable", thread_id=keeper, name="held", value="held + 3")
    assert changed["value"] == "5", changed
    assert (await tools("debug_evaluate", thread_id=keeper, expression="held"))["value"] == "5"
    await tools("debug_terminate")


async def test_asyncio_tasks_with_what_they_await_and_a_coroutines_awaiting_tasks(tools: Tools) -> None:
    report = await tools("debug_launch", program=TASKS, args=["stop"],
                         breakpoints=[{"file": TASKS, "line": line("tasks.py", "# child stops here")}])
    assert report["reason"] == "breakpoint", report
    [thread] = (await tools("debug_stack"))["threads"]
    assert [(f["function"], f["line"], f.get("via")) for f in thread["async_frames"]] == [
        ("parent", line("tasks.py", "return await task"), "awaited by task 'parent'"),
        ("main", line("tasks.py", "await asyncio.gather(*tasks[2:])"), "awaited by task 'Task-1'")], thread
    tasks = {t["name"]: t for t in (await tools("debug_stack", all_threads=True))["tasks"]}
    assert tasks["parent"]["awaiting"] == "task 'child'", tasks
    assert tasks["Task-1"]["awaiting"] == "gather of task 'parent'", tasks
    assert tasks["fetcher"]["awaiting"].startswith("Event.wait at locks.py:"), tasks
    assert [(f["function"], os.path.basename(f["file"])) for f in tasks["fetcher"]["frames"]] == [
        ("fetch", "tasks.py"), ("wait_for", "tasks.py"), ("Event.wait", "locks.py")], tasks
    assert tasks["consumer"]["awaiting"].startswith("Queue.get at queues.py:"), tasks
    assert tasks["child"]["awaiting"] == "nothing: it is running on thread 'MainThread'", tasks
    await tools("debug_terminate")


async def test_a_pause_stops_an_idle_event_loop_and_lists_its_tasks(tools: Tools) -> None:
    running = await tools("debug_launch", program=TASKS, timeout_s=1)
    assert running["state"] == "running", running
    await tools.printed("all waiting", 30)  # every task waits: the loop is in epoll
    paused = await tools("debug_pause")
    assert paused["state"] == "stopped" and paused["reason"] == "pause", paused
    tasks = {t["name"]: t["awaiting"] for t in (await tools("debug_stack", all_threads=True))["tasks"]}
    assert tasks["child"].startswith("Event.wait at locks.py:") and tasks["parent"] == "task 'child'", tasks
    await tools("debug_terminate")
