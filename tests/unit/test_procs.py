"""What /proc says about the debugger and the program (procs.py), on real processes: whether a debugger that
does not answer can be busy at all."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from polydbg import procs


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        yield process
    finally:
        process.kill()
        process.wait()


def test_a_process_stopped_by_a_signal_reads_stopped(sleeper: subprocess.Popen[bytes]) -> None:
    assert procs.thread_states(sleeper.pid) <= {"R", "S"}
    os.kill(sleeper.pid, signal.SIGSTOP)
    try:
        _, status = os.waitpid(sleeper.pid, os.WUNTRACED)  # returns once it is stopped
        assert os.WIFSTOPPED(status) and procs.thread_states(sleeper.pid) == {"T"}
    finally:
        os.kill(sleeper.pid, signal.SIGCONT)
    assert procs.thread_states(-1) == set()


async def test_a_debugger_stopped_by_a_signal_is_not_answering(monkeypatch: pytest.MonkeyPatch) -> None:
    """The debugger is the guard's child; whether a process reads stopped is the test above (a stop is seen in
    /proc only once the process is scheduled, which nothing announces for a grandchild)."""
    debugger = procs.DebuggerProcess("sh")
    process = await debugger.start(["sh", "-c", "echo up; exec sleep 60"])
    try:
        assert process.stdout is not None and await process.stdout.readline() == b"up\n"  # the guard forked it
        pid = debugger.debugger_pid()
        assert pid is not None and pid != debugger.pid  # the debugger, not its guard
        assert debugger.not_answering() is None
        real = procs.thread_states
        monkeypatch.setattr(procs, "thread_states", lambda p: {"T"} if p == pid else real(p))
        why = debugger.not_answering()
        assert why is not None and f"kill -CONT {pid}" in why and "stopped by a signal" in why
    finally:
        await debugger.end()
