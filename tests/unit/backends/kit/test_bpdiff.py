"""A group of breakpoints diffed against what the debugger has: unchanged ones are kept (their debugger numbers
and hit counts with them), the rest deleted and inserted again, and the new group comes back in spec order."""

from __future__ import annotations

from polydbg.backends.base import BreakpointResult, SourceBreakpoint
from polydbg.backends.kit.bpdiff import Placed, Plan, merge, plan


def key(spec: SourceBreakpoint) -> tuple[int, str | None]:
    """Everything but polydbg's id, as the backends key a line breakpoint."""
    return spec.line, spec.condition


def placed(line: int, handle: int | None, condition: str | None = None) -> Placed[int]:
    return Placed((line, condition), handle, BreakpointResult(handle is not None, line))


def test_unchanged_breakpoints_are_kept_changed_ones_deleted_and_new_ones_inserted() -> None:
    at_3, at_5, at_9 = placed(3, 11), placed(5, 12), placed(9, 13)
    wanted = [SourceBreakpoint(1, 5), SourceBreakpoint(2, 7), SourceBreakpoint(3, 3, condition="i > 2"),
              SourceBreakpoint(4, 9)]
    result = plan([at_3, at_5, at_9], wanted, key)
    assert result.keep == [at_5, None, None, at_9]
    assert result.delete == [at_3]  # line 3 without a condition is no longer wanted: its condition changed
    assert result.to_insert(wanted) == [wanted[1], wanted[2]]
    fresh_7, fresh_3 = placed(7, 14), placed(3, 15, "i > 2")
    assert merge(result.keep, [fresh_7, fresh_3]) == [at_5, fresh_7, fresh_3, at_9]


def test_an_id_change_alone_keeps_the_breakpoint() -> None:
    at_4 = placed(4, 21)
    result = plan([at_4], [SourceBreakpoint(99, 4)], key)
    assert result.keep == [at_4] and result.delete == []


def test_duplicates_are_each_matched_once() -> None:
    first, second = placed(4, 1), placed(4, 2)
    more = plan([first, second], [SourceBreakpoint(1, 4), SourceBreakpoint(2, 4), SourceBreakpoint(3, 4)], key)
    assert more.keep == [first, second, None] and more.delete == []
    fewer = plan([first, second], [SourceBreakpoint(1, 4)], key)
    assert fewer.keep == [first] and fewer.delete == [second]


def test_a_placed_breakpoint_that_is_not_reusable_is_replaced() -> None:
    refused, bound = placed(4, None), placed(6, 31)
    wanted = [SourceBreakpoint(1, 4), SourceBreakpoint(2, 6)]
    result = plan([refused, bound], wanted, key, reusable=lambda entry: entry.handle is not None)
    assert result.keep == [None, bound]
    assert result.delete == [refused]  # to be tried again, not kept as the debugger's refusal
    assert result.to_insert(wanted) == [wanted[0]]


def test_an_empty_group_deletes_everything_and_an_empty_debugger_inserts_everything() -> None:
    old = [placed(1, 1), placed(2, 2)]
    gone: Plan[SourceBreakpoint, int] = plan(old, [], key)
    assert gone.keep == [] and gone.delete == old and merge(gone.keep, []) == []
    wanted = [SourceBreakpoint(1, 8), SourceBreakpoint(2, 9)]
    new: Plan[SourceBreakpoint, int] = plan([], wanted, key)
    assert new.keep == [None, None] and new.delete == [] and new.to_insert(wanted) == wanted
