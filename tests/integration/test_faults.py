"""Faults around a stopped program, on real debuggers: thousands of threads whose stacks debugpy answers one at a
time; a program stopped by a signal under a debugger that lives inside it; a request to move the program that
is not answered; a program killed while stopped (how it ended is the kernel's word, not a debugger's code)."""

from __future__ import annotations

import os
import signal

import pytest

from polydbg.backends.kit import timeouts
from tests.conftest import PROGRAMS, Tools, line_of, program, require

WAITING = program("waiting_threads.py")
LOOP = program("loop.py")
JAVA = PROGRAMS / "java"


async def test_the_stacks_of_python_threads_blocked_in_c_code_are_all_read_in_one_listing(tools: Tools) -> None:
    """pydevd waited 0.5 s for each thread that is not stopped (blocked in a lock, a sleep, a read) before it
    answered its stack, and debugpy answers one request after another: 2,000 such threads made a listing of
    21 minutes, which wedged the session. Each answers at once now, and the listing is bounded anyway."""
    report = await tools("debug_launch", program=WAITING, args=["80"],
                         breakpoints=[{"file": WAITING, "line": line_of("waiting_threads.py", "# all started")}])
    assert report["state"] == "stopped", report
    listing = await tools("debug_stack", all_threads=True, levels=2)
    assert "not listed" not in (listing.get("more") or ""), listing.get("more")  # all read within the budget
    threads = listing["threads"]
    assert sum(1 + t.get("same", 0) for t in threads) == 81, threads  # the workers and the main thread
    workers = [t for t in threads if t["name"].startswith("w")]
    assert all(t["frames"][0]["function"] == "worker" for t in workers), workers
    assert sum(1 + t.get("same", 0) for t in workers) == 80, workers
    assert (await tools("debug_evaluate", expression="len(workers)"))["value"] == "80"  # not held up
    await tools("debug_terminate")


async def test_a_python_program_stopped_by_a_signal_is_said_so_and_an_unanswered_continue_may_still_take_effect(
        tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    """debugpy's pydevd runs inside the program: SIGSTOPped, it answers nothing. An evaluation was said to be "an
    endless loop", a continue failed but ran once the program was continued, and the session read "running"."""
    monkeypatch.setattr(timeouts, "INSPECT_S", 2.0)
    inside = line_of("loop.py", "result = n * n")
    report = await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": inside}])
    assert report["state"] == "stopped" and report["location"]["line"] == inside, report
    pid = (await tools("debug_sessions"))["sessions"][0]["pid"]
    os.kill(pid, signal.SIGSTOP)
    try:
        said = await tools.error("debug_continue")
        assert "The request was sent, so it may still take effect" in said, said
        assert f"the program (pid {pid}) is stopped by a signal" in said and f"kill -CONT {pid}" in said, said
        [session] = (await tools("debug_sessions"))["sessions"]
        assert session["state"] == "stopped" and session["cause"].startswith("unconfirmed: "), session
        said = await tools.error("debug_evaluate", expression="n")
        assert f"kill -CONT {pid}" in said and "endless" not in said and "still running" not in said, said
    finally:
        os.kill(pid, signal.SIGCONT)
    # the continue takes effect now: the program runs on to the next hit
    await tools.session_once(lambda s: s["state"] == "stopped" and "cause" not in s, within_s=20)
    assert (await tools("debug_evaluate", expression="n"))["value"] == "1"
    await tools("debug_terminate")


async def test_a_jvm_killed_while_stopped_has_exited_killed_by_the_signal(tools: Tools) -> None:
    """It read "exit 1": the guard above the JVM died of resetting SIGKILL's handler, which has none."""
    require("java", "javac")
    basics = str(JAVA / "Basics.java")
    await tools("debug_launch", program=basics,
                breakpoints=[{"file": basics, "line": line_of("java/Basics.java", "int result = n * n;")}])
    pid = (await tools("debug_sessions"))["sessions"][0]["pid"]
    os.kill(pid, signal.SIGKILL)
    session = await tools.session_once(lambda s: s["state"] != "stopped", within_s=10)
    assert session["state"] == "exited" and session["cause"] == "killed by signal 9 (SIGKILL)", session
    assert "exit_code" not in session, session
    said = await tools.error("debug_evaluate", expression="n")
    assert "has exited (killed by signal 9 (SIGKILL))" in said, said
    await tools("debug_terminate")
