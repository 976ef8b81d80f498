"""OutputBuffer: cursor paging, bounded retention, stream filters, UTF-8 safe cuts."""

from __future__ import annotations

import time

from polydbg.session.output import DEFAULT_CAPACITY, OutputBuffer, OutputSlice, OutputTail, TraceLines, whole_lines

MIXED = "plain ascii, é ü ß, € ✓ 世界, 🐍🚀 emoji, end\n"  # 1-, 2-, 3- and 4-byte characters


def page_all(buffer: OutputBuffer, max_bytes: int, cursor: int | None = 0,
             streams: frozenset[str] | None = None) -> tuple[list[OutputSlice], int]:
    """Read from ``cursor`` until ``more`` is false; checks every page continues where the last ended."""
    pages: list[OutputSlice] = []
    position = cursor
    for _ in range(100_000):
        page = buffer.read(position, max_bytes, streams)
        pages.append(page)
        if position is not None and pages[-1].dropped == 0:
            assert page.next_cursor >= position
        if not page.more:
            return pages, page.next_cursor
        assert page.next_cursor != position, f"no progress at cursor {position} with max_bytes={max_bytes}"
        position = page.next_cursor
    raise AssertionError("paging did not terminate")


def retained(buffer: OutputBuffer) -> int:
    return sum(len(chunk.data) for chunk in buffer._chunks)


def test_empty_buffer() -> None:
    buffer = OutputBuffer()
    assert buffer.read(None, 100) == OutputSlice(text="", next_cursor=0, dropped=0, more=False)
    assert buffer.read(0, 100) == OutputSlice(text="", next_cursor=0, dropped=0, more=False)
    buffer.append("stdout", "")
    assert buffer.total == 0


def test_read_everything_and_nothing_new() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "hello ")
    buffer.append("stderr", "world\n")
    page = buffer.read(None, 1000)
    assert page == OutputSlice(text="hello world\n", next_cursor=12, dropped=0, more=False)
    assert buffer.read(page.next_cursor, 1000) == OutputSlice(text="", next_cursor=12, dropped=0, more=False)
    buffer.append("stdout", "again\n")
    assert buffer.read(page.next_cursor, 1000).text == "again\n"


def test_cursor_paging_continues_exactly() -> None:
    buffer = OutputBuffer()
    expected = ""
    for i in range(200):
        stream = ("stdout", "stderr", "console")[i % 7 % 3]
        line = f"line {i:03d} on {stream}\n"
        buffer.append(stream, line)
        expected += line
    for max_bytes in (1, 7, 64, 1000, 10_000):
        pages, end = page_all(buffer, max_bytes)
        assert "".join(p.text for p in pages) == expected
        assert end == buffer.total == len(expected)
        assert all(len(p.text.encode()) <= max_bytes for p in pages)
        assert all(p.dropped == 0 for p in pages)
        assert all(p.more for p in pages[:-1])


def test_page_boundaries_are_byte_cursors() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "0123456789")
    buffer.append("stderr", "abcdefghij")
    first = buffer.read(0, 4)
    assert (first.text, first.next_cursor, first.more) == ("0123", 4, True)
    across = buffer.read(8, 4)  # spans the two chunks
    assert (across.text, across.next_cursor) == ("89ab", 12)
    tail = buffer.read(18, 100)
    assert (tail.text, tail.next_cursor, tail.more) == ("ij", 20, False)


def test_cursor_past_the_end_is_clamped() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "abc")
    assert buffer.read(10_000, 10) == OutputSlice(text="", next_cursor=3, dropped=0, more=False)


def test_eviction_reports_dropped_bytes_for_a_stale_cursor() -> None:
    buffer = OutputBuffer(capacity=100)
    text = ""
    for i in range(20):  # alternate streams so chunks are not merged
        line = f"{i:02d}:" + "x" * 6 + "\n"  # 10 bytes
        buffer.append("stdout" if i % 2 else "stderr", line)
        text += line
    assert buffer.total == 200
    assert buffer._size <= 100
    assert retained(buffer) == buffer._size
    first = buffer.first_cursor
    assert first == 100

    stale = buffer.read(0, 1000)
    assert stale.dropped == first
    assert stale.text == text[first:]
    assert stale.next_cursor == 200

    partly_stale = buffer.read(42, 15)
    assert partly_stale.dropped == first - 42
    assert partly_stale.text == text[first:first + 15]
    resumed = buffer.read(partly_stale.next_cursor, 1000)
    assert resumed.dropped == 0
    assert partly_stale.text + resumed.text == text[first:]

    assert buffer.read(None, 1000).dropped == 0  # None means "oldest retained": nothing missed
    assert buffer.read(first, 1000).dropped == 0


def test_one_huge_append_keeps_its_tail() -> None:
    buffer = OutputBuffer(capacity=100)
    buffer.append("stdout", "start\n")
    text = "".join(f"{i:09d}\n" for i in range(50))  # 500 bytes in one write
    buffer.append("stdout", text)
    assert buffer._size == retained(buffer) == 100
    assert buffer.first_cursor == 406
    page = buffer.read(None, 1000)
    assert page.text == text[-100:]
    assert buffer.read(0, 1000).dropped == 406


def test_same_stream_writes_merge_and_still_evict() -> None:
    buffer = OutputBuffer(capacity=1000)
    for i in range(1000):
        buffer.append("stdout", f"{i:04d}\n")  # 5 bytes each, all merged into one chunk
    assert buffer._size <= 1000
    page = buffer.read(None, 10_000)
    assert page.text.endswith("0999\n")
    assert page.text == "".join(f"{i:04d}\n" for i in range(800, 1000))


def test_eviction_never_leaves_half_a_character() -> None:
    buffer = OutputBuffer(capacity=10)
    buffer.append("stdout", "€" * 10)  # 30 bytes in one chunk; 30 - 10 = 20 is not a character boundary
    assert buffer._size <= 10
    page = buffer.read(None, 100)
    assert "\ufffd" not in page.text
    assert page.text == "€€€"
    assert buffer.read(0, 100).dropped == buffer.first_cursor == buffer.total - len(page.text.encode())


def test_100_mb_stays_bounded_and_is_fast() -> None:
    buffer = OutputBuffer()
    line = "y" * 1023 + "\n"
    total = 100 * 1024 * 1024
    started = time.perf_counter()
    for i in range(total // len(line)):
        buffer.append("stderr" if i % 1000 == 999 else "stdout", line)
        assert buffer._size <= DEFAULT_CAPACITY
    elapsed = time.perf_counter() - started
    assert buffer.total == total
    assert buffer._size == retained(buffer) <= DEFAULT_CAPACITY
    assert buffer._size > DEFAULT_CAPACITY - 64 * 1024  # bounded, yet not needlessly emptied
    assert len(buffer._chunks) <= DEFAULT_CAPACITY // (32 * 1024)
    assert elapsed < 3.0, f"appending 100 MB took {elapsed:.2f} s"

    stale = buffer.read(0, 100)
    assert stale.dropped == buffer.first_cursor >= total - DEFAULT_CAPACITY
    tail = buffer.read(total - 2048, 10_000)
    assert tail == OutputSlice(text=line * 2, next_cursor=total, dropped=0, more=False)


def test_stream_filter() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "out1\n")
    buffer.append("stderr", "err1\n")
    buffer.append("stdout", "out2\n")
    buffer.append("console", "con1\n")
    buffer.append("stderr", "err2\n")
    buffer.append("stdout", "out3\n")

    errors = buffer.read(0, 1000, frozenset({"stderr"}))
    assert errors.text == "err1\nerr2\n"
    assert errors.next_cursor == buffer.total  # trailing stdout is skipped, not re-read next time

    mixed = buffer.read(0, 1000, frozenset({"stdout", "console"}))
    assert mixed.text == "out1\nout2\ncon1\nout3\n"

    assert buffer.read(0, 1000, frozenset({"important"})).text == ""
    assert buffer.read(0, 1000, frozenset()).text == ""


def test_stream_filter_paging_continues_exactly() -> None:
    buffer = OutputBuffer()
    wanted = ""
    for i in range(60):
        stream = "stderr" if i % 3 == 0 else "stdout"
        line = f"{stream}-{i}-✓\n"
        buffer.append(stream, line)
        if stream == "stderr":
            wanted += line
    for max_bytes in (1, 5, 13, 100):
        pages, end = page_all(buffer, max_bytes, streams=frozenset({"stderr"}))
        assert "".join(p.text for p in pages) == wanted
        assert end == buffer.total
        assert "stdout" not in "".join(p.text for p in pages)


def test_never_splits_a_utf8_character() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", MIXED)
    buffer.append("stderr", MIXED)
    for max_bytes in range(1, 13):
        pages, end = page_all(buffer, max_bytes)
        assert end == buffer.total
        assert "".join(p.text for p in pages) == MIXED * 2, max_bytes
        for page in pages:
            assert "\ufffd" not in page.text, (max_bytes, page)
            size = len(page.text.encode())
            # a page holds at most max_bytes, unless one character alone is larger than the budget
            assert size <= max_bytes or len(page.text) == 1, (max_bytes, page)
            assert size > 0 or not page.more, (max_bytes, page)


def test_budget_smaller_than_the_next_character_still_progresses() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "🐍a")
    page = buffer.read(0, 1)
    assert page.text == "🐍"
    assert page.next_cursor == 4
    assert page.more
    assert buffer.read(page.next_cursor, 1).text == "a"


def test_a_small_write_after_an_oversized_one_keeps_the_retained_tail() -> None:
    buffer = OutputBuffer(capacity=1000)
    buffer.append("stdout", "a" * 5000)
    buffer.append("stdout", "b" * 20)
    kept = buffer.read(0, 10_000)
    assert kept.text == "a" * 980 + "b" * 20
    assert kept.dropped == 4020 and buffer.first_cursor == 4020


def test_terminal_escapes_are_taken_out_even_when_a_write_cuts_one() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "\x1b[1;31mred\x1b[0m plain \x1b]0;title\x07done\n")
    buffer.append("stdout", "cut \x1b[3")
    buffer.append("stderr", "other stream\n")
    buffer.append("stdout", "2mgreen\x1b[0m\n")
    assert buffer.read(None, 1000, frozenset({"stdout"})).text == "red plain done\ncut green\n"
    assert buffer.read(None, 1000, frozenset({"stderr"})).text == "other stream\n"


def test_the_programs_own_output_is_counted_apart_from_debugger_notes() -> None:
    buffer = OutputBuffer()
    buffer.append("console", "[child process 7 started: debugged in this session]\n")
    assert (buffer.total > 0, buffer.program_total) == (True, 0)
    buffer.append("stdout", "ok\n")
    buffer.append("stderr", "warn\n")
    assert buffer.program_total == len("ok\nwarn\n")


def test_trace_lines_go_to_their_trace_and_never_to_the_output() -> None:
    lines = TraceLines()
    taken: list[str] = []
    lines.claim("<<polydbg-trace-s1-2>>", taken.append)
    assert lines.split("a logpoint\n<<polydbg-trace-s1-2>>/a.py:3\x1f1\nanother\n") == "a logpoint\nanother\n"
    assert taken == ["/a.py:3\x1f1"]
    # a line of another trace (an earlier one whose hits arrive late) is dropped; so is any after the release
    assert lines.split("<<polydbg-trace-s1-1>>/a.py:3\x1f9\n") == ""
    lines.release()
    assert lines.split("<<polydbg-trace-s1-2>>/a.py:3\x1f2\r\nlast\n") == "last\n"
    assert taken == ["/a.py:3\x1f1"]


def test_a_trace_line_cut_by_the_end_of_a_chunk_waits_for_its_end() -> None:
    lines = TraceLines()
    taken: list[str] = []
    lines.claim("<<polydbg-trace-s1-1>>", taken.append)
    whole = "<<polydbg-trace-s1-1>>/a.py:3\x1f1\n<<polydbg-trace-s1-1>>/a.py:3\x1f2\n"
    for cut in range(len(whole) + 1):
        assert lines.split(whole[:cut]) + lines.split(whole[cut:]) == ""
    assert taken == ["/a.py:3\x1f1", "/a.py:3\x1f2"] * (len(whole) + 1)
    # a logpoint line that is no trace line is never held, with or without its end
    assert lines.split("x < y") == "x < y"
    assert lines.split("<") == ""  # it may start a trace line: held until the rest says
    assert lines.split(" is a comparison\n") == "< is a comparison\n"


def test_the_tail_of_some_streams_since_a_cursor() -> None:
    buffer = OutputBuffer()
    buffer.append("stdout", "old\n")
    since = buffer.total
    for i in range(30):
        buffer.append("logpoints", f"log {i:02d}\n")
        buffer.append("stdout", f"out {i:02d}\n")
    assert buffer.tail(buffer.total, 100, frozenset({"stdout"})) is None  # nothing since
    assert buffer.tail(since, 100, frozenset({"stderr"})) is None  # nothing of that stream
    logs = buffer.tail(since, 30, frozenset({"logpoints"}))
    assert logs == OutputTail(text="log 26\nlog 27\nlog 28\nlog 29\n", skipped=26 * 7, first=since)  # whole lines
    whole = buffer.tail(since, 10_000, frozenset({"stdout"}))
    assert whole is not None and whole.skipped == 0 and whole.text == "".join(f"out {i:02d}\n" for i in range(30))
    assert whole.first == since + 7  # the first stdout byte after the cursor
    # a cut inside one long line starts at a character
    buffer.append("console", "é" * 100)
    cut = buffer.tail(since, 11, frozenset({"console"}))
    assert cut is not None and cut.text == "é" * 5 and cut.skipped == 190


def test_a_page_of_a_table_ends_at_a_rows_end() -> None:
    buffer = OutputBuffer()
    buffer.append("trace", "row 1\nrow 2\nrow 3\n")
    page = whole_lines(buffer.read(0, 9))
    assert page == OutputSlice(text="row 1\n", next_cursor=6, dropped=0, more=True)
    assert whole_lines(buffer.read(6, 100)).text == "row 2\nrow 3\n"
    assert whole_lines(buffer.read(0, 3)).text == "row"  # a row longer than the page is cut
