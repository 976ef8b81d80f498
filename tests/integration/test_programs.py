"""Programs as an agent names them, through the MCP layer: a self-built native program named like an
interpreter (``lua``, ``python3``), a command found on PATH, a script without an extension known by its
``#!`` line, and ``npm test`` stopping in the project's test file."""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from polydbg.mcp.server import build_server
from polydbg.policy import Policy
from tests.conftest import PROGRAMS, Tools, line_of, program, require, text_of

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameters (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")
BASICS = program("native/c/basics.c")
IN_ADD = line_of("native/c/basics.c", "/* in add */")
NPM_PROJECT = PROGRAMS / "node" / "npmtest"
SCRIPTS = PROGRAMS / "scripts"


@pytest.fixture(scope="module")
def interpreters(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """basics.c built as ``lua54/lua`` and ``lua54/python3``: the names of interpreters, the bytes of a C program."""
    require("gcc")
    home = tmp_path_factory.mktemp("lua54")
    subprocess.run(["gcc", "-g", "-O0", "-o", str(home / "lua"), BASICS], check=True, capture_output=True)
    shutil.copy(home / "lua", home / "python3")
    return home


@pytest.mark.parametrize("choice", [{"language": "c"}, {"adapter": "gdb"}, {}])
async def test_a_native_program_named_like_an_interpreter_is_debugged_as_one(
        tools: Tools, interpreters: Path, choice: dict[str, str]) -> None:
    """An explicit language or adapter wins; without one, an ELF named lua (no backend runs Lua) is native."""
    require("gdb") if choice.get("adapter") == "gdb" else require("gdb|lldb-dap-22|lldb-dap|lldb-vscode")
    report = await tools("debug_launch", program=str(interpreters / "lua"), args=["script.lua"], **choice,
                         breakpoints=[{"file": BASICS, "line": IN_ADD}])
    assert report["state"] == "stopped" and report["location"]["line"] == IN_ADD, report
    assert report["location"]["function"].startswith("add"), report
    await tools("debug_terminate")


async def test_a_runtime_given_a_program_says_both_ways(tools: Tools, interpreters: Path) -> None:
    """``python3 app.py`` means the Python program: refused with how to pass it, and how to debug the ELF."""
    error = await tools.error("debug_launch", program=str(interpreters / "python3"), args=["app.py"])
    assert "is the python interpreter (given a program to run)" in error, error
    assert "python=" in error and "pass language='c'" in error, error
    require("gdb|lldb-dap-22|lldb-dap|lldb-vscode")
    report = await tools("debug_launch", program=str(interpreters / "python3"), args=["app.py"], language="c",
                         breakpoints=[{"file": BASICS, "line": IN_ADD}])
    assert report["location"]["line"] == IN_ADD, report
    await tools("debug_terminate")


async def test_npm_test_stops_in_the_test_file(tools: Tools) -> None:
    """The README's form: program="npm" (found on PATH: a ``#!/usr/bin/env node`` script), args=["test"]; npm
    runs the test script's node, which stops at the breakpoint in the test file (npm itself is not debugged)."""
    require("npm", "node")
    line = line_of("node/npmtest/test/prices.test.js", "checks the sum")
    report = await tools("debug_launch", program="npm", args=["test"], cwd=str(NPM_PROJECT),
                         breakpoints=[{"file": "test/prices.test.js", "line": line}])
    assert report["state"] == "stopped", report
    assert report["location"]["file"] == str(NPM_PROJECT / "test" / "prices.test.js"), report
    assert report["location"]["line"] == line, report
    assert {v["name"]: v["value"] for v in report["locals"]}["sum"] == "12", report
    text = await tools.text("debug_stack")
    assert "test/prices.test.js:" in text, text  # relative to the cwd, like the arguments
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert "prices test passed: 12" in (await tools("debug_output"))["text"]
    await tools("debug_terminate")


async def test_node_test_runners_output_carries_none_of_the_debuggers_lines(tools: Tools) -> None:
    """``npm run tap`` runs ``node --test``, which runs each test file in a child and puts the child's stderr in
    its TAP stream as comments: the children's inspector lines ("Debugger listening on ws://…", "Debugger
    attached.") and the runner's warning that a debugger is there are the debugger's, not the program's."""
    require("npm", "node")
    line = line_of("node/npmtest/test/prices.test.js", "checks the sum")
    report = await tools("debug_launch", program="npm", args=["run", "tap"], cwd=str(NPM_PROJECT),
                         breakpoints=[{"file": "test/prices.test.js", "line": line}])
    assert report["state"] == "stopped" and report["location"]["line"] == line, report
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    output = (await tools("debug_output", max_bytes=30000))["text"]
    assert "# pass 1" in output and "prices test passed: 12" in output, output
    for noise in ("Debugger listening", "For help, see", "Debugger attached", "Waiting for the debugger",
                  "Using the inspector", "--trace-warnings"):
        assert noise not in output, output
    await tools("debug_terminate")


@pytest.fixture
def bin_dir(tmp_path: Path) -> Path:
    """A directory for PATH holding the extensionless scripts, executable as installed commands are."""
    directory = tmp_path / "bin"
    directory.mkdir()
    for name in ("tally", "count"):
        shutil.copy(SCRIPTS / name, directory / name)
        (directory / name).chmod(0o755)
    return directory


@pytest.mark.parametrize(("command", "marker", "runtime"), [("tally", "# tally line", "python3"),
                                                            ("count", "// count line", "node")])
async def test_a_command_on_path_is_known_by_its_shebang(tools: Tools, bin_dir: Path, tmp_path: Path,
                                                          command: str, marker: str, runtime: str) -> None:
    require(runtime)
    script = bin_dir / command
    line = line_of(f"scripts/{command}", marker)
    work = tmp_path / "work"
    work.mkdir()
    report = await tools("debug_launch", program=command, args=["two", "words"], cwd=str(work),
                         env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
                         breakpoints=[{"file": str(script), "line": line}])
    assert report["state"] == "stopped", report
    assert (report["location"]["file"], report["location"]["line"]) == (str(script), line), report
    done = await tools("debug_continue")
    assert done["exit_code"] == 0 and "2 words, 8 letters" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_a_name_is_looked_for_in_cwd_first_then_on_path(tools: Tools, bin_dir: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(PROGRAMS / "basic.py", work / "tally")  # a file named like the command, in cwd: it wins
    line = line_of("basic.py", "total = a + b")
    report = await tools("debug_launch", program="tally", cwd=str(work), language="python",
                         env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
                         breakpoints=[{"file": "tally", "line": line}])
    assert report["location"] == {"file": str(work / "tally"), "line": line, "function": "add"}, report
    await tools("debug_terminate")
    error = await tools.error("debug_launch", program="no-such-command-here", cwd=str(work))
    assert "not found" in error and "or on PATH" in error, error


async def test_a_command_found_on_path_outside_the_roots_is_refused(bin_dir: Path, tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    policy = dataclasses.replace(Policy.defaults("http", project), allow_env=True)  # PATH may be set: the roots decide
    async with Client(build_server(policy=policy)) as client:
        result = await client.call_tool("debug_launch", {
            "program": "tally", "cwd": str(project), "env": {"PATH": str(bin_dir)}})
    text = text_of(result)
    assert result.is_error and result.structured_content is not None, text
    assert result.structured_content["error"] == "policy", text
    assert f"program 'tally', found on PATH at '{bin_dir / 'tally'}' is outside the roots" in text, text


@pytest.mark.parametrize(("command", "marker", "runtime", "home"), [
    ("tally", "# tally line", "python3", ".venv/bin"), ("count", "// count line", "node", "node_modules/.bin")])
async def test_the_project_s_own_command_wins_over_path(tools: Tools, bin_dir: Path, tmp_path: Path, command: str,
                                                        marker: str, runtime: str, home: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """``pytest`` or ``jest`` by name is the project's (its virtualenv's, its node_modules/.bin's) even when the
    environment is not activated, as an agent means it; PATH's comes after (pyenv's shim, a global install)."""
    require(runtime)
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)  # not activated (an activated one wins, as in a shell)
    project = tmp_path / "project"
    (project / home).mkdir(parents=True)
    if home.startswith(".venv"):
        (project / ".venv" / "bin" / "python").symlink_to(shutil.which("python3") or "/usr/bin/python3")
    own = project / home / command
    shutil.copy(SCRIPTS / command, own)
    own.chmod(0o755)
    line = line_of(f"scripts/{command}", marker)
    report = await tools("debug_launch", program=command, args=["a"], cwd=str(project),
                         env={"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"},
                         breakpoints=[{"file": str(own), "line": line}])
    assert report["state"] == "stopped" and report["location"]["file"] == str(own), report
    await tools("debug_terminate")
