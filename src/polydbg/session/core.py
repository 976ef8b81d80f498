"""What every part of a session shares: identity, lifecycle, breakpoints, output, and the backend.

The session's jobs (breakpoint sync, execution, inspection, reports, native operations, tracing)
are small classes around one ``SessionCore``. The core also owns the one place a backend call's
failure is mapped: a vanished debugger ends the session with its cause (``call``), an
inspection's answer is checked against the stop it was read at (``read``), and a request that failed
while the program ran is told apart from one the program's end made fail (``ended_meanwhile``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from polydbg import namespaces, procs
from polydbg.backends.base import AttachSpec, Backend, BackendFactory, LaunchSpec
from polydbg.backends.registry import adapters_for
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, SessionEndedError
from polydbg.session.breakpoints import BreakpointStore
from polydbg.session.model import State
from polydbg.session.output import OutputBuffer, TraceLines
from polydbg.session.scope import StopScope
from polydbg.session.state import Lifecycle
from polydbg.session.testrun import TestRun

T = TypeVar("T")

Progress = Callable[[float, str], Awaitable[None]]

GONE_REPORT_S = 2.0  # a backend whose connection closed has this long to report the program's end itself
# A request that failed while the program ran may have failed because the program was ending: its end is
# waited for this long at most (debugpy's exit reaches polydbg ~0.2 s after a breakpoint sent during it failed).
ENDING_S = 5.0


class SessionCore:
    def __init__(self, session_id: str, language: str, adapter: str, factory: BackendFactory,
                 target: str, cwd: str | None) -> None:
        self.id = session_id
        self.language = language
        self.adapter = adapter
        self.target = target
        self.cwd = cwd
        self.root: str | None = None  # an attached container's file system on the host (/proc/PID/root)
        self.root_keeps: tuple[str, ...] = ()  # the agent's path_mappings' local roots: paths under them stay
        self.forwarder: namespaces.Forwarder | None = None  # a debug server's port inside the container, on ours
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
        self.test: TestRun | None = None  # the test this session runs by name (debug_launch(test=…))
        self.build: tuple[str, str] | None = None  # the launch's build command and its directory: run at each restart
        # what else the debugger is told before the program runs, after the breakpoints (a launch's call trace)
        self.configure_more: Callable[[], Awaitable[None]] | None = None

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
        path = os.path.normpath(path)
        return namespaces.host_path(path, self.root, self.root_keeps) if self.root else path

    async def call(self, awaitable: Awaitable[T], may_end: bool = False) -> T:
        """Await a backend call; a vanished debugger ends the session here, with its cause. A call the program's
        end can make fail (``may_end``: a breakpoint sent while the program runs) may meet a connection that
        closed as the program ended: the backend's report of that end is waited for first, as the cause. Otherwise
        the backend has a moment to give its own account (a runtime that is the program, killed: its exit, and how)."""
        try:
            return await awaitable
        except AdapterGoneError as exc:
            if may_end and self.life.state == State.running:
                await self._end_reported(ENDING_S)
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

    async def ended_meanwhile(self) -> bool:
        """Whether a request that just failed did so because the program was ending.

        A debugger can lose its program before it reports the end: debugpy answers a breakpoint sent during the
        interpreter's exit with "Server[1] disconnected unexpectedly", and the exit event follows. So after a
        failure while the program ran, the end is waited for (``ENDING_S`` at most), unless the debugger shows it
        still has the program by answering for its threads: then the failure was a refusal, said at once."""
        life, backend = self.life, self.backend_slot
        if life.state != State.running or backend is None:
            return life.ended
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ENDING_S
        probe = asyncio.ensure_future(backend.threads())
        try:
            while life.state == State.running and (remaining := deadline - loop.time()) > 0:
                changed = asyncio.ensure_future(life.changed.wait())
                try:
                    await asyncio.wait({changed} if probe.done() else {changed, probe}, timeout=remaining,
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    changed.cancel()
                if probe.done() and not probe.cancelled() and probe.exception() is None and not life.ended:
                    return False  # the debugger answers for the program: it is not ending
        finally:
            probe.cancel()
            if probe.done() and not probe.cancelled():
                probe.exception()  # retrieved: a failed probe is what an ending program gives
        return life.ended

    async def _end_reported(self, within_s: float) -> None:
        """Wait until the backend reports the program's end (its exit, or the debugger's own end), at most
        ``within_s``."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while self.life.state == State.running and (remaining := deadline - loop.time()) > 0:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.life.changed.wait(), remaining)

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
