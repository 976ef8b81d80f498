"""A call trace and a raised-exception log as the agent reads them: a summary line per function, then rows.

The backend hands finished records (``backends/recording.py``) in the order calls ended, a callee's before its
caller's. Rows list calls in the order they began, callees indented under their caller, so a thread's records
are held until the trace ends (or ``HELD`` of them wait: then the held ones go out, in the order they began, and
a call still open then is listed after what it called). Raised exceptions are rows as they come.

Every record is counted and summarised: per function its calls, the distinct arguments and returned values with
their counts, the exceptions by type, the threads when there are several, the time a call took; per exception
type how many were raised, caught and uncaught. Every row goes to the session's trace log, paged by
``debug_output(stream="trace")``; the answer holds the first rows and the last ones within a budget. A bound
(``max_hits``) ends the trace: the records in transit after it are dropped.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import math
import os
import re

from polydbg.backends.recording import CallRecord, RaisedRecord
from polydbg.session.inspection import clip, one_line
from polydbg.session.model import CallTrace
from polydbg.session.output import OutputBuffer

HELD = 5000  # call records held to be put in the order they began
ROW_VALUE_CHARS = 60  # a value in a row of the answer (the trace log has it as the backend gave it)
LOG_ROW_CHARS = 4000
ROW_CHARS = 300  # a row in the answer
FIRST_ROWS_BYTES = 550  # the first rows an answer holds, in bytes of their text
LAST_ROWS_BYTES = 250  # and the last ones, when the first do not reach them
LAST_ROWS = 6
SUMMARY_BYTES = 1100  # the summary lines of an answer together (the first function's always)
SUMMARY_VALUE_CHARS = 30  # a value as a summary quotes it
LISTED = 3  # the most frequent values a summary names
DISTINCT = 10_000  # distinct values counted per function and kind
# ``function (file:line)``, as records name callers and handlers (``…, if its with block's __exit__ swallows it``)
_PLACE = re.compile(r"\(([^()]+):(\d+)\)(?=$|, )")


def _line(text: str) -> str:
    """``one_line``, at the cost of a check for the values that hold no line break (nearly all)."""
    return text if text.isprintable() else one_line(text)


def relative(path: str, cwd: str | None) -> str:
    """A path as answers show it: relative to the session's directory when inside it."""
    if not cwd or not os.path.isabs(path):
        return path
    inside = os.path.relpath(path, cwd)
    return path if inside.startswith("..") else inside


@functools.lru_cache(maxsize=1024)  # a trace's callers and handlers are few places, each met many times
def place_text(place: str, cwd: str | None) -> str:
    """``function (file:line)`` with its file relative to the session's directory."""
    return _PLACE.sub(lambda m: f"({relative(m.group(1), cwd)}:{m.group(2)})", place)


def duration_text(microseconds: float) -> str:
    if microseconds >= 1_000_000:
        return f"{microseconds / 1_000_000:.2f} s"
    if microseconds >= 1000:
        return f"{microseconds / 1000:.1f} ms"
    return f"{microseconds / 1000:.2f} ms"


def _value(text: str, limit: int) -> str:
    """A value cut to ``limit``; a tuple's (``(…, error nil)``) keeps its last element when that is short: a wide
    first result does not push out the error after it."""
    text = _line(text)
    if len(text) <= limit or not (text.startswith("(") and text.endswith(")")):
        return clip(text, limit)[0]
    last = _last_element(text)
    if last is None or len(last) > limit // 2:
        return clip(text, limit)[0]
    return text[:limit - len(last) - 1] + "…" + last


def _last_element(text: str) -> str | None:
    """``, error nil)`` of ``(*T {…}, error nil)``: from the tuple's last top-level comma on (None: one element)."""
    depth, quote = 0, ""
    for index in range(len(text) - 2, 0, -1):
        char = text[index]
        if quote:
            quote = "" if char == quote and text[index - 1] != "\\" else quote
        elif char in "\"'":
            quote = char
        elif char in ")]}":
            depth += 1
        elif char in "([{":
            depth -= 1
        elif char == "," and depth == 0:
            return text[index:]
    return None


def call_row(record: CallRecord, cwd: str | None, value_chars: int | None, thread: bool) -> str:
    """One call: ``  parse_date(s='2024-13-01') → raised ValueError: …  ← caller (file:line) [thread] 0.2 ms``."""
    def value(text: str) -> str:
        return _value(text, value_chars) if value_chars is not None else _line(text)
    args = ", ".join(f"{name}={value(v)}" for name, v in record.args)
    if not record.ended:
        outcome = " … still running"
    elif record.raised is not None:
        outcome = f" → raised {value(record.raised)}"
    else:
        outcome = f" → {value(record.returned)}" if record.returned is not None else " → returned"
    text = "  " * record.depth + f"{record.function}({args}){outcome}"
    if record.caller and record.depth == 0:
        text += f"  ← {place_text(record.caller, cwd)}"
    if thread and record.thread:
        text += f" [{record.thread}]"
    if record.duration_us is not None and record.ended:
        text += f"  {duration_text(record.duration_us)}"
    return text


def raised_row(record: RaisedRecord, cwd: str | None, value_chars: int | None, thread: bool) -> str:
    """One exception: ``ValueError: month… at dates.py:14 in parse_date → caught in load (app.py:30)``."""
    message = _line(record.message) if value_chars is None else _value(record.message, value_chars)
    text = f"{record.type}: {message}" if record.message else record.type
    if record.file:
        text += f" at {relative(record.file, cwd)}" + (f":{record.line}" if record.line else "")
    if record.function:
        text += f" in {record.function}"
    text += f" → caught in {place_text(record.caught, cwd)}" if record.caught else " → uncaught"
    if thread and record.thread:
        text += f" [{record.thread}]"
    return text


class _Tally:
    """Distinct values and how often each came, up to ``DISTINCT`` of them."""

    def __init__(self) -> None:
        self.counts: collections.Counter[str] = collections.Counter()
        self.capped = False

    def add(self, value: str) -> None:
        if value in self.counts or len(self.counts) < DISTINCT:
            self.counts[value] += 1
        else:
            self.capped = True

    def text(self) -> str:
        """The most frequent values with their counts, and how many others there are."""
        common = self.counts.most_common(LISTED)
        cut = apart([v for v, _ in common], SUMMARY_VALUE_CHARS)
        shown = ", ".join(f"{text} ×{n}" for text, (_, n) in zip(cut, common, strict=True))
        others = len(self.counts) - len(common)
        if others:
            shown += f", +{others}{'+' if self.capped else ''} more distinct"
        return shown


def apart(values: list[str], chars: int) -> list[str]:
    """Distinct values each cut to ``chars``, those that would read alike cut from a little before where they differ
    (``…PreRelease: "foo", Metad…``): delve's ``*semver.Version {Major: 0, Mi… ×3, *semver.Version {Major: 0,
    Mi… ×1`` named two values, and nothing showed which was which."""
    cut = [clip(v, chars)[0] for v in values]
    shown = []
    for value, text in zip(values, cut, strict=True):
        alike = [other for other, said in zip(values, cut, strict=True) if said == text and other != value]
        if not alike:
            shown.append(text)
            continue
        at = max(_differs_at(value, other) for other in alike)
        start = max(0, at - chars // 3)
        shown.append(("…" if start else "") + clip(value[start:], chars - (1 if start else 0))[0])
    return shown


def _differs_at(one: str, other: str) -> int:
    return next((i for i, (a, b) in enumerate(zip(one, other, strict=False)) if a != b), min(len(one), len(other)))


Args = tuple[tuple[str, str], ...]


class _Args:
    """Distinct argument lists and how often each came. A summary names only the arguments that differ between
    calls (``key=2 ×2, key=3 ×1``), each cut on its own: a list cut as a whole showed two calls that differ in a
    later argument (``self=LRUCache({2: 2, 3: 3}, m… ×2, self=LRUCache({2: 2, 3: 3}, m… ×1``) alike."""

    def __init__(self) -> None:
        self.counts: collections.Counter[Args] = collections.Counter()
        self.capped = False

    def add(self, args: Args) -> None:
        key = tuple((name, _line(value)) for name, value in args)
        if key in self.counts or len(self.counts) < DISTINCT:
            self.counts[key] += 1
        else:
            self.capped = True

    def text(self) -> str | None:
        """The most frequent argument lists with their counts, how many others there are, and the arguments the
        same in every call; None when no call had any."""
        lists = list(self.counts)
        if not any(lists):
            return None
        alike: list[int] = []
        if len(lists) > 1 and not self.capped and len({tuple(n for n, _ in key) for key in lists}) == 1:
            alike = [i for i in range(len(lists[0])) if len({key[i] for key in lists}) == 1]
        shown: collections.Counter[Args] = collections.Counter()
        for key, count in self.counts.items():
            shown[tuple(part for i, part in enumerate(key) if i not in alike)] += count
        common = shown.most_common(LISTED)
        most = max(len(key) for key, _ in common)  # arguments in a list: each has 20 characters or more
        width = SUMMARY_VALUE_CHARS if most <= 1 else max(20, 2 * SUMMARY_VALUE_CHARS // most)
        text = ", ".join((", ".join(clip(f"{name}={value}", width)[0] for name, value in key) or "()") + f" ×{n}"
                         for key, n in common)
        others = len(shown) - len(common)
        if others:
            text += f", +{others}{'+' if self.capped else ''} more distinct"
        if alike:
            text += f" ({', '.join(lists[0][i][0] for i in alike)}: the same in every call)"
        return text


class _Function:
    """What one function's calls took and gave over a trace."""

    def __init__(self) -> None:
        self.calls = 0
        self.depth = math.inf  # the least depth it was called at (0: a function the agent named)
        self.running = 0
        self.args = _Args()
        self.returned = _Tally()
        self.raised = _Tally()
        self.threads = _Tally()
        self.timed = 0
        self.total_us = 0.0
        self.max_us = 0.0

    def add(self, record: CallRecord) -> None:
        self.calls += 1
        self.depth = min(self.depth, record.depth)
        self.args.add(record.args)
        if not record.ended:
            self.running += 1
        elif record.raised is not None:
            self.raised.add(record.raised.partition(": ")[0])
        elif record.returned is not None:
            self.returned.add(_line(record.returned))
        if record.thread:
            self.threads.add(record.thread)
        if record.duration_us is not None and record.ended:
            self.timed += 1
            self.total_us += record.duration_us
            self.max_us = max(self.max_us, record.duration_us)

    def text(self, function: str) -> str:
        parts = [f"{function}: {self.calls} call{'s' if self.calls != 1 else ''}"
                 + (f" ({self.running} still running)" if self.running else "")]
        args = self.args.text()
        if args:
            parts.append(f"args {args}")
        if self.returned.counts:
            parts.append(f"returned {self.returned.text()}")
        if self.raised.counts:
            parts.append(f"raised {self.raised.text()}")
        if len(self.threads.counts) > 1:
            parts.append(f"threads {self.threads.text()}")
        if self.timed:
            parts.append(f"{duration_text(self.total_us / self.timed)} avg, {duration_text(self.max_us)} max")
        return "; ".join(parts)


class _Raised:
    """One exception type's tally: raised, caught, uncaught, and its first message."""

    def __init__(self, message: str) -> None:
        self.count = 0
        self.caught = 0
        self.message = message

    def text(self, type_name: str) -> str:
        uncaught = self.count - self.caught
        how = ", ".join(p for p in (f"{self.caught} caught" if self.caught else "",
                                    f"{uncaught} uncaught" if uncaught else "") if p)
        first = f": {_value(self.message, SUMMARY_VALUE_CHARS * 2)}" if self.message else ""
        return f"{type_name} ×{self.count} ({how}){first}"


Record = CallRecord | RaisedRecord


def row(record: Record, cwd: str | None, value_chars: int | None, thread: bool) -> str:
    if isinstance(record, CallRecord):
        return call_row(record, cwd, value_chars, thread)
    return raised_row(record, cwd, value_chars, thread)


class _Rows:
    """The rows of one kind an answer holds: the first within a budget, then the last few; the trace log's cursor
    just after the first, where the ones left out start. Rows are written to the log as they come."""

    def __init__(self, log: OutputBuffer, cwd: str | None, first_bytes: int, prefix: str = "") -> None:
        self.log = log
        self.cwd = cwd
        self.prefix = prefix
        self.first_bytes = first_bytes
        self.first: list[Record] = []
        self.first_at: list[int] = []  # the trace log's cursor of each first row (an answer short of room cuts there)
        self.used = 0
        self.after_first: int | None = None
        self.last: collections.deque[Record] = collections.deque(maxlen=LAST_ROWS)
        self.count = 0

    def size(self, record: Record) -> int:
        return len(row(record, self.cwd, ROW_VALUE_CHARS, True).encode()) + 1

    def add(self, record: Record) -> None:
        self.count += 1
        if self.after_first is None:
            size = self.size(record)
            if not self.first or self.used + size <= self.first_bytes:
                self.first.append(record)
                self.first_at.append(self.log.total)
                self.used += size
            else:
                self.after_first = self.log.total
        self.log.append("trace", self.prefix + clip(row(record, self.cwd, None, True), LOG_ROW_CHARS)[0] + "\n")
        if self.after_first is not None:
            self.last.append(record)

    def shown(self, thread: bool) -> tuple[list[str], list[str], int]:
        """The first rows and the last ones that fit their budget, as text, and how many rows are between."""
        last: list[Record] = []
        budget = LAST_ROWS_BYTES
        for record in reversed(self.last):
            size = self.size(record)
            if last and size > budget:
                break
            last.insert(0, record)
            budget -= size
        def text(records: list[Record]) -> list[str]:
            return [row(r, self.cwd, ROW_VALUE_CHARS, thread) for r in records]
        return text(self.first), text(last), self.count - len(self.first) - len(last)


class CallLog:
    """The records of one trace: the sinks the backend calls, the summaries, the rows."""

    def __init__(self, log: OutputBuffer, cwd: str | None, max_records: int, both: bool = False) -> None:
        self.max_records = max_records
        self.total = 0
        self.done = asyncio.Event()  # max_records reached
        self.functions: dict[str, _Function] = {}
        self.raised: dict[str, _Raised] = {}
        self.threads: set[str] = set()
        budget = FIRST_ROWS_BYTES // 2 if both else FIRST_ROWS_BYTES
        self.call_rows = _Rows(log, cwd, budget)
        self.raised_rows = _Rows(log, cwd, budget, prefix="raised ")
        self.held: list[CallRecord] = []

    def _counted(self, thread: str | None) -> bool:
        if self.total >= self.max_records:
            return False  # in transit when the bound ended the trace
        self.total += 1
        if self.total >= self.max_records:
            self.done.set()
        if thread:
            self.threads.add(thread)
        return True

    def call(self, record: CallRecord) -> None:
        """The call sink: one finished (or, at the end, still running) call."""
        if not self._counted(record.thread):
            return
        tally = self.functions.get(record.function)
        if tally is None:
            tally = self.functions[record.function] = _Function()
        tally.add(record)
        self.held.append(record)
        if len(self.held) >= HELD:
            self.flush()

    def exception(self, record: RaisedRecord) -> None:
        """The raised sink: one exception the user's code raised."""
        if not self._counted(record.thread):
            return
        tally = self.raised.get(record.type)
        if tally is None:
            tally = self.raised[record.type] = _Raised(record.message)
        tally.count += 1
        tally.caught += record.caught is not None
        self.raised_rows.add(record)

    def flush(self) -> None:
        """The held calls as rows, in the order they began."""
        for record in sorted(self.held, key=_began):
            self.call_rows.add(record)
        self.held.clear()

    def summary(self) -> list[str]:
        # the functions the agent named first, the most called first; then the exceptions, the most raised first
        functions = sorted(self.functions.items(), key=lambda i: (i[1].depth, -i[1].calls))
        raised = sorted(self.raised.items(), key=lambda i: -i[1].count)
        listed = [*(f.text(name) for name, f in functions), *("raised " + t.text(name) for name, t in raised)]
        lines: list[str] = []
        size = 0
        for n, text in enumerate(listed):
            text = clip(text, SUMMARY_BYTES // 2)[0]
            size += len(text.encode()) + 1
            if lines and size > SUMMARY_BYTES:
                lines.append(f"… and {len(listed) - n} more (every row: debug_output(stream=\"trace\"))")
                break
            lines.append(text)
        return lines

    def result(self, note: str | None) -> CallTrace:
        """What the answer holds (after ``flush``); rows name threads when there were several."""
        several = len(self.threads) > 1
        calls, last_calls, calls_between = self.call_rows.shown(several)
        raised, last_raised, raised_between = self.raised_rows.shown(several)
        cursors = [rows.after_first for rows in (self.call_rows, self.raised_rows) if rows.after_first is not None]
        called = sum(f.calls for f in self.functions.values())
        return CallTrace(calls=called, raised=self.total - called, summary=self.summary(), rows=calls,
                         last_rows=last_calls or None, raised_rows=raised + last_raised or None,
                         skipped=calls_between + raised_between,
                         more_cursor=min(cursors) if cursors else None, note=note,
                         row_cursors=self.call_rows.first_at[:len(calls)])


def _began(record: CallRecord) -> float:
    """A held record's place: when it began (a record that does not say comes where it ended)."""
    return record.started if record.started is not None else math.inf
