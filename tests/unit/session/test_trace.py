"""Tracepoints against the fake debugger: each point becomes a hidden logpoint whose message carries a token;
the fake plays the debugger by printing the message with its expressions filled in. The trace lines are taken
out of the program's output as hits, the trace ends at max hits, a stop, the exit or its deadline, and the
logpoints are gone afterwards whatever ended it."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from polydbg.errors import SessionEndedError, UsageError
from polydbg.session.model import State, TraceHit, TraceResult
from polydbg.session.trace import _SEPARATOR, _Collector
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


def hit(rig: Rig, file: str, line: int, **values: str) -> None:
    """The debugger reaching the logpoint at ``line``: it prints the message with each {expression} filled in."""
    text = re.sub(r"\{([^{}]+)\}", lambda m: values[m.group(1)], logpoints(rig, file)[line])
    rig.backend.listener.on_output("stdout", text + "\n")


async def tracing(rig: Rig, points: list[tuple[str, int]], expressions: list[str], max_hits: int,
                  timeout_s: float = DEADLINE_S) -> asyncio.Future[TraceResult]:
    """Start a trace and wait until the program runs under its logpoints."""
    trace = asyncio.ensure_future(rig.session.trace(points, expressions, max_hits, timeout_s, None))
    await asyncio.wait_for(rig.backend.entered["resume"].wait(), DEADLINE_S)
    return trace


def test_the_collector_takes_trace_lines_out_and_keeps_the_first_hits() -> None:
    collector = _Collector("<<t>>", ["i", "name"], 2)
    line = f"<<t>>/src/app.py:12{_SEPARATOR}1{_SEPARATOR}'a'"
    rest = collector.sink(f"before\n{line}\nafter\n")
    assert rest == "before\nafter\n" and not collector.done.is_set()
    assert collector.sink("no token here\n") == "no token here\n"
    collector.sink(f"<<t>>/src/app.py:12{_SEPARATOR}2{_SEPARATOR}{'x' * 500}\n<<t>>nowhere{_SEPARATOR}3\n")
    assert collector.done.is_set() and collector.total == 3
    assert collector.hits[0] == TraceHit(file="/src/app.py", line=12, values={"i": "1", "name": "'a'"})
    assert len(collector.hits) == 2 and len(collector.hits[1].values["name"]) == 200  # values are clipped


async def test_a_trace_collects_hits_until_max_hits_and_removes_its_logpoints(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4), (program, 6)], ["line_4", "line_4 * 2"], 3)
    assert set(logpoints(rig, program)) == {4, 6}
    assert rig.session.breakpoint_infos() == []  # hidden from the agent's list
    hit(rig, program, 4, line_4="4", **{"line_4 * 2": "8"})
    rig.backend.listener.on_output("stdout", "the program's own line\n")
    hit(rig, program, 6, line_4="4", **{"line_4 * 2": "8"})
    hit(rig, program, 4, line_4="5", **{"line_4 * 2": "10"})
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "max_hits" and result.total_hits == 3 and result.report is None
    assert result.state == State.running
    assert [(h.line, h.values) for h in result.hits] == [(4, {"line_4": "4", "line_4 * 2": "8"}),
                                                         (6, {"line_4": "4", "line_4 * 2": "8"}),
                                                         (4, {"line_4": "5", "line_4 * 2": "10"})]
    assert {h.file for h in result.hits} == {program}
    assert rig.session.output.read(None, 10_000).text == "the program's own line\n"
    assert logpoints(rig, program) == {} and rig.session.breakpoints.items == {}


async def test_a_stop_ends_the_trace_with_its_report(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10)
    hit(rig, program, 4, line_4="4")
    rig.backend.stop_again()
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "stopped" and len(result.hits) == 1
    assert result.report is not None and result.report.location is not None and result.report.location.line == 3
    assert logpoints(rig, program) == {}


async def test_the_exit_ends_the_trace(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10)
    rig.backend.listener.on_exited(0)
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "exited" and result.hits == [] and result.state == State.exited
    assert result.report is not None and result.report.exit_code == 0


async def test_the_deadline_ends_the_trace_and_its_logpoints(rig: Rig, program: str) -> None:
    trace = await tracing(rig, [(program, 4)], ["line_4"], 10, timeout_s=0.05)
    result = await asyncio.wait_for(trace, DEADLINE_S)
    assert result.stopped_because == "timeout" and result.state == State.running
    assert logpoints(rig, program) == {} and rig.session.core.trace_sink is None


async def test_a_debugger_without_logpoints_cannot_trace(rig: Rig, program: str) -> None:
    rig.backend.capabilities.log_points = False
    with pytest.raises(UsageError, match=r"fake has no logpoints.*use conditional breakpoints"):
        await rig.session.trace([(program, 4)], ["line_4"], 10, DEADLINE_S, None)
    assert rig.backend.sent_files(program) == [] and "resume" not in rig.backend.calls


async def test_an_ended_session_cannot_trace(rig: Rig, program: str) -> None:
    rig.backend.listener.on_terminated("gone")
    with pytest.raises(SessionEndedError, match="gone"):
        await rig.session.trace([(program, 4)], ["line_4"], 10, DEADLINE_S, None)
