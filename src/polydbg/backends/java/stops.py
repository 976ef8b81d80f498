"""The JVM's composite events → one stop for the agent, or a quiet resume.

A composite event packet may hold several events of one moment (a breakpoint and a step on the same
line, two breakpoints, a class prepare with a breakpoint). Breakpoint, step, watchpoint and exception
events suspend the whole VM (``SuspendPolicy.ALL``): the packet becomes one stop (a breakpoint's
ids, a condition that could not be evaluated named in its description), or, when none of its events
stops (a condition false, a hit count not reached, a logpoint, a caught throw inside the JDK, a step
landing in Kotlin's inlined code), the VM is resumed without a word. A ``ClassPrepare`` suspends only
the loading thread: breakpoints are bound in the new class, then that thread is resumed (once more when
the same packet also suspended it for a stop). Events of a thread running a method for an evaluation
(a breakpoint in the called code) are never stops: the VM is resumed. The pause a reload makes to re-enter a
method is its own (``internal``: reentry.py takes those events first).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from polydbg.backends.base import BackendListener, StopEvent
from polydbg.backends.java.breakpoints import EntryBreakpoint, LineBreakpoints
from polydbg.backends.java.calltrace import CallTrace
from polydbg.backends.java.conditions import Conditions
from polydbg.backends.java.exceptions import Exceptions
from polydbg.backends.java.methods import MethodBreakpoints
from polydbg.backends.java.stepping import Stepping
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import Vm
from polydbg.backends.java.watch import FieldWatches
from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Suspend

STOPPING = frozenset({EventKind.BREAKPOINT, EventKind.SINGLE_STEP, EventKind.EXCEPTION, EventKind.FIELD_ACCESS,
                      EventKind.FIELD_MODIFICATION})


class Stops:
    def __init__(self, vm: Vm, threads: Threads, *, lines: LineBreakpoints, entry: EntryBreakpoint,
                 methods: MethodBreakpoints, watches: FieldWatches, exceptions: Exceptions, stepping: Stepping,
                 conditions: Conditions, listener: BackendListener,
                 internal: Callable[[list[Event]], list[Event]]) -> None:
        self._vm = vm
        self._threads = threads
        self._lines = lines
        self._entry = entry
        self._methods = methods
        self._watches = watches
        self._exceptions = exceptions
        self._stepping = stepping
        self._conditions = conditions
        self._listener = listener  # reports go straight to it: this runs as an OrderedEvents refinement
        self.recording: CallTrace | None = None  # a call trace's events are its own (calltrace.py)
        self._internal = internal  # the events a pause of polydbg's own waits for, taken out (the others returned)

    async def handle(self, events: list[Event]) -> None:
        threads = self._threads
        events = self._internal(events)
        if not events:
            return
        if self.recording is not None:
            events = await self.recording.handle(events)
            if not events:
                return
        if any(threads.is_invoking(e.thread) for e in events if e.kind in STOPPING):
            await self.resume_vm()  # code an evaluation runs hit a breakpoint, a step or a throw: not a stop
            return
        stop: StopEvent | None = None
        broken: list[str] = []
        thread = 0
        hit_ids: list[int] = []
        resume_thread = False
        landing = None
        for event in events:
            if self._stepping.takes(event):
                continue  # a method exit or a throw a step listens to: read, never a stop
            if event.kind == EventKind.CLASS_PREPARE:
                await self._class_prepared(event)
                resume_thread = event.suspend_policy == Suspend.EVENT_THREAD
                thread = event.thread
            elif event.kind == EventKind.BREAKPOINT and await self._entry.hit(event.request_id):
                thread = event.thread
                stop = stop or StopEvent("entry", 0, "Paused on entry")
            elif event.kind == EventKind.BREAKPOINT and (method_bp := self._methods.owner(event.request_id)):
                thread = event.thread
                spec = self._methods.spec(method_bp)
                holds = await self._conditions.holds(spec.condition if spec else None, thread)
                if holds is not False and self._methods.counts(method_bp):
                    hit_ids.append(method_bp)
                    if isinstance(holds, str):
                        broken.append(holds)
            elif event.kind in (EventKind.FIELD_ACCESS, EventKind.FIELD_MODIFICATION):
                thread = event.thread
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    stop = await self._watches.stop_for(event) or stop
            elif event.kind == EventKind.BREAKPOINT:
                thread = event.thread
                hit = await self._lines.hit(event.request_id, thread)
                if hit is not None:
                    hit_ids.append(hit[0])
                    if hit[1]:
                        broken.append(hit[1])
            elif event.kind == EventKind.SINGLE_STEP:
                thread, landing = event.thread, event.location
                if stop is None and not await self._stepping.steps_on(thread, event.location):  # Kotlin's: on
                    stop = StopEvent("step", 0, "Paused after step")
            elif event.kind == EventKind.EXCEPTION and self._exceptions.records(event):
                await self._exceptions.record(event)  # the log of raised exceptions: never a stop
                resume_thread, thread = event.suspend_policy == Suspend.EVENT_THREAD, event.thread
            elif event.kind == EventKind.EXCEPTION:
                thread = event.thread
                if not await self._exceptions.stops_at(event):
                    continue
                threads.stop.exception = event.exception
                caught = event.catch_location is not None and event.catch_location.class_id != 0
                stop = StopEvent("exception", 0, f"Paused on {'' if caught else 'uncaught '}exception")
        if hit_ids:
            stop = StopEvent("breakpoint", 0, "Paused on breakpoint" + "".join(f"; {b}" for b in broken),
                             hit_breakpoint_ids=tuple(hit_ids))
        suspended_all = any(e.suspend_policy == Suspend.ALL for e in events)
        if stop is None:
            if suspended_all:
                await self.resume_vm()  # hits that do not count
            elif resume_thread:
                await self._resume_thread(thread)
            return
        if resume_thread:  # a class prepare in the same packet suspended the thread once more
            await self._resume_thread(thread)
        returned = await self._stepping.returned(landing) if stop.reason == "step" else None
        await self._stepping.end()
        await threads.stopped_at(thread)
        threads.stop.returned = returned
        if stop.reason == "exception":
            detail = await self._exceptions.detail()
            if detail is not None:
                stop = stop._replace(text=f"{detail.type}: {detail.message}")
        threads.stop.reported = True
        self._listener.on_stopped(stop._replace(thread_id=threads.id_of(thread), thread_name=threads.stop.name))

    async def _class_prepared(self, event: Event) -> None:
        """A class loaded: bind the breakpoints and watchpoints that wait for it (stop_on_entry's first)."""
        cls = self._vm.classes.known(event.type_id, event.type_tag, event.signature)
        with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
            await self._entry.class_prepared(cls)
            await self._vm.classes.source(cls)
            await self._lines.class_prepared(cls)
            await self._methods.class_loaded(cls)
            await self._watches.class_loaded(cls)
            await self._exceptions.class_loaded(cls)
            if self.recording is not None and not self.recording.stopped:
                await self.recording.class_loaded(cls)

    async def resume_vm(self) -> None:
        """Resume a stop the agent is not shown (what was read of it is dropped)."""
        self._threads.forget_frames()
        with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
            await self._vm.resume()

    async def _resume_thread(self, thread: int) -> None:
        with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
            await self._vm.request(CommandSet.THREAD_REFERENCE, 3, self._vm.client.writer().object_id(thread).bytes(),
                                   "ThreadReference.Resume")
