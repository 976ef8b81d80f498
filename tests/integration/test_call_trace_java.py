"""Call traces on the JVM (``JavaBackend.record_calls``), on a real JVM: a recursive method, a method that throws
(caught by its caller), a class loaded after the trace began, a thread of the program's, unknown names, and the
callees of a recorded method to a depth (through the MCP tools).

The session drives the program (launched at its entry, then run to its end); the records come from the
backend through the sink, as the session's call trace reads them.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import pytest

from polydbg.backends.recording import CallRecord, CallSpec
from polydbg.errors import UsageError
from polydbg.session.model import State
from polydbg.session.session import Session
from tests.conftest import Tools, line_of, require
from tests.integration.recorded_calls import CALLS, at_entry, launched_with_trace, run_recording

PROGRAM = str(CALLS / "Calls.java")
CALLEES = str(CALLS / "Callees.java")


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    require("java", "javac")
    async with at_entry("java", "java", PROGRAM, 60) as session:
        yield session


@pytest.fixture
async def callees() -> AsyncIterator[Session]:
    require("java", "javac")
    async with at_entry("java", "java", CALLEES, 60) as session:
        yield session


async def test_a_recursive_method_every_call_with_its_argument_value_and_caller(session: Session) -> None:
    records, notes = await run_recording(session, "fib")
    assert notes == []
    assert len(records) == 25  # fib(6) calls fib 25 times
    assert all(r.function == "Calls.fib" and r.ended and r.thread == "main" for r in records)
    top = records[-1]  # the outermost call ends last, and began first
    assert top.started is not None and all(r.started is not None and r.started > top.started for r in records[:-1])
    assert top.args == (("n", "6"),) and top.returned == "8"
    assert top.caller == f"Calls.main (Calls.java:{line_of('calls/Calls.java', 'fib(6)')})"
    recursion = line_of("calls/Calls.java", "return fib(n - 1)")
    assert {r.caller for r in records[:-1]} == {f"Calls.fib (Calls.java:{recursion})"}
    assert [r.returned for r in records if r.args == (("n", "2"),)] == ["1"] * 5
    assert top.file == PROGRAM and top.line == line_of("calls/Calls.java", "if (n < 2)")
    assert top.duration_us is not None and top.duration_us > 0


async def test_a_method_that_throws_records_the_exception_and_the_program_goes_on(session: Session) -> None:
    records, _ = await run_recording(session, "Calls.Parser.parse", "Calls.parseAll")
    parses = [r for r in records if r.function == "Calls.Parser.parse"]
    assert [(r.args, r.returned, r.raised) for r in parses] == [
        ((("text", '"ab"'),), "2", None),
        ((("text", '""'),), None, "java.lang.IllegalArgumentException: empty input"),
        ((("text", '"xyz"'),), "3", None)]
    assert all(r.caller is not None and r.caller.startswith("Calls.parseAll (Calls.java:") for r in parses)
    [whole] = [r for r in records if r.function == "Calls.parseAll"]
    assert whole.returned == "2" and whole.args[1] == ("texts", 'String[3] {"ab", "", "xyz"}')
    assert "skipped: empty input" in session.read_output(None, 10_000, "stdout").text


async def test_a_class_loaded_later_and_a_thread_of_the_program(session: Session) -> None:
    records, notes = await run_recording(session, "Dates.monthOf", "Calls.java:square")
    assert notes == []
    [month] = [r for r in records if r.function == "Dates.monthOf"]
    assert month.args == (("date", '"2024-03-09"'),) and month.returned == "3" and month.thread == "main"
    squares = [r for r in records if r.function == "Calls.square"]
    assert [(r.args, r.returned) for r in squares] == [((("x", str(i)),), str(i * i)) for i in range(1, 5)]
    assert {r.thread for r in squares} == {"squares"}


async def test_max_calls_bounds_the_records(session: Session) -> None:
    records, _ = await run_recording(session, "fib", max_calls=5)
    assert len(records) == 5


async def test_a_method_a_loaded_class_lacks_is_refused_with_the_closest(session: Session) -> None:
    with pytest.raises(UsageError, match=r"Calls has no method fibb; the closest: fib"):
        await session.core.backend.record_calls(CallSpec(("Calls.fibb",)), lambda record: None)


async def test_a_launch_records_a_whole_run_through_the_tools(tools: Tools) -> None:
    require("java", "javac")
    trace, rows = await launched_with_trace(tools, ["Calls.fib", "Calls.Parser.parse", "square"], program=PROGRAM)
    assert trace["calls"] == 32
    summary = "\n".join(trace["summary"])
    assert "Calls.fib: 25 calls" in summary and "Calls.square: 4 calls" in summary
    assert any(row.startswith('Calls.Parser.parse(text="") → raised java.lang.IllegalArgumentException: empty input')
               for row in rows)


async def callee_rows(tools: Tools, depth: int) -> list[str]:
    """The rows of a trace of ``Callees.total`` to ``depth``, begun at the program's entry, durations left out."""
    require("java", "javac")
    await tools("debug_launch", program=CALLEES, stop_on_entry=True)
    result = await tools("debug_trace", functions=["Callees.total"], depth=depth)
    assert result["stopped_because"] == "exited" and result["report"]["output"]["text"] == "total 6\nafter 10 1\n2\n"
    await tools("debug_terminate")
    calls = result["calls"]
    assert calls["skipped"] == 0, calls  # (the rows are shown whole, some of them as its last ones)
    return [re.sub(r"  [\d.]+ m?s$", "", row) for row in calls["rows"] + calls.get("last_rows", [])]


async def test_callees_to_depth_one_leave_out_the_jdk_and_calls_outside_the_recorded_one(tools: Tools) -> None:
    """weight is called through a stream (the JDK's frames and a lambda's hidden class between: still one level
    below), once throwing a NumberFormatException the JDK raised; the recursions of dive and countdown are below the
    depth (dive's, ended by an exception safeDepth catches, ends no recorded call); weight and countdown called again
    after total are not its callees."""
    assert await callee_rows(tools, 1) == [
        f'Callees.total(words=ImmutableCollections.List12 size=2 ["1", " 2"]) → 6  ← Callees.main (Callees.java:'
        f'{line_of("calls/Callees.java", "total(List.of")})',
        '  Callees.weight(word="1") → 2',
        '  Callees.weight(word=" 2") → 4',
        '  Callees.weight(word="x") → raised java.lang.NumberFormatException: For input string: "x"',
        "  Callees.safeDepth(n=3) → -1",
        "  Callees.countdown(n=2) → 2"]


async def test_callees_to_depth_two_follow_a_recursion_one_level_further(tools: Tools) -> None:
    rows = await callee_rows(tools, 2)
    assert rows[-4:] == ["  Callees.safeDepth(n=3) → -1",
                         "    Callees.dive(n=3) → raised java.lang.IllegalStateException: bottom",
                         "  Callees.countdown(n=2) → 2", "    Callees.countdown(n=1) → 1"], rows
    assert len(rows) == 8, rows


async def test_a_call_that_returns_just_before_the_program_ends_is_recorded(callees: Session) -> None:
    """Its exit suspends nothing, so the object it returned may be gone (the JVM ended) before it is read: the call
    was left out of the trace."""
    records: list[CallRecord] = []
    recorder = await callees.core.backend.record_calls(CallSpec(("Callees.letters",)), records.append)
    assert (await callees.resume(None, None, 60, None)).state == State.exited
    await recorder.stop()
    [letters] = records
    assert letters.args == (("word", '"ab"'),) and letters.returned in (
        'ImmutableCollections.List12 size=2 ["a", "b"]', "(not read: the program ended or dropped it first)")
