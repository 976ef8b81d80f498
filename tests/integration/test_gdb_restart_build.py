"""debug_restart reruns the launch's build: an edited C program is rebuilt and the restart runs the new code; a
build that fails leaves the session as it was (still stopped where it was, the old program). The program is a copy
of tests/programs/native/c/stray_write.c in tmp_path, edited there."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import PROGRAMS, Tools, line_of, require

REPORT = line_of("native/c/stray_write.c", "marker: report")


async def test_restart_rebuilds_the_edited_program_and_a_failed_build_changes_nothing(tools: Tools,
                                                                                       tmp_path: Path) -> None:
    require("gcc", "gdb")
    source = tmp_path / "app.c"
    shutil.copy(PROGRAMS / "native" / "c" / "stray_write.c", source)
    build = "gcc -g -O0 -o app app.c"
    first = await tools("debug_launch", program=str(tmp_path / "app"), adapter="gdb", cwd=str(tmp_path), build=build,
                        breakpoints=[{"file": str(source), "line": REPORT}])
    assert first["location"]["line"] == REPORT
    assert (await tools("debug_evaluate", expression="table.checksum"))["value"] == "40"  # the stray write's
    source.write_text(source.read_text().replace("i <= count", "i < count"))  # the fix
    fixed = await tools("debug_restart")
    assert fixed["location"]["line"] == REPORT
    assert (await tools("debug_evaluate", expression="table.checksum"))["value"] == "1234"  # the rebuilt program
    source.write_text(source.read_text().replace("int total = 0;", "int total = ;"))  # does not compile
    refused = await tools.error("debug_restart")
    assert "failed (exit 1)" in refused and "Nothing was restarted" in refused
    kept = await tools("debug_stack")
    assert kept["threads"][0]["frames"][0]["line"] == REPORT  # still stopped where it was, the fixed program
    assert (await tools("debug_evaluate", expression="table.checksum"))["value"] == "1234"
    await tools("debug_terminate")
