"""Which locks each of the program's threads holds and waits for, as the JVM tells it (``Backend.locks``).

What JDWP gives (OpenJDK 17; the four capabilities it takes are checked once: canGetOwnedMonitorInfo,
canGetCurrentContendedMonitor, canGetMonitorInfo, canGetMonitorFrameInfo):

- ``ThreadReference.OwnedMonitorsStackDepthInfo``: the monitors a thread holds, each with the depth of the
  frame that took it (``synchronized``) — "holds java.lang.Object@34 (Deadlocks.LEFT, locked in
  Deadlocks.monitors)". A monitor the thread ``wait()``s on is not among them: ``wait()`` released it.
- ``ThreadReference.CurrentContendedMonitor``: the monitor a thread is blocked entering (status MONITOR) —
  and, for a thread in ``Object.wait()`` (status WAIT), the one it waits on, which it does not wait to
  lock: that one is said as its state ("in Object.wait() on …"). ``ObjectReference.MonitorInfo`` names the
  owner of a contended monitor (asked once per monitor: a hundred threads blocked on one cost one).
- ``java.util.concurrent`` locks are no monitors: a thread blocked in ``ReentrantLock.lock()`` is parked
  (status WAIT) with ``Thread.parkBlocker`` set to the lock's ``Sync``, an ``AbstractOwnableSynchronizer``
  whose ``exclusiveOwnerThread`` is the holder. The lock the program knows is the ``this`` of the frame the
  program called (``ReentrantLock.lock``), so it is named after that. Which of them a thread holds is known
  from the waiters' side only (the JVM keeps no list; jstack walks the heap for it): a holder nobody waits
  for shows none. A blocker without an owner (a latch, a semaphore, a queue's condition) is the thread's
  state: "parked in CountDownLatch.await() on …".
- A lock is named as jstack names it (``java.lang.Object@34``: its class and JDWP object id) and by where
  the program holds it, looked for from the frame that took it (or, for one nobody holds, the program's
  first frame that waits for it) outward: a static field (``Deadlocks.LEFT``: one name for every thread),
  else a local of the outermost frame that has one (``alpha``, not the ``theirs`` of the method two
  deadlocked threads run), a field of either (``carol.audit``), else a name through ``this``; a ``Thread``
  object is the thread it is.

The JVM's own threads (Finalizer, Common-Cleaner: each waits on its queue) are left out. Nothing runs in
the program: every request only reads. What each thread owns and waits for is one pipelined round of two
requests a thread (the listing's frames say whether a waiting thread is in ``Object.wait()`` or parked),
read once a stop; then the contended monitors' owners, the blockers' owners and the names, a few requests
a lock, asked all at once: 200 threads cost 415 requests under a few waits (bench/java_locks.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field

from polydbg.backends.base import Lock, ThreadLocks
from polydbg.backends.java.classes import JavaClass, short_name
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import LIBRARY_PACKAGES, Vm
from polydbg.backends.kit import timeouts
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Location, Reader, Tag

MONITOR, WAIT = 3, 4  # ThreadReference.Status: blocked entering a monitor; waiting (Object.wait(), parked)
# VirtualMachine.CapabilitiesNew: canGetOwnedMonitorInfo, canGetCurrentContendedMonitor, canGetMonitorInfo,
# canGetMonitorFrameInfo
NEEDED_CAPABILITIES = (4, 5, 6, 17)
THREAD = "Ljava/lang/Thread;"
OWNABLE = "Ljava/util/concurrent/locks/AbstractOwnableSynchronizer;"
LOCKS_PACKAGE = "java.util.concurrent.locks."
HOLDER_FRAMES = 4  # the frames where a lock's holder is looked for: the one that took it (or waits), then callers
DEEPER = 24  # the objects of a frame whose fields are looked in for a lock it holds one step away
STATIC, LOCAL, THROUGH_THIS = 0, 1, 2  # how a frame names an object, the best first
Frames = list[tuple[int, Location]]


@dataclass
class _Thread:
    """What round one read of one thread."""

    jdwp: int
    status: int | None
    owned: list[tuple[int, int]] = field(default_factory=list)  # (monitor, depth of the frame that took it)
    contended: int = 0  # the monitor it is blocked entering, or wait()s on
    blocker: int = 0  # Thread.parkBlocker
    bystander: bool = False  # not asked for: read for the lock it waits for (which an asked thread may hold)


@dataclass
class _Blocker:
    """A parked thread's blocker: the object the program called (named), whether it is a lock, its owner."""

    lock: Lock | None = None  # a lock (an AbstractOwnableSynchronizer): what the thread waits for
    said: str = ""  # anything else: the thread's state


class Monitors:
    def __init__(self, vm: Vm, threads: Threads) -> None:
        self._vm = vm
        self._threads = threads
        self._able: bool | None = None  # the JVM offers what this needs (asked once)
        self._park_blocker = 0  # the field id of Thread.parkBlocker (0: none in this JVM)
        self._ownable = 0  # the class AbstractOwnableSynchronizer
        self._exclusive_owner = 0  # the field id of its exclusiveOwnerThread
        self._known: dict[int, _Thread] = {}  # JDWP thread → what round one read of it, at this stop
        self._read_at = (-1, -1)  # (the program's run, evaluations' calls) it was read at

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        if not await self._capable():
            return {}
        threads = self._threads
        wanted: dict[int, int] = {}
        for thread_id in thread_ids:
            jdwp = threads.known(thread_id)
            if jdwp is not None and not threads.is_jvm_thread(jdwp) and threads.calls.running(jdwp) is None:
                wanted[thread_id] = jdwp
        if not wanted:
            return {}
        # the other parked threads: a java.util.concurrent lock one of the wanted holds is known from them only
        asked = set(wanted.values())
        bystanders = [jdwp for jdwp, status in threads.statuses().items() if status == WAIT and jdwp not in asked
                      and not threads.is_jvm_thread(jdwp) and threads.calls.running(jdwp) is None]
        read = await self._read(list(wanted.values()), bystanders)
        return await _Stop(self, read, wanted).locks()

    async def _capable(self) -> bool:
        if self._able is None:
            try:
                reply = await self._vm.request(CommandSet.VM, 17, b"", "VirtualMachine.CapabilitiesNew")
                offered = [reply.boolean() for _ in range(max(NEEDED_CAPABILITIES) + 1)]
                self._able = all(offered[i] for i in NEEDED_CAPABILITIES)
            except JdwpRequestError:
                self._able = False
            self._park_blocker = (await self._field_id(THREAD, "parkBlocker"))[1]
        if not self._ownable:  # (loaded with the program's first java.util.concurrent lock)
            self._ownable, self._exclusive_owner = await self._field_id(OWNABLE, "exclusiveOwnerThread")
        return self._able

    async def _field_id(self, signature: str, name: str) -> tuple[int, int]:
        """A loaded class of the JDK and its field's id (0s when the class is not loaded, or has no such field)."""
        cls = await self._vm.classes.named(signature)
        if cls is None:
            return 0, 0
        return cls.id, next((f.id for f in await self._vm.classes.fields(cls) if f.name == name), 0)

    async def _read(self, jdwps: list[int], bystanders: list[int]) -> list[_Thread]:
        """Round one: what each thread owns, contends for and is parked on — only what a bystander is parked
        on —, read once a stop (pages of the all-threads stack ask again; a method an evaluation calls may
        take a lock: read anew after one)."""
        now = (self._threads.calls.run, self._threads.invokes)
        if now != self._read_at:
            self._read_at, self._known = now, {}
        missing = [jdwp for jdwp in jdwps if jdwp not in self._known or self._known[jdwp].bystander]
        missing_bystanders = [jdwp for jdwp in bystanders if jdwp not in self._known]
        for thread in await self._ask(missing, missing_bystanders):
            self._known[thread.jdwp] = thread
        return [self._known[jdwp] for jdwp in (*jdwps, *bystanders) if jdwp in self._known]

    async def _ask(self, jdwps: list[int], bystanders: list[int]) -> list[_Thread]:
        """Every thread's status (the listing's), the monitors it owns, and the monitor it is blocked entering, or
        wait()s on, or what it is parked on, under one wait."""
        writer = self._vm.client.writer
        read = [_Thread(jdwp, self._threads.status(jdwp)) for jdwp in jdwps]
        unknown = [thread for thread in read if thread.status is None]
        statuses = await self._vm.client.request_all(
            [(CommandSet.THREAD_REFERENCE, 4, writer().object_id(thread.jdwp).bytes()) for thread in unknown],
            "ThreadReference.Status", timeouts.INSPECT_S)
        for thread, status in zip(unknown, statuses, strict=True):
            thread.status = status.i4() if isinstance(status, Reader) else None
        read += [_Thread(jdwp, WAIT, bystander=True) for jdwp in bystanders]
        asked: list[tuple[_Thread, str, tuple[int, int, bytes]]] = []
        for thread in read:
            ref = writer().object_id(thread.jdwp)
            waits_in = await self._waits_in(thread) if thread.status == WAIT else None
            if not thread.bystander:
                asked.append((thread, "owned", (CommandSet.THREAD_REFERENCE, 13, ref.bytes())))
            if thread.status == MONITOR or (waits_in != "park" and thread.status == WAIT and not thread.bystander):
                asked.append((thread, "contended", (CommandSet.THREAD_REFERENCE, 9, ref.bytes())))
            if waits_in != "wait" and thread.status == WAIT and self._park_blocker:
                asked.append((thread, "blocker", (CommandSet.OBJECT_REFERENCE, 2, writer().object_id(
                    thread.jdwp).i4(1).field_id(self._park_blocker).bytes())))
        await self._answer(asked)
        return read

    async def _waits_in(self, thread: _Thread) -> str | None:
        """How a waiting thread waits, by its innermost frame when its frames were read already (the listing
        reads them): ``wait`` in Object.wait(), ``park`` parked; None when not known (both are asked then)."""
        frames = self._threads.read_frames(thread.jdwp)
        if not frames:
            return None
        top = await self._vm.classes.get(frames[0][1].class_id)
        return {"java.lang.Object": "wait", "jdk.internal.misc.Unsafe": "park", "sun.misc.Unsafe": "park"}.get(top.name)

    async def _answer(self, asked: list[tuple[_Thread, str, tuple[int, int, bytes]]]) -> None:
        replies = await self._vm.client.request_all([command for _, _, command in asked],
                                                    "the threads' locks", timeouts.INSPECT_S)
        for (thread, kind, _), reply in zip(asked, replies, strict=True):
            if not isinstance(reply, Reader):
                continue  # (a thread that ended, or runs: started after the stop)
            if kind == "owned":
                thread.owned = [(int(reply.value().value), reply.i4()) for _ in range(reply.i4())]
            elif kind == "contended":
                thread.contended = int(reply.value().value)
            elif reply.i4():
                thread.blocker = int(reply.value().value)


class _Stop:
    """One ``locks`` call: what it read, and what it names once however many threads meet it."""

    def __init__(self, monitors: Monitors, read: list[_Thread], wanted: dict[int, int]) -> None:
        self._m = monitors
        self._vm = monitors._vm
        self._threads = monitors._threads
        self._read = read
        self._by_jdwp = {jdwp: thread_id for thread_id, jdwp in wanted.items()}
        self._names: dict[int, asyncio.Future[str]] = {}  # object id → its name
        self._statics: dict[int, asyncio.Future[dict[int, str]]] = {}  # class id → object id → its static field
        self._owners: dict[int, int] = {}  # contended monitor → its owner (JDWP; 0: none)
        self._blockers: dict[int, asyncio.Future[_Blocker]] = {}
        self._owned_by: dict[int, asyncio.Future[int | None]] = {}  # blocker → exclusive owner (None: no lock)

    async def locks(self) -> dict[int, ThreadLocks]:
        """The owners of the contended monitors and the blockers, the frames, the names (all asked at once), then
        each thread's locks."""
        asked = [t for t in self._read if t.jdwp in self._by_jdwp]
        entered = {t.contended for t in asked if t.status == MONITOR and t.contended}
        needs_frames = [t.jdwp for t in asked if t.owned or t.contended or t.blocker]
        others = [t for t in self._read if t.jdwp not in self._by_jdwp and t.blocker]
        owners = await asyncio.gather(*(self._lock_owner(t.blocker) for t in others))
        needs_frames += [t.jdwp for t, owner in zip(others, owners, strict=True) if (owner or 0) in self._by_jdwp]
        read, _ = await asyncio.gather(asyncio.gather(*(self._frames(j) for j in needs_frames)),
                                       self._monitor_owners(sorted(entered)))
        frames_of = dict(zip(needs_frames, read, strict=True))
        for thread in asked:  # every name asked for at once, each named where it was taken (else where waited for)
            for monitor, depth in thread.owned:
                self._name(monitor, (thread.jdwp, frames_of[thread.jdwp], depth))
        for thread in asked:
            if thread.contended:
                waiting = frames_of[thread.jdwp]
                self._name(thread.contended, (thread.jdwp, waiting, await self._user_depth(waiting)))
        parked = {t.jdwp: self._parked(t, frames_of[t.jdwp]) for t in self._read if t.jdwp in frames_of}
        holds: dict[int, list[Lock]] = {}
        found: dict[int, ThreadLocks] = {}
        for thread in self._read:
            frames = frames_of.get(thread.jdwp)
            if frames is None and thread.jdwp not in self._by_jdwp:
                continue  # waits for nothing an asked thread holds
            frames = frames or []
            pending = parked.get(thread.jdwp)
            blocker = await pending if pending is not None else None
            waits, state = None, None
            if thread.contended and thread.status == MONITOR:
                owner = self._owners.get(thread.contended, 0)
                name = await self._names[thread.contended]
                waits = Lock(str(thread.contended), name, self._threads.id_of(owner) if owner else None, "monitor")
            elif thread.contended:
                state = f"in {await self._called(frames)}() on {await self._names[thread.contended]}"
            elif blocker is not None and blocker.lock is not None:
                waits = blocker.lock
            elif blocker is not None:
                state = blocker.said
            if waits is not None and waits.kind != "monitor" and waits.owner is not None:
                owner_jdwp = self._threads.known(waits.owner)
                held_there = holds.setdefault(owner_jdwp or 0, [])
                if all(lock.id != waits.id for lock in held_there):
                    held_there.append(waits)  # a j.u.c. lock: known held from its waiters
            if thread.jdwp in self._by_jdwp:
                shown = self._by_jdwp[thread.jdwp]
                holds.setdefault(thread.jdwp, [])[:0] = [
                    Lock(str(monitor), await self._taken(monitor, frames, depth), shown, "monitor")
                    for monitor, depth in thread.owned]
                found[shown] = ThreadLocks(waits_for=waits, state=state)
        for jdwp, held in holds.items():
            holder = self._by_jdwp.get(jdwp)
            if holder is not None and held:
                found[holder] = found.get(holder, ThreadLocks())._replace(holds=tuple(held))
        return {tid: locks for tid, locks in found.items() if locks.holds or locks.waits_for or locks.state}

    # -- round two ------------------------------------------------------------------------------------

    async def _frames(self, jdwp: int) -> Frames:
        try:
            return await self._threads.frames(jdwp)
        except JdwpRequestError:
            return []

    async def _monitor_owners(self, monitors: list[int]) -> None:
        writer = self._vm.client.writer
        replies = await self._vm.client.request_all(
            [(CommandSet.OBJECT_REFERENCE, 5, writer().object_id(m).bytes()) for m in monitors],
            "ObjectReference.MonitorInfo", timeouts.INSPECT_S)
        for monitor, reply in zip(monitors, replies, strict=True):
            self._owners[monitor] = reply.object_id() if isinstance(reply, Reader) else 0

    def _parked(self, thread: _Thread, frames: Frames) -> asyncio.Future[_Blocker] | None:
        """What a parked thread waits for (its blocker read once, however many threads it parks)."""
        if not thread.blocker or thread.contended:
            return None
        known = self._blockers.get(thread.blocker)
        if known is None:
            known = self._blockers[thread.blocker] = asyncio.ensure_future(self._blocker(thread.blocker, thread.jdwp,
                                                                                         frames))
        return known

    async def _blocker(self, blocker: int, jdwp: int, frames: Frames) -> _Blocker:
        user = await self._user_frame(frames)
        called = user - 1 if user else -1  # the JDK's method the program called (ReentrantLock.lock)
        this, _ = await asyncio.gather(self._this(jdwp, frames[called]) if called >= 0 else _none(),
                                       self._lock_owner(blocker))  # (both asked at once)
        target = this or blocker
        view = await self._vm.values.class_of(target)
        if view.name.startswith(LOCKS_PACKAGE) and "$" in view.name and user is not None:  # a ReadLock, a WriteLock:
            found = await self._held_at(target, jdwp, frames, user)  # named by the lock it is a view of
            if found and found[1] and (await self._vm.values.class_of(found[1])).name.startswith(LOCKS_PACKAGE):
                target = found[1]
        owner = await self._lock_owner(blocker)
        places = [(jdwp, frames, -1 if user is None else user)]
        if owner:  # named where its holder holds it first (a waiter may know it by no name: gate::lock)
            held = await self._frames(owner)
            places.insert(0, (owner, held, await self._naming_frame(held)))
        name = await self._name(target, *places)
        target_class = await self._vm.values.class_of(target)
        if owner is not None and (owner or target_class.name.startswith(LOCKS_PACKAGE)):
            return _Blocker(lock=Lock(str(blocker), name, self._threads.id_of(owner) if owner else None,
                                      short_name(target_class.signature)))
        if user is None:  # the JDK's own code parks it (an idle pool thread)
            return _Blocker(said=f"parked on {name}")
        return _Blocker(said=f"parked in {await self._called(frames)}() on {name}")

    def _lock_owner(self, blocker: int) -> asyncio.Future[int | None]:
        """The thread holding a blocker that is a lock (an AbstractOwnableSynchronizer: 0 when none does); None
        for one that is no lock."""
        known = self._owned_by.get(blocker)
        if known is None:
            known = self._owned_by[blocker] = asyncio.ensure_future(self._read_owner(blocker))
        return known

    async def _read_owner(self, blocker: int) -> int | None:
        """(Which class a blocker is, by its superclasses: HotSpot's field ids are offsets, alike in any class.)"""
        values, classes = self._vm.values, self._vm.classes
        cls: JavaClass | None = await values.class_of(blocker)
        while cls is not None and cls.id != self._m._ownable:
            cls = await classes.superclass(cls)
        if cls is None or not self._m._exclusive_owner:
            return None
        return int((await values.field_values(blocker, [self._m._exclusive_owner]))[0].value)

    # -- names ----------------------------------------------------------------------------------------

    def _name(self, target: int, *places: tuple[int, Frames, int]) -> asyncio.Future[str]:
        """How ``target`` reads (``java.lang.Object@34 (Deadlocks.LEFT)``), named once, by the first of
        ``places`` (thread, its frames, the frame to look from) that holds it by a name: asked first by the
        thread that took it, when one holds it."""
        known = self._names.get(target)
        if known is None:
            known = self._names[target] = asyncio.ensure_future(self._named(target, places))
        return known

    async def _named(self, target: int, places: tuple[tuple[int, Frames, int], ...]) -> str:
        try:
            cls = await self._vm.values.class_of(target)
        except JdwpRequestError:  # (collected meanwhile: the program ran an evaluation's call)
            return f"object@{target}"
        text = f"{cls.name}@{target}"
        thread = self._threads.shown_id(target)
        if thread is not None:
            return f"{text} (thread {thread})"
        for jdwp, frames, depth in places:
            try:
                found = await self._held_at(target, jdwp, frames, depth)
            except JdwpRequestError:  # (a class unloaded, a thread ended: another place may name it)
                continue
            if found and found[0] != "this":
                return f"{text} ({found[0]})"
        return text

    async def _taken(self, monitor: int, frames: Frames, depth: int) -> str:
        """A held monitor's name and the method that took it: ``… (Deadlocks.LEFT, locked in Deadlocks.monitors)``
        (the method, not a line: the frame has moved on from its ``synchronized`` since)."""
        name = await self._names[monitor]
        if not 0 <= depth < len(frames):
            return name
        cls, method = await self._vm.classes.method(frames[depth][1].class_id, frames[depth][1].method_id)
        taker = f"{short_name(cls.signature)}.{method.name if method else '?'}"
        return f"{name[:-1]}, locked in {taker})" if name.endswith(")") else f"{name} (locked in {taker})"

    async def _held_at(self, target: int, jdwp: int, frames: Frames, depth: int) -> tuple[str, int] | None:
        """Where the program holds ``target`` (and the object holding it, for a field's: else 0), looked for from
        frame ``depth`` outward in the program's frames (``HOLDER_FRAMES``): a static field of the frame's class,
        a local, a field of ``this`` — or a field of one of those (``carol.audit``). A static field names it for
        every thread at once, so it is taken at once; a local is taken from the outermost frame that has one (a
        lambda's ``alpha``, not ``theirs`` of the method both threads run); a name through ``this`` only when
        nothing else names it (a ``synchronized`` method's object: its caller's local says which one)."""
        if not 0 <= depth < len(frames):
            return None
        program = []  # the frame to look from (the JDK's own too: a monitor taken there), then the program's
        for index in range(depth, len(frames)):
            cls = await self._vm.classes.get(frames[index][1].class_id)
            if _names_things(cls) or (index == depth and "$$Lambda" not in cls.signature):
                program.append(index)
        local: tuple[str, int] | None = None
        relative: tuple[str, int] | None = None
        for index in program[:HOLDER_FRAMES]:
            static = (await self._static_objects(await self._vm.classes.get(frames[index][1].class_id))).get(target)
            if static is not None:  # (asked first: the frame's other values need requests of their own)
                return static, 0
            try:
                named = await self._objects_in(jdwp, frames[index])
            except JdwpRequestError:  # (a native frame has no variable table: error 511)
                continue
            found = [(rank, path, 0) for path, value, rank in named if value == target]
            if not found:
                inside = await asyncio.gather(*(self._field_holding(target, value)
                                                for _, value, _ in named[:DEEPER]))
                found = [(rank, f"{path}.{name}", value) for (path, value, rank), name
                         in zip(named, inside, strict=False) if name is not None]
            if not found:
                continue
            rank, path, holder = min(found)
            if rank == STATIC:
                return path, holder
            if rank == LOCAL:
                local = path, holder
            else:
                relative = relative or (path, holder)
        return local or relative

    async def _field_holding(self, target: int, holder: int) -> str | None:
        """The field of object ``holder`` that holds ``target`` (the JDK's own objects and arrays not looked in)."""
        values = self._vm.values
        cls = await values.class_of(holder)
        if cls.signature.startswith("[") or cls.name.startswith("java.lang.") or "$$Lambda" in cls.signature:
            return None  # (a lambda's fields, arg$1, are captured values without their names)
        fields = [f for f in await self._vm.classes.fields(cls) if not f.is_static and f.signature[0] in "L["]
        found = await values.field_values(holder, [f.id for f in fields])
        return next((f.name for f, value in zip(fields, found, strict=False) if value.value == target), None)

    async def _objects_in(self, jdwp: int, frame: tuple[int, Location]) -> list[tuple[str, int, int]]:
        """The objects a frame names, by how it names them, ranked (``STATIC``, ``LOCAL``, ``THROUGH_THIS``):
        ``this``, its class's static fields, the fields of ``this``, its locals."""
        frame_id, where = frame
        classes, values = self._vm.classes, self._vm.values
        cls, method = await classes.method(where.class_id, where.method_id)
        named: list[tuple[str, int, int]] = []
        this = await self._this(jdwp, frame) if method is not None and not method.is_static else 0
        if this:
            named.append(("this", this, THROUGH_THIS))
        named += [(path, value, STATIC) for value, path in (await self._static_objects(cls)).items()]
        if this:
            fields = [f for f in await classes.fields(await values.class_of(this))
                      if not f.is_static and f.signature[0] in "L["]
            named += [(f"this.{f.name}", int(value.value), THROUGH_THIS) for f, value in
                      zip(fields, await values.field_values(this, [f.id for f in fields]), strict=False) if value.value]
        if method is None or method.no_variables:
            return named
        visible = [v for v in await classes.variables(cls, method)
                   if v.visible_at(where.code_index) and v.signature[0] in "L[" and v.name != "this"]
        if visible:
            writer = self._vm.client.writer().object_id(jdwp).frame_id(frame_id).i4(len(visible))
            for variable in visible:
                writer.i4(variable.slot).u1(Tag.ARRAY if variable.signature[0] == "[" else Tag.OBJECT)
            reply = await self._vm.request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues")
            found = [reply.value() for _ in range(reply.i4())]
            named += [(v.name, int(value.value), LOCAL) for v, value in zip(visible, found, strict=False)
                      if value.value]
        return named

    async def _static_objects(self, cls: JavaClass) -> dict[int, str]:
        """A class's static fields holding objects, by the object (read once per class)."""
        known = self._statics.get(cls.id)
        if known is None:
            known = self._statics[cls.id] = asyncio.ensure_future(self._read_statics(cls))
        return await asyncio.shield(known)

    async def _read_statics(self, cls: JavaClass) -> dict[int, str]:
        fields = [f for f in await self._vm.classes.fields(cls) if f.is_static and f.signature[0] in "L["]
        values = await self._vm.values.static_values(cls.id, [f.id for f in fields])
        found: dict[int, str] = {}
        for f, value in zip(fields, values, strict=False):
            if value.value:
                found.setdefault(int(value.value), f"{short_name(cls.signature)}.{f.name}")
        return found

    async def _this(self, jdwp: int, frame: tuple[int, Location]) -> int:
        _, method = await self._vm.classes.method(frame[1].class_id, frame[1].method_id)
        if method is None or method.is_static:
            return 0
        try:
            reply = await self._vm.request(CommandSet.STACK_FRAME, 3, self._vm.client.writer().object_id(
                jdwp).frame_id(frame[0]).bytes(), "StackFrame.ThisObject")
        except JdwpRequestError:
            return 0
        return int(reply.value().value)

    # -- frames ---------------------------------------------------------------------------------------

    async def _user_frame(self, frames: Frames) -> int | None:
        """The first frame of the program's own code (the caller of what blocks: not the JDK's, not Kotlin's);
        None when every frame is the runtime's (an idle pool thread)."""
        for index, (_, where) in enumerate(frames):
            if not (await self._vm.classes.get(where.class_id)).name.startswith(LIBRARY_PACKAGES):
                return index
        return None

    async def _naming_frame(self, frames: Frames) -> int:
        """The first frame that names the program's things (not the runtime's, not a lambda's class; -1: none)."""
        for index, (_, where) in enumerate(frames):
            if _names_things(await self._vm.classes.get(where.class_id)):
                return index
        return -1

    async def _user_depth(self, frames: Frames) -> int:
        """The frame a lock is looked for in: the program's first (-1: none)."""
        user = await self._user_frame(frames)
        return -1 if user is None else user

    async def _called(self, frames: Frames) -> str:
        """The JDK's method the program called to block (``Object.wait``, ``CountDownLatch.await``); the
        innermost frame's method when no frame is the program's."""
        if not frames:
            return "?"
        index = max(0, (await self._user_frame(frames) or 0) - 1)
        cls, method = await self._vm.classes.method(frames[index][1].class_id, frames[index][1].method_id)
        return f"{short_name(cls.signature)}.{method.name if method else '?'}"


def _names_things(cls: JavaClass) -> bool:
    """Whether a class's frames name the program's things: not the JDK's or Kotlin's, not a lambda's generated
    class (its fields, ``arg$1``, are the captured values without their names)."""
    return not cls.name.startswith(LIBRARY_PACKAGES) and "$$Lambda" not in cls.signature


async def _none() -> int:
    return 0
