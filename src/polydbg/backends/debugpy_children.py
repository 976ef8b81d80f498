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
import collections
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.base import BackendListener, BreakpointResult, StopEvent
from polydbg.errors import AdapterRequestError, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

THREAD_STRIDE = 1_000_000
REF_STRIDE = 1 << 32
CONNECT_TIMEOUT_S = 10.0


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
    return await asyncio.wait_for(FramedStream.connect_tcp(host, port, name), CONNECT_TIMEOUT_S)


class StopGate:
    """One stop at a time across the processes of a session.

    Each process stops on its own (two pool workers reach a breakpoint together); the session shows one
    stop. A stop of another process while one is shown waits here — its process stays stopped — and is
    shown when the agent resumes the current one, as the answer to that resume.
    """

    def __init__(self, listener: BackendListener) -> None:
        self.listener = listener
        self._shown: int | None = None  # the process (0: the program, k: child k) whose stop is shown
        self._waiting: collections.deque[StopEvent] = collections.deque()

    def stopped(self, event: StopEvent) -> None:
        process = split_thread(event.thread_id)[0] if event.thread_id is not None else 0
        if self._shown is not None and self._shown != process:
            self._waiting.append(event)
            return
        self._shown = process
        self.listener.on_stopped(event)

    def continued(self, thread_id: int | None, all_threads: bool) -> None:
        """A process runs again: news for the session only if it is the one whose stop is shown."""
        process = split_thread(thread_id)[0] if thread_id is not None else 0
        if self._shown is None or self._shown == process:
            self.listener.on_continued(thread_id, all_threads)

    def resumed(self, process: int | None) -> None:
        """The shown process (or, with None, every process) runs again: show the next waiting stop."""
        if process is None or process == self._shown:
            self._shown = None
        if self._shown is None and self._waiting:
            self.stopped(self._waiting.popleft())

    def ended(self, process: int) -> None:
        self._waiting = collections.deque(e for e in self._waiting
                                          if split_thread(e.thread_id or 0)[0] != process)
        self.resumed(process)


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
        self._gate.stopped(event._replace(thread_id=thread))

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


Replay = Callable[[], Awaitable[None]]


def refused_child(index: int) -> AdapterRequestError:
    return AdapterRequestError("child", f"child process #{index} has ended; its threads and values are gone "
                                        "(debug_stack lists the live ones)")
