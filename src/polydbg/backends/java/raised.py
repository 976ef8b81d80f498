"""Every exception the program's code raises, recorded without stopping the agent (``Backend.record_raised``).

One ``Exception`` request for every throw, caught or not, suspending only the throwing thread: JDWP's event carries
the exception object, where it was thrown and where it will be caught (nothing when uncaught). A throw concerns
the program when its code throws or catches it (a JDK class loader's ClassNotFoundException, thrown and caught
inside the JDK, does not); it is recorded where the program's innermost frame is (Integer.parseInt's throw at the
program's call), with its message as ``getMessage()`` gives it (called on that thread, which the event suspended,
where the class overrides it) and the catching frame, then the thread goes on. Cost: the event, a few reads and a
resume on the throwing thread per throw (~1 ms); the JDK's own throws cost the event and a class lookup.
"""

from __future__ import annotations

import contextlib
import os

from polydbg.backends.base import Frame
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import Vm, is_library
from polydbg.backends.recording import RaisedRecord, RaisedSink
from polydbg.errors import AdapterRequestError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import Event, EventKind, Location, Modifier, Suspend

MESSAGE_CHARS = 200


class RaisedLog:
    """The armed log: ``record`` takes its events (``owns``), ``stop`` clears the request."""

    def __init__(self, vm: Vm, threads: Threads, sink: RaisedSink) -> None:
        self._vm = vm
        self._threads = threads
        self._sink = sink
        self.request = 0
        self._names: dict[int, str] = {}  # thread → its name

    async def arm(self) -> None:
        modifiers = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(True).boolean(
            True).bytes()
        self.request = await self._vm.event_request(EventKind.EXCEPTION, Suspend.EVENT_THREAD, modifiers, 1)

    async def stop(self) -> list[str]:
        request, self.request = self.request, 0
        if request:
            with contextlib.suppress(JdwpRequestError, AdapterRequestError, AdapterTimeoutError):
                await self._vm.clear_request(EventKind.EXCEPTION, request)
        return []

    async def record(self, event: Event) -> None:
        """One throw: recorded when it concerns the program (the thread is resumed by the caller)."""
        if event.exception is None or event.location is None:
            return
        try:
            thrown_in = await self._program_frame(event)
            catch = event.catch_location if event.catch_location is not None and event.catch_location.class_id \
                else None
            caught = await self._frame(catch) if catch is not None else None
            if thrown_in is None and (caught is None or caught[1]):
                return  # thrown and caught (or left uncaught) by the JDK's or a library's own code
            where = thrown_in or await self._frame(event.location)
            assert where is not None
            cls = await self._vm.values.class_of(int(event.exception.value))
            scope = self._threads.scope(event.thread, 0, None)
            message = await self._vm.evaluator.message(event.exception, cls, scope)
            self._sink(RaisedRecord(
                type=cls.name, message=(message or "")[:MESSAGE_CHARS], file=where[0].file, line=where[0].line,
                function=where[0].name, thread=await self._name(event.thread),
                caught=_at(caught[0]) if caught is not None else None))
        except (JdwpRequestError, AdapterRequestError, AdapterTimeoutError):
            return  # the thread or the object went away meanwhile

    async def _program_frame(self, event: Event) -> tuple[Frame, bool] | None:
        """The innermost frame of the program's code on the throwing thread (the throw's own, or its caller's)."""
        assert event.location is not None
        thrown = await self._frame(event.location)
        if thrown is not None and not thrown[1]:
            return thrown
        for _, where in await self._threads.frames(event.thread):
            found = await self._frame(where)
            if found is not None and not found[1]:
                return found
        return None

    async def _frame(self, where: Location) -> tuple[Frame, bool] | None:
        """The frame at ``where`` and whether it is a library's (the JDK's, a test framework's)."""
        if not where.class_id:
            return None
        cls = await self._vm.classes.get(where.class_id)
        return await self._threads.describe(where), is_library(cls.name)

    async def _name(self, thread: int) -> str:
        if thread not in self._names:
            self._names[thread] = await self._threads.name(thread)
        return self._names[thread]


def _at(frame: Frame) -> str:
    return f"{frame.name} ({os.path.basename(frame.file) if frame.file else '?'}:{frame.line})"
