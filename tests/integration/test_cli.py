"""The command line: doctor lists the debuggers and the policy serve would start with, demo debugs the
bundled program through a real server."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from polydbg.demo.run import run_demo


def test_doctor_reports_debugpy_found() -> None:
    done = subprocess.run([sys.executable, "-m", "polydbg", "doctor"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    line = next(line for line in done.stdout.splitlines() if "debugpy" in line)
    assert line.startswith("found") and "1.8.22" in line
    assert "test runners for " in done.stdout and "python  pytest " in done.stdout  # run in this project
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


def test_doctor_shows_the_policy_serve_would_start_with_given_the_same_flags(tmp_path: Path) -> None:
    project, shared = tmp_path / "project", tmp_path / "shared"
    project.mkdir()
    shared.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("POLYDBG_")} | {
        "XDG_CONFIG_HOME": str(tmp_path / "config")}
    done = subprocess.run([sys.executable, "-m", "polydbg", "doctor", "--root", str(shared)], cwd=project, env=env,
                          capture_output=True, text=True, timeout=60)
    roots = f"roots: {project}, {shared} (--root, with the directory polydbg was started in; --no-default-root"
    assert done.stdout.count(roots) == 2, done.stdout  # stdio and HTTP: the start directory stays a root
    done = subprocess.run([sys.executable, "-m", "polydbg", "doctor", "--root", str(shared), "--no-default-root"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.stdout.count(f"roots: {shared} (--root with --no-default-root") == 2, done.stdout
