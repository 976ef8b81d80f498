"""Several sessions, restart, terminate, exited sessions, attach and pause, through MCP against real debugpy."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from tests.conftest import Tools, line_of, program, text_of

BASIC = program("basic.py")
COUNTDOWN = program("countdown.py")
SPIN = program("spin.py")
ATTACH_TARGET = program("attach_target.py")
LISTEN_THEN_RUN = program("listen_then_run.py")
VENV_PYTHON = str(Path(sys.prefix) / "bin" / "python")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def test_two_concurrent_sessions_are_independent(tools: Tools) -> None:
    add_line = line_of("basic.py", "total = a + b")
    step_line = line_of("countdown.py", "# countdown step")
    one = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": add_line}])
    two = await tools("debug_launch", program=COUNTDOWN, breakpoints=[{"file": COUNTDOWN, "line": step_line}])
    s1, s2 = one["session_id"], two["session_id"]
    assert s1 != s2
    assert two["location"]["function"] == "countdown"

    listed = await tools("debug_sessions")
    assert listed["current"] == s2  # the most recently used
    by_id = {s["session_id"]: s for s in listed["sessions"]}
    assert set(by_id) == {s1, s2}
    assert by_id[s1]["state"] == by_id[s2]["state"] == "stopped"
    assert by_id[s1]["location"]["line"] == add_line
    assert by_id[s2]["location"]["line"] == step_line
    assert by_id[s1]["target"] == "basic.py" and by_id[s2]["target"] == "countdown.py"

    # stepping s1 moves only s1
    stepped = await tools("debug_step", session_id=s1)
    assert stepped["session_id"] == s1
    assert stepped["location"]["line"] == add_line + 1
    other = await tools("debug_stack", session_id=s2)
    assert other["threads"][0]["frames"][0]["line"] == step_line
    assert (await tools("debug_evaluate", expression="n", session_id=s2))["value"] == "3"

    # the default session is now the most recently used one: s2 (by the evaluate above)
    assert (await tools("debug_sessions"))["current"] == s2
    assert (await tools("debug_evaluate", expression="n"))["session_id"] == s2
    # using s1 makes it the default
    assert (await tools("debug_evaluate", expression="total", session_id=s1))["value"] == "0"
    assert (await tools("debug_sessions"))["current"] == s1
    default = await tools("debug_stack")
    assert default["session_id"] == s1
    assert default["threads"][0]["frames"][0]["function"] == "add"

    # stepping s2 leaves s1 alone
    moved = await tools("debug_step", session_id=s2)
    assert moved["location"]["function"] == "countdown"
    assert (await tools("debug_evaluate", expression="n", session_id=s2))["value"] == "2"
    assert (await tools("debug_stack", session_id=s1))["threads"][0]["frames"][0]["line"] == add_line + 1

    # ending one leaves the other
    await tools("debug_terminate", session_id=s1)
    listed = await tools("debug_sessions")
    assert [s["session_id"] for s in listed["sessions"]] == [s2]
    assert listed["current"] == s2
    assert (await tools("debug_continue"))["session_id"] == s2
    await tools("debug_terminate", session_id=s2)
    assert (await tools("debug_sessions"))["sessions"] == []


async def test_restart_keeps_the_id_and_exited_sessions_stay_readable(tools: Tools) -> None:
    step_line = line_of("countdown.py", "# countdown step")
    first = await tools("debug_launch", program=COUNTDOWN, breakpoints=[{"file": COUNTDOWN, "line": step_line}])
    sid = first["session_id"]
    await tools("debug_step")
    assert (await tools("debug_evaluate", expression="n"))["value"] == "2"

    again = await tools("debug_restart")
    assert again["session_id"] == sid
    assert again["state"] == "stopped"
    assert again["location"]["line"] == step_line
    assert {v["name"]: v["value"] for v in again["locals"]} == {"n": "3"}
    (bp,) = (await tools("debug_breakpoints"))["breakpoints"]
    assert bp["line"] == step_line and bp["verified"] and bp["hits"] == 1
    assert [s["session_id"] for s in (await tools("debug_sessions"))["sessions"]] == [sid]

    # run to the end: the session stays, readable, until debug_terminate
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["state"] == "exited"
    assert done["exit_code"] == 0
    assert "countdown: 0" in done["output"]["text"]

    output = await tools("debug_output")
    assert output["state"] == "exited"
    assert "countdown: 0" in output["text"]
    resource = await tools.client.read_resource(f"polydbg://sessions/{sid}/output")
    assert "countdown: 0" in resource.contents[0].text  # type: ignore[union-attr]
    (info,) = (await tools("debug_sessions"))["sessions"]
    assert info["session_id"] == sid and info["state"] == "exited" and info["exit_code"] == 0
    text = await tools.error("debug_stack")
    assert "has exited (code 0)" in text and "debug_restart" in text and "debug_terminate" in text
    assert (await tools("debug_breakpoints"))["session_id"] == sid

    await tools("debug_terminate", session_id=sid)
    assert (await tools("debug_sessions"))["sessions"] == []
    text = await tools.error("debug_output", session_id=sid)
    assert f"no session {sid!r}" in text


async def test_pause_interrupts_an_infinite_loop(tools: Tools) -> None:
    loop_line = line_of("spin.py", "# spin here")
    await tools("debug_launch", program=SPIN, breakpoints=[{"file": SPIN, "line": loop_line}])
    await tools("debug_clear", all=True)
    running = await tools("debug_continue", timeout_s=0.5)
    assert running["state"] == "running" and running["timed_out"] is True
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "running"

    paused = await tools("debug_pause")
    assert paused["state"] == "stopped"
    assert paused["reason"] == "pause"
    assert paused["location"]["file"] == SPIN
    assert paused["location"]["function"] == "spin"
    assert paused["location"]["line"] in (loop_line - 1, loop_line)  # the while line or its body
    assert ">" in paused["source"]
    assert int({v["name"]: v["value"] for v in paused["locals"]}["count"]) > 1
    # it can run and be paused again
    assert (await tools("debug_continue", timeout_s=0.3))["state"] == "running"
    assert (await tools("debug_pause"))["reason"] == "pause"
    await tools("debug_terminate")


async def test_attach_to_a_listening_debug_server_and_detach(tools: Tools) -> None:
    port = _free_port()
    target = await asyncio.create_subprocess_exec(
        VENV_PYTHON, "-X", "frozen_modules=off", LISTEN_THEN_RUN, f"127.0.0.1:{port}", ATTACH_TARGET,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True)
    assert target.stdin is not None and target.stdout is not None
    try:
        assert await asyncio.wait_for(target.stdout.readline(), 30) == b"listening\n"
        line = line_of("attach_target.py", "# attach stop")
        report = await tools("debug_attach", port=port, timeout_s=10,
                             breakpoints=[{"file": ATTACH_TARGET, "line": line}])
        sid = report["session_id"]
        assert report["state"] == "stopped", report  # with breakpoints, attach waits for the first stop
        assert report["reason"] == "breakpoint"
        assert report["location"] == {"file": ATTACH_TARGET, "line": line, "function": "work"}
        assert {v["name"]: v["value"] for v in report["locals"]} == {"value": "41"}
        (info,) = (await tools("debug_sessions"))["sessions"]
        assert info["target"] == f"127.0.0.1:{port}"

        ack = await tools("debug_terminate", detach=True)
        assert ack["session_id"] == sid and "detached" in ack["message"]
        assert (await tools("debug_sessions"))["sessions"] == []

        # the program kept running: it finishes work(), then answers on stdin
        assert await asyncio.wait_for(target.stdout.readline(), 30) == b"worked: 42\n"
        target.stdin.write(b"go\n")
        await target.stdin.drain()
        assert await asyncio.wait_for(target.stdout.readline(), 30) == b"after detach: go\n"
        assert await asyncio.wait_for(target.wait(), 30) == 0
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(target.pid, signal.SIGKILL)  # the target and the debug adapter it spawned
        await target.wait()


@contextlib.asynccontextmanager
async def sleeping_python() -> AsyncIterator[asyncio.subprocess.Process]:
    """A Python program asleep in a system call most of the time, ticking on stdout (it is up when it said so)."""
    target = await asyncio.create_subprocess_exec(
        VENV_PYTHON, program("sleeps_and_ticks.py"), stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, start_new_session=True)
    assert target.stdout is not None
    try:
        assert await asyncio.wait_for(target.stdout.readline(), 30) == b"up\n"
        yield target
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(target.pid, signal.SIGKILL)
        await target.communicate()


async def still_ticking(target: asyncio.subprocess.Process) -> None:
    """The program is alive and well: it goes on ticking (a program resumed with a damaged state dies)."""
    assert target.stdout is not None and target.stderr is not None
    for _ in range(3):
        line = await asyncio.wait_for(target.stdout.readline(), 10)
        assert line.startswith(b"tick "), (line, await target.stderr.read())
    assert target.returncode is None


def is_refused_injection(text: str, pid: int) -> bool:
    """The answer for a host whose gdb cannot inject: why, what works instead, and that the program was spared."""
    return (f"cannot attach to pid {pid}" in text and "was not touched" in text
            and "python -m debugpy --listen" in text and f'debug_attach(pid={pid}, language="c")' in text)


async def test_attaching_to_a_python_pid_works_or_says_why_at_once_and_the_program_lives(tools: Tools) -> None:
    """debugpy injects through gdb, which on some hosts cannot write registers ("Couldn't write extended state
    status: Bad address"): the injection then killed the program after a 60 s wait. Either kind of host passes:
    the attach works, or it is refused within seconds, saying why, and the program goes on."""
    async with sleeping_python() as target:
        started = time.monotonic()
        result = await tools.client.call_tool("debug_attach", {"pid": target.pid, "timeout_s": 30})
        if result.is_error:
            assert is_refused_injection(text_of(result), target.pid), text_of(result)
            assert time.monotonic() - started < 25  # the check of gdb, not debugpy's 60 s wait
        else:
            assert result.structured_content is not None and result.structured_content["state"] == "running"
            (info,) = (await tools("debug_sessions"))["sessions"]
            assert info["pid"] == target.pid, info
            paused = await tools("debug_pause")
            assert paused["state"] == "stopped", paused
            assert int((await tools("debug_evaluate", expression="tick"))["value"]) >= 0
            await tools("debug_terminate", detach=True)
        await still_ticking(target)


async def test_a_gdb_that_cannot_write_registers_is_found_out_before_the_program_is_touched(
        tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What such a host's gdb says, from a gdb on PATH that says only that: the attach is refused at once, with
    gdb's words, and the program was never stopped."""
    fake = tmp_path / "gdb"
    fake.write_text("#!/bin/sh\necho \"Couldn't write extended state status: Bad address.\"\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    async with sleeping_python() as target:
        with anyio.fail_after(15):
            text = await tools.error("debug_attach", pid=target.pid, timeout_s=30)
        assert is_refused_injection(text, target.pid) and "Couldn't write extended state status" in text, text
        assert (await tools("debug_sessions"))["sessions"] == []
        await still_ticking(target)


async def test_a_failed_injection_ends_the_attach_at_once_with_gdbs_words(
        tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A gdb that can call a function in polydbg's throwaway process but not attach to the program (as when
    ptrace is refused): debugpy's injector fails, and the attach says so at once (debugpy waits 60 s)."""
    fake = tmp_path / "gdb"
    fake.write_text('#!/bin/sh\n'
                    'case "$*" in *"call (int)getpid()"*) pid=$(echo "$*" | sed -n "s/.*-p \\([0-9]*\\).*/\\1/p")\n'
                    '  echo "\\$1 = $pid"; exit 0;;\nesac\necho "ptrace: Operation not permitted."\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    async with sleeping_python() as target:
        with anyio.fail_after(20):
            text = await tools.error("debug_attach", pid=target.pid, timeout_s=30)
        assert f"cannot attach to pid {target.pid}: debugpy's injection failed: ptrace: Operation not permitted" \
            in text and "python -m debugpy --listen" in text, text
        await still_ticking(target)
