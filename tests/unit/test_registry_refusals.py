"""Programs polydbg cannot debug are refused with what to do instead (issue 7.12, 7.14)."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest

from polydbg.backends.registry import check_launchable, infer_language
from polydbg.errors import UsageError

ELF = b"\x7fELF" + b"\0" * 60


def _file(path: Path, data: bytes, executable: bool = True) -> str:
    path.write_bytes(data)
    path.chmod(0o755 if executable else 0o644)
    return str(path)


@pytest.mark.parametrize(("name", "language"), [("app.js", "JavaScript"), ("Main.java", "Java"),
                                                ("tool.rb", "Ruby"), ("index.ts", "TypeScript")])
def test_a_script_of_a_language_without_a_backend_is_named(tmp_path: Path, name: str, language: str) -> None:
    path = _file(tmp_path / name, b"print('x')\n")
    with pytest.raises(UsageError, match=f"is a {language} program, and polydbg has no {language} debugger yet"):
        infer_language(path, None, None)


def test_an_interpreter_passed_as_the_program_is_refused_with_what_to_pass(tmp_path: Path) -> None:
    python = os.path.realpath(sys.executable)
    with pytest.raises(UsageError, match=r"is the python interpreter.*script.*python="):
        infer_language(python, None, None)
    java = tmp_path / "java"
    _file(java, ELF)
    with pytest.raises(UsageError, match="is the java interpreter, not a program"):
        infer_language(str(java), None, "c")


def test_a_native_language_asked_of_a_script_is_refused(tmp_path: Path) -> None:
    script = _file(tmp_path / "run_me", b"#!/bin/sh\necho 1\n")
    with pytest.raises(UsageError, match="not a native executable, so it cannot be debugged as c"):
        infer_language(script, None, "c")
    binary = _file(tmp_path / "app", ELF)
    with pytest.raises(UsageError, match="native executable, not a Python script"):
        infer_language(binary, None, "python")


def test_a_fifo_is_never_opened_for_sniffing(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(UsageError, match="cannot tell the language"):
        infer_language(str(fifo), None, None)  # returns at once: nothing is opened


def test_a_native_executable_without_the_execute_bit_is_refused(tmp_path: Path) -> None:
    binary = shutil.copy(sys.executable, tmp_path / "prog")
    os.chmod(binary, 0o644)
    with pytest.raises(UsageError, match=r"not executable.*chmod \+x"):
        check_launchable(str(binary))
    os.chmod(binary, 0o755)
    check_launchable(str(binary))
