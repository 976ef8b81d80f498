"""Exceptions: which throws stop (the ``raised`` and ``uncaught`` filters), and what an exception stop
says about its exception.

- Filters: ``uncaught`` is an ``Exception`` request for uncaught throws; ``raised`` adds one for caught
  throws, of which those the JDK (or Kotlin's runtime) throws and catches itself — a class loader's
  ``ClassNotFoundException`` at every class it looks for — are resumed without a stop: a caught throw
  is the program's when its code throws or catches it.
- Detail: the exception's class and message. The message is its ``detailMessage`` field; when that is
  null, ``getMessage()`` is called (an override computes it) on the thread stopped at the exception
  event — not after debug_pause, when JDWP allows no calls — and remembered for that exception.
"""

from __future__ import annotations

import contextlib

from polydbg.backends.base import ExceptionDetail
from polydbg.backends.java.classes import JavaClass
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import LIBRARY_PACKAGES, Vm
from polydbg.errors import AdapterRequestError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import Event, EventKind, Modifier, Suspend, Value


class Exceptions:
    def __init__(self, vm: Vm, threads: Threads) -> None:
        self._vm = vm
        self._threads = threads
        self._requests: list[int] = []
        self._caught_request: int | None = None
        self._computed_messages: dict[int, str | None] = {}  # exception object id → its getMessage()

    async def set_filters(self, filters: list[str]) -> None:
        for request in self._requests:
            await self._vm.clear_request(EventKind.EXCEPTION, request)
        self._requests = []
        if "raised" in filters:  # caught throws: those the JDK throws and catches itself are resumed (stops_at)
            writer = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(True).boolean(
                False)
            self._caught_request = await self._vm.event_request(EventKind.EXCEPTION, Suspend.ALL, writer.bytes(), 1)
            self._requests.append(self._caught_request)
        if "uncaught" in filters or "raised" in filters:
            writer = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(False).boolean(
                True)
            self._requests.append(await self._vm.event_request(EventKind.EXCEPTION, Suspend.ALL, writer.bytes(), 1))

    async def stops_at(self, event: Event) -> bool:
        """Whether an exception event is a stop (a caught throw only when it concerns the program)."""
        return event.request_id != self._caught_request or await self._ours(event)

    async def _ours(self, event: Event) -> bool:
        """A caught exception concerns the program when its code throws or catches it (a JDK class
        loader throwing and catching ClassNotFoundException does not)."""
        for where in (event.location, event.catch_location):
            if where is not None and where.class_id:
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    if not (await self._vm.classes.get(where.class_id)).name.startswith(LIBRARY_PACKAGES):
                        return True
        return False

    async def detail(self) -> ExceptionDetail | None:
        """The class and message of the exception the program is stopped at (None: not at one)."""
        exception = self._threads.stop.exception
        if exception is None or not exception.value:
            return None
        values = self._vm.values
        cls = await values.class_of(int(exception.value))
        message = await self._field(exception, "detailMessage")
        text = await values.string(int(message.value)) if message is not None and message.value else None
        if text is None:
            key = int(exception.value)
            if key not in self._computed_messages:
                self._computed_messages = {key: await self._computed_message(exception, cls)}
            text = self._computed_messages[key]
        return ExceptionDetail(cls.name, "null" if text is None else text)

    async def _field(self, value: Value, name: str) -> Value | None:
        if not value.is_object or not value.value:
            return None
        cls = await self._vm.values.class_of(int(value.value))
        for candidate in await self._vm.classes.fields(cls):
            if candidate.name == name:
                if candidate.is_static:
                    return (await self._vm.values.static_values(cls.id, [candidate.id]))[0]
                return (await self._vm.values.field_values(int(value.value), [candidate.id]))[0]
        return None

    async def _computed_message(self, exception: Value, cls: JavaClass) -> str | None:
        """``getMessage()`` of an exception whose ``detailMessage`` is null, called on the thread stopped
        at the exception event (not after debug_pause: no calls then)."""
        stop = self._threads.stop
        if stop.thread is None or stop.paused:
            return None
        scope = self._threads.scope(stop.thread, 0, None)
        try:
            return await self._vm.evaluator.overridden_message(exception, cls, scope)
        except AdapterRequestError:
            return None
