"""The stop report against the fake debugger: where and why it stopped, the source around it with the current
line and breakpoints marked, the locals (the ones the code there names first), the exception, and the output
since the last report — each bounded, so a report stays small whatever the program holds."""

from __future__ import annotations

import unittest
from pathlib import Path

import pytest

from polydbg.backends.base import LOGPOINT, ExceptionDetail, StopEvent, Variable
from polydbg.errors import AdapterRequestError
from polydbg.session import report as reporting
from polydbg.session.inspection import REPORT_LOCALS, REPORT_VALUE_CHARS
from polydbg.session.model import State, StopReport
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program


@pytest.fixture
def program(tmp_path: Path) -> str:
    return write_program(tmp_path)


async def test_the_report_says_where_and_why_with_the_source_around_it(program: str) -> None:
    rig = Rig(program)
    await rig.session.add_line_breakpoint(program, 4)
    await rig.session.add_line_breakpoint(program, 5, log_message="at {line_5}")
    report = await rig.start()
    assert (report.state, report.reason, report.thread_id) == (State.stopped, "breakpoint", 1)
    assert report.location is not None
    assert (report.location.file, report.location.line, report.location.function) == (program, 2, "f1")
    assert report.source == "\n".join([
        "1  line_1 = 1",
        "2> line_2 = 2",  # the current line
        "3  line_3 = 3",
        "4 *line_4 = 4",  # a breakpoint
        "5 *line_5 = 5",
    ])


async def test_an_internal_breakpoint_is_not_marked(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    await rig.session.add_line_breakpoint(program, 4, internal=True)  # a run-to target, a tracepoint
    report = await rig.session.report()
    assert report.source is not None and "4  line_4" in report.source


async def test_long_source_lines_are_cut(tmp_path: Path) -> None:
    program = tmp_path / "long.py"
    program.write_text("a = 1\nb = '" + "x" * 300 + "'\n")
    rig = Rig(str(program))
    report = await rig.start()
    assert report.source is not None
    current = report.source.splitlines()[1]
    assert current.startswith("2> b = 'xxx") and current.endswith("…")
    assert len(current) == len("2> ") + reporting.REPORT_LINE_CHARS + 1


async def test_locals_are_bounded_and_the_ones_named_near_the_stop_come_first(program: str) -> None:
    many = [Variable(f"v{n}", str(n)) for n in range(20)]
    named = [Variable("line_1", "1"), Variable("line_2", "'" + "y" * 200 + "'")]  # on the stop line and above

    def holding(backend: FakeBackend) -> None:
        backend.locals = many + named

    rig = Rig(program, prepare=holding)
    report = await rig.start()
    assert report.locals is not None and len(report.locals) == REPORT_LOCALS
    assert report.locals_more == 22 - REPORT_LOCALS
    assert [v.name for v in report.locals[:3]] == ["line_1", "line_2", "v0"]  # then in the debugger's order
    value = report.locals[1]
    assert value.truncated and len(value.value) == REPORT_VALUE_CHARS and value.value.endswith("…")


async def test_a_value_that_holds_line_breaks_is_shown_on_one_line(program: str) -> None:
    """A multi-line repr (a DataFrame's inside a dict, a class's own __repr__) would break a listing's line: each
    break reads \\n, in the report's locals and in debug_variables, before the value is cut."""
    table = "{'df':    fruit  price\n0   pear    1.5\r\n1    fig   2.25}"
    rig = Rig(program, prepare=lambda backend: setattr(backend, "locals", [Variable("nested", table),
                                                                             Variable("odd", "a\u2028b\x1ec")]))
    report = await rig.start()
    assert report.locals is not None
    shown = {v.name: v.value for v in report.locals}
    assert shown == {"nested": "{'df':    fruit  price\\n0   pear    1.5\\n1    fig   2.25}", "odd": "a\\nb\\nc"}
    listed = await rig.session.variables(None, None, None, 0, 10, None)
    assert [v.value for v in listed.variables] == list(shown.values())
    assert all(len(value.splitlines()) == 1 for value in shown.values())


async def test_an_exception_stop_carries_the_exception_clipped(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.exception = ExceptionDetail("ValueError", "bad value " * 100)
    rig.backend.stop_again("exception")
    report = await rig.session.report()
    assert report.reason == "exception" and report.exception is not None
    assert report.exception.type == "ValueError"
    assert len(report.exception.message) == 300 and report.exception.message.endswith("…")


async def test_output_since_the_last_report_is_its_tail(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    listener = rig.backend.listener
    listener.on_output("stdout", "short\n")
    first = await rig.session.report()
    assert first.output is not None and first.output.text == "short\n" and first.output.truncated == 0
    assert (await rig.session.report()).output is None  # nothing new since
    listener.on_output("stderr", "e" * 1000)
    listener.on_output("stdout", "\nlast line\n")
    second = await rig.session.report()
    assert second.output is not None
    assert len(second.output.text) == reporting.REPORT_OUTPUT_BYTES and second.output.text.endswith("last line\n")
    assert second.output.truncated == 1011 - reporting.REPORT_OUTPUT_BYTES
    assert second.output.earlier_cursor == len("short\n")  # where debug_output reads what was left out
    assert second.output.next_cursor == rig.session.output.total


async def test_logpoint_lines_are_shown_apart_and_never_cut_away_by_the_programs_output(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    listener = rig.backend.listener
    listener.on_output("stdout", "before\n")
    await rig.session.report()
    for i in range(3):
        listener.on_output(LOGPOINT, f"i={i}\n")
        listener.on_output("stdout", "chatter " * 20 + "\n")
    report = await rig.session.report()
    assert report.output is not None
    assert report.output.logpoints == "i=0\ni=1\ni=2\n" and report.output.logpoints_truncated == 0
    assert report.output.logpoints_cursor == len("before\n")
    # the program's own output is its tail, from a line's start, saying where the rest begins
    assert report.output.text == ("chatter " * 20 + "\n") * 2
    assert report.output.truncated == len("chatter " * 20 + "\n")
    assert report.output.earlier_cursor == len("before\ni=0\n")
    assert report.output.next_cursor == rig.session.output.total
    # many logpoint lines: their tail, the rest said
    for i in range(200):
        listener.on_output(LOGPOINT, f"line {i:03d}\n")
    many = await rig.session.report()
    assert many.output is not None and many.output.text == "" and many.output.logpoints is not None
    assert many.output.logpoints.endswith("line 199\n") and many.output.logpoints.startswith("line ")
    assert len(many.output.logpoints) <= reporting.REPORT_OUTPUT_BYTES
    assert many.output.logpoints_truncated == 200 * len("line 000\n") - len(many.output.logpoints)


async def test_stop_details_that_cannot_be_read_are_a_note(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.failures["stack_trace"] = AdapterRequestError("stackTrace", "thread is running")
    rig.backend.stop_again()
    report = await rig.session.report()
    assert report.state == State.stopped and report.location is None
    assert report.note == "could not read the stop details: thread is running"


async def test_the_reports_of_an_ended_program(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.listener.on_exited(7)
    exited = await rig.session.report(note="asked")
    assert (exited.state, exited.exit_code, exited.note, exited.location) == (State.exited, 7, "asked", None)
    rig.backend.listener.on_terminated("the debugger was killed")  # after the exit: the exit stays the answer
    assert (await rig.session.report()).state == State.exited
    other = Rig(program)
    await other.start()
    other.backend.listener.on_terminated("the debugger was killed")
    terminated = await other.session.report(note="asked")
    assert terminated.state == State.terminated and terminated.note == "asked; the debugger was killed"


async def held_stop_report(program: str, held: bool) -> tuple[int, StopReport]:
    """Another process stopped at breakpoint 1 while the first one's stop was shown; the agent removed the
    breakpoint and resumed: the stop now shown is where no breakpoint is set (``held``: it waited)."""
    rig = Rig(program)
    bp = await rig.session.add_line_breakpoint(program, 3)
    await rig.start()
    await rig.session.remove_breakpoints(None, None, True)

    def held_stop() -> None:
        rig.backend.stop_no += 1  # the fake's next stop is at line 3
        rig.backend.listener.on_stopped(StopEvent("breakpoint", 7, thread_name="child process 42", held=held))

    rig.backend.after["resume"] = held_stop
    report = await rig.session.resume(None, None, 5.0, None)
    assert report.location is not None and report.location.line == 3
    return bp.id, report


async def test_a_held_stop_at_a_removed_breakpoint_says_it_was_made_before_the_removal(program: str) -> None:
    bp_id, report = await held_stop_report(program, held=True)
    assert report.note is not None and f"breakpoint {bp_id} before it was removed" in report.note
    assert "child process 42 stopped here" in report.note


async def test_a_stop_that_did_not_wait_is_not_explained_by_a_removed_breakpoint(program: str) -> None:
    _bp_id, report = await held_stop_report(program, held=False)  # made after the removal: by something else
    assert report.note is None


def test_a_long_assertion_message_keeps_the_lines_its_diff_changed() -> None:
    """unittest's assertEqual of two dicts of 300 keys that differ in one (a real project's failing test): the
    report cut the message at its start, the first of 300 equal keys, and left out the one that differed."""
    got = {f"key{i}": list(range(i % 7)) for i in range(300)}
    case = unittest.TestCase()
    case.maxDiff = None
    with pytest.raises(AssertionError) as failed:
        case.assertEqual(got, dict(got, key150=[9]))
    shown = reporting.exception_message(str(failed.value))
    assert len(shown) <= reporting.MESSAGE_CHARS, shown
    assert "-  'key150': [0, 1, 2]," in shown and "+  'key150': [9]," in shown, shown
    assert shown.startswith("{'key[3068 chars]") and "… 57 lines" in shown, shown
    short = "AssertionError: 3 != 4"
    assert reporting.exception_message(short) == short
    listed = "no such key\n" + "\n".join(f"  tried {n}" for n in range(100))  # no diff: cut at its start
    assert reporting.exception_message(listed) == listed[:reporting.MESSAGE_CHARS - 1] + "…"
