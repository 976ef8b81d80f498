"""Hit conditions on lldb-dap: what it can count itself is sent as it reads it, the rest polydbg counts, and a
hit condition that is not one is refused instead of being sent to be ignored."""

from __future__ import annotations

from polydbg.backends.base import BreakpointResult, FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.kit.hits import HitCondition
from polydbg.backends.lldb.hits import LldbHits, ignore_count_text, merged


def test_from_some_hit_on_is_lldbs_own_ignore_count() -> None:
    assert ignore_count_text(HitCondition.parse(">= 3")) == "3"
    assert ignore_count_text(HitCondition.parse("> 3")) == "4"
    assert ignore_count_text(HitCondition.parse("3")) is None  # the 3rd hit only: lldb cannot say that
    assert ignore_count_text(HitCondition.parse("% 2")) is None


def test_what_lldb_would_misread_is_counted_by_polydbg_and_not_sent() -> None:
    hits = LldbHits()
    specs = [SourceBreakpoint(1, 5), SourceBreakpoint(2, 6, hit_condition=">= 2"),
             SourceBreakpoint(3, 7, hit_condition="2"), SourceBreakpoint(4, 8, hit_condition="often")]
    sent, refused = hits.prepare(specs)
    assert [(s.id, s.hit_condition) for s in sent] == [(1, None), (2, "2"), (3, None)]
    assert list(refused) == [4] and not refused[4].verified and "often" in (refused[4].message or "")
    assert [hits.stops([3]) for _ in range(4)] == [False, True, False, False]  # the 2nd hit only
    assert hits.stops([1]) and hits.stops([2])  # breakpoints lldb counts (or none) always show their stop
    assert hits.stops([3, 1])  # one breakpoint that stops is enough


def test_an_unchanged_hit_condition_keeps_counting_and_a_changed_one_starts_again() -> None:
    hits = LldbHits()
    hits.prepare([FunctionBreakpoint(1, "add", hit_condition="% 2")])
    assert [hits.stops([1]) for _ in range(3)] == [False, True, False]
    hits.prepare([FunctionBreakpoint(1, "add", hit_condition="% 2")])  # sent again, unchanged
    assert hits.stops([1])  # the 4th hit
    hits.prepare([FunctionBreakpoint(1, "add", hit_condition="% 3")])
    assert [hits.stops([1]) for _ in range(3)] == [False, False, True]
    hits.prepare([FunctionBreakpoint(1, "add")])  # no hit condition any more: every hit stops
    assert hits.stops([1])


def test_results_come_back_in_the_order_of_the_specs() -> None:
    specs = [SourceBreakpoint(1, 5), SourceBreakpoint(2, 6, hit_condition="x"), SourceBreakpoint(3, 7)]
    refusal = BreakpointResult(False, message="no")
    answers = [BreakpointResult(True, 5), BreakpointResult(True, 7)]
    assert merged(specs, answers, {2: refusal}) == [answers[0], refusal, answers[1]]
