"""The values one expression took over many hits, counted: what an answer says of them in a line.

An agent reading a trace or a call log asks "which values, how often, where did they differ": a lost update
reads as values counted twice (each seen by two threads), an off-by-one as the one value missing from a range.
So a ``Tally`` keeps every distinct value's count (up to a limit; later new values are only said to exist),
the first and last value, the numeric range, and, when hits come from several sources (threads, callers), how
many values more than one source saw. ``text`` puts the few most frequent values first, with their counts, or
when there are many how many values were seen once, twice, … and the range.
"""

from __future__ import annotations

import math

from polydbg.session.inspection import clip

DISTINCT = 10_000  # distinct values counted per tally
LISTED = 5  # up to this many distinct values, the text lists each with its count
TOP = 3  # with more, the most frequent few when they are seen more often than the rest
VALUE_CHARS = 40  # a value as a summary quotes it
_SHARED = ""  # a value's source once a second source saw it


def _times(count: int) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count} times"


class Tally:
    """Counts of the values seen, their range and first/last; ``add`` with a ``source`` also counts the values
    several sources saw."""

    def __init__(self, limit: int = DISTINCT) -> None:
        self.limit = limit
        self.hits = 0
        self.counts: dict[str, int] = {}
        self.uncounted = 0  # hits of values past the limit
        self.first: str | None = None
        self.last = ""
        self.low: tuple[float, str] | None = None
        self.high: tuple[float, str] | None = None
        self.numeric = True
        self._source: dict[str, str] = {}  # value → the one source that saw it, or _SHARED
        self.shared = 0  # values seen from more than one source

    def add(self, value: str, source: str | None = None) -> None:
        self.hits += 1
        if self.first is None:
            self.first = value
        self.last = value
        if value in self.counts:
            self.counts[value] += 1
        elif len(self.counts) < self.limit:
            self.counts[value] = 1
        else:
            self.uncounted += 1
        if source is not None and value in self.counts:
            seen = self._source.setdefault(value, source)
            if seen != source and seen != _SHARED:
                self._source[value] = _SHARED
                self.shared += 1
        if self.numeric:
            self._range(value)

    def _range(self, value: str) -> None:
        try:
            number = float(value)
        except ValueError:
            self.numeric = False
            return
        if math.isnan(number):
            return
        if self.low is None or number < self.low[0]:
            self.low = (number, value)
        if self.high is None or number > self.high[0]:
            self.high = (number, value)

    @property
    def capped(self) -> bool:
        return self.uncounted > 0

    def most_common(self, count: int) -> list[tuple[str, int]]:
        """The ``count`` most frequent values, the first seen first among equals."""
        return sorted(self.counts.items(), key=lambda item: -item[1])[:count]

    def span(self) -> str | None:
        """``min..max`` of numeric values (None when one is not a number)."""
        if not self.numeric or self.low is None or self.high is None:
            return None
        return f"{_short(self.low[1])}..{_short(self.high[1])}"

    def distinct_text(self) -> str:
        return f"{len(self.counts)}{'+' if self.capped else ''} distinct"

    def text(self, hits: bool = True) -> str:
        """``498 hits, 3 distinct: 1 ×250, 2 ×200, 3 ×48``; with many values, how often they repeat
        (``629 distinct: 371 seen twice, 258 once``), the most frequent when some stand out, the range and
        the first and last value."""
        said = [f"{self.hits} hits"] if hits else []
        if len(self.counts) <= LISTED and not self.capped:
            values = ", ".join(f"{_short(v)} ×{n}" for v, n in self.most_common(LISTED))
            return ", ".join([*said, f"{self.distinct_text()}: {values}"])
        said.append(self.distinct_text() + self._repeats())
        ranked = self.most_common(TOP + 1)
        standing_out = [(v, n) for v, n in ranked[:TOP] if n > ranked[-1][1]]  # seen more often than the rest
        if standing_out:
            said.append("most " + ", ".join(f"{_short(v)} ×{n}" for v, n in standing_out))
        span = self.span()
        if span:
            said.append(span)
        said.append(f"first {_short(self.first or '')}, last {_short(self.last)}")
        return ", ".join(said)

    def brief(self) -> str:
        """Shorter, for one of several (a thread's): the values with their counts when few, else how many,
        how often they repeat and their range."""
        if len(self.counts) <= LISTED and not self.capped:
            return ", ".join(f"{_short(v)} ×{n}" for v, n in self.most_common(LISTED))
        span = self.span()
        return self.distinct_text() + self._repeats() + (f", {span}" if span else "")

    def _repeats(self) -> str:
        """How many values were seen how often: `` (371 seen twice, 258 once)``, `` (each once)``."""
        if self.capped:
            return ""
        groups: dict[int, int] = {}
        for count in self.counts.values():
            groups[count] = groups.get(count, 0) + 1
        if len(groups) == 1:
            count = next(iter(groups))
            return f" (each {_times(count)})"
        ordered = sorted(groups.items(), key=lambda group: (-group[1], -group[0]))
        shown = ", ".join(f"{values} seen {_times(count)}" for count, values in ordered[:3])
        return f" ({shown}{', …' if len(ordered) > 3 else ''})"


def _short(value: str) -> str:
    return clip(value, VALUE_CHARS)[0]
