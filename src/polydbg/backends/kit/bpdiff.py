"""A group of breakpoints diffed against what the debugger has, for debuggers that set breakpoints
one at a time (GDB/MI, CDP, JDWP): unchanged ones keep their debugger numbers (and hit counters),
changed ones are deleted and inserted again. DAP replaces a whole file per request and needs none."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from polydbg.backends.base import BreakpointResult

S = TypeVar("S")  # a breakpoint spec (SourceBreakpoint, FunctionBreakpoint, DataBreakpoint)
H = TypeVar("H")  # the debugger's handle for one inserted breakpoint


@dataclass
class Placed(Generic[H]):
    """One breakpoint as the debugger has it: the spec's key (everything but polydbg's id), the
    debugger's handle (None when it refused it) and what the debugger made of it."""

    key: Hashable
    handle: H | None
    result: BreakpointResult  # what was last reported for it


@dataclass
class Plan(Generic[S, H]):
    keep: list[Placed[H] | None]  # one per wanted spec: the placed breakpoint reused, or None to insert
    delete: list[Placed[H]]  # placed breakpoints no spec wants any more

    def to_insert(self, wanted: Sequence[S]) -> list[S]:
        return [spec for spec, kept in zip(wanted, self.keep, strict=True) if kept is None]


def plan(placed: Sequence[Placed[H]], wanted: Sequence[S], key: Callable[[S], Hashable],
         reusable: Callable[[Placed[H]], bool] = lambda _p: True) -> Plan[S, H]:
    """Match each wanted spec to a placed breakpoint with the same key (each used once)."""
    spare: dict[Hashable, list[Placed[H]]] = {}
    for entry in placed:
        spare.setdefault(entry.key, []).append(entry)
    keep: list[Placed[H] | None] = []
    for spec in wanted:
        pool = spare.get(key(spec), [])
        found = next((entry for entry in pool if reusable(entry)), None)
        if found is not None:
            pool.remove(found)
        keep.append(found)
    return Plan(keep=keep, delete=[entry for pool in spare.values() for entry in pool])


def merge(keep: Sequence[Placed[H] | None], inserted: Sequence[Placed[H]]) -> list[Placed[H]]:
    """The new group in spec order: kept entries where reused, freshly inserted ones elsewhere."""
    fresh = iter(inserted)
    return [entry if entry is not None else next(fresh) for entry in keep]
