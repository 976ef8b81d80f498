"""Call traces and raised-exception logs against the fake debugger: the fake replays the calls and exceptions a test
gives it to the recorders the session armed, when the program runs. The recorders are armed before the program
runs (a launch's: as the debugger is configured) and stopped before every answer; ``max_hits`` ends a trace
exactly; an unknown function is refused before anything runs; the answer leads with a summary per function and
exception type, then rows in the order calls began, callees indented; every row is in the trace log."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends.recording import CallRecord, RaisedRecord
from polydbg.errors import AdapterError, UsageError
from polydbg.mcp import render
from polydbg.session import calls as call_tracing
from polydbg.session.calllog import ROW_VALUE_CHARS, CallLog, apart, call_row
from polydbg.session.model import State
from polydbg.session.output import OutputBuffer
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program

DEADLINE_S = 5.0


@pytest.fixture
async def rig(tmp_path: Path) -> Rig:
    """A session stopped at its first line."""
    started = Rig(write_program(tmp_path))
    await started.start()
    return started


def call(function: str, started: float, depth: int = 0, returned: str | None = None, raised: str | None = None,
         thread: str = "MainThread", **args: str) -> CallRecord:
    return CallRecord(function=function, args=tuple(args.items()), returned=returned, raised=raised,
                      caller="test_dates (/proj/tests/test_dates.py:12)", thread=thread, duration_us=200.0,
                      depth=depth, started=started)


def dates_run() -> list[CallRecord]:
    """parse_date called three times, calling parse_month (a callee, depth 1); records in the order calls ended."""
    return [call("parse_month", 2, 1, returned="1", m="'01'"),
            call("parse_date", 1, returned="date(2024, 1, 1)", s="'2024-01-01'"),
            call("parse_month", 4, 1, raised="ValueError: month must be in 1..12", m="'13'"),
            call("parse_date", 3, raised="ValueError: month must be in 1..12", s="'2024-13-01'"),
            call("parse_month", 6, 1, raised="ValueError: month must be in 1..12", m="'13'"),
            call("parse_date", 5, raised="ValueError: month must be in 1..12", s="'2024-13-01'")]


def trace_rows(rig: Rig) -> list[str]:
    return rig.session.read_output(0, 1_000_000, "trace").text.splitlines()


def exits_when_resumed(rig: Rig) -> None:
    def exit_now() -> None:
        rig.backend.listener.on_exited(1)
        rig.backend.listener.on_terminated(None)
    rig.backend.after["resume"] = exit_now


async def test_a_call_trace_arms_the_recorder_runs_and_answers_with_a_summary_then_rows_in_call_order(
        rig: Rig) -> None:
    rig.backend.runs_calls = dates_run()
    exits_when_resumed(rig)
    result = await rig.session.trace_calls(["parse_date"], 1, 100, DEADLINE_S, None)
    assert rig.backend.call_spec is not None
    assert rig.backend.call_spec.functions == ("parse_date",) and rig.backend.call_spec.depth == 1
    assert rig.backend.calls.index("record_calls") < rig.backend.calls.index("resume") < \
        rig.backend.calls.index("stop calls")
    assert result.stopped_because == "exited" and result.state == State.exited and result.total_hits == 6
    calls = result.calls
    assert calls is not None and calls.calls == 6 and calls.raised == 0
    assert calls.summary[0].startswith("parse_date: 3 calls; args s='2024-13-01' ×2, s='2024-01-01' ×1; "
                                       "returned date(2024, 1, 1) ×1; raised ValueError ×2; 0.20 ms avg")
    assert calls.rows + (calls.last_rows or []) == [
        "parse_date(s='2024-01-01') → date(2024, 1, 1)  ← test_dates (/proj/tests/test_dates.py:12)  0.20 ms",
        "  parse_month(m='01') → 1  0.20 ms",
        "parse_date(s='2024-13-01') → raised ValueError: month must be in 1..12  "
        "← test_dates (/proj/tests/test_dates.py:12)  0.20 ms",
        "  parse_month(m='13') → raised ValueError: month must be in 1..12  0.20 ms",
        "parse_date(s='2024-13-01') → raised ValueError: month must be in 1..12  "
        "← test_dates (/proj/tests/test_dates.py:12)  0.20 ms",
        "  parse_month(m='13') → raised ValueError: month must be in 1..12  0.20 ms"]
    rows = trace_rows(rig)
    assert rows[0] == "trace 1: calls of parse_date and their callees to depth 1"
    assert rows[1].startswith("parse_date(s='2024-01-01') → date(2024, 1, 1)") and "[MainThread]" in rows[1]
    text = render.trace(result)
    assert text.splitlines()[0] == f"[{rig.session.id}] 6 calls, 0 raised (exited); program exited"
    assert text.index("parse_date: 3 calls") < text.index("calls:\n") < text.index("  parse_date(s='2024-01-01')")


async def test_max_hits_ends_a_call_trace_exactly_and_stops_the_recorder_while_the_program_runs(rig: Rig) -> None:
    rig.backend.runs_calls = [call("fib", n, returned=str(n), n=str(n)) for n in range(10)]
    result = await rig.session.trace_calls(["fib"], 0, 4, DEADLINE_S, None)
    assert result.stopped_because == "max_hits" and result.state == State.running and result.report is None
    assert result.total_hits == 4 and result.calls is not None and result.calls.calls == 4
    assert [row.split(" →")[0] for row in result.calls.rows] == ["fib(n=0)", "fib(n=1)", "fib(n=2)", "fib(n=3)"]
    assert result.calls.note is not None and "max_hits" in result.calls.note
    assert "stop calls" in rig.backend.calls and rig.backend.call_sink is None
    assert len(trace_rows(rig)) == 1 + 4  # the header and the rows up to the bound: none after it


async def test_an_unknown_function_is_refused_with_the_closest_names_and_nothing_runs(rig: Rig) -> None:
    rig.backend.known_functions = ["parse_date", "parse_month"]
    with pytest.raises(UsageError, match="closest: parse_date"):
        await rig.session.trace_calls(["parse_dat"], 0, 10, DEADLINE_S, None)
    assert "resume" not in rig.backend.calls and rig.session.state == State.stopped


async def test_a_recorder_that_fails_to_arm_disarms_the_one_armed_before_it(rig: Rig) -> None:
    rig.backend.failures["record_raised"] = AdapterError("fake cannot record raised exceptions")
    with pytest.raises(AdapterError, match="cannot record raised"):
        await rig.session.trace_calls(["parse_date", "raised"], 0, 10, DEADLINE_S, None)
    assert "stop calls" in rig.backend.calls and "resume" not in rig.backend.calls


async def test_raised_exceptions_are_logged_with_where_they_were_caught_or_uncaught(rig: Rig) -> None:
    rig.backend.runs_raised = [
        RaisedRecord("KeyError", "'tz'", "/proj/dates.py", 30, "load", caught="load (/proj/dates.py:33)"),
        RaisedRecord("ValueError", "month must be in 1..12", "/proj/dates.py", 14, "parse_month"),
        RaisedRecord("KeyError", "'tz'", "/proj/dates.py", 30, "load", caught="load (/proj/dates.py:33)")]
    rig.backend.runs_calls = [call("parse_date", 1, raised="ValueError: month must be in 1..12", s="'x'")]
    exits_when_resumed(rig)
    result = await rig.session.trace_calls(["raised", "parse_date"], 0, 100, DEADLINE_S, None)
    calls = result.calls
    assert calls is not None and calls.calls == 1 and calls.raised == 3
    assert "raised KeyError ×2 (2 caught): 'tz'" in calls.summary
    assert "raised ValueError ×1 (1 uncaught): month must be in 1..12" in calls.summary
    assert calls.raised_rows == [
        "KeyError: 'tz' at /proj/dates.py:30 in load → caught in load (/proj/dates.py:33)",
        "ValueError: month must be in 1..12 at /proj/dates.py:14 in parse_month → uncaught",
        "KeyError: 'tz' at /proj/dates.py:30 in load → caught in load (/proj/dates.py:33)"]
    assert "stop calls" in rig.backend.calls and "stop raised" in rig.backend.calls
    assert sum(row.startswith("raised KeyError") for row in trace_rows(rig)) == 2


async def test_a_launch_trace_is_armed_as_the_debugger_is_configured_and_answered_with_the_first_stop(
        tmp_path: Path) -> None:
    def prepare(backend: FakeBackend) -> None:
        backend.runs_calls = dates_run()[:2]
        backend.still_running = [CallRecord("parse_date", (("s", "'2024-02-30'"),), ended=False, started=7)]
    rig = Rig(write_program(tmp_path), prepare=prepare)
    rig.session.trace_at_start(["parse_date", "raised"])
    report = await rig.start()
    assert rig.backend.calls[:2] == ["record_calls", "record_raised"]  # before the program ran
    assert report.state == State.stopped and report.trace is not None
    assert report.trace.calls == 3 and report.trace.rows[-1] == "parse_date(s='2024-02-30') … still running"
    assert "stop calls" in rig.backend.calls and "stop raised" in rig.backend.calls
    assert "parse_date: 2 calls (1 still running)" in report.trace.summary[0]
    text = render.stop_report(report)
    assert "trace: 3 calls, 0 raised\n  parse_date: 2 calls (1 still running)" in text
    assert "  parse_month(m='01') → 1  0.20 ms" in text
    # the launch's recording ended with its answer: a restart records nothing
    await rig.session.restart(DEADLINE_S, None)
    assert "record_calls" not in rig.backend.calls


async def test_a_launch_trace_records_up_to_its_bound_and_says_so(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    def prepare(backend: FakeBackend) -> None:
        backend.runs_calls = [call("tick", n, returned="None") for n in range(20)]
    rig = Rig(write_program(tmp_path), prepare=prepare)
    monkeypatch.setattr(call_tracing, "LAUNCH_MAX_CALLS", 5)
    rig.session.trace_at_start(["tick"])
    report = await rig.start()
    assert report.trace is not None and report.trace.calls == 5 and rig.backend.calls.count("stop calls") == 1
    assert "recorded the first 5" in (report.trace.note or "")


def test_a_hundred_thousand_calls_answer_within_the_budget_and_every_row_reaches_the_trace_log() -> None:
    log = OutputBuffer(capacity=64 * 1024 * 1024)
    taken = CallLog(log, "/proj", 1_000_000)
    for n in range(100_000):
        taken.call(CallRecord("step", (("i", str(n)), ("name", "'x'" * (n % 4))), returned=str(n * 2),
                              thread=f"worker-{n % 3}", duration_us=n % 7 * 10.0, started=float(n),
                              caller="run (/proj/app.py:9)"))
    taken.flush()
    result = taken.result(None)
    assert result.calls == 100_000 and result.skipped == 100_000 - len(result.rows) - len(result.last_rows or [])
    assert result.summary[0].startswith("step: 100000 calls; args i=0, name= ×1, i=1, name='x' ×1, i=2, ")
    assert "threads worker-0 ×33334, worker-1 ×33333, worker-2 ×33333" in result.summary[0]
    assert result.rows[0] == "step(i=0, name=) → 0  ← run (app.py:9) [worker-0]  0.00 ms"
    assert (result.last_rows or [])[-1].startswith("step(i=99999, name='x'") and result.more_cursor is not None
    lines = log.read(0, 64 * 1024 * 1024).text.splitlines()
    assert len(lines) == 100_000 and lines[99_999].startswith("step(i=99999,")
    text = "\n".join(render.call_trace(result, "[s1] 100000 calls, 0 raised (exited); program exited"))
    assert len(text.encode()) <= 2048
    assert f'… {result.skipped} more rows: debug_output(stream="trace", cursor={result.more_cursor})' in text


def test_rows_name_threads_only_when_there_were_several() -> None:
    one = CallLog(OutputBuffer(), None, 100)
    one.call(call("f", 1, returned="1"))
    one.flush()
    assert "[MainThread]" not in one.result(None).rows[0]
    two = CallLog(OutputBuffer(), None, 100)
    two.call(call("f", 1, returned="1"))
    two.call(call("f", 2, returned="2", thread="worker"))
    two.flush()
    assert [row.rsplit("[", 1)[1].split("]")[0] for row in two.result(None).rows] == ["MainThread", "worker"]


def test_values_with_line_breaks_and_long_values_are_one_cut_line() -> None:
    taken = CallLog(OutputBuffer(), None, 100)
    taken.call(call("f", 1, returned="'a\nb'", text="'" + "y" * 500 + "'"))
    taken.flush()
    row = taken.result(None).rows[0]
    assert "\n" not in row and "'a\\nb'" in row and len(row) < 200


async def test_a_summary_names_a_qualified_exception_type_whole(rig: Rig) -> None:
    """C++'s std::invalid_argument was summarised as 'std' (the type cut at its first colon)."""
    rig.backend.runs_calls = [call("parse", 1, raised="std::invalid_argument: not a number", s="\"x\""),
                              call("parse", 2, raised="std::out_of_range", s="\"9999999999\"")]
    exits_when_resumed(rig)
    result = await rig.session.trace_calls(["parse"], 0, 100, DEADLINE_S, None)
    assert result.calls is not None
    assert "raised std::invalid_argument ×1, std::out_of_range ×1" in result.calls.summary[0], result.calls.summary


async def test_calls_are_recorded_when_the_debugger_cannot_record_what_was_raised(rig: Rig) -> None:
    """A Rust launch with trace=[…, "raised"] was refused whole (lldb records C++ throws only): the calls are
    recorded and the note says why the raised ones are not; "raised" alone is still refused."""
    rig.backend.failures["record_raised"] = UsageError("lldb records the raised exceptions of C++ programs only")
    rig.backend.runs_calls = dates_run()
    exits_when_resumed(rig)
    result = await rig.session.trace_calls(["parse_date", "raised"], 1, 100, DEADLINE_S, None)
    assert result.calls is not None and result.calls.calls == 6, result
    assert "exceptions raised not recorded: lldb records the raised exceptions of C++" in (result.calls.note or ""), \
        result.calls


async def test_raised_alone_is_refused_when_the_debugger_cannot_record_it(rig: Rig) -> None:
    rig.backend.failures["record_raised"] = UsageError("lldb records the raised exceptions of C++ programs only")
    with pytest.raises(UsageError, match="C\\+\\+ programs only"):
        await rig.session.trace_calls(["raised"], 0, 100, DEADLINE_S, None)


def test_a_summary_names_the_arguments_that_differ_each_cut_on_its_own() -> None:
    """A method called with the same receiver and different keys: the summary names the keys, not the receiver's
    repr cut short three times alike (a cache's ``__getitem__`` traced in a real project's test); where every
    argument differs, each is cut on its own so a later one still shows."""
    taken = CallLog(OutputBuffer(), "/proj", 1000)
    receiver, getter = "LRUCache({2: 2, 3: 3}, maxsize=2, currsize=2)", "<function Cache.__getitem__ at 0x7f15d02f7ce0>"
    for n, key in enumerate(["2", "3", "2"]):
        taken.call(CallRecord("LRUCache.__getitem__", (("self", receiver), ("key", key), ("cache_getitem", getter)),
                              returned=key, started=float(n)))
    for n in range(3):
        taken.call(CallRecord("LRUCache.__setitem__", (("self", f"LRUCache({{{'1: 1, ' * n}}}, maxsize=2)"),
                                                       ("key", str(n)), ("value", str(n))), started=10.0 + n))
    taken.flush()
    summary = taken.result(None).summary
    assert summary[0].startswith("LRUCache.__getitem__: 3 calls; args key=2 ×2, key=3 ×1 (self, cache_getitem: "
                                 "the same in every call); returned 2 ×2, 3 ×1"), summary
    assert summary[1].startswith("LRUCache.__setitem__: 3 calls; args self=LRUCache({}, m…, key=0, value=0 ×1, "
                                 "self=LRUCache({1: 1…, key=1, value=1 ×1, "), summary


def test_values_a_summary_would_cut_alike_are_cut_where_they_differ() -> None:
    """go-semver's NewVersion returned two Versions that differ after 30 characters: the summary showed them alike."""
    plain = '*semver.Version {Major: 0, Minor: 0, Patch: 0, PreRelease: "", Metadata: ""}'
    foo = '*semver.Version {Major: 0, Minor: 0, Patch: 0, PreRelease: "foo", Metadata: ""}'
    assert apart([plain, foo, "3"], 30) == ['…Release: "", Metadata: ""}', '…Release: "foo", Metadata: ""}', "3"]
    assert apart(["x" * 40, "y" * 40], 30) == ["x" * 29 + "…", "y" * 29 + "…"]  # apart already: cut as ever


def test_a_row_cuts_a_wide_tuple_in_its_middle_so_its_last_result_stays() -> None:
    """(*semver.Version {…}, error nil): the error after a wide first result was cut out of the row."""
    wide = '(*semver.Version {Major: 0, Minor: 0, Patch: 0, PreRelease: "", Metadata: ""}, error nil)'
    row = render_row(CallRecord("semver.NewVersion", (("version", '"0.0.0"'),), returned=wide))
    assert '→ (*semver.Version {Major: 0, Minor: 0, Patch: 0,…, error nil)' in row, row
    odd = '("a, (b", ' + "c" * 90 + ")"  # a comma inside quotes is not the tuple's
    assert render_row(CallRecord("f", (), returned=odd)).endswith("…"), render_row(CallRecord("f", (), returned=odd))
    assert render_row(CallRecord("f", (), returned="(" + "z" * 80 + ")")).endswith("z…")  # one element: as before


def render_row(record: CallRecord) -> str:
    return call_row(record, None, ROW_VALUE_CHARS, False)
