"""Java's threads and locks through the MCP tools, on a real JVM over JDWP: the monitors and ReentrantLocks each
thread holds and waits for with their owners, the two deadlocks of tests/programs/java/Deadlocks.java in the
all-threads stack and in a pause's report (each thread with its file and line), a thread in Object.wait(), one
waiting for a read lock, one parked on a queue inside a synchronized method, and another thread's frames read,
evaluated in and changed while a breakpoint stopped main."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import pytest

from polydbg.jdwp.client import JdwpClient
from tests.conftest import PROGRAMS, Tools, line_of, require

JAVA = PROGRAMS / "java"
SOURCE = str(JAVA / "Deadlocks.java")


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


def line(marker: str) -> int:
    return line_of("java/Deadlocks.java", marker)


async def stopped_with_everyone_stuck(tools: Tools) -> dict[str, int]:
    """Deadlocks.java stopped in main once all its threads are stuck; thread ids by name."""
    report = await tools("debug_launch", program=SOURCE, breakpoints=[{"file": SOURCE, "line": line("// all stuck")}])
    assert report["reason"] == "breakpoint", report
    ids: dict[str, int] = {}
    for thread_id in range(1, 30):
        listed = await tools.client.call_tool("debug_stack", {"thread_id": thread_id, "levels": 1})
        if listed.is_error:
            break
        [shown] = (listed.structured_content or {})["threads"]
        ids[shown["name"].partition(" (")[0]] = thread_id
    assert {"main", "left", "right", "first", "second", "mailman", "reader", "postman"} <= set(ids), ids
    await tools("debug_stack", thread_id=ids["main"])  # main is the current thread again
    return ids


def monitor_cycle(ids: dict[str, int]) -> re.Pattern[str]:
    """The monitor deadlock as a pause or the stack says it: each thread at the line it is blocked on."""
    at_line = line("blocks on the other's monitor"), line('System.out.println("never")')
    blocked = rf"Deadlocks\.java:({at_line[0]}|{at_line[1]})"  # HotSpot: just past the monitorenter, maybe
    return re.compile(
        rf"deadlock: thread {ids['left']} \(left\) at {blocked} holds java\.lang\.Object@\d+ "
        rf"\(Deadlocks\.LEFT, locked in Deadlocks\.monitors\) and waits for java\.lang\.Object@\d+ "
        rf"\(Deadlocks\.RIGHT\), held by thread {ids['right']} \(right\) at {blocked}, which waits for "
        rf"java\.lang\.Object@\d+ \(Deadlocks\.LEFT\), held by thread {ids['left']}$")


def lock_cycle(ids: dict[str, int]) -> re.Pattern[str]:
    """The ReentrantLock deadlock: named after the locks the program holds, not their AQS Sync objects."""
    blocked = "Deadlocks.java:{}".format(line("blocks on the other's lock"))
    lock = r"java\.util\.concurrent\.locks\.ReentrantLock@\d+"
    return re.compile(
        rf"deadlock: thread {ids['first']} \(first\) at {re.escape(blocked)} holds {lock} \(Deadlocks\.FIRST\) "
        rf"and waits for {lock} \(Deadlocks\.SECOND\), held by thread {ids['second']} \(second\) at "
        rf"{re.escape(blocked)}, which waits for {lock} \(Deadlocks\.FIRST\), held by thread {ids['first']}$")


def matching(cycles: list[str] | None, pattern: re.Pattern[str]) -> bool:
    return any(pattern.match(cycle) for cycle in cycles or [])


async def test_a_pause_reports_the_monitor_and_the_reentrant_lock_deadlocks(tools: Tools) -> None:
    ids = await stopped_with_everyone_stuck(tools)
    stack = await tools("debug_stack", all_threads=True, levels=1)
    assert len(stack["deadlocks"]) == 2, stack["deadlocks"]
    assert matching(stack["deadlocks"], monitor_cycle(ids)), stack["deadlocks"]
    assert matching(stack["deadlocks"], lock_cycle(ids)), stack["deadlocks"]
    running = await tools("debug_continue", timeout_s=1)  # main joins the stuck threads: nothing stops it
    assert running["state"] == "running", running
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause", paused
    assert len(paused["deadlocks"]) == 2, paused
    assert matching(paused["deadlocks"], monitor_cycle(ids)), paused["deadlocks"]
    assert matching(paused["deadlocks"], lock_cycle(ids)), paused["deadlocks"]
    assert "DEADLOCK: thread" in await tools.text("debug_stack", all_threads=True)
    await tools("debug_terminate")


async def test_each_thread_says_what_it_holds_and_waits_for(tools: Tools) -> None:
    ids = await stopped_with_everyone_stuck(tools)
    locks: dict[int, dict[str, Any] | None] = {}
    for name in ("main", "left", "right", "first", "second", "mailman", "reader", "postman"):
        [shown] = (await tools("debug_stack", thread_id=ids[name], levels=1))["threads"]
        locks[ids[name]] = shown.get("locks")
    left, right = locks[ids["left"]], locks[ids["right"]]
    assert left is not None and right is not None, locks
    assert left["owner"] == ids["right"] and right["owner"] == ids["left"], locks
    assert re.fullmatch(r"java\.lang\.Object@\d+ \(Deadlocks\.RIGHT\)", left["waits_for"]), left
    assert [re.sub(r"@\d+", "@N", held) for held in left["holds"]] == [
        "java.lang.Object@N (Deadlocks.LEFT, locked in Deadlocks.monitors)"], left
    assert left["waits_for"].partition(" ")[0] == right["holds"][0].partition(" ")[0], (left, right)  # one object
    first = locks[ids["first"]]
    assert first is not None and first["owner"] == ids["second"], first
    assert re.fullmatch(r"java\.util\.concurrent\.locks\.ReentrantLock@\d+ \(Deadlocks\.SECOND\)", first["waits_for"])
    assert [re.sub(r"@\d+", "@N", held) for held in first["holds"]] == [
        "java.util.concurrent.locks.ReentrantLock@N (Deadlocks.FIRST)"], first
    mailman = locks[ids["mailman"]]
    assert mailman is not None and mailman.get("waits_for") is None and not mailman.get("holds"), mailman
    assert re.fullmatch(r"in Object\.wait\(\) on java\.lang\.Object@\d+ \(Deadlocks\.MAILBOX\)", mailman["state"])
    # a read lock waits for the write lock's holder: named by the ReentrantReadWriteLock, not its view or Sync
    reader, main = locks[ids["reader"]], locks[ids["main"]]
    assert reader is not None and reader["owner"] == ids["main"], reader
    assert re.fullmatch(r"java\.util\.concurrent\.locks\.ReentrantReadWriteLock@\d+ \(Deadlocks\.PAGES\)",
                        reader["waits_for"]), reader
    assert main is not None and main["holds"] == [reader["waits_for"]] and main.get("waits_for") is None, main
    # parked on a queue (no lock: no owner) inside a synchronized method, whose object its caller's local names
    postman = locks[ids["postman"]]
    assert postman is not None and postman.get("waits_for") is None, postman
    assert re.fullmatch(r"parked in LinkedBlockingQueue\.take\(\) on java\.util\.concurrent\.LinkedBlockingQueue@\d+ "
                        r"\(office\.letters\)", postman["state"]), postman  # (not this.letters of collect())
    assert [re.sub(r"@\d+", "@N", held) for held in postman["holds"]] == [
        "Deadlocks$PostOffice@N (office, locked in Deadlocks.PostOffice.collect)"], postman
    listing = await tools.text("debug_stack", all_threads=True, levels=1, thread_id=ids["mailman"])
    system = [block for block in listing.split("\nthread ") if "(system, " in block.partition("\n")[0]]
    assert system and not any("Object.wait() on" in block for block in system), listing  # the JVM's own: left out
    await tools("debug_terminate")


async def test_another_thread_s_frames_are_read_evaluated_in_and_changed(tools: Tools) -> None:
    ids = await stopped_with_everyone_stuck(tools)
    mailman = ids["mailman"]
    frames = (await tools("debug_stack", thread_id=mailman, levels=10))["threads"][0]["frames"]
    deliver = next(f["index"] for f in frames if f["function"] == "Deadlocks.deliver")
    await tools("debug_stack", thread_id=ids["main"])  # main (stopped at the breakpoint) is current again
    scope = await tools("debug_variables", thread_id=mailman, frame_id=deliver)
    shown = {v["name"]: v for v in scope["variables"]}
    assert shown["sender"]["value"] == '"left"', shown
    said = await tools.error("debug_evaluate", thread_id=mailman, frame_id=deliver, expression="sender.length()")
    assert f"thread {mailman} did not stop at the event" in said and f"thread {ids['main']}" in said, said
    assert "Reading works" in said, said
    assert (await tools("debug_evaluate", thread_id=mailman, frame_id=deliver,
                        expression="letter.stamps * 10"))["value"] == "20"
    current = await tools("debug_evaluate", thread_id=mailman, frame_id=deliver, expression="Thread.currentThread()")
    assert current["value"] == 'Thread "mailman"', current
    # a member of a value read in mailman's frame is set to a value of that frame (not main's)
    changed = await tools("debug_set_variable", ref=shown["letter"]["ref"], name="to", value="sender")
    assert changed["value"] == '"left"', changed
    assert (await tools("debug_evaluate", thread_id=mailman, frame_id=deliver,
                        expression="letter.to"))["value"] == '"left"'
    assert (await tools("debug_evaluate", expression="stuck.length"))["value"] == "7"  # main's frame by default
    await tools("debug_terminate")


async def test_a_pause_asks_each_thread_s_name_once_and_reads_the_stacks_together(
        tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pause ranks the threads and its report lists them with their locks: one stop, each name asked once,
    the frames of every thread read under a few waits (not a wait a thread: 5,000 threads paused in 10 s)."""
    running = await tools("debug_launch", program=SOURCE, timeout_s=1)
    assert running["state"] == "running", running
    names: list[bytes] = []
    frame_reads: list[int] = []
    send, request_all = JdwpClient.send, JdwpClient.request_all

    def counting(self: JdwpClient, command_set: int, command: int, data: bytes = b"", label: str | None = None,
                 ) -> Any:
        if (command_set, command) == (11, 1):  # ThreadReference.Name
            names.append(data)
        return send(self, command_set, command, data, label)

    async def waits(self: JdwpClient, commands: Any, label: str, timeout: float = 10.0) -> Any:
        if label == "ThreadReference.Frames":
            frame_reads.append(len(commands))
        return await request_all(self, commands, label, timeout)

    monkeypatch.setattr(JdwpClient, "send", counting)
    monkeypatch.setattr(JdwpClient, "request_all", waits)
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause", paused
    # once while it ran (the session lists the threads to pause one), once at the stop for the ranking, the
    # stop and the report's listing
    asked = Counter(names)
    assert asked and max(asked.values()) == 2, f"{len(names)} names asked for {len(asked)} threads"
    assert len(frame_reads) <= 3 and sum(frame_reads) >= 7, frame_reads  # the program's 8 threads, at once
    await tools("debug_terminate")


async def test_a_lock_class_loaded_after_the_first_look_is_still_a_lock(tools: Tools) -> None:
    """No java.util.concurrent lock class is loaded at a program's first lines: a stop there reads every thread's
    locks all the same, and a later one knows a ReentrantLock's owner."""
    late = str(JAVA / "LateLock.java")
    first = await tools("debug_launch", program=late, breakpoints=[
        {"file": late, "line": line_of("java/LateLock.java", "before any lock")},
        {"file": late, "line": line_of("java/LateLock.java", "// waiter parked")}])
    assert first["reason"] == "breakpoint", first
    said = await tools.text("debug_command", command="classes *AbstractOwnableSynchronizer")
    assert said.startswith("0 loaded classes"), said
    await tools("debug_stack", all_threads=True)  # the locks looked at before the lock classes load
    parked = await tools("debug_continue")
    assert parked["reason"] == "breakpoint", parked
    waiter = next(t for t in (await tools("debug_stack", all_threads=True, levels=1))["threads"]
                  if t["name"].startswith("waiter"))
    assert waiter["locks"]["owner"] == parked["thread_id"], waiter
    assert re.fullmatch(r"java\.util\.concurrent\.locks\.ReentrantLock@\d+ \(gate\)", waiter["locks"]["waits_for"])
    await tools("debug_terminate")
