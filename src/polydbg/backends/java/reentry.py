"""After a reload, the stopped thread re-enters the method it was stopped in, so the new code runs at once; and
which frames keep running the old code.

A frame keeps running the code it had when its class was redefined: HotSpot marks that method obsolete
(``Method.IsObsolete``, 6/4) when the new version differs (an unchanged method's frames simply go on). A frame
that a reload before left in an unchanged method is not marked by the next one that changes the method (HotSpot
17 answers for the method's current version): its method's bytecode before and after the redefinition
(``Method.Bytecodes``, 6/3) tells — except for an edit of constants alone (a string literal), which keeps the
bytecode. To run the
new code now, ``StackFrame.PopFrames`` (16/4, ``canPopFrames``) pops the stopped frame — and the JDK's frames above
it, when the stop was inside the JDK — which leaves the caller at its invoke instruction with the arguments as
they were; a step into (``SingleStep``, suspending only that thread, the others staying suspended) runs that
invoke again and stops at the method's first line. That pause is the reload's, never a stop shown: its events are
taken here before ``Stops`` sees them (``take``). A breakpoint on the first line comes in the same packet and
suspends every thread once more (``SuspendPolicy.ALL``): that suspension is undone, so the program is suspended
exactly as before (a thread started later would start suspended otherwise: the JVM could not exit).

What cannot be re-entered is said, not hidden: a method whose caller is native code (``main``, called by the
JVM's launcher: ``OPAQUE_FRAME``), a JVM without ``canPopFrames``, and the deeper frames of redefined methods
(a recursion, the loop in ``main`` calling the fixed method) — each runs its old code until it returns. The
popped frame's work before the stop (fields set, output written) is not undone.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from polydbg.backends.java import redefine
from polydbg.backends.java.stops import STOPPING
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import LIBRARY_PATTERNS, Vm
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Location, Modifier, Suspend

REENTER_S = 10.0  # from the pop to the method's first line: one invoke, unless the JVM is starved
OPAQUE_FRAME = 32  # a native frame in the way (HotSpot answers NO_MORE_FRAMES for main, whose caller is native)
NO_MORE_FRAMES = 31
_LINE, _INTO = 1, 0  # SingleStep's size and depth


@dataclass
class _Waiting:
    thread: int
    request: int
    arrived: asyncio.Future[list[Event]]


@dataclass(frozen=True)
class Frame:
    """A frame in a method of a redefined class, read before the redefinition (when its method had its name)."""

    depth: int
    where: Location
    name: str  # Counter.compute
    place: str  # Counter.java:12
    code: bytes  # the method's bytecode (``Method.Bytecodes``)


class Reentry:
    def __init__(self, vm: Vm, threads: Threads) -> None:
        self._vm = vm
        self._threads = threads
        self._waiting: _Waiting | None = None

    def take(self, events: list[Event]) -> list[Event]:
        """The events a re-entry waits for are its own (never a stop); the others, to be handled as usual."""
        waiting = self._waiting
        if waiting is None:
            return events
        mine = [e for e in events if e.thread == waiting.thread and (e.kind in STOPPING or e.request_id
                                                                        == waiting.request)]
        if mine and not waiting.arrived.done():
            waiting.arrived.set_result(mine)
        return [e for e in events if e not in mine] if mine else events

    async def frames_in(self, classes: set[int]) -> dict[int, list[Frame]]:
        """Every suspended thread's frames in methods of ``classes``, named while the methods are the loaded ones."""
        found: dict[int, list[Frame]] = {}
        for thread, _, _, _ in await self._threads.all():
            with contextlib.suppress(JdwpRequestError):
                for depth, (_, where) in enumerate(await self._threads.frames(thread)):
                    if where.class_id in classes:
                        shown = await self._threads.describe(where)
                        place = f"{(shown.file or '?').rpartition('/')[2]}:{shown.line}"
                        found.setdefault(thread, []).append(Frame(depth, where, shown.name, place,
                                                                  await self._bytecode(where)))
        return found

    async def obsolete(self, before: dict[int, list[Frame]]) -> dict[int, list[Frame]]:
        """Of the frames read before the redefinition, those whose method it made obsolete (they run the old code)."""
        self._threads.forget_frames()
        found: dict[int, list[Frame]] = {}
        for thread, frames in before.items():
            with contextlib.suppress(JdwpRequestError):
                now = await self._threads.frames(thread)
                for frame in frames:
                    if frame.depth < len(now) and (await self._is_obsolete(now[frame.depth][1])
                                                   or await self._bytecode(frame.where) != frame.code):
                        found.setdefault(thread, []).append(frame)
        return found

    async def _bytecode(self, where: Location) -> bytes:
        """The bytecode of the method a method id names now (after a redefinition, its new version's)."""
        reply = await self._vm.request(CommandSet.METHOD, 3, self._vm.client.writer().reference_type(
            where.class_id).method_id(where.method_id).bytes(), "Method.Bytecodes")
        return reply.blob()

    async def _is_obsolete(self, where: Location) -> bool:
        reply = await self._vm.request(CommandSet.METHOD, 4, self._vm.client.writer().reference_type(
            where.class_id).method_id(where.method_id).bytes(), "Method.IsObsolete")
        return reply.boolean()

    async def reenter(self, thread: int, frame: Frame) -> str:
        """Pop ``frame`` (the thread's top shown one) and every frame above it, then step into the call again: the
        thread stops at the new code's first line. Where it is, ``Counter.compute (Counter.java:12)``; a refusal
        raises ``Unreentered`` saying why."""
        if not (await redefine.capabilities(self._vm))[redefine.CAN_POP_FRAMES]:
            raise Unreentered("this JVM cannot pop frames (its canPopFrames capability is off)")
        frames = await self._threads.frames(thread)
        frame_id = frames[frame.depth][0]
        try:
            await self._vm.request(CommandSet.STACK_FRAME, 4, self._vm.client.writer().object_id(thread).frame_id(
                frame_id).bytes(), "StackFrame.PopFrames")
        except JdwpRequestError as exc:
            if exc.code in (OPAQUE_FRAME, NO_MORE_FRAMES):
                raise Unreentered("its caller is native code: the JVM's launcher calling main, or reflection calling "
                                  "a test method") from exc
            raise Unreentered(f"the JVM could not pop its frame ({exc})") from exc
        finally:
            self._threads.forget_frames(thread)
        await self._step_into(thread)
        self._threads.forget_frames(thread)
        await self._threads.stopped_at(thread)
        landed = await self._threads.describe((await self._threads.shown(thread))[0][1])
        return f"{landed.name} ({(landed.file or '?').rpartition('/')[2]}:{landed.line})"

    async def _step_into(self, thread: int) -> None:
        """The popped call made again, up to its first line, with only ``thread`` running."""
        client = self._vm.client
        writer = client.writer().u1(Modifier.STEP).object_id(thread).i4(_LINE).i4(_INTO)
        for pattern in LIBRARY_PATTERNS:
            writer.u1(Modifier.CLASS_EXCLUDE).string(pattern)
        request = await self._vm.event_request(EventKind.SINGLE_STEP, Suspend.EVENT_THREAD, writer.bytes(),
                                               1 + len(LIBRARY_PATTERNS))
        waiting = self._waiting = _Waiting(thread, request, asyncio.get_running_loop().create_future())
        try:
            await self._vm.request(CommandSet.THREAD_REFERENCE, 3, client.writer().object_id(thread).bytes(),
                                   "ThreadReference.Resume")
            try:
                events = await asyncio.wait_for(asyncio.shield(waiting.arrived), REENTER_S)
            except asyncio.TimeoutError as exc:
                await self._vm.request(CommandSet.THREAD_REFERENCE, 2, client.writer().object_id(thread).bytes(),
                                       "ThreadReference.Suspend")
                raise Unreentered(f"the call made again did not reach the method's first line within {REENTER_S:g} s "
                                  "(the thread is suspended where it was then)") from exc
        finally:
            self._waiting = None
            await self._vm.clear_request(EventKind.SINGLE_STEP, request)
        if any(event.suspend_policy == Suspend.ALL for event in events):
            await self._resume_others(thread)

    async def _resume_others(self, thread: int) -> None:
        """Undo the suspension of every thread by an event of the re-entry's (a breakpoint on the first line): the
        agent counts a suspension of all (new threads start suspended while it is on), so it is undone by
        ``VirtualMachine.Resume``, with ``thread`` suspended once more first to stay suspended."""
        await self._vm.request(CommandSet.THREAD_REFERENCE, 2, self._vm.client.writer().object_id(thread).bytes(),
                               "ThreadReference.Suspend")
        await self._vm.resume()


class Unreentered(Exception):
    """Why a frame was not re-entered (it keeps running its old code)."""
