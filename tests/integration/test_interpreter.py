"""The debuggee's interpreter: explicit, a nearby virtualenv, or polydbg's own — none needs debugpy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import Tools

WHOAMI = "import sys\nprint('prefix=' + sys.prefix)\nprint('path=' + repr(sys.path))\n"


def _bare_venv(path: Path) -> Path:
    """A virtualenv with no packages at all (so certainly no debugpy)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


async def _prefix_of_run(tools: Tools, **launch: object) -> str:
    report = await tools("debug_launch", **launch)
    assert report["state"] == "exited", report
    assert report["exit_code"] == 0
    out = await tools("debug_output")
    await tools("debug_terminate")
    return str(out["text"])


async def test_explicit_interpreter_without_debugpy(tools: Tools, tmp_path: Path) -> None:
    python = _bare_venv(tmp_path / "env")
    script = tmp_path / "whoami.py"
    script.write_text(WHOAMI)
    text = await _prefix_of_run(tools, program=str(script), python=str(python))
    assert f"prefix={tmp_path / 'env'}" in text
    # polydbg's own packages (debugpy's directory) are not on the program's import path
    path_line = next(line for line in text.splitlines() if line.startswith("path="))
    assert sys.prefix not in path_line, path_line


async def test_nearby_dot_venv_is_used(tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    _bare_venv(project / ".venv")
    script = project / "src" / "whoami.py"
    script.write_text(WHOAMI)
    text = await _prefix_of_run(tools, program=str(script))
    assert f"prefix={project / '.venv'}" in text


async def test_missing_interpreter_is_a_clear_error(tools: Tools, tmp_path: Path) -> None:
    script = tmp_path / "whoami.py"
    script.write_text(WHOAMI)
    error = await tools.error("debug_launch", program=str(script), python=str(tmp_path / "nope" / "python"))
    assert "does not exist" in error and "python" in error
