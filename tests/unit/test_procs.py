"""What /proc says about the debugger and the program (procs.py), on real processes: whether a debugger that
does not answer can be busy at all; and a debugger's stderr, quoted in errors: its end, and always what a traceback
there raised."""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import sys
from collections.abc import Iterator

import pytest

from polydbg import procs
from polydbg.procs import DebuggerProcess

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameter (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


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


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGSEGV])
async def test_a_debugger_killed_by_a_signal_reads_killed_by_it_through_its_guard(sig: signal.Signals) -> None:
    """The guard dies of the signal that killed the debugger (a program that is the debugger, Node or the JVM, was
    reported as "exit 1" when killed by SIGKILL, whose action the guard could not set)."""
    debugger = procs.DebuggerProcess("sh")
    process = await debugger.start(["sh", "-c", f"kill -{int(sig)} $$"])
    try:
        assert await process.wait() == -sig
    finally:
        await debugger.end()


def test_a_program_stopped_by_a_signal_is_said_to_be_so_with_the_command_that_continues_it(
        sleeper: subprocess.Popen[bytes]) -> None:
    """A debugger that runs inside the program (debugpy's pydevd) answers nothing while a signal holds it."""
    debugger = procs.DebuggerProcess("debugpy")
    debugger.debuggee_pid = sleeper.pid
    assert debugger.held_by_signal() is None and debugger.not_answering() is None
    os.kill(sleeper.pid, signal.SIGSTOP)
    try:
        os.waitpid(sleeper.pid, os.WUNTRACED)  # returns once it is stopped
        why = debugger.held_by_signal()
        assert why is not None and f"the program (pid {sleeper.pid}) is stopped by a signal" in why, why
        assert f"kill -CONT {sleeper.pid}" in why and debugger.not_answering() == why
    finally:
        os.kill(sleeper.pid, signal.SIGCONT)


def test_how_a_program_ended_is_the_kernel_s_word_whoever_reaps_it() -> None:
    """Reaped (Linux 6.15's pidfd exit information) or still a zombie (/proc's exit_code): a signal is a signal,
    an exit code an exit code; a running program has not ended."""
    killed = subprocess.Popen(["sleep", "60"])
    exits = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(247)"])  # what debugpy says for SIGKILL
    watches: list[procs.ProgramWatch] = []
    try:
        watches += [procs.ProgramWatch(killed.pid), procs.ProgramWatch(exits.pid)]
        assert watches[0].ended() is None
        os.kill(killed.pid, signal.SIGKILL)
        os.waitid(os.P_PID, killed.pid, os.WEXITED | os.WNOWAIT)  # ended, not reaped: a zombie
        assert watches[0].ended() == (None, signal.SIGKILL)
        assert str(watches[0].ended()) == "killed by signal 9 (SIGKILL)"
        killed.wait()
        exits.wait()
        release = tuple(int(part) for part in re.findall(r"\d+", platform.release())[:2])
        reaped = [watch.ended() for watch in watches]
        assert reaped == [(None, signal.SIGKILL), (247, None)] or (release < (6, 15) and reaped == [None, None])
        assert str(procs.ProgramEnd(3, None)) == "exited with code 3"
    finally:
        for process in (killed, exits):
            process.kill()
            process.wait()
        for watch in watches:
            watch.close()


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
