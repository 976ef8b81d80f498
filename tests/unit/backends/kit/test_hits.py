"""Hit conditions: one meaning for every backend (a bare N is the Nth hit only), one refusal."""

from __future__ import annotations

import pytest

from polydbg.backends.kit.hits import HitCondition, HitCounter, refusal


@pytest.mark.parametrize(("text", "parsed"), [
    ("4", ("==", 4)),  # a bare count: the 4th hit, as debugpy, delve and VS Code read it
    (" 7 ", ("==", 7)),
    ("== 4", ("==", 4)),
    ("=4", ("==", 4)),
    (">= 2", (">=", 2)),
    ("> 0", (">", 0)),  # every hit
    (">0", (">", 0)),
    ("< 3", ("<", 3)),
    ("<= 1", ("<=", 1)),
    ("% 2", ("%", 2)),
])
def test_a_hit_condition_parses_to_its_operator_and_number(text: str, parsed: tuple[str, int]) -> None:
    assert HitCondition.parse(text) == parsed


@pytest.mark.parametrize("text", [
    "", "abc", "4.5", "-1", ">= -1", "== x", "4 5",
    "0", "== 0", ">= 0", "% 0",  # would never stop, or divide by zero
])
def test_what_is_not_a_hit_condition_is_refused(text: str) -> None:
    with pytest.raises(ValueError):
        HitCondition.parse(text)
    result = refusal(text)
    assert not result.verified
    assert result.message is not None and repr(text) in result.message and ">= N" in result.message


@pytest.mark.parametrize(("text", "stops"), [
    ("3", [3]),
    ("== 3", [3]),
    (">= 3", [3, 4, 5, 6]),
    ("> 3", [4, 5, 6]),
    ("< 3", [1, 2]),
    ("<= 3", [1, 2, 3]),
    ("% 2", [2, 4, 6]),
    (None, [1, 2, 3, 4, 5, 6]),
])
def test_a_counter_stops_on_the_hits_its_condition_names(text: str | None, stops: list[int]) -> None:
    counter = HitCounter.of(text)
    assert [n for n in range(1, 7) if counter.hit()] == stops
    assert counter.hits == 6
