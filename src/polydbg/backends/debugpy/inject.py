"""Whether debugpy can inject itself into a running Python here, asked before it touches the program.

debugpy attaches to a pid by injecting through gdb: gdb stops the program (often inside a system call:
``time.sleep``, a read), calls ``dlopen`` and debugpy's attach function in it, restores the registers and
detaches. On hosts where gdb cannot write the registers (gdb 13 on some virtual machines: "Couldn't write
extended state status: Bad address", seen with a plain ``gdb -p PID -ex 'call …'`` too), the call fails, the
registers stay half-written, and the program resumes in its interrupted call with a corrupt state: it dies
(``OSError: [Errno 514]`` out of ``time.sleep``) while debugpy waits 60 s for a debug server that never
comes. A failure seen in the target is already too late, so gdb's ability is checked on a throwaway process
of polydbg's own (a function call, as the injection makes), once per gdb: the program is attached to only
when the check passed, and otherwise not touched at all.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
import sys

CHECK_TIMEOUT_S = 20.0  # gdb attaching and reading an interpreter's symbols, on a loaded machine
_RESULT = re.compile(r"^\$1 = (\d+)\s*$", re.MULTILINE)
# a process that lets any process of its user trace it (Yama ptrace_scope 1 allows only ancestors), says it is
# up and waits; the check calls getpid() in it through gdb
_THROWAWAY = ("import ctypes, sys, time\n"
              "try: ctypes.CDLL(None).prctl(0x59616d61, -1, 0, 0, 0)\n"
              "except Exception: pass\n"
              "print('up', flush=True)\n"
              "time.sleep(60)\n")
_known: dict[str, str | None] = {}  # gdb's path → why it cannot inject (None: it can)
# lines around gdb's complaint that are not it: gdb's source listing and advice; debugpy's injector echoing the
# command it runs (which calls dlerror) and its own traceback when gdb failed
_NOT_GDBS = re.compile(r"\s*(\d+\t|warning: File|To enable|To completely|info |Running: |Traceback|File \"|"
                       r".*CalledProcessError)")


async def injection_problem() -> str | None:
    """Why debugpy's injection cannot work on this host (gdb missing, or unable to call a function in another
    process, with gdb's own words), or None when it can; checked once per gdb executable."""
    gdb = shutil.which("gdb")
    if gdb is None:
        return "debugpy injects into a running Python through gdb, and gdb is not installed (apt-get install gdb)"
    if gdb not in _known:
        _known[gdb] = await _check(gdb)
    return _known[gdb]


async def _check(gdb: str) -> str | None:
    throwaway = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _THROWAWAY, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL)
    try:
        assert throwaway.stdout is not None
        await asyncio.wait_for(throwaway.stdout.readline(), CHECK_TIMEOUT_S)
        pid = throwaway.pid
        checker = await asyncio.create_subprocess_exec(
            gdb, "--nx", "--nh", "--batch", "-p", str(pid), "-ex", "call (int)getpid()",
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
        try:
            said, _ = await asyncio.wait_for(checker.communicate(), CHECK_TIMEOUT_S)
        except asyncio.TimeoutError:
            return f"gdb did not call a function in a test process within {CHECK_TIMEOUT_S:g} s"
        finally:
            with contextlib.suppress(ProcessLookupError):
                checker.kill()
            await checker.wait()
        text = said.decode("utf-8", "replace")
        called = _RESULT.search(text)
        if called is not None and int(called[1]) == pid and throwaway.returncode is None:
            return None
        return f"gdb cannot call a function in another process on this host (gdb said: {gdb_error(text)})"
    finally:
        with contextlib.suppress(ProcessLookupError):
            throwaway.kill()
        await throwaway.wait()


def gdb_error(output: str) -> str:
    """gdb's complaint in its output: the lines that say what failed (not its banner, warnings or advice)."""
    keep = [line.strip() for line in output.splitlines()
            if re.search(r"(?i)couldn't|cannot|can't|error|failed|not permitted|no such process|denied", line)
            and not _NOT_GDBS.match(line)]
    return "; ".join(dict.fromkeys(keep))[:300] or (output.strip().splitlines() or ["(no output)"])[-1][:300]


def cannot_inject(pid: int, why: str) -> str:
    return (f"cannot attach to pid {pid}: {why}. What works instead: start the program under debugpy, python -m "
            "debugpy --listen 5678 yourprogram.py (with --wait-for-client it waits for you before it runs), then "
            f"debug_attach(port=5678); or debug_attach(pid={pid}, language=\"c\") for its native view (the "
            "interpreter's C stack, native breakpoints)")
