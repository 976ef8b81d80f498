"""What every part of a session shares: identity, lifecycle, breakpoints, output, and the backend.

The session's jobs (breakpoint sync, execution, inspection, reports, native operations, tracing)
are small classes around one ``SessionCore``. The core also owns the one place a backend call's
failure is mapped: a vanished debugger ends the session with its cause (``call``), and an
inspection's answer is checked against the stop it was read at (``read``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from polydbg import procs
from polydbg.backends.base import AttachSpec, Backend, BackendFactory, LaunchSpec
from polydbg.backends.registry import adapters_for
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, SessionEndedError
from polydbg.session.breakpoints import BreakpointStore
from polydbg.session.model import State
from polydbg.session.output import OutputBuffer, TraceLines
from polydbg.session.scope import StopScope
from polydbg.session.state import Lifecycle

T = TypeVar("T")

Progress = Callable[[float, str], Awaitable[None]]

GONE_REPORT_S = 2.0  # a backend whose connection closed has this long to report the program's end itself


class SessionCore:
    def __init__(self, session_id: str, language: str, adapter: str, factory: BackendFactory,
                 target: str, cwd: str | None) -> None:
        self.id = session_id
        self.language = language
        self.adapter = adapter
        self.target = target
        self.cwd = cwd
        self.factory = factory
        self.life = Lifecycle(session_id)
        self.output = OutputBuffer()
        self.breakpoints = BreakpointStore()
        self.exception_filters: list[str] = []
        self.spec: LaunchSpec | AttachSpec | None = None
        self.backend_slot: Backend | None = None
        self.generation = 0  # bumped when a backend is replaced: the old one's events are ignored
        self.report_cursor = 0  # output before this was shown in an earlier report
        self.trace_lines = TraceLines()  # the tracepoints' lines, taken out of the logpoints' stream
        self.trace_log = OutputBuffer()  # every trace's rows, paged by debug_output(stream="trace")
        self.traces = 0
        self.backend_ended = asyncio.Event()  # the current backend reported the program's end (after its output)
        self.last_used = time.monotonic()
        self.program: procs.ProgramWatch | None = None  # the program's process, to tell how it ended

    def watch_program(self) -> None:
        """Hold the program's pidfd once its debugger has named its pid (a new one after a restart): how it ends
        is then the kernel's word, not a debugger's guess (``procs.ProgramWatch``)."""
        pid = self.backend_slot.program_pid if self.backend_slot is not None else None
        if self.program is not None and self.program.pid == pid:
            return
        self.forget_program()
        if pid is not None:
            self.program = procs.ProgramWatch(pid)

    def forget_program(self) -> None:
        if self.program is not None:
            self.program.close()
            self.program = None

    def program_end(self) -> procs.ProgramEnd | None:
        """How the program ended, when it has and the kernel can say."""
        return self.program.ended() if self.program is not None else None

    @property
    def backend(self) -> Backend:
        """The backend of a live program (an ended session has none to ask)."""
        if self.backend_slot is None or self.life.ended:
            raise SessionEndedError(self.life.ended_text())
        return self.backend_slot

    def connected_backend(self) -> Backend:
        """The backend, also while starting (the handshake sends breakpoints through it)."""
        if self.backend_slot is None:
            raise SessionEndedError(self.life.ended_text())
        return self.backend_slot

    def live_backend(self) -> Backend | None:
        """The backend when breakpoint changes can be sent now, else None (they wait for the start)."""
        if self.backend_slot is None or self.life.ended or self.life.state == State.starting:
            return None
        return self.backend_slot

    def resolve_path(self, file: str) -> str:
        path = os.path.expanduser(file)
        if not os.path.isabs(path):
            path = os.path.join(self.cwd or os.getcwd(), path)
        return os.path.normpath(path)

    async def call(self, awaitable: Awaitable[T]) -> T:
        """Await a backend call; a vanished debugger ends the session here, with its cause: the backend's own
        account when it gives one soon (a runtime that is the program, killed: its exit, and how), else the loss."""
        try:
            return await awaitable
        except AdapterGoneError as exc:
            if not self.life.ended:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.shield(self.backend_ended.wait()), GONE_REPORT_S)
            if not self.life.ended:
                self.life.to(State.terminated, cause=f"the {self.adapter} adapter is gone: {exc}")
            raise SessionEndedError(self.life.ended_text()) from exc
        except AdapterTimeoutError as exc:
            if "debug_terminate" in str(exc):  # it already says what to do
                raise
            raise AdapterTimeoutError(f"{exc}. {self.hung_hint()}") from exc

    def hung_hint(self) -> str:
        """What to do about a debugger that stopped answering."""
        others = [a for a in adapters_for(self.language) if a != self.adapter]
        instead = f"; debug_launch with adapter={others[0]!r} tries another debugger" if others else ""
        return (f"If the {self.adapter} adapter stays unresponsive, debug_terminate ends this session "
                f"and its program{instead}")

    async def read(self, scope: StopScope, awaitable: Awaitable[T]) -> T:
        """A backend call made for one stop: its answer only counts if that stop is still current.
        A refusal that arrives after the program moved is the move, not the caller's mistake."""
        try:
            result = await self.call(awaitable)
        except AdapterRequestError:
            self.life.check(scope)  # raises ProgramMovedError (the refusal as its context) if it moved
            raise
        self.life.check(scope)
        return result
