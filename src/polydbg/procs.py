"""Child processes that cannot outlive polydbg.

Every adapter starts in its own process group with PR_SET_PDEATHSIG=SIGKILL, so it dies with the
server even when the server is SIGKILLed; on terminate the whole group (and any debuggee group the
adapter reported) is signalled, TERM first, then KILL. A registry of live groups lets the CLI kill
everything on SIGTERM/SIGINT/stdin EOF.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import errno
import logging
import os
import shutil
import signal
import sys
from collections.abc import Mapping, Sequence
from typing import NamedTuple

log = logging.getLogger(__name__)

_PR_SET_PDEATHSIG = 1
_SETPRIV = shutil.which("setpriv") if sys.platform.startswith("linux") else None
_live_groups: set[int] = set()


def _die_with_parent() -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


async def spawn(argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None,
                stdin: int | None = asyncio.subprocess.PIPE, stdout: int | None = asyncio.subprocess.PIPE,
                stderr: int | None = asyncio.subprocess.PIPE) -> asyncio.subprocess.Process:
    """Start a process in a new process group that dies with polydbg.

    The parent-death signal is set by ``setpriv --pdeathsig`` where util-linux has it: a ``preexec_fn``
    forces Python to fork instead of vfork, which costs ~4 ms per spawn (a launch spawns one to three).
    """
    command = list(argv)
    preexec = None
    if _SETPRIV is not None:
        if shutil.which(command[0]) is None:  # else setpriv would report it as an exit, not an OSError
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), command[0])
        command = [_SETPRIV, "--pdeathsig", "KILL", "--", *command]
    else:
        preexec = _die_with_parent
    process = await asyncio.create_subprocess_exec(
        *command, env=dict(env) if env is not None else None, cwd=cwd, stdin=stdin, stdout=stdout, stderr=stderr,
        start_new_session=True, preexec_fn=preexec, limit=256 * 1024,
    )
    _live_groups.add(process.pid)
    return process


def track_group(pgid: int) -> None:
    """Remember a process group that polydbg must kill on exit (e.g. a debuggee the adapter spawned)."""
    _live_groups.add(pgid)


def forget_group(pgid: int) -> None:
    """A group that ended on its own (a finished build) needs no killing at exit."""
    _live_groups.discard(pgid)


def signal_group(pgid: int, sig: int) -> bool:
    """Signal a process group; False when it no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        _live_groups.discard(pgid)
        return False
    except PermissionError:
        return False


class ProcStat(NamedTuple):
    """A live (non-zombie) process as /proc/PID/stat describes it."""

    pid: int
    ppid: int
    pgrp: int
    name: str
    start_time: bytes  # clock ticks after boot: with the pid, a process's identity


def read_stat(pid: int | str) -> ProcStat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            raw = handle.read()
    except OSError:
        return None
    head, _, tail = raw.rpartition(b")")
    fields = tail.split()
    if len(fields) < 20 or fields[0] == b"Z":
        return None
    return ProcStat(int(pid), int(fields[1]), int(fields[2]), head.partition(b"(")[2].decode(errors="replace"),
                    fields[19])


def live_processes() -> list[ProcStat]:
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    return [stat for entry in entries if entry.isdigit() and (stat := read_stat(entry)) is not None]


def descendants(root: int) -> list[ProcStat]:
    """Live descendants of ``root`` (children, their children, …)."""
    processes = live_processes()
    found: dict[int, ProcStat] = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for stat in processes:
            if stat.ppid == parent and stat.pid not in found:
                found[stat.pid] = stat
                frontier.append(stat.pid)
    return list(found.values())


def group_alive(pgid: int) -> bool:
    """True while a process of the group is running. Zombies do not count: in containers PID 1 often
    never reaps the orphans it inherits, and ``killpg(pgid, 0)`` would call them alive forever."""
    if not signal_group(pgid, 0):
        return False
    return any(stat.pgrp == pgid for stat in live_processes())


async def kill_group(pgid: int, grace_s: float = 1.0) -> None:
    """TERM the group, wait up to ``grace_s`` for it to go, then KILL it."""
    if not signal_group(pgid, signal.SIGTERM):
        return
    deadline = asyncio.get_running_loop().time() + grace_s
    delay = 0.005
    while asyncio.get_running_loop().time() < deadline:
        if not group_alive(pgid):
            _live_groups.discard(pgid)
            return
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.1)
    signal_group(pgid, signal.SIGKILL)
    _live_groups.discard(pgid)


def kill_all_now() -> None:
    """Synchronously KILL every tracked group (signal handlers, atexit)."""
    for pgid in list(_live_groups):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    _live_groups.clear()


async def reap(process: asyncio.subprocess.Process, timeout_s: float = 2.0) -> int | None:
    """Wait for a process to exit, killing its group if it does not."""
    try:
        return await asyncio.wait_for(process.wait(), timeout_s)
    except asyncio.TimeoutError:
        signal_group(process.pid, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            return await asyncio.wait_for(process.wait(), 1.0)
    return None
