"""Bad input and broken adapters: every failure is an isError result with an actionable message, and
the server (and the session it happened in) keeps working afterwards."""

from __future__ import annotations

import os
import select
import signal
from pathlib import Path

import anyio
import pytest

from polydbg.backends.kit import timeouts
from tests.conftest import PROGRAMS, Tools, line_of, program

BASIC = program("basic.py")
SPIN = program("spin.py")
EXITS_NOW = program("exits_now.py")
TINYPKG_MAIN = program("tinypkg/__main__.py")


def _adapter_pids() -> list[int]:
    """Children of this (test) process running the debugpy adapter."""
    me = str(os.getpid())
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        ppid = next((line.split()[1] for line in status.splitlines() if line.startswith("PPid:")), "")
        if ppid == me and b"debugpy.adapter" in cmdline:
            found.append(int(entry))
    return found


async def test_bad_arguments_without_a_session_are_actionable_errors(tools: Tools, tmp_path: Path) -> None:
    # no session at all
    for name, arguments in [("debug_stack", {}), ("debug_variables", {}), ("debug_evaluate", {"expression": "1"}),
                            ("debug_continue", {}), ("debug_step", {}), ("debug_output", {}),
                            ("debug_terminate", {})]:
        text = await tools.error(name, **arguments)
        assert "no debug session" in text and "debug_launch" in text, (name, text)
    assert (await tools("debug_sessions"))["sessions"] == []

    missing = str(tmp_path / "nope.py")
    text = await tools.error("debug_launch", program=missing)
    assert "not found" in text and missing in text

    not_a_dir = str(tmp_path / "file.txt")
    Path(not_a_dir).write_text("x")
    text = await tools.error("debug_launch", program=BASIC, cwd=not_a_dir)
    assert "cwd" in text and "not a directory" in text

    text = await tools.error("debug_launch", program=BASIC, module="tinypkg")
    assert "exactly one of program" in text
    text = await tools.error("debug_launch")
    assert "exactly one of program" in text

    total = len(Path(BASIC).read_text().splitlines())
    text = await tools.error("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": total + 50}])
    assert f"line {total + 50}" in text and f"between 1 and {total}" in text

    text = await tools.error("debug_launch", program=BASIC, breakpoints=[{"file": missing, "line": 1}])
    assert "does not exist" in text and missing in text

    text = await tools.error("debug_launch", program=BASIC, timeout_s="soon")
    assert "timeout_s" in text

    # none of the failed launches left a session behind
    assert (await tools("debug_sessions"))["sessions"] == []

    # a correct launch still works
    line = line_of("basic.py", "total = a + b")
    report = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    sid = report["session_id"]
    assert report["state"] == "stopped"
    assert report["location"]["line"] == line
    assert [s["session_id"] for s in (await tools("debug_sessions"))["sessions"]] == [sid]

    # an unknown session id names the known ones, and leaves the real session untouched
    text = await tools.error("debug_stack", session_id="s999")
    assert "no session 's999'" in text and sid in text
    stack = await tools("debug_stack", session_id=sid)
    assert stack["threads"][0]["frames"][0]["function"] == "add"
    await tools("debug_terminate", session_id=sid)
    text = await tools.error("debug_stack", session_id=sid)
    assert f"no session {sid!r}" in text


async def test_errors_inside_a_session_leave_it_usable(tools: Tools, tmp_path: Path) -> None:
    line = line_of("basic.py", "items.append(add(i, i))")
    report = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    assert report["location"]["function"] == "collect"

    async def still_fine() -> None:
        stack = await tools("debug_stack")
        assert stack["threads"][0]["frames"][0]["line"] == line

    # breakpoints past the end / in a missing file
    total = len(Path(BASIC).read_text().splitlines())
    text = await tools.error("debug_break", file=BASIC, line=total + 1)
    assert f"between 1 and {total}" in text
    await still_fine()
    text = await tools.error("debug_break", file=str(tmp_path / "gone.py"), line=3)
    assert "does not exist" in text
    await still_fine()

    # wrong argument types are rejected by validation, as an isError result
    text = await tools.error("debug_break", file=BASIC, line="abc")
    assert "line" in text
    await still_fine()
    text = await tools.error("debug_step", count=-1)
    assert "count" in text
    await still_fine()
    text = await tools.error("debug_variables", frame_id="top")
    assert "frame_id" in text
    await still_fine()
    text = await tools.error("debug_output", max_bytes=0)
    assert "max_bytes" in text
    await still_fine()

    # an expression that does not parse
    text = await tools.error("debug_evaluate", expression="items +* )")
    assert "cannot evaluate" in text and "SyntaxError" in text
    assert (await tools("debug_evaluate", expression="len(items) + n"))["value"] == "5"

    # a frame that does not exist
    text = await tools.error("debug_variables", frame_id=50)
    assert "frame 50 does not exist" in text
    await still_fine()

    # a ref from an earlier stop
    old_ref = {v["name"]: v.get("ref") for v in report["locals"]}["items"]
    assert old_ref
    assert (await tools("debug_variables", ref=old_ref))["ref"] == old_ref
    inside = await tools("debug_step", kind="into")
    assert inside["location"]["function"] == "add"
    assert all(not v.get("ref") for v in inside["locals"])
    text = await tools.error("debug_variables", ref=old_ref)
    assert f"ref {old_ref} is from an earlier stop" in text and "fresh ref" in text
    # the session still answers, and fresh refs work
    back = await tools("debug_step", kind="out")
    assert back["location"]["function"] == "collect"
    fresh = {v["name"]: v.get("ref") for v in back["locals"]}["items"]
    assert fresh
    assert (await tools("debug_variables", ref=fresh))["ref"] == fresh
    await tools("debug_terminate")


async def test_inspection_while_running_is_refused(tools: Tools) -> None:
    line = line_of("spin.py", "# spin here")
    first = await tools("debug_launch", program=SPIN, breakpoints=[{"file": SPIN, "line": line}])
    assert first["location"]["line"] == line
    await tools("debug_clear", all=True)
    # nothing will stop the loop: the continue returns at its deadline with the program still running
    report = await tools("debug_continue", timeout_s=0.5)
    assert report["state"] == "running"
    assert report["timed_out"] is True
    for name, arguments in [("debug_variables", {}), ("debug_stack", {}),
                            ("debug_evaluate", {"expression": "count"}), ("debug_step", {})]:
        text = await tools.error(name, **arguments)
        assert "running, not stopped" in text and "debug_pause" in text, (name, text)
    paused = await tools("debug_pause")
    assert paused["state"] == "stopped"
    assert paused["reason"] == "pause"
    assert paused["location"]["function"] == "spin"
    assert int((await tools("debug_evaluate", expression="count"))["value"]) > 0
    await tools("debug_terminate")


async def test_killed_adapter_ends_the_session_with_a_cause(tools: Tools) -> None:
    line = line_of("basic.py", "total = a + b")
    report = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    sid = report["session_id"]
    adapters = _adapter_pids()
    assert len(adapters) == 1, adapters
    adapter = adapters[0]
    pidfd = os.pidfd_open(adapter)
    try:
        os.killpg(os.getpgid(adapter), signal.SIGKILL)
        assert select.select([pidfd], [], [], 10)[0], "the adapter survived SIGKILL"
    finally:
        os.close(pidfd)

    text = await tools.error("debug_continue")
    assert sid in text
    assert "debugpy exited unexpectedly (killed by SIGKILL)" in text, text  # the backend's account of its end
    assert "debug_launch" in text or "debug_restart" in text, text

    # debug_sessions still answers; right after that failed call (checked at the end)
    (info,) = (await tools("debug_sessions"))["sessions"]

    # a new launch works
    again = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    assert again["state"] == "stopped"
    assert again["location"]["line"] == line
    assert again["session_id"] != sid
    await tools("debug_terminate", session_id=again["session_id"])

    # the dead session says why it ended, and refuses inspection with that cause, without hanging
    (later,) = (await tools("debug_sessions"))["sessions"]
    assert later["session_id"] == sid
    assert later["state"] == "terminated"
    assert "debugpy exited unexpectedly" in later.get("cause", ""), later
    text = await tools.error("debug_stack", session_id=sid)
    assert "terminated" in text and "debugpy exited unexpectedly" in text
    await tools("debug_terminate", session_id=sid)

    # once a tool call has reported the adapter gone, the session must not look alive
    assert info["session_id"] == sid
    assert info["state"] == "terminated", info
    assert "debugpy exited unexpectedly" in info.get("cause", ""), info


async def test_program_that_exits_immediately(tools: Tools) -> None:
    report = await tools("debug_launch", program=EXITS_NOW)
    assert report["state"] == "exited"
    assert report["exit_code"] == 3
    assert "leaving early" in report["output"]["text"]
    text = await tools.error("debug_stack")
    assert "exited (code 3)" in text
    await tools("debug_terminate")


async def test_stop_on_entry(tools: Tools) -> None:
    report = await tools("debug_launch", program=BASIC, stop_on_entry=True)
    assert report["state"] == "stopped"
    assert report["reason"] == "entry"
    assert report["location"]["file"] == BASIC
    assert report["location"]["line"] == line_of("basic.py", '"""A small program')
    step = await tools("debug_step")
    assert step["state"] == "stopped"
    assert step["location"]["file"] == BASIC
    await tools("debug_terminate")


async def test_module_launch(tools: Tools) -> None:
    line = line_of("tinypkg/__main__.py", "# greet line")
    report = await tools("debug_launch", module="tinypkg", cwd=str(PROGRAMS),
                         breakpoints=[{"file": TINYPKG_MAIN, "line": line}])
    assert report["state"] == "stopped", report
    assert report["reason"] == "breakpoint"
    assert report["location"] == {"file": TINYPKG_MAIN, "line": line, "function": "greet"}
    assert {v["name"]: v["value"] for v in report["locals"]} == {"name": "'module'"}
    done = await tools("debug_continue")
    assert done["state"] == "exited"
    assert done["exit_code"] == 0
    assert "hi module" in done["output"]["text"]
    sessions = await tools("debug_sessions")
    assert sessions["sessions"][0]["target"] == "-m tinypkg"
    await tools("debug_terminate")


async def test_a_cancelled_launch_leaves_no_session_and_no_process(tools: Tools) -> None:
    """The agent gives up on a launch while it waits for the first stop: the session and every process it
    started go (the no-leftover fixture checks the processes; anyio re-cancels every await of a cancelled
    request, so the cleanup must not be cut short)."""
    waiting = anyio.Event()

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        waiting.set()  # the program runs: the launch is waiting for a stop

    async def launch() -> None:
        await tools.client.call_tool("debug_launch", {"program": SPIN, "timeout_s": 60}, progress_callback=progressed)

    async with anyio.create_task_group() as group:
        group.start_soon(launch)
        with anyio.fail_after(30):
            await waiting.wait()
        adapters = [os.pidfd_open(pid) for pid in _adapter_pids()]
        assert adapters, "the adapter should be running while the launch waits"
        group.cancel_scope.cancel()
    try:
        with anyio.fail_after(10):
            for pidfd in adapters:
                await anyio.wait_readable(pidfd)  # readable once the process has exited
    finally:
        for pidfd in adapters:
            os.close(pidfd)
    assert (await tools("debug_sessions"))["sessions"] == []


async def test_an_endless_evaluate_says_it_is_still_running_and_costs_one_deadline(
        tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeouts, "INSPECT_S", 2.0)
    line = line_of("basic.py", "items.append(add(i, i))")
    await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    text = await tools.error("debug_evaluate", expression="exec('while True: pass')")
    assert "still running" in text and "debug_terminate" in text, text
    with anyio.fail_after(1.5):  # refused at once, not after another deadline
        text = await tools.error("debug_evaluate", expression="len(items)")
    assert "'exec('while True: pass')' is still running" in text or "still running in the program" in text, text
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"
    await tools("debug_terminate")


async def test_a_pause_stops_python_whose_only_thread_is_blocked_in_c(tools: Tools) -> None:
    """debugpy stops a thread only when it runs a Python line: a program blocked in a lock wait did not stop at all
    (the pause said so after 5 s); polydbg's probe thread in the program makes it stop at once."""
    blocked = program("blocked.py")
    report = await tools("debug_launch", program=blocked, timeout_s=1)
    assert report["state"] == "running"
    await tools.printed("up", 30)  # then it blocks
    with anyio.fail_after(10):
        paused = await tools("debug_pause", timeout_s=30)
    assert paused["state"] == "stopped" and paused["reason"] == "pause", paused
    assert paused["location"]["line"] == line_of("blocked.py", "threading.Event().wait()"), paused
    [main] = (await tools("debug_stack", all_threads=True))["threads"]  # the probe is not listed
    assert main["locks"]["state"] == "in Event.wait()", main
    assert (await tools("debug_terminate"))


async def test_a_pause_honours_its_timeout_when_the_debugger_cannot_answer(tools: Tools) -> None:
    """The program computes in C holding the interpreter's lock, so debugpy cannot answer: the pause costs its
    timeout, no more, and says how to see where the program is (its native stack, in a second session)."""
    # it says "up" and computes from then on, quiet: the launch answers "running" once it has been quiet a while
    report = await tools("debug_launch", program=program("holds_the_gil.py"), timeout_s=60)
    assert report["state"] == "running" and "up" in report["output"]["text"], report
    (session,) = (await tools("debug_sessions"))["sessions"]
    pid = session["pid"]
    assert isinstance(pid, int) and pid > 0 and os.path.exists(f"/proc/{pid}"), session  # the program's own pid
    with anyio.fail_after(6):
        text = await tools.error("debug_pause", timeout_s=2)
    assert "did not list the program's threads within 2 s" in text, text
    assert f'debug_attach(pid={pid}, language="c")' in text, text  # the native view of where it is
    await tools("debug_terminate")


async def test_a_daemon_the_program_started_ends_with_the_session(tools: Tools, tmp_path: Path) -> None:
    daemonizes = program("daemonizes.py")
    pid_file = tmp_path / "daemon.pid"
    report = await tools("debug_launch", program=daemonizes, args=[str(pid_file)],
                         breakpoints=[{"file": daemonizes, "line": line_of("daemonizes.py", "# parked")}])
    assert report["state"] == "stopped", report
    daemon = int(pid_file.read_text())
    watch = os.pidfd_open(daemon)
    try:
        await tools("debug_terminate")
        assert select.select([watch], [], [], 5.0)[0], f"the daemon {daemon} outlived debug_terminate"
    finally:
        os.close(watch)


async def test_a_program_that_exits_leaving_a_child_is_not_reported_running(tools: Tools) -> None:
    # debugpy's launcher waits for the program's output pipes, which the child still holds
    report = await tools("debug_launch", program=program("leaves_a_child.py"), timeout_s=15)
    assert report["state"] in ("exited", "terminated"), report
    assert "parent leaving" in report["output"]["text"]
    await tools("debug_terminate")
