"""Steps: one ``SingleStep`` request at a time (line size, depth into/over/out), suspending the whole VM,
cleared when the step ends (at its stop, or any other stop first).

A step does not stop in the JDK's or Kotlin's runtime (``ClassExclude`` ``java.*``, ``javax.*``,
``jdk.*``, ``sun.*``, ``com.sun.*``, ``kotlin.*``). Kotlin's inline functions put their code into the
caller at lines past the caller's file's end (kotlin.py): a step that lands there, or in a synthetic
method without lines (``fun main()``'s bridge), steps on, and so does one that went through such code
and comes back to the line it began on in the same frame (``total = list.sumOf { it * 2 }``, once per
element) — as in an IDE.
"""

from __future__ import annotations

import contextlib

from polydbg.backends.base import StepKind
from polydbg.backends.java import kotlin
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import LIBRARY_PATTERNS, Vm
from polydbg.errors import AdapterTimeoutError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import EventKind, Location, Modifier, Suspend

STEP_EXCLUDES = LIBRARY_PATTERNS
SYNTHETIC = 0x1000
_DEPTH = {"into": 0, "over": 1, "out": 2}


class Stepping:
    def __init__(self, vm: Vm, threads: Threads) -> None:
        self._vm = vm
        self._threads = threads
        self._request: int | None = None  # the SingleStep request under way
        self._origin: kotlin.StepOrigin | None = None

    async def begin(self, thread: int, kind: StepKind) -> None:
        """Set the step's request (the caller resumes the VM)."""
        writer = self._vm.client.writer().u1(Modifier.STEP).object_id(thread).i4(1).i4(_DEPTH[kind])
        for pattern in STEP_EXCLUDES:
            writer.u1(Modifier.CLASS_EXCLUDE).string(pattern)
        await self.end()
        self._origin = await self._origin_of(thread)
        self._request = await self._vm.event_request(EventKind.SINGLE_STEP, Suspend.ALL, writer.bytes(),
                                                     1 + len(STEP_EXCLUDES))

    async def end(self) -> None:
        if self._request is not None:
            request, self._request = self._request, None
            await self._vm.clear_request(EventKind.SINGLE_STEP, request)

    async def steps_on(self, thread: int, where: Location | None) -> bool:
        """A step that landed in code a Kotlin inline function of another file put here, back on its first
        line through such code, or in a synthetic method without lines (kotlin.py): it steps on."""
        if where is None or not where.class_id:
            return False
        classes = self._vm.classes
        with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
            cls, method = await classes.method(where.class_id, where.method_id)
            if method is not None:
                await classes.lines(cls, method)
                line = method.line_at(where.code_index)
                origin = self._origin
                if line is None and method.modifiers & SYNTHETIC:  # no lines: `fun main()`'s bridge
                    return True
                if await classes.inlined(cls, line):
                    if origin is not None:
                        origin.through_inlined = True
                    return True
                if origin is not None and origin.through_inlined:
                    depth = len(await self._threads.frames(thread))
                    return origin.same_line(thread, depth, (where.class_id, where.method_id), line)
        return False

    async def _origin_of(self, thread: int) -> kotlin.StepOrigin | None:
        frames = await self._threads.frames(thread)
        if not frames:
            return None
        where = frames[0][1]
        with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
            cls, method = await self._vm.classes.method(where.class_id, where.method_id)
            if method is not None:
                await self._vm.classes.lines(cls, method)
                return kotlin.StepOrigin(thread, len(frames), (where.class_id, where.method_id),
                                         method.line_at(where.code_index))
        return None
