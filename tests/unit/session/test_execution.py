"""Execution against the fake debugger: a continue or a step is sent, then waits for the program's next state
and reports it (a stop, an exit, a termination, or still running at the deadline); run-to sets and removes a
hidden breakpoint; a refused request leaves the program where it was; a replaced debugger's events are ignored."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

import pytest

from polydbg.backends.base import AttachSpec
from polydbg.errors import AdapterRequestError, AdapterTimeoutError, SessionEndedError, UsageError
from polydbg.mcp import render
from polydbg.session import execution
from polydbg.session.model import State
from tests.unit.session.rig import Rig, write_program

DEADLINE_S = 5.0

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameter (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


@pytest.fixture
def program(tmp_path: Path) -> str:
    return write_program(tmp_path)


@pytest.fixture
async def rig(program: str) -> Rig:
    rig = Rig(program)
    report = await rig.start()
    assert report.state == State.stopped and report.location is not None and report.location.line == 2
    return rig


async def test_continue_waits_for_the_stop_and_reports_it(rig: Rig, program: str) -> None:
    bp = await rig.session.add_line_breakpoint(program, 3)
    continuing = asyncio.ensure_future(rig.session.resume(None, None, DEADLINE_S, None))
    await asyncio.wait_for(rig.backend.entered["resume"].wait(), DEADLINE_S)
    for _ in range(5):
        await asyncio.sleep(0)
    assert not continuing.done() and rig.session.state == State.running
    rig.backend.stop_again()
    report = await asyncio.wait_for(continuing, DEADLINE_S)
    assert report.state == State.stopped and report.reason == "breakpoint" and not report.timed_out
    assert report.location is not None and (report.location.file, report.location.line) == (program, 3)
    assert rig.session.breakpoint_infos()[0].hits == 1  # counted by where it stopped: the stop named none
    assert bp.hits == 1


async def test_a_stop_that_names_its_breakpoints_counts_those(rig: Rig, program: str) -> None:
    named = await rig.session.add_line_breakpoint(program, 12)
    rig.backend.after["resume"] = lambda: rig.backend.stop_again(hit=(named.id,))
    report = await rig.session.resume(None, None, DEADLINE_S, None)
    assert report.location is not None and report.location.line == 3  # not at line 12, but it named #named
    assert named.hits == 1


async def test_a_continue_that_meets_no_stop_reports_running_at_its_deadline(rig: Rig) -> None:
    report = await rig.session.resume(None, None, 0.05, None)
    assert report.state == State.running and report.timed_out and report.location is None


async def test_a_step_reports_where_it_stopped(rig: Rig) -> None:
    rig.backend.after["step"] = lambda: rig.backend.stop_again("step")
    report = await rig.session.step("over", 1, None, DEADLINE_S, None)
    assert report.reason == "step" and report.location is not None and report.location.line == 3
    three = await rig.session.step("into", 3, None, DEADLINE_S, None)
    assert three.location is not None and three.location.line == 6 and three.note is None
    assert rig.backend.calls.count("step") == 4


async def test_steps_stop_early_at_a_breakpoint_and_say_so(rig: Rig) -> None:
    reasons = iter(["step", "breakpoint", "step"])
    rig.backend.after["step"] = lambda: rig.backend.stop_again(next(reasons))
    report = await rig.session.step("over", 3, None, DEADLINE_S, None)
    assert report.note == "stopped after 2 of 3 steps (breakpoint)"
    assert rig.backend.calls.count("step") == 2


async def test_a_refused_step_leaves_the_program_where_it_was(rig: Rig) -> None:
    before = await rig.session.report()
    rig.backend.failures["step"] = AdapterRequestError("next", "the thread is not suspended")
    with pytest.raises(UsageError, match="the debugger refused: the thread is not suspended"):
        await rig.session.step("over", 1, None, DEADLINE_S, None)
    after = await rig.session.report()
    assert after.state == State.stopped and after.location == before.location


async def test_after_a_refused_step_the_next_one_steps_from_the_stop_already_reported(rig: Rig) -> None:
    """The stop it stayed at is no new stop the agent has not seen ("the program stopped here after the last
    answer; nothing was stepped")."""
    rig.backend.failures["step"] = AdapterRequestError("next", "the process is stopped by a signal")
    with pytest.raises(UsageError, match="the debugger refused"):
        await rig.session.step("over", 1, None, DEADLINE_S, None)
    del rig.backend.failures["step"]
    stepped = await rig.session.step("over", 1, None, DEADLINE_S, None)
    assert stepped.note is None and rig.backend.calls.count("step") == 2, (stepped.note, rig.backend.calls)


async def test_run_to_a_line_sets_a_hidden_breakpoint_and_removes_it(rig: Rig, program: str) -> None:
    def reached() -> None:
        assert rig.session.breakpoint_infos() == []  # hidden from the agent's list while it waits
        rig.backend.stop_again()

    rig.backend.after["resume"] = reached
    report = await rig.session.resume(None, (program, 3), DEADLINE_S, None)
    assert report.note == "reached prog.py:3"
    assert [[spec.line for spec in specs] for specs in rig.backend.sent_files(program)] == [[3], []]
    assert rig.session.breakpoints.items == {}


async def test_a_refused_run_to_leaves_no_hidden_breakpoint_behind(rig: Rig, program: str) -> None:
    rig.backend.failures["resume"] = AdapterRequestError("continue", "the target is not running")
    with pytest.raises(UsageError, match="the debugger refused: the target is not running"):
        await rig.session.resume(None, (program, 3), DEADLINE_S, None)
    assert rig.session.breakpoints.items == {} and rig.backend.sent_files(program)[-1] == []
    assert rig.session.state == State.stopped


async def test_an_exit_while_continuing_is_the_answer(rig: Rig) -> None:
    def exits() -> None:
        rig.backend.listener.on_output("stdout", "bye\n")
        rig.backend.listener.on_exited(3)
        rig.backend.listener.on_terminated(None)

    rig.backend.after["resume"] = exits
    report = await rig.session.resume(None, None, DEADLINE_S, None)
    assert report.state == State.exited and report.exit_code == 3 and report.location is None
    assert report.output is not None and report.output.text == "bye\n"
    with pytest.raises(SessionEndedError, match="has exited \\(code 3\\); start it again with debug_restart"):
        await rig.session.evaluate("line_2", None)
    with pytest.raises(SessionEndedError):
        await rig.session.resume(None, None, DEADLINE_S, None)


async def test_a_termination_while_continuing_names_its_cause_and_reaps_the_debugger(rig: Rig) -> None:
    rig.backend.after["resume"] = lambda: rig.backend.listener.on_terminated("the program was killed by SIGKILL")
    report = await rig.session.resume(None, None, DEADLINE_S, None)
    assert report.state == State.terminated and report.note == "the program was killed by SIGKILL"
    for _ in range(5):  # the debugger is ended in the background
        await asyncio.sleep(0)
    assert rig.backend.terminated


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen(["sleep", "60"])


async def test_a_program_killed_by_a_signal_has_exited_so_whatever_code_its_debugger_says(program: str) -> None:
    """debugpy says 247 for SIGKILL, lldb -1, others nothing: the kernel's word is the one reported."""
    sleeper = _sleeper()
    rig = Rig(program, prepare=lambda backend: setattr(backend, "pid", sleeper.pid))
    try:
        await rig.start()
        sleeper.kill()
        # it has ended (its parent reaps it below)
        await asyncio.to_thread(os.waitid, os.P_PID, sleeper.pid, os.WEXITED | os.WNOWAIT)
        rig.backend.listener.on_exited(247)
        rig.backend.listener.on_terminated(None)
    finally:
        sleeper.wait()
    report = await rig.session.report()
    assert report.state == State.exited and report.exit_code is None, report
    assert report.description == "killed by signal 9 (SIGKILL)" and rig.session.cause == report.description
    assert render.stop_report(report).startswith("[s1] exited (killed by signal 9 (SIGKILL))")
    with pytest.raises(SessionEndedError, match=r"has exited \(killed by signal 9 \(SIGKILL\)\); start it again"):
        await rig.session.evaluate("line_2", None)


async def test_a_request_to_move_that_is_not_answered_may_still_take_effect_and_the_state_says_so(rig: Rig) -> None:
    """Sent, unanswered: the program stays where it was, unconfirmed, until the debugger says it moved."""
    before = await rig.session.report()
    rig.backend.failures["resume"] = AdapterTimeoutError("fake did not answer 'continue' within 10 s")
    with pytest.raises(AdapterTimeoutError, match="The request was sent, so it may still take effect") as failed:
        await rig.session.resume(None, None, DEADLINE_S, None)
    assert "did not answer 'continue'" in str(failed.value)
    cause = rig.session.cause or ""
    assert rig.session.state == State.stopped and cause.startswith("unconfirmed: "), cause
    assert (await rig.session.report()).location == before.location
    rig.backend.listener.on_continued(None, True)  # the debugger answered after all: it runs
    assert (await rig.session.report()).state == State.running and rig.session.cause is None
    rig.backend.stop_again("step")
    again = await rig.session.resume(None, None, DEADLINE_S, None)  # its stop is shown before anything moves
    assert again.note is not None and "stopped here after the last answer" in again.note, again.note


async def test_pausing_a_stopped_program_says_it_is_stopped(rig: Rig) -> None:
    report = await rig.session.pause(None, DEADLINE_S)
    assert report.note == "already stopped" and "pause" not in rig.backend.calls


async def test_a_restart_resends_the_breakpoints_and_ignores_the_old_debugger(rig: Rig, program: str) -> None:
    bp = await rig.session.add_line_breakpoint(program, 2)
    bp.hits = 4
    old = rig.backend
    report = await rig.session.restart(DEADLINE_S, None)
    assert rig.backend is not old and old.terminated
    assert report.state == State.stopped and report.location is not None and report.location.line == 2
    assert "--- restarted ---" in rig.session.output.read(None, 10_000).text  # marked in the program's output
    assert [[spec.line for spec in specs] for specs in rig.backend.sent_files(program)] == [[2]]
    assert bp.hits == 1 and bp.verified  # counted again from the new process's first stop
    old.listener.on_terminated("the old debugger ended")  # late news from the replaced debugger
    old.listener.on_output("stdout", "old output\n")
    assert rig.session.state == State.stopped and "old output" not in rig.session.output.read(None, 10_000).text


async def test_terminate_ends_the_debugger_and_the_session(rig: Rig) -> None:
    await rig.session.terminate(detach=False)
    assert rig.backend.terminated and rig.session.state == State.terminated
    assert rig.session.cause == "terminated by debug_terminate"
    report = await rig.session.report()
    assert report.state == State.terminated and report.note == "terminated by debug_terminate"


@pytest.fixture
def short_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    """A program is taken as quiet after 0.05 s of silence instead of 3 s (the deadlines stay long)."""
    monkeypatch.setattr(execution, "QUIET_S", 0.05)


async def test_a_continue_nothing_can_stop_answers_running_once_the_program_is_quiet(
        rig: Rig, program: str, short_quiet: None) -> None:
    await rig.session.add_line_breakpoint(program, 5, log_message="at {line_5}")  # a logpoint never stops
    report = await asyncio.wait_for(rig.session.resume(None, None, 600, None), DEADLINE_S)
    assert report.state == State.running and not report.timed_out
    assert report.note is not None and report.note.startswith(
        "nothing can stop the program (no breakpoint, no exception filter, no pause pending), so this did not wait")
    assert "debug_pause interrupts it, debug_break adds a breakpoint" in report.note
    # already running and quiet: at once
    again = await asyncio.wait_for(rig.session.resume(None, None, 600, None), DEADLINE_S)
    assert again.state == State.running and again.note == report.note


async def test_an_attach_with_breakpoints_answers_running_once_the_program_is_quiet_as_a_launch_does(
        program: str, short_quiet: None) -> None:
    """An attached program's earlier output is not the session's to see (nor, with most debuggers, its later
    output): quiet since the attach, it is reported running, not waited for until the deadline."""
    rig = Rig(program)
    await rig.session.add_line_breakpoint(program, 5)
    report = await asyncio.wait_for(rig.session.start(AttachSpec(pid=4242), 600, None), DEADLINE_S)
    assert report.state == State.running and not report.timed_out, report
    assert report.note is not None and "printed nothing for 0.05 s since it was attached" in report.note, report
    assert "no breakpoint was hit yet" in report.note


@pytest.mark.parametrize("can_stop", ["breakpoint", "function", "watch", "exception filter", "faults", "pause",
                                      "run to"])
async def test_a_continue_waits_when_something_can_stop_the_program(
        rig: Rig, program: str, short_quiet: None, can_stop: str) -> None:
    to = None
    if can_stop == "breakpoint":
        await rig.session.add_line_breakpoint(program, 5, condition="line_5 > 100")
    elif can_stop == "function":
        rig.session.breakpoints.add(function="work")
    elif can_stop == "watch":
        rig.session.breakpoints.add(watch="line_5")
    elif can_stop == "exception filter":
        rig.session.exception_filters = ["uncaught"]
    elif can_stop == "faults":
        rig.backend.capabilities.stops_on_faults = True
    elif can_stop == "pause":
        rig.session.execution._pause_pending = True
    else:
        to = (program, 7)
    report = await rig.session.resume(None, to, 0.3, None)
    assert report.state == State.running and report.timed_out and report.note is None
