"""The JVM's threads and their frames as the agent sees them, and the stop being shown.

- Ids: JDWP thread ids are object ids (large, reused after a collection); polydbg numbers the threads
  1, 2, 3 … in the order it first meets them, for the session's life.
- Which threads are the JVM's own: those outside the ``main`` thread group, which every thread the
  program starts (in any group of its own) descends from — and ``DestroyJavaVM``, which is in ``main``
  but only waits for the program's end. One walk of the thread groups from the top tells it for every
  thread (a JVM with 5,000 threads: a few requests, not 5,000); every thread's name and state are
  asked together, under one wait. A listing shows the program's threads first, with their state
  (``ThreadReference.Status``), then the JVM's own marked ``system``.
- Frames: ``ThreadReference.Frames`` is read once per thread per stop (error 13, not suspended, is a
  thread started after the stop: no frames); the threads asked for at one moment are read together,
  under one wait. Leading frames in the JDK or a test framework (an exception thrown inside it, a
  failed assertion) are hidden when the program's code is below (listed above it by ``above``), and
  the lambdas' generated classes between a caller and the lambda's body (``Foo$$Lambda$14.run``, no
  source) are left out. An invoke runs the thread, which invalidates its frame ids: they are forgotten
  and found again by (thread, shown index) (scope.py).
- The current stop (``CurrentStop``): the thread, whether debug_pause made it (no method calls then:
  JDWP invokes only on a thread suspended by an event), the exception of an exception stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from polydbg.backends.base import Frame, FrameRef, Thread
from polydbg.backends.java.calls import Calls
from polydbg.backends.java.classes import short_name
from polydbg.backends.java.scope import StoppedFrame
from polydbg.backends.java.sources import Sources
from polydbg.backends.java.vm import LIBRARY_PACKAGES, Vm, is_library
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.frames import leading
from polydbg.errors import AdapterRequestError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Location, Reader, Value

# ThreadReference.Status: what a thread was doing when the JVM suspended it
THREAD_STATES = {0: "ended", 1: "running", 2: "sleeping", 3: "blocked on a monitor", 4: "waiting", 5: "not started"}
JVM_THREADS = frozenset({"DestroyJavaVM"})  # the JVM's, though in the main group (it waits for the program's end)
THREAD_NOT_SUSPENDED = 13


@dataclass
class CurrentStop:
    """The stop shown to the agent: execution state, apart from the backend's lifecycle."""

    thread: int | None = None  # the stopped thread's JDWP id; None while the program runs
    name: str | None = None  # its name, when it is not ``main`` (a stop elsewhere names its thread)
    paused: bool = False  # the stop is debug_pause's (no method calls then)
    exception: Value | None = None  # the exception of an exception stop
    reported: bool = False  # the session was told of it (resuming then reports "continued")

    def clear(self) -> bool:
        """The program moves on; whether a reported stop ended."""
        reported = self.reported
        self.thread, self.name, self.paused, self.exception, self.reported = None, None, False, None, False
        return reported


def thread_label(name: str, system: bool, state: object, stopped: bool) -> str:
    """``worker (sleeping)``, ``Finalizer (system, waiting)``, ``main (stopped here)``."""
    label = "stopped here" if stopped else (state if isinstance(state, str) else "state unknown")
    return f"{name} ({'system, ' if system else ''}{label})"


def pause_rank(name: str, state: object, runs_program_code: bool) -> int:
    """How a thread ranks for the stop a pause shows (lowest first): running the program's code, then
    waiting with the program's code on its stack, then the rest — ``main`` first within each."""
    main = 0 if name == "main" else 1
    if runs_program_code:
        return (0 if state == "running" else 2) + main
    return 4 + main


class Threads:
    def __init__(self, vm: Vm, sources: Sources) -> None:
        self._vm = vm
        self._sources = sources
        self.stop = CurrentStop()
        self._ids: dict[int, int] = {}  # JDWP thread id → polydbg's
        self._jdwp: dict[int, int] = {}  # polydbg's → JDWP
        self._system: dict[int, bool] = {}  # JDWP thread → whether it is the JVM's own
        self._groups: dict[int, asyncio.Future[tuple[str, int]]] = {}  # JDWP thread group → (name, parent)
        self._frames: dict[int, list[tuple[int, Location]]] = {}  # JDWP thread → (frame id, location)
        self._asking: dict[int, asyncio.Future[list[tuple[int, Location]]]] = {}  # frames being read, by thread
        self._batch: list[int] = []  # threads whose frames the next read asks for
        self._reads: set[asyncio.Task[None]] = set()
        self._hidden: dict[int, int] = {}  # JDWP thread → leading frames hidden
        self._statuses: dict[int, int] = {}  # JDWP thread → its ThreadReference.Status at this stop
        self._names: dict[int, str] = {}  # JDWP thread → its name at this stop
        self._listed_at = (-1, -1)  # (the program's run, evaluations' calls) the two were read at
        self._invoking: set[int] = set()  # threads running a method for an evaluation
        self.invokes = 0  # methods evaluations called: each ran the program's code (it may have taken a lock)
        self.calls = Calls(lambda: self._vm.client, self._call_returned)  # those running past their deadline

    # -- ids ------------------------------------------------------------------------------------------

    def id_of(self, jdwp: int) -> int:
        known = self._ids.get(jdwp)
        if known is None:
            known = self._ids[jdwp] = len(self._ids) + 1
            self._jdwp[known] = jdwp
        return known

    def jdwp(self, thread_id: int | None) -> int:
        """The JDWP id of polydbg's thread ``thread_id`` (None: the stopped thread)."""
        if thread_id is None:
            if self.stop.thread is None:
                raise AdapterRequestError("thread", "no thread is stopped")
            return self.stop.thread
        jdwp = self._jdwp.get(thread_id)
        if jdwp is None:
            raise AdapterRequestError("thread", f"no thread {thread_id}; debug_stack(all_threads=true) lists them")
        return jdwp

    def known(self, thread_id: int) -> int | None:
        """The JDWP id of polydbg's thread ``thread_id``, None for an id never given."""
        return self._jdwp.get(thread_id)

    def shown_id(self, jdwp: int) -> int | None:
        """polydbg's id of JDWP thread ``jdwp``, None when it was never listed (an object that is no thread)."""
        return self._ids.get(jdwp)

    def is_jvm_thread(self, jdwp: int) -> bool:
        """Whether a listed thread is the JVM's own (``system``)."""
        return self._system.get(jdwp, False)

    def status(self, jdwp: int) -> int | None:
        """The thread's ``ThreadReference.Status`` at this stop, when a listing asked it."""
        return self._statuses.get(jdwp)

    def statuses(self) -> dict[int, int]:
        """Every listed thread's status at this stop (JDWP thread → ``ThreadReference.Status``)."""
        return dict(self._statuses)

    # -- the threads ----------------------------------------------------------------------------------

    async def all(self, with_states: bool = False) -> list[tuple[int, str, bool, object]]:
        """(JDWP id, name, is the JVM's own, its state when asked) of the live threads: the program's
        first, in start order, then the JVM's own (Reference Handler, Signal Dispatcher, Common-Cleaner …).
        Whose each thread is comes from one walk of the thread groups; names and states are asked
        together, every thread's at once, and once a stop (a pause ranks the threads, its report lists
        them: 5,000 names cost 1.7 s)."""
        reply = await self._vm.request(CommandSet.VM, 4, b"", "VirtualMachine.AllThreads")
        ids = [reply.object_id() for _ in range(reply.i4())]
        if any(thread not in self._system for thread in ids):
            with contextlib.suppress(JdwpRequestError):  # (a thread the walk missed asks for its own group)
                await self._walk_groups()
        stopped = self.stop.thread is not None or self.stop.paused
        if not stopped or self._listed_at != (self.calls.run, self.invokes):  # (running, they change)
            self._names.clear()
            self._statuses.clear()
            self._listed_at = (self.calls.run, self.invokes) if stopped else (-1, -1)
        writer = self._vm.client.writer
        unnamed = [t for t in ids if t not in self._names]
        unknown = [t for t in ids if t not in self._statuses] if with_states else []
        asked = [(CommandSet.THREAD_REFERENCE, 1, writer().object_id(t).bytes()) for t in unnamed]
        asked += [(CommandSet.THREAD_REFERENCE, 4, writer().object_id(t).bytes()) for t in unknown]
        answers = await self._vm.client.request_all(asked, "ThreadReference.Name/Status", timeouts.INSPECT_S)
        failed: dict[int, object] = {}
        for thread, answer in zip(unnamed, answers, strict=False):
            if isinstance(answer, Reader):
                self._names[thread] = answer.string()
        for thread, answer in zip(unknown, answers[len(unnamed):], strict=True):
            if isinstance(answer, Reader):
                self._statuses[thread] = answer.i4()
            else:
                failed[thread] = answer
        states: list[object] = [THREAD_STATES.get(self._statuses[t], "state unknown") if t in self._statuses
                                else failed.get(t) for t in ids] if with_states else [None] * len(ids)
        names = [self._names.get(t, "?") for t in ids]
        system = await asyncio.gather(*(self._is_system(t) for t in ids), return_exceptions=True)
        found = [(t, n, s is True or n in JVM_THREADS, state)
                 for t, n, state, s in zip(ids, names, states, system, strict=True)]
        return sorted(found, key=lambda thread: thread[2])  # stable: start order within each part

    async def listing(self) -> list[Thread]:
        """Every live thread with its state, ``worker (sleeping)``: the program's threads first, then
        the JVM's own, marked ``system``; the thread of the stop is ``stopped here``."""
        return [Thread(self.id_of(jdwp), self._label(jdwp, name, system, state))
                for jdwp, name, system, state in await self.all(with_states=True)]

    def _label(self, thread: int, name: str, system: bool, state: object) -> str:
        label = thread_label(name, system, state, thread == self.stop.thread)
        call = self.calls.running(thread)
        return f"{label[:-1]}; running {call.label}, called by an evaluation)" if call is not None else label

    async def name(self, thread: int) -> str:
        reply = await self._vm.request(CommandSet.THREAD_REFERENCE, 1, self._vm.client.writer().object_id(
            thread).bytes(), "ThreadReference.Name")
        return reply.string()

    async def state(self, thread: int) -> str:
        """What the thread was doing when the JVM suspended it (or does now, while it runs)."""
        reply = await self._vm.request(CommandSet.THREAD_REFERENCE, 4, self._vm.client.writer().object_id(
            thread).bytes(), "ThreadReference.Status")
        return THREAD_STATES.get(reply.i4(), "state unknown")

    async def _walk_groups(self) -> None:
        """Whose every thread is, at once: the thread groups walked from the top, each asked for its
        threads (a few requests, where asking each thread for its group costs one per thread)."""
        top = await self._vm.request(CommandSet.VM, 5, b"", "VirtualMachine.TopLevelThreadGroups")
        pending = [(top.object_id(), False) for _ in range(top.i4())]
        while pending:
            group, in_main = pending.pop()
            in_main = in_main or (await self._group(group))[0] == "main"
            reply = await self._vm.request(CommandSet.THREAD_GROUP_REFERENCE, 3, self._vm.client.writer().object_id(
                group).bytes(), "ThreadGroupReference.Children")
            for _ in range(reply.i4()):
                self._system[reply.object_id()] = not in_main
            pending += [(reply.object_id(), in_main) for _ in range(reply.i4())]

    async def _is_system(self, thread: int) -> bool:
        """Whether the thread is the JVM's own: outside the ``main`` thread group."""
        known = self._system.get(thread)
        if known is None:
            reply = await self._vm.request(CommandSet.THREAD_REFERENCE, 5, self._vm.client.writer().object_id(
                thread).bytes(), "ThreadReference.ThreadGroup")
            group = reply.object_id()
            if not group:  # ended: no group any more
                return False
            known = True
            while group:
                name, group = await self._group(group)
                if name == "main":
                    known = False
                    break
            self._system[thread] = known
        return known

    async def _group(self, group: int) -> tuple[str, int]:
        """A thread group's name and parent (0 for the top one), asked once however many threads ask."""
        known = self._groups.get(group)
        if known is None:
            known = self._groups[group] = asyncio.ensure_future(self._read_group(group))
            known.add_done_callback(lambda done: done.exception() and self._groups.pop(group, None))
        return await asyncio.shield(known)

    async def _read_group(self, group: int) -> tuple[str, int]:
        writer = self._vm.client.writer().object_id(group)
        name = (await self._vm.request(CommandSet.THREAD_GROUP_REFERENCE, 1, writer.bytes(),
                                       "ThreadGroupReference.Name")).string()
        parent = (await self._vm.request(CommandSet.THREAD_GROUP_REFERENCE, 2, writer.bytes(),
                                         "ThreadGroupReference.Parent")).object_id()
        return name, parent

    async def pause_thread(self) -> int:
        """The thread a pause shows, the way a busy program is found busy (``pause_rank``); the JVM's own
        threads are never picked over the program's."""
        threads = await self.all(with_states=True)
        user = [(jdwp, name, state) for jdwp, name, system, state in threads if not system]
        programs = await asyncio.gather(*(self._runs_program_code(jdwp) for jdwp, _, _ in user))  # frames read at once
        ranked = [(pause_rank(name, state, program), position, jdwp)
                  for position, ((jdwp, name, state), program) in enumerate(zip(user, programs, strict=True))]
        return min(ranked)[2] if ranked else threads[0][0]

    async def _runs_program_code(self, thread: int) -> bool:
        for _, where in await self.frames(thread):
            if not (await self._vm.classes.get(where.class_id)).name.startswith(LIBRARY_PACKAGES):
                return True
        return False

    # -- the stop -------------------------------------------------------------------------------------

    async def stopped_at(self, thread: int) -> None:
        """The stop shown is on ``thread``: its name, and its runtime frames hidden."""
        self.stop.thread = thread
        try:
            name: str | None = self._names.get(thread) or await self.name(thread)  # (a pause's ranking read it)
        except JdwpRequestError:
            name = None
        self.stop.name = None if name == "main" else name
        frames = await self.frames(thread)
        names = [(await self._vm.classes.get(where.class_id)).name for _, where in frames]
        self._hidden[thread] = leading(names, is_library)

    def read_frames(self, thread: int) -> list[tuple[int, Location]] | None:
        """The thread's frames when they were read at this stop already (None: not yet)."""
        return self._frames.get(thread)

    def forget_frames(self, thread: int | None = None) -> None:
        """A thread's frames (every thread's, for None: the program is resumed) are stale: it ran."""
        if thread is None:
            self._frames.clear()
            self._hidden.clear()
            self._statuses.clear()
            self.calls.run += 1
        else:
            self._frames.pop(thread, None)

    def is_invoking(self, thread: int) -> bool:
        """Whether ``thread`` runs a method for an evaluation (its events are not stops)."""
        return thread in self._invoking

    def scope(self, thread: int, index: int, refusal: str | None) -> StoppedFrame:
        """Frame ``index`` of ``thread`` as the evaluator sees it (``refusal``: why no method may be called)."""
        thrown = self.stop.exception if thread == self.stop.thread else None
        return StoppedFrame(self._vm.client, self._vm.classes, self._frame_of, thread, index, refusal,
                            self.forget_frames, self._invoke, thrown)

    async def _invoke(self, thread: int, reply: asyncio.Future[bytes], label: str,
                      after: Callable[[], Awaitable[None]]) -> bytes:
        """An invoke's reply; its thread's events meanwhile are the call's (calls.py: one past its deadline)."""
        self._invoking.add(thread)
        self.invokes += 1
        frames = self._frames.pop(thread, None) or []  # their ids die as the thread runs; where they are does not
        try:
            return await self.calls.call(thread, reply, label, f"thread {self.id_of(thread)}", frames, after)
        finally:
            if self.calls.running(thread) is None:
                self._invoking.discard(thread)

    def _call_returned(self, thread: int) -> None:
        """A call left running returned: the thread is stopped again, its frames to be read anew."""
        self._invoking.discard(thread)
        self._frames.pop(thread, None)

    # -- frames ---------------------------------------------------------------------------------------

    async def frames(self, thread: int) -> list[tuple[int, Location]]:
        """Every frame of ``thread`` (frame id, location), hidden ones too; none while it runs (those it
        had when an evaluation's call left it running: their locations, not their ids, hold)."""
        call = self.calls.running(thread)
        if call is not None:
            return call.frames
        frames = self._frames.get(thread)
        if frames is not None:
            return frames
        asking = self._asking.get(thread)
        if asking is None:  # read with the other threads asked for at this moment
            asking = self._asking[thread] = asyncio.get_running_loop().create_future()
            asking.add_done_callback(lambda done: done.cancelled() or done.exception())
            self._batch.append(thread)
            if len(self._batch) == 1:
                asyncio.get_running_loop().call_soon(self._read_batch)
        return await asyncio.shield(asking)

    def _read_batch(self) -> None:
        batch, self._batch = self._batch, []
        task = asyncio.get_running_loop().create_task(self._read_frames(batch))
        self._reads.add(task)
        task.add_done_callback(self._reads.discard)

    async def _read_frames(self, threads: list[int]) -> None:
        """The frames of the threads asked for at one moment, under one wait (every thread's stack at
        once costs a request each, not a round trip each). A thread that runs (started after the stop:
        error 13) has none; frames read across a resume are not kept."""
        run = self.calls.run
        writer = self._vm.client.writer
        try:
            answers = await self._vm.client.request_all(
                [(CommandSet.THREAD_REFERENCE, 6, writer().object_id(t).i4(0).i4(-1).bytes()) for t in threads],
                "ThreadReference.Frames", timeouts.INSPECT_S)
        except Exception as exc:  # a lost connection, a deadline: every asker learns it
            for thread in threads:
                waiting = self._asking.pop(thread)
                if not waiting.done():
                    waiting.set_exception(exc)
            return
        for thread, answer in zip(threads, answers, strict=True):
            waiting = self._asking.pop(thread)
            if isinstance(answer, Reader):
                frames = [(answer.frame_id(), answer.location()) for _ in range(answer.i4())]
                if run == self.calls.run:
                    self._frames[thread] = frames
                if not waiting.done():
                    waiting.set_result(frames)
            elif waiting.done():
                continue
            elif answer.code == THREAD_NOT_SUSPENDED:
                waiting.set_result([])
            else:
                waiting.set_exception(answer)

    async def shown(self, thread: int) -> list[tuple[int, Location]]:
        """The frames from the first one shown, without the lambdas' generated classes below it."""
        frames = (await self.frames(thread))[self._hidden.get(thread, 0):]
        return frames[:1] + [frame for frame in frames[1:]
                             if "$$Lambda" not in (await self._vm.classes.get(frame[1].class_id)).signature]

    async def frame_at(self, frame: FrameRef) -> tuple[int, int, Location]:
        """(JDWP thread, frame id, location) of a shown frame."""
        thread = self.jdwp(frame.thread_id)
        call = self.calls.running(thread)
        if call is not None:
            raise AdapterRequestError("frame", call.still_running())
        shown = await self.shown(thread)
        if not 0 <= frame.index < len(shown):
            raise AdapterRequestError("frame", f"no frame {frame.index}; the stack has {len(shown)} frames")
        frame_id, where = shown[frame.index]
        return thread, frame_id, where

    async def _frame_of(self, thread: int, index: int) -> tuple[int, Location]:
        _, frame_id, where = await self.frame_at(FrameRef(self.id_of(thread), index))
        return frame_id, where

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        shown = await self.shown(self.jdwp(thread_id))
        return [await self.describe(where) for _, where in shown[start:start + levels]], len(shown)

    async def above(self, thread_id: int) -> list[Frame]:
        """The leading frames hidden above the first shown one, innermost first."""
        thread = self.jdwp(thread_id)
        hidden = self._hidden.get(thread, 0)
        return [await self.describe(where) for _, where in (await self.frames(thread))[:hidden]] if hidden else []

    async def describe(self, where: Location) -> Frame:
        """A location as a stack listing shows it: Class.method, its source file and line."""
        classes = self._vm.classes
        cls, method = await classes.method(where.class_id, where.method_id)
        line = None
        if method is not None:
            await classes.lines(cls, method)
            line = await classes.shown_line(cls, method.line_at(where.code_index))
        name = f"{short_name(cls.signature)}.{method.name if method else '?'}"
        return Frame(name, await self._sources.path(cls), line)
