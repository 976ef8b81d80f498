"""Breakpoint sync against the fake debugger: the store is independent of any connection, sent whole at each
start (files, then functions, then exception filters) and a file at a time on every change; what the debugger
made of each breakpoint (verified, moved, refused) lands on it; what the debugger cannot do is refused up front."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from polydbg.backends.base import BreakpointResult, Capabilities, SourceBreakpoint, StopEvent
from polydbg.errors import AdapterGoneError, AdapterRequestError, UsageError
from polydbg.session import core
from polydbg.session.breakpoints import Breakpoint
from tests.fakes import FakeBackend
from tests.unit.session.rig import Rig, write_program
from tests.workcount import Budget, reads_of


@pytest.fixture
def program(tmp_path: Path) -> str:
    return write_program(tmp_path)


def lines(specs: list[SourceBreakpoint]) -> list[int]:
    return [spec.line for spec in specs]


async def test_breakpoints_set_before_the_start_are_sent_at_configure(program: str, tmp_path: Path) -> None:
    other = write_program(tmp_path, "other.py")
    third = write_program(tmp_path, "a_third.py")
    rig = Rig(program)
    session = rig.session
    second = await session.add_line_breakpoint(program, 7)
    first = await session.add_line_breakpoint(other, 3, condition="line_3 > 1")
    await session.add_line_breakpoint(third, 1)
    function = await session.add_function_breakpoint("main")
    await session.set_exception_filters(["raised", "uncaught", "raised"])
    assert rig.backends == []  # nothing to send to yet
    await rig.start()
    sent = rig.backend.sent
    assert [kind for kind, _ in sent] == ["breakpoints", "breakpoints", "breakpoints", "functions", "filters"]
    assert [file for _, (file, _specs) in sent[:3]] == sorted([other, program, third])  # a file at a time, in order
    assert rig.backend.sent_files(other) == [[(first.id, 3, "line_3 > 1", None, None)]]
    assert lines(rig.backend.sent_files(program)[0]) == [7] and rig.backend.sent_files(program)[0][0].id == second.id
    assert sent[3][1][0].name == "main" and sent[3][1][0].id == function.id
    assert sent[4] == ("filters", ["raised", "uncaught"])  # asked twice, sent once
    assert all(info.verified for info in session.breakpoint_infos())


async def test_adding_and_removing_a_breakpoint_resends_its_whole_file(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    session = rig.session
    a = await session.add_line_breakpoint(program, 5)
    b = await session.add_line_breakpoint(program, 9)
    assert [lines(specs) for specs in rig.backend.sent_files(program)] == [[5], [5, 9]]
    assert await session.remove_breakpoints(a.id, None, False) == [a.id]
    assert lines(rig.backend.sent_files(program)[-1]) == [9]
    assert await session.remove_breakpoints(None, program, False) == [b.id]
    assert rig.backend.sent_files(program)[-1] == []  # an empty group clears the file in the debugger
    assert session.breakpoint_infos() == []


async def test_the_same_breakpoint_asked_twice_is_one(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    session = rig.session
    first = await session.add_line_breakpoint(program, 5, condition="line_5 == 5")
    again = await session.add_line_breakpoint(program, 5, condition="line_5 == 5")  # a retry after a timeout
    other = await session.add_line_breakpoint(program, 5)  # another condition: another breakpoint
    assert again is first and other.id != first.id
    assert [info.id for info in session.breakpoint_infos()] == [first.id, other.id]
    assert len(rig.backend.sent_files(program)) == 2  # the retry sent nothing
    rig.backend.capabilities.function_breakpoints = True
    assert await session.add_function_breakpoint("main") is await session.add_function_breakpoint("main")
    assert len([kind for kind, _ in rig.backend.sent if kind == "functions"]) == 1


async def test_a_debugger_without_conditions_refuses_one_and_says_what_to_do(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.capabilities.conditional_breakpoints = False
    sent = len(rig.backend.sent)
    with pytest.raises(UsageError, match="fake does not support conditions on breakpoints") as refused:
        await rig.session.add_line_breakpoint(program, 5, condition="line_5 == 5")
    assert "without one and check the value with debug_evaluate" in str(refused.value)
    with pytest.raises(UsageError, match=r"fake does not support hit conditions.*continue past the hits"):
        await rig.session.add_line_breakpoint(program, 5, hit_condition="3")  # the fake has none either
    with pytest.raises(UsageError, match=r"does not support function breakpoints.*first line instead"):
        await rig.session.add_function_breakpoint("main")
    assert rig.session.breakpoint_infos() == [] and len(rig.backend.sent) == sent


async def test_one_set_before_the_start_that_the_debugger_cannot_do_is_listed_unverified(program: str) -> None:
    rig = Rig(program)  # the fake has conditions but no hit conditions
    counted = await rig.session.add_line_breakpoint(program, 5, hit_condition="3")
    plain = await rig.session.add_line_breakpoint(program, 7)
    await rig.start()
    assert [spec.id for spec in rig.backend.sent_files(program)[0]] == [plain.id]  # the other is not sent
    infos = {info.id: info for info in rig.session.breakpoint_infos()}
    assert infos[plain.id].verified
    assert not infos[counted.id].verified
    assert "fake does not support hit conditions" in (infos[counted.id].message or "")


async def test_a_debugger_with_hit_conditions_takes_them(program: str) -> None:
    def counting(backend: FakeBackend) -> None:
        backend.capabilities = Capabilities(conditional_breakpoints=True, hit_conditional_breakpoints=True)

    rig = Rig(program, prepare=counting)
    await rig.start()
    bp = await rig.session.add_line_breakpoint(program, 5, hit_condition=">= 2")
    assert rig.backend.sent_files(program)[-1][0].hit_condition == ">= 2" and bp.hit_condition == ">= 2"


async def test_a_condition_the_language_cannot_evaluate_is_refused_before_it_is_sent(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    with pytest.raises(UsageError, match=r"not a Python expression.*to compare, write =="):
        await rig.session.add_line_breakpoint(program, 5, condition="line_5 = 5")
    assert rig.backend.sent_files(program) == [] and rig.session.breakpoint_infos() == []


async def test_lines_outside_the_file_are_refused(program: str, tmp_path: Path) -> None:
    rig = Rig(program)
    for line in (0, 20):
        with pytest.raises(UsageError, match=f"line {line} is outside .*it has 19 lines.*between 1 and 19"):
            await rig.session.add_line_breakpoint(program, line)
    with pytest.raises(UsageError, match="does not exist or cannot be read"):
        await rig.session.add_line_breakpoint(str(tmp_path / "missing.py"), 1)
    assert rig.session.breakpoint_infos() == []


async def test_verified_and_moved_lines_come_from_the_debugger(program: str) -> None:
    def binding(backend: FakeBackend) -> None:
        backend.moved_lines = {4: 6}  # line 4 has no code: the debugger binds the next line that has
        backend.unbound_lines = {8: "no executable code at line 8"}

    rig = Rig(program, prepare=binding)
    moved = await rig.session.add_line_breakpoint(program, 4)
    unbound = await rig.session.add_line_breakpoint(program, 8)
    report = await rig.start()
    infos = {info.id: info for info in rig.session.breakpoint_infos()}
    assert (infos[moved.id].verified, infos[moved.id].line, infos[moved.id].actual_line) == (True, 4, 6)
    assert (infos[unbound.id].verified, infos[unbound.id].message) == (False, "no executable code at line 8")
    assert report.note is not None and f"not bound yet: #{unbound.id} prog.py:8: no executable code" in report.note


async def test_a_later_change_from_the_debugger_lands_on_its_breakpoint(program: str) -> None:
    rig = Rig(program, prepare=lambda backend: backend.unbound_lines.update({8: "pending: not loaded yet"}))
    bp = await rig.session.add_line_breakpoint(program, 8)
    await rig.start()
    assert not rig.session.breakpoint_infos()[0].verified
    rig.backend.listener.on_breakpoint_changed(bp.id, BreakpointResult(True, 9))  # the module was loaded
    rig.backend.listener.on_breakpoint_changed(999, BreakpointResult(True, 1))  # not ours: ignored
    info = rig.session.breakpoint_infos()[0]
    assert (info.verified, info.actual_line, info.message) == (True, 9, None)


async def test_a_breakpoint_the_debugger_refuses_is_not_kept(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.failures["set_breakpoints"] = AdapterRequestError("setBreakpoints", "no such file loaded")
    with pytest.raises(UsageError, match=r"the debugger rejected the breakpoint at .*prog.py:5: no such file loaded"):
        await rig.session.add_line_breakpoint(program, 5)
    assert rig.session.breakpoint_infos() == []


async def test_unknown_exception_filters_are_refused_with_the_ones_offered(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.capabilities.exception_filters = ("raised", "uncaught")
    with pytest.raises(UsageError, match=r"unknown exception filter\(s\) \['thrown'\]; fake offers \['raised', "):
        await rig.session.set_exception_filters(["uncaught", "thrown"])
    await rig.session.set_exception_filters(["uncaught"])
    assert rig.backend.sent[-1] == ("filters", ["uncaught"]) and rig.session.exception_filters == ["uncaught"]


async def test_exception_type_names_pass_beside_filters_where_the_backend_takes_them(program: str) -> None:
    rig = Rig(program)
    await rig.start()
    rig.backend.capabilities.exception_filters = ("raised", "uncaught")
    rig.backend.capabilities.exception_types = True
    await rig.session.set_exception_filters(["uncaught", "ParseError", "json.JSONDecodeError"])
    assert rig.backend.sent[-1] == ("filters", ["uncaught", "ParseError", "json.JSONDecodeError"])
    with pytest.raises(UsageError, match=r"unknown exception filter 'raise'; did you mean 'raised'\? fake offers"):
        await rig.session.set_exception_filters(["raise"])
    assert rig.session.exception_filters == ["uncaught", "ParseError", "json.JSONDecodeError"]  # kept as it was


async def test_removing_what_is_not_there_says_what_is(program: str) -> None:
    rig = Rig(program)
    bp = await rig.session.add_line_breakpoint(program, 5)
    with pytest.raises(UsageError, match=f"no breakpoint with id 42; existing ids: \\[{bp.id}\\]"):
        await rig.session.remove_breakpoints(42, None, False)
    with pytest.raises(UsageError, match="no breakpoints in"):
        await rig.session.remove_breakpoints(None, program.replace("prog", "other"), False)
    with pytest.raises(UsageError, match="say which breakpoints to remove"):
        await rig.session.remove_breakpoints(None, None, False)
    assert await rig.session.remove_breakpoints(None, None, True) == [bp.id]


async def test_thousands_of_breakpoints_in_one_file_are_not_looked_up_by_a_scan(tmp_path: Path) -> None:
    """Every new breakpoint is checked against the agent's others (the same one asked twice is one): a scan of
    the store each time made a launch with 2,000 breakpoints cost seconds of CPU before the debugger heard of it.
    The work is counted, not timed: each breakpoint's fields are read 29 times in all (adding it, sending it at
    the start), where a scan per new breakpoint read them ~7,500 times."""
    program = tmp_path / "big.py"
    program.write_text("x = 1\n" * 5000)
    rig = Rig(str(program))
    with reads_of(Breakpoint, Budget("reads of a breakpoint's fields for 5,000 breakpoints", 100 * 5000)) as reads:
        for line in range(1, 5001):
            await rig.session.add_line_breakpoint(str(program), line)
        await rig.start()
        again = await rig.session.add_line_breakpoint(str(program), 2500)
    reads.check()
    assert again.line == 2500 and len(rig.session.breakpoint_infos()) == 5000  # found, not added
    await rig.session.remove_breakpoints(again.id, None, False)
    assert (await rig.session.add_line_breakpoint(str(program), 2500)).id != again.id  # removed from the index too


# -- a breakpoint sent as the program ends ---------------------------------------------------------------------

ENDED_S = 5.0  # the test's own deadline for an answer


async def running(program: str) -> Rig:
    """A session whose program runs (the fake stops at the start; the debugger then reports it running)."""
    rig = Rig(program)
    await rig.start()
    rig.backend.listener.on_continued(1, True)
    return rig


async def test_a_breakpoint_sent_as_the_program_ends_reads_as_the_end(program: str) -> None:
    """debugpy answers a breakpoint sent during the interpreter's exit with "Server[1] disconnected unexpectedly",
    and reports the exit after that refusal: the answer is the exit, and the breakpoint is kept for the next run."""
    rig = await running(program)
    gone = "Server[1] disconnected unexpectedly"
    rig.backend.failures["set_breakpoints"] = AdapterRequestError("setBreakpoints", gone)
    rig.backend.failures["threads"] = AdapterRequestError("threads", gone)  # it has lost the program
    adding = asyncio.ensure_future(rig.session.add_line_breakpoint(program, 5))
    await asyncio.wait_for(rig.backend.entered["threads"].wait(), ENDED_S)  # asked after the refusal
    rig.backend.listener.on_exited(0)
    rig.backend.listener.on_terminated(None)
    bp = await asyncio.wait_for(adding, ENDED_S)
    assert (bp.line, bp.verified) == (5, False)
    assert bp.message == "the program has exited (code 0) before it was set; debug_restart runs the program again " \
                         "with it"
    assert [b.id for b in rig.session.breakpoints.visible()] == [bp.id]
    # the same once the end is known: the breakpoint waits for the next run, and the answer says so
    later = await rig.session.add_line_breakpoint(program, 6)
    assert later.message == bp.message
    await rig.session.restart(ENDED_S, None)
    assert [(b.line, b.verified, b.message) for b in rig.session.breakpoints.visible()] == \
        [(5, True, None), (6, True, None)]


async def test_a_connection_that_closes_as_the_program_ends_reads_as_the_end(program: str) -> None:
    """A debugger that is the program's own runtime closes its connection at the exit (Node's inspector, the JVM's
    JDWP): a change sent then fails as a vanished debugger, and the exit is reported after. The exit is the
    answer, not "the adapter is gone"."""
    rig = await running(program)
    rig.backend.failures["set_breakpoints"] = AdapterGoneError("the connection closed")
    adding = asyncio.ensure_future(rig.session.add_line_breakpoint(program, 5))
    await asyncio.wait_for(rig.backend.failed["set_breakpoints"].wait(), ENDED_S)
    rig.backend.listener.on_exited(3)
    rig.backend.listener.on_terminated(None)
    bp = await asyncio.wait_for(adding, ENDED_S)
    assert bp.message is not None and bp.message.startswith("the program has exited (code 3) before it was set")
    assert rig.session.state.value == "exited" and rig.session.exit_code == 3


async def test_a_refusal_while_the_program_runs_is_said_at_once(program: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The debugger still answers for the program's threads: the refusal is not the program's end, and is not
    waited on (the wait for an end would outlast the test's deadline)."""
    monkeypatch.setattr(core, "ENDING_S", 3600.0)
    rig = await running(program)
    rig.backend.failures["set_breakpoints"] = AdapterRequestError("setBreakpoints", "no such file loaded")
    with pytest.raises(UsageError, match=r"rejected the breakpoint at .*prog.py:5: no such file loaded"):
        await asyncio.wait_for(rig.session.add_line_breakpoint(program, 5), ENDED_S)
    assert rig.session.breakpoint_infos() == [] and rig.session.state.value == "running"
    rig.backend.failures["set_breakpoints"] = AdapterRequestError("setBreakpoints", "the debugger has lost it")
    rig.backend.failures["threads"] = AdapterRequestError("threads", "the debugger has lost it")
    rig.backend.listener.on_stopped(StopEvent("pause", 1))  # a stopped program is not ending: refused at once
    with pytest.raises(UsageError, match="the debugger has lost it"):
        await asyncio.wait_for(rig.session.add_line_breakpoint(program, 6), ENDED_S)
