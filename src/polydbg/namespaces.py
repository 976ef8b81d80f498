"""A process in a container, seen from the host: its namespaces, its files and its loopback ports.

A program in a container (Docker, Podman, a pod, or plain ``unshare``) is a host process with its own mount,
pid and network namespaces. From the host, as root (or its user), ``/proc/<pid>/ns/*`` says which namespaces
differ from polydbg's, ``/proc/<pid>/root`` is its file system (a breakpoint on ``/app/x.py`` inside is the
host's ``/proc/<pid>/root/app/x.py``), and a port it listens on at 127.0.0.1 is reached by a socket made in
its network namespace (``setns`` on a thread of polydbg's own, which then returns: the socket stays there).
``Forwarder`` puts such a port on the host's loopback, so a debugger's client connects to it as to any other,
without the container exposing a port.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import os
import re
import shutil
import socket
import threading
from dataclasses import dataclass

from polydbg.errors import UsageError, echo

_KINDS = ("mnt", "pid", "net")
_CLONE_NEWNET = 0x40000000
CONNECT_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Namespaces:
    """The namespaces of ``pid`` that are not polydbg's (``other``: a subset of mnt, pid, net)."""

    pid: int
    other: tuple[str, ...]

    @property
    def root(self) -> str | None:
        """The process's file system on the host, when it has a mount namespace of its own."""
        return f"/proc/{self.pid}/root" if "mnt" in self.other else None

    @property
    def net(self) -> bool:
        return "net" in self.other

    def describe(self) -> str:
        return f"pid {self.pid} runs in other {'/'.join(self.other)} namespaces (a container)"


def of(pid: int) -> Namespaces | None:
    """The namespaces ``pid`` does not share with polydbg, or None when it shares them all (or they cannot be
    read: another user's process, which the attach refuses anyway)."""
    other = []
    for kind in _KINDS:
        try:
            if os.readlink(f"/proc/{pid}/ns/{kind}") != os.readlink(f"/proc/self/ns/{kind}"):
                other.append(kind)
        except OSError:
            return None
    return Namespaces(pid, tuple(other)) if other else None


def host_path(path: str, root: str, keep: tuple[str, ...] = ()) -> str:
    """A path inside the container (``/app/x.py``) as the host reads it (``<root>/app/x.py``), unless only the
    host has that file; a path already under ``root`` or under one of ``keep`` (the agent's own mappings' local
    roots, which win) is returned as it is. A file neither has is the container's: said missing there."""
    if not os.path.isabs(path) or _under(path, root) or any(_under(path, k) for k in keep):
        return path
    inside = root + path
    return inside if os.path.lexists(inside) or not os.path.lexists(path) else path


def _under(path: str, root: str) -> bool:
    root = root.rstrip("/")
    return path == root or path.startswith(root + "/")


def connect_inside(pid: int, port: int, host: str = "127.0.0.1") -> socket.socket:
    """A TCP connection to ``host:port`` in ``pid``'s network namespace, made on a thread that enters it
    (``setns``) and leaves it; the connected socket stays in that namespace."""
    made: list[socket.socket] = []
    failed: list[BaseException] = []

    def work() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        with open(f"/proc/{pid}/ns/net", "rb") as theirs, open("/proc/thread-self/ns/net", "rb") as ours:
            if libc.setns(theirs.fileno(), _CLONE_NEWNET) != 0:
                failed.append(OSError(ctypes.get_errno(), f"cannot enter the network namespace of pid {pid} "
                                                          f"({os.strerror(ctypes.get_errno())}); it needs root"))
                return
            try:
                made.append(socket.create_connection((host, port), CONNECT_TIMEOUT_S))
            except OSError as exc:
                failed.append(exc)
            finally:
                if libc.setns(ours.fileno(), _CLONE_NEWNET) != 0:  # this thread ends here anyway
                    failed.append(OSError("cannot return from the container's network namespace"))

    thread = threading.Thread(target=work, name=f"netns-{pid}", daemon=True)  # a thread of its own: it may
    thread.start()  # stay in the other namespace if the return fails, and then it ends
    thread.join()
    if made and not failed:
        made[0].settimeout(None)
        return made[0]
    for sock in made:
        sock.close()
    raise failed[0]


def listening_inside(pid: int, port: int) -> bool:
    """Whether a TCP socket listens on ``port`` in ``pid``'s network namespace (its /proc/<pid>/net/tcp{,6})."""
    for table in ("tcp", "tcp6"):
        try:
            with open(f"/proc/{pid}/net/{table}", encoding="ascii", errors="replace") as handle:
                rows = handle.read().splitlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            # sl local_address rem_address st …: "0100007F:1F90" and st 0A (LISTEN)
            if len(fields) > 3 and fields[3] == "0A" and int(fields[1].rpartition(":")[2], 16) == port:
                return True
    return False


class Forwarder:
    """A port on the host's loopback whose connections go to ``target_port`` in ``pid``'s network namespace."""

    def __init__(self, pid: int, target_port: int) -> None:
        self.pid = pid
        self.target_port = target_port
        self.port = 0
        self._server: asyncio.Server | None = None
        self._pipes: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self.port

    async def probe(self) -> bool:
        """Whether something listens at the port inside the namespace now: read from the namespace's own socket
        table (``/proc/<pid>/net/tcp``), never by connecting — a debug server that takes one client (debugpy's
        ``--listen``) would spend itself on a probe that connects and leaves."""
        return listening_inside(self.pid, self.target_port)

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            sock = await asyncio.to_thread(connect_inside, self.pid, self.target_port)
            inner_reader, inner_writer = await asyncio.open_connection(sock=sock)
        except OSError:
            writer.close()
            return
        for task in (_pipe(reader, inner_writer), _pipe(inner_reader, writer)):
            running = asyncio.ensure_future(task)
            self._pipes.add(running)
            running.add_done_callback(self._pipes.discard)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        for task in list(self._pipes):
            task.cancel()
        if self._pipes:
            await asyncio.wait(self._pipes)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(OSError, RuntimeError):
            writer.close()


ENGINES = ("docker", "podman")
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/-]{0,253}")  # a container's name or id, nothing an option parses
INSPECT_TIMEOUT_S = 20.0


def engine_of(program: str | None) -> tuple[str, str] | None:
    """``docker://name`` or ``podman://name`` → (engine, name); None for anything else."""
    engine, sep, name = (program or "").partition("://")
    return (engine, name) if sep and engine in ENGINES else None


async def container_pid(engine: str, name: str) -> int:
    """The host pid of a running container's main process, from its engine's CLI (``docker inspect``)."""
    if not _NAME.fullmatch(name):
        raise UsageError(f"{echo(name)} is not a container name or id; pass {engine}://NAME as {engine} ps lists it")
    cli = shutil.which(engine)
    if cli is None:
        raise UsageError(f"{engine} is not installed here, so {engine}://{name} cannot be resolved; find the "
                         f"container's main pid on its host ({engine} inspect -f '{{{{.State.Pid}}}}' {name}) and "
                         "pass it as pid")
    inspect = await asyncio.create_subprocess_exec(
        cli, "inspect", "--type", "container", "-f", "{{.State.Pid}}", "--", name, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        said, _ = await asyncio.wait_for(inspect.communicate(), INSPECT_TIMEOUT_S)
    except asyncio.TimeoutError as exc:
        with contextlib.suppress(ProcessLookupError):
            inspect.kill()
        await inspect.wait()
        raise UsageError(f"{engine} inspect {name} did not answer within {INSPECT_TIMEOUT_S:g} s") from exc
    text = said.decode("utf-8", "replace").strip()
    if inspect.returncode != 0 or not text.isdigit() or int(text) <= 0:
        why = text.splitlines()[-1][:300] if text and not text.isdigit() else "it is not running (pid 0)"
        raise UsageError(f"cannot find the main process of {engine} container {echo(name)}: {why}; see {engine} ps")
    return int(text)
