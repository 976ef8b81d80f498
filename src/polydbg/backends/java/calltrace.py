"""A call trace on the JVM: every call of the named methods, recorded while the program runs.

JDWP has events for all of it, so the program never stops for the agent:

- **entry**: a breakpoint at each named method's first code index, suspending only the calling thread
  (``SUSPEND_EVENT_THREAD``): its arguments are read from frame 0 (``StackFrame.GetValues`` of the
  parameters' slots), its caller from frame 1, its depth (``FrameCount``), and the thread is resumed;
- **exit**: ``MethodExitWithReturnValue`` for the methods' classes (``ClassOnly``), suspending nothing: the
  value is in the event (an exit of a method not traced is dropped here);
- **an exception leaving a call**: JDWP reports no method exit for a frame an exception pops, so while a
  traced call is open on a thread every exception on it (``Exception``, caught or not, suspending the thread)
  is followed to its catch location: the traced calls deeper than the catching frame end by it (an uncaught
  one ends them all).

A class not loaded yet is bound as it loads (``ClassPrepare``). A call's duration is the time between its
entry and exit events less the time the recording held the thread meanwhile (its own entry's and those of
the traced calls it made).

With a depth, the callees of a recorded call are recorded too (callees.py).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import time
from dataclasses import dataclass, field

from polydbg.backends.java import methods as named
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.callees import Callees, Traced, described, is_compilers
from polydbg.backends.java.classes import JavaClass
from polydbg.backends.java.threads import Threads
from polydbg.backends.recording import CallRecord, CallSink, CallSpec
from polydbg.errors import AdapterGoneError, AdapterTimeoutError, UsageError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Location, Modifier, Reader, Suspend, Tag, Value

_GONE = (JdwpRequestError, AdapterGoneError, AdapterTimeoutError)


@dataclass
class _Open:
    traced: Traced
    args: tuple[tuple[str, str], ...]
    depth: int  # frames on the thread at entry (the call's own included); 0: not read (a callee not recorded)
    caller: str | None
    began: float  # time.perf_counter() at the entry event
    held_at: float  # the thread's time held by the recording by then
    level: int = 0  # 0: a named method's call; n: a callee n levels below one (deeper than the depth: not recorded)


@dataclass
class _ThreadState:
    open: list[_Open] = field(default_factory=list)
    held: float = 0.0  # seconds the recording held this thread suspended
    name: str | None = None


class CallTrace:
    """The ``Recorder`` of a JVM call trace (see the module docstring)."""

    def __init__(self, vm: jvm.Vm, threads: Threads, spec: CallSpec, sink: CallSink) -> None:
        self._vm = vm
        self._threads = threads
        self.spec = spec
        self._sink = sink
        self._names = [self._parse(name) for name in spec.functions]
        self._traced: dict[tuple[int, int], Traced] = {}  # (class id, method id) →
        self._entries: dict[int, Traced] = {}  # breakpoint request id →
        self._exits: dict[int, int] = {}  # class id → its MethodExitWithReturnValue request
        self._exception_request: int | None = None
        self._prepares: list[int] = []
        self._now = 0.0  # when the packet being handled arrived
        self._states: dict[int, _ThreadState] = {}
        self._arrived: dict[int, float] = {}  # id() of an event of the trace's → when its packet arrived
        self._delivered = 0
        self.stopped = False
        self._callees = Callees(vm, threads, {name.qualifier for name in self._names}) if spec.depth else None

    @staticmethod
    def _parse(name: str) -> named.MethodName:
        where, _, method = name.rpartition(":")
        if where.endswith((".java", ".kt")):  # Calls.java:fib: the class the file is named for
            name = f"{os.path.splitext(os.path.basename(where))[0]}.{method}"
        try:
            return named.parse(name)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc

    # -- arming -----------------------------------------------------------------------------------------

    async def arm(self) -> None:
        """Bind the named methods in the loaded classes (a loaded class without the method named refuses it, with
        the closest names); the classes still to load are bound as they load."""
        loaded = await jvm.loaded_classes(self._vm)
        for name in self._names:
            for cls in loaded:
                if name.wants(cls):
                    await self._bind(name, cls, refuse=name.qualifier is not None)
        qualifiers = {name.qualifier for name in self._names}
        for qualifier in sorted({None} if None in qualifiers else qualifiers, key=str):
            self._prepares.extend(await jvm.prepare_requests(self._vm, qualifier))
        every = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(True).boolean(True)
        self._exception_request = await self._vm.event_request(EventKind.EXCEPTION, Suspend.EVENT_THREAD,
                                                               every.bytes(), 1)

    async def class_loaded(self, cls: JavaClass) -> None:
        for name in self._names:
            if name.wants(cls):
                with contextlib.suppress(*_GONE, UsageError):
                    await self._bind(name, cls, refuse=False)

    async def _bind(self, name: named.MethodName, cls: JavaClass, refuse: bool) -> None:
        classes = self._vm.classes
        methods = [m for m in (await classes.methods(cls)).values() if not is_compilers(m)]
        wanted = [m for m in methods if m.name == name.method]
        if not wanted and refuse:
            others = sorted({m.name for m in methods if not m.name.startswith("<")})
            near = difflib.get_close_matches(name.method, others, n=5, cutoff=0.5)
            raise UsageError(f"{cls.name} has no method {name.method}" + (
                f"; the closest: {', '.join(near)}" if near else f" (it has: {', '.join(others[:12]) or 'none'})"))
        for method in wanted:
            if (cls.id, method.id) in self._traced:
                continue
            traced = await described(self._vm, self._threads, cls, method)
            if traced is None:
                continue  # abstract or native: no code to enter
            where = Location(cls.tag, cls.id, method.id, (await classes.lines(cls, method))[0][0])
            self._traced[(cls.id, method.id)] = traced
            modifiers = self._vm.client.writer().u1(Modifier.LOCATION_ONLY).location(where).bytes()
            self._entries[await self._vm.event_request(EventKind.BREAKPOINT, Suspend.EVENT_THREAD, modifiers, 1)] = \
                traced
            if cls.id not in self._exits:
                only = self._vm.client.writer().u1(Modifier.CLASS_ONLY).reference_type(cls.id).bytes()
                self._exits[cls.id] = await self._vm.event_request(EventKind.METHOD_EXIT_WITH_RETURN_VALUE,
                                                                   Suspend.NONE, only, 1)

    # -- events -----------------------------------------------------------------------------------------

    def arrived(self, events: list[Event]) -> None:
        """A packet arrived (its handling may wait behind others'): the time its events happened, near enough."""
        now = time.perf_counter()
        for event in events:
            if event.kind in (EventKind.BREAKPOINT, EventKind.METHOD_ENTRY, EventKind.METHOD_EXIT_WITH_RETURN_VALUE):
                self._arrived[id(event)] = now

    async def handle(self, events: list[Event]) -> list[Event]:
        """Record the trace's own events of a composite packet; the others are returned. When the packet held
        nothing else, what it suspended is resumed."""
        rest: list[Event] = []
        mine = False
        arrived = [self._arrived.pop(id(event), None) for event in events]
        self._now = next((t for t in arrived if t is not None), time.perf_counter())
        callees = self._callees
        for event in events:
            if event.kind == EventKind.BREAKPOINT and event.request_id in self._entries:
                mine = True
                with contextlib.suppress(*_GONE):
                    if not self.stopped:  # (an event sent before the request was cleared is resumed, unrecorded)
                        await self._entered(event, self._entries[event.request_id])
            elif event.kind == EventKind.METHOD_ENTRY and callees is not None and callees.entry(event.request_id):
                mine = True
                with contextlib.suppress(*_GONE):
                    if not self.stopped:
                        await self._callee_entered(event)
            elif event.kind == EventKind.METHOD_EXIT_WITH_RETURN_VALUE and self._owns_exit(event.request_id):
                mine = True
                with contextlib.suppress(*_GONE):
                    if not self.stopped and self._counts_exit(event):
                        await self._exited(event)
            elif event.kind == EventKind.EXCEPTION and event.request_id == self._exception_request:
                mine = True
                with contextlib.suppress(*_GONE):
                    if not self.stopped:
                        await self._thrown(event)
            else:
                rest.append(event)
        if mine and not rest and events:
            policy = events[0].suspend_policy
            if policy != Suspend.NONE:  # held until the resume is sent (its answer may come after the thread ran on)
                self._state(events[0].thread).held += time.perf_counter() - self._now
            with contextlib.suppress(*_GONE):
                if policy == Suspend.EVENT_THREAD:
                    await self._vm.request(CommandSet.THREAD_REFERENCE, 3,
                                           self._vm.client.writer().object_id(events[0].thread).bytes(),
                                           "ThreadReference.Resume")
                elif policy == Suspend.ALL:
                    await self._vm.resume()
        return rest

    def _owns_exit(self, request_id: int) -> bool:
        return request_id in self._exits.values() or (self._callees is not None and self._callees.exit(request_id))

    def _counts_exit(self, event: Event) -> bool:
        """A thread whose callees are followed has every exit from its own request: the named class's is its twin."""
        callees = self._callees
        return callees is None or callees.exit(event.request_id) or not callees.armed(event.thread)

    def _state(self, thread: int) -> _ThreadState:
        state = self._states.get(thread)
        if state is None:
            state = self._states[thread] = _ThreadState()
        return state

    async def _entered(self, event: Event, traced: Traced) -> None:
        state = self._state(event.thread)
        opened = await self._read_entry(event, traced, 0, caller=True)
        if opened is None:
            return
        if state.name is None:
            with contextlib.suppress(*_GONE):
                state.name = await self._threads.name(event.thread)
        state.open.append(opened)
        if self._callees is not None:
            await self._callees.arm(event.thread)

    async def _callee_entered(self, event: Event) -> None:
        """A method entered on a thread whose callees are followed: a callee of the innermost open call (recorded
        when within the depth), a named method (its breakpoint records it), or one passed through."""
        state = self._states.get(event.thread)
        where = event.location
        if (state is None or not state.open or where is None or self._callees is None
                or (where.class_id, where.method_id) in self._traced):
            return
        traced = await self._callees.method(where)
        if traced is None:
            return
        level = state.open[-1].level + 1
        if level <= self.spec.depth and self._delivered < self.spec.max_calls:
            opened = await self._read_entry(event, traced, level, caller=False)
        else:  # followed, not recorded: nothing read (an exception finds its frame, ``_placed``)
            opened = _Open(traced, (), 0, None, self._now, state.held, level=self.spec.depth + 1)
        if opened is not None:
            state.open.append(opened)

    async def _read_entry(self, event: Event, traced: Traced, level: int, caller: bool) -> _Open | None:
        """A call just entered, as its record will say: its arguments, its depth in frames, its caller."""
        began = self._now
        state = self._state(event.thread)
        writer = self._vm.client.writer
        count, frames = await self._vm.client.request_all([
            (CommandSet.THREAD_REFERENCE, 7, writer().object_id(event.thread).bytes()),
            (CommandSet.THREAD_REFERENCE, 6, writer().object_id(event.thread).i4(0).i4(2 if caller else 1).bytes())],
            "ThreadReference.Frames", 10.0)
        if not isinstance(count, Reader) or not isinstance(frames, Reader):
            return None
        depth = count.i4()
        listed = [(frames.frame_id(), frames.location()) for _ in range(frames.i4())]
        args: tuple[tuple[str, str], ...] = ()
        if listed and traced.params:
            request = writer().object_id(event.thread).frame_id(listed[0][0]).i4(len(traced.params))
            for _, slot, signature in traced.params:
                request.i4(slot).u1(ord(signature[0]))
            reply = await self._vm.request(CommandSet.STACK_FRAME, 1, request.bytes(), "StackFrame.GetValues")
            values = [reply.value() for _ in range(reply.i4())]
            args = tuple([(name, await self._text(value)) for (name, _, _), value in
                          zip(traced.params, values, strict=False)])
        called_from = await self._caller(listed[1][1]) if caller and len(listed) > 1 else None
        return _Open(traced, args, depth, called_from, began, state.held, level)

    async def _exited(self, event: Event) -> None:
        where = event.location
        if where is None:
            return
        state = self._states.get(event.thread)
        if state is None or not state.open:
            return
        call = state.open[-1]
        if (call.traced.cls.id, call.traced.method.id) != (where.class_id, where.method_id):
            return
        state.open.pop()
        if call.level <= self.spec.depth:
            value = event.value
            returned = None
            if value is not None and value.tag != Tag.VOID:
                try:
                    returned = await self._text(value)
                except _GONE:  # the thread ran on (its exit suspends nothing): the object collected, the JVM ended
                    returned = "(not read: the program ended or dropped it first)"
            self._emit(state, call, returned=returned)
        await self._closed(event.thread, state)

    async def _closed(self, thread: int, state: _ThreadState) -> None:
        """A call ended: with none open on its thread any more, the thread's callees are no longer followed."""
        if not state.open and self._callees is not None:
            await self._callees.disarm(thread)

    async def _thrown(self, event: Event) -> None:
        """An exception on a thread with traced calls open: those deeper than the frame that catches it end."""
        state = self._states.get(event.thread)
        if state is None or not state.open:
            return
        reply = await self._vm.request(CommandSet.THREAD_REFERENCE, 6, self._vm.client.writer().object_id(
            event.thread).i4(0).i4(-1).bytes(), "ThreadReference.Frames")
        frames = [(reply.frame_id(), reply.location()) for _ in range(reply.i4())]
        catch = event.catch_location
        catching = len(frames) + 1  # uncaught: above no frame
        if catch is not None and catch.class_id:
            for index, (_, where) in enumerate(frames):
                if (where.class_id, where.method_id) == (catch.class_id, catch.method_id):
                    catching = len(frames) - index  # its depth from the bottom
                    break
        raised = await self._exception_text(event.exception)
        _placed(state.open, [where for _, where in reversed(frames)])
        while state.open and state.open[-1].depth > (catching if catching <= len(frames) else 0):
            call = state.open.pop()
            if call.level <= self.spec.depth:
                self._emit(state, call, raised=raised)
        await self._closed(event.thread, state)

    async def _exception_text(self, exception: Value | None) -> str:
        if exception is None or not exception.value:
            return "exception"
        values = self._vm.values
        cls = await values.class_of(int(exception.value))
        message = None
        for candidate in await self._vm.classes.fields(cls):
            if candidate.name == "detailMessage" and not candidate.is_static:
                found = (await values.field_values(int(exception.value), [candidate.id]))[0]
                if found.value:
                    message = await values.string(int(found.value))
                break
        return f"{cls.name}: {message}" if message is not None else cls.name

    async def _text(self, value: Value) -> str:
        text = (await self._vm.values.describe(value, 1)).text
        return text if len(text) <= self.spec.value_chars else text[:self.spec.value_chars] + "…"

    async def _caller(self, where: Location) -> str | None:
        frame = await self._threads.describe(where)
        place = f"{os.path.basename(frame.file)}:{frame.line}" if frame.file else "?"
        return f"{frame.name} ({place})"

    def _emit(self, state: _ThreadState, call: _Open, returned: str | None = None, raised: str | None = None,
              ended: bool = True) -> None:
        if self._delivered >= self.spec.max_calls:
            return
        took = None
        if ended:
            took = max(0.0, self._now - call.began - (state.held - call.held_at)) * 1e6
        traced = call.traced
        self._sink(CallRecord(traced.name, call.args, returned=returned, raised=raised, caller=call.caller,
                              thread=state.name, duration_us=None if took is None else round(took, 1),
                              depth=call.level, file=traced.file, line=traced.line, ended=ended, started=call.began))
        self._delivered += 1

    # -- the end ----------------------------------------------------------------------------------------

    async def stop(self) -> list[str]:
        if self.stopped:
            return []
        self.stopped = True
        with contextlib.suppress(*_GONE):
            for request in self._entries:
                await self._vm.clear_request(EventKind.BREAKPOINT, request)
            for request in self._exits.values():
                await self._vm.clear_request(EventKind.METHOD_EXIT_WITH_RETURN_VALUE, request)
            if self._exception_request is not None:
                await self._vm.clear_request(EventKind.EXCEPTION, self._exception_request)
            await jvm.clear_prepares(self._vm, self._prepares)
            if self._callees is not None:
                await self._callees.disarm_all()
        for state in self._states.values():
            while state.open:
                call = state.open.pop(0)
                if call.level <= self.spec.depth:
                    self._emit(state, call, ended=False)
        notes = []
        bound = {t.method.name for t in self._traced.values()}
        never = [name for name, parsed in zip(self.spec.functions, self._names, strict=True)
                 if parsed.method not in bound]
        if never:
            notes.append(f"never loaded: {', '.join(never)} (no class with that method was loaded)")
        return notes


def _placed(calls: list[_Open], frames: list[Location]) -> None:
    """Give each open call whose depth was not read the frame it runs in (``frames`` from the bottom): the next
    frame of its method above the call below it (one the stack no longer has is above every frame)."""
    index = 0
    for call in calls:
        if not call.depth:
            key = (call.traced.cls.id, call.traced.method.id)
            while index < len(frames) and (frames[index].class_id, frames[index].method_id) != key:
                index += 1
            call.depth = index + 1
        index = call.depth
