"""Breakpoints in every target: line breakpoints (JavaScript and source-mapped files), function
breakpoints and exception settings.

V8 sets breakpoints one at a time, per target (each worker and child has its own breakpoint ids), so a
breakpoint here is one spec with a V8 id in each live target. A new file group is diffed against what
is set (``kit.bpdiff``): unchanged breakpoints stay as they are (their V8 ids and hit counts), the
others are removed and set again.

Each breakpoint V8 sets or removes in a function patches the function's bytecode again for every one it
keeps there, walking from the function's start to each one's position (``Debug::ApplyBreakPoints``, V8
11.3): thousands in one function cost time that grows with the cube of their number, V8's own. That walk
is shortest when the breakpoints kept are the early ones, so a group's new breakpoints are set from the
first line on and the removed ones removed from the last line back. Measured on Node 20.20 with a raw CDP
client, 1,000 in one function: 3-5 s to remove from the last, 9 s from the first.

- A JavaScript file's breakpoints are ``setBreakpointByUrl`` (V8 binds them when the module loads,
  ``breakpointResolved``). A file reached through a source map (TypeScript) cannot be named before its
  generated script loads, so an *entry breakpoint* on line 0 of every user script pauses each one
  before it runs; the pause reads its map, sets the file's breakpoints by script id, line and column
  (``bind_mapped``), and resumes. A JavaScript file can be transformed as it loads too (jest runs every
  test file through babel, which drops blank lines: a line breakpoint by URL lands lines off), so the
  entry breakpoint also pauses the files with breakpoints (only them, while no mapped file needs it
  wider); one that arrives with a map of itself is bound through it from then on, like TypeScript.
  A breakpoint on line 0, column 0 never binds in a script compiled with a column offset (jest's
  ``vm.Script``, its module wrapper on line 0: V8 20.20 resolves nothing before the offset), but V8's
  ``beforeScriptWithSourceMapExecution`` instrumentation pauses such a script (a ``vm.Script`` or an ES
  module with a map, not a CommonJS module Node compiles) before it runs: set with the entry breakpoint,
  that pause binds the same way.
- Conditions are V8's, compiled first (``conditions``); hit counts are counted here (``kit.hits``: a hit
  that does not count resumes); a logpoint is a condition that logs (through a console of its own, never
  into stdout) and answers false.
- A function breakpoint is ``setBreakpointOnFunctionCall`` on what the name evaluates to where it is
  reachable (the stopped frame, else the global scope); one not reachable yet is tried again at each stop.
- A breakpoint bound for the first time anywhere (a target, a script) is news for the session
  (``on_breakpoint_changed``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from polydbg.backends.base import BreakpointResult, FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.kit import bpdiff, hits
from polydbg.backends.kit.bpdiff import Placed
from polydbg.backends.node import conditions, failures, inspection, launcher, thrown_types
from polydbg.backends.node import values as jsv
from polydbg.backends.node.scripts import position, url_of
from polydbg.backends.node.target import Target
from polydbg.backends.node.targets import BLACKBOX, Targets
from polydbg.backends.recording import RaisedSink
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

log = logging.getLogger(__name__)

ENTRY_REGEX = r"^file://(?!.*/node_modules/)"  # the entry breakpoint: line 0 of every user script
BEFORE_MAPPED = "beforeScriptWithSourceMapExecution"  # V8's pause before a script with a map runs
FILTERS = ("raised", "uncaught", failures.FILTER)  # the exception filters; any other name is a constructor's
INSTRUMENTATION_ID = 8  # V8 names an instrumentation breakpoint "8:<instrumentation>"


@dataclass
class _Bp:
    spec: SourceBreakpoint | FunctionBreakpoint
    file: str | None = None
    natives: list[tuple[Target, str]] = field(default_factory=list)  # (target, V8 breakpoint id)
    condition: str | None = None  # what V8 evaluates (the condition, a logpoint's log call)
    refused: bool = False  # its condition or hit condition was refused: it was never set
    counter: hits.HitCounter = field(default_factory=lambda: hits.HitCounter(None))
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))
    urls: set[str] = field(default_factory=set)  # its V8 ids set by URL (the file's lines as V8 runs them)


def line_key(spec: SourceBreakpoint) -> Hashable:
    return spec.line, spec.condition, spec.hit_condition, spec.log_message


def function_key(spec: FunctionBreakpoint) -> Hashable:
    return spec.name, spec.condition, spec.hit_condition


def needs_map(path: str) -> bool:
    """A file the program runs through a source map (TypeScript, CoffeeScript …), not JavaScript itself. A file
    without an extension is a script Node runs as it is (``bin/www``, a ``#!/usr/bin/env node`` command)."""
    extension = os.path.splitext(path)[1].lower()
    return bool(extension) and extension not in launcher.JS_EXTENSIONS


def _line(bp: _Bp | None) -> int:
    """Where a breakpoint is in its file, for the order V8 is given them in (a function breakpoint: nowhere)."""
    return bp.spec.line if bp is not None and isinstance(bp.spec, SourceBreakpoint) else 0


def _url_pattern(urls: list[str]) -> str:
    """A V8 ``urlRegex`` matching exactly these URLs."""
    return "^(?:" + "|".join(re.sub(r"([\\^$.|?*+()\[\]{}])", r"\\\1", url) for url in urls) + ")$"


class Breakpoints:
    def __init__(self, targets: Targets) -> None:
        self._targets = targets
        self._bps: dict[int, _Bp] = {}
        self._files: dict[str, list[int]] = {}
        self._functions: list[int] = []
        self._filters: list[str] = []
        self._types: list[str] = []  # constructor names (thrown_types)
        self.raised_sink: RaisedSink | None = None  # the log of raised exceptions, while armed (raised.py)
        self._transformed: set[str] = set()  # JavaScript files seen loaded with a map of themselves
        self._wide_entry = False  # the entry breakpoint pauses every user script (stop_on_entry under a loader)
        self.entry_inside_functions: set[str] = set()  # scripts whose line 0 bound in a function: never paused
        self.caught_passed = 0  # exception pauses judged no test's failure and resumed (``failures``)
        self.imports = failures.Imports()  # the packages the user's scripts import: out of the blackbox then
        self.workers_run_tests = False  # a test run whose main process runs no test (``failures.workers_run_tests``)
        self.recording = False  # a call trace is recording: every exception pauses (``calls``)
        self.recording_mapped = False  # and waits for a mapped file: every user script pauses as it loads

    def _needs_map(self, path: str) -> bool:
        return needs_map(path) or path in self._transformed

    # -- the session's groups -------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        path = os.path.normpath(file)
        group = await self._replace(self._files.get(path, []), breakpoints, line_key)
        self._files[path] = group
        kept = set(group)  # a file may have thousands: a list's `in` made adding one O(n²)
        for spec in sorted(breakpoints, key=lambda spec: spec.line):
            if spec.id not in kept:  # placed after the kept ones; registered before placing (a hit may come)
                bp = self._bps[spec.id] = _Bp(spec, file=path)
                group.append(spec.id)
                kept.add(spec.id)
                bp.result = await self._place(bp)
        self._files[path] = [spec.id for spec in breakpoints]
        for target in self._targets.live():
            await self.refresh_entry(target)
        return [self._bps[spec.id].result for spec in breakpoints]

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        self._functions = await self._replace(self._functions, breakpoints, function_key)
        for spec in breakpoints:
            if spec.id in self._functions:
                continue
            bp = self._bps[spec.id] = _Bp(spec)
            self._functions.append(spec.id)
            try:
                bp.condition = await self._condition(bp)
            except AdapterRequestError as exc:
                bp.refused = True
                bp.result = BreakpointResult(False, message=exc.message)
            else:
                bp.result = await self._place_function(self._targets.get(None), bp)
        self._functions = [spec.id for spec in breakpoints]
        return [self._bps[spec.id].result for spec in breakpoints]

    async def _replace(self, ids: list[int], wanted: list[Any], key: Callable[[Any], Hashable]) -> list[int]:
        """Keep the group's breakpoints whose spec is unchanged (under the wanted spec's id), remove the
        others; the ids kept. The new ones are for the caller to place."""
        group = [self._bps[i] for i in ids if i in self._bps]
        plan = bpdiff.plan([Placed(key(bp.spec), bp, bp.result) for bp in group], wanted, key,
                           lambda placed: placed.handle is not None and bool(placed.handle.natives)
                           and not placed.handle.refused)
        for doomed in sorted(plan.delete, key=lambda entry: _line(entry.handle), reverse=True):
            if doomed.handle is not None:
                await self._remove(doomed.handle)
        kept = [(spec, entry.handle) for spec, entry in zip(wanted, plan.keep, strict=True)
                if entry is not None and entry.handle is not None]
        for _, bp in kept:  # every old id first: two kept breakpoints may trade ids
            if self._bps.get(bp.spec.id) is bp:
                del self._bps[bp.spec.id]
        for spec, bp in kept:
            bp.spec = spec
            self._bps[spec.id] = bp
            for target, native in bp.natives:
                target.by_native[native] = spec.id
        return [spec.id for spec, _ in kept]

    async def _remove(self, bp: _Bp) -> None:
        if self._bps.get(bp.spec.id) is bp:
            del self._bps[bp.spec.id]
        for target, native in bp.natives:
            target.by_native.pop(native, None)
            target.native_at.pop(native, None)
            if not target.ended:
                with contextlib.suppress(AdapterRequestError, AdapterGoneError):
                    await target.request("Debugger.removeBreakpoint", {"breakpointId": native})

    def _exception_state(self, target: Target | None = None) -> str:
        return "all" if self.recording else self._users_exception_state(target)

    def _users_exception_state(self, target: Target | None = None) -> str:
        judging = failures.FILTER in self._filters and self.caught_passed < failures.BUDGET
        if "raised" in self._filters or self._types or self.raised_sink is not None:
            return "all"
        if judging:  # (a caught exception is judged where tests run: not in vitest's main process)
            return "uncaught" if target is not None and target.kind == "main" and self.workers_run_tests else "all"
        return "uncaught" if "uncaught" in self._filters else "none"

    def pauses_anyway(self, target: Target) -> bool:
        """Whether this exception pause is one the agent's settings (filters, constructor names, the raised log) pause
        at too, a call trace aside (it pauses at every exception)."""
        state = self._users_exception_state(target)
        return state == "all" or (state == "uncaught" and bool((target.pause_data or {}).get("uncaught")))

    async def record_exceptions(self, on: bool, mapped: bool = False) -> None:
        """Pause on every exception while a call trace records (a call an exception ends reaches no return); with
        ``mapped``, pause every user script as it loads too (a TypeScript file's functions are found in the code
        V8 runs, not in the file)."""
        self.recording = on
        self.recording_mapped = on and mapped
        for target in self._targets.live():
            await self._send_exception_state(target)
            await self.refresh_entry(target)

    @property
    def pause_state(self) -> str:
        """V8's pause-on-exceptions state the agent's exception settings make (all, uncaught, none)."""
        return self._exception_state()

    @property
    def judges_failures(self) -> bool:
        """Whether an exception pause stops only where it fails a test (``failures``), not wherever it is raised."""
        return failures.FILTER in self._filters and "raised" not in self._filters

    async def set_exception_filters(self, filters: list[str]) -> None:
        thrown_types.check(types := [f for f in filters if f not in FILTERS])
        self._filters, self._types = [f for f in filters if f in FILTERS], types
        for target in self._targets.live():
            await self._send_exception_state(target)

    async def passed_caught(self, target: Target) -> None:
        """One more exception pause that fails no test: at ``failures.BUDGET`` of them, caught exceptions no longer
        pause (each costs the run a pause and a resume, ~3 ms), and the program's console says so."""
        self.caught_passed += 1
        if self.caught_passed == failures.BUDGET:
            target.events.on_output("console", failures.OVER_BUDGET)
            for live in self._targets.live():
                with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
                    await self._send_exception_state(live)

    def blackbox_patterns(self) -> list[str]:
        """Node's and the dependencies' scripts (the assertion libraries' left out with ``failures``: they pause)."""
        return self.imports.blackbox() if failures.FILTER in self._filters else BLACKBOX

    async def _send_exception_state(self, target: Target) -> None:
        await target.request("Debugger.setBlackboxPatterns", {"patterns": self.blackbox_patterns()})
        await target.request("Debugger.setPauseOnExceptions", {"state": self._exception_state(target)})

    @property
    def breaks_on_exceptions(self) -> bool:
        return bool(self._filters or self._types)

    async def wants_exception(self, target: Target) -> bool | None:
        """With constructor names set or the raised log armed, whether an exception pause stops (True) or is resumed
        (False); None: as the filters alone decide (the ``failures`` judgment, or a stop)."""
        if not self._types and self.raised_sink is None:
            return None
        if "raised" in self._filters or ((target.pause_data or {}).get("uncaught") and "uncaught" in self._filters):
            return True
        if self._types and await thrown_types.matches(target, self._types):
            return True
        return None if failures.FILTER in self._filters else False

    async def record_raised(self, sink: RaisedSink | None) -> None:
        """Arm (or, with None, disarm) the log of raised exceptions: V8 pauses on every throw meanwhile."""
        self.raised_sink = sink
        for target in self._targets.live():
            with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
                await self._send_exception_state(target)

    # -- targets coming and going -------------------------------------------------------------------------

    async def configure(self, target: Target) -> None:
        """A new worker or child process: the session's line breakpoints and exception settings."""
        for ids in list(self._files.values()):
            for bp in sorted([bp for i in ids if (bp := self._bps.get(i)) is not None], key=_line):
                if isinstance(bp.spec, SourceBreakpoint) and not bp.refused:
                    self._improve(target, bp, await self._place_in(target, bp))
        await self.refresh_entry(target)
        if self._filters or self._types or self.raised_sink is not None or self.recording:
            await self._send_exception_state(target)

    async def replace_in(self, target: Target, files: set[str]) -> None:
        """A reload changed the scripts of ``files`` in ``target``, and V8 dropped their breakpoints: each is set again
        at its line of the new code (the session hears of a line that moved)."""
        for bp in [self._bps[i] for path in sorted(files) for i in self._files.get(path, []) if i in self._bps]:
            if bp.refused or not isinstance(bp.spec, SourceBreakpoint):
                continue
            for native in [n for owner, n in bp.natives if owner is target]:
                bp.natives.remove((target, native))
                bp.urls.discard(native)
                target.by_native.pop(native, None)
                target.native_at.pop(native, None)
                await target.request("Debugger.removeBreakpoint", {"breakpointId": native})
            result = await self._place_in(target, bp)
            if result.verified and result.line != bp.result.line:
                bp.result = result
                target.events.on_breakpoint_changed(bp.spec.id, result)

    def forget(self, target: Target) -> None:
        """A target ended: its V8 ids are gone with it."""
        for bp in self._bps.values():
            bp.natives = [(owner, native) for owner, native in bp.natives if owner is not target]

    def release(self, target: Target) -> None:
        """Detaching: remove every breakpoint polydbg set in ``target`` (sent, not awaited)."""
        for bp in list(self._bps.values()):
            for owner, native in bp.natives:
                if owner is target:
                    target.channel.send("Debugger.removeBreakpoint", {"breakpointId": native})
        if target.entry_bp:
            target.channel.send("Debugger.removeBreakpoint", {"breakpointId": target.entry_bp})

    # -- placing ---------------------------------------------------------------------------------------

    async def _condition(self, bp: _Bp) -> str | None:
        """The V8 condition for a breakpoint, each expression compiled first; its hit counter."""
        spec = bp.spec
        if spec.condition:
            await conditions.check_syntax(self._targets.main, spec.condition, "condition")
        try:
            bp.counter = hits.HitCounter.of(spec.hit_condition)
        except ValueError as exc:
            raise AdapterRequestError("setBreakpoint", str(hits.refusal(str(spec.hit_condition)).message)) from exc
        message = spec.log_message if isinstance(spec, SourceBreakpoint) else None
        if message is not None:
            for expression in conditions.interpolated(message):
                await conditions.check_syntax(self._targets.main, expression, f"{{{expression}}} in log_message")
        return conditions.v8_condition(spec.condition, message)

    async def _place(self, bp: _Bp) -> BreakpointResult:
        """Set ``bp`` in every live target: the first place it bound, else the program's answer."""
        try:
            bp.condition = await self._condition(bp)
        except AdapterRequestError as exc:
            bp.refused = True
            return BreakpointResult(False, message=exc.message)
        results = [await self._place_in(target, bp) for target in self._targets.live()]
        bound = next((r for r in results if r.verified), None)
        return bound or (results[0] if results else BreakpointResult(False, message="node is not connected"))

    async def _place_in(self, target: Target, bp: _Bp) -> BreakpointResult:
        assert isinstance(bp.spec, SourceBreakpoint) and bp.file is not None
        condition = bp.condition
        mapping = target.scripts.mapping(bp.file)
        if not self._needs_map(bp.file) and not mapping:
            placed = await self._set_by_url(target, bp, url_of(self._targets.paths.remote(bp.file)), condition)
            if isinstance(placed, BreakpointResult):
                return placed
            native, found = placed
            bp.urls.add(native)
            locations = found.get("locations") or []
            if locations:
                return self._bound(target, locations[0], native)
            return BreakpointResult(False, message="not bound yet: the module has not loaded; it binds when it does")
        results = [await self._bind_one(target, bp, script.id, condition) for script in mapping]
        bound = next((r for r in results if r.verified), None)
        if bound is not None:
            return bound
        if results:
            return results[0]
        return BreakpointResult(False, message="not bound yet: no loaded script maps to this file; it binds when "
                                               f"the module that does loads{target.scripts.map_problems()}")

    async def _set_by_url(self, target: Target, bp: _Bp, url: str,
                          condition: str | None) -> tuple[str, dict[str, Any]] | BreakpointResult:
        """``bp`` set by its script's URL. V8 refuses a second breakpoint by the same URL, line and column ("Breakpoint
        at specified location already exists": a trace point on a line the agent breaks at), so another on its line
        names the script by a regex of that URL alone, each spelt apart (only after the refusal: no scan per bp)."""
        assert isinstance(bp.spec, SourceBreakpoint)
        where = {"lineNumber": bp.spec.line - 1, "columnNumber": 0}
        placed = await self._set(target, bp, "Debugger.setBreakpointByUrl", condition, {"url": url, **where})
        nesting = 0
        while isinstance(placed, BreakpointResult) and "already exists" in (placed.message or "") and nesting < 8:
            nesting += 1
            regex = "^" + "(?:" * nesting + _url_pattern([url])[1:-1] + ")" * nesting + "$"
            placed = await self._set(target, bp, "Debugger.setBreakpointByUrl", condition, {"urlRegex": regex, **where})
        return placed

    @staticmethod
    def _bound(target: Target, location: dict[str, Any], native: str) -> BreakpointResult:
        target.native_at[native] = here = position(location)
        return BreakpointResult(True, line=target.scripts.place(*here).line)

    async def _bind_one(self, target: Target, bp: _Bp, script_id: str, condition: str | None) -> BreakpointResult:
        script = target.scripts.get(script_id)
        assert isinstance(bp.spec, SourceBreakpoint) and bp.file is not None
        if script is None or script.map is None:
            return BreakpointResult(False)
        found_place = script.map.generated(bp.file, bp.spec.line - 1)
        if found_place is None:
            return BreakpointResult(False, message=f"no code at or after line {bp.spec.line} in {bp.file}")
        (gen_line, gen_column), _ = found_place
        location = {"scriptId": script_id, "lineNumber": gen_line, "columnNumber": gen_column}
        placed = await self._set(target, bp, "Debugger.setBreakpoint", condition, {"location": location})
        if isinstance(placed, BreakpointResult):
            return placed
        native, found = placed
        return self._bound(target, found.get("actualLocation") or location, native)

    @staticmethod
    async def _set(target: Target, bp: _Bp, method: str, condition: str | None,
                   params: dict[str, Any]) -> tuple[str, dict[str, Any]] | BreakpointResult:
        """Send one V8 breakpoint request for ``bp``: its id and answer, or the refusal as a result."""
        if condition:
            params["condition"] = condition
        try:
            found = await target.request(method, params)
        except AdapterRequestError as exc:
            return BreakpointResult(False, message=str(exc))
        native = str(found.get("breakpointId"))
        bp.natives.append((target, native))
        target.by_native[native] = bp.spec.id
        return native, found

    async def ensure_entry_bp(self, target: Target) -> None:
        """The entry breakpoint on line 0 of every user script in ``target``, from now on."""
        self._wide_entry = True
        await self.refresh_entry(target)

    def _entry_regex(self) -> str | None:
        """The scripts the entry breakpoint pauses: every user script while a mapped file has breakpoints
        (its generated script's name is not known), else the JavaScript files with breakpoints, else none."""
        files = [path for path, ids in self._files.items()
                 if any((bp := self._bps.get(i)) is not None and not bp.refused for i in ids)]
        if self._wide_entry or self.recording_mapped or any(self._needs_map(path) for path in files):
            return f"^(?!{_url_pattern(sorted(self.entry_inside_functions))[1:]})" + ENTRY_REGEX[1:] \
                if self.entry_inside_functions else ENTRY_REGEX
        urls = [url for path in sorted(files) if (url := url_of(self._targets.paths.remote(path)))
                not in self.entry_inside_functions]
        return _url_pattern(urls) if urls else None

    async def entered_again(self, target: Target, url: str) -> None:
        """The entry breakpoint paused a script a second time: line 0 bound inside a function (a script whose top
        level has nothing to stop at before its first function's body), so it would pause every call of that
        function. The script's URL is left out of the entry breakpoint from now on (its first pause bound it)."""
        self.entry_inside_functions.add(url)
        for live in self._targets.live():
            await self.refresh_entry(live)

    async def refresh_entry(self, target: Target) -> None:
        """The entry breakpoint in ``target`` as ``_entry_regex`` says now."""
        regex = self._entry_regex()
        if regex == target.entry_regex:
            return
        if target.entry_bp is not None:
            with contextlib.suppress(AdapterRequestError, AdapterGoneError):
                await target.request("Debugger.removeBreakpoint", {"breakpointId": target.entry_bp})
            target.entry_bp = None
        target.entry_regex = regex
        if regex is not None:
            found = await target.request("Debugger.setBreakpointByUrl",
                                         {"urlRegex": regex, "lineNumber": 0, "columnNumber": 0})
            target.entry_bp = str(found.get("breakpointId"))
        if (regex is not None) != target.before_mapped:  # see the module docstring: jest's scripts
            with contextlib.suppress(AdapterRequestError):
                await target.request("Debugger.setInstrumentationBreakpoint" if regex is not None else
                                     "Debugger.removeBreakpoint",
                                     {"instrumentation": BEFORE_MAPPED} if regex is not None else
                                     {"breakpointId": f"{INSTRUMENTATION_ID}:{BEFORE_MAPPED}"})
                target.before_mapped = regex is not None

    # -- mapped scripts ---------------------------------------------------------------------------------

    def on_script(self, target: Target, params: dict[str, Any]) -> None:
        """``Debugger.scriptParsed``: a mapped script covering files with breakpoints gets them now."""
        script = target.scripts.parsed(params)
        if script.map is not None and self._mapped_bps_for(script.map.sources):
            self.bind_mapped(target, script.id)
        if failures.FILTER in self._filters and script.path and not script.internal and self.imports.read(script.path):
            failures.send_blackbox(self._targets.live(), self.blackbox_patterns())  # before its tests run

    def _mapped_bps_for(self, sources: list[str]) -> list[_Bp]:
        wanted = {os.path.normpath(s) for s in sources}
        return [bp for path, ids in self._files.items() if path in wanted for i in ids
                if (bp := self._bps.get(i)) is not None and not bp.refused]

    def bind_mapped(self, target: Target, script_id: str) -> asyncio.Future[list[str]]:
        """Set (once per script) the breakpoints of the files a newly loaded mapped script covers; the
        V8 ids set."""
        binding = target.binding.get(script_id)
        if binding is None:
            binding = target.binding[script_id] = asyncio.ensure_future(self._bind_script(target, script_id))
        return binding

    async def _bind_script(self, target: Target, script_id: str) -> list[str]:
        script = target.scripts.get(script_id)
        if script is None or script.map is None:
            return []
        placed: list[str] = []
        if script.path is not None and not needs_map(script.path) and script.map.knows(script.path):
            await self._transformed_file(script.path)
        for bp in self._mapped_bps_for(script.map.sources):
            mine = [n for owner, n in bp.natives if owner is target]
            if any(target.native_at.get(n, ("",))[0] == script_id for n in mine):
                continue
            before = len(bp.natives)
            try:
                result = await self._bind_one(target, bp, script_id, bp.condition)
            except (AdapterRequestError, AdapterTimeoutError, AdapterGoneError) as exc:
                log.info("binding breakpoint %s in script %s failed: %s", bp.spec.id, script_id, exc)
                continue
            placed.extend(native for _, native in bp.natives[before:])
            self._improve(target, bp, result)
        return placed

    async def _transformed_file(self, path: str) -> None:
        """A JavaScript file loaded with a map of itself (transformed as it loads): its breakpoints by URL are
        at the lines V8 runs, not the file's; from now on they are bound through the map, as a mapped file's."""
        if path in self._transformed:
            return
        self._transformed.add(path)
        for bp_id in self._files.get(path, []):
            bp = self._bps.get(bp_id)
            if bp is None:
                continue
            for target, native in [(t, n) for t, n in bp.natives if n in bp.urls]:
                bp.natives.remove((target, native))
                target.by_native.pop(native, None)
                target.native_at.pop(native, None)
                with contextlib.suppress(AdapterRequestError, AdapterGoneError):
                    await target.request("Debugger.removeBreakpoint", {"breakpointId": native})
            bp.urls.clear()
            bp.result = BreakpointResult(False)  # the line it bound at was V8's: the map's is news
        for target in self._targets.live():
            await self.refresh_entry(target)

    @staticmethod
    def _improve(target: Target, bp: _Bp, result: BreakpointResult) -> None:
        """A breakpoint bound somewhere (a target, a script) for the first time: the session hears of it."""
        if result.verified and not bp.result.verified:
            bp.result = result
            target.events.on_breakpoint_changed(bp.spec.id, result)

    def on_resolved(self, target: Target, params: dict[str, Any]) -> None:
        """``Debugger.breakpointResolved``: a URL breakpoint bound in a module that just loaded."""
        native = str(params.get("breakpointId"))
        bp_id = target.by_native.get(native)
        bp = self._bps.get(bp_id) if bp_id is not None else None
        if bp is None:
            return
        self._improve(target, bp, self._bound(target, params.get("location") or {}, native))

    # -- hits -------------------------------------------------------------------------------------------

    def counts(self, bp_id: int) -> bool:
        """A hit of ``bp_id`` (its condition held): whether it stops (0: the entry stop always does)."""
        if bp_id == 0:
            return True
        bp = self._bps.get(bp_id)
        if bp is None:
            return False
        return bp.counter.hit()

    # -- function breakpoints ---------------------------------------------------------------------------

    @property
    def has_functions(self) -> bool:
        return bool(self._functions)

    async def _place_function(self, target: Target, bp: _Bp) -> BreakpointResult:
        """A breakpoint on each call of the function the name evaluates to, where it is reachable
        (the stopped frame's scope, else the global one); unreachable names are tried again at each stop."""
        assert isinstance(bp.spec, FunctionBreakpoint)
        try:
            found = await inspection.evaluate(target, bp.spec.name, 0 if target.paused else None)
        except AdapterRequestError:
            return BreakpointResult(False, message=f"{bp.spec.name} is not reachable from here yet; it is looked up "
                                                   "again at every stop (or set a line breakpoint in it)")
        obj = found.get("result") or {}
        if obj.get("type") != "function" or "objectId" not in obj:
            return BreakpointResult(False, message=f"{bp.spec.name} is {jsv.text_of(obj)}, not a function")
        placed = await self._set(target, bp, "Debugger.setBreakpointOnFunctionCall", bp.condition,
                                 {"objectId": obj["objectId"]})
        if isinstance(placed, BreakpointResult):
            return placed
        return BreakpointResult(True, line=await self._function_location(target, obj["objectId"]))

    @staticmethod
    async def _function_location(target: Target, object_id: str) -> int | None:
        found = await target.request("Runtime.getProperties", {"objectId": object_id, "ownProperties": True})
        for prop in found.get("internalProperties") or []:
            if prop.get("name") == "[[FunctionLocation]]":
                return target.scripts.place(*position((prop.get("value") or {}).get("value") or {})).line
        return None

    async def retry_functions(self, target: Target) -> None:
        """At a stop of ``target``: the function breakpoints not set in it yet, looked up again."""
        for bp_id in self._functions:
            bp = self._bps.get(bp_id)
            if bp is not None and not bp.refused and not any(owner is target for owner, _ in bp.natives):
                with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
                    self._improve(target, bp, await self._place_function(target, bp))
