"""A program released by a debugger that did not detach: its code put back from its files (tracee.py), on a
real process whose code gets an int3 the way a debugger writes one."""

from __future__ import annotations

import os
import platform
import signal
import subprocess
from collections.abc import Iterator

import pytest

from polydbg import tracee


@pytest.fixture
def stopped_sleeper() -> Iterator[int]:
    process = subprocess.Popen(["sleep", "60"])
    try:
        os.kill(process.pid, signal.SIGSTOP)
        os.waitpid(process.pid, os.WUNTRACED)  # returns once it is stopped
        yield process.pid
    finally:
        process.kill()
        process.wait()


@pytest.mark.skipif(platform.machine() != "x86_64", reason="int3 is x86's breakpoint instruction")
def test_an_int3_a_debugger_left_in_the_code_is_put_back_from_the_file(stopped_sleeper: int) -> None:
    pid = stopped_sleeper
    start, _end, offset, path = tracee._code_mappings(pid)[0]
    with open(path, "rb") as file:
        file.seek(offset)
        original = file.read(4096)
    at = next(i for i, byte in enumerate(original) if byte != tracee.INT3)
    with open(f"/proc/{pid}/mem", "r+b", buffering=0) as memory:
        memory.seek(start + at)
        memory.write(bytes([tracee.INT3]))  # what a debugger's software breakpoint is
        assert tracee.restore_code(pid) == 1
        memory.seek(start)
        assert memory.read(4096) == original
    assert tracee.restore_code(pid) == 0  # nothing left to put back
    assert tracee.tracer_of(pid) == 0 and tracee.tracer_of(-1) == 0


def test_a_detach_that_failed_says_what_became_of_the_program(stopped_sleeper: int) -> None:
    text = tracee.detach_failed("lldb-dap", "no answer within 5 s", stopped_sleeper, "spin()")
    assert text.startswith("lldb-dap did not answer the detach (no answer within 5 s), so polydbg ended it")
    assert "'spin()', an expression lldb-dap was running in the program, had not finished" in text
    assert tracee.detach_failed("gdb", "x", None) == "gdb did not answer the detach (x), so polydbg ended it"
