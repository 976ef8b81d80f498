"""Time control at the session, against the fake debugger: reverse runs go through the same waits and report as
forward ones; a reload comes first in a continue and is said in the note of the stop reached, and a refused one
moves nothing; debug_record's checkpoints; debug_restart reruns the launch's build, and a failed build restarts
nothing; a launch asking to record gets a debugger that records, or a refusal saying which does."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polydbg.backends import registry
from polydbg.backends.base import Backend
from polydbg.backends.timecontrol import Reloaded, ReloadRefused, RestartNeeded
from polydbg.errors import NotStoppedError, UsageError
from polydbg.session.model import Ack, State, StopReport
from tests.unit.session.rig import Rig, write_program

DEADLINE_S = 5.0

pytestmark = pytest.mark.usefixtures("anyio_backend")


@pytest.fixture
def program(tmp_path: Path) -> str:
    return write_program(tmp_path)


@pytest.fixture
async def rig(program: str) -> Rig:
    rig = Rig(program)
    await rig.start()
    return rig


async def test_a_reverse_continue_asks_the_debugger_to_run_back_and_reports_the_stop(rig: Rig) -> None:
    rig.backend.after["reverse"] = lambda: rig.backend.stop_again("data breakpoint")
    report = await rig.session.resume(None, None, DEADLINE_S, None, reverse=True)
    assert rig.backend.reversed == [(1, "continue")] and "resume" not in rig.backend.calls
    assert report.state == State.stopped and report.reason == "data breakpoint"


async def test_reverse_steps_count_like_forward_ones(rig: Rig) -> None:
    rig.backend.after["reverse"] = lambda: rig.backend.stop_again("step")
    report = await rig.session.step("over", 3, None, DEADLINE_S, None, reverse=True)
    assert rig.backend.reversed == [(1, "over")] * 3 and report.reason == "step"


async def test_running_backwards_needs_a_stop(rig: Rig) -> None:
    await rig.session.resume(None, None, 0.05, None)  # runs on: no stop comes
    assert rig.session.state == State.running
    with pytest.raises(UsageError, match="runs backwards only from a stop; debug_pause first"):
        await rig.session.resume(None, None, DEADLINE_S, None, reverse=True)


async def test_a_reload_comes_first_and_is_said_in_the_note_of_the_stop_reached(rig: Rig) -> None:
    rig.backend.reloaded = Reloaded(("prog.py: total",), "total (prog.py:3)", ("main's frame runs the old code",))
    rig.backend.after["resume"] = lambda: rig.backend.stop_again()
    report = await rig.session.resume(None, None, DEADLINE_S, None, reload=True)
    assert rig.backend.calls.index("reload") < rig.backend.calls.index("resume")
    assert report.note == ("reloaded prog.py: total; re-entered total (prog.py:3): the new code runs from its start; "
                           "main's frame runs the old code")


async def test_a_reload_of_many_files_is_said_within_a_bound(rig: Rig) -> None:
    rig.backend.reloaded = Reloaded(tuple(f"module_{n}.py: f, g, h" for n in range(500)))
    rig.backend.after["resume"] = lambda: rig.backend.stop_again()
    note = (await rig.session.resume(None, None, DEADLINE_S, None, reload=True)).note
    assert note is not None and len(note) < 1700 and note.startswith("reloaded module_0.py: f, g, h; module_1.py")
    assert note.endswith("characters more of what was reloaded (all of it was)"), note


async def test_a_reload_with_nothing_edited_says_so_and_runs_on(rig: Rig) -> None:
    rig.backend.after["resume"] = lambda: rig.backend.stop_again()
    report = await rig.session.resume(None, None, DEADLINE_S, None, reload=True)
    assert report.note is not None and report.note.startswith("reload: no source file was edited")


async def test_a_refused_reload_moves_nothing(rig: Rig) -> None:
    rig.backend.failures["reload"] = ReloadRefused("prog.py:4: invalid syntax; nothing was changed")
    with pytest.raises(ReloadRefused, match="invalid syntax"):
        await rig.session.resume(None, None, DEADLINE_S, None, reload=True)
    assert "resume" not in rig.backend.calls and rig.session.state == State.stopped


async def test_checkpoints_are_saved_where_the_program_is_and_restored(rig: Rig) -> None:
    saved = await rig.session.record("save", None, DEADLINE_S)
    assert isinstance(saved, Ack) and saved.message.startswith("checkpoint 1 saved at prog.py:")
    restored = await rig.session.record("restore", 1, DEADLINE_S)
    assert isinstance(restored, StopReport) and restored.reason == "checkpoint"
    assert restored.note == "restored checkpoint 1"
    with pytest.raises(UsageError, match="pass checkpoint"):
        await rig.session.record("restore", None, DEADLINE_S)


async def test_recording_starts_at_a_stop_only(rig: Rig) -> None:
    started = await rig.session.record("start", None, DEADLINE_S)
    assert isinstance(started, Ack) and started.message.startswith("recording start")
    await rig.session.resume(None, None, 0.05, None)
    with pytest.raises(NotStoppedError):
        await rig.session.record("start", None, DEADLINE_S)


async def test_a_debugger_that_cannot_say_what_to_use_instead(rig: Rig) -> None:
    instead = 'only gdb records (C, C++, Rust: debug_launch(…, adapter="gdb", record=true))'
    with pytest.raises(UsageError, match=re.escape(instead)):
        await Backend.reverse(rig.backend, 1, "continue")
    with pytest.raises(RestartNeeded, match="fake cannot change a running program's code"):
        await Backend.reload(rig.backend, 1)


@pytest.mark.parametrize(("build", "rebuilds", "how"), [
    (("make app", "/src"), False, "debug_restart runs the launch's build (make app) again, then the program"),
    (None, True, "debug_restart builds it again and runs it"),
    (None, False, 'launch it with build="…" (the command that compiles it) so that debug_restart rebuilds it first'),
])
async def test_code_that_only_a_restart_changes_says_how_the_restart_gets_the_edit(
        rig: Rig, build: tuple[str, str] | None, rebuilds: bool, how: str) -> None:
    rig.session.core.build = build
    rig.backend.failures["reload"] = RestartNeeded("gdb cannot change a running program's code", rebuilds)
    with pytest.raises(UsageError) as refused:
        await rig.session.resume(None, None, DEADLINE_S, None, reload=True)
    assert str(refused.value).startswith("gdb cannot change a running program's code: nothing was changed. ")
    assert how in str(refused.value) and "resume" not in rig.backend.calls


async def test_a_restart_reruns_the_build_and_a_failed_build_restarts_nothing(rig: Rig, tmp_path: Path) -> None:
    marker = tmp_path / "built"
    rig.session.core.build = (f"echo again >> {marker}", str(tmp_path))
    await rig.session.restart(DEADLINE_S, None)
    assert marker.read_text() == "again\n" and len(rig.backends) == 2
    rig.session.core.build = ("echo broken >&2; exit 3", str(tmp_path))
    with pytest.raises(UsageError, match="failed \\(exit 3\\):\nbroken\nNothing was restarted"):
        await rig.session.restart(DEADLINE_S, None)
    assert len(rig.backends) == 2 and not rig.backend.terminated


def test_a_launch_asking_to_record_gets_a_debugger_that_records() -> None:
    assert registry.choose_adapter("c", None, "full") == "gdb"
    assert registry.choose_adapter("rust", None, "rr") == "gdb"
    with pytest.raises(UsageError, match=r"lldb-dap cannot record c programs .*launch with adapter='gdb'"):
        registry.choose_adapter("c", "lldb-dap", "full")
    with pytest.raises(UsageError, match="no debugger here records python programs"):
        registry.choose_adapter("python", None, "full")
