"""debug_launch(build=…): build a native program first; a source file as program asks for the binary."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import Tools, line_of, program, require

SOURCE = program("native/c/basics.c")


async def test_build_then_debug(tools: Tools, tmp_path: Path) -> None:
    require("gcc", "lldb-dap-22|lldb-dap|lldb-vscode|gdb")
    binary = tmp_path / "basics"
    line = line_of("native/c/basics.c", "/* in add */")
    report = await tools("debug_launch", program=str(binary), build=f"gcc -g -O0 -o {binary} {SOURCE}",
                         breakpoints=[{"file": SOURCE, "line": line}])
    assert report["state"] == "stopped", report
    assert report["location"]["function"].startswith("add")
    assert report["location"]["line"] == line
    await tools("debug_terminate")


async def test_failed_build_shows_the_compiler_output(tools: Tools, tmp_path: Path) -> None:
    require("gcc")
    broken = tmp_path / "broken.c"
    broken.write_text("int main(void) { return missing; }\n")
    error = await tools.error("debug_launch", program=str(tmp_path / "broken"),
                              build=f"gcc -g -O0 -o {tmp_path / 'broken'} {broken}")
    assert "failed (exit 1)" in error and "missing" in error
    assert (await tools("debug_sessions"))["sessions"] == []


async def test_source_file_as_program_asks_for_the_binary(tools: Tools) -> None:
    error = await tools.error("debug_launch", program=SOURCE)
    assert "debug the executable built from it with debug info" in error and "build=" in error
