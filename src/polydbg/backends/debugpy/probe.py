"""The probe: a thread of the debuggee's that runs one Python line when polydbg asks, so that a pause stops a program
whose threads are all blocked in C.

debugpy pauses a thread when it next runs a Python line it traces; a thread blocked in C code (``lock.acquire``,
``time.sleep``, ``Condition.wait``, an idle asyncio loop in ``epoll``) runs none, so a pause of a hung program
stopped nothing: the very program an agent most needs to see could not be inspected. The debuggee shim starts a
daemon thread with the program (once pydevd traces new threads) that blocks reading a FIFO made here; when a pause
has stopped nothing within ``WAKE_AFTER_S``, one byte written to the FIFO lets it run a line of "user" code (its
code is named ``<ipython…``, which pydevd counts as the user's whatever the project roots), and debugpy stops the
program there, every thread at once (2 ms after the byte, measured). The probe is left out of the thread list, and
its stop is shown as the thread the pause named, else the main thread (the first that lists frames: under
justMyCode a thread running only library code lists none). Only a program launched under the shim has
one; an attached program keeps debugpy's limits (``pause_limits``).
"""

from __future__ import annotations

import contextlib
import os
import tempfile

from polydbg.backends.base import Thread

NAME = "polydbg-probe"  # the thread's name (the shim names it so)
WAKE_AFTER_S = 0.2  # a pause stops a thread running Python within milliseconds; the probe only when none does
ENV = "POLYDBG_PROBE"
SHOWN_AMONG = 20  # threads whose frames are asked for, to show a probe's stop as one that lists some


class Probe:
    """The FIFO that wakes the debuggee's probe thread, and the probe's DAP thread id once listed."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self.path: str | None = None
        self.thread_id: int | None = None  # its DAP id, from the last listing that had it
        self.shown: int | None = None  # the thread a probe's stop is shown as

    def create(self) -> str:
        """A private FIFO for the next launch (the shim opens it read-write, so neither side blocks on opening)."""
        self.close()
        self._dir = tempfile.mkdtemp(prefix="polydbg-probe-")
        self.path = os.path.join(self._dir, "wake")
        os.mkfifo(self.path, 0o600)
        return self.path

    def listed(self, threads: list[Thread], wanted: int | None) -> list[Thread]:
        """``threads`` without the probe (remembered), and which thread a stop of the probe is to be shown as:
        ``wanted`` when listed, else the first (the main thread)."""
        shown = [t for t in threads if t.name != NAME]
        probe = next((t.id for t in threads if t.name == NAME), None)
        if probe is not None:
            self.thread_id = probe
        ids = [t.id for t in shown]
        self.shown = wanted if wanted in ids else (ids[0] if ids else None)
        return shown

    def wake(self) -> bool:
        """Let the probe run a line; False when there is none to wake (the program has not started it, or ended)."""
        if self.path is None:
            return False
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # ENXIO: no reader, the probe is not (or no longer) there
            return False
        try:
            os.write(fd, b"w")
        except OSError:
            return False
        finally:
            os.close(fd)
        return True

    def stopped_as(self, thread_id: object) -> object:
        """The thread a stop of ``thread_id`` is shown as: the probe's is the pause's thread (or the main one)."""
        if thread_id is not None and thread_id == self.thread_id and self.shown is not None:
            return self.shown
        return thread_id

    def close(self) -> None:
        if self.path is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.path)
        if self._dir is not None:
            with contextlib.suppress(OSError):
                os.rmdir(self._dir)
        self._dir = self.path = None
