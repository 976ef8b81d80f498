"""The breakpoint store: what the agent asked for, independent of any adapter connection.

DAP replaces a file's (or the function list's) breakpoints wholesale, so the store groups them and
the session re-sends a whole group on every change and on every (re)start of the debugger. The ids
are polydbg's own and cross the backend seam as they are.
"""

from __future__ import annotations

import collections
import itertools
from dataclasses import dataclass, field

from polydbg.backends.base import BreakpointResult, DataBreakpoint, FunctionBreakpoint, SourceBreakpoint
from polydbg.session.model import BreakpointInfo


@dataclass(frozen=True)
class BreakpointRequest:
    """A line breakpoint as a tool asks for it (also kept by the manager before any session exists); ``line``
    may be text on the line (``source.line_number``)."""

    file: str
    line: int | str
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None


@dataclass
class Breakpoint:
    id: int
    file: str | None = None
    line: int | None = None
    function: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    watch: str | None = None  # a data breakpoint (watchpoint) on this expression
    access: str = "write"
    data_id: str | None = None  # the adapter's handle for the watched storage, valid for one run
    internal: bool = False  # run-to-location and tracepoints: hidden from the agent's list
    verified: bool = False
    actual_line: int | None = None
    message: str | None = None
    hits: int = 0

    @property
    def kind(self) -> str:
        return "function" if self.function else "data" if self.watch else "line"

    def apply(self, result: BreakpointResult) -> None:
        self.verified = result.verified
        self.actual_line = result.line if result.line is not None else self.actual_line
        self.message = result.message
        if result.data_id is not None:
            self.data_id = result.data_id

    def info(self) -> BreakpointInfo:
        return BreakpointInfo(
            id=self.id, kind=self.kind, file=self.file, line=self.line,
            actual_line=self.actual_line, function=self.function, watch=self.watch,
            access=self.access if self.watch else None, condition=self.condition,
            hit_condition=self.hit_condition, log_message=self.log_message, verified=self.verified,
            message=self.message, hits=self.hits)


_ASKED_FOR = ("file", "line", "function", "watch", "condition", "hit_condition", "log_message")


def _asked(fields: dict[str, object]) -> tuple[object, ...]:
    """What a breakpoint asks for, as the key ``same`` looks it up by (a field not given is None)."""
    return tuple(fields.get(name) for name in _ASKED_FOR)

RETIRED_KEPT = 64  # removed breakpoints remembered, to explain a stop made at one before its removal


@dataclass
class BreakpointStore:
    items: dict[int, Breakpoint] = field(default_factory=dict)
    _ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    # the agent's breakpoints by what they ask for: a launch with 2,000 breakpoints looked each up by a scan (4.6 s)
    _by_ask: dict[tuple[object, ...], int] = field(default_factory=dict)
    # breakpoints the agent removed, newest last: another process's stop made at one before its removal is
    # reported later (it waited while another stop was shown), where no breakpoint is set any more
    _retired: collections.deque[Breakpoint] = field(default_factory=lambda: collections.deque(maxlen=RETIRED_KEPT))

    def add(self, **fields: object) -> Breakpoint:
        bp = Breakpoint(id=next(self._ids), **fields)  # type: ignore[arg-type]
        self.items[bp.id] = bp
        if not bp.internal:
            self._by_ask.setdefault(_asked(fields), bp.id)
        return bp

    def same(self, **fields: object) -> Breakpoint | None:
        """The agent's breakpoint already asking for exactly this, so asking twice (a retry after a
        timeout, say) sets one breakpoint, not two that each count the hit."""
        bp_id = self._by_ask.get(_asked(fields))
        return None if bp_id is None else self.items.get(bp_id)

    def remove(self, bp_id: int) -> Breakpoint | None:
        bp = self.items.pop(bp_id, None)
        if bp is not None:
            key = tuple(getattr(bp, name) for name in _ASKED_FOR)
            if self._by_ask.get(key) == bp_id:
                del self._by_ask[key]
        return bp

    def retire(self, bp_id: int) -> Breakpoint | None:
        """Remove a breakpoint the agent asked to remove, remembering it (see ``retired_at``)."""
        bp = self.remove(bp_id)
        if bp is not None and not bp.internal:  # a run-to or trace point explains its own stops
            self._retired.append(bp)
        return bp

    def retired_at(self, file: str | None, line: int | None, ids: tuple[int, ...]) -> list[Breakpoint]:
        """Removed breakpoints a stop names, or that were at its line (the newest removal of each id)."""
        found = {bp.id: bp for bp in self._retired
                 if bp.id in ids or (file is not None and bp.file == file and line in (bp.line, bp.actual_line))}
        return [found[i] for i in sorted(found)]

    def files(self) -> set[str]:
        return {bp.file for bp in self.items.values() if bp.file is not None}

    def in_file(self, file: str) -> list[Breakpoint]:
        return [bp for bp in self.items.values() if bp.file == file]

    def functions(self) -> list[Breakpoint]:
        return [bp for bp in self.items.values() if bp.function is not None]

    def watches(self) -> list[Breakpoint]:
        return [bp for bp in self.items.values() if bp.watch is not None]

    def at(self, file: str, line: int) -> list[Breakpoint]:
        return [bp for bp in self.items.values()
                if bp.file == file and line in (bp.line, bp.actual_line)]

    def visible(self) -> list[Breakpoint]:
        return [bp for bp in self.items.values() if not bp.internal]


def source_spec(bp: Breakpoint) -> SourceBreakpoint:
    assert bp.line is not None
    return SourceBreakpoint(id=bp.id, line=bp.line, condition=bp.condition, hit_condition=bp.hit_condition,
                            log_message=bp.log_message)


def data_spec(bp: Breakpoint) -> DataBreakpoint:
    assert bp.watch is not None
    access = bp.access if bp.access in ("read", "readWrite") else "write"
    return DataBreakpoint(id=bp.id, expression=bp.watch, access=access, data_id=bp.data_id)  # type: ignore[arg-type]


def function_spec(bp: Breakpoint) -> FunctionBreakpoint:
    assert bp.function is not None
    return FunctionBreakpoint(id=bp.id, name=bp.function, condition=bp.condition, hit_condition=bp.hit_condition)
