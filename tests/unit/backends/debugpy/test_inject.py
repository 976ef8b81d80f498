"""gdb's complaint, picked out of its output for the answer to a refused attach."""

from __future__ import annotations

from polydbg.backends.debugpy.inject import gdb_error

HOST_WITHOUT_REGISTER_WRITES = """\
__GI___clock_nanosleep (clock_id=clock_id@entry=1, flags=flags@entry=1) at clock_nanosleep.c:71
71\t../sysdeps/unix/sysv/linux/clock_nanosleep.c: No such file or directory.
warning: File "/usr/bin/python3.11-gdb.py" auto-loading has been declined by your `auto-load safe-path'
To enable execution of this file add
Couldn't write extended state status: Bad address.
[Inferior 1 (process 4242) detached]
"""


def test_the_failure_is_kept_and_the_source_listing_and_advice_are_not() -> None:
    assert gdb_error(HOST_WITHOUT_REGISTER_WRITES) == "Couldn't write extended state status: Bad address."


def test_a_refused_ptrace_is_said_once() -> None:
    said = "ptrace: Operation not permitted.\nptrace: Operation not permitted.\nNo symbol table is loaded.\n"
    assert gdb_error(said) == "ptrace: Operation not permitted."


def test_output_without_a_known_complaint_gives_its_last_line() -> None:
    assert gdb_error("attached\nsomething odd happened\n") == "something odd happened"
    assert gdb_error("") == "(no output)"


INJECTOR_FAILED = """\
--- Starting attach to pid: 4242 ---
PYDEVD_GDB_SCAN_SHARED_LIBRARIES not set (scanning all libraries for needed symbols).
Running: gdb --nw --nh --nx --pid 4242 --batch --eval-command='call (char*)dlerror()'
ptrace: Operation not permitted.
Traceback (most recent call last):
  File "/x/add_code_to_python_process.py", line 471, in run_python_code_linux
    subprocess.check_call(' '.join(cmd), shell=True, env=env)
subprocess.CalledProcessError: Command 'gdb --pid 4242' returned non-zero exit status 1.
"""


def test_debugpys_injector_output_gives_gdbs_complaint_not_its_command_or_traceback() -> None:
    assert gdb_error(INJECTOR_FAILED) == "ptrace: Operation not permitted."
