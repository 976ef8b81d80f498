"""debug_continue(reload=true) on a real JVM: an edited method recompiled, its class redefined (JDWP RedefineClasses)
and the stopped call re-entered (PopFrames); a change HotSpot refuses and a compile error change nothing."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

TALLY = PROGRAMS / "java" / "Tally.java"
SCORE = "int points = round * 10; // score"


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


@pytest.fixture
def tally(tmp_path: Path) -> Path:
    """A copy the test edits (tests/programs stays as it is)."""
    copy = tmp_path / "Tally.java"
    shutil.copyfile(TALLY, copy)
    return copy


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))


async def stopped_in_score(tools: Tools, tally: Path) -> dict[str, Any]:
    report = await tools("debug_launch", program=str(tally), breakpoints=[
        {"file": str(tally), "line": line_of("java/Tally.java", "// score")}])
    assert report["reason"] == "breakpoint" and report["location"]["function"] == "Tally.score", report
    return report


async def ran_the_old_code(tools: Tools) -> None:
    await tools("debug_clear", id=1)
    done = await tools("debug_continue")
    assert "round 1: 10\nround 2: 20\nround 3: 30\nround 4: 40\ncalls 4" in done["output"]["text"], done


async def test_a_method_fixed_while_stopped_in_it_runs_its_new_code_at_once(tools: Tools, tally: Path) -> None:
    await stopped_in_score(tools, tally)
    edit(tally, SCORE, "int points = round * 100; // score")
    again = await tools("debug_continue", reload=True)
    note = again.get("note", "")
    assert "reloaded Tally.java (Tally)" in note and "re-entered Tally.score (Tally.java:" in note, again
    # the breakpoint the JVM dropped with the old code was set again: the re-entered call stops at it
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line_of("java/Tally.java", "// score")
    assert {v["name"]: v["value"] for v in again["locals"]}["round"] == "1", again
    await tools("debug_clear", id=1)
    done = await tools("debug_continue")
    assert done["state"] == "exited", done
    printed = done["output"]["text"]
    # every round ran the new code, the first one too; its first call's calls++ stays done (5 calls for 4 rounds)
    assert "round 1: 100\nround 2: 200\nround 3: 300\nround 4: 400\ncalls 5" in printed, printed


async def test_a_new_field_is_refused_by_name_and_changes_nothing(tools: Tools, tally: Path) -> None:
    await stopped_in_score(tools, tally)
    edit(tally, "    private int calls = 0;", "    private int calls = 0;\n    private int hits = 0;")
    edit(tally, SCORE, "int points = round * 100; // score")
    said = await tools.error("debug_continue", reload=True)
    assert "Tally.java adds a field `hits` to Tally" in said and "HotSpot can only replace method bodies" in said, said
    assert "debug_restart" in said, said
    await ran_the_old_code(tools)


async def test_a_compile_error_changes_nothing_and_says_what_was_wrong(tools: Tools, tally: Path) -> None:
    await stopped_in_score(tools, tally)
    edit(tally, SCORE, "int points = round * ten; // score")
    said = await tools.error("debug_continue", reload=True)
    assert "javac could not compile 'Tally.java'" in said and "cannot find symbol" in said, said
    assert "nothing was changed" in said, said
    await ran_the_old_code(tools)


async def test_a_breakpoint_where_the_method_is_re_entered_leaves_the_program_suspended_as_before(
        tools: Tools, tally: Path) -> None:
    first = line_of("java/Tally.java", "calls++;")
    await tools("debug_launch", program=str(tally), breakpoints=[
        {"file": str(tally), "line": first}, {"file": str(tally), "line": line_of("java/Tally.java", "// score")}])
    assert (await tools("debug_continue"))["location"]["line"] == line_of("java/Tally.java", "// score")
    edit(tally, SCORE, "int points = round * 100; // score")
    again = await tools("debug_continue", reload=True)  # the re-entry's pause at `first` (a breakpoint too) is no stop
    assert f"re-entered Tally.score (Tally.java:{first})" in again["note"], again
    assert again["location"]["line"] == line_of("java/Tally.java", "// score"), again
    threads = await tools.text("debug_command", command="threads")
    assert "suspend count 2" not in threads, threads  # the breakpoint's suspension of every thread was undone
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")  # a thread that starts now (the JVM's end) starts unsuspended
    assert done["state"] == "exited" and "round 4: 400\ncalls 5" in done["output"]["text"], done


async def test_a_method_whose_caller_is_native_keeps_its_old_code_and_says_so(tools: Tools, tally: Path) -> None:
    await stopped_in_score(tools, tally)
    edit(tally, SCORE, "int points = round * 100; // score")
    await tools("debug_continue", reload=True)  # main is left as it was: its frame goes on in the same code
    await tools("debug_clear", all=True)
    printing = 'System.out.println("round " + round + ": " + points);'
    await tools("debug_break", file=str(tally), line=line_of("java/Tally.java", printing))
    assert (await tools("debug_continue"))["location"]["function"] == "Tally.main"
    edit(tally, "round <= 4", "round <= 6")
    # HotSpot does not call main's frame obsolete now (it began before the first reload), yet it runs the old code
    done = await tools("debug_continue", reload=True)  # the breakpoint, set again in the new main, stops no more
    note = done["note"]
    assert "Tally.main (Tally.java:" in note and "runs its old code until it returns" in note, done
    assert "caller is native code" in note, done
    assert done["state"] == "exited" and "round 4: 400\ncalls 5" in done["output"]["text"], done  # the old bound
