"""debug_continue(reload=true) on Kotlin: the edited .kt file compiled again by kotlinc with the JVM's class path, its
classes (the file's class and its facade ``TallyKt``) redefined and the stopped method re-entered; a property added
(a field and its accessors to HotSpot) and a lambda added are refused by their Kotlin names, a compile error changes
nothing. The program is compiled once (kotlinc, ~7 s) and launched by its main class, as a Gradle build's classes
are; each reload runs kotlinc again (~6 s)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.test_java_reload import edit
from tests.integration.test_kotlin import compiler

TALLY = PROGRAMS / "kotlin" / "Tally.kt"
SCORE = "val points = round * 10 // score"


@pytest.fixture(autouse=True)
def _kotlinc(monkeypatch: pytest.MonkeyPatch) -> None:
    require("java")
    monkeypatch.setenv("KOTLIN_HOME", str(compiler()))


@pytest.fixture(scope="module")
def classpath(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Tally.kt compiled once (``kotlinc Tally.kt -d classes``), with kotlin-stdlib.jar."""
    require("java")
    home = compiler()
    classes = tmp_path_factory.mktemp("kotlinc") / "classes"
    subprocess.run(["bash", str(home / "bin" / "kotlinc"), str(TALLY), "-d", str(classes)], check=True, timeout=300,
                   stdin=subprocess.DEVNULL, capture_output=True)
    return os.pathsep.join([str(classes), str(home / "lib" / "kotlin-stdlib.jar")])


@pytest.fixture
def tally(tmp_path: Path) -> Path:
    """The copy the test edits, where the session finds the classes' source (its working directory)."""
    copy = tmp_path / "Tally.kt"
    shutil.copyfile(TALLY, copy)
    return copy


async def stopped_in_score(tools: Tools, tally: Path, classpath: str) -> dict[str, Any]:
    report = await tools("debug_launch", program="demo.reload.TallyKt", runtime_args=["-cp", classpath],
                         cwd=str(tally.parent), breakpoints=[{"file": str(tally),
                                                              "line": line_of("kotlin/Tally.kt", "// score")}])
    assert report["reason"] == "breakpoint" and report["location"]["function"] == "Tally.score", report
    assert report["location"]["file"] == str(tally), report
    return report


async def ran_the_old_code(tools: Tools) -> None:
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert "round 1: 10\nround 2: 20\nround 3: 30\nround 4: 40\ncalls 4" in done["output"]["text"], done


async def test_a_kotlin_method_fixed_while_stopped_in_it_runs_its_new_code_at_once(tools: Tools, tally: Path,
                                                                                  classpath: str) -> None:
    await stopped_in_score(tools, tally, classpath)
    edit(tally, SCORE, "val points = round * 100 // score")
    edit(tally, '"round $round" // label', '"Round $round" // label')  # the file's facade class (top-level functions)
    again = await tools("debug_continue", reload=True)
    note = again.get("note", "")
    assert "reloaded Tally.kt (Tally, TallyKt)" in note and "re-entered Tally.score (Tally.kt:" in note, again
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line_of("kotlin/Tally.kt", "// score")
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["state"] == "exited", done
    printed = done["output"]["text"]
    assert "Round 1: 100\nRound 2: 200\nRound 3: 300\nRound 4: 400\ncalls 5" in printed, printed


async def test_a_property_or_a_lambda_added_is_refused_by_its_kotlin_name_and_changes_nothing(
        tools: Tools, tally: Path, classpath: str) -> None:
    await stopped_in_score(tools, tally, classpath)
    edit(tally, "    var calls = 0", "    var calls = 0\n    var hits = 0")
    edit(tally, SCORE, "val points = round * 100 // score")
    said = await tools.error("debug_continue", reload=True)
    assert "Tally.kt adds a property `hits` to Tally (a field, getHits, setHits)" in said, said
    assert "getHits()" not in said and "debug_restart" in said, said
    shutil.copyfile(TALLY, tally)
    calls = 'println("calls ${tally.calls}")'
    edit(tally, calls, "val twice = { n: Int -> n * 2 }\n    " + calls)
    said = await tools.error("debug_continue", reload=True)
    assert "Tally.kt adds a lambda (`main$lambda$" in said, said
    await ran_the_old_code(tools)


async def test_a_kotlin_compile_error_changes_nothing_and_says_what_was_wrong(tools: Tools, tally: Path,
                                                                              classpath: str) -> None:
    await stopped_in_score(tools, tally, classpath)
    edit(tally, SCORE, "val points = round * ten // score")
    said = await tools.error("debug_continue", reload=True)
    assert "kotlinc could not compile 'Tally.kt'" in said and "unresolved reference 'ten'" in said, said
    assert "nothing was changed" in said, said
    await ran_the_old_code(tools)
