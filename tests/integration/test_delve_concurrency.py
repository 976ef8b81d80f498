"""Go's goroutines and locks through the MCP tools, on delve: tests/programs/go/concurrency/main.go's two
transfers stuck on each other's sync.Mutex (paused while main sleeps, and as the runtime's own "all
goroutines are asleep" fatal error), a producer and main stuck on channels nobody serves, a -race build's
lost update stopped at the racy line with both goroutines' accesses, and another goroutine's frames read,
evaluated in and changed while the stop is on main."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

PACKAGE = PROGRAMS / "go" / "concurrency"
SOURCE = str(PACKAGE / "main.go")


@pytest.fixture(autouse=True)
def _go() -> None:
    require("dlv", "go")


def line(marker: str) -> int:
    return line_of("go/concurrency/main.go", marker)


def transfers(stack: dict[str, Any]) -> list[dict[str, Any]]:
    """The two goroutines stuck in transfer, as the all-threads stack lists them."""
    found = [thread for thread in stack["threads"] if thread["frames"][0]["function"] == "main.transfer"]
    assert len(found) == 2, stack
    return found


def mutex_cycle(first: int, second: int) -> re.Pattern[str]:
    """The deadlock sentence: each transfer at its second Lock(), holding its first mutex, the owner inferred."""
    at = rf"main\.go:{line('waits for the other transfer')}"
    mutex = r"sync\.Mutex (?:from|to)\.mu at 0x[0-9a-f]+"
    return re.compile(rf"deadlock: thread {first} \([^)]*\) at {at} holds {mutex} \(locked at main\.go:"
                      rf"{line('from.mu.Lock()')}\) and waits for {mutex}, held by thread {second} \([^)]*\) at {at},"
                      rf" which waits for {mutex}, held by thread {first}$")


async def test_a_pause_names_the_goroutines_stuck_on_each_others_mutex(tools: Tools) -> None:
    stuck = await tools("debug_launch", program=str(PACKAGE), args=["mutexes", "live"],
                        breakpoints=[{"file": SOURCE, "line": line('fmt.Println("transfers stuck")')}])
    assert stuck["reason"] == "breakpoint", stuck
    assert len((await tools("debug_stack", all_threads=True, levels=1))["deadlocks"]) == 1
    running = await tools("debug_continue", timeout_s=1)  # main sleeps an hour: nothing stops it
    assert running["state"] == "running", running
    paused = await tools("debug_pause")
    stack = await tools("debug_stack", all_threads=True, levels=1)
    left, right = transfers(stack)
    assert any(mutex_cycle(left["thread_id"], right["thread_id"]).match(cycle) for cycle in paused["deadlocks"]), \
        paused["deadlocks"]
    assert stack["deadlocks"] == paused["deadlocks"]
    for waiter, holder in ((left, right), (right, left)):
        assert waiter["locks"]["state"] == "semacquire in sync.(*Mutex).Lock"
        assert waiter["locks"]["owner"] == holder["thread_id"]
        held = holder["locks"]["holds"][0]  # "sync.Mutex from.mu at 0x… (locked at main.go:27)"
        assert waiter["locks"]["waits_for"].split(" at ")[1] == held.split(" at ")[1].split(" ")[0]
    sleeper = next(thread for thread in stack["threads"] if thread["thread_id"] == stack["current_thread"])
    assert sleeper["locks"]["state"] == "sleep in time.Sleep"
    await tools("debug_terminate")


async def test_the_runtimes_deadlock_stops_with_every_goroutines_place_and_wait(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(PACKAGE), args=["channels"])
    assert report["reason"] == "exception", report
    exception = report["exception"]
    assert (exception["type"], exception["message"]) == ("fatal error", "all goroutines are asleep - deadlock!")
    assert report["location"]["line"] == line("<-done // main waits")
    details = exception["details"]
    assert len(details) == 2, details
    main = rf"goroutine 1 at main\.go:{line('<-done // main waits')} \(main\.channelDeadlock\) "
    assert re.fullmatch(main + r"\[chan receive on done\]", details[0]), details
    producer = rf"goroutine \d+ at main\.go:{line('results <- i * i')} \(main\.channelDeadlock\.func1\) "
    assert re.fullmatch(producer + r"\[chan send on results\]", details[1]), details
    await tools("debug_terminate")


async def test_the_mutex_deadlock_the_runtime_detects_lists_both_transfers(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(PACKAGE), args=["mutexes"])
    assert report["exception"]["message"] == "all goroutines are asleep - deadlock!", report
    assert len(report["deadlocks"]) == 1, report
    main, *stuck = report["exception"]["details"]
    assert main.startswith(f"goroutine 1 at main.go:{line('done.Wait()')} (main.mutexDeadlock) [semacquire in "
                           "sync.(*WaitGroup).Wait]"), main
    assert len(stuck) == 2 and all(re.search(r"\[semacquire\]: holds sync\.Mutex from\.mu .* waits for sync\.Mutex "
                                             r"to\.mu at 0x[0-9a-f]+ \(held by goroutine \d+\)$", one)
                                   for one in stuck), stuck
    await tools("debug_terminate")


async def test_another_goroutines_frame_is_read_evaluated_and_set(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(PACKAGE), args=["mutexes"])
    assert report["thread_id"] == 1, report
    left, right = transfers(await tools("debug_stack", all_threads=True, levels=1))
    amounts = {}
    for goroutine in (left, right):
        frame = {"thread_id": goroutine["thread_id"], "frame_id": 0}
        local = {v["name"]: v["value"] for v in (await tools("debug_variables", **frame))["variables"]}
        amounts[goroutine["thread_id"]] = local["amount"]
        named = (await tools("debug_evaluate", expression="from.name", **frame))["value"]
        assert (local["amount"], named) in (("10", '"savings"'), ("20", '"checking"')), (local, named)
    assert sorted(amounts.values()) == ["10", "20"]
    frame = {"thread_id": left["thread_id"], "frame_id": 0}
    changed = await tools("debug_set_variable", name="amount", value="amount * 7", **frame)
    assert changed["value"] == str(int(amounts[left["thread_id"]]) * 7), changed
    assert (await tools("debug_evaluate", expression="amount", **frame))["value"] == changed["value"]
    other = {"thread_id": right["thread_id"], "frame_id": 0}
    assert (await tools("debug_evaluate", expression="amount", **other))["value"] == amounts[right["thread_id"]]
    await tools("debug_terminate")


async def test_a_race_stops_at_the_racy_line_with_both_goroutines_accesses(tools: Tools, tmp_path: Path) -> None:
    binary = tmp_path / "racy"
    report = await tools("debug_launch", program=str(binary), args=["race"], cwd=str(PACKAGE),
                         build=f"go build -race -gcflags='all=-N -l' -o {binary} .", timeout_s=120)
    assert report["reason"] == "exception", report
    assert report["location"] == {"file": SOURCE, "line": line("counter++ // racy"),
                                  "function": "main.lostUpdate.func1"}
    exception = report["exception"]
    assert exception["type"] == "data race"
    racing = report["thread_id"]
    access = r"(read|write) at 0x[0-9a-f]+ by goroutine \d+ \(thread {}\) races with previous (read|write) by " \
             r"goroutine \d+ \((running|finished)\)"
    assert re.fullmatch(access.format(racing), exception["message"]), exception
    at_line = f"main.lostUpdate.func1 at main.go:{line('counter++ // racy')}"
    created = (f"main.lostUpdate at main.go:{line('go func() { // a worker')} ← "
               f"main.main at main.go:{line('lostUpdate() // the race')}")
    first, second, *creations = exception["details"]
    assert re.fullmatch(rf"(read|write) by goroutine \d+ \(thread {racing}\): {re.escape(at_line)}", first), first
    assert re.fullmatch(rf"previous (read|write) by goroutine \d+ \(\w+\): {re.escape(at_line)}", second), second
    assert sum(created in one for one in creations) == 2, creations
    variables = {v["name"]: v["value"] for v in (await tools("debug_variables"))["variables"]}
    assert "i" in variables, variables  # the racing goroutine's own frame, live
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 66, done  # the race detector's exit status
    assert "WARNING: DATA RACE" in (await tools("debug_output", stream="stderr"))["text"]
    await tools("debug_terminate")

