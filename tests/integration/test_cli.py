"""The command line: doctor lists the debuggers, demo debugs the bundled program through a real server."""

from __future__ import annotations

import io
import subprocess
import sys

from polydbg.demo.run import run_demo


def test_doctor_reports_debugpy_found() -> None:
    done = subprocess.run([sys.executable, "-m", "polydbg", "doctor"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "debugpy" in line)
    assert line.startswith("found") and "1.8.22" in line
    for missing in (line for line in done.stdout.splitlines() if line.startswith("MISSING")):
        assert "install:" in missing  # every missing debugger comes with its install line


async def test_demo_finds_the_bug_through_the_real_server() -> None:
    out = io.StringIO()
    assert await run_demo(out) == 0, out.getvalue()
    transcript = out.getvalue()
    assert "stopped (breakpoint)" in transcript and "in average_by_customer" in transcript
    assert "counts[name] (int) = 2" in transcript
    assert "total / counts[name] (float) = 90.0" in transcript
    assert "exited with code 0" in transcript
    assert "the fix is total / counts[name]" in transcript
