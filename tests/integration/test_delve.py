"""Go through delve (dlv dap), through the MCP layer: what is particular to delve — launch (package
dir, .go file, prebuilt binary), Go values and expressions, hit conditions, goroutines, panics,
deadlocks, pause, output, native tools, attach by pid and to dlv --headless. The basic flow (line and
conditional breakpoints, stepping, evaluate, set variable, exit, terminate) is test_conformance.py's,
for every backend; delve's pure helpers are tested in tests/unit/backends/delve/test_helpers.py.

The test program is built once per run (``go build -gcflags=all=-N -l``), which also fills Go's
build cache for the debug-mode launches (delve builds with the same flags).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

GO_DIR = PROGRAMS / "go"
MAIN = str(GO_DIR / "main.go")

CALL_SCALE = line_of("go/main.go", "// call scale")
INSIDE_SCALE = line_of("go/main.go", "// inside scale")
LOOP_BODY = line_of("go/main.go", "// loop body")
PARKED = line_of("go/main.go", "// all workers parked")
PANICS = line_of("go/main.go", "// panics here")
SPIN = line_of("go/main.go", "// spin loop")


@pytest.fixture(scope="session")
def go_binary(build_dir: Path) -> str:
    """The test program, built once without optimisations."""
    require("dlv", "go")
    out = build_dir / "goprog"
    subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", str(out), "."], cwd=GO_DIR, check=True,
                   capture_output=True, timeout=300)
    return str(out)


@pytest.fixture(autouse=True)
def _go_ready(go_binary: str) -> Iterator[None]:
    """Every test needs dlv and go (and a warm build cache); none may leave build artefacts behind."""
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), "polydbg-go-*")))
    yield
    assert not (GO_DIR / "__debug_bin").exists()
    assert not list(GO_DIR.glob("__debug_bin*"))
    assert set(glob.glob(os.path.join(tempfile.gettempdir(), "polydbg-go-*"))) <= before


def by_name(variables: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in variables}


def require_ptrace_attach() -> None:
    """Attaching to a process that is not delve's child needs ptrace rights (Yama ptrace_scope)."""
    try:
        scope = int(Path("/proc/sys/kernel/yama/ptrace_scope").read_text())
    except (OSError, ValueError):
        scope = 0
    if scope == 0 or (scope == 1 and os.geteuid() == 0):
        return
    reason = f"attaching needs kernel.yama.ptrace_scope=0 or root (it is {scope})"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def kill_tree(process: subprocess.Popen[bytes]) -> None:
    """Kill a process and its children (a dlv server and the program it started), and reap it."""
    if process.poll() is None:
        children = []
        with contextlib.suppress(OSError):
            children = [int(p) for p in Path(f"/proc/{process.pid}/task/{process.pid}/children").read_text().split()]
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
        process.kill()
    process.wait(timeout=10)
    if process.stdout is not None:
        process.stdout.close()


async def test_file_launch_reads_slices_maps_and_structs(tools: Tools) -> None:
    report = await tools("debug_launch", program=MAIN, breakpoints=[{"file": MAIN, "line": CALL_SCALE}])
    assert report["state"] == "stopped" and report["reason"] == "breakpoint"
    assert report["location"] == {"file": MAIN, "line": CALL_SCALE, "function": "main.basic"}
    assert "hello from go" in report["output"]["text"]
    assert "listening" not in report["output"]["text"] and "dlv help" not in report["output"]["text"]
    local = by_name(report["locals"])
    assert local["count"]["value"] == "7"
    assert "[10,20,30,40,50]" in local["numbers"]["value"]
    assert '"ann": 31' in local["ages"]["value"]
    assert local["origin"]["type"] == "main.Point"

    fields = await tools("debug_variables", ref=local["origin"]["ref"])
    assert {v["name"]: v["value"] for v in fields["variables"]} == {"X": "1", "Y": "2", "Label": '"origin"'}
    numbers = await tools("debug_variables", ref=local["numbers"]["ref"])
    assert [(v["name"], v["value"]) for v in numbers["variables"]] == [
        ("[0]", "10"), ("[1]", "20"), ("[2]", "30"), ("[3]", "40"), ("[4]", "50")]
    ages = await tools("debug_variables", ref=local["ages"]["ref"])
    assert {v["name"]: v["value"] for v in ages["variables"]} == {'"ann"': "31", '"bob"': "42"}
    assert ages["total"] == 2
    # delve loads 64 elements at first; the rest are paged in on demand
    squares = await tools("debug_variables", ref=local["squares"]["ref"], start=70, count=3)
    assert [(v["name"], v["value"]) for v in squares["variables"]] == [
        ("[70]", "4900"), ("[71]", "5041"), ("[72]", "5184")]
    assert squares["total"] == 100
    await tools("debug_terminate")


async def test_package_dir_launch_runs_to_the_breakpoint_and_exits_with_output(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(GO_DIR), breakpoints=[{"file": MAIN, "line": CALL_SCALE}])
    assert report["location"] == {"file": MAIN, "line": CALL_SCALE, "function": "main.basic"}
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0
    assert "count 7 moved 3 total 150 ages 2 squares 100" in done["output"]["text"]
    await tools("debug_terminate")


async def test_hit_condition_and_trace(tools: Tools) -> None:
    report = await tools("debug_launch", program=MAIN,
                         breakpoints=[{"file": MAIN, "line": LOOP_BODY, "hit_condition": "4"}])
    assert by_name(report["locals"])["i"]["value"] == "3"  # the 4th time round
    evaluated = await tools("debug_evaluate", expression="values[i] * 2 + len(values)")  # Go's indexing and len
    assert evaluated["value"] == "85"
    await tools("debug_clear", all=True)
    trace = await tools("debug_trace", points=[{"file": MAIN, "line": LOOP_BODY}], expressions=["i", "total"])
    assert [hit["values"] for hit in trace["hits"]] == [{"i": "4", "total": "100"}]
    assert trace["stopped_because"] == "exited"
    assert "> [Go" not in (await tools("debug_output"))["text"]
    await tools("debug_terminate")


async def test_goroutines_are_threads(tools: Tools) -> None:
    report = await tools("debug_launch", program=MAIN, args=["goroutines"],
                         breakpoints=[{"file": MAIN, "line": PARKED}])
    assert report["location"]["function"] == "main.goroutines"
    stacks = await tools("debug_stack", all_threads=True)  # threads alike may be one entry, with how many more
    assert sum(1 + t.get("same", 0) for t in stacks["threads"]) >= 4
    workers = [t for t in stacks["threads"] if any(f["function"] == "main.worker" for f in t["frames"])]
    assert sum(1 + t.get("same", 0) for t in workers) == 3
    # each worker has handed over its id; it is parked on release, or about to be
    worker_lines = {line_of("go/main.go", "ready <- id"), line_of("go/main.go", "// worker parked")}
    assert all(any(f["function"] == "main.worker" and f["line"] in worker_lines for f in t["frames"])
               for t in workers)
    await tools("debug_terminate")


async def test_goroutines_past_delve_s_listing_limit_are_counted_and_the_limit_named(tools: Tools) -> None:
    """delve lists at most 1,024 goroutines and said nothing of the others (5,000 read as ~1,020)."""
    await tools("debug_launch", program=MAIN, args=["goroutines", "3000"], breakpoints=[{"file": MAIN, "line": PARKED}])
    stacks = await tools("debug_stack", all_threads=True, levels=2)
    listed = sum(1 + t.get("same", 0) for t in stacks["threads"])
    assert 1000 < listed <= 1025, listed
    more = stacks.get("more") or ""
    # 3,000 workers, main, and the runtime's own that are not system goroutines (none in Go 1.19 here)
    counted = int(re.search(r"([\d,]+) goroutines, [\d,]+ listed", more)[1].replace(",", ""))  # type: ignore[index]
    assert 3001 <= counted <= 3005 and "delve lists at most 1,024 goroutines" in more, more
    assert "Too many goroutines" not in (await tools("debug_output"))["text"]  # delve's note, not the program's
    await tools("debug_terminate")


async def test_panic_stops_in_user_code_with_its_message(tools: Tools) -> None:
    report = await tools("debug_launch", program=MAIN, args=["panic"])
    assert report["state"] == "stopped" and report["reason"] == "exception"
    assert report["exception"] == {"type": "panic", "message": "cannot divide 10 by zero"}
    assert report["location"] == {"file": MAIN, "line": PANICS, "function": "main.divide"}
    local = by_name(report["locals"])
    assert (local["a"]["value"], local["b"]["value"]) == ("10", "0")
    stack = await tools("debug_stack")
    assert [f["function"] for f in stack["threads"][0]["frames"][:2]] == ["main.divide", "main.main"]
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 2
    assert "panic: cannot divide 10 by zero" in (await tools("debug_output", stream="stderr"))["text"]
    await tools("debug_terminate")


async def test_deadlock_stops_at_the_blocked_line(tools: Tools) -> None:
    report = await tools("debug_launch", program=MAIN, args=["deadlock"])
    assert report["state"] == "stopped" and report["reason"] == "exception"
    assert (report["exception"]["type"], report["exception"]["message"]) == (
        "fatal error", "all goroutines are asleep - deadlock!")
    assert report["location"] == {"file": MAIN, "line": line_of("go/main.go", "// deadlocks here"),
                                  "function": "main.main"}
    await tools("debug_terminate")


async def test_pause_an_infinite_loop_and_program_output(tools: Tools) -> None:
    entry = await tools("debug_launch", program=MAIN, args=["spin"], stop_on_entry=True)
    assert entry["state"] == "stopped"
    running = await tools("debug_continue", timeout_s=1)  # time to reach the loop
    assert running["state"] == "running" and running["timed_out"]
    paused = await tools("debug_pause")
    assert paused["state"] == "stopped" and paused["reason"] == "pause"
    assert paused["location"]["function"] == "main.spin"
    assert int(by_name(paused["locals"])["n"]["value"]) > 0
    stdout = (await tools("debug_output", stream="stdout"))["text"]
    assert re.fullmatch(r"spinning \d+\n", stdout), stdout
    everything = (await tools("debug_output"))["text"]
    assert "listening at" not in everything and "dlv help" not in everything
    await tools("debug_terminate")


async def test_a_program_killed_while_stopped_reads_killed_within_a_second(tools: Tools) -> None:
    """delve itself notices only when asked to resume the program (test_conformance covers that); the session
    must not read "stopped" meanwhile."""
    report = await tools("debug_launch", program=MAIN, args=["spin"], breakpoints=[{"file": MAIN, "line": SPIN}])
    assert report["state"] == "stopped", report
    pid = int(re.search(r"spinning (\d+)", report["output"]["text"])[1])  # type: ignore[index]
    assert (await tools("debug_sessions"))["sessions"][0]["pid"] == pid  # debug_sessions names the program
    os.kill(pid, signal.SIGKILL)
    killed = time.monotonic()
    session = await tools.session_once(lambda s: s["state"] != "stopped", within_s=5)
    assert time.monotonic() - killed < 1.5, session
    assert session["state"] == "exited" and session["cause"] == "killed by signal 9 (SIGKILL)", session
    assert "exit_code" not in session, session  # no code made up
    await tools("debug_terminate")


async def test_exec_a_prebuilt_binary_and_native_tools(tools: Tools, go_binary: str) -> None:
    report = await tools("debug_launch", program=go_binary, breakpoints=[{"file": MAIN, "line": INSIDE_SCALE}])
    assert report["location"] == {"file": MAIN, "line": INSIDE_SCALE, "function": "main.scale"}
    assert (await tools("debug_evaluate", expression="p.Label"))["value"] == '"origin"'
    memory = await tools("debug_memory", address="&k", count=8)
    assert memory["hex"] == "0300000000000000"  # k == 3, little-endian int64
    await tools("debug_memory", address="&k", write="05")
    assert (await tools("debug_evaluate", expression="k"))["value"] == "5"
    registers = by_name((await tools("debug_variables", scope="registers"))["variables"])
    assert int(registers["rip"]["value"], 16) > 0
    assert "Registers" not in (await tools("debug_variables"))["scopes"]  # shown only while read
    disassembly = await tools("debug_disassemble", count=6)
    assert sum(1 for i in disassembly["instructions"] if i["current"]) == 1
    sources = await tools("debug_command", command="sources main.go")
    assert MAIN in sources["output"]
    refused = await tools.error("debug_command", command="goroutines")
    assert "help, config, sources" in refused
    no_watch = await tools.error("debug_watch", expression="k")  # delve 1.20 has none: what to use instead
    assert "no data breakpoints" in no_watch and "debug_trace" in no_watch, no_watch
    await tools("debug_terminate")


async def test_args_env_and_cwd_reach_the_program(tools: Tools, tmp_path: Path) -> None:
    done = await tools("debug_launch", program=str(GO_DIR), args=["env", "a b", "c"], cwd=str(tmp_path),
                       env={"POLYDBG_GREETING": "hello"})
    assert done["state"] == "exited" and done["exit_code"] == 0
    assert f"greeting hello cwd {tmp_path} args [a b c]" in done["output"]["text"]
    await tools("debug_terminate")


async def test_build_errors_are_reported(tools: Tools, tmp_path: Path) -> None:
    broken = tmp_path / "broken.go"
    broken.write_text("package main\n\nfunc main() {\n\tmissing()\n}\n")
    error = await tools.error("debug_launch", program=str(broken))
    assert "go build failed" in error and "undefined: missing" in error
    assert not list(tmp_path.glob("__debug_bin*"))


@pytest.fixture
def spinner(go_binary: str) -> Iterator[subprocess.Popen[bytes]]:
    """The test program spinning in its loop (it has said so on stdout)."""
    process = subprocess.Popen([go_binary, "spin"], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert process.stdout is not None
        assert process.stdout.readline().decode() == f"spinning {process.pid}\n"
        yield process
    finally:
        kill_tree(process)


@pytest.fixture
def headless_port(go_binary: str) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """A user's ``dlv --headless`` server holding the test program (halted at entry), and its port."""
    server = subprocess.Popen(["dlv", "--headless", "--listen=127.0.0.1:0", "--accept-multiclient", "--api-version=2",
                               "exec", go_binary, "--", "spin"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        assert server.stdout is not None
        listening = re.search(r"API server listening at: 127\.0\.0\.1:(\d+)", server.stdout.readline().decode())
        assert listening, "dlv --headless did not report its port"
        yield server, int(listening[1])
    finally:
        kill_tree(server)


async def test_attach_by_pid_and_terminate_kills_it(tools: Tools, spinner: subprocess.Popen[bytes]) -> None:
    require_ptrace_attach()
    report = await tools("debug_attach", pid=spinner.pid, breakpoints=[{"file": MAIN, "line": SPIN}])
    assert report["state"] == "stopped" and report["reason"] == "breakpoint"
    assert report["location"] == {"file": MAIN, "line": SPIN, "function": "main.spin"}
    assert (await tools("debug_evaluate", expression="n >= 0"))["value"] == "true"
    await tools("debug_terminate")
    assert spinner.wait(timeout=10) != 0


async def test_attach_to_a_headless_dlv_server_detach_and_reattach(
        tools: Tools, headless_port: tuple[subprocess.Popen[bytes], int]) -> None:
    server, port = headless_port
    report = await tools("debug_attach", port=port, language="go", breakpoints=[{"file": MAIN, "line": SPIN}])
    assert report["state"] == "stopped"
    assert report["location"] == {"file": MAIN, "line": SPIN, "function": "main.spin"}
    assert int(by_name(report["locals"])["n"]["value"]) >= 0
    await tools("debug_terminate", detach=True)  # the server stays; the program runs on, breakpoint gone
    again = await tools("debug_attach", port=port, language="go")
    assert again["state"] == "running"
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause" and paused["location"]["function"] == "main.spin"
    await tools("debug_terminate")
    assert server.wait(timeout=10) == 0  # terminating ends the server and its program


async def test_building_is_not_counted_in_the_wait_for_a_stop(tools: Tools, tmp_path: Path) -> None:
    """A .go source is built by delve before the program starts; timeout_s bounds the wait for the stop
    after that, not the build (a cold build takes seconds; 'delve did not become ready' was the old answer)."""
    require("dlv", "go")
    source = tmp_path / "main.go"
    source.write_text('package main\n\nimport "fmt"\n\nfunc main() {\n\tx := 41\n\tfmt.Println(x + 1) // here\n}\n')
    report = await tools("debug_launch", program=str(source), timeout_s=0.2,
                         breakpoints=[{"file": str(source), "line": 7}])
    assert report["state"] in ("stopped", "running"), report
    if report["state"] == "running":  # the program started after the build and had not stopped 0.2 s later
        report = await tools("debug_continue")
    assert report["state"] == "stopped" and report["location"]["line"] == 7
    await tools("debug_terminate")
