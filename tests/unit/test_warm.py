"""Warm guards (polydbg.warm): a guard started ahead of need runs the program exactly as a guard started for it
would (the caller's env and cwd, not its own; the same file descriptors), falls back to a fresh guard when it
cannot fit, and leaves nothing behind: not at the pool's end, not when polydbg is killed."""

from __future__ import annotations

import asyncio
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from polydbg import procs

pytestmark = pytest.mark.usefixtures("anyio_backend")

PIPES = (asyncio.subprocess.PIPE,) * 3
SHOW = ["sh", "-c", "env | LC_ALL=C sort; pwd; ls /proc/$$/fd"]


async def _run(argv: list[str], **kwargs: object) -> tuple[int, str]:
    process = await procs.spawn(argv, guarded=True, **kwargs)  # type: ignore[arg-type]
    out, err = await process.communicate()
    assert process.returncode == 0, err
    return process.pid, out.decode()


async def test_a_warm_guard_runs_the_program_with_the_callers_env_and_cwd(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POLYDBG_WARM_PROBE", "when the warm guard started")
    env = {"PATH": os.environ["PATH"], "ONLY_THE_CALLERS": "yes"}  # no LANG: the interpreter coerces LC_CTYPE
    _, fresh = await _run(SHOW, env=env, cwd=str(tmp_path))
    async with procs.warm_guards() as pool:
        await _run(SHOW, env=env, cwd=str(tmp_path))  # the first of its shape: a fresh guard, a warm one started
        await pool.settled()
        waiting = pool.ready(PIPES, env)
        assert waiting is not None
        monkeypatch.chdir("/")
        pid, warm = await _run(SHOW, env=env, cwd=str(tmp_path))
        assert pid == waiting and warm == fresh  # env (LC_CTYPE as a fresh guard's), cwd and fds alike
        assert "POLYDBG_WARM_PROBE" not in warm and f"\n{tmp_path}\n" in warm
        await _run(["true"])  # the first with polydbg's own locale: a warm guard for it started
        await pool.settled()
        monkeypatch.setenv("POLYDBG_WARM_PROBE", "at the spawn")
        waiting = pool.ready(PIPES)
        assert waiting is not None
        pid, inherited = await _run(["sh", "-c", "echo $POLYDBG_WARM_PROBE; pwd"])
        assert pid == waiting and inherited == "at the spawn\n/\n"  # env=None, cwd=None: polydbg's now


async def test_an_unusual_stdio_or_another_locale_falls_back_to_a_fresh_guard(tmp_path: Path) -> None:
    given = tmp_path / "input"
    given.write_text("from a file\n")
    env = {"PATH": os.environ["PATH"], "LC_ALL": "C"}
    async with procs.warm_guards() as pool:
        await _run(["true"])
        await pool.settled()
        waiting = pool.ready(PIPES)
        assert waiting is not None
        with given.open("rb") as stdin:
            pid, out = await _run(["cat"], stdin=stdin.fileno())
        assert pid != waiting and out == "from a file\n"
        pid, out = await _run(["sh", "-c", "echo $LC_ALL $LC_CTYPE"], env=env)
        assert pid != waiting and out == "C\n"  # LC_ALL set: no coercion, as under a fresh guard
        assert pool.ready(PIPES) == waiting  # still there for a spawn it fits
        await pool.settled()
        other = pool.ready(PIPES, env)  # and one for this locale now
        assert other is not None
        assert await _run(["sh", "-c", "echo $LC_ALL $LC_CTYPE"], env=env) == (other, "C\n")


async def test_a_dead_warm_guard_falls_back_and_an_untaken_one_ends_with_the_pool() -> None:
    async with procs.warm_guards() as pool:
        await _run(["true"])
        await pool.settled()
        dead = pool.ready(PIPES)
        assert dead is not None
        os.kill(dead, signal.SIGKILL)
        _wait_gone(dead)
        pid, out = await _run(["echo", "ran"])
        assert pid != dead and out == "ran\n"
        await pool.settled()
        untaken = pool.ready(PIPES)
        assert untaken is not None
    assert _wait_gone(untaken, 0) and untaken not in procs._live_groups


def _wait_gone(pid: int, timeout_s: float = 10.0) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        return bool(select.select([fd], [], [], timeout_s)[0])
    finally:
        os.close(fd)


_POLYDBG = """
import asyncio, sys
from polydbg import procs
async def main():
    async with procs.warm_guards() as pool:
        process = await procs.spawn(["true"], guarded=True)
        await process.wait()
        await pool.settled()
        print(pool.ready((-1, -1, -1)), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
asyncio.run(main())
"""


def test_a_warm_guard_nobody_took_dies_with_polydbg() -> None:
    with subprocess.Popen([sys.executable, "-c", _POLYDBG], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as server:
        try:
            assert server.stdout is not None
            warm = int(server.stdout.readline())
            fd = os.pidfd_open(warm)
            try:
                server.kill()
                server.wait()
                assert select.select([fd], [], [], 10.0)[0], "the warm guard outlived polydbg"
            finally:
                os.close(fd)
        finally:
            server.kill()
