"""The inferior's own terminal under gdb: a pty whose output is forwarded as the program's stdout.

A pty keeps the program's output out of the MI stream (gdb's ``-inferior-tty-set``) and gives the
program a terminal, as it would have outside the debugger; stdout and stderr arrive merged (a pty has
one stream). Reads are bounded per wakeup so a program printing without pause cannot starve the
event loop; at every stop and exit the backend drains it so a report has all output printed before.

The pty is the program's controlling terminal (gdb makes it so), so closing it hangs the program up:
SIGHUP kills it. A program the session detached from keeps its terminal (``release``): its output is
read and dropped until it exits, or until polydbg itself does.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import termios
import tty
from collections.abc import Callable

READS_PER_WAKEUP = 16


class InferiorTerminal:
    def __init__(self, on_text: Callable[[str], None]) -> None:
        self._on_text = on_text
        self._master: int | None = None
        self._slave: int | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def open(self) -> str:
        """Open the pty, start forwarding its output; the slave's device path for gdb."""
        master, slave = os.openpty()
        tty.setraw(slave)  # no \n → \r\n, no echo, no line discipline
        attrs = termios.tcgetattr(slave)
        attrs[1] &= ~termios.OPOST
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        os.set_blocking(master, False)
        self._master, self._slave = master, slave
        asyncio.get_running_loop().add_reader(master, self.drain, READS_PER_WAKEUP)
        return os.ttyname(slave)

    def drain(self, chunks: int | None = None) -> None:
        """Forward what the program wrote: up to ``chunks`` reads, or everything when ``None``."""
        master = self._master
        while master is not None and (chunks is None or chunks > 0):
            try:
                data = os.read(master, 65536)
            except OSError:  # EAGAIN: drained; EIO: no process has the terminal open
                return
            if not data:
                return
            text = self._decoder.decode(data)
            if text:
                self._on_text(text)
            if chunks is not None:
                chunks -= 1

    def release(self) -> None:
        """The session let go of the program: keep its terminal open, its output read and dropped, until the
        program closes it (it exits) — closing it now would kill the program with SIGHUP."""
        master, slave = self._master, self._slave
        self._master = self._slave = None
        if slave is not None:
            with contextlib.suppress(OSError):
                os.close(slave)
        if master is None:
            return
        loop = asyncio.get_running_loop()

        def discard() -> None:
            try:
                while os.read(master, 65536):
                    pass
            except BlockingIOError:
                return
            except OSError:  # EIO: the program has exited, nothing has the terminal open
                pass
            loop.remove_reader(master)
            os.close(master)
        with contextlib.suppress(Exception):
            loop.remove_reader(master)
        loop.add_reader(master, discard)

    def close(self) -> None:
        master, slave = self._master, self._slave
        self._master = self._slave = None
        if master is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(master)
            with contextlib.suppress(OSError):
                os.close(master)
        if slave is not None:
            with contextlib.suppress(OSError):
                os.close(slave)
