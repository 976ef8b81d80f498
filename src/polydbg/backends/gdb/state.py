"""What the parts of the gdb backend share: the MI client they send commands through, the program's
language, what the current stop is about and the program's latest output; and, for the backend alone,
whether the program runs.

The backend is split by job (``breakpoints``, ``frames``, ``inspection``, ``native``, ``stops``); each part
is handed this object and the parts it calls, and none reaches into another's attributes. Commands go
out with the inspection deadline, read as ``timeouts.INSPECT_S`` at each call so a test can shorten it.
"""

from __future__ import annotations

import asyncio
import os
import signal

from polydbg.backends.gdb.stops import StopFacts
from polydbg.backends.kit import timeouts
from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.mi.client import MiClient, MiResult
from polydbg.procs import DebuggerProcess


class GdbState:
    def __init__(self, language: str, process: DebuggerProcess | None = None) -> None:
        self.language = language  # c | cpp | rust: how types and values are shortened
        self.process = process  # gdb's process: whether it is stopped by a signal, and its pid to interrupt
        self.mi: MiClient | None = None  # set once gdb runs
        self.python = False  # gdb runs Python: logpoints can be formatted
        self.stop = StopFacts()  # what the current stop is about (set at each reported stop)
        self.output_tail = ""  # the program's latest output (a panic's message is read from it)

    @property
    def client(self) -> MiClient:
        if self.mi is None:
            raise AdapterGoneError("gdb is not running")
        return self.mi

    async def cmd(self, command: str) -> MiResult:
        try:
            return await self.client.command(command, timeouts.INSPECT_S)
        except AdapterTimeoutError as exc:
            raise self.unanswered(exc) from exc

    async def cmds(self, commands: list[str]) -> list[MiResult]:
        """Several commands pipelined: one round trip."""
        try:
            return await self.client.commands(commands, timeouts.INSPECT_S)
        except AdapterTimeoutError as exc:
            raise self.unanswered(exc) from exc

    def unanswered(self, error: AdapterTimeoutError, why: str | None = None) -> AdapterTimeoutError:
        """A command's timeout, saying why gdb cannot answer when that is known (``why``, or a signal holding it)."""
        why = why or (self.process.held_by_signal() if self.process is not None else None)
        return AdapterTimeoutError(f"{error}: {why}") if why else error

    def interrupt(self) -> bool:
        """SIGINT to gdb, as a terminal's Ctrl-C (gdb interrupts what the program runs for it); whether sent."""
        pid = self.process.debugger_pid() if self.process is not None else None
        if pid is None:
            return False
        try:
            os.kill(pid, signal.SIGINT)
        except OSError:
            return False
        return True

    def fire(self, command: str) -> None:
        """Send a command nobody waits for (its failure is only logged)."""
        if self.mi is not None and not self.mi.is_closed:
            self.mi.send(command)


class Execution:
    """Whether the program runs — execution state, not lifecycle: a started program runs and stops
    many times. ``pause`` interrupts only a running program, and the end interrupts one before it
    kills or detaches."""

    def __init__(self) -> None:
        self.running = False
        self.interrupting = False  # -exec-interrupt sent: the next signal stop is the pause
        self.finishing: str | None = None  # -exec-finish sent: the function it leaves (its value is reported)
        self.stopped = asyncio.Event()

    def ran(self) -> None:
        self.running = True
        self.stopped.clear()

    def halted(self) -> None:
        self.running = False
        self.stopped.set()

    def take_finishing(self) -> str | None:
        """The function the ``-exec-finish`` this stop ends left (asked once per reported stop)."""
        finishing, self.finishing = self.finishing, None
        return finishing

    def take_interrupt(self) -> bool:
        """Whether this stop answers an ``-exec-interrupt`` (asked once per reported stop)."""
        interrupting, self.interrupting = self.interrupting, False
        return interrupting
