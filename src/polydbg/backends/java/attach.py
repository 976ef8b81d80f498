"""Attaching to a running JVM: one started with the ``jdwp`` agent listening
(``-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:PORT``).

polydbg connects to ``host:port`` (127.0.0.1 unless a host is given) and does the JDWP handshake. A
``pid`` is looked up in the process's command line (and ``JAVA_TOOL_OPTIONS``) for the agent's
address. A JVM takes one debugger at a time: while one is attached it stops listening, so a second
connection is refused — the message says so. The program's output is not captured (it goes where
the JVM was started).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Awaitable, Callable

from polydbg.backends.base import AttachSpec
from polydbg.backends.java import sources
from polydbg.backends.java import vm as jvm
from polydbg.backends.kit import timeouts
from polydbg.errors import AdapterGoneError, AdapterRequestError, UsageError
from polydbg.jdwp.codec import CommandSet

AGENT = "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:PORT"
_OPTIONS = re.compile(r"(?:-agentlib:jdwp=|-Xrunjdwp:)(\S+)")
_ENVIRONMENT = ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS")
_ANY_HOST = ("", "*", "0.0.0.0", "::", "[::]")


def address(spec: AttachSpec) -> tuple[str, int]:
    """Where to connect: ``host``:``port`` as given (the host defaults to 127.0.0.1), else the agent
    address in the command line of process ``pid``."""
    if spec.port is not None:
        return spec.address, int(spec.port)
    assert spec.pid is not None
    return agent_address(spec.pid)


def agent_address(pid: int) -> tuple[str, int]:
    texts = []
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            texts.extend(handle.read().decode("utf-8", "replace").split("\0"))
    except OSError as exc:
        raise UsageError(f"cannot read the command line of process {pid}: {exc}") from exc
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            for entry in handle.read().decode("utf-8", "replace").split("\0"):
                name, _, value = entry.partition("=")
                if name in _ENVIRONMENT:
                    texts.append(value)
    except OSError:
        pass  # another user's process: only its command line is readable
    return address_in(texts, pid)


def address_in(texts: list[str], pid: int) -> tuple[str, int]:
    """The listening agent's address in the arguments and JVM option variables of process ``pid``."""
    for text in texts:
        found = _OPTIONS.search(text)
        if found is None:
            continue
        options = dict(part.partition("=")[::2] for part in found.group(1).split(","))
        if options.get("server", "n") != "y":
            raise UsageError(f"process {pid}'s jdwp agent connects out to a debugger (server=n) and does not listen; "
                             f"start the JVM with {AGENT} to attach to it")
        host, _, port = options.get("address", "").rpartition(":")
        if not port.isdigit() or int(port) == 0:
            raise UsageError(f"process {pid}'s jdwp agent listens on a port its command line does not name "
                             "(address=0 or none): the JVM printed it at its start ('Listening for transport "
                             "dt_socket at address: N'); pass port=N")
        return ("127.0.0.1" if host in _ANY_HOST or host == "localhost" else host.strip("[]")), int(port)
    raise UsageError(f"process {pid} was not started with the jdwp agent, so no debugger can attach to it; restart it "
                     f"with {AGENT} (then attach with pid or port)")


Handshake = Callable[[asyncio.StreamReader, asyncio.StreamWriter, float], Awaitable[None]]


async def connect(host: str, port: int, timeout_s: float, handshake: Handshake) -> None:
    """Connect to the agent at ``host:port`` and ``handshake`` on it; each failure says what to do."""
    where = f"{host}:{port}"
    wait = min(timeout_s, timeouts.HANDSHAKE_S)
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), wait)
    except ConnectionRefusedError as exc:
        agent = AGENT.replace("127.0.0.1:PORT", where)
        raise AdapterRequestError("attach", f"nothing listens on {where}: start the JVM with {agent} (server=y) or "
                                            "check the port; a JVM that already has a debugger attached stops "
                                            "listening until that one detaches") from exc
    except asyncio.TimeoutError as exc:
        raise AdapterRequestError("attach", f"connecting to {where} timed out after {wait:g} s; check the host and "
                                            "port (and any firewall)") from exc
    except OSError as exc:
        raise AdapterRequestError("attach", f"cannot connect to {where}: {exc.strerror or exc}") from exc
    try:
        await handshake(reader, writer, wait)
    except AdapterGoneError as exc:
        writer.close()
        raise AdapterRequestError("attach", f"{where} is not a JVM's jdwp agent, or one busy with another debugger: "
                                            f"{exc}. Start the JVM with {AGENT}") from exc


async def suspended_at_start(vm: jvm.Vm) -> bool:
    """Whether the JVM waits at its start for a debugger (``suspend=y``): every thread is suspended."""
    reply = await vm.request(CommandSet.VM, 4, b"", "VirtualMachine.AllThreads")
    ids = [reply.object_id() for _ in range(reply.i4())]
    counts = await asyncio.gather(*(vm.request(CommandSet.THREAD_REFERENCE, 12, vm.client.writer().object_id(
        t).bytes(), "ThreadReference.SuspendCount") for t in ids), return_exceptions=True)
    numbers = [c.i4() for c in counts if not isinstance(c, BaseException)]
    return bool(numbers) and all(n > 0 for n in numbers)


async def source_roots(vm: jvm.Vm, spec: AttachSpec) -> list[str]:
    """Where the attached program's sources are looked for: the local side of ``path_mappings``, the
    program's directory, the process's and polydbg's working directories (and their
    ``src/main/java``), and the JVM's class path directories (sources compiled in place)."""
    roots = [local for local, _ in spec.path_mappings]
    if spec.program:
        program = os.path.abspath(spec.program)
        roots.append(program if os.path.isdir(program) else os.path.dirname(program))
    directories = [os.getcwd()]
    if spec.pid is not None:
        with contextlib.suppress(OSError):
            directories.insert(0, os.readlink(f"/proc/{spec.pid}/cwd"))
    for directory in directories:
        roots += [directory, os.path.join(directory, "src", "main", "java")]
    reply = await vm.request(CommandSet.VM, 13, b"", "VirtualMachine.ClassPaths")
    base = reply.string()
    paths = [reply.string() for _ in range(reply.i4())]
    for path in paths:
        entry = os.path.join(base, path)
        roots.append(entry)
        if os.path.isdir(entry):
            roots += sources.sources_near(entry)
    return [root for root in dict.fromkeys(roots) if os.path.isdir(root)]

