"""A call trace under gdb: every call of the named functions, recorded by gdb's Python while the program runs.

``shims/gdb_calls.py`` is loaded into gdb the first time: a named function gets an internal breakpoint whose
``stop`` reads the arguments, the caller and the thread and sets a ``FinishBreakpoint`` on the call's frame,
whose own ``stop`` reads the return value; both answer False, so gdb resumes at once and MI reports no stop.
Each finished call comes back as one console line (``CALL_MARK`` and JSON), handed to the sink as it arrives.

With a depth, the shim also binds the program's own functions each recorded call calls directly, level by level,
as the calls are entered (``kit/nativecalls``: what the rows and notes say of them).

Names are gdb's linespecs: ``func``, ``file.c:func``, ``Class::method`` (``Class.method`` is read as it), a
Rust ``module::func``; one that binds nowhere (after the program's libraries loaded) is refused with the
closest names of the program's functions.
"""

from __future__ import annotations

import contextlib
import json

from polydbg.backends.gdb.commands import console, python_exec
from polydbg.backends.kit import shims
from polydbg.backends.kit.nativecalls import NAMES, callee_notes, closest_functions, linespec, record_of
from polydbg.backends.recording import CallSink, CallSpec
from polydbg.errors import AdapterError, UsageError
from polydbg.mi.client import MiClient

CALL_MARK = "<polydbg-call>"  # prefixes every finished call's line gdb prints
_SHIM = shims.source(__file__, "gdb_calls.py").replace("MARK", CALL_MARK)


class GdbCallTrace:
    """The ``Recorder`` of a call trace under gdb."""

    def __init__(self, client: MiClient, spec: CallSpec, sink: CallSink) -> None:
        self._client = client
        self.spec = spec
        self._sink = sink
        self._delivered = 0
        self._pointers: list[str] = []  # followed functions that call through pointers
        self.stopped = False

    async def arm(self) -> None:
        await self._client.command(console(python_exec(_SHIM.replace("POLYDBG_CHARS", str(self.spec.value_chars))
                                                       .replace("POLYDBG_DEPTH", str(self.spec.depth)))))
        names = [linespec(name) for name in self.spec.functions]
        result = await self._client.command(console(f"python _polydbg_calls.arm({json.dumps(names)})"))
        answer = json.loads(result.console.strip().splitlines()[-1])
        found = answer.get("found") or {}
        missing = [given for given, name in zip(self.spec.functions, names, strict=True) if not found.get(name)]
        if missing:
            await self._disarm()
            near = await closest_functions(answer.get("program"), missing[0])
            raise UsageError(f"no function {missing[0]} in the program" + (
                f"; the closest: {', '.join(near)}" if near else "") + f" ({NAMES})")

    def on_line(self, text: str) -> None:
        """One finished call as gdb printed it."""
        if self.stopped or self._delivered >= self.spec.max_calls:
            return
        record = record_of(text, self._pointers)
        if record is not None:
            self._sink(record)
            self._delivered += 1

    async def _disarm(self) -> None:
        await self._client.command(console("python _polydbg_calls.disarm()"))

    async def stop(self) -> list[str]:
        if self.stopped:
            return []
        self.stopped = True
        with contextlib.suppress(AdapterError):  # gdb has gone with the program
            await self._disarm()
        return callee_notes(self._pointers)

