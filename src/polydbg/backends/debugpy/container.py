"""debugpy into a Python process in a container (other mount and network namespaces), from the host.

debugpy's own attach by pid cannot reach it: its injector makes the program ``dlopen`` a library and import
debugpy from polydbg's site-packages, which the container's file system does not have, and the program then
connects back to 127.0.0.1 — the container's loopback, not the host's. So debugpy is copied into the
container (``/tmp/polydbg-debugpy-<token>`` inside, written through ``/proc/<pid>/root``), the host sees the
copy at that same path (a symlink, unless the container shares the host's /tmp), and debugpy's injector run
from there makes the program ``debugpy.listen`` on 127.0.0.1:<port> inside the container; polydbg reaches that
port through ``namespaces.Forwarder`` and attaches to it as to any debug server. At the end the copy, the
symlink and the forwarder go; the listening debugpy stays in the program, as after any ``debugpy.listen``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import sys

import debugpy

from polydbg.backends.debugpy import inject
from polydbg.errors import EnvironmentProblem
from polydbg.namespaces import Forwarder, Namespaces

INJECT_TIMEOUT_S = 60.0  # gdb attaching and the program starting debugpy's adapter, on a loaded machine
LISTEN_POLL_S = 0.1


class InContainer:
    """debugpy listening inside the container of ``pid``, reachable at ``port`` on the host's loopback."""

    def __init__(self, where: Namespaces) -> None:
        self.where = where
        self.inside = f"/tmp/polydbg-debugpy-{secrets.token_hex(6)}"  # the copy's path in the container
        self.copy = f"/proc/{where.pid}/root{self.inside}" if where.root else self.inside
        self.link: str | None = None  # the host's path to the copy, when it is not the copy itself
        self.forwarder = Forwarder(where.pid, 20000 + secrets.randbelow(40000))

    @property
    def port(self) -> int:
        return self.forwarder.port

    async def start(self, timeout_s: float) -> None:
        pid = self.where.pid
        problem = await inject.injection_problem()
        if problem is not None:
            raise EnvironmentProblem(
                f"cannot attach to pid {pid}: {problem}. The injection could leave the program damaged, so pid "
                f"{pid} was not touched. What works instead: start it in its container under debugpy, python -m "
                f"debugpy --listen 127.0.0.1:5678 yourprogram.py, then debug_attach(pid={pid}, port=5678): the "
                "port is reached inside the container's network namespace, no port published; or "
                f'debug_attach(pid={pid}, language="c") for its native view')
        await asyncio.to_thread(self._copy)
        try:
            await self._inject(timeout_s)
        except BaseException:
            await self.close()
            raise

    async def _inject(self, timeout_s: float) -> None:
        pid = self.where.pid
        await self.forwarder.start()
        injector = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "debugpy", "--listen", f"127.0.0.1:{self.forwarder.target_port}",
            "--disable-sys-remote-exec", "--pid", str(pid), stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, cwd="/",
            env={**os.environ, "PYTHONPATH": self.inside})
        try:
            said, _ = await asyncio.wait_for(injector.communicate(), min(timeout_s, INJECT_TIMEOUT_S))
        except asyncio.TimeoutError as exc:
            raise EnvironmentProblem(f"debugpy's injection into pid {pid} (in a container) did not finish within "
                                     f"{min(timeout_s, INJECT_TIMEOUT_S):g} s; pass a longer timeout_s") from exc
        finally:
            with contextlib.suppress(ProcessLookupError):
                injector.kill()
            await injector.wait()
        if injector.returncode != 0:
            raise EnvironmentProblem(f"debugpy's injection into pid {pid} (in a container) failed: "
                                     f"{inject.gdb_error(said.decode('utf-8', 'replace'))}")
        await self._listening(timeout_s)

    async def _listening(self, timeout_s: float) -> None:
        """Until debugpy's adapter listens in the container (the injection returns as the program starts it)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while not await self.forwarder.probe():
            if loop.time() > deadline:
                raise EnvironmentProblem(
                    f"debugpy was injected into pid {self.where.pid} but did not listen on 127.0.0.1:"
                    f"{self.forwarder.target_port} in its container within {timeout_s:g} s; the program's "
                    "Python must be able to start a subprocess (debugpy's adapter, its own sys.executable)")
            await asyncio.sleep(LISTEN_POLL_S)

    def _copy(self) -> None:
        source = os.path.dirname(debugpy.__file__)
        try:
            os.makedirs(self.copy, mode=0o755)
            shutil.copytree(source, os.path.join(self.copy, "debugpy"),
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        except OSError as exc:
            shutil.rmtree(self.copy, ignore_errors=True)
            raise EnvironmentProblem(f"cannot copy debugpy into the container of pid {self.where.pid} at "
                                     f"{self.inside} ({exc}); the container's /tmp must be writable") from exc
        if self.copy != self.inside and not os.path.exists(self.inside):
            os.symlink(self.copy, self.inside)
            self.link = self.inside

    async def close(self) -> None:
        await self.forwarder.close()
        if self.link is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.link)
        await asyncio.to_thread(shutil.rmtree, self.copy, True)
