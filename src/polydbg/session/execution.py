"""Execution: starting the debugger and the program, resuming, stepping, pausing, restarting, ending,
and the backend's events that move the lifecycle.

Requests that change execution state are serialized by one lock: each sends its request under the
lock (so two of them can never interleave their transitions), then waits for the program's next
state change outside it (so a ``debug_pause`` can interrupt a ``debug_continue`` that is waiting).
Ending a session takes no lock: it must work while anything else is stuck.

A continue waits for what can stop the program: with nothing that can (no breakpoint but logpoints, no
exception filter, no pause pending, a debugger that does not stop at a crash) it answers "running" once the
program is quiet instead of waiting out its deadline. After an exit, the answer waits (briefly) for the
debugger to report the program's end: output still in transit at the exit is delivered before that.

A request to move the program that the debugger leaves unanswered was still sent: it may take effect whenever the
debugger answers again. The session goes back to the stop it was at, marked unconfirmed, until the debugger's
"continued" or next stop says otherwise; the error says so. How the program ended is the kernel's word when it can
be had (``SessionCore.program_end``): a debugger reports a program killed by a signal with a code of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
from collections.abc import Awaitable, Callable

import anyio

from polydbg.backends.base import (
    LOGPOINT,
    AttachSpec,
    Backend,
    BreakpointResult,
    LaunchSpec,
    StepKind,
    StopEvent,
    Thread,
)
from polydbg.errors import (
    AdapterError,
    AdapterRequestError,
    AdapterTimeoutError,
    SessionEndedError,
    SessionError,
    UsageError,
)
from polydbg.session import reloading
from polydbg.session.bpsync import BreakpointSync
from polydbg.session.breakpoints import Breakpoint
from polydbg.session.build import run_build
from polydbg.session.core import Progress, SessionCore
from polydbg.session.inspection import Inspector
from polydbg.session.model import State, StopReport
from polydbg.session.report import Reporter

log = logging.getLogger(__name__)

_OUTPUT_STREAMS = {"stdout": "stdout", "stderr": "stderr", LOGPOINT: "logpoints"}
PROGRESS_EVERY_S = 1.0
STARTUP_BUDGET_S = 120.0  # starting the debugger (a cold Go build takes ~15 s) is not the wait for a stop
SLOW_START_S = 5.0  # a start slower than this is named in the answer
PAUSE_GRACE_S = 5.0  # a pause that stops nothing within this is explained, not waited out
QUIET_S = 3.0  # a started program that printed and then went quiet this long is reported running
END_SETTLE_S = 5.0  # after the exit, a debugger silent this long has delivered the program's last output
END_SETTLE_MAX_S = 60.0  # and one that keeps talking (a child process printing on) is waited for no longer



class SessionEvents:
    """Forwards one backend's events to the session, ignoring a backend the session has replaced."""

    def __init__(self, execution: Execution, generation: int) -> None:
        self._execution = execution
        self._generation = generation

    def _live(self) -> bool:
        return self._execution.core.generation == self._generation

    def on_stopped(self, event: StopEvent) -> None:
        if self._live():
            self._execution.on_stopped(event)

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        if self._live():
            self._execution.on_continued()

    def on_output(self, category: str, text: str) -> None:
        if self._live():
            self._execution.on_output(category, text)

    def on_exited(self, exit_code: int | None) -> None:
        if self._live():
            self._execution.on_exited(exit_code)

    def on_terminated(self, cause: str | None) -> None:
        if self._live():
            self._execution.on_terminated(cause)

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        if self._live():
            self._execution.bpsync.changed(bp_id, result)


class Execution:
    def __init__(self, core: SessionCore, bpsync: BreakpointSync, inspector: Inspector, reporter: Reporter) -> None:
        self.core = core
        self.bpsync = bpsync
        self.inspector = inspector
        self.reporter = reporter
        self.lock = asyncio.Lock()
        self._acting = False  # an execution request is in flight: its own "continued" event is expected
        self._cleanups: set[asyncio.Task[None]] = set()
        self._moved_at = 0.0  # when the program last started running (the loop's clock)
        self._pause_pending = False  # a pause was sent that has not stopped the program yet
        self._heard = 0  # output events so far (a trace's lines too, which never reach the output)

    # -- events ---------------------------------------------------------------------------------------

    def on_stopped(self, event: StopEvent) -> None:
        self._pause_pending = False
        self.core.watch_program()  # a debugger may name the program's pid only once it runs
        if self.core.life.to(State.stopped, stop=event):
            scope = self.core.life.scope
            assert scope is not None
            scope.hits_counted = self.bpsync.count_hits(event)

    def on_continued(self) -> None:
        if not self._acting and self.core.life.state == State.stopped:
            self.core.life.to(State.running)

    def on_output(self, category: str, text: str) -> None:
        self._heard += 1
        if category == LOGPOINT:
            text = self.core.trace_lines.split(text)
        self.core.output.append(_OUTPUT_STREAMS.get(category, "console"), text)

    def on_exited(self, exit_code: int | None) -> None:
        """The program's exit, as the kernel tells it when it can: a debugger reports a program killed by a signal
        with a code of its own (debugpy 247 for SIGKILL, lldb -1), or with none."""
        end = self.core.program_end()
        if end is None:
            self.core.life.to(State.exited, exit_code=exit_code)
        else:
            self.core.life.to(State.exited, exit_code=end.code, cause=None if end.signal is None else str(end))

    def on_terminated(self, cause: str | None) -> None:
        self.core.backend_ended.set()
        life = self.core.life
        if life.state != State.exited:
            life.to(State.terminated, cause=cause or life.cause or "the debug adapter ended the session")
        elif life.exit_code is None and life.cause is None:
            life.cause = cause  # what ended a program whose exit status is not known (a signal, named by its runtime)
        backend = self.core.backend_slot
        if backend is not None:  # reap the debugger now; the session itself stays readable
            task = asyncio.get_running_loop().create_task(backend.terminate())
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)

    # -- waiting --------------------------------------------------------------------------------------

    async def wait_change(self, since: int, timeout_s: float, progress: Progress | None,
                          quiet_s: float | None = None, quiet_since: float | None = None) -> str | None:
        """Wait until a stop after the ``since``-th, an exit or a termination (None); "timeout" when the
        deadline passed first; with ``quiet_s``, "quiet" once the program printed something and then
        nothing for that long (a server that is up and waiting), and with ``quiet_since`` (a time of the
        loop's clock) also when it printed nothing since then. Only the program's own output counts: a
        debugger's note (a child process attaching, which may take seconds) is not a sign of life."""
        life = self.core.life
        output = self.core.output
        loop = asyncio.get_running_loop()
        started = last_progress = loop.time()
        deadline = started + timeout_s
        printed_at, printed = started, output.program_total
        if quiet_since is not None:  # the loop's clock is time.monotonic(), the output's too
            printed_at = max(quiet_since, output.program_wrote_at)
        slice_s = min(PROGRESS_EVERY_S, quiet_s / 4) if quiet_s else PROGRESS_EVERY_S
        while life.stops == since and life.state in (State.running, State.starting):
            now = loop.time()
            if output.program_total != printed:
                printed_at, printed = now, output.program_total
            elif (quiet_s is not None and (printed or quiet_since is not None) and now - printed_at >= quiet_s
                  and life.state == State.running):
                return "quiet"
            remaining = deadline - now
            if remaining <= 0:
                return "timeout"
            changed = life.changed
            try:
                await asyncio.wait_for(changed.wait(), min(remaining, slice_s))
            except asyncio.TimeoutError:
                if progress is not None and loop.time() - last_progress >= PROGRESS_EVERY_S:
                    last_progress = loop.time()
                    elapsed = last_progress - started
                    await progress(elapsed, f"running… {elapsed:.0f}s")
        return None

    async def settle_end(self) -> None:
        """After the program exited, wait until its debugger reported its end, as long as output keeps coming:
        output still in transit at the exit (debugpy's exit event overtakes a busy logpoint's last lines, by
        seconds on a loaded machine) arrives before that."""
        deadline = asyncio.get_running_loop().time() + END_SETTLE_MAX_S
        while (self.core.life.state == State.exited and not self.core.backend_ended.is_set()
               and asyncio.get_running_loop().time() < deadline):
            heard = self._heard
            try:
                await asyncio.wait_for(self.core.backend_ended.wait(), END_SETTLE_S)
            except asyncio.TimeoutError:
                if self._heard == heard:
                    return  # silent that long: nothing more is coming

    async def _first_stop(self, since: int, timeout_s: float, progress: Progress | None,
                          note: str | None) -> StopReport:
        """The answer of a start: the first stop, the exit, or the program running (deadline or quiet). One rule
        for a launch and an attach: the program is quiet once it has printed nothing for ``QUIET_S`` since it was
        last seen alive, its last output or, attached, the attach (what it printed before is not the session's
        to see, nor, with most debuggers, what it prints after: an idle server must not cost the deadline)."""
        attached = isinstance(self.core.spec, AttachSpec)
        quiet_s = QUIET_S if self.core.test is None else None  # a test run ends: a quiet runner is busy, not serving
        waited = await self.wait_change(since, timeout_s, progress, quiet_s, self._moved_at if attached else None)
        await self.settle_end()
        await self._bind_watches_now()
        note = _joined(note, self._unbound_note())
        if waited == "quiet":
            seen = ("it was attached" if attached and self.core.output.program_wrote_at < self._moved_at
                    else "the output below")
            note = _joined(note, f"the program is running and has printed nothing for {QUIET_S:g} s since {seen}; "
                                 "no breakpoint was hit yet: debug_continue waits for the next stop, "
                                 "debug_pause interrupts")
        return await self.reporter.report(timed_out=waited == "timeout", note=note)

    async def _bind_watches_now(self) -> None:
        """Watchpoints that could not bind before the program existed (lldb resolves a watched
        expression only in a live process: after a restart it stayed pending) bind at the first stop."""
        backend = self.core.backend_slot
        if (self.core.life.state != State.stopped or backend is None or not backend.capabilities.data_breakpoints
                or all(bp.verified for bp in self.core.breakpoints.watches())):
            return
        async with self.lock:
            with contextlib.suppress(AdapterError, SessionError):
                await self.core.call(self.bpsync.send_watches(self.bpsync.stopped_frame()))

    def _unbound_note(self) -> str | None:
        """Breakpoints the debugger could not bind, and its reason: said at the start, not left to find."""
        unbound = [bp for bp in self.core.breakpoints.visible() if not bp.verified and bp.message]
        if not unbound:
            return None
        shown = "; ".join(f"#{bp.id} {os.path.basename(bp.file or bp.function or bp.watch or '')}"
                          f"{':' + str(bp.line) if bp.line else ''}: {bp.message}" for bp in unbound[:3])
        more = f" (and {len(unbound) - 3} more: debug_breakpoints)" if len(unbound) > 3 else ""
        return f"not bound yet: {shown}{more}"

    async def _starting(self, spec: LaunchSpec | AttachSpec, timeout_s: float,
                        progress: Progress | None) -> tuple[int, str | None]:
        """Start the debugger under its own budget, with progress while it takes; what was slow, if it was."""
        loop = asyncio.get_running_loop()
        began = loop.time()
        work = asyncio.ensure_future(self._begin(spec, max(timeout_s, STARTUP_BUDGET_S)))
        try:
            while not work.done():
                await asyncio.wait({work}, timeout=PROGRESS_EVERY_S)
                if not work.done() and progress is not None:
                    elapsed = loop.time() - began
                    await progress(elapsed, f"starting {self.core.adapter}… {elapsed:.0f}s")
        except BaseException:
            work.cancel()
            with contextlib.suppress(BaseException):
                await _uncancelled(work)  # _begin ends the debugger it started
            raise
        since = work.result()
        took = loop.time() - began
        slow = f"{self.core.adapter} took {took:.1f} s to start" if took >= SLOW_START_S else None
        return since, slow

    async def _timed_out(self, since: int, timeout_s: float, progress: Progress | None) -> bool:
        waited = await self.wait_change(since, timeout_s, progress)
        await self.settle_end()
        return waited == "timeout"

    async def act(self, action: Callable[[], Awaitable[None]]) -> int:
        """Send an execution request (the caller holds ``lock``); returns the stop count to wait past."""
        life = self.core.life
        since = life.stops
        before = life.stop
        seen = life.scope is not None and life.scope.reported
        self._acting = True
        self._moved_at = asyncio.get_running_loop().time()
        try:
            life.to(State.running)
            try:
                await self.core.call(action())
            except AdapterRequestError as exc:
                self._still_stopped(since, before, seen)  # it did not move
                raise UsageError(f"the debugger refused: {exc.message}") from exc
            except AdapterTimeoutError as exc:
                # sent but unanswered: the debugger may act on it whenever it answers again (its "continued" or
                # next stop moves the session then); until it does, the program reads as stopped, unconfirmed
                if self._still_stopped(since, before, seen):
                    life.unconfirmed = "a request to move it was sent and not answered; it may still take effect"
                raise AdapterTimeoutError(f"{exc}. {unanswered('moves on')}") from exc
        finally:
            self._acting = False
        return since

    async def run_on(self) -> int:
        """Resume a stopped program for a trace (a running one runs on); the stop count to wait past."""
        life = self.core.life
        async with self.lock:
            since = life.stops
            scope = life.scope
            if life.state == State.stopped and scope is not None:
                backend = self.core.backend
                thread = await self.inspector.thread_of(scope, None)
                since = await self.act(lambda: backend.resume(thread))
        return since

    def _still_stopped(self, since: int, before: StopEvent | None, seen: bool) -> bool:
        """Back to the stop a request to move from failed at, if nothing happened since; whether it was. It
        keeps whether it was ``seen``: the stop already shown, not one the agent has not seen."""
        life = self.core.life
        if life.stops != since or life.state != State.running or before is None:
            return False
        life.to(State.stopped, stop=before)
        if life.scope is not None:
            life.scope.reported = seen
        return True

    # -- starting and ending ----------------------------------------------------------------------------

    async def start(self, spec: LaunchSpec | AttachSpec, timeout_s: float, progress: Progress | None) -> StopReport:
        """Start the debugger and the program (or attach), apply breakpoints, wait for the first stop."""
        async with self.lock:
            since, slow = await self._starting(spec, timeout_s, progress)
        if isinstance(spec, AttachSpec) and not self.core.breakpoints.visible():
            return await self.reporter.report(note=slow)  # nothing to wait for: it is attached and running
        return await self._first_stop(since, timeout_s, progress, slow)

    async def _begin(self, spec: LaunchSpec | AttachSpec, timeout_s: float) -> int:
        core, life = self.core, self.core.life
        core.spec = spec
        files = tuple(sorted({bp.file for bp in core.breakpoints.visible() if bp.file}))
        spec = spec._replace(breakpoint_files=files)  # decided again at every (re)start
        core.generation += 1
        core.backend_ended.set()  # whoever waits for the old backend's end stops waiting
        core.backend_ended = asyncio.Event()
        life.to(State.starting)
        since = life.stops
        backend = core.backend_slot = core.factory(SessionEvents(self, core.generation))

        async def configure() -> None:
            await self.bpsync.configure()
            if core.configure_more is not None:
                await core.configure_more()
        try:
            if isinstance(spec, LaunchSpec):
                await backend.launch(spec, configure, timeout_s)
            else:
                await backend.attach(spec, configure, timeout_s)
        except AdapterError as exc:
            await _uncancelled(backend.terminate())
            life.to(State.terminated, cause=str(exc))
            if isinstance(exc, AdapterRequestError):
                raise UsageError(f"could not start the program: {exc}") from exc
            raise SessionEndedError(f"could not start the debugger: {exc}") from exc
        except BaseException:  # a usage or environment problem (or cancellation) after the backend spawned
            await _uncancelled(backend.terminate())
            life.to(State.terminated, cause="the start did not complete")
            raise
        if life.state == State.starting:
            life.to(State.running)
        core.watch_program()
        self._moved_at = asyncio.get_running_loop().time()
        self._pause_pending = False
        return since

    async def restart(self, timeout_s: float, progress: Progress | None) -> StopReport:
        spec = self.core.spec
        if not isinstance(spec, LaunchSpec):
            raise UsageError("debug_restart restarts launched programs; for an attached one, "
                             "debug_terminate(detach=true) and debug_attach again")
        async with self.lock:
            if self.core.test is not None:  # first: a failed rebuild leaves the program as it was
                await self.core.test.restarted()
            elif self.core.build is not None:
                try:
                    await run_build(*self.core.build, max(timeout_s, STARTUP_BUDGET_S))
                except UsageError as exc:
                    raise UsageError(f"{exc}\nNothing was restarted: the program is as it was. Fix the build, then "
                                     "debug_restart again") from exc
            old = self.core.backend_slot
            self.core.generation += 1  # silence the old backend's events
            if old is not None:
                await old.terminate()
            self.bpsync.reset_for_restart()
            self.core.output.append("console", "--- restarted ---\n")
            self.core.report_cursor = self.core.output.total
            since, slow = await self._starting(spec, timeout_s, progress)
        return await self._first_stop(since, timeout_s, progress, slow)

    async def terminate(self, detach: bool) -> None:
        backend = self.core.backend_slot
        self.core.generation += 1
        if backend is not None:
            await _uncancelled(backend.detach() if detach else backend.terminate())
        self.core.life.to(State.terminated, cause="detached" if detach else "terminated by debug_terminate")
        self.core.forget_program()

    # -- moving -----------------------------------------------------------------------------------------

    def unseen_stop(self) -> bool:
        """The program stopped and no answer has shown that stop yet (it happened between calls)."""
        scope = self.core.life.scope
        return self.core.life.state == State.stopped and scope is not None and not scope.reported

    async def report_unseen(self, instead: str) -> StopReport:
        return await self.reporter.report(note=f"the program stopped here after the last answer; {instead} "
                                               "(call it again to go on from here)")

    async def resume(self, thread_id: int | None, to: tuple[str, int] | None, timeout_s: float,
                     progress: Progress | None, reverse: bool = False, reload: bool = False) -> StopReport:
        life = self.core.life
        target: Breakpoint | None = None
        reloaded = None
        async with self.lock:
            if self.unseen_stop():
                return await self.report_unseen("nothing was resumed")
            if reverse and life.state == State.running:
                raise UsageError("the program is running: it runs backwards only from a stop; debug_pause first")
            if reload:  # first: a reload refused leaves the program where it was, not moved
                reloaded = await reloading.reload(self.core, self.inspector, thread_id)
            if life.state == State.running and to is None:  # already running: wait for the next stop
                since = life.stops
            else:
                scope = life.stopped_scope()
                backend = self.core.backend
                if to is not None:
                    target = await self.bpsync.add_line(to[0], to[1], internal=True)
                thread = await self.inspector.thread_of(scope, thread_id)
                try:
                    since = await self.act(lambda: backend.reverse(thread, "continue") if reverse
                                           else backend.resume(thread))
                except BaseException:
                    await self._drop_quietly(target)
                    raise
        unstoppable = self._nothing_can_stop() if target is None else None
        try:
            if unstoppable is None:
                timed_out = await self._timed_out(since, timeout_s, progress)
            else:  # no waiting out the deadline: answered once the program is quiet
                waited = await self.wait_change(since, timeout_s, progress, QUIET_S, self._moved_at)
                await self.settle_end()
                timed_out = waited == "timeout"
                if waited == "quiet":
                    return await self.reporter.report(note=unstoppable)
        finally:
            await self._drop_quietly(target)
        note = reloaded
        if target is not None and life.state == State.stopped and life.scope is not None:
            with contextlib.suppress(AdapterError, SessionError, UsageError):
                location = await self.inspector.top_location(life.scope)
                if location.file == target.file and location.line == target.line:
                    note = _joined(note, f"reached {os.path.basename(target.file or '')}:{target.line}")
        return await self.reporter.report(timed_out=timed_out, note=note)

    def _nothing_can_stop(self) -> str | None:
        """Why nothing can stop the running program, with what to do instead; None when something can: a breakpoint
        that stops (a logpoint does not; one waiting for its code to load may), an exception filter, a pending
        pause, or a crash where the debugger stops at one (native code, Go). A ``breakpoint()`` or ``debugger``
        statement in the program's code can still stop it: the next call reports such a stop."""
        backend = self.core.backend_slot
        if (backend is None or backend.capabilities.stops_on_faults or self._pause_pending
                or self.core.exception_filters
                or any(not bp.log_message for bp in self.core.breakpoints.items.values())):
            return None
        return (f"nothing can stop the program (no breakpoint, no exception filter, no pause pending), so this did "
                f"not wait for a stop: it has printed nothing for {QUIET_S:g} s and keeps running. debug_pause "
                "interrupts it, debug_break adds a breakpoint to stop at, debug_output reads what it prints "
                "(debug_sessions says when it has exited)")

    async def _drop_quietly(self, bp: Breakpoint | None) -> None:
        if bp is None:
            return
        try:
            await self.bpsync.drop([bp])
        except (AdapterError, SessionError):
            log.debug("could not remove an internal breakpoint", exc_info=True)

    async def step(self, kind: StepKind, count: int, thread_id: int | None, timeout_s: float,
                   progress: Progress | None, reverse: bool = False) -> StopReport:
        life = self.core.life
        timed_out = False
        note = None
        for done in range(count):
            async with self.lock:
                if done == 0 and self.unseen_stop():
                    return await self.report_unseen("nothing was stepped")
                scope = life.stopped_scope()
                backend = self.core.backend
                thread = await self.inspector.thread_of(scope, thread_id if done == 0 else None)
                since = await self.act(functools.partial(backend.reverse, thread, kind) if reverse
                                       else functools.partial(backend.step, thread, kind))
            timed_out = await self._timed_out(since, timeout_s, progress)
            if timed_out or life.state != State.stopped:
                break
            stop = life.stop
            if stop is not None and stop.reason not in ("step", "goto") and done + 1 < count:
                note = f"stopped after {done + 1} of {count} steps ({stop.reason})"
                break
        return await self.reporter.report(timed_out=timed_out, note=note)

    async def _threads_within(self, backend: Backend, timeout_s: float) -> list[Thread]:
        """The threads, asked within the caller's timeout (a debugger that cannot answer must not cost more)."""
        try:
            return await asyncio.wait_for(self.core.call(backend.threads()), timeout_s)
        except asyncio.TimeoutError as exc:
            pid = backend.program_pid
            raise AdapterTimeoutError(
                f"{self.core.adapter} did not list the program's threads within {timeout_s:g} s, so nothing was "
                f"paused: {backend.busy_hint.format(pid=pid if pid is not None else 'PID')}") from exc

    async def pause(self, thread_id: int | None, timeout_s: float) -> StopReport:
        life = self.core.life
        async with self.lock:
            backend = self.core.backend
            threads: list[Thread] = []
            if life.state == State.stopped:
                scope = life.stopped_scope()
                if thread_id is None or thread_id == scope.thread:
                    return await self.reporter.report(note="already stopped" if not life.unconfirmed else
                                                      f"stopped when last known ({life.unconfirmed})")
                await self.inspector.thread_of(scope, thread_id)  # refused naming the threads there are
                if not backend.threads_stop_apart or thread_id == scope.stop.thread_id:
                    await self.inspector.choose(scope, thread_id)
                    return await self.reporter.report(note=f"already stopped; thread {thread_id} is now the current "
                                                           "thread (inspections default to it until the program moves)")
            else:
                threads = await self._threads_within(backend, timeout_s) if thread_id is None else []
            since = life.stops
            target = thread_id if thread_id is not None else (threads[0].id if threads else 0)
            try:
                await self.core.call(backend.pause(target))
            except AdapterTimeoutError as exc:
                raise AdapterTimeoutError(f"{exc}. {unanswered('stops')}") from exc
        grace = min(timeout_s, PAUSE_GRACE_S)
        if not await self._timed_out(since, grace, None):
            await self._chosen(thread_id)
            return await self.reporter.report()
        self._pause_pending = life.state == State.running and life.stops == since  # it may stop it later still
        names = ", ".join(t.name for t in threads[:6]) + (f" (+{len(threads) - 6})" if len(threads) > 6 else "")
        return await self.reporter.report(
            note=f"no thread stopped within {grace:g} s of the pause: {backend.pause_limits}"
                 + (f". Threads: {names}" if names else ""))


    async def _chosen(self, thread_id: int | None) -> None:
        """A pause asked for one thread: where the whole program stops with it (a debugger that names another
        thread, or the first, as the stopped one), the report and later calls are about that thread."""
        scope = self.core.life.scope
        if thread_id is None or scope is None or self.core.life.state != State.stopped or scope.thread == thread_id:
            return
        with contextlib.suppress(UsageError, AdapterError):  # it ended meanwhile: the stop is shown as it is
            await self.inspector.choose(scope, thread_id)


def _joined(first: str | None, second: str | None) -> str | None:
    return f"{first}; {second}" if first and second else first or second


async def _uncancelled(work: Awaitable[object]) -> None:
    """Finish ``work`` even when the request is being cancelled: ending processes must never be cut
    short (anyio, under the MCP SDK, cancels every further await of a cancelled request)."""
    with anyio.CancelScope(shield=True):
        await work


def unanswered(then: str) -> str:
    """What an unanswered request to move the program may still do (said with the debugger's silence)."""
    return (f"The request was sent, so it may still take effect when the debugger answers again: the program then "
            f"{then}, and the next call says where (debug_sessions shows the state meanwhile)")
