"""Breakpoints kept across requests: every connection gets them all at its start, and again at a break after
they changed while it ran (Xdebug reads no command while PHP runs).

Line breakpoints are Xdebug's ``line`` (``conditional`` with the condition, which Xdebug evaluates at each pass
and takes for false when it fails). Hit conditions and logpoints are polydbg's: a hit is counted across all
requests of the session (``kit.hits``), a logpoint's ``{expressions}`` are evaluated at its break and the
request resumed before anything else sees it. Exceptions (``-t exception -x NAME``) match the class and its
parents, or an error's kind (``Warning``, ``Notice``, ``Deprecated``, ``Fatal error``); ``*`` matches every
exception thrown, caught or not.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import NamedTuple

from polydbg.backends.base import BreakpointResult, SourceBreakpoint
from polydbg.backends.kit import hits
from polydbg.backends.kit.hits import HitCounter
from polydbg.backends.xdebug.request import Request
from polydbg.dbgp.client import DbgpError, Element
from polydbg.errors import AdapterGoneError, AdapterTimeoutError

# break_on_exception's filters and the other names debug_break(exception=…) takes, as Xdebug's -x names
FILTERS = ("uncaught", "raised", "warnings", "failures")
_FILTER_NAMES: dict[str, tuple[str, ...]] = {
    "uncaught": ("Fatal error",),  # PHP's end on an exception nothing caught (the frames are gone by then)
    "raised": ("*",),  # every exception where it is thrown, caught or not
    "warnings": ("Warning", "Notice", "Deprecated", "User warning", "User notice", "User deprecated"),
    # a test run: an assertion that fails (PHPUnit catches it) and PHP's own errors (a TypeError in the test)
    "failures": ("PHPUnit\\Framework\\AssertionFailedError", "Error"),
}
UNCAUGHT = "Fatal error"


class Placed(NamedTuple):
    spec: SourceBreakpoint
    counter: HitCounter


class Breakpoints:
    def __init__(self) -> None:
        self._files: dict[str, list[Placed]] = {}
        self._exceptions: tuple[str, ...] = ()
        self._internal: tuple[str, ...] = ()  # polydbg's own (a recording's throws)
        self.generation = 0

    @property
    def exceptions(self) -> tuple[str, ...]:
        return self._exceptions

    def replace(self, file: str, specs: Sequence[SourceBreakpoint]) -> list[BreakpointResult]:
        """The file's breakpoints from now on; a hit condition that is not one is refused, the rest kept."""
        placed: list[Placed] = []
        results = []
        lines = _line_count(file)
        for spec in specs:
            try:
                counter = HitCounter.of(spec.hit_condition)
            except ValueError:
                results.append(hits.refusal(spec.hit_condition or ""))
                continue
            if lines is not None and spec.line > lines:
                results.append(BreakpointResult(False, message=f"{file} has {lines} lines"))
                continue
            old = next((p for p in self._files.get(file, ()) if p.spec.id == spec.id), None)
            if old is not None and old.spec.hit_condition == spec.hit_condition:
                counter = old.counter  # the same breakpoint keeps its count
            placed.append(Placed(spec, counter))
            results.append(BreakpointResult(True, spec.line))
        if placed:
            self._files[file] = placed
        else:
            self._files.pop(file, None)
        self.generation += 1
        return results

    def set_exceptions(self, filters: Sequence[str]) -> None:
        names: list[str] = []
        for item in filters:
            for name in _FILTER_NAMES.get(item, (item,)):
                if name not in names:
                    names.append(name)
        self._exceptions = tuple(names)
        self.generation += 1

    def set_internal(self, names: tuple[str, ...]) -> None:
        if names != self._internal:
            self._internal = names
            self.generation += 1

    def at(self, file: str | None, line: int | None) -> list[Placed]:
        return [p for p in self._files.get(file or "", ()) if p.spec.line == line]

    async def sync(self, request: Request) -> None:
        """Give ``request`` the breakpoints it lacks: all of them anew (removals first), sent together."""
        if request.generation == self.generation:
            return
        generation = self.generation
        client = request.client
        removals = [client.send("breakpoint_remove", [("d", native)]) for native in request.native]
        sets: list[tuple[asyncio.Future[Element], int | None]] = []
        for file, placed in self._files.items():
            uri = request.paths.uri(file)
            for item in placed:
                spec = item.spec
                if spec.condition:
                    future = client.send("breakpoint_set", [("t", "conditional"), ("f", uri), ("n", str(spec.line))],
                                         spec.condition)
                else:
                    future = client.send("breakpoint_set", [("t", "line"), ("f", uri), ("n", str(spec.line))])
                sets.append((future, spec.id))
        for name in dict.fromkeys((*self._exceptions, *self._internal)):
            sets.append((client.send("breakpoint_set", [("t", "exception"), ("x", name)]), None))
        futures = [*removals, *(future for future, _ in sets)]
        if futures:
            await asyncio.wait(futures, timeout=10.0)
        native: dict[str, int] = {}
        for future, bp_id in sets:
            if bp_id is not None and future.done() and not future.cancelled() and future.exception() is None:
                answer = future.result()
                native[str(answer.get("id"))] = bp_id
        request.native = native
        request.generation = generation


def _line_count(file: str) -> int | None:
    try:
        with open(file, "rb") as handle:
            return handle.read().count(b"\n") + 1
    except OSError:
        return None


GONE = (DbgpError, AdapterGoneError, AdapterTimeoutError)
