"""Hit conditions (``N``, ``>= N``, ``> N``, ``== N``, ``< N``, ``<= N``, ``% N``), parsed once for every
backend; debuggers without native hit counts (CDP, JDWP) count hits themselves and ask ``satisfied``."""

from __future__ import annotations

import re

_HIT = re.compile(r"^\s*(==|=|>=|>|<=|<|%)?\s*(\d+)\s*$")
HIT_SYNTAX = "use N, >= N, > N, == N, < N, <= N or % N"


def parse_hit_condition(text: str) -> tuple[str, int]:
    """(operator, N) of a hit condition; raises ValueError when it is not one."""
    match = _HIT.match(text)
    if not match or (int(match.group(2)) < 1 and (match.group(1) or "") not in (">", "<", "<=")):
        raise ValueError(text)
    return match.group(1) or ">=", int(match.group(2))


def satisfied(op: str, count: int, hits: int) -> bool:
    """Whether the ``hits``-th hit (1-based) stops under the condition (op, count)."""
    if op in ("==", "="):
        return hits == count
    if op == ">":
        return hits > count
    if op == "<":
        return hits < count
    if op == "<=":
        return hits <= count
    if op == "%":
        return hits % count == 0
    return hits >= count
