"""The stop report's text stays under its budget and every cut says how to get the rest."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polydbg.backends.recording import CallRecord
from polydbg.mcp.render import REPORT_BUDGET, sessions, stop_report, trace
from polydbg.session.calllog import CallLog
from polydbg.session.model import Location, Output, SessionInfo, SessionList, State, StopReport, TraceResult, Var
from polydbg.session.output import OutputBuffer
from polydbg.session.trace import _Collector


@pytest.fixture(autouse=True)
def _elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Run from a directory that does not contain the program, so paths render absolute."""
    monkeypatch.chdir(tmp_path)


def _report(locals_count: int, value_len: int, output_len: int, line_len: int = 150) -> StopReport:
    source = "\n".join(f"{n:>3}  " + "x" * line_len for n in range(10, 17))
    return StopReport(
        session_id="s1", state=State.stopped, reason="breakpoint", thread_id=1,
        location=Location(file="/opt/elsewhere/prog.py", line=13, function="work"), source=source,
        locals=[Var(name=f"v{i}", value="y" * value_len, type="str", ref=i + 1,
                    truncated=value_len >= 80 or None) for i in range(locals_count)],
        output=Output(text="".join(f"line {i}\n" for i in range(output_len)),
                      next_cursor=10_000, truncated=500, earlier_cursor=9_000) if output_len else None,
    )


def test_small_report_is_complete() -> None:
    text = stop_report(_report(locals_count=3, value_len=5, output_len=2, line_len=20))
    assert text.startswith("[s1] stopped (breakpoint) at /opt/elsewhere/prog.py:13 in work, thread 1")
    assert all(f"v{i} (str) = yyyyy [ref={i + 1}]" in text for i in range(3))
    assert "line 0\n  line 1" in text
    assert "… 500 earlier bytes: debug_output(cursor=9000)" in text
    assert "value cut" not in text


def test_large_report_is_cut_to_budget_with_hints() -> None:
    report = _report(locals_count=12, value_len=80, output_len=300)
    text = stop_report(report)
    assert len(text.encode()) <= REPORT_BUDGET
    assert "debug_output(cursor=9000)" in text  # the output was cut from the front and says where it starts
    assert "line 299" in text or "more: debug_variables(frame_id=0)" in text
    assert "value cut: debug_evaluate" in text
    shown = sum(1 for i in range(12) if f"  v{i} (str)" in text)
    if shown < 12:
        assert f"… {12 - shown} more: debug_variables(frame_id=0)" in text


def test_locals_are_dropped_from_the_end_when_output_is_not_enough() -> None:
    text = stop_report(_report(locals_count=12, value_len=140, output_len=0), budget=1600)
    assert len(text.encode()) <= 1600
    assert "  v0 (str)" in text
    assert "more: debug_variables(frame_id=0)" in text


def test_logpoint_lines_are_kept_before_the_programs_output_when_cut() -> None:
    report = _report(locals_count=0, value_len=0, output_len=0, line_len=20)
    report.output = Output(text="".join(f"out {i}\n" for i in range(100)), next_cursor=5_000, truncated=0,
                           earlier_cursor=4_000, logpoints="".join(f"i={i}\n" for i in range(20)),
                           logpoints_cursor=4_100)
    text = stop_report(report, budget=700)
    assert len(text.encode()) <= 700
    assert "logpoints:\n  i=0\n" in text and "  i=19" in text  # every logpoint line, the output cut instead
    assert "output:\n  … " in text and "earlier bytes: debug_output(cursor=4000)" in text
    tight = stop_report(report, budget=450)
    assert len(tight.encode()) <= 450 and "\n  i=19" in tight and "out " not in tight
    assert "  … 690 earlier bytes: debug_output(cursor=4000)" in tight  # the output, all of it cut
    assert 'earlier bytes: debug_output(stream="logpoints", cursor=4100)\n  i=' in tight  # from a line's start


def _trace(hits: int, report: StopReport | None, pad: str = "") -> TraceResult:
    """A trace of ``hits`` hits of one point with two expressions, as the session answers it."""
    class Core:
        trace_log = OutputBuffer()
    collector = _Collector(Core(), "<<t>>", ["i", "total"], 1_000_000)  # type: ignore[arg-type]
    for i in range(hits):
        collector.take(f"/opt/elsewhere/prog.py:13\x1f{i}\x1f{pad}{i * (i - 1) // 2}")
    return collector.result("s1", "stopped" if report else "exited", State.stopped if report else State.exited,
                            report, "ended by breakpoint #2 (prog.py:13)" if report else None)


def test_a_trace_of_a_thousand_hits_answers_in_two_kilobytes_with_its_first_and_last_rows() -> None:
    text = trace(_trace(1000, None))
    assert len(text.encode()) <= REPORT_BUDGET, text
    lines = text.splitlines()
    assert lines[0] == "[s1] 1000 hits (exited); program exited"
    assert lines[1] == "i: 1000 hits, 1000 distinct (each once), 0..999, first 0, last 999"  # the summary first
    assert lines[2] == ("total: 1000 hits, 999 distinct (998 seen once, 1 seen twice), most 0 ×2, 0..498501, first 0, "
                        "last 498501")
    assert lines[3:5] == ["rows:", "  prog.py:13  i=0, total=0"]
    assert lines[-1] == "  prog.py:13  i=999, total=498501"
    assert sum(line.startswith("  … ") and 'more rows: debug_output(stream="trace", cursor=' in line
               for line in lines) == 1


def test_a_trace_a_stop_ended_gives_its_last_rows_up_for_the_report() -> None:
    report = _report(locals_count=8, value_len=40, output_len=0, line_len=90)
    result = _trace(1000, report, pad="x" * 40)
    text = trace(result)
    assert len(text.encode()) <= REPORT_BUDGET, text
    assert "note: ended by breakpoint #2 (prog.py:13)" in text and "[s1] stopped (breakpoint)" in text
    assert "i=999" not in text and "v7 (str)" in text  # the last rows gave way (every local shown)
    shown = text.count("  prog.py:13  i=")
    assert f"… {1000 - shown} more rows: debug_output(stream=\"trace\", cursor={result.more_cursor})" in text


def test_a_call_trace_a_stop_ended_gives_its_rows_and_summary_up_for_the_stop_s_locals() -> None:
    """The stop's own facts (where, why, source, locals) come first: the trace takes what room is left and says
    where its rows are. A wide trace pushed every local out ("… 8 more: debug_variables(frame_id=0)")."""
    log = OutputBuffer()
    calls = CallLog(log, None, 1000)
    for n in range(40):
        calls.call(CallRecord(f"function_{n % 2}", (("text", f"'{'a' * 20}{n}'"), ("options", "{" + "o" * 70 + "}")),
                              returned=f"'{'r' * 40}{n}'", caller="run (/opt/app.py:9)", started=float(n)))
    calls.flush()
    traced = calls.result(None)
    report = _report(locals_count=8, value_len=40, output_len=30, line_len=40)
    text = trace(TraceResult(session_id="s1", hits=[], total_hits=40, stopped_because="stopped",
                             state=State.stopped, report=report, calls=traced))
    assert len(text.encode()) <= REPORT_BUDGET, text
    assert all(f"  v{i} (str) = {'y' * 40} [ref={i + 1}]" in text for i in range(8)), text
    assert "debug_variables(frame_id=0)" not in text and "\n 16  " in text, text  # every local, the source whole
    assert text.startswith("[s1] 40 calls, 0 raised (stopped); program stopped\n  function_0: 20 calls"), text
    shown = [line for line in text.splitlines() if line.startswith("  function_") and "(text=" in line]
    more = re.search(r"  … (\d+) more rows: debug_output\(stream=\"trace\", cursor=(\d+)\)", text)
    assert more is not None and len(shown) + int(more[1]) == 40 and shown, text
    assert log.read(int(more[2]), 200).text.startswith(f"function_{len(shown) % 2}(text='"), text  # the first gone
    alone = trace(TraceResult(session_id="s1", hits=[], total_hits=40, stopped_because="exited",
                              state=State.exited, calls=traced))  # no report: the trace as the session bounded it
    assert alone.count("\n  function_") > len(shown) and "more rows" in alone


def test_a_session_s_location_reads_as_its_reports_do() -> None:
    """Relative to the session's cwd (a stop report's convention), not absolute."""
    listed = SessionList(current="s-1", sessions=[SessionInfo(
        session_id="s-1", state=State.stopped, language="python", adapter="debugpy", target="app.py",
        location=Location(file="/proj/src/app.py", line=3, function="main"))])
    assert "at src/app.py:3" in sessions(listed, {"s-1": "/proj"})
    assert "at /proj/src/app.py:3" in sessions(listed)


def test_a_stack_reads_deadlocks_first_then_each_thread_s_locks_and_its_async_callers() -> None:
    from polydbg.mcp.render import stack
    from polydbg.session.model import AsyncFrame, FrameInfo, LockState, StackResult, TaskInfo, ThreadStack

    result = StackResult(session_id="s", current_thread=2, deadlocks=["deadlock: thread 2 … held by thread 2"],
                         threads=[ThreadStack(thread_id=2, name="t1", frames=[FrameInfo(index=0, function="t1",
                                                                                          file="/p/dl.c", line=5)],
                                              locks=LockState(holds=["mutex A"], waits_for="mutex B", owner=3,
                                                              state="blocked"),
                                              async_frames=[AsyncFrame(function="outer", file="/p/a.js", line=9,
                                                                       via="await")])],
                         tasks=[TaskInfo(name="waiter", awaiting="Event.wait",
                                         frames=[FrameInfo(index=0, function="middle", file="/p/aio.py", line=5)])])
    text = stack(result, "/p")
    assert text.splitlines()[:3] == ["DEADLOCK: thread 2 … held by thread 2", "thread 2 t1 (current):",
                                     "  blocked; holds mutex A; waits for mutex B (held by thread 3)"], text
    assert "— await — (async callers: listed, not selectable)\n     outer at a.js:9" in text, text
    assert "pending tasks (1):\n  waiter: awaits Event.wait; middle at aio.py:5" in text, text


def test_a_trace_with_many_expressions_threads_and_a_where_leads_with_its_summary_in_two_kilobytes() -> None:
    """Every part of the summary bounded: the expressions' lines, the threads' (the busiest first), the where line;
    the first rows take what is left, and a stop's report still fits."""
    from polydbg.session.trace import _Where

    class Core:
        trace_log = OutputBuffer()
    expressions = [f"expression_{n}" for n in range(12)]
    collector = _Collector(Core(), "<<t>>", expressions, 1_000_000, threaded=True)  # type: ignore[arg-type]
    collector.where = _Where("a_condition_that_is_long(expression_0) and " * 3 + "True")
    for i in range(3000):
        values = "\x1f".join(f"'{'v' * 30}{i * n % 97}'" for n in range(12))
        collector.take(f"/opt/elsewhere/prog.py:13\x1fworker-{i % 9}\x1f{values}\x1f{i % 5 == 0}")
    for report in (None, _report(locals_count=8, value_len=40, output_len=5, line_len=120)):
        result = collector.result("s1", "stopped" if report else "exited", State.stopped if report else State.exited,
                                  report, "ended by breakpoint #2 (prog.py:13)" if report else None)
        text = trace(result)
        assert len(text.encode()) <= REPORT_BUDGET, text
        lines = text.splitlines()
        assert lines[1 + bool(report)].startswith("expression_0: 3000 hits, 1 distinct: "), text
        if report is None:  # with a report this wide, the other expressions' lines give way
            assert lines[2].startswith("expression_1: 3000 hits, 97 distinct (90 seen 31 times, "), text
        hits = next(line for line in lines if line.startswith("threads: "))
        assert hits.startswith("threads: 9, hits: worker-0 334, worker-1 334, worker-2 334, "), text
        listed = [int(n) for n in re.findall(r"worker-\d (\d+)", hits)]
        assert hits.endswith(f" … {9 - len(listed)} more ({3000 - sum(listed)} hits)"), text
        assert any(line.startswith("where a_condition_that_is_long(expression_0) and ") for line in lines), text
        if report is None:
            assert "  prog.py:13 [worker-0]  expression_0='" in text, text  # a row, with its thread
        else:  # the summary and the report leave no room for a row this long: the log has them all
            assert '  … 3000 more rows: debug_output(stream="trace", cursor=0)' in lines, text
