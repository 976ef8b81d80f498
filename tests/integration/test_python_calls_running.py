"""Call traces of a Python program that runs, through the MCP tools (tests/programs/calls/serves.py, a server whose
acceptor thread waits in ``accept()``, C code no pause stops): ``debug_trace(functions=…)`` begun while it runs
records without a stop the agent sees and leaves no thread paused, the acceptor included; ``max_hits`` ends it exactly
while the program runs on; an attached program (through its debugpy listener) records too, while it runs and at a
stop."""

from __future__ import annotations

import asyncio
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools
from tests.integration.test_attach_paths import _free_port, _program

pytestmark = pytest.mark.anyio

SERVES = str(PROGRAMS / "calls" / "serves.py")


def _numbers(rows: list[str]) -> list[int]:
    """The request numbers ``handle``'s rows were called with (b'reqN')."""
    return [int(found.group(1)) for row in rows if (found := re.match(r"handle\(request=b'req(\d+)'\)", row))]


async def _traced_running(tools: Tools, functions: list[str], max_hits: int) -> dict[str, Any]:
    traced = await tools("debug_trace", functions=functions, max_hits=max_hits, timeout_s=60)
    assert traced["stopped_because"] == "max_hits" and traced["state"] == "running", traced
    assert traced["total_hits"] == max_hits and traced["calls"]["calls"] == max_hits, traced
    assert traced.get("report") is None, traced  # no stop shown
    return traced["calls"]


def _monitored_python() -> str:
    """A Python 3.12 or later, where pydevd traces through sys.monitoring (on PATH, or one pyenv installed; not on
    every machine: the default interpreter's runs cover the recorder itself), as itself, not a version manager's shim
    script."""
    names = [shutil.which(name) for name in ("python3.12", "python3.13", "python3.14")]
    installed = sorted(str(path) for path in (Path.home() / ".pyenv" / "versions").glob("3.1[2-9]*/bin/python"))
    for candidate in [name for name in names if name] + installed:
        ran = subprocess.run([candidate, "-c", "import sys; print(sys.executable if sys.version_info >= (3, 12) "
                              "else '')"], capture_output=True, text=True, timeout=60, check=False)
        if ran.returncode == 0 and ran.stdout.strip():
            return ran.stdout.strip()
    pytest.skip("no Python 3.12 or later found (on PATH or installed by pyenv)")


@pytest.mark.parametrize("interpreter", ["default", "3.12+"])
async def test_a_running_server_is_traced_without_a_stop_its_thread_blocked_in_accept_included(
        tools: Tools, interpreter: str) -> None:
    """Twice (on 3.12, pydevd suspended the recorder's thread started again for the second trace)."""
    python = {"python": _monitored_python()} if interpreter == "3.12+" else {}
    report = await tools("debug_launch", program=SERVES, timeout_s=1, **python)
    assert report["state"] == "running", report
    last = -1
    for _ in range(2):  # the second starts the recorder's thread again
        calls = await _traced_running(tools, ["handle", "ask"], 7)  # ended exactly, while the program runs
        handled = [row for row in calls["rows"] if row.startswith("handle(")]
        assert handled and all("[acceptor]" in row and "← serve (" in row for row in handled), calls
        asked = [row for row in calls["rows"] if row.startswith("ask(")]
        assert asked and all("[client]" in row for row in asked), calls
        numbers = _numbers(handled)
        assert numbers == sorted(numbers) and numbers[0] > last, calls  # the server ran on between the traces
        last = numbers[-1]
    paused = await tools("debug_pause")  # the agent's own pause: the first stop it sees
    assert paused["state"] == "stopped" and paused["reason"] == "pause", paused
    calls = (await tools("debug_trace", functions=["handle"], max_hits=2, timeout_s=60))["calls"]
    assert calls["calls"] == 2 and _numbers(calls["rows"])[0] > last, calls  # no thread was left paused
    await tools("debug_terminate")


async def test_an_attached_program_is_traced_while_it_runs_and_at_a_stop(tools: Tools) -> None:
    port = _free_port()
    python = str(Path(sys.prefix) / "bin" / "python")
    async with _program(python, "-X", "frozen_modules=off", str(PROGRAMS / "listen_then_run.py"),
                        f"127.0.0.1:{port}", SERVES, ready=b"listening"):
        report = await tools("debug_attach", port=port, timeout_s=30)
        assert report["state"] == "running", report
        calls = await _traced_running(tools, ["handle"], 3)
        assert calls["summary"][0].startswith("handle: 3 calls; args request=b'req"), calls
        assert (await tools("debug_pause"))["state"] == "stopped"
        calls = (await tools("debug_trace", functions=["ask"], max_hits=2, timeout_s=60))["calls"]
        assert calls["calls"] == 2 and all(row.startswith("ask(port=") for row in calls["rows"]), calls
        refused = await tools.error("debug_trace", functions=["handel"])  # the recorder answers in an attached one too
        assert "no function of the program is named handel (closest: handle)" in refused, refused
        await tools("debug_terminate")


async def test_an_attached_program_whose_threads_all_wait_in_c_is_refused_and_left_running(tools: Tools) -> None:
    """No probe in an attached program: the pause stops nothing, the trace is refused saying what to do, and the
    stop pydevd makes once the program runs Python again is resumed unseen (the program handles its input)."""
    port = _free_port()
    python = str(Path(sys.prefix) / "bin" / "python")
    async with _program(python, "-X", "frozen_modules=off", str(PROGRAMS / "listen_then_run.py"),
                        f"127.0.0.1:{port}", str(PROGRAMS / "calls" / "reads_lines.py"), ready=b"listening") as program:
        assert (await tools("debug_attach", port=port, timeout_s=30))["state"] == "running"
        assert program.stdout is not None and program.stdin is not None
        while b"waiting" not in await asyncio.wait_for(program.stdout.readline(), 30):
            pass
        refused = await tools.error("debug_trace", functions=["handle"], timeout_s=30)
        assert "no thread of the program stopped within 5 s to start the call recorder" in refused, refused
        assert "debug_trace(points=…)" in refused, refused
        program.stdin.write(b"one\n")
        await program.stdin.drain()
        while b"handled ONE" not in await asyncio.wait_for(program.stdout.readline(), 30):
            pass
        (info,) = (await tools("debug_sessions"))["sessions"]
        assert info["state"] == "running", info
        await tools("debug_terminate")
