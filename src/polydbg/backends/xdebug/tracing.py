"""Recording while PHP runs: calls through Xdebug's function trace, exceptions through a throw break taken and
resumed at once (``backends/recording.py`` is the contract).

**Calls.** A script polydbg launches runs with ``xdebug.mode=debug,trace``, the debugger started by its trigger
and the trace not (the trace mode idle costs about 0.2 µs a PHP call). A recording starts a computerized trace
(``xdebug_start_trace`` through ``eval``, while PHP waits at a break or at its start) into polydbg's own
directory, and reads the file as PHP writes it (``calltrace``). A web server's requests and PHP started elsewhere
run without the trace mode: a recording there is refused, saying so. Xdebug reads nothing while PHP runs: a
recording stopped then stops reading at once and the trace itself at the script's next break (or its end).

**Throws.** While a recording runs, an exception breakpoint on every throw (``*``) is polydbg's own. At a throw
that is not one of the agent's stops, the stack is read and PHP stepped once (``step_into``): the step ends on
the first line of the ``catch`` that caught it — that frame's depth tells which calls the exception ended, its
place where it was caught — or with the script's end: nothing caught it. Then PHP runs on.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import difflib
import json
import os
import shutil
from collections.abc import Awaitable, Callable

from polydbg.backends.recording import CallSink, CallSpec, RaisedRecord, RaisedSink
from polydbg.backends.xdebug.breakpoints import UNCAUGHT
from polydbg.backends.xdebug.calltrace import Params, TraceReader, Wanted, normal
from polydbg.backends.xdebug.request import ENDED, FRAMEWORK_DIRS, RUNNING, STOPPED, Request
from polydbg.dbgp.client import Element, text_of
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, UsageError

POLL_S = 0.05  # how often a growing trace file is read while PHP runs
CHUNK = 256 * 1024  # read at a time (about 1,800 calls: a few ms of parsing)
INCLUDED_PAGE = 20  # included files named an eval: 20 paths of 200 characters fit the connection's max_data (4 KB)
MAX_INCLUDED = 5_000  # included files read at most, where a trace begun at a stop looks for parameters' names
ERROR_KINDS = ("Warning", "Notice", "Deprecated", "User warning", "User notice", "User deprecated", "Fatal error")
START = "xdebug_start_trace({path}, XDEBUG_TRACE_COMPUTERIZED | XDEBUG_TRACE_NAKED_FILENAME)"
STOP = "xdebug_get_tracefile_name() === false ? '' : xdebug_stop_trace()"
_GONE = (AdapterGoneError, AdapterRequestError, AdapterTimeoutError)
NOT_TRACING = ("this PHP runs without Xdebug's trace mode (xdebug.mode={mode}), which polydbg records calls "
               "through: a script polydbg launches has it (a php -S server's requests do not: trace their lines with "
               "debug_trace(points=…)); PHP started elsewhere: add trace to its xdebug.mode (xdebug.mode=debug,trace) "
               "and restart it")


def user_file(path: str | None) -> bool:
    """A file of the user's code: not Composer's vendor tree, PHPUnit's, or PHP's own (PEAR's /usr/share/php)."""
    return path is not None and bool(path) and not any(part in path for part in ("/vendor/", *FRAMEWORK_DIRS)) \
        and not path.startswith(("/usr/share/php/", "xdebug://", "dbgp://"))


class Calls:
    """One call recording over every request it reaches (``Recorder``)."""

    def __init__(self, spec: CallSpec, sink: CallSink, directory: str, disarm: Callable[[], Awaitable[None]]) -> None:
        self.spec = spec
        self._disarm = disarm
        self.sink = sink
        self.directory = directory
        self.wanted = Wanted(spec.functions)
        self.params = Params()
        self.readers: dict[int, tuple[Request, TraceReader, str]] = {}
        self.stopped = False
        self.done = False  # stopped, and its files read
        self.untrace: set[int] = set()  # requests whose trace is stopped at their next break
        self.holding = False  # a throw is being followed: the lines after it wait until its catch is known
        self.remove_directory = False  # the session ended first: the trace files' directory goes with the last read
        self._poll: asyncio.Task[None] | None = None
        self._count = 0

    async def join(self, request: Request) -> None:
        """Start tracing ``request`` (stopped, or waiting at its start)."""
        self._count += 1
        path = os.path.join(self.directory, f"calls-{request.thread_id}-{self._count}.xt")
        with contextlib.suppress(*_GONE, ValueError):  # the files loaded so far: where parameters are named
            for start in range(0, MAX_INCLUDED, INCLUDED_PAGE):  # a page at a time: an answer is cut at max_data
                page = f"array_slice(get_included_files(), {start}, {INCLUDED_PAGE})"
                answer = await request.client.request("eval", (), f"json_encode({page}, JSON_UNESCAPED_SLASHES)", 10.0)
                prop = answer.find("property")
                loaded = json.loads(text_of(prop)) if prop is not None and prop.get("type") == "string" else []
                self.params.files.extend(f for f in loaded if isinstance(f, str) and f not in self.params.files)
                if len(loaded) < INCLUDED_PAGE:
                    break
        answer = await request.client.request("eval", (), START.format(path=_php_string(path)), 10.0)
        prop = answer.find("property")
        if prop is None or prop.get("type") != "string":
            mode = await _mode(request)
            raise UsageError(NOT_TRACING.format(mode=mode))
        reader = TraceReader(self.spec, self.wanted, self.params, self.sink, request.name)
        if request.state == STOPPED:  # begun mid-run: the calls running now are the first ones' callers
            reader.seed([frame.get("where") or "?" for frame in reversed(await _stack(request))])
        self.readers[request.thread_id] = (request, reader, path)
        if self._poll is None:
            self._poll = asyncio.ensure_future(self._read_on())

    async def _read_on(self) -> None:
        while not self.stopped:
            await self.read()
            await asyncio.sleep(POLL_S)

    async def read(self) -> None:
        """What the files grew by, a chunk at a time (the event loop runs between chunks)."""
        if self.holding and not self.stopped:
            return
        for _, reader, path in list(self.readers.values()):
            await _drain(reader, path)

    def mark(self, request: Request) -> int | None:
        """Where ``request``'s trace is now (at a throw: every line before it is written)."""
        held = self.readers.get(request.thread_id)
        try:
            return os.path.getsize(held[2]) if held is not None else None
        except OSError:
            return None

    def thrown(self, request: Request, offset: int | None, text: str, caught_level: int) -> None:
        held = self.readers.get(request.thread_id)
        if held is not None and offset is not None:
            held[1].thrown(offset, text, caught_level)

    async def settle(self, request: Request) -> None:
        """At a break: a trace this recording left running is stopped now."""
        if request.thread_id in self.untrace:
            self.untrace.discard(request.thread_id)
            with contextlib.suppress(*_GONE):
                await request.client.request("eval", (), STOP, 10.0)

    async def stop(self) -> list[str]:
        if self.stopped:
            return []
        self.stopped = True
        await self._disarm()
        if self._poll is not None:
            self._poll.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._poll
        await self.read()
        for request, reader, path in self.readers.values():
            if request.state == RUNNING:
                self.untrace.add(request.thread_id)
            elif request.state != ENDED and not request.client.is_closed:
                with contextlib.suppress(*_GONE):
                    await request.client.request("eval", (), STOP, 10.0)
            await _drain(reader, path)
            reader.finish()
            if request.state != RUNNING:
                with contextlib.suppress(OSError):
                    os.unlink(path)
        self.done = True
        if self.remove_directory:
            shutil.rmtree(self.directory, ignore_errors=True)
        notes = self.wanted.missing()
        if self.untrace:
            notes.append("PHP was running: Xdebug writes its trace on until PHP's next break or its end (it reads "
                         "nothing while PHP runs), a cost of about 4 µs a call")
        return notes


async def _drain(reader: TraceReader, path: str) -> None:
    """``path`` read to its current end, the event loop running between chunks."""
    more = True
    while more:
        more = _read_into(reader, path)
        await asyncio.sleep(0)


_MISSING = """(function ($names) {
    $out = [];
    $types = array_merge(get_declared_classes(), get_declared_traits());
    foreach ($names as $given => [$class, $method]) {
        foreach ($types as $type) {
            $short = substr(strrchr('\\\\' . $type, '\\\\'), 1);
            if (strcasecmp($type, $class) === 0 || strcasecmp($short, $class) === 0) {
                if (!method_exists($type, $method)) {
                    $all = (new \\ReflectionClass($type))->getMethods();
                    $out[$given] = [$type, array_map(fn ($m) => $m->name, $all)];
                }
                break;
            }
        }
    }
    return json_encode($out);
})(json_decode(base64_decode('{names}'), true))"""


async def refuse_missing(request: Request, functions: tuple[str, ...]) -> None:
    """A ``Class->method`` whose class is loaded and has no such method is refused with the closest methods (a
    class not loaded yet may be autoloaded later: its names wait for the trace)."""
    names = {}
    for given in functions:
        if ":" in given.replace("::", ""):
            continue  # file:function
        head, sep, method = normal(given).rpartition("::")
        if sep and head and method:
            names[given] = (head, method)
    if not names:
        return
    encoded = base64.b64encode(json.dumps(names).encode()).decode()
    try:
        prop = (await request.client.request("eval", (), _MISSING.replace("{names}", encoded), 10.0)).find("property")
        missing = json.loads(text_of(prop)) if prop is not None and prop.get("type") == "string" else {}
    except (*_GONE, ValueError):
        return
    if not isinstance(missing, dict) or not missing:
        return
    parts = []
    for given, (type_name, methods) in missing.items():
        near = difflib.get_close_matches(names[given][1], [m.lower() for m in methods], n=3, cutoff=0.5)
        spelled = {m.lower(): m for m in methods}
        parts.append(f"{type_name} has no method {names[given][1]}" +
                     (f"; the closest: {', '.join(spelled[n] for n in near)}" if near else ""))
    raise UsageError("; ".join(parts) + " (pass a method as Class->method, Class::method or Class.method)")


def _read_into(reader: TraceReader, path: str) -> bool:
    """The next chunk of ``path`` read; whether there may be more."""
    try:
        with open(path, "rb") as handle:
            handle.seek(reader.offset)
            data = handle.read(CHUNK)
    except OSError:
        return False
    if data:
        reader.feed(data)
    return len(data) == CHUNK


def _php_string(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


async def _mode(request: Request) -> str:
    with contextlib.suppress(*_GONE):
        prop = (await request.client.request("eval", (), "ini_get('xdebug.mode')", 5.0)).find("property")
        if prop is not None:
            return text_of(prop)
    return "?"


class RaisedLog:
    """The exceptions the user's code raised (``Recorder``)."""

    def __init__(self, sink: RaisedSink, disarm: Callable[[], Awaitable[None]]) -> None:
        self.sink = sink
        self.stopped = False
        self._disarm = disarm

    async def stop(self) -> list[str]:
        if not self.stopped:
            self.stopped = True
            await self._disarm()
        return []


UserStops = Callable[[Request, str], Awaitable[bool]]


class Throws:
    """Every throw while a recording runs: where it was caught, told to the calls and the raised log."""

    def __init__(self, user_stops: UserStops, breakpoint_at: Callable[[str | None, int | None], bool]) -> None:
        self.calls: Calls | None = None
        self.raised: RaisedLog | None = None
        self._user_stops = user_stops
        self._breakpoint_at = breakpoint_at

    @property
    def armed(self) -> bool:
        return (self.calls is not None and not self.calls.stopped) or \
            (self.raised is not None and not self.raised.stopped)

    async def on_break(self, request: Request, stop: Element, command: str) -> tuple[Element, str]:
        """The break to judge: a throw taken for the recording is followed to its catch and PHP run on, until a
        break that is not one (or the script's end)."""
        while stop.get("status") == "break":
            message = stop.find("message")
            kind = message.get("exception") if message is not None else None
            if message is None or not kind or kind == UNCAUGHT:
                return stop, command
            if not self.armed:  # a throw of a recording that ended while PHP ran: its breakpoint goes at this break
                if await self._user_stops(request, kind):
                    return stop, command
                stop, command = await self._run(request, "run")
                continue
            if kind in ERROR_KINDS:
                if await self._user_stops(request, kind):
                    return stop, command
                stop, command = await self._run(request, "run")
                continue
            if await self._user_stops(request, kind):
                await self._record(request, stop, kind, await _stack(request), None,
                                   "(not known: the program stopped at this throw)", stopped_here=True)
                return stop, command
            stop, command = await self._follow(request, stop, kind)
            if command == "run-on":
                stop, command = await self._run(request, "run")
            elif command != "again":  # "again": another throw, followed in turn
                return stop, command
        return stop, command

    async def _follow(self, request: Request, stop: Element, kind: str) -> tuple[Element, str]:
        frames_then = await _stack(request)
        mark = self.calls.mark(request) if self.calls is not None else None
        if self.calls is not None:
            self.calls.holding = True
        try:
            return await self._land(request, stop, kind, frames_then, mark)
        finally:
            if self.calls is not None:
                self.calls.holding = False

    async def _land(self, request: Request, thrown: Element, kind: str, frames_then: list[Element],
                    mark: int | None) -> tuple[Element, str]:
        """One step from a throw: where it lands says who caught it."""
        if request.returns:  # a step out's setting would stop the step at each frame the exception unwinds
            request.returns = False
            with contextlib.suppress(*_GONE):
                await request.client.request("feature_set", [("n", "breakpoint_include_return_value"), ("v", "0")],
                                             None, 10.0)
        landing, _ = await self._run(request, "step_into")
        message = landing.find("message")
        next_kind = message.get("exception") if message is not None else None
        if landing.get("status") != "break" or next_kind == UNCAUGHT:
            await self._record(request, thrown, kind, frames_then, 0, None, mark)  # nothing caught it
            return landing, "run"
        if next_kind:  # another throw before the catch ran a line (a destructor, a rethrow on the catch's line)
            await self._record(request, thrown, kind, frames_then, None, "(not known: another exception was thrown "
                                                                         "before its catch ran a line)", mark)
            return landing, "again"
        frames = await _stack(request)
        where = frames[0] if frames else None
        file = request.paths.local(where.get("filename")) if where is not None else None
        line = where.get("lineno") if where is not None else None
        caught = f"{where.get('where')} ({os.path.basename(file or '?')}:{line})" if where is not None else None
        await self._record(request, thrown, kind, frames_then, len(frames),
                           caught if where is not None and _users(request, where) else None, mark,
                           caught_by_library=where is not None and not _users(request, where))
        if self._breakpoint_at(file, int(line) if line and line.isdigit() else None):
            return landing, "run"  # the catch is on a line with a breakpoint: judged as its hit
        return landing, "run-on"

    async def _record(self, request: Request, stop: Element, kind: str, frames: list[Element],
                      caught_level: int | None, caught: str | None, mark: int | None = None,
                      caught_by_library: bool = False, stopped_here: bool = False) -> None:
        """A throw told to the calls (which of them it ended: those deeper than ``caught_level``) and the log:
        where the user's code raised it (the user's innermost frame when a library threw for its call), a
        library's own exception caught inside a library left out."""
        message = stop.find("message")
        text = text_of(message).strip() if message is not None else ""
        if self.calls is not None and not self.calls.stopped and caught_level is not None:
            self.calls.thrown(request, mark, f"{kind}: {text}", caught_level)
        if self.raised is None or self.raised.stopped:
            return
        users = [f for f in frames if _users(request, f)]
        unknown = caught_level is None and not stopped_here
        if not users or (frames and not _users(request, frames[0]) and (caught_by_library or unknown)):
            return  # a library's own exception, caught inside it (or not known to reach the user's code)
        top = users[0]
        line_text = top.get("lineno")
        self.raised.sink(RaisedRecord(kind, text, request.paths.local(top.get("filename")),
                                      int(line_text) if line_text and line_text.isdigit() else None,
                                      top.get("where"), request.name, caught))

    async def _run(self, request: Request, command: str) -> tuple[Element, str]:
        answer = await request.go(command)
        request.state = STOPPED if answer.get("status") == "break" else request.state
        request.stop = answer
        return answer, command


def _users(request: Request, frame: Element) -> bool:
    """A frame of the user's code (not a library's, the test runner's or PHP's ``{main}`` of a runner script)."""
    return user_file(request.paths.local(frame.get("filename"))) and not request.framework(frame)


async def _stack(request: Request) -> list[Element]:
    try:
        return (await request.client.request("stack_get", (), None, 10.0)).findall("stack")
    except _GONE:
        return []
