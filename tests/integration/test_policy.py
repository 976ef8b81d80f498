"""The security policy through the MCP layer, on servers built in-process with a given policy: every switch
on and off, path escapes (``..``, absolute paths, symlinks, a cwd outside the roots, a core file, a source
read), injection attempts in ``build``, ``program``, ``args``, ``python`` and ``env``, raw debugger commands
smuggled through ``debug_evaluate`` and breakpoint conditions on gdb and lldb, and attaching to another
user's process. A refusal is an ``isError`` result of kind ``policy`` that names the setting; nothing it
refused has run (the marker files the injected commands would create stay absent)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from mcp import Client

from polydbg.mcp.server import build_server
from polydbg.policy import Policy
from tests.conftest import PROGRAMS, Tools, line_of, require, text_of

LLDB = "lldb-dap-22|lldb-dap|lldb-vscode"
NOBODY = 65534

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameters (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")
BASIC_ADD = line_of("basic.py", "total = a + b")
LOOP_CALL = line_of("native/gdb/points.c", "marker: loop call")


@contextlib.asynccontextmanager
async def served(policy: Policy) -> AsyncIterator[Tools]:
    async with Client(build_server(policy=policy)) as client:
        yield Tools(client)


async def refused(tools: Tools, tool: str, setting: str, **arguments: object) -> str:
    """Call a tool the policy must refuse; the error names ``setting``."""
    result = await tools.client.call_tool(tool, arguments)
    text = text_of(result)
    assert result.is_error, f"{tool}({arguments}) should have been refused: {text}"
    assert result.structured_content is not None and result.structured_content["error"] == "policy", text
    assert text.startswith("refused"), text
    assert setting in text, text
    return text


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project directory (the roots) with a Python program, and beside it a directory outside the roots."""
    root = tmp_path / "project"
    root.mkdir()
    shutil.copy(PROGRAMS / "basic.py", root / "basic.py")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(PROGRAMS / "basic.py", outside / "basic.py")
    (outside / "core").write_bytes(b"\x7fELF not really a core")
    return root


def http(project: Path, **switches: bool) -> Policy:
    """The HTTP defaults with roots = ``project``, and ``switches`` changed."""
    base = Policy.defaults("http", project)
    values = {k: switches.get(k, getattr(base, k)) for k in
              ("allow_build", "allow_command", "allow_attach", "allow_memory_write", "allow_env")}
    return Policy(transport="http", roots=base.roots, origins=base.origins, **values)


@pytest.fixture
def points(project: Path) -> str:
    """points.c built with debug info inside the project."""
    require("gcc")
    shutil.copy(PROGRAMS / "native" / "gdb" / "points.c", project / "points.c")
    subprocess.run(["gcc", "-g", "-O0", "-o", str(project / "points"), str(project / "points.c")], check=True,
                   capture_output=True, timeout=120)
    return str(project / "points")


# -- roots ----------------------------------------------------------------------------------------------------

async def test_roots_confine_programs_cwd_cores_breakpoints_and_source_reads(project: Path) -> None:
    outside = project.parent / "outside"
    (project / "link.py").symlink_to(outside / "basic.py")
    (project / "linkdir").symlink_to(outside)
    async with served(http(project)) as tools:
        # before any session: nothing outside is read or launched
        await refused(tools, "debug_source", "roots", file="/etc/passwd")
        await refused(tools, "debug_break", "roots", file=str(outside / "basic.py"), line=BASIC_ADD)
        await refused(tools, "debug_launch", "roots", program=str(outside / "basic.py"))
        await refused(tools, "debug_launch", "roots", program="../outside/basic.py", cwd=str(project))
        await refused(tools, "debug_launch", "roots", program=str(project / "link.py"))
        await refused(tools, "debug_launch", "roots", program="basic.py", cwd=str(project / "linkdir"))
        text = await refused(tools, "debug_launch", "roots", program="basic.py", cwd=str(outside))
        assert "cwd" in text and "--root DIR" in text
        await refused(tools, "debug_launch", "roots", program=str(project / "basic.py"), core=str(outside / "core"))
        await refused(tools, "debug_launch", "roots", program=str(project / "basic.py"),
                      breakpoints=[{"file": str(outside / "basic.py"), "line": BASIC_ADD}])
        await refused(tools, "debug_launch", "roots", program=str(project / "basic.py"),
                      breakpoints=[{"file": "link.py", "line": BASIC_ADD}])
        assert (await tools("debug_sessions"))["sessions"] == []  # a refused launch leaves nothing behind

        report = await tools("debug_launch", program="basic.py", cwd=str(project),
                             breakpoints=[{"file": "basic.py", "line": BASIC_ADD}])
        assert report["reason"] == "breakpoint"
        await tools("debug_source", file="basic.py", line=1)
        await refused(tools, "debug_source", "roots", file="/etc/passwd")
        await refused(tools, "debug_source", "roots", file="../outside/basic.py")
        await refused(tools, "debug_source", "roots", file="link.py")
        await refused(tools, "debug_break", "roots", file="link.py", line=BASIC_ADD)
        await refused(tools, "debug_continue", "roots", to={"file": str(outside / "basic.py"), "line": BASIC_ADD})
        await refused(tools, "debug_trace", "roots", points=[{"file": "link.py", "line": BASIC_ADD}],
                      expressions=["a"])
        await tools("debug_terminate")

    async with served(Policy()) as tools:  # stdio: unrestricted, as before
        assert "root:" in await tools.text("debug_source", file="/etc/passwd", line=1)


# -- build, program, args, runtime, env -------------------------------------------------------------------------

async def test_build_runs_only_when_allowed(project: Path) -> None:
    marker = project / "built"
    async with served(http(project)) as tools:
        text = await refused(tools, "debug_launch", "allow_build", program="basic.py", cwd=str(project),
                             build=f"touch {marker}")
        assert "--allow-build" in text and "allow_build = true in polydbg.toml" in text
        assert not marker.exists()
    async with served(http(project, allow_build=True)) as tools:
        report = await tools("debug_launch", program="basic.py", cwd=str(project), build=f"touch {marker}")
        assert report["state"] == "exited"
        assert marker.exists()


async def test_the_runtime_command_line_needs_allow_build(project: Path) -> None:
    async with served(http(project)) as tools:
        await refused(tools, "debug_launch", "allow_build", program="basic.py", cwd=str(project), python="/bin/sh")
        await refused(tools, "debug_launch", "allow_build", program="basic.py", cwd=str(project),
                      python=sys.executable)
    async with served(http(project, allow_build=True)) as tools:
        report = await tools("debug_launch", program="basic.py", cwd=str(project), python=sys.executable)
        assert report["state"] == "exited"


async def test_code_injecting_environment_needs_allow_env(project: Path) -> None:
    startup = project / "startup.py"
    marker = project / "injected"
    startup.write_text(f"open({str(marker)!r}, 'w').close()\n")
    async with served(http(project)) as tools:
        for name, value in (("LD_PRELOAD", "/tmp/evil.so"), ("PYTHONSTARTUP", str(startup)),
                            ("PYTHONPATH", str(project)), ("NODE_OPTIONS", "--require /tmp/evil.js"),
                            ("JAVA_TOOL_OPTIONS", "-javaagent:/tmp/a.jar")):
            text = await refused(tools, "debug_launch", "allow_env", program="basic.py", cwd=str(project),
                                 env={"DEBUG": "1", name: value})
            assert name in text
        report = await tools("debug_launch", program="basic.py", cwd=str(project), env={"DEBUG": "1"})
        assert report["state"] == "exited"  # ordinary variables pass
    async with served(http(project, allow_env=True)) as tools:
        report = await tools("debug_launch", program="basic.py", cwd=str(project), env={"PYTHONSTARTUP": str(startup)})
        assert report["state"] == "exited"
    assert not marker.exists()  # PYTHONSTARTUP only runs for an interactive interpreter


@pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
async def test_shell_syntax_in_program_and_args_runs_nothing(project: Path, points: str, adapter: str) -> None:
    require("gdb" if adapter == "gdb" else LLDB)
    marker = project / "pwned"
    async with served(http(project)) as tools:
        error = await tools.error("debug_launch", program=f"points; touch {marker}", cwd=str(project), adapter=adapter)
        assert "not found" in error
        args = [f"$(touch {marker})", f"`touch {marker}`", f"; touch {marker}", f"| touch {marker}", "'\"", "a b"]
        report = await tools("debug_launch", program=points, args=args, adapter=adapter, stdin="",
                             breakpoints=[{"file": "points.c", "line": LOOP_CALL}])
        assert report["reason"] == "breakpoint"
        argc = await tools("debug_evaluate", expression="argc")
        assert argc["value"].endswith(str(len(args) + 1))  # each argument arrived as one, literally
        await tools("debug_terminate")
    assert not marker.exists()


# -- raw debugger commands ---------------------------------------------------------------------------------------

async def test_gdb_raw_commands_and_shell_in_expressions(project: Path, points: str) -> None:
    require("gdb")
    marker = project / "from-gdb"
    async with served(http(project)) as tools:
        await refused(tools, "debug_break", "allow_command", file=str(project / "points.c"), line=LOOP_CALL,
                      condition=f'$_shell("touch {marker}") == 0')
        await tools("debug_launch", program=points, adapter="gdb",
                    breakpoints=[{"file": "points.c", "line": LOOP_CALL}])
        await refused(tools, "debug_command", "allow_command", command=f"shell touch {marker}")
        await refused(tools, "debug_command", "allow_command", command="python import os")
        await refused(tools, "debug_evaluate", "allow_command", expression=f'$_shell("touch {marker}")')
        await refused(tools, "debug_evaluate", "allow_command", expression=f'1 + $_shell ("touch {marker}")')
        await refused(tools, "debug_break", "allow_command", file="points.c", line=LOOP_CALL + 1,
                      condition=f'$_shell("touch {marker}") == 0')
        await refused(tools, "debug_break", "allow_command", file="points.c", line=LOOP_CALL + 1,
                      log_message=f'{{$_shell("touch {marker}")}}')
        await refused(tools, "debug_trace", "allow_command", points=[{"file": "points.c", "line": LOOP_CALL}],
                      expressions=[f'$_shell("touch {marker}")'])
        await refused(tools, "debug_trace", "allow_command", points=[{"file": "points.c", "line": LOOP_CALL}],
                      expressions=["sum"], where=f'$_shell("touch {marker}") == 0')
        await refused(tools, "debug_watch", "allow_command", expression=f'$_shell("touch {marker}")')
        await refused(tools, "debug_memory", "allow_command", address=f'$_shell("touch {marker}")')
        await refused(tools, "debug_set_variable", "allow_command", name="sum", value=f'$_shell("touch {marker}")')
        assert (await tools("debug_evaluate", expression="sum + 1"))["value"] == "1"  # evaluation as usual
        await tools("debug_terminate")
    assert not marker.exists()
    async with served(Policy()) as tools:  # allowed: raw commands run; $_shell stays off inside expressions
        await tools("debug_launch", program=points, adapter="gdb",
                    breakpoints=[{"file": "points.c", "line": LOOP_CALL}])
        error = await tools.error("debug_evaluate", expression=f'$_shell("touch {marker}")')
        assert "$_shell off" in error and not marker.exists()
        await tools("debug_command", command=f"shell touch {marker}")
        assert marker.exists()
        await tools("debug_terminate")


async def test_java_queries_only_read_and_a_refusal_without_a_session_names_the_setting(project: Path) -> None:
    """A debug_command the policy refuses is refused as such before a session is looked for; a backend's
    read-only queries (the JVM's threads, classes …) are no raw commands and run with allow_command off."""
    require("java", "javac")
    shutil.copy(PROGRAMS / "java" / "Basics.java", project / "Basics.java")
    async with served(http(project)) as tools:
        text = await refused(tools, "debug_command", "allow_command", command="shell id")
        assert "read-only queries are allowed: java: classes" in text, text
        assert "no debug session" in await tools.error("debug_command", command="threads")  # allowed: no session
        report = await tools("debug_launch", program="Basics.java", cwd=str(project), breakpoints=[
            {"file": "Basics.java", "line": line_of("java/Basics.java", "int result = n * n;")}])
        assert report["reason"] == "breakpoint", report
        threads = (await tools("debug_command", command="threads"))["output"]
        assert any(row.startswith("*") and "main" in row for row in threads.splitlines()), threads
        assert "Basics$Point" in (await tools("debug_command", command="classes Basics"))["output"]
        assert "static int square(int)" in (await tools("debug_command", command="methods Basics"))["output"]
        assert "JDWP" in (await tools("debug_command", command="version"))["output"]
        text = await refused(tools, "debug_command", "allow_command", command="frobnicate")
        assert "(a raw java command; the read-only queries are allowed: java: classes, methods" in text, text
        await tools("debug_terminate")


async def test_lldb_raw_commands_and_command_escapes_in_expressions(project: Path, points: str) -> None:
    require(LLDB)
    marker = project / "from-lldb"
    async with served(http(project)) as tools:
        await tools("debug_launch", program=points, adapter="lldb-dap",
                    breakpoints=[{"file": "points.c", "line": LOOP_CALL}])
        await refused(tools, "debug_command", "allow_command", command=f"platform shell touch {marker}")
        await refused(tools, "debug_evaluate", "allow_command", expression=f"`platform shell touch {marker}")
        await refused(tools, "debug_evaluate", "allow_command",
                      expression=f" `script import os; os.system('touch {marker}')")
        await refused(tools, "debug_break", "allow_command", file="points.c", line=LOOP_CALL + 1,
                      condition=f"`platform shell touch {marker}")
        assert (await tools("debug_evaluate", expression="sum + 1"))["value"] == "1"
        await tools("debug_terminate")
    assert not marker.exists()
    async with served(Policy()) as tools:
        await tools("debug_launch", program=points, adapter="lldb-dap",
                    breakpoints=[{"file": "points.c", "line": LOOP_CALL}])
        # in an expression the escape is not a command (lldb-dap evaluates expressions in the watch context)
        await tools.error("debug_evaluate", expression=f"`platform shell touch {marker}")
        assert not marker.exists()
        await tools("debug_command", command=f"platform shell touch {marker}")
        assert marker.exists()
        await tools("debug_terminate")


# -- memory writes and attach ------------------------------------------------------------------------------------

async def test_memory_writes_need_allow_memory_write(project: Path, points: str) -> None:
    require("gdb")
    breakpoint = [{"file": "points.c", "line": LOOP_CALL}]
    async with served(http(project, allow_memory_write=False)) as tools:
        await tools("debug_launch", program=points, adapter="gdb", breakpoints=breakpoint)
        await tools("debug_memory", address="&counter", count=4)  # reading is fine
        await refused(tools, "debug_memory", "allow_memory_write", address="&counter", count=4, write="2a000000")
        assert (await tools("debug_evaluate", expression="counter"))["value"] == "0"
        await tools("debug_terminate")
    async with served(http(project)) as tools:
        await tools("debug_launch", program=points, adapter="gdb", breakpoints=breakpoint)
        await tools("debug_memory", address="&counter", count=4, write="2a000000")
        assert (await tools("debug_evaluate", expression="counter"))["value"] == "42"
        await tools("debug_terminate")


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


async def test_attach_needs_allow_attach(project: Path, sleeper: subprocess.Popen[bytes]) -> None:
    async with served(http(project, allow_attach=False)) as tools:
        await refused(tools, "debug_attach", "allow_attach", pid=sleeper.pid, adapter="gdb")
        await refused(tools, "debug_attach", "allow_attach", port=5678)
    async with served(http(project)) as tools:
        error = await tools.error("debug_attach", host='127.0.0.1:1\n-interpreter-exec console "shell id"', port=1,
                                  adapter="gdb")
        assert "is not a host name" in error
        require("gdb")
        report = await tools("debug_attach", pid=sleeper.pid, adapter="gdb")
        assert report["state"] == "running"  # attached: the program runs on until a breakpoint
        await tools("debug_terminate")


@pytest.fixture
def other_users_process() -> Iterator[subprocess.Popen[bytes]]:
    """``sleep`` running as nobody (needs root and setpriv), once it has become nobody."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        pytest.skip("needs root and setpriv to run a process as another user")
    process = subprocess.Popen(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "sleep", "60"])
    deadline = time.monotonic() + 5
    while f"Uid:\t{NOBODY}" not in Path(f"/proc/{process.pid}/status").read_text() and time.monotonic() < deadline:
        time.sleep(0.02)
    yield process
    process.kill()
    process.wait()


async def test_attach_to_another_users_process_is_refused_whatever_the_policy(
        other_users_process: subprocess.Popen[bytes]) -> None:
    require("gdb")
    pid = other_users_process.pid
    async with served(Policy()) as tools:
        text = await refused(tools, "debug_attach", f"process {pid} belongs to user {NOBODY}", pid=pid, adapter="gdb")
        assert "own user" in text


async def test_a_java_test_by_name_runs_under_the_http_defaults_and_the_agents_classpath_is_still_judged(
        project: Path) -> None:
    """The runner's own classpath (the system's JUnit jars, the classes polydbg compiles into its cache) is not the
    agent's: a JUnit test inside the roots runs under the HTTP defaults; a classpath the agent passes is judged."""
    require("javac")
    shutil.copytree(PROGRAMS / "java" / "junit5", project / "calc")
    async with served(http(project)) as tools:
        report = await tools("debug_launch", test="CalcTest#meanRounds", cwd=str(project / "calc"), timeout_s=120)
        assert report["state"] == "stopped" and report["location"]["function"] == "CalcTest.meanRounds", report
        await tools("debug_terminate")
        await refused(tools, "debug_launch", "roots", test="CalcTest#meanRounds", cwd=str(project / "calc"),
                      runtime_args=["-cp", str(project.parent / "outside")])
