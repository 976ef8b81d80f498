"""Breakpoints under gdb: line and function breakpoints, logpoints, watchpoints and the exception filters'
catchpoints, each set one at a time and known by gdb's number.

- Line and function breakpoints are ``-break-insert -f`` (pending allowed: a library's code may load
  later) with ``-c`` for a condition. Each file's set (and the function set, and the watch set) is
  diffed against what gdb has (``kit.bpdiff``), so unchanged breakpoints keep their numbers and hit
  counts; gdb's numbers are mapped to polydbg's ids (``IdMap``).
- Hit conditions (``kit.hits``): ``>= N`` is an ignore count of N-1, ``> N`` one of N (gdb skips the
  condition while it runs the count down, so those count every hit); ``N`` / ``== N``, ``< N``,
  ``<= N`` and ``% N`` count in the condition with a counter of the breakpoint's own
  (``$_polydbg_hit(K) == N``, a function of the Python gdb loads), which counts only the hits whose
  condition holds. Without Python the counter is a convenience variable, ``(++$_polydbg_hK) == N`` —
  which gdb 13.1's Rust mode reads as two unary pluses, so there it never counts.
- Logpoints are ``-dprintf-insert`` calling ``$_polydbg_log`` (the Python gdb loads at start,
  ``shims/gdb_init.py``): each ``{expr}`` is evaluated, ``<error: …>`` when it fails, the program never
  stops; without Python in gdb a logpoint is refused.
- Watchpoints are ``-break-watch`` [-r|-a] in the frame given; gdb deletes one whose frame returns
  (``forget_watch``), and a deleted one is inserted again when asked for again.
- Exception filters: ``throw``/``catch`` are ``-catch-throw``/``-catch-catch``; a Rust panic unwinds
  without ``__cxa_throw``, so "catching" one is a breakpoint at ``rust_panic``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.base import (
    BackendListener,
    BreakpointResult,
    DataBreakpoint,
    FrameRef,
    FunctionBreakpoint,
    SourceBreakpoint,
)
from polydbg.backends.gdb.commands import (
    WATCH_FLAGS,
    breakpoint_result,
    console,
    function_key,
    line_key,
    logpoint_call,
    watch_key,
    watchpoint_of,
)
from polydbg.backends.gdb.frames import Frames
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.values import as_dict, to_int
from polydbg.backends.kit import bpdiff, hits
from polydbg.backends.kit.bpdiff import Placed
from polydbg.backends.kit.handles import IdMap
from polydbg.errors import AdapterRequestError, UsageError, did_you_mean, echo
from polydbg.mi.client import mi_quote

CATCH_FILTERS = ("throw", "catch", "panic")  # C++'s and Rust's; any other name is a C++ type's
# a type in gdb's ``info types`` listing: "11:     ParseError;", "        struct app::Error;"
_TYPE_LINE = re.compile(r"^\d*:?\s*(?:(?:struct|class|union|enum)\s+|typedef .*?\s+)?([\w:]+);$", re.MULTILINE)


class Breakpoints:
    def __init__(self, gdb: GdbState, frames: Frames, listener: BackendListener,
                 exception_filters: tuple[str, ...]) -> None:
        self._gdb = gdb
        self._frames = frames
        self._listener = listener
        self._exception_filters = exception_filters
        self._line: dict[str, list[Placed[int]]] = {}
        self._function: list[Placed[int]] = []
        self._watch: list[Placed[int]] = []
        self._catch: dict[str, int] = {}  # exception filter → gdb number
        self._types: list[str] = []  # C++ type names a throw stops for (with their subclasses)
        self._types_catch = 0  # the throw catchpoint for them
        self._kinds: dict[int, str] = {}  # gdb number → line | function | watch | catch
        self._ids: IdMap[int] = IdMap()  # polydbg breakpoint id ↔ gdb number
        self._placed: dict[int, Placed[int]] = {}  # gdb number → its line, function or watch breakpoint
        self._hit_vars = 0

    # -- what a stop asks (stops.BreakpointBook) ---------------------------------------------------------

    def kind_of(self, number: int) -> str | None:
        return self._kinds.get(number)

    def catch_of(self, number: int) -> str:
        return next((f for f, n in self._catch.items() if n == number), "throw")

    def ids_hit(self, number: int) -> tuple[int, ...]:
        bp_id = self._ids.id_of(number) if number else None
        return (bp_id,) if bp_id is not None else ()

    # -- setting ------------------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        def insert(bp: SourceBreakpoint) -> Awaitable[Placed[int]]:
            where = f"--source {mi_quote(file)} --line {bp.line}"
            return self._insert("line", line_key(bp), where, bp.condition, bp.hit_condition, bp.log_message)
        entries = await self._replace(self._line.get(file, []), breakpoints, line_key, insert, reusable=_held)
        self._line[file] = entries
        return [e.result for e in entries]

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        def insert(bp: FunctionBreakpoint) -> Awaitable[Placed[int]]:
            return self._insert("function", function_key(bp), f"--function {mi_quote(bp.name)}", bp.condition,
                                bp.hit_condition, None)
        self._function = await self._replace(self._function, breakpoints, function_key, insert, reusable=_held)
        return [e.result for e in self._function]

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        def insert(bp: DataBreakpoint) -> Awaitable[Placed[int]]:
            return self._insert_watch(bp, frame)
        self._watch = await self._replace(self._watch, breakpoints, watch_key, insert,
                                          reusable=_held)
        return [e.result for e in self._watch]

    async def set_exception_filters(self, filters: list[str]) -> None:
        wanted = [f for f in filters if f in self._exception_filters]
        types = [f for f in filters if f not in CATCH_FILTERS]  # (the registry's "raised" names every language's)
        if types != self._types:
            await self._check_types(types)
            if self._types_catch:
                self._kinds.pop(self._types_catch, None)
                with contextlib.suppress(AdapterRequestError):
                    await self._gdb.cmd(f"-break-delete {self._types_catch}")
                self._types_catch = 0
            self._types = types
            if types:  # one throw catchpoint whose condition judges the type (shims/gdb_init.py)
                number = to_int(as_dict((await self._gdb.cmd("-catch-throw")).payload.get("bkpt")).get("number"), 0)
                names = "\n".join(types).encode().hex()
                await self._gdb.cmd(f'-break-condition {number} $_polydbg_throws("{names}")')
                self._types_catch = number
                self._kinds[number] = "catch"
        for name in list(self._catch):
            if name not in wanted:
                number = self._catch.pop(name)
                self._kinds.pop(number, None)
                with contextlib.suppress(AdapterRequestError):
                    await self._gdb.cmd(f"-break-delete {number}")
        for name in wanted:
            if name not in self._catch:
                # a Rust panic unwinds without __cxa_throw: "catching" one is stopping at rust_panic
                command = "-break-insert -f rust_panic" if name == "panic" else f"-catch-{name}"
                result = await self._gdb.cmd(command)
                bkpt = as_dict(result.payload.get("bkpt"))
                number = to_int(bkpt.get("number"), 0)
                if number:
                    self._catch[name] = number
                    self._kinds[number] = "catch"

    async def _check_types(self, types: list[str]) -> None:
        """Refuse a C++ type name the program's debug info does not have (the standard library's are taken as
        they are: its types are described only with its debug symbols), naming the closest it has."""
        for name in types:
            if name.startswith("std::"):
                continue
            try:
                await self._gdb.cmd(console(f"ptype {name}"))
            except AdapterRequestError:
                listing = await self._gdb.cmd(console(f"info types {re.escape(name.rpartition('::')[2][:3])}"))
                known = sorted(set(_TYPE_LINE.findall(listing.console)))
                raise UsageError(f"no C++ type {echo(name)} in the program's debug info"
                                 f"{did_you_mean(name, known, '')}; name a class it throws (AppError, app::Error, "
                                 "std::runtime_error), or a filter: throw, catch") from None

    async def _replace(self, placed: list[Placed[int]], wanted: list[Any], key: Callable[[Any], tuple[Any, ...]],
                       insert: Callable[[Any], Awaitable[Placed[int]]],
                       reusable: Callable[[Placed[int]], bool] = lambda _p: True) -> list[Placed[int]]:
        """Keep the breakpoints whose spec is unchanged, delete the others, insert the new ones; gdb's
        numbers are bound to the specs' polydbg ids."""
        plan = bpdiff.plan(placed, wanted, key, reusable)
        doomed = [entry.handle for entry in plan.delete if entry.handle is not None]
        if doomed:
            for number in doomed:
                self._kinds.pop(number, None)
                self._placed.pop(number, None)
            with contextlib.suppress(AdapterRequestError):
                await self._gdb.cmd("-break-delete " + " ".join(str(n) for n in doomed))
        inserted = await asyncio.gather(*(insert(spec) for spec in plan.to_insert(wanted)))
        entries = bpdiff.merge(plan.keep, inserted)
        for spec, entry in zip(wanted, entries, strict=True):
            if entry.handle is not None:
                self._ids.bind(spec.id, entry.handle)
                self._placed[entry.handle] = entry
        return entries

    async def _insert(self, kind: str, key: tuple[Any, ...], where: str, condition: str | None,
                      hit_condition: str | None, log_message: str | None) -> Placed[int]:
        options = ["-f"]
        conditions = [f"({condition})"] if condition else []
        if hit_condition:
            try:
                hit = hits.HitCondition.parse(hit_condition)
            except ValueError:
                return Placed(key, None, hits.refusal(hit_condition))
            ignore = ignore_count(hit)
            if ignore is None:
                self._hit_vars += 1
                if not self._gdb.python:
                    await self._gdb.cmd(f"-interpreter-exec console {mi_quote(f'set $_polydbg_h{self._hit_vars} = 0')}")
                conditions.append(counting_condition(hit, counter(self._hit_vars, self._gdb.python)))
            elif ignore:
                options.append(f"-i {ignore}")
        if conditions:
            options.append(f"-c {mi_quote(' && '.join(conditions))}")
        if log_message is not None:
            if not self._gdb.python:
                return Placed(key, None, BreakpointResult(False, message="logpoints need gdb with Python"))
            command = f"-dprintf-insert {' '.join(options)} {where} \"%.0d\" {mi_quote(logpoint_call(log_message))}"
        else:
            command = f"-break-insert {' '.join(options)} {where}"
        try:
            result = await self._gdb.cmd(command)
        except AdapterRequestError as exc:
            return Placed(key, None, BreakpointResult(False, message=exc.message))
        bkpt = as_dict(result.payload.get("bkpt"))
        number = to_int(bkpt.get("number"), 0) or None
        if number is not None:
            self._kinds[number] = kind
        return Placed(key, number, breakpoint_result(bkpt))

    async def _insert_watch(self, bp: DataBreakpoint, frame: FrameRef | None) -> Placed[int]:
        key = watch_key(bp)
        try:
            result = await self._gdb.cmd(f"-break-watch {await self._frames.where(frame)}{WATCH_FLAGS[bp.access]}"
                                         f"{mi_quote(bp.expression)}")
        except AdapterRequestError as exc:
            return Placed(key, None, BreakpointResult(False, message=exc.message))
        wpt = watchpoint_of(result.payload)
        number = to_int(wpt.get("number"), 0) or None
        if number is not None:
            self._kinds[number] = "watch"
        return Placed(key, number, BreakpointResult(number is not None))

    # -- gdb's news ---------------------------------------------------------------------------------------

    def on_modified(self, payload: dict[str, Any]) -> None:
        """``=breakpoint-modified``: a pending breakpoint resolved (a library loaded), or its locations
        changed; the session hears of it when what it was told changes."""
        bkpt = payload.get("bkpt")
        if not isinstance(bkpt, dict):
            return
        number = to_int(bkpt.get("number"), 0)
        bp_id = self._ids.id_of(number)
        entry = self._placed.get(number)
        if bp_id is None or entry is None or self._kinds.get(number) not in ("line", "function"):
            return
        result = breakpoint_result(bkpt)
        if result != entry.result:
            entry.result = result
            self._listener.on_breakpoint_changed(bp_id, result)

    def on_deleted(self, payload: dict[str, Any]) -> None:
        """``=breakpoint-deleted`` (a raw ``delete`` command): gdb no longer has it."""
        entry = self._placed.pop(to_int(payload.get("id"), 0), None)
        if entry is not None:
            entry.handle = None

    def forget_watch(self, number: int, message: str) -> None:
        """gdb deleted a watchpoint itself (its frame returned): the session is told why."""
        bp_id = self._ids.id_of(number)
        entry = self._placed.pop(number, None)
        if entry is not None:
            entry.handle = None
            entry.result = BreakpointResult(False, message=message)
            if bp_id is not None:
                self._listener.on_breakpoint_changed(bp_id, entry.result)


def ignore_count(hit: hits.HitCondition) -> int | None:
    """gdb's ignore count for a hit condition that stops on every hit from some hit on (``>= N``: N-1,
    ``> N``: N); None when it needs a counter in the condition instead."""
    if hit.op == ">=":
        return max(0, hit.number - 1)
    if hit.op == ">":
        return hit.number
    return None


def counting_condition(hit: hits.HitCondition, count: str) -> str:
    """The condition that holds on the hits that stop (``==``, ``<``, ``<=``, ``%``); ``count`` is an expression
    that counts this hit and yields the count so far."""
    test = {"==": "==", "<": "<", "<=": "<="}.get(hit.op)
    return f"{count} {test} {hit.number}" if test else f"{count} % {hit.number} == 0"


def counter(number: int, python: bool) -> str:
    """The ``number``-th hit counter: gdb's Python ``$_polydbg_hit`` (any source language), else a convenience
    variable incremented with C's ``++`` (which gdb's Rust mode reads as two unary pluses)."""
    return f"$_polydbg_hit({number})" if python else f"(++$_polydbg_h{number})"


def _held(entry: Placed[int]) -> bool:
    """A placed breakpoint gdb still has (one it refused, or one deleted with a raw ``delete``, is inserted again)."""
    return entry.handle is not None
