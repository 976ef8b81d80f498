"""Calls recorded inside a Python program: the socket its recorder (``shims/calls.py``) connects to, and the
``Recorder`` the session stops.

The recorder starts with a launch that records calls from the first line (``LaunchSpec.recorded``: the debuggee
shim connects to a Unix socket made here, named by ``POLYDBG_CALLS``, taken out of the environment so child
processes do not connect) or, for a trace begun later, by an evaluation in a stopped thread (``loader``: the shim's
source travels in it, so an attached program records too, one attached by pid or through its debugpy listener). A
trace begun while the program runs starts it at a stop made for it and resumed, which the agent never sees
(``held``: a median 35 ms from the pause to the resume on 3.11, 60-75 ms on 3.12 and 3.13, on 2 cores; 200 ms
more when every thread waits in C and the probe is woken: ``bench/python_trace_running.py``). A program in a
container or on another machine cannot reach the socket: refused before anything runs (``unreachable``); one run by
another user is refused as its recorder fails to connect. Commands go one JSON line each (``arm``, ``stop``) through
a FIFO beside the socket, each answered by one line on the socket; records come back on it as JSON lists in
batches, and at the program's end with a last word on the functions never called. The program's side is one thread
pydevd does not trace, from the start (or the stop) until the trace stops (on 3.12 and later, until the program
ends: see the shim's ``_MONITORED``), which waits on the FIFO and sends the records every ``FLUSH_S`` (20 ms).

The recorder is in a program only once calls are recorded, never in every launched one. A profile hook in the
program costs far less than a stop per call: no round trip to the debugger, no suspension (``bench/call_trace.py``
measures it). (Stops after a recorded launch arrived 200 ms late: not the recorder's doing but pydevd waking another
thread than the one it resumed, which the debuggee shim corrects for every session: see ``shims/debuggee.py``.)

Every thread is recorded from the moment it is armed, a thread blocked in C code (a socket's accept, a lock) from its
next Python call: Python sets the profile function in all threads at once (3.12's
``threading.setprofile_all_threads``; before 3.12 the shim does what it does, through CPython's C API: see
``_all_threads`` in the shim). Where neither can (not CPython), a profile function is set in a thread by that thread:
the main thread as the program's code starts (a launch's trace), threads started later by ``threading``, and each
thread stopped when the trace began (an evaluation in its frame, which pydevd runs in that thread).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.base import Variable
from polydbg.backends.debugpy.python import python_error
from polydbg.backends.kit import shims
from polydbg.backends.recording import CallRecord, CallSink, CallSpec
from polydbg.errors import AdapterRequestError, UsageError

log = logging.getLogger(__name__)

ENV = "POLYDBG_CALLS"
CONNECT_S = 15.0  # from the launch to the recorder's connection: the interpreter starts first
ANSWER_S = 10.0
ENDED_S = 5.0  # after the program's end, its last records are waited for this long
LINE_LIMIT = 16 * 1024 * 1024  # one batch line of records
HERE = "__import__('_polydbg_calls').here()"
SHIM = "calls.py"
LOCAL = ("127.0.0.1", "localhost", "::1")


class CallChannel:
    """The socket one launched program's recorder connects to, and what comes back over it."""

    def __init__(self) -> None:
        self._dir: str | None = None
        self.path: str | None = None
        self._server: asyncio.AbstractServer | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._commands: int | None = None  # the FIFO's write end, once the program has connected
        self._connected = asyncio.Event()
        self.ended = asyncio.Event()  # the program's side closed: every record it sent has been read
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._sinks: dict[int, CallSink] = {}
        self.final: dict[int, dict[str, Any]] = {}  # the recorder's last word at the program's end
        self._ids = itertools.count(1)

    async def create(self) -> str:
        """A private socket for the next launch; its path for the program's environment."""
        await self.close()
        self._dir = tempfile.mkdtemp(prefix="polydbg-calls-")
        self.path = os.path.join(self._dir, "calls")
        os.mkfifo(os.path.join(self._dir, "commands"), 0o600)
        self._connected, self.ended = asyncio.Event(), asyncio.Event()
        self._server = await asyncio.start_unix_server(self._accept, self.path, limit=LINE_LIMIT)
        os.chmod(self.path, 0o600)
        return self.path

    async def created(self) -> str:
        """The socket's path: made now for a program running already (once)."""
        return self.path or await self.create()

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._writer is not None:  # one program per launch
            writer.close()
            return
        self._writer = writer
        with contextlib.suppress(OSError):  # the program opened its end before it connected
            self._commands = os.open(os.path.join(os.path.dirname(self.path or ""), "commands"),
                                     os.O_WRONLY | os.O_NONBLOCK)
        self._connected.set()
        try:
            while line := await reader.readline():
                self._take(line)
        except (OSError, ValueError, asyncio.LimitOverrunError):
            log.debug("the program's recorder channel failed", exc_info=True)
        finally:
            self.ended.set()
            for answer in self._answers.values():
                if not answer.done():
                    answer.set_exception(OSError("the program ended"))
            self._answers.clear()

    def _take(self, line: bytes) -> None:
        item = json.loads(line)
        if isinstance(item, list):
            sink = self._sinks.get(item[0])
            if sink is not None:
                sink(_record(item))
        elif "final" in item:
            self.final[item["final"]] = item
        else:
            answer = self._answers.pop(item.get("armed") or item.get("stopped") or 0, None)
            if answer is not None and not answer.done():
                answer.set_result(item)

    async def request(self, command: dict[str, Any]) -> dict[str, Any]:
        if not self._connected.is_set():
            try:
                await asyncio.wait_for(self._connected.wait(), CONNECT_S)
            except asyncio.TimeoutError as exc:
                raise UsageError(f"the program's call recorder did not connect within {CONNECT_S:g} s (a Python "
                                 "without polydbg's start-up code?); trace lines with debug_trace(points=…)") from exc
        if self._commands is None or self.ended.is_set():
            raise OSError("the program ended")
        answer = self._answers[command["id"]] = asyncio.get_running_loop().create_future()
        os.write(self._commands, json.dumps(command).encode() + b"\n")  # a few hundred bytes: a pipe takes 64 KiB
        return await asyncio.wait_for(answer, ANSWER_S)

    async def arm(self, spec: CallSpec, sink: CallSink) -> tuple[int, dict[str, Any]]:
        number = next(self._ids)
        self._sinks[number] = sink
        answer = await self.request({"op": "arm", "id": number, "functions": list(spec.functions),
                                     "depth": spec.depth, "max": spec.max_calls, "chars": spec.value_chars})
        return number, answer

    async def disarm(self, number: int, functions: tuple[str, ...]) -> dict[str, Any]:
        """Stop recording ``number``: its pending records and the calls still open arrive before the answer; after
        the program's end, its last records (and its last word, if any) are waited for instead."""
        try:
            if self.ended.is_set() or self._commands is None:
                raise OSError("the program ended")
            return await self.request({"op": "stop", "id": number, "functions": list(functions)})
        except (OSError, asyncio.TimeoutError):
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.ended.wait(), ENDED_S)
            return self.final.get(number, {})
        finally:
            self._sinks.pop(number, None)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._commands is not None:
            with contextlib.suppress(OSError):
                os.close(self._commands)
            self._commands = None
        if self._dir is not None:  # the socket with it
            shutil.rmtree(self._dir, ignore_errors=True)
        self._dir = self.path = None


def unreachable(in_container: bool, address: tuple[str, int] | None) -> None:
    """Refused before anything runs: a program whose recorder cannot reach this machine's socket."""
    where = ("in a container" if in_container else f"at {address[0]}" if address is not None
             and address[0] not in LOCAL else None)
    if where is not None:
        raise UsageError(f"calls are recorded through a socket on this machine, which a program {where} cannot reach "
                         "(its recorder would connect from there); trace lines with debug_trace(points=…), or stop "
                         "at a breakpoint in the function")


def loader(path: str) -> str:
    """The statement that starts the recorder in the program, connected to ``path`` (its source sent along: an
    attached program has none of polydbg's files); at a later trace, its thread started again."""
    code = ("import sys, types, atexit\n"
            "m = sys.modules.get('_polydbg_calls')\n"
            "if m is None:\n"
            "    m = types.ModuleType('_polydbg_calls'); m.__file__ = FILE\n"
            "    exec(compile(SOURCE, FILE, 'exec'), m.__dict__)\n"
            "    m._started = True; m.start(PATH); sys.modules['_polydbg_calls'] = m; atexit.register(m.drain)\n"
            "else:\n"
            "    m.serve()\n")
    names = {"SOURCE": shims.source(__file__, SHIM), "FILE": str(shims.path(__file__, SHIM)), "PATH": path}
    return f"exec({code!r}, {names!r}) or 'recording'"


async def start(evaluate: Callable[[str], Awaitable[Variable | None]], path: str) -> None:
    """The recorder started in the program by ``evaluate`` (in the stopped thread's frame); refused, saying why, when
    it cannot reach ``path`` (another machine, container or user: the socket's folder is polydbg's own)."""
    try:
        started = await evaluate(loader(path))
    except AdapterRequestError as exc:
        raise UsageError(f"the program's call recorder could not start: {python_error(exc.message)}. A program in "
                         "another container, on another machine or run by another user cannot reach polydbg's "
                         "socket; trace lines with debug_trace(points=…)") from exc
    if started is None:
        raise UsageError("no thread of the program is stopped in Python code to start the call recorder in; "
                         "debug_continue to a breakpoint, then debug_trace(functions=…)")


def _record(item: list[Any]) -> CallRecord:
    _, function, args, returned, raised, caller, thread, duration, depth, file, line, ended, started = item
    return CallRecord(function=function, args=tuple((name, value) for name, value in args), returned=returned,
                      raised=raised, caller=caller, thread=thread, duration_us=duration, depth=depth, file=file,
                      line=line, ended=ended, started=started)


def unknown_text(closest: dict[str, list[str]]) -> str:
    return "; ".join(f"{name}" + (f" (closest: {', '.join(near)})" if near else "") for name, near in closest.items())


class CallRecorder:
    """One recording: stopped by the session (``backends/recording.Recorder``)."""

    def __init__(self, channel: CallChannel, number: int, spec: CallSpec, notes: list[str]) -> None:
        self._channel = channel
        self._number = number
        self._spec = spec
        self._notes = notes
        self._stopped = False

    async def stop(self) -> list[str]:
        if self._stopped:
            return []
        self._stopped = True
        answer = await self._channel.disarm(self._number, self._spec.functions)
        notes = list(self._notes)
        closest = answer.get("closest") or {}
        if closest:
            notes.append(f"never called: {unknown_text(closest)}")
        if answer.get("bound"):
            notes.append(f"the program's recorder stopped at {self._spec.max_calls} calls")
        return notes


async def record_calls(channel: CallChannel, spec: CallSpec, sink: CallSink,
                       each_stopped_thread: Callable[[str], Awaitable[int]]) -> CallRecorder:
    """Arm the program's recorder: a name that matches none of the program's functions once its code runs, but is
    close to some, is refused with the closest names; where Python cannot set a profile function in every thread, the
    threads stopped now are armed by an evaluation in each (``each_stopped_thread``)."""
    number, answer = await channel.arm(spec, sink)
    closest = {name: near for name, near in (answer.get("closest") or {}).items() if near}
    if closest:  # a name like one the program has: a slip (one like none may name code loaded later)
        await channel.disarm(number, spec.functions)
        raise UsageError(f"no function of the program is named {unknown_text(closest)}; pass a name as "
                         "func, module.func, Class.method or file.py:func")
    notes = []
    if answer.get("started") and not answer.get("everywhere"):
        await each_stopped_thread(HERE)
        notes.append("this Python sets a profile function in a thread only from that thread: the threads not stopped "
                     "when the trace began (blocked in C code) were not recorded")
    return CallRecorder(channel, number, spec, notes)
