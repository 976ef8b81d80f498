"""A call trace on Node: every call of the named functions, recorded while the program runs.

Each named function (``functions``: found in the scripts' sources) gets breakpoints whose conditions record, in
every target and script that holds it, and send what they record through a ``Runtime`` binding (its calls arrive
as events, in program order, without pausing):

- at its first break location, the entry: the arguments (shown by ``HELPER`` without running the program's
  code: no getter, no toString), the time, and where the value of a return is read without a pause, the caller
  (V8's CallSite API); it answers false and never pauses;
- at each ``return`` statement whose expression only reads (``return total``, ``return {n, text}``; no call, no
  assignment: ``functions.reads_only``), the expression read again just before the statement runs, which is
  what it will return (a getter it reads runs twice); ``return;`` and a body's end read undefined; none of
  them pauses (~0.5 ms a call);
- at any other return location (``return fib(n - 1) + fib(n - 2)``), a pause: V8 gives such a value only to a
  pause (``callFrames[0].returnValue``; an async function's is its promise, settled already: what its code
  returned), handled here before anything else sees it and resumed at once (~2.5 ms a call, a round trip).

A call ended by an exception reaches no return location: V8 pauses on every exception while recording
(``Breakpoints.recording``), and a recorded function's frame the exception leaves uncaught (no ``try`` with a
``catch`` around the pause in it or in a frame above, ``lexical.in_try``) ends its innermost open call.

Entries and exits are matched last-in first-out per function, which is exact for synchronous code; two calls of
one async function interleaved across awaits may swap their return values. A file not loaded yet is found on
disk (the launched script's folder, then the folders above it) and its entries set by URL, pausing at the first
call in each realm to bind its exits; a file a loader transforms (TypeScript) is bound as each script loads.
With a depth, the program's functions the named ones call are bound the same way and recorded while a recorded
call is open below them (``callees``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from polydbg.backends.node import callees, functions
from polydbg.backends.node import values as jsv
from polydbg.backends.node.breakpoints import needs_map
from polydbg.backends.node.functions import Definition, returns_read
from polydbg.backends.node.scripts import PathMap, Script, path_of, position, url_of
from polydbg.backends.node.target import Target
from polydbg.backends.recording import CallRecord, CallSink, CallSpec
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError, UsageError

log = logging.getLogger(__name__)

_GONE = (AdapterRequestError, AdapterGoneError, AdapterTimeoutError)
_KEY = 'Symbol.for("polydbg.calls")'
BATCH = 64  # exits kept before their entries are read back (a read costs a round trip)
DISK_FILES = 2000
ROOTS_UP = 2  # a project's script files read at most to find a function not loaded yet
_EXTENSIONS = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".tsx", ".jsx")

# The program's side: open calls per function (a stack each), finished entries in the order they ended.
# A value is shown without running the program's code (no toString, no getter): own data properties only.
HELPER = """(() => {
  const key = Symbol.for("polydbg.calls");
  if (globalThis[key]) return globalThis[key];
  const LIMIT = %(chars)d, now = () => performance.now();
  const name = (v) => { try { const p = Object.getPrototypeOf(v), c = p && Object.getOwnPropertyDescriptor(p,
    "constructor"); return c && typeof c.value === "function" && c.value.name || "Object"; } catch (_) {
    return "Object"; } };
  const short = (v) => v === null ? "null" : typeof v === "string" ? JSON.stringify(v.length > 40 ?
    v.slice(0, 40) + "…" : v) : typeof v === "bigint" ? v + "n" : typeof v === "function" ? "ƒ " + (v.name ||
    "anonymous") : typeof v === "object" ? (Array.isArray(v) ? "Array(" + v.length + ")" : name(v)) : String(v);
  const show = (v) => { try {
    if (v === null || typeof v !== "object") return short(v);
    if (Array.isArray(v)) return "[" + v.slice(0, 8).map(short).join(", ") + (v.length > 8 ? ", …" : "") + "]";
    if (v instanceof Error) return name(v) + ": " + String(Object.getOwnPropertyDescriptor(v, "message")?.value);
    if (v instanceof Date) return isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
    if (v instanceof Map || v instanceof Set) return name(v) + "(" + v.size + ")";
    const keys = Object.keys(v), out = [];
    for (const k of keys.slice(0, 6)) { const d = Object.getOwnPropertyDescriptor(v, k);
      out.push(k + ": " + (d && "value" in d ? short(d.value) : "(getter)")); }
    const text = (name(v) === "Object" ? "" : name(v) + " ") + "{" + out.join(", ") + (keys.length > 6 ? ", …" : "")
      + "}";
    return text;
  } catch (_) { return "<unreadable>"; } };
  const cut = (s) => s.length > LIMIT ? s.slice(0, LIMIT) + "…" : s, send = globalThis[%(binding)s];
  const caller = () => { const prepare = Error.prepareStackTrace; try {
      Error.prepareStackTrace = (_, sites) => sites;
      const sites = new Error().stack.filter((site) => site.getFileName());  // the call's own frame, then its caller's
      const site = sites[1];
      return site ? [site.getFunctionName() || "(anonymous)", site.getFileName(), site.getLineNumber()] : null;
    } catch (_) { return null; } finally { Error.prepareStackTrace = prepare; } };
  const calls = {
    enter(fn, args, own) { if (this.N) this.stack.push([fn, 0]);
      send(JSON.stringify([fn, now(), args.map((a) => cut(show(a))), own ? caller() : null])); return false; },
    exit(fn) { if (this.N) this.pop(fn); send(JSON.stringify([fn, now()])); return true; },
    leave(fn, value) { if (this.N) this.pop(fn); send(JSON.stringify([fn, now(), null, cut(show(value))]));
      return false; },
    %(depth)s
    show(v) { return cut(show(v)); },
    armed: new Set(), first(fn) { return !this.armed.has(fn); },
  };
  Object.defineProperty(globalThis, key, { value: calls, configurable: true });
  return calls;
})()"""


@dataclass
class _Function:
    """One definition being recorded: where it is, and its V8 break locations in one script of one target."""

    index: int
    definition: Definition
    file: str | None
    line: int | None
    script_id: str
    first: tuple[int, int]  # (line, column) of its first break location
    last: tuple[int, int]  # and its last


@dataclass
class _Open:
    """A call entered, not ended yet."""

    index: int  # the function's (bound in this target once its file's first call paused)
    args: list[str]
    entered_ms: float  # the program's clock (performance.now()) at entry
    paused_ms: float  # the target's time paused for the recording by then (not the call's own time)
    started: float = field(default_factory=time.perf_counter)  # when its entry came (one clock for every target)
    caller: str | None = None  # read at entry (where its exit is read without a pause)
    depth: int = 0  # a callee's level below the recorded call it runs in
    took_ms: float | None = None  # set when it reached a return location, its pause not handled yet


@dataclass
class _TargetState:
    natives: set[str] = field(default_factory=set)  # exit breakpoints (they pause)
    others: set[str] = field(default_factory=set)  # entry and script-start breakpoints (never pause for us)
    first_calls: set[str] = field(default_factory=set)  # entries by URL (files loaded later): pause once a realm
    bound: set[str] = field(default_factory=set)  # scripts whose functions are bound
    functions: dict[int, _Function] = field(default_factory=dict)  # by index
    open: dict[int, list[_Open]] = field(default_factory=dict)  # each function's calls entered and not ended
    returning: list[_Open] = field(default_factory=list)  # reached a return location: their pause comes next
    paused_ms: float = 0.0  # how long the recording's pauses have held the target
    target: Target | None = None


class CallRecording:
    """The ``Recorder`` of a Node call trace (see the module docstring)."""

    def __init__(self, spec: CallSpec, sink: CallSink, home: str, paths: PathMap,
                 targets: Callable[[], list[Target]], disarm: Callable[[], Awaitable[None]]) -> None:
        self.spec = spec
        self._paths = paths
        self._targets = targets
        self._disarm = disarm
        self._sink = sink
        self._home = home  # where the program's files are looked for first: its own folder, else the session's
        self._defs: dict[str, list[Definition]] = {}  # a script's definitions by its path or URL
        self._states: dict[int, _TargetState] = {}  # by the target's thread id
        self._later: dict[str, list[Definition]] = {}  # files on disk not loaded yet: their named functions
        self._texts: dict[str, str] = {}  # the project's files read from disk
        self._indexes: dict[tuple[str, int], int] = {}  # (path or URL, definition offset) → function index
        self._sources: dict[str, str] = {}  # a loaded script's text by its path or URL
        self._disk: dict[str, list[Definition]] = {}  # the project's files read from disk: their definitions
        self._callees: set[str] = set()  # with a depth: the names of the program's functions bound as callees
        self._binding = "__polydbgCall"
        self._delivered = 0
        self._over = False
        self.stopped = False
        self._helper = HELPER % {"chars": spec.value_chars, "binding": json.dumps(self._binding),
                                 "depth": callees.HELPER_PART % {"depth": spec.depth}}

    # -- finding the functions -------------------------------------------------------------------------------

    async def resolve(self, targets: list[Target]) -> None:
        """Find every named function in the loaded scripts, else in the project's files not loaded yet; refuse a
        name found nowhere with the closest names."""
        known: list[str] = []
        missing = set(self.spec.functions)
        for target in targets:
            for script in target.scripts.user_scripts():
                for definition in await self._definitions(target, script):
                    known.append(definition.qualified)
                    missing -= {w for w in missing if functions.matches(w, definition, script.path)}
        for root, skipped in _roots(self._home):
            if not missing and not self.spec.depth:  # (with a depth every file is read: callees may be anywhere)
                break
            found: set[str] = set()  # every file of this folder defining one is bound, not only the first read
            for path, defs in self._disk_definitions(root, skipped):
                for definition in defs:
                    known.append(definition.qualified)
                    hits = {w for w in missing if functions.matches(w, definition, path)}
                    if hits:
                        self._later.setdefault(path, []).append(definition)
                    found |= hits
            missing -= found
        if self.spec.depth:
            self._find_callees()
        if missing:
            name = sorted(missing)[0]
            near = functions.closest(name, sorted(set(known)))
            raise UsageError(f"no function {name} in the program's scripts" + (
                f"; the closest: {', '.join(near)}" if near else "") + " (name it as func, Class.method, obj.func, "
                "or file.js:func)")

    async def _definitions(self, target: Target, script: Script) -> list[Definition]:
        key = script.path or script.url
        if key not in self._defs:
            source = await target.source(script.id)
            self._sources[key] = source.text if source is not None else ""
            self._defs[key] = functions.definitions(source.text) if source is not None else []
        return self._defs[key]

    def _named(self, definition: Definition, path: str | None) -> bool:
        return any(functions.matches(w, definition, path) for w in self.spec.functions)

    def _find_callees(self) -> None:
        """The program's functions the named ones call to the depth (``callees``); those of files not loaded yet
        wait for their files as the named ones do."""
        program = {path: (self._texts.get(path, ""), defs) for path, defs in self._disk.items()}
        program.update({key: (self._sources.get(key, ""), defs) for key, defs in self._defs.items()})
        named = [(text, d) for key, (text, defs) in program.items() for d in defs if self._named(d, key)]
        self._callees = callees.reachable(named, program, self.spec.depth)
        for path, defs in self._disk.items():
            if path not in self._defs:
                waiting = self._later.setdefault(path, [])
                waiting += [d for d in defs if d.name in self._callees and not self._named(d, path)
                            and d not in waiting]

    def _disk_definitions(self, root: str, skipped: str | None) -> list[tuple[str, list[Definition]]]:
        """The named functions of the script files under ``root`` (not under ``skipped``, read already)."""
        found: list[tuple[str, list[Definition]]] = []
        count = 0
        for folder, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d != "node_modules" and not d.startswith(".")
                       and os.path.join(folder, d) != skipped]
            for name in files:
                if not name.endswith(_EXTENSIONS) or name.endswith(".d.ts"):
                    continue
                count += 1
                if count > DISK_FILES:
                    return found
                path = os.path.join(folder, name)
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        text = self._texts[path] = handle.read()
                    found.append((path, functions.definitions(text)))
                    self._disk[path] = found[-1][1]
                except OSError:
                    continue
        return found

    # -- arming a target --------------------------------------------------------------------------------------

    async def arm(self, target: Target) -> None:
        """Bind the functions in the target's loaded scripts, and pause its scripts still to load that hold one."""
        state = self._states.setdefault(target.thread_id, _TargetState(target=target))
        await target.request("Runtime.addBinding", {"name": self._binding})
        for script in target.scripts.user_scripts():
            await self.bind(target, script.id)
        # A file not loaded yet: its entries by URL (V8 binds them as it loads, before it runs; a CommonJS module is
        # a compiled function, no script V8's beforeScriptExecution pauses at), pausing at the first call in each
        # realm, where its exits are bound before the call goes on.
        for path, defs in self._later.items():
            if needs_map(path):
                continue  # what V8 runs is the loader's output: bound as it loads (``mapped``)
            text = self._texts.get(path, "")
            for definition in defs:
                index = self._index(path, definition)
                line, column = _line_column(text, definition.body)
                condition = (f"{self._enter(index, definition, caller=True)} || globalThis[{_KEY}].first({index})"
                             if self._named(definition, path) else
                             f"{callees.entry(index, definition)} || {callees.first_call(index)}")
                found = await target.request("Debugger.setBreakpointByUrl", {
                    "url": url_of(self._paths.remote(path)), "lineNumber": line, "columnNumber": column,
                    "condition": condition})
                state.first_calls.add(str(found.get("breakpointId")))

    @property
    def mapped(self) -> bool:
        """Whether a named function waits in a file a loader transforms (TypeScript): scripts pause as they load."""
        return any(needs_map(path) for path in self._later)

    def _index(self, path: str, definition: Definition) -> int:
        return self._indexes.setdefault((path, definition.at), len(self._indexes))

    def _enter(self, index: int, definition: Definition, caller: bool = False) -> str:
        """The entry's condition; with ``caller``, it reads the caller too (an exit read without a pause has none)."""
        args = ", ".join(expression for _, expression in definition.params)
        return (f"({_KEY} in globalThis ? globalThis[{_KEY}] : {self._helper}).enter({index}, [{args}]"
                f"{', true' if caller else ''})")

    async def bind(self, target: Target, script_id: str) -> list[int]:
        """Set the entry and exit breakpoints of the named functions a script defines (once per script; the exits
        alone in a file whose entries are set by URL); the functions bound."""
        state = self._states.setdefault(target.thread_id, _TargetState(target=target))
        script = target.scripts.get(script_id)
        if script is None or script_id in state.bound or script.internal:
            return []
        state.bound.add(script_id)
        source = await target.source(script_id)
        if source is None:
            return []
        later = self._later.get(script.path or "", []) if not needs_map(script.path or "") else []
        bound: list[int] = []
        for definition in await self._definitions(target, script):
            named = self._named(definition, script.path)
            if named or definition.name in self._callees:
                with contextlib.suppress(*_GONE):
                    index = await self._bind_function(target, state, script, source.text, definition,
                                                      definition not in later, callee=not named)
                    if index is not None:
                        bound.append(index)
        return bound

    async def _bind_function(self, target: Target, state: _TargetState, script: Script, text: str,
                             definition: Definition, entry: bool, callee: bool = False) -> int | None:
        body = _line_column(text, definition.body)
        found = await target.request("Debugger.getPossibleBreakpoints", {
            "start": {"scriptId": script.id, "lineNumber": body[0], "columnNumber": body[1]},
            "restrictToFunction": True})
        raw = found.get("locations") or []
        locations = [position(loc)[1:] for loc in raw]
        returns = [position(loc)[1:] for loc in raw if loc.get("type") == "return"]
        if not locations or not returns:
            return None
        index = self._index(script.path or script.url, definition)
        place = target.scripts.place(script.id, *_line_column(text, definition.at))
        fn = _Function(index, definition, place.file, place.line, script.id, locations[0], locations[-1])
        state.functions[index] = fn
        first = locations[0]
        # each location's condition, its parts in order; an exit read there (a return that only reads: no pause) or
        # one that pauses at V8's return location for the value
        parts: dict[tuple[int, int], list[str]] = {}
        pausing: set[tuple[int, int]] = set()
        reads = {} if script.map is not None else returns_read(text, raw, definition)
        if entry:
            parts[first] = [callees.entry(index, definition) if callee else
                            self._enter(index, definition, caller=bool(reads))]
        leave, exit_ = ("gave", "out") if callee else ("leave", "exit")
        for end in returns:
            read = reads.get(end)
            if read is not None and (entry or read[0] != first):
                value = read[1] or "undefined"  # (the line break ends a line comment the expression may hold)
                parts.setdefault(read[0], []).append(f"globalThis[{_KEY}]?.{leave}({index}, ({value}\n))")
            elif end != first or entry:
                parts.setdefault(end, []).append(f"globalThis[{_KEY}]?.{exit_}({index})")
                pausing.add(end)
            # (else: its entry by URL is there, and V8 takes one breakpoint a place: the call's end is not seen)
        for where, condition in parts.items():
            native = await self._set(target, script.id, where, f"({', '.join(condition)})")
            (state.natives if where in pausing else state.others).add(native)
        return index

    @staticmethod
    async def _set(target: Target, script_id: str, where: tuple[int, int], condition: str) -> str:
        found = await target.request("Debugger.setBreakpoint", {
            "location": {"scriptId": script_id, "lineNumber": where[0], "columnNumber": where[1]},
            "condition": condition})
        return str(found.get("breakpointId"))

    # -- pauses -------------------------------------------------------------------------------------------------

    def mine(self, target: Target, hit: list[str]) -> bool:
        """Whether a pause is one of the recording's (perhaps a breakpoint of the agent's too)."""
        state = self._states.get(target.thread_id)
        return state is not None and any(h in state.natives or h in state.others or h in state.first_calls
                                         for h in hit)

    def owns(self, target: Target, hit: list[str]) -> bool:
        """Whether a pause is the recording's own alone (an exit, a script's start), resumed once handled."""
        state = self._states.get(target.thread_id)
        return state is not None and bool(hit) and all(
            h in state.natives or h in state.others or h in state.first_calls for h in hit)

    def held(self, target: Target, seconds: float) -> None:
        """One of the recording's pauses held the target this long: the calls running meanwhile did not run."""
        state = self._states.get(target.thread_id)
        if state is not None:
            state.paused_ms += seconds * 1000

    def on_binding(self, target: Target, params: dict[str, Any]) -> None:
        """An entry (``[index, time, args]``) or a return location reached (``[index, time]``), in program order."""
        state = self._states.get(target.thread_id)
        if state is None or self.stopped or params.get("name") != self._binding:
            return
        try:
            message = json.loads(str(params.get("payload")))
            index = int(message[0])
        except (ValueError, TypeError, IndexError):
            return
        stack = state.open.setdefault(index, [])
        if len(message) > 2 and message[2] is not None:  # an entry: [index, time, args, caller(, a callee's level)]
            call = _Open(index, [str(a) for a in message[2]], float(message[1]), state.paused_ms)
            if len(message) > 4:
                call.depth = int(message[4])
            if len(message) > 3 and isinstance(message[3], list):
                name, url, line = message[3]
                call.caller = f"{name} ({os.path.basename(path_of(str(url)) or str(url))}:{line})"
            stack.append(call)
        elif stack:  # an exit: [index, time] (its pause comes next), or [index, time, None, value] (read, no pause)
            call = stack.pop()
            call.took_ms = max(0.0, float(message[1]) - call.entered_ms - (state.paused_ms - call.paused_ms))
            if len(message) > 3:
                self._emit(target, call, returned=str(message[3]), caller=call.caller)
            else:
                state.returning.append(call)

    async def on_pause(self, target: Target, params: dict[str, Any]) -> None:
        """An exit pause: the call's return value and caller; a script's start: bind its functions."""
        state = self._states.get(target.thread_id)
        if state is None or self.stopped:
            return
        hit = [str(h) for h in params.get("hitBreakpoints") or []]
        frames = target.frames
        if frames and any(h in state.first_calls for h in hit):  # a first call in a file loaded since: its exits
            for index in await self.bind(target, position(frames[0].get("location") or {})[0]):
                with contextlib.suppress(*_GONE):
                    await target.request("Debugger.evaluateOnCallFrame", {
                        "callFrameId": frames[0]["callFrameId"], "silent": True,
                        "expression": f"globalThis[{_KEY}]?.armed.add({index})"})
        if any(h in state.natives for h in hit) and frames and state.returning:
            call = state.returning.pop(0)
            value = frames[0].get("returnValue") or {"type": "undefined"}
            fn = state.functions.get(call.index)
            settled = await _settled(target, value) if fn is not None and fn.definition.asynchronous else None
            if settled is not None and settled[0] == "rejected":
                self._emit(target, call, raised=jsv.text_of(settled[1]), caller=self._caller(target, frames))
            else:
                returned = await self._text(target, settled[1] if settled is not None else value)
                self._emit(target, call, returned=returned, caller=self._caller(target, frames))

    async def on_exception(self, target: Target) -> None:
        """An exception pause: each recorded call it leaves uncaught ends with it."""
        state = self._states.get(target.thread_id)
        if state is None or self.stopped or not any(state.open.values()):
            return
        frames = target.frames
        data = target.pause_data or {}
        raised = str(data.get("description") or jsv.text_of(data)).split("\n", 1)[0]
        leaving: list[tuple[int, _Function]] = []  # the bound frames it leaves, innermost first
        for index, frame in enumerate(frames):
            script_id, line, column = position(frame.get("location") or {})
            source = await target.source(script_id)
            if source is not None and source.in_try(source.offset(line, column)):
                break  # caught here
            fn = self._function_at(state, frame)
            if fn is not None:
                leaving.append((index, fn))
        levels = await self._unwind(target, [fn.index for _, fn in leaving]) if self.spec.depth else None
        for n, (index, fn) in enumerate(leaving):
            stack = state.open.get(fn.index)
            if stack and (levels is None or 0 <= levels[n] <= self.spec.depth):
                call = stack.pop()
                self._emit(target, call, raised=raised, caller=self._caller(target, frames[index:]))

    async def _unwind(self, target: Target, indexes: list[int]) -> list[int] | None:
        """Pop the calls an exception ends from the page's stack (``callees``): the level each had (-1: not on it,
        a callee called from elsewhere); None when it cannot be read."""
        if not indexes or not target.frames:
            return None
        with contextlib.suppress(*_GONE, ValueError, TypeError):
            found = await target.request("Debugger.evaluateOnCallFrame", {
                "callFrameId": target.frames[0]["callFrameId"], "silent": True, "returnByValue": True,
                "expression": f"globalThis[{_KEY}]?.unwind({json.dumps(indexes)})"})
            levels = json.loads(str((found.get("result") or {}).get("value")))
            if isinstance(levels, list) and len(levels) == len(indexes):
                return [int(level) for level in levels]
        return None

    @staticmethod
    def _function_at(state: _TargetState, frame: dict[str, Any]) -> _Function | None:
        script_id, line, column = position(frame.get("location") or {})
        name = str(frame.get("functionName") or "")
        for fn in state.functions.values():
            if (fn.script_id == script_id and fn.first <= (line, column) <= fn.last
                    and (name == fn.definition.name or name.endswith("." + fn.definition.name) or not name)):
                return fn
        return None

    @staticmethod
    def _caller(target: Target, frames: list[dict[str, Any]]) -> str | None:
        """The frame below the call's; past an await (nothing below), the function awaiting it."""
        if len(frames) >= 2:
            frame = frames[1]
            where = position(frame.get("location") or {})
        else:
            awaiting = (target.async_trace or {}).get("callFrames") or []
            if frames is not target.frames or not awaiting:
                return None
            frame = awaiting[0]
            where = position(frame)
        place = target.scripts.place(*where)
        shown = f"{os.path.basename(place.file)}:{place.line}" if place.file else "?"
        return f"{frame.get('functionName') or '(anonymous)'} ({shown})"

    async def _text(self, target: Target, obj: dict[str, Any]) -> str:
        if obj.get("type") == "object" and obj.get("subtype") != "null" and "objectId" in obj:
            with contextlib.suppress(*_GONE):
                found = await target.request("Runtime.callFunctionOn", {
                    "objectId": obj["objectId"], "returnByValue": True, "silent": True,
                    "functionDeclaration": f"function () {{ return ({self._helper})"
                                           ".show(this); }"})
                value = (found.get("result") or {}).get("value")
                if isinstance(value, str):
                    return value
        return jsv.text_of(obj)[:self.spec.value_chars]

    # -- delivering ------------------------------------------------------------------------------------------

    def _emit(self, target: Target, call: _Open, returned: str | None = None, raised: str | None = None,
              caller: str | None = None, ended: bool = True) -> None:
        state = self._states.get(target.thread_id)
        fn = state.functions.get(call.index) if state is not None else None
        if self._over or fn is None:
            return
        names = [shown for shown, _ in fn.definition.params]
        self._sink(CallRecord(
            function=fn.definition.qualified, args=tuple(zip(names, call.args, strict=False)), returned=returned,
            raised=raised, caller=caller, thread=target.name, file=fn.file, line=fn.line, ended=ended,
            duration_us=None if call.took_ms is None else round(call.took_ms * 1000, 1), started=call.started,
            depth=call.depth))
        self._delivered += 1
        if self._delivered >= self.spec.max_calls:
            self._over = True

    async def stop(self) -> list[str]:
        """Disarm every target, deliver the calls still running as unended records, and say what was never
        reached."""
        if self.stopped:
            return []
        self.stopped = True
        with contextlib.suppress(*_GONE):
            await self._disarm()
        for target in self._targets():
            state = self._states.get(target.thread_id)
            if state is not None and target.live:
                for native in state.natives | state.others | state.first_calls:
                    with contextlib.suppress(*_GONE):
                        await target.request("Debugger.removeBreakpoint", {"breakpointId": native})
                with contextlib.suppress(*_GONE):
                    await target.request("Runtime.removeBinding", {"name": self._binding})
        for state in self._states.values():  # (a target that ended too: a call process.exit() left)
            for call in [c for stack in state.open.values() for c in stack] + state.returning:
                if state.target is not None:
                    self._emit(state.target, call, ended=False)
        notes: list[str] = []
        bound = {fn.definition.name for state in self._states.values() for fn in state.functions.values()}
        never = [name for name in self.spec.functions if name.rpartition(":")[2].rsplit(".", 1)[-1] not in bound]
        if never:
            notes.append(f"never loaded: {', '.join(never)} (no script defining it ran)")
        return notes


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def search_home(program: str | None, cwd: str) -> str:
    """Where a trace's functions not loaded yet are looked for first: the program's folder, unless the program is
    a package's in node_modules (a test runner's entry: vitest.mjs, jest.js): then the session's directory, the
    project's. From the runner's folder the look read the runner's own files and, a folder up, every package's:
    vitest's bundled acorn has two ``parse`` at one place, and the launch failed on V8's "Breakpoint at specified
    location already exists"."""
    if program and "node_modules" not in os.path.abspath(program).split(os.sep):
        return os.path.dirname(os.path.abspath(program))
    return cwd


def _roots(cwd: str) -> list[tuple[str, str | None]]:
    """Where a function not loaded yet is looked for: the session's directory, then each folder above it (a
    test project's code is often beside it: ``../cart.js``) up to the repository's root, at most
    ``ROOTS_UP`` levels; each with the folder below it, read already."""
    roots: list[tuple[str, str | None]] = [(cwd, None)]
    here = cwd
    for _ in range(ROOTS_UP):
        if os.path.isdir(os.path.join(here, ".git")):
            break
        parent = os.path.dirname(here)
        if parent == here:
            break
        roots.append((parent, here))
        here = parent
    return roots


async def _settled(target: Target, value: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """An async function's promise as it returns: settled already by its code's ``return`` (or throw), so its state
    and value say what the code returned; None when it is no promise or still pending."""
    if value.get("subtype") != "promise" or "objectId" not in value:
        return None
    with contextlib.suppress(*_GONE):
        found = await target.request("Runtime.getProperties", {"objectId": value["objectId"], "ownProperties": True})
        inner = {str(p.get("name")): p.get("value") or {} for p in found.get("internalProperties") or []}
        state = str((inner.get("[[PromiseState]]") or {}).get("value") or "")
        if state in ("fulfilled", "rejected"):
            return state, inner.get("[[PromiseResult]]") or {"type": "undefined"}
    return None
