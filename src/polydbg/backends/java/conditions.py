"""What a breakpoint hit does beyond stopping, decided by polydbg (JDWP has no conditions of its own):
a condition evaluated in the hit's frame, a logpoint's message with each ``{expression}`` in it (and a trace's
mark of the thread, ``TRACE_THREAD``, replaced by the hitting thread's name, asked once per thread).

The expressions are Java (the subset expr.py parses, run by evaluator.py); a condition or an
interpolation that does not parse refuses the breakpoint when it is set (``checks.problem``), so only a
failure at run time remains: a condition that cannot be evaluated stops, saying why (a broken condition must not
pass silently); an interpolation that fails reads ``<error: …>`` in the logged line.
"""

from __future__ import annotations

from collections.abc import Callable

from polydbg.backends.base import LOGPOINT, TRACE_THREAD, logpoint_line
from polydbg.backends.java.checks import INTERPOLATION
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import Vm
from polydbg.errors import AdapterRequestError, AdapterTimeoutError


def reason(exc: Exception) -> str:
    return exc.message if isinstance(exc, AdapterRequestError) else str(exc)


class Conditions:
    def __init__(self, vm: Vm, threads: Threads, output: Callable[[str, str], None]) -> None:
        self._vm = vm
        self._threads = threads
        self._output = output
        self._names: dict[int, str] = {}  # JDWP thread → its name, for a trace's rows

    async def holds(self, condition: str | None, thread: int) -> bool | str:
        """A condition's verdict at a hit on ``thread`` (True without one), or why it could not be evaluated."""
        if not condition:
            return True
        try:
            return await self._vm.evaluator.truth(condition, self._threads.scope(thread, 0, None))
        except (AdapterRequestError, AdapterTimeoutError) as exc:
            return f"its condition {condition.strip()!r} could not be evaluated: {reason(exc)}"

    async def log(self, message: str, thread: int) -> None:
        """A logpoint's line: each ``{expression}`` as Java's string conversion gives it."""
        evaluator = self._vm.evaluator
        scope = self._threads.scope(thread, 0, None)
        parts: list[str] = []
        last = 0
        name = await self._name(thread) if TRACE_THREAD in message else ""
        for match in INTERPOLATION.finditer(message):
            parts.append(message[last:match.start()].replace(TRACE_THREAD, name))
            try:
                found = await evaluator.evaluate(match.group(1), scope)
                parts.append(await evaluator.text_of(found, scope))
            except (AdapterRequestError, AdapterTimeoutError) as exc:
                parts.append(f"<error: {reason(exc)}>")
            last = match.end()
        parts.append(message[last:].replace(TRACE_THREAD, name))
        self._output(LOGPOINT, logpoint_line("".join(parts)))

    async def _name(self, thread: int) -> str:
        known = self._names.get(thread)
        if known is None:
            try:
                known = self._names[thread] = await self._threads.name(thread)
            except (AdapterRequestError, AdapterTimeoutError):
                return f"thread {self._threads.id_of(thread)}"
        return known
