"""The session against a fake backend at the Backend seam: stops, continues and deaths that arrive
while a request is being answered. Each answer must belong to one stop, or say the program moved
and show where it is now; execution requests must not interleave.

The fake answers from the stop it is at (``FakeBackend.stop_no``) and can hold any call at a gate
the test opens, so the test decides exactly what happens while the session awaits it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from polydbg.backends.base import Backend, BackendListener, LaunchSpec
from polydbg.errors import ProgramMovedError, SessionEndedError, UsageError
from polydbg.session.model import State, StopReport
from polydbg.session.session import Session
from tests.fakes import FakeBackend


@pytest.fixture
def program(tmp_path: Path) -> str:
    path = tmp_path / "prog.py"
    path.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 20)))
    return str(path)


async def _started(program: str) -> tuple[Session, FakeBackend]:
    made: list[FakeBackend] = []

    def factory(listener: BackendListener) -> Backend:
        made.append(FakeBackend(listener, program))
        return made[-1]

    session = Session("s1", "python", "fake", factory, "prog.py", str(Path(program).parent))
    report = await session.start(LaunchSpec(program=program), 5.0, None)
    assert report.state == State.stopped and report.location is not None and report.location.line == 2
    return session, made[0]


async def _during(backend: FakeBackend, method: str, call: asyncio.Task[object], meanwhile: object) -> None:
    """Hold ``method`` until ``call`` reaches it, run ``meanwhile``, then let it answer."""
    await asyncio.wait_for(backend.entered[method].wait(), 5)
    assert not call.done()
    if callable(meanwhile):
        meanwhile()
    backend.gates[method].set()


async def test_a_stop_in_the_middle_of_an_inspection_answers_with_the_new_report(program: str) -> None:
    session, backend = await _started(program)
    first = await session.report()
    obj = next(v.ref for v in first.locals or [] if v.name == "obj")
    backend.hold("variables")
    call = asyncio.ensure_future(session.variables(None, obj, None, 0, 50, None))
    await _during(backend, "variables", call, backend.stop_again)
    with pytest.raises(ProgramMovedError) as moved:
        await call
    report = moved.value.report
    assert isinstance(report, StopReport)
    assert report.state == State.stopped and report.location is not None and report.location.line == 3
    assert [v.value for v in report.locals or []] == ["x at stop 2", "obj at stop 2"]
    # the new stop's data is its own: nothing of the first stop landed in it
    listing = await session.variables(None, None, None, 0, 50, None)
    assert [v.value for v in listing.variables] == ["x at stop 2", "obj at stop 2"]
    new_obj = next(v.ref for v in listing.variables if v.name == "obj")
    assert new_obj is not None
    children = await session.variables(None, new_obj, None, 0, 50, None)
    assert [v.value for v in children.variables] == ["child of 1002 at stop 2"]


async def test_a_ref_from_an_earlier_stop_is_refused_as_such(program: str) -> None:
    session, backend = await _started(program)
    first = await session.report()
    old_ref = next(v.ref for v in first.locals or [] if v.name == "obj")
    assert old_ref is not None
    assert (await session.variables(None, old_ref, None, 0, 50, None)).variables[0].value == "child of 1001 at stop 1"
    backend.stop_again()
    with pytest.raises(UsageError, match=f"ref {old_ref} is from an earlier stop"):
        await session.variables(None, old_ref, None, 0, 50, None)
    new = await session.report()
    new_ref = next(v.ref for v in new.locals or [] if v.name == "obj")
    assert new_ref is not None and new_ref != old_ref  # refs are never reused across stops
    children = await session.variables(None, new_ref, None, 0, 50, None)
    assert children.variables[0].value == "child of 1002 at stop 2"
    with pytest.raises(UsageError, match="never given out"):
        await session.variables(None, new_ref + 100, None, 0, 50, None)


async def test_a_resume_during_an_evaluate_answers_that_it_runs(program: str) -> None:
    session, backend = await _started(program)
    backend.hold("evaluate")
    call = asyncio.ensure_future(session.evaluate("x + 1", None))
    await _during(backend, "evaluate", call, lambda: backend.listener.on_continued(1, True))
    with pytest.raises(ProgramMovedError, match="it is running now") as moved:
        await call
    report = moved.value.report
    assert isinstance(report, StopReport) and report.state == State.running and report.locals is None


async def test_a_debugger_that_dies_during_a_step_ends_the_session_with_its_cause(program: str) -> None:
    session, backend = await _started(program)
    backend.die_on_step = True
    with pytest.raises(SessionEndedError, match="fake adapter closed its connection"):
        await session.step("over", 1, None, 5.0, None)
    assert session.state == State.terminated
    report = await session.report()
    assert report.state == State.terminated and report.note and "gone" in report.note


async def test_a_termination_while_a_step_waits_is_the_step_s_answer(program: str) -> None:
    session, backend = await _started(program)
    call = asyncio.ensure_future(session.step("over", 1, None, 5.0, None))
    await asyncio.wait_for(backend.entered["step"].wait(), 5)
    backend.listener.on_terminated("the fake debugger crashed")
    report = await asyncio.wait_for(call, 5)
    assert report.state == State.terminated and report.note == "the fake debugger crashed"
    with pytest.raises(SessionEndedError, match="crashed"):
        await session.evaluate("x", None)


async def test_execution_requests_do_not_interleave(program: str) -> None:
    session, backend = await _started(program)
    gate = backend.hold("step")
    stepping = asyncio.ensure_future(session.step("over", 1, None, 5.0, None))
    await asyncio.wait_for(backend.entered["step"].wait(), 5)
    continuing = asyncio.ensure_future(session.resume(None, None, 5.0, None))
    for _ in range(20):  # let the continue run as far as it can
        await asyncio.sleep(0)
    assert "resume" not in backend.calls, "a continue was sent while a step was being sent"
    gate.set()
    backend.stop_again("step")
    step_report = await asyncio.wait_for(stepping, 5)
    assert step_report.reason == "step"
    # the continue went out after the step's stop, and waits for the next stop
    await asyncio.wait_for(backend.entered["resume"].wait(), 5)
    backend.stop_again()
    continue_report = await asyncio.wait_for(continuing, 5)
    assert continue_report.reason == "breakpoint" and continue_report.location is not None
    assert continue_report.location.line == 4


async def test_a_pause_interrupts_a_continue_that_waits(program: str) -> None:
    session, backend = await _started(program)
    continuing = asyncio.ensure_future(session.resume(None, None, 30.0, None))
    await asyncio.wait_for(backend.entered["resume"].wait(), 5)
    paused = await asyncio.wait_for(session.pause(None, 5.0), 5)
    assert paused.state == State.stopped and paused.reason == "pause"
    report = await asyncio.wait_for(continuing, 5)  # the waiting continue sees the pause's stop
    assert report.reason == "pause"


async def test_a_report_read_while_the_program_moves_is_rebuilt_for_where_it_is(program: str) -> None:
    session, backend = await _started(program)
    backend.hold("scopes")
    call = asyncio.ensure_future(session.report())
    await _during(backend, "scopes", call, backend.stop_again)
    del backend.gates["scopes"]
    report = await asyncio.wait_for(call, 5)
    assert report.location is not None and report.location.line == 3
    assert [v.value for v in report.locals or []] == ["x at stop 2", "obj at stop 2"]


async def _running_with_an_unseen_stop(program: str) -> tuple[Session, FakeBackend]:
    """Launched, resumed until a short deadline (the answer says running), then stopped between calls."""
    session, backend = await _started(program)
    waited = await session.resume(None, None, 0.05, None)
    assert waited.state == State.running and waited.timed_out
    backend.stop_again()
    return session, backend


async def test_a_stop_between_calls_is_reported_by_the_next_continue_not_resumed(program: str) -> None:
    session, backend = await _running_with_an_unseen_stop(program)
    report = await session.resume(None, None, 5.0, None)
    assert report.state == State.stopped and report.location is not None and report.location.line == 3
    assert report.note and "nothing was resumed" in report.note
    assert backend.calls.count("resume") == 1
    continue_now = asyncio.ensure_future(session.resume(None, None, 5.0, None))  # now it is seen: it resumes
    await asyncio.wait_for(backend.entered["resume"].wait(), 5)
    backend.stop_again()
    assert (await asyncio.wait_for(continue_now, 5)).location.line == 4  # type: ignore[union-attr]
    assert backend.calls.count("resume") == 2


async def test_a_stop_between_calls_is_reported_by_the_next_step_and_trace(program: str) -> None:
    session, backend = await _running_with_an_unseen_stop(program)
    report = await session.step("over", 1, None, 5.0, None)
    assert report.note and "nothing was stepped" in report.note and "step" not in backend.calls
    session, backend = await _running_with_an_unseen_stop(program)
    traced = await session.trace([(program, 5)], ["x"], 10, 5.0, None)
    assert traced.stopped_because == "stopped" and traced.report is not None
    assert traced.report.note and "nothing was resumed" in traced.report.note
    assert backend.calls.count("resume") == 1


async def test_an_inspection_after_an_unseen_stop_gets_its_report_once(program: str) -> None:
    session, _backend = await _running_with_an_unseen_stop(program)
    unseen = await session.unseen_stop_report()
    assert unseen is not None and unseen.location is not None and unseen.location.line == 3
    assert await session.unseen_stop_report() is None
