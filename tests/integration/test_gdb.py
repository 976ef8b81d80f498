"""C and C++ through gdb's machine interface (adapter "gdb"), through the MCP layer: what is
particular to gdb — breakpoints (conditions with hit counts, logpoints, functions), output through
the program's pty, step out's return value, structs and STL containers, Rust pretty-printers,
signals, C++ exceptions, core files, attach by pid, gdbserver, and the native tools (watchpoints,
memory, disassembly, registers, raw commands). The basic flow (line and conditional breakpoints,
stepping, evaluate, set variable, exit, terminate) is test_conformance.py's, for every backend;
gdb's pure helpers are tested in tests/unit/backends/gdb/test_helpers.py.

The programs under tests/programs/native/gdb/ are built once per run with gcc/g++ -g -O0.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require, text_of

SOURCES = PROGRAMS / "native" / "gdb"
POINTS_C = str(SOURCES / "points.c")
CONTAINERS_CPP = str(SOURCES / "containers.cpp")
ADD_BODY = line_of("native/gdb/points.c", "marker: add body")
ADD_RETURN = ADD_BODY + 1
LOOP_CALL = line_of("native/gdb/points.c", "marker: loop call")
SCALE_CALL = line_of("native/gdb/points.c", "marker: scale call")
COUNTER_WRITE = line_of("native/gdb/points.c", "marker: counter write")
CRASH = line_of("native/gdb/points.c", "marker: crash")
WAITS = line_of("native/gdb/points.c", "marker: wait")
PRINT = line_of("native/gdb/containers.cpp", "marker: print")
THROWS = line_of("native/gdb/containers.cpp", "marker: throws")
OUT_OF_RANGE_CPP = str(SOURCES / "out_of_range.cpp")
BAD_INDEX = line_of("native/gdb/out_of_range.cpp", "marker: bad index")
COPIES_C = str(SOURCES / "copies.c")
MEMCPY_CALL = line_of("native/gdb/copies.c", "marker: memcpy call")
VALUES_RS = str(SOURCES / "values.rs")
VALUES_READY = line_of("native/gdb/values.rs", "marker: values ready")


@pytest.fixture(scope="session")
def built(build_dir: Path) -> dict[str, str]:
    require("gdb", "gcc", "g++")
    out = build_dir / "gdb"
    out.mkdir(exist_ok=True)
    programs = {"points": ("gcc", POINTS_C), "containers": ("g++", CONTAINERS_CPP),
                "out_of_range": ("g++", OUT_OF_RANGE_CPP), "copies": ("gcc", COPIES_C)}
    for name, (compiler, source) in programs.items():
        subprocess.run([compiler, "-g", "-O0", "-o", str(out / name), source], check=True, capture_output=True,
                       timeout=120)
    return {name: str(out / name) for name in programs}


async def _set_variable(tools: Tools, **arguments: object) -> dict[str, object]:
    """debug_set_variable takes ``name``, which ``Tools.__call__(name, **arguments)`` cannot pass."""
    result = await tools.client.call_tool("debug_set_variable", arguments)
    assert not result.is_error, f"debug_set_variable({arguments}) failed: {text_of(result)}"
    return dict(result.structured_content or {})


@pytest.fixture(scope="session")
def rust_values(build_dir: Path) -> str:
    require("gdb", "rustc")
    binary = build_dir / "gdb" / "values-rs"
    binary.parent.mkdir(exist_ok=True)
    subprocess.run(["rustc", "-g", "-C", "opt-level=0", "-o", str(binary), VALUES_RS], check=True,
                   capture_output=True, timeout=120)
    return str(binary)


def _locals(report: dict[str, object]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals", [])}  # type: ignore[attr-defined]


async def _read_until(stream: asyncio.StreamReader, marker: bytes, timeout_s: float = 20.0) -> bytes:
    async def read() -> bytes:
        seen = b""
        while marker not in seen:
            line = await stream.readline()
            if not line:
                raise AssertionError(f"stream ended before {marker!r}; got {seen!r}")
            seen += line
        return seen
    return await asyncio.wait_for(read(), timeout_s)


@contextlib.asynccontextmanager
async def _process(*argv: str) -> AsyncIterator[asyncio.subprocess.Process]:
    """A helper process in its own process group, killed and reaped at the end."""
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                                                   start_new_session=True)
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        await process.wait()


async def test_output_streams_before_exit_and_step_out_says_what_returned(tools: Tools, built: dict[str, str]) -> None:
    report = await tools("debug_launch", program=built["points"], adapter="gdb",
                         breakpoints=[{"file": POINTS_C, "line": LOOP_CALL}])
    assert report["location"] == {"file": POINTS_C, "line": LOOP_CALL, "function": "main"}
    assert "start box" in report["output"]["text"]  # the program's stdout, through its pty, while it runs
    inside = await tools("debug_step", kind="into")
    assert inside["location"]["function"] == "add"
    back = await tools("debug_step", kind="out")
    assert back["location"] == {"file": POINTS_C, "line": LOOP_CALL, "function": "main"}
    assert back["returned"] == ["add() returned 0"]  # -exec-finish's return value
    await tools("debug_terminate")


async def test_structs_evaluate_and_set_variable(tools: Tools, built: dict[str, str]) -> None:
    report = await tools("debug_launch", program=built["points"], adapter="gdb",
                         breakpoints=[{"file": POINTS_C, "line": SCALE_CALL}])
    values = _locals(report)
    assert values["origin"] == "{x = 1, y = 2}"
    assert "corners = {{x = 0, y = 0}, {x = 3, y = 4}}" in values["box"]
    box = next(v for v in report["locals"] if v["name"] == "box")
    assert box["type"] == "struct shape"
    members = await tools("debug_variables", ref=box["ref"])
    by_name = {v["name"]: v for v in members["variables"]}
    assert by_name["name"]["value"].endswith('"box"') and "ref" not in by_name["name"]  # a C string: no children
    assert by_name["corners"]["value"] == "{{x = 0, y = 0}, {x = 3, y = 4}}"
    corners = await tools("debug_variables", ref=by_name["corners"]["ref"])
    assert [(v["name"], v["value"]) for v in corners["variables"]] == [("[0]", "{x = 0, y = 0}"),
                                                                      ("[1]", "{x = 3, y = 4}")]
    origin = await tools("debug_variables", ref=by_name["origin"]["ref"])  # a pointer: the pointee's members
    assert [(v["name"], v["value"]) for v in origin["variables"]] == [("x", "1"), ("y", "2")]
    evaluated = await tools("debug_evaluate", expression="box.corners[1].x * 10 + sum")
    assert (evaluated["value"], evaluated["type"]) == ("40", "int")
    changed = await _set_variable(tools, name="sum", value="sum + 32")
    assert changed["value"] == "42"
    member = await _set_variable(tools, name="y", value="7", ref=origin["ref"])
    assert member["value"] == "7"
    ended = await tools("debug_continue")
    assert ended["state"] == "exited"
    assert ended["exit_code"] == 3  # main returns 0 only when sum == 10: the assignment reached the program
    assert "sum=42 area=14" in ended["output"]["text"]
    await tools("debug_terminate")


async def test_conditions_hit_counts_logpoints_and_function_breakpoints(tools: Tools, built: dict[str, str]) -> None:
    report = await tools("debug_launch", program=built["points"], adapter="gdb", breakpoints=[
        {"file": POINTS_C, "line": ADD_BODY, "condition": "b == 2"},
        {"file": POINTS_C, "line": ADD_RETURN, "hit_condition": "== 4"},
        {"file": POINTS_C, "line": LOOP_CALL, "log_message": "i={i} sum={sum} {nope}"},
    ])
    assert (report["location"]["line"], _locals(report)["b"]) == (ADD_BODY, "2")
    fourth = await tools("debug_continue")
    assert (fourth["location"]["line"], _locals(fourth)["b"]) == (ADD_RETURN, "3")  # the 4th hit, exactly
    await tools("debug_break", function="scale")
    scaled = await tools("debug_continue")  # no 5th stop at ADD_RETURN: "== 4" stops once
    assert scaled["reason"] == "function breakpoint"
    assert scaled["location"]["function"] == "scale"
    output = await tools("debug_output")
    lines = [line for line in output["text"].splitlines() if line.startswith("i=")]
    assert lines[:2] == ['i=0 sum=0 <error: No symbol "nope" in current context.>',
                         'i=1 sum=0 <error: No symbol "nope" in current context.>']
    assert len(lines) == 5  # the logpoint never stopped the program
    listed = {b.get("line") or b.get("function"): b for b in (await tools("debug_breakpoints"))["breakpoints"]}
    assert listed[ADD_RETURN]["hits"] == 1 and listed["scale"]["hits"] == 1
    await tools("debug_terminate")


async def test_cpp_containers_read_as_values(tools: Tools, built: dict[str, str]) -> None:
    report = await tools("debug_launch", program=built["containers"], adapter="gdb",
                         breakpoints=[{"file": CONTAINERS_CPP, "line": PRINT}])
    values = {v["name"]: v for v in report["locals"]}
    assert values["numbers"]["value"] == "std::vector of length 3, capacity 3 = {1, 2, 3}"
    assert values["ages"]["value"] == 'std::map with 2 elements = {["ann"] = 31, ["bob"] = 42}'
    assert values["ages"]["type"] == "std::map<std::string, int>"
    assert values["greeting"]["value"] == '"hello"' and "ref" not in values["greeting"]
    ages = await tools("debug_variables", ref=values["ages"]["ref"])
    assert [(v["name"], v["value"]) for v in ages["variables"]] == [('["ann"]', "31"), ('["bob"]', "42")]
    items = await tools("debug_variables", ref=values["items"]["ref"])
    assert [v["value"] for v in items["variables"]] == ['{id = 1, label = "one"}', '{id = 2, label = "two"}']
    first = await tools("debug_variables", ref=items["variables"][0]["ref"])
    assert [(v["name"], v["value"]) for v in first["variables"]] == [("id", "1"), ("label", '"one"')]
    evaluated = await tools("debug_evaluate", expression="numbers")
    assert evaluated["value"] == "std::vector of length 3, capacity 3 = {1, 2, 3}"
    assert evaluated["type"] == "std::vector<int>"
    await tools("debug_terminate")


async def test_rust_values_through_the_toolchains_pretty_printers(tools: Tools, rust_values: str) -> None:
    report = await tools("debug_launch", program=rust_values, adapter="gdb", language="rust",
                         breakpoints=[{"file": VALUES_RS, "line": VALUES_READY}])
    values = {v["name"]: v for v in report["locals"]}
    assert (values["numbers"]["value"], values["numbers"]["type"]) == ("Vec(size=3) = {1, 2, 3}", "Vec<i32>")
    assert (values["name"]["value"], values["name"]["type"]) == ('"gdb"', "String")
    assert values["maybe"]["value"] == "Some(7)"
    assert values["result"]["value"] == "26"
    points = await tools("debug_variables", ref=values["points"]["ref"])
    assert [v["value"] for v in points["variables"]] == ["{x = 2, y = 3}", "{x = 4, y = 5}"]
    await tools("debug_terminate")


@pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
async def test_cpp_exception_stops_at_the_throw_with_its_type_and_message(
        tools: Tools, built: dict[str, str], adapter: str, anyio_backend: str) -> None:
    if adapter == "lldb-dap":
        require("lldb-dap-22|lldb-dap|lldb-vscode")
    thrown = await tools("debug_launch", program=built["containers"], adapter=adapter, args=["throw"],
                         break_on_exception="raised")
    assert thrown["reason"] == "exception"
    assert thrown["location"]["line"] == THROWS and thrown["location"]["function"].startswith("check")
    assert thrown["exception"] == {"type": "std::runtime_error", "message": "too big"}  # read, not called
    assert _locals(thrown)["n"] == "6"
    stack = await tools("debug_stack")
    assert stack["threads"][0]["frames"][0]["function"].startswith("check")  # not __cxa_throw
    await tools("debug_terminate")


@pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
async def test_a_throw_inside_libstdcxx_stops_at_the_users_call_with_a_short_name(
        tools: Tools, built: dict[str, str], adapter: str, anyio_backend: str) -> None:
    if adapter == "lldb-dap":
        require("lldb-dap-22|lldb-dap|lldb-vscode")
    thrown = await tools("debug_launch", program=built["out_of_range"], adapter=adapter,
                         break_on_exception="raised")
    assert thrown["location"]["file"] == OUT_OF_RANGE_CPP and thrown["location"]["line"] == BAD_INDEX, thrown
    assert thrown["exception"]["type"] == "std::out_of_range"
    assert "(which is 5)" in thrown["exception"]["message"]
    assert len(thrown["location"]["function"]) < 80, thrown["location"]["function"]  # no allocator<…> soup
    text = await tools.text("debug_stack")
    assert "stl_vector.h" not in text and "basic_string<char" not in text, text
    await tools("debug_terminate")


@pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
async def test_a_watchpoint_survives_restart(tools: Tools, built: dict[str, str], adapter: str,
                                             anyio_backend: str) -> None:
    if adapter == "lldb-dap":
        require("lldb-dap-22|lldb-dap|lldb-vscode")
    await tools("debug_launch", program=built["points"], adapter=adapter, stop_on_entry=True)
    await tools("debug_watch", expression="counter")
    first = await tools("debug_continue")
    assert first["reason"] == "data breakpoint" and first["location"]["line"] == COUNTER_WRITE + 1, first
    await tools("debug_restart")
    [watch] = (await tools("debug_breakpoints"))["breakpoints"]
    assert watch["verified"], watch  # lldb could only resolve it once the new process existed
    again = await tools("debug_continue")
    assert again["reason"] == "data breakpoint" and again["location"]["line"] == COUNTER_WRITE + 1, again
    await tools("debug_terminate")


@pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
async def test_a_watchpoint_hit_inside_memcpy_stops_at_the_users_call(tools: Tools, built: dict[str, str],
                                                                      adapter: str, anyio_backend: str) -> None:
    if adapter == "lldb-dap":
        require("lldb-dap-22|lldb-dap|lldb-vscode")
    await tools("debug_launch", program=built["copies"], adapter=adapter, stop_on_entry=True)
    await tools("debug_watch", expression="buffer[20]")
    hit = await tools("debug_continue")
    assert hit["reason"] == "data breakpoint"
    assert hit["location"] == {"file": COPIES_C, "line": MEMCPY_CALL, "function": "fill"}, hit
    assert "library code called from here" in hit["description"] and "mem" in hit["description"], hit
    assert "'o'" in hit["description"], hit  # what memcpy wrote there: "written by memcpy, not by…"[20]
    assert {v["name"] for v in hit["locals"]} == {"source", "length"}
    assert (await tools("debug_evaluate", expression="length"))["value"] == "64"  # frame 0 is the user's
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert frames[0]["index"] == -1 and "mem" in frames[0]["function"], frames  # the library frame, above #0
    assert [(f["index"], f["function"]) for f in frames[1:3]] == [(0, "fill"), (1, "main")]
    assert "(above #0) " in await tools.text("debug_stack")
    await tools("debug_terminate")


async def test_segfault_then_post_mortem_core(tools: Tools, built: dict[str, str], tmp_path: Path) -> None:
    crashed = await tools("debug_launch", program=built["points"], adapter="gdb", args=["crash"])
    assert crashed["reason"] == "exception"
    assert "SIGSEGV" in crashed["description"]
    assert crashed["exception"]["type"] == "SIGSEGV"
    assert crashed["location"] == {"file": POINTS_C, "line": CRASH, "function": "main"}
    core = tmp_path / "points.core"
    written = await tools("debug_command", command=f"generate-core-file {core}")
    assert "Saved corefile" in written["output"]
    ended = await tools("debug_continue")
    assert (ended["state"], ended["description"]) == ("exited", "killed by signal 11 (SIGSEGV)"), ended  # not 139
    await tools("debug_terminate")

    post = await tools("debug_launch", program=built["points"], core=str(core), adapter="gdb")
    assert post["state"] == "stopped"
    assert post["reason"] == "exception" and "SIGSEGV" in post["description"]
    assert post["location"] == {"file": POINTS_C, "line": CRASH, "function": "main"}
    assert _locals(post)["sum"] == "10" and _locals(post)["nowhere"] == "0x0"
    box = await tools("debug_evaluate", expression="box.corners[1]")
    assert box["value"] == "{x = 6, y = 8}"
    refused = await tools.error("debug_step")
    assert "not being run" in refused
    await tools("debug_terminate")


async def test_watchpoint_memory_disassembly_registers_and_raw_command(tools: Tools, built: dict[str, str]) -> None:
    await tools("debug_launch", program=built["points"], adapter="gdb",
                breakpoints=[{"file": POINTS_C, "line": SCALE_CALL}])
    watch = await tools("debug_watch", expression="counter")
    assert watch["breakpoints"][0]["verified"]
    hit = await tools("debug_continue")
    assert hit["reason"] == "data breakpoint"
    assert hit["description"] == f"#{watch['breakpoints'][0]['id']} counter: 0 → 1"
    assert hit["location"]["function"] == "scale"
    assert hit["location"]["line"] in (COUNTER_WRITE, COUNTER_WRITE + 1)
    memory = await tools("debug_memory", address="&counter", count=4)
    assert memory["hex"] == "01000000"
    await tools("debug_memory", address="&counter", count=4, write="2a000000")
    assert (await tools("debug_evaluate", expression="counter"))["value"] == "42"
    disassembly = await tools("debug_disassemble", count=8)
    current = [i for i in disassembly["instructions"] if i.get("current")]
    assert len(current) == 1 and current[0]["address"] == disassembly["pc"]
    assert int(disassembly["instructions"][0]["address"], 16) < int(disassembly["pc"], 16)  # context before the pc
    registers = {v["name"]: v["value"] for v in (await tools("debug_variables", scope="registers"))["variables"]}
    assert int(registers["rip"], 16) == int(disassembly["pc"], 16)
    raw = await tools("debug_command", command="info registers rip")
    empty = await tools.error("debug_command", command="  ")
    assert "the command is empty" in empty and "'bt'" in empty, empty
    assert raw["output"].startswith("rip") and "<scale+" in raw["output"]
    await tools("debug_terminate")


async def test_stop_on_entry_pause_and_attach_by_pid(tools: Tools, built: dict[str, str]) -> None:
    entry = await tools("debug_launch", program=built["points"], adapter="gdb", args=["wait"], stop_on_entry=True)
    assert (entry["reason"], entry["location"]["function"]) == ("entry", "main")
    await tools("debug_continue", to={"file": POINTS_C, "line": WAITS})
    running = await tools("debug_step", timeout_s=0.5)  # getchar() blocks: its terminal never has input
    assert running["state"] == "running" and running["timed_out"]
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause"
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert any(f["function"] == "main" and f["line"] == WAITS for f in frames)
    await tools("debug_terminate")

    async with _process(built["points"], "wait") as process:
        assert process.stdout is not None
        await _read_until(process.stdout, b"counter=")  # blocked in getchar() now
        attached = await tools("debug_attach", pid=process.pid, adapter="gdb", language="c")
        assert attached["state"] == "running"
        paused = await tools("debug_pause")
        assert paused["reason"] == "pause"
        frames = (await tools("debug_stack"))["threads"][0]["frames"]
        assert any(f["function"] == "main" and f["line"] == WAITS for f in frames)
        await tools("debug_terminate")
        assert await asyncio.wait_for(process.wait(), 10) == -signal.SIGKILL  # terminate ends an attached program


async def test_gdbserver_remote_target(tools: Tools, built: dict[str, str]) -> None:
    require("gdbserver")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    async with _process("gdbserver", f"127.0.0.1:{port}", built["points"]) as server:
        assert server.stderr is not None
        await _read_until(server.stderr, b"Listening on port")
        report = await tools("debug_attach", host="127.0.0.1", port=port, adapter="gdb", language="c",
                             program=built["points"], breakpoints=[{"file": POINTS_C, "line": ADD_BODY}])
        assert report["reason"] == "breakpoint"
        assert report["location"] == {"file": POINTS_C, "line": ADD_BODY, "function": "add"}
        assert _locals(report)["b"] == "0"
        stepped = await tools("debug_step")
        assert stepped["location"]["line"] == ADD_RETURN
        assert (await tools("debug_evaluate", expression="total"))["value"] == "0"
        await tools("debug_terminate")
        assert await asyncio.wait_for(server.wait(), 10) is not None  # gdbserver exits with its program



@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["sleep", "60"])
    yield process
    process.kill()
    process.wait()


async def test_terminating_an_attached_running_program_leaves_gdb_whole(
        tools: Tools, sleeper: subprocess.Popen[bytes], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """gdb 13.1 asserts (x86_linux_update_debug_registers: lwp_is_stopped) and dumps a core of itself into
    its working directory when it exits while the program it attached to dies under it still running."""
    require("gdb")
    monkeypatch.chdir(tmp_path)  # gdb starts here: a core of it would land here
    report = await tools("debug_attach", pid=sleeper.pid, adapter="gdb")
    assert report["state"] == "running"
    await tools("debug_terminate")
    assert await asyncio.to_thread(sleeper.wait, 10) == -signal.SIGKILL  # terminate ends the program
    assert not [p.name for p in tmp_path.iterdir() if p.name == "core" or p.name.startswith("core.")]
