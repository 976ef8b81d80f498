"""Go call traces on delve (``DelveBackend.record_calls``), on the real debugger: a recursive function, a method
whose panic its caller recovers, methods on a pointer and on a value, goroutines, a bound, unknown names, and a Go
test by name traced through the MCP tools."""

from __future__ import annotations

import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from polydbg.backends.recording import CallSpec
from polydbg.errors import UsageError
from polydbg.session.session import Session
from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.recorded_calls import CALLS, at_entry, launched_with_trace, run_recording

SOURCE = "calls/calls.go"
PROGRAM = str(CALLS / "calls.go")
CHAIN_SOURCE = "calls/chain.go"
CHAIN = str(CALLS / "chain.go")


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    require("dlv", "go")
    async with at_entry("go", "delve", PROGRAM, 60) as session:
        yield session


def at(marker: str) -> str:
    return f"(calls.go:{line_of(SOURCE, marker)})"


async def test_a_recursive_function_every_call_with_its_argument_value_and_caller(session: Session) -> None:
    records, notes = await run_recording(session, "fib")
    assert notes == []
    assert len(records) == 25  # fib(6) calls fib 25 times
    assert all(r.function == "main.fib" and r.ended and r.raised is None for r in records)
    top = records[-1]  # the outermost call ends last, and began first
    assert top.started is not None and all(r.started is not None and r.started > top.started for r in records[:-1])
    assert top.args == (("n", "6"),) and top.returned == "8" and top.thread == "goroutine 1"
    assert top.caller == f"main.main {at('fib(6)')}"
    assert {r.caller for r in records[:-1]} == {f"main.fib {at('return fib(n-1)')}"}
    assert [r.returned for r in records if r.args == (("n", "2"),)] == ["1"] * 5
    assert top.line == line_of(SOURCE, "func fib(n int) int") and top.file == PROGRAM
    assert top.duration_us is not None and all(0 < (r.duration_us or 0) < top.duration_us for r in records[:-1])


async def test_a_panic_recovered_by_the_caller_ends_the_call_as_raised(session: Session) -> None:
    records, notes = await run_recording(session, "(*Parser).Parse", "parseAll", "Parser.Base")
    assert notes == []
    parses = [r for r in records if r.function == "main.(*Parser).Parse"]
    assert [(r.args[1], r.returned, r.raised) for r in parses] == [
        (("text", '"ab"'), "12", None),
        (("text", '""'), None, 'panic: *errors.errorString {s: "empty text"}')]  # "xyz" never parsed
    [whole] = [r for r in records if r.function == "main.parseAll"]
    assert whole.returned == "-1" and whole.raised is None  # its named result, as its deferred recover set it
    assert [name for name, _ in whole.args] == ["p", "texts"] and whole.caller == f"main.main {at('parseAll(parser')}"
    [base] = [r for r in records if r.function == "main.Parser.Base"]
    assert base.args == (("p", "main.Parser {base: 10}"),) and base.returned == "10"


async def test_goroutines_each_call_on_its_own(session: Session) -> None:
    records, notes = await run_recording(session, "square")
    assert notes == []
    assert [(r.args, r.returned) for r in records] == [((("x", str(i)),), str(i * i)) for i in range(1, 5)]
    assert len({r.thread for r in records}) == 4 and "goroutine 1" not in {r.thread for r in records}
    assert {r.caller for r in records} == {f"main.main.func1 {at('results <- square(i)')}"}


async def test_max_calls_bounds_the_records(session: Session) -> None:
    records, _ = await run_recording(session, "fib", max_calls=5)
    assert len(records) == 5


async def test_an_unknown_name_is_refused_with_the_closest(session: Session) -> None:
    with pytest.raises(UsageError, match=r"no function fibb in the program; the closest: main\.fib"):
        await session.core.backend.record_calls(CallSpec(("fibb",)), lambda record: None)
    with pytest.raises(UsageError, match=r"main\.\(\*Parser\)\.Parse"):
        await session.core.backend.record_calls(CallSpec(("(*Parser).Prase",)), lambda record: None)
    records, _ = await run_recording(session, "main.fib", max_calls=1)  # a refused name leaves nothing armed
    assert len(records) == 1


async def test_a_launch_records_a_whole_run_through_the_tools(tools: Tools) -> None:
    require("dlv", "go")
    trace, rows = await launched_with_trace(tools, ["main.fib", "(*Parser).Parse", "square"], program=PROGRAM)
    assert trace["calls"] == 31
    summary = "\n".join(trace["summary"])
    assert "main.fib: 25 calls" in summary and "main.square: 4 calls" in summary
    assert any(row.startswith('main.(*Parser).Parse(p=*main.Parser {base: 10}, text="") → raised panic:')
               for row in rows), "\n".join(rows)


async def test_a_go_test_by_name_records_the_code_it_tests(tools: Tools) -> None:
    require("dlv", "go")
    report = await tools("debug_launch", test="TestBulkDiscount", cwd=str(PROGRAMS / "gotests"),
                         trace=["prices.Total"])
    assert report["reason"] == "exception", report  # the test's t.Errorf, where delve's failure stop is
    [row] = report["trace"]["rows"]
    assert row.startswith("gotests.Total(unit=1, quantity=10) → 10  ← gotests.TestBulkDiscount (prices_test.go:"), row
    refused = await tools.error("debug_launch", test="TestBulkDiscount", cwd=str(PROGRAMS / "gotests"),
                                trace=["Totl"])  # the test binary's own functions, the standard library's left out
    assert "no function Totl in the program; the closest: gotests.Total (" in refused, refused


async def test_two_names_of_one_function_record_it_once(tools: Tools) -> None:
    """delve binds the first name and refuses the second's breakpoint at the same place: the same function, not
    a breakpoint of the agent's."""
    require("dlv", "go")
    report = await tools("debug_launch", test="TestBulkDiscount", cwd=str(PROGRAMS / "gotests"),
                         trace=["Total", "prices.Total"])
    assert report["reason"] == "exception", report
    [row] = report["trace"]["rows"]
    assert row.startswith("gotests.Total(unit=1, quantity=10) → 10"), row
    assert report["trace"]["calls"] == 1 and report["trace"]["summary"][0].startswith("gotests.Total: 1 call;"), \
        report["trace"]


async def test_a_function_the_session_breaks_at_is_refused_until_its_breakpoint_is_cleared(tools: Tools) -> None:
    require("dlv", "go")
    await tools("debug_launch", program=PROGRAM, stop_on_entry=True)
    await tools("debug_break", function="main.fib")
    assert (await tools("debug_continue"))["reason"] == "function breakpoint"
    refused = await tools.error("debug_trace", functions=["main.fib"])
    assert "main.fib already has a breakpoint of this session" in refused and "debug_clear" in refused, refused
    await tools("debug_clear", all=True)
    traced = await tools("debug_trace", functions=["main.fib"])  # from fib(6)'s first line: the 24 calls it makes
    assert traced["calls"]["calls"] == 24 and traced["calls"]["note"].startswith(
        "1 call(s) ended whose start was not seen"), traced  # fib(6), begun before the trace


@pytest.fixture
def optimised(tmp_path: Path) -> str:
    require("dlv", "go")
    built = tmp_path / "calls"  # go build's defaults: inlined and optimised
    subprocess.run(["go", "build", "-o", str(built), PROGRAM], check=True, capture_output=True, timeout=300)
    return str(built)


async def test_an_optimised_build_says_what_it_hides(tools: Tools, optimised: str) -> None:
    trace, _ = await launched_with_trace(tools, ["main.fib", "square"], program=optimised)
    assert trace["calls"] == 29
    assert trace["note"].startswith("an optimised build: main.square inlined: delve sees where each call begins, not "
                                    "its end or value (listed as not ended); the results of 25 call(s) unreadable at "
                                    "their RET (kept in registers); build with -gcflags='all=-N -l'"), trace["note"]
    assert not any("unreadable" in row for row in trace["rows"])  # no value rather than delve's complaint


async def callee_rows(tools: Tools, depth: int) -> list[str]:
    """The rows of a trace of ``total`` in chain.go to ``depth``, begun at the program's entry, durations left out."""
    require("dlv", "go")
    await tools("debug_launch", program=CHAIN, stop_on_entry=True)
    result = await tools("debug_trace", functions=["total"], depth=depth)
    assert result["stopped_because"] == "exited" and result["report"]["output"]["text"].startswith("23\n"), result
    await tools("debug_terminate")
    calls = result["calls"]
    assert "note" not in calls, calls
    return [re.sub(r"  [\d.]+ m?s$", "", row) for row in calls["rows"] + calls.get("last_rows", [])]


async def test_callees_to_depth_one_leave_out_the_standard_library_and_calls_outside_the_recorded_one(
        tools: Tools) -> None:
    """weigh and depth called from main after total are not its callees; clamp (weigh's), depth's recursion and
    mustPositive (safe's) are below the depth; fmt and strings are not the program's."""
    assert await callee_rows(tools, 1) == [
        f'main.total(words=[]string len: 2, cap: 2, ["ab","abcdefghijkl"]) → 23  ← main.main (chain.go:'
        f'{line_of(CHAIN_SOURCE, "fmt.Println(total(")})',
        '  main.weigh(word="ab") → 4',
        '  main.weigh(word="abcdefghijkl") → 18',
        "  main.depth(n=2) → 2",
        "  main.safe(n=-3) → -1"]


async def test_callees_to_depth_two_follow_the_chain_a_recursion_and_a_panic_one_level_further(
        tools: Tools) -> None:
    rows = await callee_rows(tools, 2)
    assert rows[1:] == [
        '  main.weigh(word="ab") → 4', "    main.clamp(n=2) → 2",
        '  main.weigh(word="abcdefghijkl") → 18', "    main.clamp(n=12) → 9",
        "  main.depth(n=2) → 2", "    main.depth(n=1) → 1",
        "  main.safe(n=-3) → -1", '    main.mustPositive(n=-3) → raised panic: "negative: -3"'], rows


async def test_a_call_s_values_name_their_types_by_package_not_import_path(tools: Tools) -> None:
    """*polydbg.test/widemod/version.Version {…}: the import path filled the row's value before the fields."""
    require("dlv", "go")
    program = str(PROGRAMS / "calls" / "widemod")
    report = await tools("debug_launch", program=program, trace=["version.Parse"])
    [row] = report["trace"]["rows"]
    assert row.startswith("version.Parse(major=1, minor=2, patch=3) → (*version.Version {Major: 1, Minor: 2, Patch: 3}"
                          ", error nil)"), row  # both results, as a step out shows them
