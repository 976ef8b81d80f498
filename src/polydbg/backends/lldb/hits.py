"""Hit conditions on lldb-dap, with the meaning they have everywhere else (``kit.hits``).

lldb-dap 22 reads a ``hitCondition`` only as a whole number N and makes it an ignore count of N-1, so it
stops on the Nth hit and every one after (``BreakpointBase::SetHitCondition``); anything else (``== 2``,
``% 3``) it accepts, reports verified and ignores — the breakpoint stops on every hit. So polydbg sends
lldb-dap only what it means the same way (``>= N`` as N, ``> N`` as N+1) and counts the others itself:
the breakpoint stops on every hit whose condition holds (lldb checks conditions first), and a hit its
counter does not stop on is resumed before the session hears of it. A hit condition that is not one is
refused, not sent.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from polydbg.backends.base import BreakpointResult, FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.kit import hits

S = TypeVar("S", SourceBreakpoint, FunctionBreakpoint)


class LldbHits:
    def __init__(self) -> None:
        self._counters: dict[int, tuple[str, hits.HitCounter]] = {}  # polydbg id → (its hit condition, counter)

    def prepare(self, specs: list[S]) -> tuple[list[S], dict[int, BreakpointResult]]:
        """The specs to send lldb-dap, hit conditions rewritten into what it understands (or dropped where
        polydbg counts), and the refusals of those whose hit condition is not one, by polydbg id."""
        sent: list[S] = []
        refused: dict[int, BreakpointResult] = {}
        for spec in specs:
            text = spec.hit_condition
            if not text:
                self._counters.pop(spec.id, None)
                sent.append(spec)
                continue
            try:
                condition = hits.HitCondition.parse(text)
            except ValueError:
                refused[spec.id] = hits.refusal(text)
                continue
            native = ignore_count_text(condition)
            if native is not None:
                self._counters.pop(spec.id, None)
                sent.append(spec._replace(hit_condition=native))
                continue
            known = self._counters.get(spec.id)
            if known is None or known[0] != text:  # a changed condition counts from zero
                self._counters[spec.id] = (text, hits.HitCounter(condition))
            sent.append(spec._replace(hit_condition=None))
        return sent, refused

    def stops(self, bp_ids: Iterable[int]) -> bool:
        """A stop at these (polydbg's) breakpoints: count each counted one; whether the stop is shown (any
        breakpoint polydbg does not count, or a counter that says so)."""
        shown = False
        for bp_id in bp_ids:
            counted = self._counters.get(bp_id)
            if counted is None or counted[1].hit():
                shown = True
        return shown


def ignore_count_text(condition: hits.HitCondition) -> str | None:
    """What lldb-dap's ignore count reads as ``condition`` (``>= N`` → ``N``, ``> N`` → ``N+1``), or None."""
    if condition.op == ">=":
        return str(condition.number)
    if condition.op == ">":
        return str(condition.number + 1)
    return None


def merged(specs: list[S], sent_results: list[BreakpointResult],
           refused: dict[int, BreakpointResult]) -> list[BreakpointResult]:
    """One result per spec, in order: the refusals where they were, lldb-dap's answers for the rest."""
    answers = iter(sent_results)
    return [refused[spec.id] if spec.id in refused else next(answers) for spec in specs]
