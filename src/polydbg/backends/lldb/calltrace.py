"""A call trace under lldb-dap: every call of the named functions, recorded by lldb's own Python as the program runs.

``shims/lldb_calls.py`` is imported into lldb-dap's lldb (``command script import``): breakpoints whose callbacks
read a call at its entry and at each ``ret`` instruction of the function, and answer False, so the program runs
on and lldb-dap reports no stop. The finished calls are appended to a file as JSON lines (lldb's own output would
reach the agent as console text), read here every ``POLL_S`` and at the end, and handed to the sink.

With a depth, the shim also binds the program's own functions each recorded call calls directly, level by level,
as the calls are entered (``kit/nativecalls``: what the rows and notes say of them).

Names: ``func``, ``file.c:func``, ``Class::method`` (``Class.method`` is read as it), a Rust ``module::func``;
one that binds nowhere is refused with the closest names of the program's functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
from collections.abc import Awaitable, Callable

from polydbg.backends.kit import shims
from polydbg.backends.kit.nativecalls import NAMES, callee_notes, closest_functions, linespec, record_of
from polydbg.backends.recording import CallSink, CallSpec
from polydbg.errors import AdapterError, UsageError

POLL_S = 0.05
Command = Callable[[str], Awaitable[str]]


class LldbCallTrace:
    """The ``Recorder`` of a call trace under lldb-dap."""

    def __init__(self, command: Command, spec: CallSpec, sink: CallSink) -> None:
        self._command = command
        self.spec = spec
        self._sink = sink
        handle, self._path = tempfile.mkstemp(prefix="polydbg-calls-", suffix=".jsonl")
        os.close(handle)
        self._offset = 0
        self._partial = ""
        self._delivered = 0
        self._pointers: list[str] = []  # followed functions that call through pointers
        self._armed: dict[str, int] | None = None  # each name's functions found, as the shim wrote them
        self._reader: asyncio.Task[None] | None = None
        self.stopped = False

    async def arm(self, program: str | None) -> None:
        shim = shims.path(__file__, "lldb_calls.py")
        await self._command(f"command script import {json.dumps(str(shim))}")
        names = [linespec(name) for name in self.spec.functions]
        answer = await self._command(f"script lldb_calls.arm(lldb.target, {json.dumps(names)}, "
                                     f"{json.dumps(self._path)}, {self.spec.value_chars}, {self.spec.depth})")
        self._read()  # the shim's answer is its file's line (lldb's output would be the program's)
        found = self._armed
        if found is None:
            raise AdapterError(f"lldb could not set the call trace's breakpoints: {answer.strip()[:300]}")
        missing = [given for given, name in zip(self.spec.functions, names, strict=True) if not found.get(name)]
        if missing:
            await self.stop()
            near = await closest_functions(program, missing[0])
            raise UsageError(f"no function {missing[0]} in the program" + (
                f"; the closest: {', '.join(near)}" if near else "") + f" ({NAMES})")
        self._reader = asyncio.ensure_future(self._poll())

    async def _poll(self) -> None:
        while not self.stopped:
            self._read()
            await asyncio.sleep(POLL_S)

    def _read(self) -> None:
        try:
            with open(self._path, encoding="utf-8", errors="replace") as handle:
                handle.seek(self._offset)
                text = handle.read()
                self._offset = handle.tell()
        except OSError:
            return
        *lines, self._partial = (self._partial + text).split("\n")
        for line in lines:
            if line.startswith('{"armed": '):
                self._armed = json.loads(line)["armed"]
                continue
            if self._delivered >= self.spec.max_calls:
                return
            record = record_of(line, self._pointers)
            if record is not None:
                self._sink(record)
                self._delivered += 1

    async def stop(self) -> list[str]:
        if self.stopped:
            return []
        self.stopped = True
        if self._reader is not None:
            self._reader.cancel()
        with contextlib.suppress(AdapterError):
            await self._command("script lldb_calls.disarm(lldb.target)")
        self._read()
        with contextlib.suppress(OSError):
            os.unlink(self._path)
        return callee_notes(self._pointers)
