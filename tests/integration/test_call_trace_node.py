"""Call traces on Node (``NodeBackend.record_calls``), on real Node: a recursive function, a method that throws
(caught by its caller), a module loaded after the trace began, a worker thread's function, unknown names; callees to
a depth (a method called as this.x(), another module's function, recursion, a throwing callee, async TypeScript).

The session drives the program (launched at its entry, then run to its end); the records come from the
backend through the sink, as the session's call trace reads them.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator

import pytest

from polydbg.backends.recording import CallSpec
from polydbg.errors import UsageError
from polydbg.session.session import Session
from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.recorded_calls import CALLS, at_entry, launched_with_trace, run_recording

PROGRAM = str(CALLS / "calls.js")
CALLEES = str(CALLS / "callees.js")


def require_tsx() -> None:
    require("node")
    if not (PROGRAMS / "node" / "node_modules" / "tsx").is_dir():
        reason = "tests/programs/node has no node_modules: run npm ci there (.ci/run does)"
        if os.environ.get("CI"):  # under CI a missing toolchain fails, never skips
            pytest.fail(reason)
        pytest.skip(reason)


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    require("node")
    async with at_entry("javascript", "node", PROGRAM, 20) as session:
        yield session


async def test_a_recursive_function_every_call_with_its_argument_value_and_caller(session: Session) -> None:
    records, notes = await run_recording(session, "fib")
    assert notes == []
    assert len(records) == 25  # fib(6) calls fib 25 times
    assert all(r.function == "fib" and r.ended and r.thread == "main" for r in records)
    top = records[-1]  # the outermost call ends last, and began first
    assert top.started is not None and all(r.started is not None and r.started > top.started for r in records[:-1])
    assert top.args == (("n", "6"),) and top.returned == "8"
    assert top.caller is not None and top.caller.endswith(f"(calls.js:{line_of('calls/calls.js', 'fib(6)')})")
    assert {r.caller for r in records[:-1]} == {f"fib (calls.js:{line_of('calls/calls.js', 'return fib(n - 1)')})"}
    assert sorted(int(r.returned or -1) for r in records if r.args == (("n", "2"),)) == [1] * 5
    assert top.file == PROGRAM and top.line == line_of("calls/calls.js", "function fib")
    assert top.duration_us is not None and top.duration_us > 0


async def test_a_method_that_throws_records_the_exception_and_the_program_goes_on(session: Session) -> None:
    records, _ = await run_recording(session, "Parser.parse", "parseAll")
    parses = [r for r in records if r.function == "Parser.parse"]
    assert [(r.args, r.returned, r.raised) for r in parses] == [
        ((("text", '"ab"'),), '{length: 2, text: "ab"}', None),
        ((("text", '""'),), None, "Error: empty input"),
        ((("text", '"xyz"'),), '{length: 3, text: "xyz"}', None)]
    assert all(r.caller is not None and r.caller.startswith("parseAll (calls.js:") for r in parses)
    [whole] = [r for r in records if r.function == "parseAll"]
    assert whole.returned == "2" and whole.args == (("parser", "Parser {}"), ("texts", '["ab", "", "xyz"]'))
    assert "skipped: empty input" in session.read_output(None, 10_000, "stdout").text


async def test_functions_of_a_module_loaded_later_and_of_a_worker_thread(session: Session) -> None:
    records, notes = await run_recording(session, "monthOf", "calls_worker.js:square")
    assert notes == []
    [month] = [r for r in records if r.function == "monthOf"]
    assert month.args == (("date", '"2024-03-09"'),) and month.returned == "3" and month.thread == "main"
    squares = [r for r in records if r.function == "square"]
    assert [(r.args, r.returned) for r in squares] == [((("x", str(i)),), str(i * i)) for i in range(1, 5)]
    assert {r.thread for r in squares} == {"worker 1 (calls_worker.js)"}


async def test_max_calls_bounds_the_records(session: Session) -> None:
    records, _ = await run_recording(session, "fib", max_calls=5)
    assert len(records) == 5


async def test_an_unknown_name_is_refused_with_the_closest(session: Session) -> None:
    with pytest.raises(UsageError, match=r"no function fibb .*closest: fib"):
        await session.core.backend.record_calls(CallSpec(("fibb",)), lambda record: None)
    with pytest.raises(UsageError, match=r"Parser\.parse"):
        await session.core.backend.record_calls(CallSpec(("Parser.prase",)), lambda record: None)


async def test_a_launch_records_a_whole_run_through_the_tools(tools: Tools) -> None:
    require("node")
    trace, rows = await launched_with_trace(tools, ["fib", "Parser.parse", "monthOf"], program=PROGRAM)
    assert trace["calls"] == 29
    summary = "\n".join(trace["summary"])
    assert "fib: 25 calls" in summary and "monthOf: 1 call;" in summary
    assert 'returned {length: 2, text: "ab"} ×1' in summary and "raised Error ×1" in summary
    assert any(row.startswith('Parser.parse(text="") → raised Error: empty input') for row in rows)


async def test_a_test_by_name_records_the_code_it_tests_beside_its_project(tools: Tools) -> None:
    require("node")
    project = PROGRAMS / "node" / "runners" / "nodetest"  # its tests require ../cart.js
    report = await tools("debug_launch", test="takes the discount", cwd=str(project), trace=["discounted", "total"])
    assert report["reason"] == "exception"  # the test's failing assertion, where the test runner stops it
    outer, inner = report["trace"]["rows"]  # in the order they began
    assert outer.startswith("discounted(prices=[10, 20, 30], percent=10) → 53  ← (anonymous) (cart.test.js:15)")
    assert inner.startswith("total(prices=[10, 20, 30]) → 60  ← discounted (cart.js:11)")


async def test_async_typescript_functions_record_what_their_code_returned(tools: Tools) -> None:
    require_tsx()
    program = PROGRAMS / "node" / "tsx" / "awaits.ts"  # loaded through tsx: V8 runs its output, not the file
    trace, _ = await launched_with_trace(tools, ["leaf", "middle", "top"], program=str(program))
    def awaiting(marker: str) -> str:
        return f"(awaits.ts:{line_of('node/tsx/awaits.ts', marker)})"
    assert [row.rsplit(" ", 2)[0].rstrip() for row in trace["rows"]] == [  # in the order they began
        f"top() → 22  ← start {awaiting('top().then')}",
        f"middle(order={{count: 3, price: 7}}) → 22  ← top {awaiting('top awaits')}",
        f"leaf(order={{count: 3, price: 7}}) → 21  ← middle {awaiting('middle awaits')}"]


async def test_a_call_the_program_ended_inside_is_recorded_unended() -> None:
    require("node")
    async with at_entry("javascript", "node", str(CALLS / "exits.js"), 20) as session:
        records, _ = await run_recording(session, "shutdown")
    [call] = records
    assert (call.function, call.args, call.ended, call.returned) == ("shutdown", (("code", "0"),), False, None)


async def callee_rows(tools: Tools, depth: int, *functions: str) -> list[str]:
    """The rows of a trace of ``functions`` (``total``) of callees.js to ``depth``, begun at its entry, durations
    left out."""
    require("node")
    await tools("debug_launch", program=CALLEES, stop_on_entry=True)
    result = await tools("debug_trace", functions=list(functions or ["total"]), depth=depth)
    assert result["stopped_because"] == "exited", result
    assert result["report"]["output"]["text"] == "total 9\nafter 10 1\ngather 50\n", result
    await tools("debug_terminate")
    calls = result["calls"]
    assert calls["skipped"] == 0, calls
    return [re.sub(r"  [\d.]+ m?s$", "", row) for row in calls["rows"] + calls.get("last_rows", [])]


async def test_callees_to_depth_one_are_the_programs_own_and_only_those_the_recorded_call_makes(
        tools: Tools) -> None:
    """weight is called through map's callback (an arrow, not bound: still one level below), once throwing (caught
    by total); a method called as this.times() binds by name; pad is another module's; the recursions of dive and
    countdown are below the depth (dive's, ended by an exception safeDepth catches, ends no recorded call); weight
    and countdown called again after total are not its callees; Number, trim, map, padStart are not the program's."""
    assert await callee_rows(tools, 1) == [
        f'total(words=["1", " 2"]) → 9  ← (anonymous) (callees.js:{line_of("calls/callees.js", "total([")})',
        '  weight(word="1") → 2', '  weight(word=" 2") → 4', '  weight(word="x") → raised TypeError: not a number: x',
        "  Scale.apply(x=5) → 6", "  safeDepth(n=3) → -1", "  countdown(n=2) → 2", '  pad(text="") → "--"']


async def test_callees_to_depth_two_follow_a_method_and_a_recursion_one_level_further(tools: Tools) -> None:
    rows = await callee_rows(tools, 2)
    assert rows[4:] == ["  Scale.apply(x=5) → 6", "    Scale.times(x=5) → 5",
                        "  safeDepth(n=3) → -1", "    dive(n=3) → raised RangeError: bottom",
                        "  countdown(n=2) → 2", "    countdown(n=1) → 1",
                        '  pad(text="") → "--"'], rows


async def test_an_async_callee_records_what_its_code_returned(tools: Tools) -> None:
    """later is awaited by gather: its record ends at its code's return, with the value its promise settles with."""
    rows = await callee_rows(tools, 1, "gather")
    assert rows == [f"gather(x=4) → 50  ← (anonymous) (callees.js:{line_of('calls/callees.js', 'gather(4)')})",
                    "  later(x=4) → 5"], rows


async def test_typescript_callees_awaited_across_timers_are_two_levels_below(tools: Tools) -> None:
    """top awaits middle, which awaits leaf after timers: each level's call stays open across its awaits."""
    require_tsx()
    program = str(PROGRAMS / "node" / "tsx" / "awaits.ts")
    timer = line_of("node/tsx/awaits.ts", "// the timer")
    await tools("debug_launch", program=program, breakpoints=[{"file": program, "line": timer}])
    result = await tools("debug_trace", functions=["top"], depth=2)
    await tools("debug_terminate")
    rows = [re.sub(r"  [\d.]+ m?s$", "", row) for row in result["calls"]["rows"]]
    assert rows == [f"top() → 22  ← start (awaits.ts:{line_of('node/tsx/awaits.ts', 'top().then')})",
                    "  middle(order={count: 3, price: 7}) → 22", "    leaf(order={count: 3, price: 7}) → 21"], rows


NAMED = str(CALLS / "named.js")


async def test_a_function_expression_named_twice_is_bound_once_as_a_callee_loaded_later_and_by_name(
        tools: Tools) -> None:
    """``var combine = function combine(…)`` is one function with its name twice at one place: bound once (V8 takes
    one breakpoint a place, and twice refused the trace with "Breakpoint at specified location already exists"),
    as the callee of a module loaded later, then by either of its names once its module is loaded."""
    require("node")
    await tools("debug_launch", program=NAMED, stop_on_entry=True)
    result = await tools("debug_trace", functions=["joinAll"], depth=1, max_hits=2)
    rows = [re.sub(r"  [\d.]+ m?s$", "", row) for row in result["calls"]["rows"]]
    joined = line_of("calls/named.js", "joined")
    assert rows == [f'joinAll(parts=[Array(1), Array(2)]) → "a+b+c"  ← (anonymous) (named.js:{joined})',
                    '  combine(a=["a"], b=["b", "c"]) → ["a", "b", "c"]'], rows
    await tools("debug_terminate")
    await tools("debug_launch", program=NAMED, breakpoints=[{"file": NAMED, "line": joined}])
    result = await tools("debug_trace", functions=["combine", "joinParts"])
    rows = [re.sub(r"  [\d.]+ m?s$", "", row) for row in result["calls"]["rows"]]
    assert [row.split("  ←")[0] for row in rows] == [
        'joinParts(parts=[Array(1), Array(2)]) → "a+b+c"', 'combine(a=["a"], b=["b", "c"]) → ["a", "b", "c"]',
        'joinParts(parts=[Array(1), Array(1)]) → "d+e"', 'combine(a=["d"], b=["e"]) → ["d", "e"]'], rows


async def test_a_wide_trace_a_stop_ends_leaves_the_stop_its_locals(tools: Tools) -> None:
    """The stop's own facts come first: sixty wide rows pushed the locals out of the answer ("… 2 more:
    debug_variables(frame_id=0)"); the trace takes the room left and says where its other rows are."""
    require("node")
    program = str(CALLS / "wide_stop.js")
    stop = line_of("calls/wide_stop.js", "// the stop")
    await tools("debug_launch", program=program, stop_on_entry=True)
    await tools("debug_break", file=program, line=stop)
    text = await tools.text("debug_trace", functions=["label"])
    assert len(text.encode()) <= 2000 and f"stopped (breakpoint: Paused on breakpoint) at wide_stop.js:{stop}" in text
    assert "debug_variables(frame_id=0)" not in text, text
    assert all(f"\n  {name} (" in text for name in ("firstLabel", "lastLabel", "middleCount", "checksum")), text
    more = re.search(r'\n  … (\d+) more rows: debug_output\(stream="trace", cursor=(\d+)\)', text)
    assert more is not None, text
    shown = text.count("\n  label(item=")
    assert shown >= 1 and shown + int(more[1]) == 60, text
    rest = await tools("debug_output", stream="trace", cursor=int(more[2]), max_bytes=30_000)
    assert rest["text"].count("label(item=") == int(more[1]), rest
    assert rest["text"].startswith(f'label(item={{name: "item number {shown} of the catalogue"'), rest
    await tools("debug_terminate")
