"""Tracepoints against the fake debugger: each point becomes a hidden logpoint whose message carries a token;
the fake plays the debugger by printing the message, with its expressions filled in, as a logpoint's line.
The trace lines are taken out of the logpoints' stream as hits, every hit is counted (also one in transit at
the exit), ``max_hits`` ends the trace exactly, the rows go to the trace log, the answer keeps the first and
last rows and a summary, a point that cannot bind is named at once, and the logpoints are gone afterwards
whatever ended the trace."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from polydbg.backends.base import LOGPOINT
from polydbg.errors import AdapterRequestError, SessionEndedError, UsageError
from polydbg.session import execution
from polydbg.session.model import State, StopReport, TraceHit, TraceResult
from polydbg.session.output import OutputBuffer
from polydbg.session.trace import _SEPARATOR, FIRST_ROWS_BYTES, _Collector, _Where, holds, row_labels
from tests.unit.session.rig import Rig, write_program

DEADLINE_S = 5.0


@pytest.fixture
def program(tmp_path: Path) -> str:
    return write_program(tmp_path)


@pytest.fixture
async def rig(program: str) -> Rig:
    rig = Rig(program)
    await rig.start()
    return rig


def logpoints(rig: Rig, file: str) -> dict[int, str]:
    """The logpoints last sent for ``file``: line → message."""
    sent = rig.backend.sent_files(file)
    return {spec.line: spec.log_message for spec in (sent[-1] if sent else []) if spec.log_message is not None}


def line_of_hit(message: str, **values: str) -> str:
    return re.sub(r"\{([^{}]+)\}", lambda m: values[m.group(1)], message) + "\n"


def hit(rig: Rig, file: str, line: int, **values: str) -> None:
    """The debugger reaching the logpoint at ``line``: it prints the message with each {expression} filled in."""
    rig.backend.listener.on_output(LOGPOINT, line_of_hit(logpoints(rig, file)[line], **values))


async def tracing(rig: Rig, points: list[tuple[str, int]], expressions: list[str], max_hits: int,
                  timeout_s: float = DEADLINE_S) -> asyncio.Future[TraceResult]:
    """Start a trace and wait until the program runs under its logpoints."""
    trace = asyncio.ensure_future(rig.session.trace(points, expressions, max_hits, timeout_s, None))
    await asyncio.wait_for(rig.backend.entered["resume"].wait(), DEADLINE_S)
    return trace


def trace_rows(rig: Rig) -> list[str]:
    return rig.session.read_output(0, 1_000_000, "trace").text.splitlines()


def collector(max_hits: int, expressions: list[str]) -> tuple[_Collector, OutputBuffer]:
    class Core:
        trace_log = OutputBuffer()
    core = Core()
    return _Collector(core, "<<t>>", expressions, max_hits), core.trace_log  # type: ignore[arg-type]


def test_the_collector_counts_up_to_max_hits_and_keeps_the_first_and_last_rows_in_budget() -> None:
    taken, log = collector(5000, ["i", "name"])
    for n in range(3000):
        taken.take(f"/src/app.py:12{_SEPARATOR}{n}{_SEPARATOR}'{'x' * (n % 3)}'")
    assert taken.total == 3000 and not taken.done.is_set()
    assert taken.first[0][0] == TraceHit(file="/src/app.py", line=12, values={"i": "0", "name": "''"})
    result = taken.result("s1", "exited", State.exited, None, None)
    assert sum(len(f"/src/app.py:12  i={h.values['i']}, name={h.values['name']}") + 1 for h in result.hits) \
        <= FIRST_ROWS_BYTES
    assert result.last_hits is not None and result.last_hits[-1].values["i"] == "2999"
    assert len(result.hits) + result.skipped + len(result.last_hits) == 3000
    # every row is in the log, the first one the answer does not hold at more_cursor
    rows = log.read(0, 1_000_000).text.splitlines()
    assert len(rows) == 3000 and rows[0] == "/src/app.py:12  i=0, name=''"
    assert result.more_cursor is not None
    assert log.read(result.more_cursor, 100).text.startswith(f"/src/app.py:12  i={len(result.hits)},")
    assert result.values == {"i": "3000 hits, 3000 distinct (each once), 0..2999, first 0, last 2999",
                             "name": "3000 hits, 3 distinct: '' ×1000, 'x' ×1000, 'xx' ×1000"}
    assert result.threads is None and result.where is None


def test_max_hits_is_exact_and_long_values_are_cut() -> None:
    taken, log = collector(2, ["v"])
    for n in range(5):
        taken.take(f"/a.py:3{_SEPARATOR}{'y' * 500}{n}")
    assert taken.done.is_set() and taken.total == 2
    assert len(log.read(0, 100_000).text.splitlines()) == 2  # the lines after max_hits are not recorded
    assert len(taken.first[0][0].values["v"]) == 200


async def test_a_trace_collects_hits_until_max_hits_and_removes_its_logpoints(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4), (program, 6)], ["line_4", "line_4 * 2"], 3)
    assert set(logpoints(rig, program)) == {4, 6}
    assert rig.session.breakpoint_infos() == []  # hidden from the agent's list
    hit(rig, program, 4, line_4="4", **{"line_4 * 2": "8"})
    rig.backend.listener.on_output("stdout", "the program's own line\n")
    rig.backend.listener.on_output(LOGPOINT, "the agent's own logpoint\n")
    hit(rig, program, 6, line_4="4", **{"line_4 * 2": "8"})
    hit(rig, program, 4, line_4="5", **{"line_4 * 2": "10"})
    late = logpoints(rig, program)[6]
    hit(rig, program, 6, line_4="5", **{"line_4 * 2": "10"})  # past max_hits: not counted
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "max_hits" and result.total_hits == 3 and result.report is None
    assert result.state == State.running
    assert [(h.line, h.values) for h in result.hits] == [(4, {"line_4": "4", "line_4 * 2": "8"}),
                                                         (6, {"line_4": "4", "line_4 * 2": "8"}),
                                                         (4, {"line_4": "5", "line_4 * 2": "10"})]
    assert {h.file for h in result.hits} == {program}
    # a line of this trace arriving after it ended (in transit while its logpoints were removed) is dropped
    rig.backend.listener.on_output(LOGPOINT, line_of_hit(late, line_4="6", **{"line_4 * 2": "12"}))
    assert rig.session.read_output(None, 10_000, "all").text == "the program's own line\nthe agent's own logpoint\n"
    assert rig.session.read_output(None, 10_000, "logpoints").text == "the agent's own logpoint\n"
    assert logpoints(rig, program) == {} and rig.session.breakpoints.items == {}
    assert trace_rows(rig) == ["trace 1: prog.py:4, prog.py:6 — line_4, line_4 * 2",
                               "prog.py:4  line_4=4, line_4 * 2=8", "prog.py:6  line_4=4, line_4 * 2=8",
                               "prog.py:4  line_4=5, line_4 * 2=10"]


async def test_a_hit_split_across_two_chunks_is_one_hit(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 2)
    whole = line_of_hit(logpoints(rig, program)[4], line_4="1") + line_of_hit(logpoints(rig, program)[4], line_4="2")
    cut = len(whole) // 2 + 3
    rig.backend.listener.on_output(LOGPOINT, whole[:cut])
    rig.backend.listener.on_output(LOGPOINT, whole[cut:])
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert [h.values for h in result.hits] == [{"line_4": "1"}, {"line_4": "2"}]
    assert rig.session.read_output(None, 10_000, "all").text == ""


async def test_a_stop_ends_the_trace_with_its_report_and_names_the_breakpoint(rig: Rig, program: str) -> None:
    mine = await rig.session.add_line_breakpoint(program, 9)
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10)
    hit(rig, program, 4, line_4="4")
    rig.backend.stop_again(hit=(mine.id,))
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "stopped" and len(result.hits) == 1
    assert result.report is not None and result.report.location is not None and result.report.location.line == 3
    assert result.note == f"ended by breakpoint #{mine.id} (prog.py:9)"
    assert logpoints(rig, program) == {}


async def test_a_stop_no_breakpoint_names_says_what_stopped(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10)
    rig.backend.stop_again("exception")
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.note == "ended by a stop (exception)"


async def test_the_exit_ends_the_trace_after_the_hits_in_transit(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10)
    message = logpoints(rig, program)[4]
    rig.backend.listener.on_exited(0)
    rig.backend.listener.on_output(LOGPOINT, line_of_hit(message, line_4="4"))  # delivered after the exit event
    assert not trace.done()
    rig.backend.listener.on_terminated(None)
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "exited" and result.total_hits == 1 and result.state == State.exited
    assert result.report is not None and result.report.exit_code == 0


async def test_an_exit_the_debugger_never_follows_with_its_end_ends_the_trace_once_it_is_silent(
        rig: Rig, program: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(execution, "END_SETTLE_S", 0.05)
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10)
    rig.backend.listener.on_exited(0)
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "exited" and result.total_hits == 0


async def test_a_trace_sent_as_the_program_ends_answers_the_end(rig: Rig, program: str) -> None:
    """The debugger refuses the points because it has just lost the program ("Server[1] disconnected
    unexpectedly" from debugpy during the interpreter's exit), and reports the exit after: the answer is the exit,
    no hits, not a refused breakpoint."""
    rig.backend.listener.on_continued(1, True)  # the program runs to its end
    gone = "Server[1] disconnected unexpectedly"
    rig.backend.failures["set_breakpoints"] = AdapterRequestError("setBreakpoints", gone)
    rig.backend.failures["threads"] = AdapterRequestError("threads", gone)
    trace = asyncio.ensure_future(rig.session.trace([(program, 4), (program, 6)], ["line_4"], 10, DEADLINE_S, None))
    await asyncio.wait_for(rig.backend.entered["threads"].wait(), DEADLINE_S)
    rig.backend.listener.on_exited(0)
    rig.backend.listener.on_terminated(None)
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert (result.stopped_because, result.total_hits, result.state) == ("exited", 0, State.exited)
    assert result.note == "the program ended as the trace points were being set"
    assert result.report is not None and result.report.exit_code == 0
    assert "resume" not in rig.backend.calls and rig.session.breakpoints.visible() == []


async def test_the_deadline_ends_the_trace_and_its_logpoints(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10, timeout_s=0.05)
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "timeout" and result.state == State.running
    assert logpoints(rig, program) == {}
    rig.backend.listener.on_output(LOGPOINT, "<<polydbg-trace-s1-1>>" + f"{program}:4{_SEPARATOR}1\n")
    assert rig.session.read_output(None, 10_000, "all").text == ""


async def test_a_point_that_cannot_bind_is_named_at_once(rig: Rig, program: str) -> None:
    rig.backend.unbound_lines = {5: "could not find statement"}
    with pytest.raises(UsageError, match=r"no trace point can be bound, so nothing ran: prog\.py:5: could not "
                                         r"find statement; trace lines with code"):
        await rig.session.trace([(program, 5)], ["line_4"], 10, DEADLINE_S, None)
    assert "resume" not in rig.backend.calls and rig.session.breakpoints.items == {}
    assert rig.session.state == State.stopped

    # with another point that binds, the trace runs and its answer names the one that did not
    rig.backend.moved_lines = {7: 8}
    trace = await tracing(rig, [(program, 5), (program, 7)], ["line_4"], 1)
    hit(rig, program, 7, line_4="4")
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.note == ("never bound (no hits there): prog.py:5: could not find statement; "
                           "bound on another line: prog.py:7 at line 8")
    assert [(h.line, h.values) for h in result.hits] == [(8, {"line_4": "4"})]


async def test_a_point_whose_code_is_not_loaded_yet_waits_for_it(rig: Rig, program: str) -> None:
    rig.backend.unbound_lines = {5: "not bound yet: the module has not loaded; it binds when it does"}
    result = await rig.session.trace([(program, 5)], ["line_4"], 10, 0.05, None)
    assert result.stopped_because == "timeout"
    assert result.note == ("not bound during the trace: prog.py:5: not bound yet: the module has not loaded; "
                           "it binds when it does")


async def test_a_debugger_without_logpoints_cannot_trace(rig: Rig, program: str) -> None:
    rig.backend.capabilities.log_points = False
    with pytest.raises(UsageError, match=r"fake has no logpoints.*use conditional breakpoints"):
        await rig.session.trace([(program, 4)], ["line_4"], 10, DEADLINE_S, None)
    assert rig.backend.sent_files(program) == [] and "resume" not in rig.backend.calls


async def test_too_many_or_too_long_expressions_are_refused(rig: Rig, program: str) -> None:
    with pytest.raises(UsageError, match="at most 32 expressions"):
        await rig.session.trace([(program, 4)], [f"line_{n}" for n in range(33)], 10, DEADLINE_S, None)
    with pytest.raises(UsageError, match="at most 2000 characters together"):
        await rig.session.trace([(program, 4)], ["x" * 1001, "y" * 1000], 10, DEADLINE_S, None)
    assert rig.backend.sent_files(program) == []


async def test_an_ended_session_cannot_trace(rig: Rig, program: str) -> None:
    rig.backend.listener.on_terminated("gone")
    with pytest.raises(SessionEndedError, match="gone"):
        await rig.session.trace([(program, 4)], ["line_4"], 10, DEADLINE_S, None)


def test_rows_name_files_as_the_agent_passes_them_or_by_a_name_that_tells_them_apart() -> None:
    assert row_labels(["/w/pkg/__init__.py", "/w/app.py"], "/w") == {"/w/pkg/__init__.py": "pkg/__init__.py",
                                                                     "/w/app.py": "app.py"}
    assert row_labels(["/lib/a/x.py", "/lib/b/y.py"], "/w") == {"/lib/a/x.py": "x.py", "/lib/b/y.py": "y.py"}
    assert row_labels(["/lib/a/x.py", "/lib/b/x.py"], "/w") == {"/lib/a/x.py": "/lib/a/x.py",
                                                                "/lib/b/x.py": "/lib/b/x.py"}


def test_a_lost_update_reads_in_the_summary_ahead_of_the_rows() -> None:
    """Two threads read the same count before each writes it plus one: each value is seen twice, once by
    each thread, and the summary says so; the rows name their thread."""
    taken, log = collector(5000, ["seen"])
    taken.threaded = True
    for n in range(500):
        for thread in ("adder-1", "adder-2"):
            taken.take(f"/src/race.py:16{_SEPARATOR}{thread}{_SEPARATOR}{n}")
    result = taken.result("s1", "exited", State.exited, None, None)
    assert result.values == {"seen": "1000 hits, 500 distinct (each twice), 0..499, first 0, last 499"}
    assert result.threads == ["threads: 2, hits: adder-1 500, adder-2 500",
                              "  adder-1: 500 hits; seen 500 distinct (each once), 0..499",
                              "  adder-2: 500 hits; seen 500 distinct (each once), 0..499",
                              "  seen: 500 values seen in more than one thread"]
    assert result.hits[1] == TraceHit(file="/src/race.py", line=16, values={"seen": "0"}, thread="adder-2")
    assert log.read(0, 100).text.startswith("/src/race.py:16 [adder-1]  seen=0\n/src/race.py:16 [adder-2]  seen=0\n")


def test_a_summary_leaves_the_first_rows_less_room_and_the_cursor_reads_from_the_first_one_left_out() -> None:
    taken, log = collector(100_000, [f"e{n}" for n in range(6)])
    for n in range(400):
        taken.take(f"/a.py:3{_SEPARATOR}" + _SEPARATOR.join(f"'{'v' * 30}{n * k}'" for k in range(6)))
    alone = taken.result("s1", "running", State.running, None, None)
    assert len(alone.hits) == len(taken.first)  # with no report, the first rows the collector kept fit
    result = taken.result("s1", "exited", State.exited, StopReport(session_id="s1", state=State.exited), None)
    shown = len(result.hits)
    assert 1 <= shown < len(taken.first)  # the summary took room the first rows had while collecting
    assert result.more_cursor is not None
    assert log.read(result.more_cursor, 200).text.startswith(f"/a.py:3  e0='{'v' * 30}0', e1='{'v' * 30}{shown}'")
    assert shown + result.skipped + len(result.last_hits or []) == 400


def test_where_names_how_often_a_condition_held_and_its_first_and_last_hit() -> None:
    taken, log = collector(5000, ["i"])
    taken.where = _Where("i % 7 == 3")
    taken.labels = {"/src/app.py": "app.py"}
    for n in range(100):
        taken.take(f"/src/app.py:12{_SEPARATOR}{n}{_SEPARATOR}{'True' if n % 7 == 3 else 'False'}")
    taken.take(f"/src/app.py:12{_SEPARATOR}100{_SEPARATOR}<error: ZeroDivisionError: division by zero>")
    result = taken.result("s1", "exited", State.exited, None, None)
    cursor = len("app.py:12  i=0\napp.py:12  i=1\napp.py:12  i=2\n")
    assert result.where == ("where i % 7 == 3: held at 14 of 101 hits; first at hit 4 (app.py:12  i=3), last at "
                            f"hit 95 (app.py:12  i=94); rows from the first: debug_output(stream=\"trace\", "
                            f"cursor={cursor}); not evaluated at 1: <error: ZeroDivisionError: division by zero>")
    assert log.read(cursor, 60).text.startswith("app.py:12  i=3  ← where\napp.py:12  i=4\n")  # rows where it held
    assert result.hits[0].values == {"i": "0"}  # the condition's value is not a row's


def test_a_where_that_never_holds_says_so() -> None:
    assert [holds(v) for v in ("False", "false", "0", "None", "nil", "''", "[]", "True", "1", "'x'", "<error: x>")] \
        == [False] * 7 + [True] * 3 + [None]
    taken, _ = collector(5000, ["i"])
    taken.where = _Where("i < 0")
    for n in range(3):
        taken.take(f"/src/app.py:12{_SEPARATOR}{n}{_SEPARATOR}False")
    assert taken.result("s1", "exited", State.exited, None, None).where == "where i < 0: never held in 3 hits"


async def test_each_point_sends_the_thread_and_the_where_condition_with_the_expressions(
        rig: Rig, program: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rig.backend, "trace_thread", lambda: "{thread}", raising=False)
    trace = asyncio.ensure_future(rig.session.trace([(program, 4)], ["line_4"], 2, DEADLINE_S, None,
                                                    where="line_4 > 4"))
    await asyncio.wait_for(rig.backend.entered["resume"].wait(), DEADLINE_S)
    assert logpoints(rig, program)[4].endswith(
        f"{program}:4{_SEPARATOR}{{thread}}{_SEPARATOR}{{line_4}}{_SEPARATOR}{{line_4 > 4}}")
    hit(rig, program, 4, thread="main", line_4="4", **{"line_4 > 4": "False"})
    hit(rig, program, 4, thread="worker", line_4="5", **{"line_4 > 4": "True"})
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert [(h.thread, h.values) for h in result.hits] == [("main", {"line_4": "4"}), ("worker", {"line_4": "5"})]
    assert result.where is not None and result.where.startswith(
        "where line_4 > 4: held at 1 of 2 hits; first at hit 2 (prog.py:4 [worker]  line_4=5)")
    assert trace_rows(rig)[0] == "trace 1: prog.py:4 — line_4 where line_4 > 4"


def test_each_thread_counts_the_values_of_the_first_expressions_only() -> None:
    taken, _ = collector(5000, [f"e{n}" for n in range(10)])
    taken.threaded = True
    for n in range(40):
        taken.take(f"/a.py:3{_SEPARATOR}t{n % 2}{_SEPARATOR}" + _SEPARATOR.join(str(n * k) for k in range(10)))
    assert {name: list(counted.values) for name, counted in taken.threads.items()} == {
        "t0": ["e0", "e1", "e2", "e3"], "t1": ["e0", "e1", "e2", "e3"]}
    assert taken.threads["t1"].values["e1"].text() == "20 hits, 20 distinct (each once), 1..39, first 1, last 39"
