"""Running and stopping: the agent's resume, step and pause, and what each ``Debugger.paused`` becomes.

Pauses the agent must not see (the start, entry breakpoints, hits that do not count, steps that land
in Node's internals or a loader's unmapped code) are resumed or stepped on before anything is reported;
the target's ``OrderedEvents`` keeps later events behind them. Each target stops on its own; the
session's ``StopGate`` shows one stop at a time.

Pause: ``Debugger.pause`` takes effect at the next JavaScript statement; an idle event loop runs none,
so a probe script is evaluated after it — if the pause lands in the probe, nothing was running: the
probe's pause is resumed and the other targets are tried; if all are idle the agent is told so.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from polydbg.backends.base import StepKind, StopEvent
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.frames import leading
from polydbg.backends.kit.gate import StopGate
from polydbg.backends.kit.lifecycle import Lifecycle
from polydbg.backends.node import compile_errors, failures, raised, returns
from polydbg.backends.node.breakpoints import Breakpoints
from polydbg.backends.node.calls import CallRecording
from polydbg.backends.node.scripts import position
from polydbg.backends.node.target import Step, Target
from polydbg.backends.node.targets import Targets
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

STEP_ON_LIMIT = 60  # steps taken through code that is not the user's before giving up and running on
PROBE_URL = "polydbg://idle-probe"
PAUSE_LIMITS = ("no JavaScript was running: the program is idle, waiting on I/O or timers. Set a breakpoint "
                "where the next callback runs and debug_continue, or pause again while it is busy")
_STEPS = {"over": "Debugger.stepOver", "into": "Debugger.stepInto", "out": "Debugger.stepOut"}


class Stops:
    def __init__(self, targets: Targets, breakpoints: Breakpoints, life: Lifecycle, gate: StopGate) -> None:
        self._targets = targets
        self._breakpoints = breakpoints
        self._life = life
        self._gate = gate
        self.stop_on_entry = False  # report the first user statement (Node's "Break on start", else the first entry)
        self.recording: CallRecording | None = None  # a call trace's: its pauses are handled first (``calls``)

    # -- the debugger's events ----------------------------------------------------------------------------

    def on_paused(self, target: Target, params: dict[str, Any]) -> None:
        target.on_paused(params)
        if target.restarting is not None:  # a reload's restart landed: the stop shown is here now, not a new one
            # a dependency's function shown before (a breakpoint the user set there) is shown again, restarted
            target.hidden = min(target.hidden, leading(target.frames, lambda frame: _internal_frame(target, frame)))
            if not target.restarting.done():
                target.restarting.set_result(None)
            return
        target.events.refine(self._handle_pause(target, params))

    def on_resumed(self, target: Target) -> None:
        target.on_resumed()
        if target.reported and target.restarting is None:  # a reload's restart resumes only to pause again
            target.reported = False
            target.events.on_continued(target.thread_id, False)

    async def _handle_pause(self, target: Target, params: dict[str, Any]) -> None:
        reason = target.pause_reason
        own = params.get("callFrames") or []
        top = target.scripts.get(position((own[0].get("location") or {}) if own else {})[0])
        in_probe = top is not None and top.url == PROBE_URL
        # Idle only when nothing ran beneath the probe. Node also runs the inspector's messages from an
        # interrupt of running JavaScript, so the probe can run (and the pause land) on top of a busy
        # thread's frames: that thread was busy, and this pause, the probe's frame hidden, is the answer.
        if in_probe and len(own) == 1:
            if target.idle is not None and not target.idle.done():
                target.idle.set_result(True)
            if target.paused:
                await self._resume_quietly(target)
            return
        if target.idle is not None and not target.idle.done():
            target.idle.set_result(False)
        if not target.paused:  # over before it was handled (Node undoes a pause inside its own message loops)
            return
        frames = target.frames
        here = position((frames[0].get("location") or {}) if frames else {})
        script_id = here[0]
        hit_natives = [str(h) for h in params.get("hitBreakpoints") or []]
        if self.recording is not None and await self._recorded(target, params, hit_natives):
            return
        user: list[int] = []
        entry = False
        for native in hit_natives:
            if native == target.entry_bp:
                entry = True
            elif (bp_id := target.by_native.get(native)) is not None:
                user.append(bp_id)
        if entry:
            script = target.scripts.get(script_id)
            if script_id in target.entered and script is not None:
                await self._breakpoints.entered_again(target, script.url)
            target.entered.add(script_id)
        if entry and self.recording is not None:
            await self.recording.bind(target, script_id)
        if entry:
            for native in await self._breakpoints.bind_mapped(target, script_id):
                bp_id = target.by_native.get(native)
                if bp_id is not None and target.native_at.get(native) == here:
                    user.append(bp_id)  # V8 does not stop again where it is paused: this is the hit
        at_user_code = target.scripts.is_user_code(*here)
        on_entry = self.stop_on_entry and target.kind == "main"
        if on_entry and (entry or reason == "Break on start"):
            if not at_user_code:  # a loader's start (tsx under --import): stop at the first user script instead
                await self._breakpoints.ensure_entry_bp(target)
                await self._resume_quietly(target)
                return
            self.stop_on_entry = False
            user.append(0)
        elif reason in ("Break on start", "instrumentation"):
            if reason == "instrumentation":  # a script with a map about to run (``breakpoints``)
                await self._breakpoints.bind_mapped(target, script_id)
                if self.recording is not None:
                    await self.recording.bind(target, script_id)
            await self._resume_quietly(target)
            return
        stopping = [b for b in user if self._breakpoints.counts(b)]
        exception = reason in ("exception", "promiseRejection")
        if exception and self._breakpoints.raised_sink is not None:
            await raised.record(target, self._breakpoints.raised_sink)
        wanted = await self._breakpoints.wants_exception(target) if exception and not stopping else None
        step = target.step
        if exception and not stopping and step is not None and returns.follows_throws(step) and (wanted is False or (
                wanted is None and returns.catches_throws(step) and not (
                    self._breakpoints.pause_state == "uncaught" and (target.pause_data or {}).get("uncaught")))):
            await returns.thrown(target, step)  # a throw no setting of the agent's stops at: on into its catch
            await self._step_on(target, script_id, "Debugger.stepInto")
            return
        if wanted is False:
            await self._resume_quietly(target)  # no filter and no constructor named wants this throw
            return
        if exception and self._breakpoints.judges_failures and not stopping and not wanted:
            if await failures.failing_frame(target) is None:
                counted = failures.in_users_code(target)
                spent = self._breakpoints.imports.spend(target) if counted else None
                await self._resume_quietly(target)  # caught on purpose, or not the user's: not where a test fails
                if spent:
                    failures.send_blackbox(self._targets.live(), self._breakpoints.blackbox_patterns())  # hidden again
                elif counted and spent is None:
                    await self._breakpoints.passed_caught(target)
                return
            target.failure = await failures.detail(target)
        if exception and not at_user_code and compile_errors.is_compile_error(str((target.pause_data or {})
                                                                                  .get("description") or "")):
            await self._resume_quietly(target)  # a TypeScript loader refusing a file: a build error, not a stop
            return
        # Node's and a dependency's frames on top are left out, unless a breakpoint the user set there stopped
        target.hidden = leading(frames, lambda frame: _internal_frame(target, frame)) if frames and not stopping else 0
        if in_probe and frames:
            target.hidden = max(target.hidden, 1)
        thread = target.thread_id
        if exception:
            event = _exception_event(target, reason)
        elif stopping:
            if 0 in stopping:
                event = StopEvent("entry", thread, "Paused on entry")
            else:
                event = StopEvent("breakpoint", thread, "Paused on breakpoint",
                                  hit_breakpoint_ids=tuple(b for b in stopping if b))
        elif target.step is not None:
            if returns.caught_inside(target, target.step):  # the throw did not leave the function: on out of it
                target.step.passing = True
                await self._step_on(target, script_id, "Debugger.stepOut")
                return
            own_return = await returns.passed(target, target.step, hit_natives)
            if own_return is not None:  # its value read: on out of it; a deeper call's return: on past it
                await self._step_on(target, script_id, returns.going_on(target.step, own_return), counted=False)
                return
            going_on = _step_goes_on(target.step, len(frames), here, bool(user or entry))
            if going_on is not None or not at_user_code:
                # a step out going on out of deeper frames gets shallower at each step: not one that may not end
                outward = going_on == "Debugger.stepOut" and target.step.kind == "out" and at_user_code
                await self._step_on(target, script_id, going_on, counted=not outward)
                return
            event = StopEvent("step", thread, "Paused after step")
        elif target.pausing:
            event = StopEvent("pause", thread, "Paused")
        elif user or entry:
            await self._resume_quietly(target)  # hits that do not count, or a script's entry
            return
        else:
            event = StopEvent("breakpoint", thread, "Paused on debugger statement", text="debugger statement")
        if target.step is not None:
            await returns.landed(target, target.step)
        target.step = None
        target.pausing = False
        target.reported = True
        target.stops += 1
        if target.kind != "main":
            event = event._replace(thread_name=target.name)
        if target.pausing_over:  # the agent paused it while another thread's stop was shown: shown instead
            target.pausing_over = False
            self._gate.switch(event)
        else:
            target.events.target.on_stopped(event)
        if self._breakpoints.has_functions:
            self._life.spawn(self._breakpoints.retry_functions(target))

    async def _recorded(self, target: Target, params: dict[str, Any], hit: list[str]) -> bool:
        """A call trace's pause (an exit, a first call in a file loaded since, an exception only the trace pauses
        at): recorded, and resumed unseen (True); other pauses go on as they would without the trace. How long
        it held the program is told to the trace (less than it did: from its arrival here to the resume sent)."""
        recording = self.recording
        assert recording is not None
        resume = False
        if recording.mine(target, hit):
            await recording.on_pause(target, params)
            resume = recording.owns(target, hit)
        if not resume and target.pause_reason in ("exception", "promiseRejection"):
            await recording.on_exception(target)
            resume = not hit and not self._breakpoints.pauses_anyway(target)
        if resume:
            recording.held(target, time.perf_counter() - target.paused_at)
            await _resume_recorded(target)
        return resume

    async def _step_on(self, target: Target, script_id: str, method: str | None = None, counted: bool = True) -> None:
        """A step that has not landed: step on with ``method``, else out of Node's internals and through a
        loader's unmapped helpers to user code; run on after ``STEP_ON_LIMIT`` steps (``counted`` ones)."""
        step = target.step
        assert step is not None
        if counted:
            step.steps_on += 1
        if step.steps_on > STEP_ON_LIMIT:
            returns.unwatch(target, step)
            target.step = None
            await self._resume_quietly(target)
            self._gate.resumed(target.thread_id)  # it runs on: the next waiting stop is the answer
            return
        script = target.scripts.get(script_id)
        if method is None:
            method = "Debugger.stepInto" if script is not None and not script.internal else "Debugger.stepOut"
        with contextlib.suppress(AdapterRequestError, AdapterGoneError):
            await target.run(method)

    @staticmethod
    async def _resume_quietly(target: Target) -> None:
        with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
            await target.run("Debugger.resume")

    # -- the agent's requests -------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        if thread_id is None:
            shown = self._targets.get(None) if self._gate.shown is not None else None
            before = shown.stops if shown is not None else 0
            paused = [target for target in self._targets.live() if target.paused]
            for target in paused:  # all of them or none
                target.check_answering("Debugger.resume")
            for target in paused:
                await target.run("Debugger.resume")
            if shown is None or shown.stops == before:
                self._gate.resumed(None)
            return
        target = self._targets.get(thread_id)
        self._take(target, "continue")
        await self._run(target, "Debugger.resume")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        target = self._targets.get(thread_id)
        self._take(target, "step")
        origin = position((target.frames[0].get("location") or {}) if target.frames else {})
        step = target.step = Step(kind, len(target.frames), origin[:2])
        if kind == "out":
            await returns.watch(target, step, self._breakpoints.pause_state)
        try:
            await self._run(target, _STEPS[kind])
        except AdapterRequestError:
            returns.unwatch(target, step)
            target.step = None  # not sent: the next pause is not its landing
            raise

    async def _run(self, target: Target, method: str) -> None:
        """Resume or step the shown target. A resume lets the gate show the next waiting stop — unless the
        target's own next stop came first (a breakpoint it reached at once), which, shown already, must stay the
        shown one. A step's landing is its answer: the target stays the shown one while it steps."""
        stops = target.stops
        await target.run(method)
        if method == "Debugger.resume" and target.stops == stops:
            self._gate.resumed(target.thread_id)

    def _shown_stop(self) -> Target | None:
        """The target whose stop is shown, while it is stopped there."""
        shown = self._gate.shown
        target = self._targets.find(shown) if shown is not None else None
        return target if target is not None and target.paused else None

    def _take(self, target: Target, what: str) -> None:
        """The agent resumes or steps a thread that is not the one whose stop is shown (it chose it with
        debug_stack(thread_id)): it must be stopped, and its stop is the shown one from now on (the one shown
        before waits, first in line: a resume shows it again)."""
        shown = self._shown_stop()
        if shown is None or shown is target:
            return
        if not target.paused:
            raise AdapterRequestError(what, f"{_thread(target)} is running, not stopped: debug_pause(thread_id="
                                            f"{target.thread_id}) stops it")
        self._gate.take(target.thread_id)

    async def pause(self, thread_id: int | None) -> None:
        """Pause at the next statement; when the thread is idle, pause the busy ones among the others;
        when every one is idle (an idle event loop runs no JavaScript) say so instead of waiting.

        Children and workers being attached are waited for first: each is about to run, and one still
        held at its start (``waitForDebugger``) evaluates the probe there, which would read as idle."""
        shown = self._shown_stop()
        if thread_id is not None and shown is not None and shown.thread_id != thread_id:
            await self._pause_over(self._targets.get(thread_id))
            return
        arrivals = self._targets.arrivals
        await arrivals.settled(timeouts.INSPECT_S)
        first = self._targets.get(thread_id)
        if not await self._pause_one(first):
            return
        await arrivals.settled(timeouts.INSPECT_S)  # one announced while the first was probed
        others = [t for t in self._targets.live() if t is not first and not t.paused and not t.held]
        stopped = await asyncio.gather(*(self._pause_one(t) for t in others), return_exceptions=True)
        if not all(result is True for result in stopped) or any(t.reported for t in self._targets.live()):
            return  # a pause landed, or a thread stopped meanwhile (a child at a breakpoint): that is the answer
        if arrivals:
            raise AdapterRequestError("pause", "nothing paused: the running threads are idle and "
                                               f"{len(arrivals)} child process(es) or worker(s) are still "
                                               "being attached (they have not run yet); pause again")
        raise AdapterRequestError("pause", f"nothing to pause: {PAUSE_LIMITS}")

    async def _pause_over(self, target: Target) -> None:
        """debug_pause(thread_id) of a thread while another's stop is shown: that thread's stop is shown instead
        (the one shown before waits, first in line): the stop it has waiting, else a pause of it. An idle thread
        (its event loop waits) runs no JavaScript to pause in: refused, saying so."""
        if target.paused:
            waiting = self._gate.waiting(target.thread_id)
            if waiting is not None:
                self._gate.switch(waiting)
            return
        target.pausing_over = True
        if await self._pause_one(target):
            target.pausing_over = False
            raise AdapterRequestError("pause", (
                f"{_thread(target)} is idle: its event loop waits for a message, a timer or I/O and runs no "
                "JavaScript, so there is nothing to pause and no stack to show until it runs. The stop shown stays; "
                f"a breakpoint where its next callback runs stops it there"))

    @staticmethod
    async def _pause_one(target: Target) -> bool:
        """Pause one target: True when it was idle (its pause landed in the probe and was resumed)."""
        target.pausing = True
        target.idle = asyncio.get_running_loop().create_future()
        await target.request("Debugger.pause")
        target.channel.send("Runtime.evaluate", {"expression": f"void 0\n//# sourceURL={PROBE_URL}", "silent": True})
        try:
            idle = await asyncio.wait_for(asyncio.shield(target.idle), timeouts.INSPECT_S)
        except asyncio.TimeoutError:
            return False
        if idle:
            target.pausing = False
        return idle


async def _resume_recorded(target: Target) -> None:
    """Resume a pause of the call trace's: it fetched nothing into the stop's object group, and each message
    costs the run (a recorded call's pause and resume are most of its cost)."""
    with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
        await target.channel.request("Debugger.resume")


def _step_goes_on(step: Step, depth: int, here: tuple[str, int, int], hit: bool) -> str | None:
    """How a step over or out goes on from a pause that is not its landing, or None when it lands here.

    V8 ends a step at any breakpoint it passes; one whose hit does not count (its hit condition, a
    script's entry) must not end a step over of the call that reached it: the step goes on out, back to
    the frame it started in (and past the rest of the line it started on), or further out for a step out."""
    if step.kind == "into" or not (hit or step.passing):
        return None
    if depth > step.depth - (1 if step.kind == "out" else 0):
        step.passing = True
        return "Debugger.stepOut"
    if step.passing and step.kind == "over" and depth == step.depth and here[:2] == step.origin:
        return "Debugger.stepOver"
    return None


def _thread(target: Target) -> str:
    return f"thread {target.thread_id} ({target.name})"


def _internal_frame(target: Target, frame: dict[str, Any]) -> bool:
    script = target.scripts.get(str((frame.get("location") or {}).get("scriptId")))
    return script is None or script.internal


def _exception_event(target: Target, reason: str) -> StopEvent:
    detail = target.exception_detail()
    kind = "promise rejection" if reason == "promiseRejection" else "exception"
    uncaught = bool((target.pause_data or {}).get("uncaught"))
    text = f"{detail.type}: {detail.message}" if detail else None
    return StopEvent("exception", target.thread_id, f"Paused on {'uncaught ' if uncaught else ''}{kind}", text=text)
