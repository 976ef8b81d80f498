"""Hit conditions, one meaning for every backend: ``N`` (or ``== N``) stops on the Nth hit only, ``>= N`` on
the Nth and every later one, ``> N``, ``< N``, ``<= N`` likewise, ``% N`` on every Nth — as debugpy,
delve and VS Code read them. Debuggers without native hit counts (CDP, JDWP) count with ``HitCounter``;
those with native counting (gdb) translate the parsed ``HitCondition``. A condition that is not one is
refused with ``refusal``, in the same words everywhere.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from polydbg.backends.base import BreakpointResult

_HIT = re.compile(r"^\s*(==|=|>=|>|<=|<|%)?\s*(\d+)\s*$")
HIT_SYNTAX = "use N (the Nth hit), >= N, > N, == N, < N, <= N or % N"


class HitCondition(NamedTuple):
    op: str  # "==", ">=", ">", "<", "<=" or "%"
    number: int  # the N

    @classmethod
    def parse(cls, text: str) -> HitCondition:
        """The condition ``text`` states; ValueError when it is not one."""
        match = _HIT.match(text)
        if not match:
            raise ValueError(text)
        op = {None: "==", "=": "=="}.get(match.group(1), match.group(1))
        number = int(match.group(2))
        if number < 1 and op not in (">", "<", "<="):
            raise ValueError(text)
        return cls(op, number)

    def satisfied(self, hits: int) -> bool:
        """Whether the ``hits``-th hit (1-based) stops."""
        if self.op == "==":
            return hits == self.number
        if self.op == ">":
            return hits > self.number
        if self.op == "<":
            return hits < self.number
        if self.op == "<=":
            return hits <= self.number
        if self.op == "%":
            return hits % self.number == 0
        return hits >= self.number


def refusal(text: str) -> BreakpointResult:
    """The unverified result for a hit condition that is not one."""
    return BreakpointResult(False, message=f"hit_condition {text!r} is not understood; {HIT_SYNTAX}")


class HitCounter:
    """One breakpoint's hits, counted by polydbg: ``hit()`` at each hit (after its condition held) says
    whether this one stops."""

    def __init__(self, condition: HitCondition | None) -> None:
        self.condition = condition
        self.hits = 0

    @classmethod
    def of(cls, text: str | None) -> HitCounter:
        """A counter for ``text`` (None: every hit stops); ValueError for a condition that is not one."""
        return cls(HitCondition.parse(text) if text else None)

    def hit(self) -> bool:
        self.hits += 1
        return self.condition is None or self.condition.satisfied(self.hits)
