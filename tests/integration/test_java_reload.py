"""debug_continue(reload=true) on a real JVM: an edited method recompiled, its class redefined (JDWP RedefineClasses)
and the stopped call re-entered (PopFrames); a change HotSpot refuses and a compile error change nothing."""

from __future__ import annotations

import shutil
import subprocess
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


LEDGER = PROGRAMS / "java" / "ledger"
RATES, SUMMARY = "src/main/java/ledger/Rates.java", "src/main/java/ledger/Summary.java"


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    """A copy of the Maven-like project, built into target/classes after the copy (its class files are newer)."""
    project = tmp_path / "ledger"
    shutil.copytree(LEDGER, project)
    sources = sorted(str(p) for p in (project / "src").rglob("*.java"))
    subprocess.run(["javac", "-g", "-d", str(project / "target" / "classes"), *sources], check=True, timeout=120)
    return project


async def stopped_in_fee(tools: Tools, ledger: Path, *more: dict[str, Any]) -> None:
    report = await tools("debug_launch", program="ledger.Main", runtime_args=["-cp", "target/classes"],
                         cwd=str(ledger), breakpoints=[{"file": str(ledger / RATES), "line": line_of(
                             f"java/ledger/{RATES}", "// fee")}, *more])
    assert report["location"]["function"] == "Rates.fee", report


async def test_a_restarted_program_loads_its_old_class_files_and_a_reload_puts_the_edit_in_again(
        tools: Tools, ledger: Path) -> None:
    await stopped_in_fee(tools, ledger)
    edit(ledger / RATES, "round * 10; // fee", "round * 100; // fee")
    assert "reloaded Rates.java (Rates)" in (await tools("debug_continue", reload=True))["note"]
    await tools("debug_restart")  # the JVM loads target/classes again: built before the edit
    again = await tools("debug_continue", reload=True)
    assert "reloaded Rates.java (Rates); re-entered Rates.fee (Rates.java:" in again["note"], again
    await tools("debug_clear", all=True)
    assert (await tools("debug_continue"))["state"] == "exited"
    printed = (await tools("debug_output", stream="stdout"))["text"].rpartition("round 1: 10\n")[2]
    assert "round 1: 100\nround 2: 200\nround 3: 300\ntotal 600" in printed, printed  # after the restart


async def test_an_edited_class_not_loaded_yet_is_compiled_and_said_to_load_its_old_class_file(
        tools: Tools, ledger: Path) -> None:
    summary = {"file": str(ledger / SUMMARY), "line": line_of(f"java/ledger/{SUMMARY}", "// summary")}
    await stopped_in_fee(tools, ledger, summary)
    edit(ledger / SUMMARY, '"total " + total; // summary', '"TOTAL " + total; // summary')
    first = await tools("debug_continue", reload=True)
    assert "ledger.Summary not loaded yet" in first["note"] and "compiled before the edit" in first["note"], first
    await tools("debug_clear", id=1)
    loaded = await tools("debug_continue")  # Summary.line: loaded now, from its old class file
    assert loaded["location"]["function"] == "Summary.line", loaded
    again = await tools("debug_continue", reload=True)
    assert "reloaded Summary.java (Summary); re-entered Summary.line" in again["note"], again
    assert again["state"] == "exited" and "TOTAL 60" in again["output"]["text"], again
