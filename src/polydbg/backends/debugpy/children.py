"""Child Python processes, debugged in their parent's session (debugpy's ``subProcess``).

With ``subProcess`` on, every Python process the program starts (``multiprocessing`` workers, a
``subprocess`` running Python, a framework's reloader child) connects to the same debugpy adapter,
which announces it with a ``debugpyAttach`` event carrying the attach configuration and the adapter's
client port. Until a client attaches, the child waits — an unattached worker that hits a breakpoint
blocks for good. So each child gets a ``ChildBackend``: a second DAP connection to that port, attached
with the announced configuration, configured with the session's breakpoints.

The session still sees one backend. Ids of a child are folded into the parent's id spaces: thread
``t`` of child ``k`` is ``k * THREAD_STRIDE + t`` and a variables reference ``r`` is
``k * REF_STRIDE + r`` (debugpy numbers both from 1 in each process), and the parent routes every
request by id to the connection that owns it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from polydbg.backends.base import AttachSpec, BackendListener, BreakpointResult, StopEvent
from polydbg.backends.debugpy.process import DebugpyProcess
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.gate import StopGate
from polydbg.errors import AdapterRequestError, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

# a child waits until a debugger attaches to it, so the attach is given time (a loaded machine takes seconds to
# start a child's debugpy); one that cannot be attached in this time is ended rather than left waiting for good
ATTACH_S = 60.0
THREAD_STRIDE = 1_000_000
REF_STRIDE = 1 << 32


def child_thread(index: int, native: int) -> int:
    return index * THREAD_STRIDE + native


def child_ref(index: int, native: int) -> int:
    return index * REF_STRIDE + native if native else 0


def split_thread(thread_id: int) -> tuple[int, int]:
    """(child index — 0 for the parent process — and the thread's id in its own process)."""
    return divmod(thread_id, THREAD_STRIDE)


def split_ref(ref: int) -> tuple[int, int]:
    return divmod(ref, REF_STRIDE)


async def connect(config: dict[str, Any], name: str) -> FramedStream:
    """The DAP connection for a child: the adapter's client port from its ``debugpyAttach``."""
    where = config.get("connect") or {}
    host, port = str(where.get("host") or "127.0.0.1"), int(where.get("port") or 0)
    if not port:
        raise UsageError("debugpy announced a child process without a port to attach to")
    return await asyncio.wait_for(FramedStream.connect_tcp(host, port, name), timeouts.CONNECT_S)


class ChildBackend(DebugpyProcess):
    """A child process of the program: a second connection to the same adapter."""

    def __init__(self, listener: BackendListener, config: dict[str, Any], pid: int) -> None:
        super().__init__(listener)
        self._config = config
        self.pid = pid

    async def _start_adapter(self) -> FramedStream:
        return await connect(self._config, self.name)

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        # The announced configuration is the parent's launch, redirectOutput included. The launcher already
        # reads the program's stdout and stderr, which a child inherits; redirected in the child as well, each of
        # its lines came twice. A child that writes elsewhere (a pipe its parent reads) is the program's business.
        return {**self._config, "request": "attach", "redirectOutput": False}


class ChildListener:
    """A child's events, in the parent session's terms: its threads re-numbered, its end a note."""

    def __init__(self, gate: StopGate, index: int, pid: int, ended: Callable[[int], None]) -> None:
        self._gate = gate
        self._parent = gate.listener
        self._index = index
        self._pid = pid
        self._ended = ended

    def on_stopped(self, event: StopEvent) -> None:
        thread = child_thread(self._index, event.thread_id) if event.thread_id is not None else None
        self._gate.stopped(event._replace(thread_id=thread, thread_name=f"child process {self._pid}"))

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        thread = child_thread(self._index, thread_id) if thread_id is not None else child_thread(self._index, 0)
        self._gate.continued(thread, all_threads)

    def on_output(self, category: str, text: str) -> None:
        self._parent.on_output(category, text)

    def on_exited(self, exit_code: int | None) -> None:
        self._parent.on_output("console", f"[child process {self._pid} exited with code {exit_code}]\n")

    def on_terminated(self, cause: str | None) -> None:
        self._ended(self._index)

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        """A child binding a breakpoint does not change what the parent reported for it."""


def refused_child(index: int) -> AdapterRequestError:
    return AdapterRequestError("child", f"child process #{index} has ended; its threads and values are gone "
                                        "(debug_stack lists the live ones)")
