"""Calls and raised exceptions recorded inside a Ruby program (``Backend.record_calls``, ``record_raised``).

rdbg evaluates only at a stop, and a breakpoint that stops per call costs a round trip each; so the recording is
Ruby's own ``TracePoint`` in the program (``shims/recorder.rb``), defined and armed by an evaluation at a stop (the
program's first line for ``debug_launch(trace=…)``, the stop it is at, or a stop made for it and resumed), and it
sends its records over a UNIX socket made here, as JSON lines in batches (256 records, or 50 ms after the last
batch, checked as records come; the rest at a disarm and at the program's end). Each line is a list of items:

- a call: ``[id, function, args, returned, raised, caller, thread, duration_us, depth, file, line, ended, seq]``;
- an exception: ``["r", id, type, message, file, line, function, thread, caught]``;
- the end of a recording: ``["done", id, {"bound", "never", "known"}]`` (its last items came before it).

What TracePoint gives and what it does not, on Ruby 3.1 (Debian's): ``:call``/``:return`` with the binding's
parameters and the return value (callees: only the methods of the program's own files, as Python leaves builtins
out; a gem's or Ruby's own method, and core's C methods, ``:c_call``, are neither recorded nor a level, so what one
calls back of the program's is one level below the recorded call); a call that ended by an exception
is told from one that returned ``nil`` by a ``:raise`` in it that no line ran after (the ``:line`` hook is on from
the first raise). Where an exception was rescued is the first line run after its raise, outside an ``ensure in``
frame (an ensure run on its way out): the rescue clause, where ``$!`` is the exception. A rescue with no line of
its own (an empty one, or a method in C) is said as such, before the next line run; the call it ended reads as
raised. Ruby 3.3's ``:rescue`` event is not used, so that 3.1 answers the same. An exception a library raised and
rescued inside itself is not the user's: left out.
"""

from __future__ import annotations

import asyncio
import difflib
import itertools
import json
import logging
import os
import re
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.kit import shims
from polydbg.backends.rdbg.ruby import literal
from polydbg.backends.recording import CallRecord, CallSink, CallSpec, RaisedRecord, RaisedSink
from polydbg.errors import AdapterError, UsageError

log = logging.getLogger(__name__)

DONE_S = 5.0  # for a recording's last items after its disarm (or the program's end)
LINE_LIMIT = 64 * 1024 * 1024  # one batch line
NEAR = 5
# file.rb:… then Module::Class#method, Class.method, Class::method or a bare method (an operator too)
NAME = re.compile(r"(?:[^\s:]+:(?!:))?(?:[A-Z]\w*(?:::[A-Z]\w*)*(?:#|\.|::))?"
                  r"(?:[A-Za-z_]\w*[?!=]?|\[\]=?|[-+*/%<>=!~^&|]{1,3}@?)")
Evaluate = Callable[[str], Awaitable[Any]]  # polydbg's Ruby at a stop, its JSON answer decoded


def source() -> str:
    """The Ruby that defines ``PolydbgRecorder`` in the program, once (evaluated at the top level)."""
    text = shims.path(__file__, "recorder.rb").read_text(encoding="utf-8")
    return f"::TOPLEVEL_BINDING.eval({literal(text)}, '(polydbg)') unless defined?(::PolydbgRecorder)\n"


class Channel:
    """The socket the program's recorder connects to (one program per session), and what comes over it."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self.path: str | None = None
        self._server: asyncio.AbstractServer | None = None
        self._calls: dict[int, CallSink] = {}
        self._raised: dict[int, RaisedSink] = {}
        self._done: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._connections = 0
        self.ended = asyncio.Event()  # every connection closed (the program ended, or its recorder broke)

    async def open(self) -> str:
        if self.path is None:
            self._dir = tempfile.mkdtemp(prefix="polydbg-rdbg-calls-")
            self.path = os.path.join(self._dir, "calls.sock")
            self._server = await asyncio.start_unix_server(self._accept, self.path, limit=LINE_LIMIT)
            os.chmod(self.path, 0o600)
        return self.path

    def register(self, calls: CallSink | None = None, raised: RaisedSink | None = None) -> int:
        number = next(self._ids)
        if calls is not None:
            self._calls[number] = calls
        if raised is not None:
            self._raised[number] = raised
        self._done[number] = asyncio.get_running_loop().create_future()
        return number

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections += 1
        self.ended.clear()
        try:
            while line := await reader.readline():
                for item in json.loads(line):
                    self._take(item)
        except (OSError, ValueError, asyncio.LimitOverrunError):
            log.debug("the Ruby program's recorder channel failed", exc_info=True)
        finally:
            writer.close()
            self._connections -= 1
            if not self._connections:
                self.ended.set()

    def _take(self, item: list[Any]) -> None:
        if item[0] == "done":
            done = self._done.get(item[1])
            if done is not None and not done.done():
                done.set_result(item[2] or {})
        elif item[0] == "r":
            sink = self._raised.get(item[1])
            if sink is not None:
                _, _, kind, message, file, line, function, thread, caught = item
                sink(RaisedRecord(kind, message, file, line, function, thread, caught))
        else:
            calls = self._calls.get(item[0])
            if calls is not None:
                _, function, args, returned, raised, caller, thread, duration, depth, file, line, ended, seq = item
                calls(CallRecord(function, tuple((name, value) for name, value in args), returned, raised, caller,
                                 thread, duration, depth, file, line, ended, seq))

    async def finished(self, number: int) -> dict[str, Any] | None:
        """The recording's last word once its items are all in; None if it never came (the program ended first,
        or its recorder could not write)."""
        done = self._done[number]
        ended: asyncio.Future[Any] = asyncio.ensure_future(self.ended.wait())
        try:
            await asyncio.wait([done, ended], timeout=DONE_S, return_when=asyncio.FIRST_COMPLETED)
        finally:
            ended.cancel()
        found = done.result() if done.done() else None
        self._calls.pop(number, None)
        self._raised.pop(number, None)
        self._done.pop(number, None)
        return found

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = self.path = None


def closest(name: str, known: list[str]) -> list[str]:
    """The program's methods named like ``name`` (by the whole name, then by the method's own)."""
    method = name.rsplit(":", 1)[-1].replace("::", ".")
    method = method.rsplit("#", 1)[-1].rsplit(".", 1)[-1]
    near = difflib.get_close_matches(name, known, n=NEAR, cutoff=0.6)
    by_method: dict[str, list[str]] = {}
    for full in known:
        by_method.setdefault(full.rsplit("#", 1)[-1].rsplit(".", 1)[-1], []).append(full)
    for found in difflib.get_close_matches(method, list(by_method), n=NEAR, cutoff=0.6):
        near += by_method[found]
    return list(dict.fromkeys(near))[:NEAR]


class Recording:
    """One recording in the program (calls, or the raised log): stopped by the session (``Recorder``)."""

    def __init__(self, channel: Channel, number: int, evaluate: Evaluate, program_gone: Callable[[], bool],
                 what: str, notes: list[str] | None = None) -> None:
        self._channel = channel
        self._number = number
        self._evaluate = evaluate
        self._gone = program_gone
        self._what = what
        self._notes = notes or []
        self._stopped = False

    async def stop(self) -> list[str]:
        if self._stopped:
            return []
        self._stopped = True
        notes = list(self._notes)
        if not self._gone():
            try:
                await self._evaluate(f"::PolydbgRecorder.disarm({self._number})")
            except (AdapterError, OSError) as exc:  # the program may end meanwhile: what came is kept
                log.debug("disarming the Ruby recorder failed", exc_info=True)
                if not self._gone():
                    notes.append(f"the program's recorder could not be stopped ({exc}): it records until the "
                                 "program ends")
        last = await self._channel.finished(self._number)
        if last is None:
            notes.append(f"the {self._what} may be missing its last records: the program's recorder did not "
                         "answer in time")
            return notes
        never = list(last.get("never") or [])
        if never:
            known = list(last.get("known") or [])
            notes.append("never called: " + "; ".join(
                name + (f" (closest: {', '.join(near)})" if (near := closest(name, known)) else "") for name in never))
        if last.get("bound"):
            notes.append("the program's recorder stopped at max_calls records")
        return notes


async def _armed(evaluate: Evaluate, call: str) -> Any:
    """The recorder defined in the program (once) and ``call`` made on it: its answer."""
    try:
        return await evaluate(f"{source()}::PolydbgRecorder.{call}")
    except AdapterError as exc:
        if "Errno::" not in str(exc):
            raise
        raise UsageError(f"the program's recorder could not reach polydbg's socket ({exc}): a program in another "
                         "container or on another machine cannot record calls; trace lines with "
                         "debug_trace(points=…)") from exc


async def record_calls(channel: Channel, spec: CallSpec, sink: CallSink, evaluate: Evaluate,
                       program_gone: Callable[[], bool]) -> Recording:
    """Arm the program's call recorder: a name that matches none of the program's methods but is close to some is
    refused with the closest (one like none may name code loaded later: noted if never called)."""
    bad = [name for name in spec.functions if not NAME.fullmatch(name)]
    if bad:
        raise UsageError(f"{', '.join(repr(name) for name in bad)}: not a Ruby method's name; write Class#method (an "
                         "instance method), Class.method (a class method), Module::Class#method, file.rb:method or "
                         "method (one defined at the top level)")
    path = await channel.open()
    number = channel.register(calls=sink)
    functions = ", ".join(literal(name) for name in spec.functions)
    answer = await _armed(evaluate, f"arm_calls({literal(path)}, {number}, [{functions}], {spec.depth}, "
                                    f"{spec.max_calls}, {spec.value_chars})")
    recording = Recording(channel, number, evaluate, program_gone, "call trace")
    known = list(answer.get("known") or [])
    slips = {name: near for name in answer.get("unmatched") or [] if (near := closest(name, known))}
    if slips:
        await recording.stop()
        raise UsageError("no method of the program is named " + "; ".join(
            f"{name} (closest: {', '.join(near)})" for name, near in slips.items())
            + "; name one as Class#method, Class.method, Module::Class#method, file.rb:method or method")
    return recording


async def record_raised(channel: Channel, sink: RaisedSink, evaluate: Evaluate,
                        program_gone: Callable[[], bool], value_chars: int = 200) -> Recording:
    path = await channel.open()
    number = channel.register(raised=sink)
    await _armed(evaluate, f"arm_raised({literal(path)}, {number}, {value_chars})")
    return Recording(channel, number, evaluate, program_gone, "log of raised exceptions")

