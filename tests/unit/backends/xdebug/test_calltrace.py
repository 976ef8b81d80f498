"""Xdebug's computerized trace read into call records (calltrace.py), on lines as Xdebug 3.2 writes them: names
matched as the agent writes them, arguments named from the source, return values, a call an exception ended
(Xdebug's ``*uninitialized*`` return), callees to depth, a partial line, the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends.recording import CallRecord, CallSpec
from polydbg.backends.xdebug.calltrace import Params, TraceReader, Wanted

SOURCE = """<?php
namespace App;
class Calc {
    public function add(int $a, int $b = 2): int { return $a + $b; }
}
function boom($x) { throw new \\RuntimeException("bad $x"); }
function outer(array $items, string ...$rest) { return count($items); }
"""


def trace(file: str) -> str:
    lines = [
        "Version: 3.2.0", "File format: 4", "TRACE START [2026-11-29 10:39:54.250102]",
        f"1\t0\t0\t0.000546\t395400\t{{main}}\t1\t\t{file}\t0\t0",
        f"2\t1\t0\t0.000600\t396176\tApp\\outer\t1\t\t{file}\t9\t1\t[0 => 1]",
        f"3\t2\t0\t0.000610\t396176\tApp\\Calc->add\t1\t\t{file}\t7\t2\t1\t2",
        "3\t2\t1\t0.000620\t396176",
        "3\t2\tR\t\t\t3",
        f"3\t3\t0\t0.000630\t396176\tcount\t0\t\t{file}\t7\t1\t[0 => 1]",
        "3\t3\t1\t0.000631\t396176",
        "3\t3\tR\t\t\t1",
        "2\t1\t1\t0.000700\t396176",
        "2\t1\tR\t\t\t1",
        f"2\t4\t0\t0.000710\t396176\tApp\\boom\t1\t\t{file}\t10\t1\t'x\\'y'",
    ]
    return "\n".join(lines) + "\n"


UNWIND = "2\t4\t1\t0.000800\t396176\n2\t4\tR\t\t\t*uninitialized*\n"


def read(tmp_path: Path, *functions: str, depth: int = 0, max_calls: int = 100) -> tuple[TraceReader, list[CallRecord]]:
    source = tmp_path / "app.php"
    source.write_text(SOURCE)
    records: list[CallRecord] = []
    reader = TraceReader(CallSpec(functions, depth, max_calls), Wanted(functions), Params(), records.append, "app.php")
    text = trace(str(source)).encode()
    reader.feed(text[:100])  # a line cut in two waits for its end
    reader.feed(text[100:])
    return reader, records


def test_a_method_named_as_the_agent_writes_it_with_its_parameters_from_the_source(tmp_path: Path) -> None:
    for name in ("Calc->add", "App\\Calc::add", "calc.add", "add"):
        _, records = read(tmp_path, name)
        [call] = records
        assert call.function == "App\\Calc->add" and call.args == (("a", "1"), ("b", "2")), name
        assert call.returned == "3" and call.raised is None and call.depth == 0
        assert call.caller == "App\\outer (app.php:7)" and call.line == 4 and call.file == str(tmp_path / "app.php")
        assert call.duration_us == pytest.approx(10.0)


def test_callees_to_depth_are_the_user_s_functions(tmp_path: Path) -> None:
    _, records = read(tmp_path, "outer", depth=1)
    assert [(r.function, r.depth, r.returned) for r in records] == [("App\\Calc->add", 1, "3"), ("App\\outer", 0, "1")]
    assert records[1].args == (("items", "[0 => 1]"),)


def test_an_exception_that_ended_a_call_and_a_call_still_running(tmp_path: Path) -> None:
    reader, records = read(tmp_path, "boom")
    assert records == []
    reader.thrown(reader.offset, "RuntimeException: bad x'y", caught_level=1)
    reader.feed(UNWIND.encode())
    reader.finish()
    [call] = records
    assert call.args == (("x", "'x\\'y'"),) and call.returned is None and call.raised == "RuntimeException: bad x'y"
    reader, records = read(tmp_path, "boom")
    reader.finish()
    assert [(r.function, r.ended) for r in records] == [("App\\boom", False)]


def test_a_file_qualified_name_and_a_name_never_called_with_the_closest(tmp_path: Path) -> None:
    reader, records = read(tmp_path, "app.php:boom", "other.php:add")
    reader.finish()
    assert [(r.function, r.ended) for r in records] == [("App\\boom", False)]  # add is not other.php's
    reader, _ = read(tmp_path, "Calc->ad", "nothing_like_it")
    assert reader.wanted.missing() == ["Calc->ad was never called (closest names called: App\\Calc->add)",
                                       "nothing_like_it was never called"]


def test_max_calls_bounds_the_records(tmp_path: Path) -> None:
    reader, records = read(tmp_path, "add", "outer", "count", max_calls=1)
    assert len(records) == 1 and reader.dropped == 2


def test_a_trace_begun_mid_run_names_the_running_calls_as_callers(tmp_path: Path) -> None:
    source = tmp_path / "app.php"
    source.write_text(SOURCE)
    records: list[CallRecord] = []
    reader = TraceReader(CallSpec(("add",)), Wanted(("add",)), Params(), records.append, "app.php")
    reader.seed(["{main}", "App\\outer"])  # stopped in outer: its entry and main's are not in the file
    file = str(source)
    reader.feed("\n".join([
        f"3\t7\t0\t0.1\t1\tApp\\Calc->add\t1\t\t{file}\t7\t2\t1\t2", "3\t7\t1\t0.2\t1", "3\t7\tR\t\t\t3",
        "2\t1\t1\t0.3\t1",  # outer's exit (begun before the trace): its seeded frame ends
        f"2\t8\t0\t0.4\t1\tApp\\Calc->add\t1\t\t{file}\t11\t2\t5\t6", "2\t8\t1\t0.5\t1", "2\t8\tR\t\t\t11",
        ""]).encode())
    assert [r.caller for r in records] == ["App\\outer (app.php:7)", "{main} (app.php:11)"]
