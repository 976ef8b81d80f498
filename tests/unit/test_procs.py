"""What /proc says about the debugger and the program (procs.py), on real processes: whether a debugger that
does not answer can be busy at all; and a debugger's stderr, quoted in errors: its end, and always what a traceback
there raised."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from polydbg import procs
from polydbg.procs import DebuggerProcess


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


# debugpy's adapter logging a handler's failure (then os._exit(1)): the exception line, then ~20 lines of the
# stack where it logged it
LOGGED = """\
E+00012.345: /handling #7 request "disconnect" from Client[3]/
             Handler 'disconnect_request' (file '/x/clients.py', line 731)
             couldn't handle #7 request "disconnect" from Client[3]:

             Traceback (most recent call last):
               File "/x/messaging.py", line 1518, in _run_handlers
                 handler()
               File "/x/sessions.py", line 169, in finalize
                 self._finalize(why, terminate_debuggee)
             KeyError: 4242

             Stack where logged:
""" + "".join(f"               File \"/x/frame{i}.py\", line {i}, in f{i}\n                 call{i}()\n"
              for i in range(12))


def test_the_exception_line_is_quoted_though_the_tail_ends_long_after_it() -> None:
    proc = DebuggerProcess("debugpy")
    for line in LOGGED.splitlines(keepends=True):
        proc.remember(line)
    hint = proc.stderr_hint()
    assert "KeyError: 4242" in hint and "frame11.py" in hint, hint
    assert len(hint) < 700


def test_the_last_of_chained_tracebacks_is_the_one_quoted() -> None:
    proc = DebuggerProcess("adapter")
    for line in ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "    x()",
                 "ValueError: first", "", "During handling of the above exception, another exception occurred:",
                 "", "Traceback (most recent call last):", '  File "a.py", line 3, in <module>', "    y()",
                 "RuntimeError: second", *(f"noise {i}" for i in range(40))]:
        proc.remember(line + "\n")
    hint = proc.stderr_hint()
    assert "RuntimeError: second" in hint and "ValueError" not in hint and "During handling" not in hint, hint


def test_no_traceback_no_addition() -> None:
    proc = DebuggerProcess("gdb")
    proc.remember("just a line\n")
    assert proc.stderr_hint() == "; gdb stderr: just a line"
    assert DebuggerProcess("x").stderr_hint() == ""


def test_how_a_process_ended_is_read_from_its_zombie_until_it_is_reaped() -> None:
    killed = subprocess.Popen(["sleep", "100"])
    exited = subprocess.Popen(["sh", "-c", "exit 3"])
    assert procs.exit_status(killed.pid) is None  # it lives
    killed.kill()
    for child in (killed, exited):
        os.waitid(os.P_PID, child.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
    assert procs.exit_status(killed.pid) == "killed by SIGKILL"
    assert procs.exit_status(exited.pid) == "exited with code 3"
    killed.wait()
    exited.wait()
    assert procs.exit_status(killed.pid) is None  # reaped: /proc no longer says
