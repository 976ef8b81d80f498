"""Containers made by the test itself, with no container engine: ``unshare`` of the pid, mount and network
namespaces, and a root file system of its own (a directory holding the program under /app, the host's /usr,
/lib… bind-mounted read-only, an empty /tmp), the program chrooted into it as the namespace's pid 1's child.
Everything mounted lives in the container's mount namespace and goes with it; the directory is the test's.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from collections.abc import AsyncIterator
from pathlib import Path

from tests.conftest import unavailable

_SYSTEM = ("usr", "lib", "lib64", "bin", "sbin", "etc")
START_TIMEOUT_S = 30.0


def require_root() -> None:
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        unavailable("containers made with unshare need root and util-linux's unshare")


@contextlib.asynccontextmanager
async def container(root: Path, argv: list[str], ready: bytes) -> AsyncIterator[int]:
    """Run ``argv`` (paths inside the container) chrooted into ``root`` in new pid, mount and network
    namespaces; yields the program's host pid once ``ready`` is in its output; kills it all at the end."""
    require_root()
    binds = []
    for name in _SYSTEM:
        if os.path.isdir(f"/{name}") and not os.path.islink(f"/{name}"):
            (root / name).mkdir(exist_ok=True)
            binds.append(f"mount --rbind /{name} {root}/{name} && mount -o remount,bind,ro {root}/{name}; ")
        elif os.path.islink(f"/{name}") and not (root / name).exists():
            (root / name).symlink_to(os.readlink(f"/{name}"))
    for name in ("proc", "tmp", "dev"):
        (root / name).mkdir(exist_ok=True)
    script = ("".join(binds) + f"mount -t proc proc {root}/proc && mount --rbind /dev {root}/dev && "
              f"ip link set lo up; exec chroot {root} \"$@\"")
    outer = await asyncio.create_subprocess_exec(
        "unshare", "--pid", "--mount", "--net", "--fork", "--mount-proc", "sh", "-c", script, "sh", *argv,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
        start_new_session=True)
    assert outer.stdout is not None
    said = b""
    init: int | None = None  # the container's pid 1 (its host pid): killing it ends everything in the namespace
    try:
        while ready not in said:
            line = await asyncio.wait_for(outer.stdout.readline(), START_TIMEOUT_S)
            assert line, f"the container ended before printing {ready!r}: {said.decode(errors='replace')}"
            said += line
        children = Path(f"/proc/{outer.pid}/task/{outer.pid}/children").read_text().split()
        init = int(children[0])
        yield init
    finally:
        # the program may have left unshare's process group (an injected debugger's doing): its pid 1 is killed
        # too, which the kernel follows by killing every process of the namespace (one was found an hour later)
        for kill, pid in ((os.killpg, outer.pid), (os.kill, init)):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    kill(pid, signal.SIGKILL)
        await outer.communicate()
