"""Warm guards: a process guard started before it is needed, so a launch does not wait for its interpreter.

Every debugger runs under ``polydbg.guard``, a ``python -S`` that starts in ~15 ms on an idle machine and 50–100
ms under load: most of what separated polydbg from a raw client on PHP. While a server runs (``warm_guards()``, its
lifespan), the first guarded spawn of each stdio shape (stdin, stdout and stderr each a pipe or /dev/null) and
locale starts another guard of that shape in the background (``guard.WARM``), which sets itself up as a guard does
(subreaper, parent-death signal, signal handlers) and then waits on a pipe. The next spawn of that shape writes
argv, env and cwd into the pipe and closes it, and gets that guard's ``asyncio.subprocess.Process`` at once; a new
one is started for the spawn after it. The process is the one a fresh guard would have been: its own session, its
pid the guard's, its pipes the debugger's, the env passed whole (``None``: polydbg's own at the time of the spawn,
not at the warm guard's start) and the cwd the caller's (``None``: polydbg's at the time of the spawn).

A fresh guard is started instead whenever the warm one might differ: another stdio (an open file as stdin, an
inherited stream) or locale variables (the interpreter's C-locale coercion writes LC_CTYPE into the environment it
passes on, so a warm guard serves the locale it started with: ``guard.LOCALE``), another event loop, a cwd
that is not an enterable directory (the error is then the one a fresh spawn raises), a request larger than the
pipe holds, or a warm guard that has died (its pipe's reader gone: EPIPE).

Nothing is left behind: a warm guard nobody took is in ``procs``' live groups (killed on SIGTERM, SIGINT and at
exit), dies with polydbg by its parent-death signal, exits when its pipe ends with no request, and the server's
lifespan ends them all (``close``).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import marshal
import os
import signal
import sys
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any, NamedTuple

from polydbg.guard import LOCALE, WARM

log = logging.getLogger(__name__)

Shape = tuple[int | None, int | None, int | None]  # stdin, stdout, stderr: each asyncio.subprocess.PIPE or DEVNULL
_Key = tuple[Shape, tuple[str | None, ...]]  # and the locale variables it started with (``guard.LOCALE``)
SHAPES = (asyncio.subprocess.PIPE, asyncio.subprocess.DEVNULL)
_F_GETPIPE_SZ = 1032
END_S = 2.0  # time an untaken warm guard has to exit once its pipe is closed, before it is killed


class _Warm(NamedTuple):
    process: asyncio.subprocess.Process
    control: int  # the write end of the pipe the guard reads its request from (non-blocking)


def _locale(env: Mapping[str, str]) -> tuple[str | None, ...]:
    return tuple(env.get(key) for key in LOCALE)


class Pool:
    """The warm guards of one event loop, one per stdio shape and locale; ``track``/``forget`` keep procs' live
    groups."""

    def __init__(self, track: Callable[[int], None], forget: Callable[[int], None]) -> None:
        self.loop = asyncio.get_running_loop()
        self.users = 0
        self._track, self._forget = track, forget
        self._ready: dict[_Key, _Warm] = {}
        self._starting: dict[_Key, asyncio.Task[None]] = {}
        self._tasks: set[asyncio.Task[None]] = set()  # starts and reaps under way
        self._closing = False

    def take(self, shape: Shape, argv: Sequence[str], env: Mapping[str, str] | None,
             cwd: str | None) -> asyncio.subprocess.Process | None:
        """A warm guard of this shape running ``argv``, or None (start a fresh one); the next one is started
        either way. Synchronous: no other spawn can take the same guard."""
        if self._closing or asyncio.get_running_loop() is not self.loop or any(fd not in SHAPES for fd in shape):
            return None
        full = dict(os.environ) if env is None else dict(env)
        key = (shape, _locale(full))
        warm = self._ready.get(key)
        if warm is None:
            self._refill(key, full)
            return None
        try:
            where = os.getcwd() if cwd is None else os.fspath(cwd)
        except OSError:
            return None
        if not os.path.isdir(where) or not os.access(where, os.X_OK):
            return None
        del self._ready[key]
        self._refill(key, full)
        if not self._send(warm, marshal.dumps(([os.fspath(arg) for arg in argv], full, where))):
            self._background(self._reap(warm.process))
            return None
        return warm.process

    def _send(self, warm: _Warm, request: bytes) -> bool:
        """Write the request whole into the guard's empty pipe and close it; False when it could not be (the
        guard then reads a cut request, or none, and exits having started nothing)."""
        try:
            if warm.process.returncode is not None or len(request) > fcntl.fcntl(warm.control, _F_GETPIPE_SZ):
                return False
            return os.write(warm.control, request) == len(request)
        except OSError:  # EPIPE: it has died
            return False
        finally:
            os.close(warm.control)

    def _refill(self, key: _Key, caller: Mapping[str, str]) -> None:
        if not self._closing and key not in self._ready and key not in self._starting:
            env = {name: value for name, value in os.environ.items() if name not in LOCALE}
            env.update((name, caller[name]) for name in LOCALE if name in caller)
            self._starting[key] = self._background(self._start(key, env))

    def _background(self, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        task = self.loop.create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def _start(self, key: _Key, env: dict[str, str]) -> None:
        shape = key[0]
        read, write = os.pipe()
        try:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-S", "-c", WARM, str(read), env=env, stdin=shape[0], stdout=shape[1],
                stderr=shape[2], start_new_session=True, pass_fds=(read,), limit=256 * 1024)
        except BaseException as exc:
            os.close(write)
            if not isinstance(exc, OSError):
                raise
            log.debug("no warm guard: %s", exc)
            return
        finally:
            os.close(read)
            self._starting.pop(key, None)
        self._track(process.pid)
        os.set_blocking(write, False)
        if self._closing:
            os.close(write)
            await self._reap(process)
        else:
            self._ready[key] = _Warm(process, write)

    async def _reap(self, process: asyncio.subprocess.Process) -> None:
        """Wait for an untaken guard whose pipe is closed to exit (kill it if it does not), and forget it."""
        try:
            await asyncio.wait_for(process.wait(), END_S)
        except asyncio.TimeoutError:
            with contextlib.suppress(OSError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
        finally:
            self._forget(process.pid)

    async def settled(self) -> None:
        """Wait until the guards being started are ready (or have failed to start)."""
        while self._starting:
            await asyncio.gather(*self._starting.values(), return_exceptions=True)

    def ready(self, shape: Shape, env: Mapping[str, str] | None = None) -> int | None:
        """The pid of the warm guard waiting for a spawn of this shape and env (None: polydbg's), if there is one."""
        warm = self._ready.get((shape, _locale(os.environ if env is None else env)))
        return warm.process.pid if warm is not None else None

    async def close(self) -> None:
        """End every warm guard nobody took, and wait until they have."""
        self._closing = True
        for warm in self._ready.values():
            os.close(warm.control)
            self._background(self._reap(warm.process))
        self._ready.clear()
        while self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
