"""Call traces and the raised log on Ruby (``RdbgBackend.record_calls``, ``record_raised``), on real rdbg: a
recursive method, a method that raises (rescued by its caller), a class method of a module's class, a thread's
method, callees to a depth, unknown names, and every exception the user's code raised with where it was rescued.

The session drives the program (launched at its entry, then run to its end); the records come from the backend
through the sink, as the session's call trace reads them.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from polydbg.backends.recording import CallSpec, RaisedRecord
from polydbg.session.model import State
from polydbg.session.session import Session
from tests.conftest import Tools, line_of, require, text_of
from tests.integration.recorded_calls import CALLS, at_entry, launched_with_trace, run_recording

PROGRAM = str(CALLS / "calls.rb")


def line(marker: str) -> int:
    return line_of("calls/calls.rb", marker)


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    require("ruby")
    async with at_entry("ruby", "rdbg", PROGRAM, 30) as session:
        yield session


async def test_a_recursive_method_every_call_with_its_argument_value_and_caller(session: Session) -> None:
    records, notes = await run_recording(session, "fib")
    assert notes == []
    assert len(records) == 25  # fib(6) calls fib 25 times
    assert all(r.function == "fib" and r.ended and r.thread == "#1 main" for r in records), records[0]
    top = records[-1]  # the outermost call ends last, and began first
    assert top.started is not None and all(r.started is not None and r.started > top.started for r in records[:-1])
    assert top.args == (("n", "6"),) and top.returned == "8"
    assert top.caller == f"<main> ({PROGRAM}:{line('call fib')})"
    assert {r.caller for r in records[:-1]} == {f"fib ({PROGRAM}:{line('fib body')})"}
    assert sorted(int(r.returned or -1) for r in records if r.args == (("n", "2"),)) == [1] * 5
    assert top.file == PROGRAM and top.line == line("def fib")
    assert top.duration_us is not None and top.duration_us > 0


async def test_a_method_that_raises_its_exception_and_class_methods_of_a_modules_class(session: Session) -> None:
    records, notes = await run_recording(session, "Parser#parse", "Shop::Parser.build", "square")
    assert notes == []
    parses = [r for r in records if r.function == "Shop::Parser#parse"]
    assert [(r.args, r.returned, r.raised) for r in parses] == [
        ((("text", '"ab"'),), '{:text=>"ab", :length=>2}', None),
        ((("text", '""'),), None, "ArgumentError: empty input"),
        ((("text", '"xyz"'),), '{:text=>"xyz", :length=>3}', None)]
    assert all(r.caller is not None and r.caller.startswith("block in parse_all (") for r in parses)
    [build] = [r for r in records if r.function == "Shop::Parser.build"]
    assert build.returned is not None and build.returned.startswith("#<Shop::Parser")
    [square] = [r for r in records if r.function == "square"]
    assert square.returned == "49" and square.thread is not None and square.thread != "#1 main"


async def test_callees_to_a_depth(session: Session) -> None:
    records: list = []
    recorder = await session.core.backend.record_calls(CallSpec(("number",), depth=2), records.append)
    report = await session.resume(None, None, 60, None)
    assert report.state == State.exited, report
    assert await recorder.stop() == []
    bad = 'ArgumentError: invalid value for Integer(): "zz"'
    assert [(r.function, r.depth, r.returned, r.raised) for r in records if r.depth < 2] == [
        ("checked", 1, "12", None), ("number", 0, "12", None), ("checked", 1, None, bad), ("number", 0, "0", None)]
    # below checked, only the program's own methods: not Kernel#Integer or Integer#+ (C), nor set.rb's Set#merge and
    # Set#do_with_enum (Ruby's library), which are not a level either: each_entry, that set.rb calls, is one below
    assert [(r.function, r.depth, (r.caller or "").split(" (")[0]) for r in records if r.depth == 2] == [
        ("Tally#initialize", 2, "new"), ("Tally#each_entry", 2, "do_with_enum")] * 2, records


async def test_unknown_names_answer_the_closest_and_names_never_called_are_noted(tools: Tools) -> None:
    require("ruby")
    report = await tools("debug_launch", program=PROGRAM, breakpoints=[{"file": PROGRAM, "line": line("call fib")}])
    assert report["reason"] == "breakpoint", report
    refused = await tools.client.call_tool("debug_trace", {"functions": ["fibb"]})
    assert refused.is_error and "no method of the program is named fibb (closest: fib)" in text_of(refused)
    traced = await tools("debug_trace", functions=["Nowhere#zzz", "Parser#parse"])
    assert traced["state"] == "exited", traced
    assert traced["calls"]["note"] == "never called: Nowhere#zzz", traced
    assert traced["calls"]["calls"] == 3 and "raised ArgumentError ×1" in traced["calls"]["summary"][0]


async def test_a_launch_records_a_whole_run_through_the_tools(tools: Tools) -> None:
    require("ruby")
    trace, rows = await launched_with_trace(tools, ["fib", "Parser#parse", "raised"], program=PROGRAM)
    summary = "\n".join(trace["summary"])
    assert "fib: 25 calls" in summary and "Shop::Parser#parse: 3 calls" in summary, summary
    assert "raised ArgumentError ×1" in summary, summary
    assert any(row.startswith('Shop::Parser#parse(text="") → raised ArgumentError: empty input') for row in rows), rows


async def test_every_exception_the_users_code_raised_and_where_it_was_rescued(session: Session) -> None:
    raised: list[RaisedRecord] = []
    recorder = await session.core.backend.record_raised(raised.append)
    report = await session.resume(None, None, 60, None)
    assert report.state == State.exited and report.exit_code == 0, report
    assert await recorder.stop() == []
    assert [(r.type, r.message, r.line, r.function, r.caught) for r in raised] == [
        ("ArgumentError", "empty input", line("raise empty"), "Shop::Parser#parse",
         f"Shop::Parser#parse_all ({PROGRAM}:{line('rescue empty')})"),
        ("ArgumentError", 'invalid value for Integer(): "zz"', line("Integer(text)"), "checked",
         f"number ({PROGRAM}:{line('rescue number')})")]  # past checked's ensure
    assert all(r.file == PROGRAM and r.thread == "#1 main" for r in raised)


async def test_a_step_out_and_a_step_over_a_methods_last_line_report_what_it_returned(tools: Tools) -> None:
    require("ruby")
    report = await tools("debug_launch", program=PROGRAM, breakpoints=[
        {"file": PROGRAM, "line": line("length: text.length")}, {"file": PROGRAM, "line": line("  checked(text)")}])
    assert report["reason"] == "breakpoint", report
    over = await tools("debug_step", kind="over")  # rdbg stops at the method's return, still in it
    assert over["location"]["function"] == "Shop::Parser#parse", over
    assert over["returned"] == ['Shop::Parser#parse() returned {:text=>"ab", :length=>2}'], over
    assert "_return" not in {v["name"] for v in over["locals"]}, over
    assert (await tools("debug_continue"))["location"]["function"] == "Shop::Parser#parse"  # "xyz"
    out = await tools("debug_step", kind="out")
    assert out["location"]["function"] == "block in parse_all", out
    assert out["returned"] == ['Shop::Parser#parse() returned {:text=>"xyz", :length=>3}'], out
    assert "returned" not in await tools("debug_continue")  # number("12"): a breakpoint's stop says nothing of it
    await tools("debug_continue")  # number("zz"), whose checked() raised: rescued, it returns 0
    out = await tools("debug_step", kind="out")
    assert out["location"]["function"] == "<main>" and out["returned"] == ["Object#number() returned 0"], out
    await tools("debug_terminate")


async def test_a_minitest_test_by_name_traced_with_what_its_code_raised(tools: Tools) -> None:
    require("ruby")
    project = CALLS.parent / "rubytests"
    report = await tools("debug_launch", test="test/test_prices.rb::TestPrices#test_blank_label_is_refused",
                         cwd=str(project), trace=["Prices.label", "raised"])
    assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
    trace = report["trace"]
    assert trace["calls"] == 1 and trace["raised"] == 1, trace
    assert trace["rows"][0].startswith('Prices.label(name="  ") → raised ArgumentError: a blank name  ← block in '
                                       "test_blank_label_is_refused (test/test_prices.rb:"), trace
    [raised] = trace["raised_rows"]
    assert raised.startswith("ArgumentError: a blank name at lib/prices.rb:11 in Prices.label → caught in "
                             "Minitest::Assertions#assert_raises ("), raised  # minitest's assert_raises rescued it
    failing = await tools("debug_launch", test="test/test_prices.rb::TestPrices#test_bulk_discount",
                          cwd=str(project), trace=["Prices.total"])
    assert failing["reason"] == "exception", failing  # the trace's answer comes with the failing assertion's stop
    assert failing["trace"]["rows"] == ["Prices.total(unit=1, quantity=10) → 10  ← test_bulk_discount "
                                        "(test/test_prices.rb:11)  " + failing["trace"]["rows"][0].rsplit("  ", 1)[1]]


async def test_a_test_files_run_logs_its_failures_and_skips_as_raised_by_the_tests(tools: Tools) -> None:
    require("ruby")
    report = await tools("debug_launch", test="test/test_prices.rb", cwd=str(CALLS.parent / "rubytests"),
                         trace=["raised"], break_on_exception="none")
    assert report["state"] == "exited" and report["test"]["outcome"] == "failed", report
    # minitest's assertion and skip are raised by minitest for the test's call, and rescued by its runner above the
    # test's frame: the user's, shown at the test's line; rubygems' own LoadErrors (rescued inside it) are not
    raised = sorted(report["trace"]["raised_rows"])
    assert [row.split(" → ")[0] for row in raised] == [
        "ArgumentError: a blank name at lib/prices.rb:11 in Prices.label",
        "Minitest::Assertion: Expected: 9\\n  Actual: 10 at test/test_prices.rb:12 in test_bulk_discount",
        "Minitest::Skip: the label's translation is not written yet at test/test_prices.rb:20 in test_not_yet"], raised
    assert all(" → caught in Minitest::" in row for row in raised), raised


async def test_a_trace_begun_while_the_program_runs_and_again_at_a_pause(tools: Tools) -> None:
    require("ruby")
    ticking = str(CALLS / "ticking.rb")
    report = await tools("debug_launch", program=ticking, timeout_s=1)
    assert report["state"] == "running", report
    for _ in range(2):  # the second arms the recorder defined by the first
        traced = await tools("debug_trace", functions=["tick"], max_hits=3, timeout_s=60)
        assert traced["stopped_because"] == "max_hits" and traced["state"] == "running", traced
        assert traced["calls"]["calls"] == 3, traced
        assert all(row.startswith("tick(n=") for row in traced["calls"]["rows"]), traced
    paused = await tools("debug_pause")  # a pause is a signal trap in the program: no require, no waiting on locks
    assert paused["state"] == "stopped", paused
    traced = await tools("debug_trace", functions=["tick"], max_hits=2, timeout_s=60)
    assert traced["stopped_because"] == "max_hits" and traced["calls"]["calls"] == 2, traced
    await tools("debug_terminate")


async def test_max_hits_ends_a_trace_of_a_hundred_thousand_calls_exactly(tools: Tools) -> None:
    require("ruby")
    many = str(CALLS / "many.rb")
    report = await tools("debug_launch", program=many, args=["150000"],
                         breakpoints=[{"file": many, "line": line_of("calls/many.rb", "# start")}])
    assert report["reason"] == "breakpoint", report
    result = await tools("debug_trace", functions=["one"], max_hits=100_000, timeout_s=120)
    assert result["stopped_because"] == "max_hits" and result["total_hits"] == 100_000, result
    assert result["calls"]["calls"] == 100_000 and result["calls"]["summary"][0].startswith(
        "one: 100000 calls; args n=1 ×100000; returned 1 ×100000"), result
    await tools("debug_terminate")
