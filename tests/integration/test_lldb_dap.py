"""C, C++ and Rust through lldb-dap, through the MCP layer: what is particular to lldb-dap — values
(structs, strings, STL containers, Rust std types), function breakpoints, stepping past Rust's std,
crashes and panics, threads, native tools (watchpoints, memory, disassembly, registers, raw
commands), attach by pid and to a gdbserver, and core files. The basic flow (line and conditional
breakpoints, stepping, evaluate, set variable, exit, terminate) is test_conformance.py's, for every
backend; lldb-dap's pure helpers are tested in tests/unit/backends/lldb/test_helpers.py.

The test programs are built once per run: gcc/g++ -g -O0, and cargo into a target dir under the
run's build directory (the source tree stays clean).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from polydbg import procs
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.kit import timeouts
from tests.conftest import PROGRAMS, Tools, descendants, line_of, require

NATIVE = PROGRAMS / "native"
RUST = PROGRAMS / "rust"
BASICS_C = str(NATIVE / "c" / "basics.c")
LOOPER_C = str(NATIVE / "c" / "looper.c")
CALLS_C = str(NATIVE / "c" / "calls.c")
CONTAINERS_CPP = str(NATIVE / "cpp" / "containers.cpp")
MAIN_RS = str(RUST / "src" / "main.rs")

LOOP_BODY = line_of("native/c/basics.c", "/* loop body */")
IN_ADD = line_of("native/c/basics.c", "/* in add */")
WRITES_COUNTER = line_of("native/c/basics.c", "/* writes counter */")
FAULTS = line_of("native/c/crash.c", "/* faults: next is NULL */")
THREADS_C = str(NATIVE / "c" / "threads.c")
ALL_RUNNING = line_of("native/c/threads.c", "/* all workers running */")
ASSERT_FAILS = line_of("native/c/aborts.c", "/* assert fails */")
IN_TICK = line_of("native/c/looper.c", "/* in tick */")
BETWEEN_ROUNDS = line_of("native/c/calls.c", "/* between rounds */")
THROWS = line_of("native/cpp/throws.cpp", "// throws here")
AFTER_CONTAINERS = line_of("native/cpp/containers.cpp", "// after containers")
VALUES_READY = line_of("rust/src/main.rs", "// values ready")
PANICS = line_of("rust/src/main.rs", "// panics here")
AREA_LOOP = line_of("rust/src/main.rs", "let mut area = 0.0;")

LLDB = "lldb-dap-22|lldb-dap|lldb-vscode"


def _cargo() -> str | None:
    return shutil.which("cargo") or next(
        (str(p) for p in [Path.home() / ".cargo" / "bin" / "cargo"] if p.exists()), None)


@pytest.fixture(params=["lldb-dap", "gdb"])
def adapter(request: pytest.FixtureRequest) -> str:
    """Each native adapter in turn (a test parametrized on its own adapters overrides this)."""
    if request.param == "gdb":
        require("gdb")
    return str(request.param)


@pytest.fixture(scope="session")
def native(build_dir: Path) -> dict[str, str]:
    """The C and C++ test programs, built once (gcc/g++ -g -O0)."""
    require(LLDB, "gcc", "g++")
    out = build_dir / "native"
    out.mkdir(exist_ok=True)
    built = {}
    for source in sorted((NATIVE / "c").glob("*.c")):
        target = out / source.stem
        subprocess.run(["gcc", "-g", "-O0", "-pthread", "-o", str(target), str(source)], check=True,
                       capture_output=True, timeout=120)
        built[source.stem] = str(target)
    for source in sorted((NATIVE / "cpp").glob("*.cpp")):
        target = out / source.stem
        subprocess.run(["g++", "-g", "-O0", "-o", str(target), str(source)], check=True, capture_output=True,
                       timeout=120)
        built[source.stem] = str(target)
    return built


@pytest.fixture(scope="session")
def rust_binary(build_dir: Path) -> str:
    """The Rust test program (cargo build, dev profile), built into the run's build directory."""
    require(LLDB)
    cargo = _cargo()
    if cargo is None:
        require("cargo")  # skips locally, fails under CI
    assert cargo is not None
    target_dir = build_dir / "cargo-target"
    env = {**os.environ, "CARGO_TARGET_DIR": str(target_dir)}
    env["PATH"] = os.path.dirname(cargo) + os.pathsep + env.get("PATH", "")
    subprocess.run([cargo, "build", "--quiet"], cwd=RUST, env=env, check=True, capture_output=True, timeout=600)
    return str(target_dir / "debug" / "rustdemo")


def by_name(variables: list[dict[str, Any]] | None) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in variables or []}


def values(variables: list[dict[str, Any]] | None) -> dict[str, str]:
    return {v["name"]: v["value"] for v in variables or []}


@pytest.fixture
def looper(native: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """A running program (it prints "looping", then calls tick() every millisecond), killed and reaped after."""
    proc = subprocess.Popen([native["looper"]], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"looping\n"  # it is past start-up and in its loop
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture
def core_dump(native: dict[str, str], build_dir: Path) -> Iterator[str]:
    """A core file of the looping program, taken with gcore while it ran (the program is gone after)."""
    require("gcore")
    proc = subprocess.Popen([native["looper"]], stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
    prefix = build_dir / "looper-core"
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline() == b"looping\n"
        subprocess.run(["gcore", "-o", str(prefix), str(proc.pid)], check=True, capture_output=True, timeout=60)
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()
    core = f"{prefix}.{proc.pid}"
    yield core
    os.unlink(core)


@pytest.fixture
def gdbserver(native: dict[str, str]) -> Iterator[tuple[subprocess.Popen[bytes], int]]:
    """``gdbserver --once`` serving the basics program on a free port: (its process, the port)."""
    require("gdbserver")
    server = subprocess.Popen(["gdbserver", "--once", "127.0.0.1:0", native["basics"]], stdin=subprocess.DEVNULL,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert server.stderr is not None
        port = 0
        for line in server.stderr:  # "Process … created; pid = N", then "Listening on port N"
            if line.startswith(b"Listening on port "):
                port = int(line.split()[-1])
                break
        assert port
        yield server, port
    finally:
        if server.poll() is None:
            server.kill()
        server.wait(timeout=10)
        if server.stderr is not None:
            server.stderr.close()


# -- C ---------------------------------------------------------------------------------------------

async def test_c_struct_and_string_values(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["basics"], adapter="lldb-dap",
                         breakpoints=[{"file": BASICS_C, "line": LOOP_BODY}])
    assert report["location"] == {"file": BASICS_C, "line": LOOP_BODY, "function": "main"}
    local = by_name(report["locals"])
    assert local["origin"]["value"] == "{x:3, y:4}"  # a struct reads as its fields
    assert local["origin"]["type"] == "point"
    fields = await tools("debug_variables", ref=local["origin"]["ref"])
    assert values(fields["variables"]) == {"x": "3", "y": "4"}
    assert (await tools("debug_evaluate", expression="origin"))["value"] == "{x:3, y:4}"
    greeting = await tools("debug_evaluate", expression="greeting")  # a char array reads as a string
    assert greeting["value"] == '"hello, native"'
    await tools("debug_terminate")


async def test_a_breakpoint_outside_any_function_moves_to_the_next_code(tools: Tools, native: dict[str, str],
                                                                         adapter: str, anyio_backend: str) -> None:
    """lldb left a breakpoint on a comment line outside any function pending for ever, with no reason; gdb moved
    it to the next line with code."""
    report = await tools("debug_launch", program=native["basics"], adapter=adapter,
                         breakpoints=[{"file": BASICS_C, "line": 1}])
    assert (report["reason"], report["location"]["line"]) == ("breakpoint", IN_ADD), report
    [placed] = (await tools("debug_breakpoints"))["breakpoints"]
    assert (placed["line"], placed["actual_line"], placed["verified"]) == (1, IN_ADD, True), placed
    await tools("debug_terminate")


async def test_stop_on_entry_stops_at_main_with_its_source(tools: Tools, native: dict[str, str], adapter: str,
                                                           anyio_backend: str) -> None:
    """lldb held the program at the loader's first instruction (_start, no source), gdb at main."""
    entry = await tools("debug_launch", program=native["basics"], adapter=adapter, stop_on_entry=True)
    assert (entry["reason"], entry["location"]["function"], entry["location"]["file"]) == ("entry", "main", BASICS_C)
    assert (await tools("debug_step"))["location"]["function"] == "main"
    await tools("debug_terminate")


async def test_stop_on_entry_stops_at_the_crates_main(tools: Tools, rust_binary: str) -> None:
    entry = await tools("debug_launch", program=rust_binary, adapter="lldb-dap", stop_on_entry=True)
    assert (entry["reason"], entry["location"]["function"], entry["location"]["file"]) == (
        "entry", "rustdemo::main", MAIN_RS), entry
    await tools("debug_terminate")


async def test_c_function_breakpoint_and_pointer_member(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["basics"], adapter="lldb-dap",
                         breakpoints=[{"file": BASICS_C, "line": LOOP_BODY}])
    assert report["state"] == "stopped"
    await tools("debug_break", function="scale")
    await tools("debug_clear", file=BASICS_C)
    hit = await tools("debug_continue")
    assert hit["state"] == "stopped"
    assert hit["location"]["function"] == "scale"
    local = by_name(hit["locals"])
    assert local["factor"]["value"] == "2"
    assert local["p"]["value"].endswith("{x:3, y:4}")  # a pointer shows its address and the pointee
    assert (await tools("debug_evaluate", expression="p->y"))["value"] == "4"
    pointee = await tools("debug_memory", address="p", count=8)  # a pointer's memory is what it points at
    assert bytes.fromhex(pointee["hex"]) == (3).to_bytes(4, "little") + (4).to_bytes(4, "little")
    [bp] = (await tools("debug_breakpoints"))["breakpoints"]
    assert bp["function"] == "scale" and bp["verified"]
    await tools("debug_terminate")


async def test_c_watchpoint_memory_disassembly_registers_and_command(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["basics"], adapter="lldb-dap",
                         breakpoints=[{"file": BASICS_C, "line": LOOP_BODY}])
    assert report["state"] == "stopped"

    memory = await tools("debug_memory", address="greeting", count=16)
    assert bytes.fromhex(memory["hex"]).startswith(b"hello, native\0")
    assert "hello, native" in memory["dump"]

    code = await tools("debug_disassemble", count=12)
    current = [i for i in code["instructions"] if i.get("current")]
    assert len(current) == 1 and current[0]["address"] == code["pc"]

    registers = values((await tools("debug_variables", scope="registers"))["variables"])
    assert "rip" in registers and "rsp" in registers
    assert int(registers["rip"].split()[0], 16) == int(code["pc"], 16)

    output = (await tools("debug_command", command="frame variable origin"))["output"]
    assert "x = 3" in output and "y = 4" in output
    for empty in ("", "`"):  # lldb would run its last command again
        text = await tools.error("debug_command", command=empty)
        assert "the command is empty" in text and "'frame variable'" in text, text

    first = (await tools("debug_watch", expression="greeting[0]"))["breakpoints"][0]
    watch = (await tools("debug_watch", expression="counter"))["breakpoints"][-1]
    assert watch["verified"] and watch["id"] == first["id"] + 1
    await tools("debug_clear", file=BASICS_C)
    hit = await tools("debug_continue")
    assert hit["state"] == "stopped"
    assert hit["reason"] == "data breakpoint"
    assert hit["description"].startswith(f"#{watch['id']} counter"), hit  # not lldb's own watchpoint number
    assert hit["location"]["function"] == "bump"
    caller = (await tools("debug_command", command="frame variable scaled", frame_id=1))["output"]
    assert "scaled = 14" in caller, caller  # in the frame asked for, not lldb's selected one
    assert hit["location"]["line"] in (WRITES_COUNTER, WRITES_COUNTER + 1)  # the pc is past the writing store
    assert (await tools("debug_evaluate", expression="counter"))["value"] == "7"
    again = await tools("debug_continue")
    assert again["reason"] == "data breakpoint"
    assert (await tools("debug_evaluate", expression="counter"))["value"] == "42"
    await tools("debug_terminate")


async def test_an_evaluate_while_lldb_dap_is_stopped_says_it_is_not_answering(
        tools: Tools, native: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeouts, "INSPECT_S", 2.0)
    await tools("debug_launch", program=native["basics"], adapter="lldb-dap",
                breakpoints=[{"file": BASICS_C, "line": LOOP_BODY}])
    [adapter] = [pid for pid, command in descendants(os.getpid()).items()
                 if os.path.basename(command.split()[0]).startswith("lldb-dap")]
    os.kill(adapter, signal.SIGSTOP)
    try:
        text = await tools.error("debug_evaluate", expression="origin.x")
        assert "lldb-dap is not answering" in text and f"kill -CONT {adapter}" in text, text
        assert "still running" not in text, text  # not an endless expression
        with anyio.fail_after(1.5):  # refused at once, not after another deadline
            again = await tools.error("debug_evaluate", expression="origin.y")
        assert "lldb-dap is not answering" in again, again
    finally:
        os.kill(adapter, signal.SIGCONT)
    await tools("debug_terminate")


async def _stopped_under_gdb(tools: Tools, monkeypatch: pytest.MonkeyPatch, program: str, source: str, line: int,
                             deadline_s: float) -> None:
    """A gdb session stopped at ``source:line``, with the inspection deadline shortened to ``deadline_s``."""
    require("gdb")
    monkeypatch.setattr(timeouts, "INSPECT_S", deadline_s)
    await tools("debug_launch", program=program, adapter="gdb", breakpoints=[{"file": source, "line": line}])


async def test_an_evaluate_while_gdb_is_stopped_names_the_signal(
        tools: Tools, native: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """It said only "gdb did not answer within 10 s", where lldb-dap and debugpy say how to wake it."""
    await _stopped_under_gdb(tools, monkeypatch, native["basics"], BASICS_C, LOOP_BODY, 2.0)
    gdb = _debugger_pid("gdb")
    os.kill(gdb, signal.SIGSTOP)
    try:
        text = await tools.error("debug_evaluate", expression="origin.x")
        assert f"its process (pid {gdb}) is stopped by a signal" in text and f"kill -CONT {gdb}" in text, text
        assert "did not return" not in text, text  # not interrupted as a call that runs on
        again = await tools.error("debug_evaluate", expression="origin.y")
        assert f"kill -CONT {gdb}" in again, again
    finally:
        os.kill(gdb, signal.SIGCONT)
    assert (await tools("debug_evaluate", expression="origin.x"))["value"] == "3"
    await tools("debug_terminate")


async def test_c_segfault_stops_at_the_faulting_line(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["crash"], adapter="lldb-dap")
    assert report["state"] == "stopped"
    assert report["reason"] == "exception"
    assert "signal SIGSEGV" in report["description"]
    assert report["location"]["function"] == "second_value"
    assert report["location"]["line"] == FAULTS
    assert report["exception"]["type"] == "SIGSEGV"
    assert "address" in report["exception"]["message"]
    assert int(values(report["locals"])["next"].split()[0], 16) == 0
    assert "about to crash" in report["output"]["text"]
    text = await tools.text("debug_stack")
    assert "second_value" in text and "main" in text
    await tools("debug_terminate")


async def test_c_failed_assert_stops_at_the_assert(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["aborts"], adapter="lldb-dap")
    assert report["state"] == "stopped"
    assert report["reason"] == "exception"
    assert report["description"].startswith("signal SIGABRT")
    assert report["exception"] == {"type": "SIGABRT", "message": "Assertion `count > 0' failed."}
    # abort()'s and assert's own frames are hidden: frame 0 is the code whose assert failed
    assert report["location"] == {"file": str(NATIVE / "c" / "aborts.c"), "line": ASSERT_FAILS,
                                  "function": "checked_ratio"}
    assert values(report["locals"]) == {"total": "10", "count": "0"}
    assert "Assertion `count > 0' failed" in report["output"]["text"]
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert [f["function"] for f in frames[:2]] == ["checked_ratio", "main"]
    assert frames[0]["index"] == 0
    await tools("debug_terminate")


async def test_c_pause_lists_every_thread(tools: Tools, native: dict[str, str]) -> None:
    ready = await tools("debug_launch", program=native["threads"], adapter="lldb-dap",
                        breakpoints=[{"file": THREADS_C, "line": ALL_RUNNING}])
    assert ready["location"]["line"] == ALL_RUNNING  # every worker is in its loop now
    await tools("debug_clear", all=True)
    running = await tools("debug_continue", timeout_s=0.5)  # the workers loop; main waits in pthread_join
    assert running["state"] == "running"
    assert running["timed_out"]
    paused = await tools("debug_pause")
    assert paused["state"] == "stopped"
    assert paused["reason"] == "pause"
    stack = await tools("debug_stack", all_threads=True)
    threads = stack["threads"]  # threads alike in their innermost frames may be listed once, with the others' ids
    ids = {i for t in threads for i in (t["thread_id"], *t.get("same_ids", []))}
    assert len(ids) == 5  # main + 4 workers
    workers = sum(1 + t.get("same", 0) for t in threads if any(f["function"] == "work" for f in t["frames"]))
    assert workers == 4
    main = [t for t in threads if any(f["function"] == "main" for f in t["frames"])]
    assert len(main) == 1 and not main[0].get("same")
    await tools("debug_terminate")


async def test_attach_by_pid_breaks_and_terminate_kills(tools: Tools, looper: subprocess.Popen[bytes]) -> None:
    report = await tools("debug_attach", pid=looper.pid, language="c", adapter="lldb-dap",
                         breakpoints=[{"file": LOOPER_C, "line": IN_TICK}])
    assert report["state"] == "stopped"
    assert report["location"]["function"] == "tick"
    assert report["location"]["line"] == IN_TICK
    n = int(values(report["locals"])["n"])
    assert n >= 0
    nxt = await tools("debug_continue")
    assert int(values(nxt["locals"])["n"]) == n + 1
    await tools("debug_terminate")
    assert looper.wait(timeout=10) == -signal.SIGKILL  # terminate ends the attached program too


def _debugger_pid(name: str) -> int:
    [pid] = [pid for pid, command in descendants(os.getpid()).items()
             if os.path.basename(command.split()[0]).startswith(name)]
    return pid


def _running_untraced(program: subprocess.Popen[bytes]) -> None:
    """The program lives on, traced by nobody (a breakpoint left in its code kills it within a millisecond)."""
    with pytest.raises(subprocess.TimeoutExpired):
        program.wait(timeout=2)
    status = Path(f"/proc/{program.pid}/status").read_text()
    assert "TracerPid:\t0\n" in status, status


async def test_a_detach_leaves_the_program_running_even_from_a_stopped_debugger(
        tools: Tools, looper: subprocess.Popen[bytes], adapter: str, anyio_backend: str) -> None:
    """A debugger stopped by a signal could not detach: polydbg ended it, and the system let the program go with
    the breakpoint still in its code (it died of SIGTRAP: exit code 251, i.e. -5). It is woken to detach."""
    report = await tools("debug_attach", pid=looper.pid, language="c", adapter=adapter,
                         breakpoints=[{"file": LOOPER_C, "line": IN_TICK}])
    assert report["location"]["line"] == IN_TICK
    os.kill(_debugger_pid(adapter), signal.SIGSTOP)
    ended = await tools("debug_terminate", detach=True)
    assert "keeps running" in ended["message"]
    _running_untraced(looper)


async def test_a_detach_the_debugger_never_answers_puts_its_breakpoints_back(
        tools: Tools, looper: subprocess.Popen[bytes], monkeypatch: pytest.MonkeyPatch) -> None:
    await tools("debug_attach", pid=looper.pid, language="c", adapter="lldb-dap",
                breakpoints=[{"file": LOOPER_C, "line": IN_TICK}])
    monkeypatch.setattr(procs.DebuggerProcess, "wake", lambda _self: False)  # a debugger that stays hung
    os.kill(_debugger_pid("lldb-dap"), signal.SIGSTOP)
    text = await tools.error("debug_terminate", detach=True)
    assert "lldb-dap did not answer the detach" in text and "breakpoint bytes lldb-dap had left" in text, text
    assert (await tools("debug_sessions"))["sessions"] == []
    _running_untraced(looper)


async def _keeps_running_untraced(pid: int) -> None:
    """The detached program lives on, traced by nobody; then it is killed."""
    fd = os.pidfd_open(pid)  # readable once the process has exited
    try:
        with pytest.raises(TimeoutError):
            with anyio.fail_after(2):
                await anyio.wait_readable(fd)
        assert "TracerPid:\t0\n" in Path(f"/proc/{pid}/status").read_text()
    finally:
        os.kill(pid, signal.SIGKILL)  # the test process, a subreaper, reaps it
        with anyio.fail_after(10):
            await anyio.wait_readable(fd)
        os.close(fd)


async def test_a_launched_program_detached_keeps_running(tools: Tools, native: dict[str, str], adapter: str,
                                                         anyio_backend: str) -> None:
    """gdb: its terminal is gdb's pty, its controlling terminal: closing it at the end hung the program up
    (SIGHUP). lldb-dap: lldb answers the detach of a program it launched ~5 s after letting it go, which polydbg
    took for a detach never answered."""
    await tools("debug_launch", program=native["looper"], adapter=adapter,
                breakpoints=[{"file": LOOPER_C, "line": IN_TICK}])
    [pid] = [pid for pid, command in descendants(os.getpid()).items() if command == native["looper"]]
    ended = await tools("debug_terminate", detach=True)
    assert "detached; the program keeps running" in ended["message"], ended
    await _keeps_running_untraced(pid)


async def test_a_program_detached_after_a_watchpoint_keeps_running(tools: Tools, native: dict[str, str],
                                                                    adapter: str, anyio_backend: str) -> None:
    """lldb 22 detached it with its debug registers armed: it died of SIGTRAP at its next write to the variable."""
    await tools("debug_launch", program=native["looper"], adapter=adapter,
                breakpoints=[{"file": LOOPER_C, "line": IN_TICK}])
    [pid] = [pid for pid, command in descendants(os.getpid()).items() if command == native["looper"]]
    await tools("debug_watch", expression="ticks")
    await tools("debug_continue")
    ended = await tools("debug_terminate", detach=True)
    assert "detached; the program keeps running" in ended["message"], ended
    await _keeps_running_untraced(pid)


async def test_a_call_past_half_a_second_returns(tools: Tools, native: dict[str, str]) -> None:
    """lldb-dap evaluates with the API's default timeout, 0.5 s: a sleep(1) was interrupted, the error blaming
    "breakpoint 1.1", which the call never hit."""
    await tools("debug_launch", program=native["calls"], adapter="lldb-dap",
                breakpoints=[{"file": CALLS_C, "line": BETWEEN_ROUNDS}])
    assert (await tools("debug_evaluate", expression="slow_call(1)"))["value"] == "0"
    assert (await tools("debug_evaluate", expression="rounds"))["value"] == "0"
    await tools("debug_terminate")


async def test_an_endless_call_ends_at_the_deadline_and_the_stop_and_the_program_live_on(
        tools: Tools, native: dict[str, str], adapter: str, monkeypatch: pytest.MonkeyPatch,
        anyio_backend: str) -> None:
    """gdb answered nothing while the call ran, so every later call failed ("gdb is unresponsive"), and a detach
    ended gdb, and the program with it; lldb-dap's error named a breakpoint the call never hit."""
    monkeypatch.setattr(timeouts, "INSPECT_S", 3.0)
    await tools("debug_launch", program=native["calls"], adapter=adapter,
                breakpoints=[{"file": CALLS_C, "line": BETWEEN_ROUNDS}])
    [pid] = [pid for pid, command in descendants(os.getpid()).items() if command == native["calls"]]
    text = await tools.error("debug_evaluate", expression="endless_call()")
    assert "the call did not return within 3 s" in text and "breakpoint" not in text, text
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert (frames[0]["function"], frames[0]["line"]) == ("main", BETWEEN_ROUNDS), frames
    assert (await tools("debug_evaluate", expression="rounds"))["value"] == "0"
    stepped = await tools("debug_step")
    assert stepped["location"]["line"] == BETWEEN_ROUNDS + 1, stepped
    ended = await tools("debug_terminate", detach=True)
    assert "detached; the program keeps running" in ended["message"], ended
    await _keeps_running_untraced(pid)


async def test_a_raw_gdb_command_still_running_at_the_deadline_is_interrupted(
        tools: Tools, native: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    await _stopped_under_gdb(tools, monkeypatch, native["calls"], CALLS_C, BETWEEN_ROUNDS, 3.0)
    text = await tools.error("debug_command", command="call endless_call()")
    assert "the command did not finish within 3 s" in text and "still stopped here" in text, text
    assert (await tools("debug_evaluate", expression="rounds"))["value"] == "0"
    await tools("debug_terminate")


async def test_a_detach_lets_go_of_a_program_gdb_is_still_running_a_call_in(
        tools: Tools, native: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """gdb read no detach while a call it made in the program ran on: polydbg ended gdb, and the program gdb had
    started died with it."""
    monkeypatch.setattr(GdbState, "interrupt", lambda _self: False)  # the call is left running, as it used to be
    await _stopped_under_gdb(tools, monkeypatch, native["calls"], CALLS_C, BETWEEN_ROUNDS, 2.0)
    [pid] = [pid for pid, command in descendants(os.getpid()).items() if command == native["calls"]]
    text = await tools.error("debug_evaluate", expression="endless_call()")
    assert "gdb did not answer" in text, text
    monkeypatch.undo()
    ended = await tools("debug_terminate", detach=True)
    assert "detached; the program keeps running" in ended["message"], ended
    await _keeps_running_untraced(pid)


async def test_a_program_killed_while_stopped_is_said_killed_by_sigkill(tools: Tools, native: dict[str, str],
                                                                        adapter: str, anyio_backend: str) -> None:
    """lldb read "exit -1" (its own number: lldb-server ends with the program before sending its status); gdb said
    the program had ended, not how. The kernel's word is taken (``procs.ProgramWatch``)."""
    await tools("debug_launch", program=native["looper"], adapter=adapter,
                breakpoints=[{"file": LOOPER_C, "line": IN_TICK}])
    pid = (await tools("debug_sessions"))["sessions"][0]["pid"]
    os.kill(pid, signal.SIGKILL)
    session = await tools.session_once(lambda s: s["state"] != "stopped", within_s=10)
    assert session["state"] == "exited" and session["cause"] == "killed by signal 9 (SIGKILL)", str(session)
    assert "exit_code" not in session, session  # no code made up
    await tools("debug_terminate")


async def test_core_file_shows_stack_and_variables(tools: Tools, native: dict[str, str], core_dump: str) -> None:
    report = await tools("debug_launch", program=native["looper"], core=core_dump, adapter="lldb-dap")
    assert report["state"] == "stopped"
    assert report["reason"] == "core"
    assert os.path.basename(core_dump) in report["description"]
    stack = await tools("debug_stack")
    frames = stack["threads"][0]["frames"]
    main = next(f for f in frames if f["function"] == "main")
    assert main["file"] == LOOPER_C
    local = values((await tools("debug_variables", frame_id=main["index"]))["variables"])
    assert int(local["n"]) >= 0
    assert int(local["total"]) == int(local["n"]) * (int(local["n"]) - 1) or int(local["total"]) == int(
        local["n"]) * (int(local["n"]) + 1)  # total of tick(k) = 2k over the calls so far
    assert local["pause"] == "{tv_sec:0, tv_nsec:1000000}"
    refused = await tools.error("debug_continue")
    assert "core" in refused  # a core cannot run
    await tools("debug_terminate")


async def test_attach_to_gdbserver(tools: Tools, native: dict[str, str],
                                   gdbserver: tuple[subprocess.Popen[bytes], int]) -> None:
    server, port = gdbserver
    report = await tools("debug_attach", host="127.0.0.1", port=port, program=native["basics"], language="c",
                         adapter="lldb-dap", breakpoints=[{"file": BASICS_C, "line": IN_ADD}])
    assert report["state"] == "stopped"
    assert report["reason"] == "breakpoint"
    assert report["location"]["function"] == "add"
    assert values(report["locals"])["a"] == "0"
    await tools("debug_terminate")
    assert server.wait(timeout=10) is not None  # the debuggee was killed, so gdbserver --once ended


# -- C++ ---------------------------------------------------------------------------------------------

async def test_cpp_stl_containers_read_as_values(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["containers"],
                         breakpoints=[{"file": CONTAINERS_CPP, "line": AFTER_CONTAINERS}])
    assert report["state"] == "stopped"
    local = by_name(report["locals"])
    assert local["numbers"]["value"] == "{10, 20, 30}"
    assert local["ages"]["value"] == '{"alice": 31, "bob": 27}'
    assert local["name"]["value"] == '"polydbg"'
    assert local["sum"]["value"] == "60"
    items = await tools("debug_variables", ref=local["numbers"]["ref"])
    assert values(items["variables"]) == {"[0]": "10", "[1]": "20", "[2]": "30"}
    assert items["total"] == 3
    entries = await tools("debug_variables", ref=local["ages"]["ref"])
    assert [v["value"] for v in entries["variables"]] == ['{first:"alice", second:31}', '{first:"bob", second:27}']
    assert (await tools("debug_evaluate", expression="numbers"))["value"] == "{10, 20, 30}"
    assert (await tools("debug_evaluate", expression="numbers[1]"))["value"] == "20"
    error = await tools.error("debug_evaluate", expression="ages.at(5)")  # clang's notes spell every template
    assert "no matching member function for call to 'at'" in error and len(error) < 400, error
    assert "Ran expression as" not in error and "| " not in error and "std::char_traits" not in error, error
    await tools("debug_terminate")


async def test_cpp_uncaught_exception_stops_at_the_throw(tools: Tools, native: dict[str, str]) -> None:
    report = await tools("debug_launch", program=native["throws"])
    assert report["state"] == "stopped"
    assert report["reason"] == "exception"
    assert report["exception"] == {"type": "std::invalid_argument", "message": "age must not be negative"}
    assert report["location"] == {"file": str(NATIVE / "cpp" / "throws.cpp"), "line": THROWS,
                                  "function": "parse_age(int)"}
    assert values(report["locals"]) == {"raw": "-1"}
    await tools("debug_terminate")


async def test_an_exception_gdb_stops_at_as_caught_says_its_type_and_message(
        tools: Tools, native: dict[str, str]) -> None:
    """At a catch gdb's $_exception was printed raw, its type said only as "C++ exception"."""
    require("gdb")
    await tools("debug_launch", program=native["own_exceptions"], adapter="gdb", args=["c"], stop_on_entry=True,
                break_on_exception="none")
    await tools("debug_break", exception=["catch"])
    caught = await tools("debug_continue")
    assert caught["reason"] == "exception", caught
    assert caught["exception"] == {"type": "ConfigError", "message": "port out of range"}
    await tools("debug_terminate")


# -- Rust ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("adapter", ["lldb-dap", "gdb"])
@pytest.mark.parametrize(("which", "marker", "exception"), [
    ("a", "// throws AppError", {"type": "AppError", "message": "bad config value"}),  # its own what()'s string
    ("c", "// throws ConfigError", {"type": "ConfigError", "message": "port out of range"}),  # runtime_error's
    ("p", "// throws Plain", {"type": "Plain", "message": "code = 7"}),  # no string: its fields
    ("b", "// throws Bare", {"type": "Bare", "message": "(its fields: its type is not in the program's debug info)"}),
    ("i", "// throws an int", {"type": "int", "message": "42"}),
])
async def test_a_thrown_object_of_the_programs_own_class_says_what_it_holds(
        tools: Tools, native: dict[str, str], which: str, marker: str, exception: dict[str, str], adapter: str,
        anyio_backend: str) -> None:
    """gdb printed gdb's $_exception raw, without the type ("C++ exception: {<std::exception> = …, msg = …}");
    a plain struct read as an empty message on both."""
    if adapter == "gdb":
        require("gdb")
    thrown = await tools("debug_launch", program=native["own_exceptions"], adapter=adapter, args=[which],
                         break_on_exception="raised")
    assert thrown["reason"] == "exception"
    assert thrown["location"]["line"] == line_of("native/cpp/own_exceptions.cpp", marker), thrown
    assert thrown["exception"] == exception
    await tools("debug_terminate")


async def test_rust_values_read_as_rust(tools: Tools, rust_binary: str) -> None:
    report = await tools("debug_launch", program=rust_binary,
                         breakpoints=[{"file": MAIN_RS, "line": VALUES_READY}])
    assert report["state"] == "stopped"
    assert report["location"]["function"] == "rustdemo::main"  # no symbol hash
    local = by_name(report["locals"])
    assert local["greeting"]["value"] == '"hello"'
    assert local["greeting"]["type"] == "String"
    assert local["numbers"]["value"] == "[1, 2, 3]"
    assert local["numbers"]["type"] == "Vec<i32>"
    assert local["maybe"]["value"] == "Some(42)"
    assert local["nothing"]["value"] == "None"
    assert local["scores"]["value"] == '{"alice": 10}'
    assert local["scores"]["type"] == "HashMap<String, i32>"
    assert local["shapes"]["value"] == "[Circle{radius:1.5}, Square(4)]"
    items = await tools("debug_variables", ref=local["numbers"]["ref"])
    assert values(items["variables"]) == {"[0]": "1", "[1]": "2", "[2]": "3"}
    assert (await tools("debug_evaluate", expression="numbers[2]"))["value"] == "3"
    # step into goes to the program's function, not into Vec's Deref in the standard library
    inside = await tools("debug_step", kind="into")
    assert inside["location"] == {"file": MAIN_RS, "line": AREA_LOOP, "function": "rustdemo::describe"}
    assert by_name(inside["locals"])["shapes"]["type"] == "&[rustdemo::Shape]"
    await tools("debug_terminate")


async def test_rust_panic_stops_where_it_panicked(tools: Tools, rust_binary: str, adapter: str,
                                                  anyio_backend: str) -> None:
    report = await tools("debug_launch", program=rust_binary, args=["divide-by-zero"], adapter=adapter)
    assert report["state"] == "stopped", report
    assert report["reason"] == "exception"
    assert "panicked at src/main.rs" in report["description"]
    assert "division by zero: 10 / 0" in report["description"]
    assert report["exception"]["type"] == "panic"
    assert report["location"] == {"file": MAIN_RS, "line": PANICS, "function": "rustdemo::checked_divide"}
    assert values(report["locals"]) == {"a": "10", "b": "0"}
    stack = await tools("debug_stack")
    functions = [f["function"] for f in stack["threads"][0]["frames"]]
    assert functions[:2] == ["rustdemo::checked_divide", "rustdemo::main"]
    end = await tools("debug_continue")
    assert end["state"] == "exited"
    assert end["exit_code"] == 101
    await tools("debug_terminate")


async def test_maps_of_unique_ptr_read_without_killing_lldb(tools: Tools, native: dict[str, str]) -> None:
    """lldb 22's own unique_ptr formatter crashes the adapter on a map of unique_ptrs built by GCC; polydbg's
    formatter reads them: the report, expanding the map, the pointer and the object it owns."""
    source = str(NATIVE / "cpp" / "owners.cpp")
    report = await tools("debug_launch", program=native["owners"],
                         breakpoints=[{"file": source, "line": line_of("native/cpp/owners.cpp", "// after owners")}])
    assert report["state"] == "stopped", report
    shown = {v["name"]: v for v in report["locals"]}
    assert shown["widgets"]["value"].startswith('{"one": Widget @ 0x'), shown["widgets"]
    assert shown["by_id"]["value"].startswith("{7: Widget @ 0x"), shown["by_id"]
    assert shown["empty"]["value"] == "nullptr"
    entry = (await tools("debug_variables", ref=shown["widgets"]["ref"]))["variables"][0]
    pair = {v["name"]: v for v in (await tools("debug_variables", ref=entry["ref"]))["variables"]}
    owned = {v["name"]: v["value"] for v in (await tools("debug_variables", ref=pair["second"]["ref"]))["variables"]}
    assert owned.get("id") == "1" and owned.get("label") == '"first"', owned
    assert (await tools("debug_evaluate", expression="widgets.size()"))["value"] == "1"
    sessions = await tools("debug_sessions")
    assert sessions["sessions"][0]["state"] == "stopped"
    assert "unable to be parsed" not in (await tools.text("debug_output"))
    await tools("debug_terminate")


async def test_rust_references_to_enums_and_strs_read_as_rust(tools: Tools, rust_binary: str) -> None:
    report = await tools("debug_launch", program=rust_binary,
                         breakpoints=[{"file": MAIN_RS, "line": line_of("rust/src/main.rs", "// in walk")}])
    local = by_name(report["locals"])
    for name in ("head", "cur"):  # no enum layout internals, whichever way the formatters read it
        assert "$variants$" not in local[name]["value"] and "$discr$" not in local[name]["value"], local[name]
    assert local["label"]["value"].endswith('"list"'), local["label"]  # a &&str, not a list of chars
    # node is a &Box<Node>: two pointers to lldb's C++ parser, which does not take `.` through them
    assert (await tools("debug_evaluate", expression="node.value"))["value"] == "1"
    following = await tools("debug_evaluate", expression="node.next")
    assert following["value"].startswith("Some(") and following["type"] == "Option<Box<rustdemo::Node>>", following
    error = await tools.error("debug_evaluate", expression="node.next.is_some()")
    assert "(**node).next" in error and "Objective C++" not in error, error
    await tools("debug_terminate")


async def test_stdin_feeds_a_native_program(tools: Tools, native: dict[str, str], adapter: str,
                                            anyio_backend: str) -> None:
    done = await tools("debug_launch", program=native["echo_input"], adapter=adapter, stdin="one\ntwo words\n")
    assert done["state"] == "exited", done
    text = (await tools("debug_output"))["text"]
    assert "got: one" in text and "got: two words" in text and "lines: 2" in text, text
    await tools("debug_terminate")


async def test_a_hit_condition_lldb_cannot_count_is_counted_for_it(tools: Tools, native: dict[str, str]) -> None:
    start = line_of("native/c/basics.c", "int sum = 0;")
    report = await tools("debug_launch", program=native["basics"], adapter="lldb-dap",
                         breakpoints=[{"file": BASICS_C, "line": start},
                                      {"file": BASICS_C, "line": LOOP_BODY, "hit_condition": "== 3"}])
    assert report["location"]["line"] == start
    stepped = await tools("debug_step", kind="over")
    while stepped["location"]["line"] != LOOP_BODY:  # a step that ends on the counted breakpoint is the step's
        stepped = await tools("debug_step", kind="over")
    assert stepped["state"] == "stopped" and by_name(stepped["locals"])["i"]["value"] == "0"
    counted = await tools("debug_continue")
    assert counted["location"]["line"] == LOOP_BODY
    assert by_name(counted["locals"])["i"]["value"] == "2"  # the 3rd hit, the step's arrival counted as the 1st
    done = await tools("debug_continue")  # and never again
    assert done["state"] == "exited", done
    await tools("debug_terminate")


async def test_a_step_out_reports_what_the_call_returned(tools: Tools, native: dict[str, str], adapter: str,
                                                         anyio_backend: str) -> None:
    """gdb's finish record carries the value (and its $N), lldb-dap lists it among the caller's locals: the report
    says it apart from the locals, a struct summarised like any value, a recursive call's from its own level."""
    source = str(NATIVE / "cpp" / "returns.cpp")
    report = await tools("debug_launch", program=native["returns"], adapter=adapter,
                         breakpoints=[{"file": source, "line": line_of("native/cpp/returns.cpp", "// add returns")}])
    out = await tools("debug_step", kind="out")
    assert out["location"]["line"] == line_of("native/cpp/returns.cpp", "// first call"), out
    assert out["returned"] == ["add() returned 6"], out
    assert not [v for v in out["locals"] or [] if "return" in v["name"].lower()], out
    await tools("debug_clear", all=True)
    point = line_of("native/cpp/returns.cpp", "// make_point returns")
    base = line_of("native/cpp/returns.cpp", "// factorial base")
    await tools("debug_break", file=source, line=point)
    report = await tools("debug_continue")
    assert report["location"]["line"] == point, report
    made = await tools("debug_step", kind="out")
    [line] = made["returned"]
    assert line.startswith("make_point() returned ") and "18" in line and "19" in line, made
    await tools("debug_break", file=source, line=base)
    report = await tools("debug_continue")
    assert report["location"]["line"] == base, report
    up = await tools("debug_step", kind="out")
    assert up["location"]["function"].startswith("factorial") and up["returned"] == ["factorial() returned 1"], up
    again = await tools("debug_step", kind="out")
    assert again["returned"] == ["factorial() returned 2"], again
    await tools("debug_terminate")
