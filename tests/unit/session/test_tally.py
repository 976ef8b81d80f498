"""Tally: the values one expression took, counted, and the line an answer says of them."""

from __future__ import annotations

from polydbg.session.tally import Tally


def tally(values: list[str], sources: list[str] | None = None, limit: int = 10_000) -> Tally:
    counted = Tally(limit)
    for n, value in enumerate(values):
        counted.add(value, sources[n] if sources else None)
    return counted


def test_a_few_values_are_listed_with_their_counts_the_most_frequent_first() -> None:
    counted = tally(["2"] * 200 + ["1"] * 250 + ["3"] * 48)
    assert counted.text() == "498 hits, 3 distinct: 1 ×250, 2 ×200, 3 ×48"
    assert counted.brief() == "1 ×250, 2 ×200, 3 ×48"
    assert counted.most_common(1) == [("1", 250)]


def test_many_values_say_how_often_they_repeat_and_their_range() -> None:
    """A lost update reads as values seen twice: 371 increments read a count another had read."""
    values = [str(n) for n in range(629)] + [str(n) for n in range(371)]
    counted = tally(values)
    assert counted.text() == "1000 hits, 629 distinct (371 seen twice, 258 seen once), 0..628, first 0, last 370"
    assert counted.brief() == "629 distinct (371 seen twice, 258 seen once), 0..628"
    assert tally([str(n) for n in range(10)]).text() == "10 hits, 10 distinct (each once), 0..9, first 0, last 9"


def test_values_that_stand_out_are_named_with_their_counts() -> None:
    counted = tally(["'a'"] * 50 + [f"'v{n}'" for n in range(20)] + ["'b'"] * 30)
    assert counted.text() == ("100 hits, 22 distinct (20 seen once, 1 seen 50 times, 1 seen 30 times), "
                              "most 'a' ×50, 'b' ×30, first 'a', last 'b'")


def test_past_the_limit_new_values_are_only_said_to_exist() -> None:
    counted = tally([str(n) for n in range(30)], limit=20)
    assert (counted.capped, len(counted.counts), counted.hits) == (True, 20, 30)
    assert counted.text() == "30 hits, 20+ distinct, 0..29, first 0, last 29"


def test_values_more_than_one_source_saw_are_counted_once_each() -> None:
    counted = tally(["0", "0", "1", "1", "2", "3", "3"], ["a", "b", "a", "b", "a", "a", "a"])
    assert counted.shared == 2


def test_a_value_that_is_not_a_number_has_no_range() -> None:
    counted = tally(["1", "x", "2"] * 3)
    assert counted.span() is None
    assert counted.text() == "9 hits, 3 distinct: 1 ×3, x ×3, 2 ×3"
