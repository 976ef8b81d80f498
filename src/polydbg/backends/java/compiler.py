"""Running javac or kotlinc for polydbg's own builds: a .java or .kt program at launch, the edited files of a reload.

The compiler runs in a process group of its own (kotlinc is a shell script that starts a JVM: both are killed
when it takes too long or the request is cancelled). A failure is the compiler's output, for the caller to word.
"""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Sequence

from polydbg.errors import UsageError


async def run(argv: Sequence[str], timeout_s: float, what: str) -> str | None:
    """The compiler's output when it failed, None when it compiled; one that does not finish within ``timeout_s``
    raises, saying ``what`` did not finish (``javac compiling Counter.java``)."""
    process = await asyncio.create_subprocess_exec(
        *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True)
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except asyncio.TimeoutError as exc:
        _kill_group(process)
        await process.wait()
        raise UsageError(f"{what} did not finish within {timeout_s:g} s") from exc
    except asyncio.CancelledError:
        _kill_group(process)
        raise
    return output.decode(errors="replace") if process.returncode != 0 else None


def _kill_group(process: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
