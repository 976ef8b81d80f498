"""The ``build`` command a launch runs first, and runs again at each ``debug_restart`` (native and Go programs have
no other way to take an edit: a restart after a rebuild is their reload)."""

from __future__ import annotations

import asyncio

from polydbg import procs
from polydbg.errors import UsageError, echo

BUILD_OUTPUT_CHARS = 2000


async def run_build(command: str, cwd: str, timeout_s: float) -> None:
    """Run ``build`` (e.g. ``gcc -g -O0 -o app app.c``) before launching; its failure is the answer."""
    process = await procs.spawn(["/bin/sh", "-c", command], cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
                                stderr=asyncio.subprocess.STDOUT)
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except asyncio.TimeoutError as exc:
        await procs.kill_group(process.pid)
        await procs.reap(process)
        raise UsageError(f"build {echo(command)} did not finish within {timeout_s:g} s") from exc
    finally:
        procs.forget_group(process.pid)
    if process.returncode != 0:
        text = output.decode("utf-8", "replace")[-BUILD_OUTPUT_CHARS:].rstrip()
        raise UsageError(f"build {echo(command)} failed (exit {process.returncode}):\n{text}")
