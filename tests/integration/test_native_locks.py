"""Native threads and mutexes through the MCP tools, on gdb and lldb-dap: the pthread mutex each blocked thread
waits for and its owner (glibc's, mapped to the debugger's thread id), what the owners hold, the deadlock cycle
in the all-threads stack and in a pause's report (each thread at its own source line), std::mutex through it,
a Rust Mutex (no owner recorded), every thread listed at the first stop (lldb-dap's first answer was the main
thread alone), and another thread's frames read and evaluated in.

Programs: tests/programs/native/locks/deadlock.{c,cpp,rs}, built once per run (-g -O0).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

LOCKS = PROGRAMS / "native" / "locks"
C_SOURCE, CPP_SOURCE, RUST_SOURCE = (str(LOCKS / f"deadlock.{ext}") for ext in ("c", "cpp", "rs"))
LLDB = "lldb-dap-22|lldb-dap|lldb-vscode"
NAME = r"\([^()]*\)"  # a thread's name, as the debugger gives it (the program's)


BOTH = pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
# anyio's plugin drops the callspec of coroutine tests that do not ask for anyio_backend (test_conformance.py)
pytestmark = pytest.mark.usefixtures("anyio_backend")


@pytest.fixture(scope="session")
def built(build_dir: Path) -> dict[str, str]:
    """deadlock.c and deadlock.cpp, built once (gcc/g++ -g -O0 -pthread)."""
    require("gcc", "g++")
    out = build_dir / "locks"
    out.mkdir(exist_ok=True)
    for compiler, source, name in (("gcc", C_SOURCE, "c"), ("g++", CPP_SOURCE, "cpp")):
        subprocess.run([compiler, "-g", "-O0", "-pthread", "-o", str(out / name), source], check=True,
                       capture_output=True, timeout=120)
    return {"c": str(out / "c"), "cpp": str(out / "cpp")}


@pytest.fixture(scope="session")
def rust_deadlock(build_dir: Path) -> str:
    rustc = shutil.which("rustc") or next(
        (str(p) for p in [Path.home() / ".cargo" / "bin" / "rustc"] if p.exists()), None)
    if rustc is None:
        require("rustc")
    assert rustc is not None
    target = build_dir / "deadlock-rs"
    subprocess.run([rustc, "-g", "-C", "opt-level=0", "-o", str(target), RUST_SOURCE], check=True,
                   capture_output=True, timeout=300, env={**os.environ, "PATH": os.path.dirname(rustc) + os.pathsep
                                                          + os.environ.get("PATH", "")})
    return str(target)


def threads_by_function(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each listed thread by the first of the program's functions in its frames."""
    found: dict[str, dict[str, Any]] = {}
    for thread in stack["threads"]:
        for frame in thread["frames"]:
            name = frame["function"].split("::")[-1].removesuffix("()")
            if name in ("left", "right", "auditor", "main"):
                found.setdefault(name, thread)
                break
    return found


async def stopped_when_stuck(tools: Tools, program: str, source: str, marker: str, adapter: str,
                             **launch: Any) -> dict[str, Any]:
    require("gdb" if adapter == "gdb" else LLDB)
    report = await tools("debug_launch", program=program, adapter=adapter, timeout_s=60,
                         breakpoints=[{"file": source, "line": line_of(f"native/locks/{os.path.basename(source)}",
                                                                          marker)}], **launch)
    assert report["reason"] == "breakpoint", report
    return await tools("debug_stack", all_threads=True, levels=12)


def at(source: str, marker: str) -> str:
    return re.escape(f"{os.path.basename(source)}:{line_of(f'native/locks/{os.path.basename(source)}', marker)}")


@BOTH
async def test_c_deadlock_owners_and_cycle(tools: Tools, built: dict[str, str], adapter: str) -> None:
    stack = await stopped_when_stuck(tools, built["c"], C_SOURCE, "/* all stuck */", adapter, cwd=str(LOCKS))
    threads = threads_by_function(stack)
    assert set(threads) == {"main", "left", "right", "auditor"}, stack  # every thread, at the first stop
    left, right, auditor, main = (threads[n] for n in ("left", "right", "auditor", "main"))
    alpha, beta = r"mutex alpha at 0x[0-9a-f]+", r"mutex beta at 0x[0-9a-f]+"
    assert re.fullmatch(beta, left["locks"]["waits_for"]) and left["locks"]["owner"] == right["thread_id"], left
    assert re.fullmatch(alpha, right["locks"]["waits_for"]) and right["locks"]["owner"] == left["thread_id"], right
    assert [re.sub("0x[0-9a-f]+", "X", held) for held in left["locks"]["holds"]] == ["mutex alpha at X"], left
    # a mutex no symbol names is named as the waiting line passes it; main holds it
    assert re.fullmatch(r"mutex account->guard at 0x[0-9a-f]+", auditor["locks"]["waits_for"]), auditor
    assert auditor["locks"]["owner"] == main["thread_id"], auditor
    assert main["locks"]["holds"] == [auditor["locks"]["waits_for"]] and not main["locks"].get("waits_for"), main
    cycle = re.compile(
        rf"deadlock: thread {left['thread_id']} {NAME} at .*{at(C_SOURCE, 'left blocks')} holds {alpha} and "
        rf"waits for {beta}, held by thread {right['thread_id']} {NAME} at .*{at(C_SOURCE, 'right blocks')}, "
        rf"which waits for {alpha}, held by thread {left['thread_id']}$")
    assert len(stack["deadlocks"]) == 1 and cycle.match(stack["deadlocks"][0]), stack["deadlocks"]
    # another thread's frame: its locals and an expression in it, the current thread unchanged
    frame = next(f["index"] for f in auditor["frames"] if f["function"] == "auditor")
    listed = await tools("debug_variables", thread_id=auditor["thread_id"], frame_id=frame)
    assert "account" in {v["name"] for v in listed["variables"]}, listed
    value = await tools("debug_evaluate", expression="account->balance", thread_id=auditor["thread_id"],
                        frame_id=frame)
    assert value["value"] == "100", value
    # a pause of the stuck program reports the cycle
    running = await tools("debug_continue", timeout_s=0.3)
    assert running["state"] == "running", running
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause", paused
    assert len(paused["deadlocks"]) == 1 and cycle.match(paused["deadlocks"][0]), paused
    await tools("debug_terminate")


@BOTH
async def test_cpp_std_mutex_deadlock(tools: Tools, built: dict[str, str], adapter: str) -> None:
    stack = await stopped_when_stuck(tools, built["cpp"], CPP_SOURCE, "// both stuck", adapter)
    waiting = {t["locks"]["waits_for"].split()[1]: t for t in stack["threads"]
               if (t.get("locks") or {}).get("waits_for")}
    post, reconcile = waiting["journal"], waiting["ledger"]  # (the listing's few frames are the library's)
    assert post["locks"]["owner"] == reconcile["thread_id"] and reconcile["locks"]["owner"] == post["thread_id"]
    ledger, journal = r"mutex ledger at 0x[0-9a-f]+", r"mutex journal at 0x[0-9a-f]+"
    cycle = re.compile(  # each thread placed at its own line, not in the library's inline lock functions
        rf"deadlock: thread {post['thread_id']} {NAME} at .*{at(CPP_SOURCE, 'post blocks')} holds {ledger} and "
        rf"waits for {journal}, held by thread {reconcile['thread_id']} {NAME} at .*"
        rf"{at(CPP_SOURCE, 'reconcile blocks')}, which waits for {ledger}, held by thread {post['thread_id']}$")
    assert len(stack["deadlocks"]) == 1 and cycle.match(stack["deadlocks"][0]), stack["deadlocks"]
    await tools("debug_terminate")


@BOTH
async def test_rust_mutex_waits_without_a_recorded_owner(tools: Tools, rust_deadlock: str, adapter: str) -> None:
    stack = await stopped_when_stuck(tools, rust_deadlock, RUST_SOURCE, "// both stuck", adapter)
    waiting = sorted(t["locks"]["waits_for"] for t in stack["threads"] if t.get("locks"))
    assert [re.sub("0x[0-9a-f]+", "X", w) for w in waiting] == [
        "Mutex deadlock::CHECKING at X", "Mutex deadlock::SAVINGS at X"], stack
    assert all(t["locks"].get("owner") is None for t in stack["threads"] if t.get("locks"))
    assert "(owner not recorded)" in await tools.text("debug_stack", all_threads=True)
    assert not stack.get("deadlocks"), stack  # std records no owner: no cycle is claimed
    await tools("debug_terminate")
