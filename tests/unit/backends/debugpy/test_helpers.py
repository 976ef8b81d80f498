"""debugpy's pure helpers: evaluate errors cut to the exception, library paths (justMyCode), and which
interpreter runs the debuggee (explicit, a script's ``#!`` interpreter, the active virtualenv, a
``.venv``/``venv`` near the working directory or the program, else polydbg's own). Nothing runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from polydbg.backends.debugpy.python import find_python, is_library, just_my_code, python_error
from polydbg.errors import UsageError


def venv(directory: Path) -> Path:
    """A stand-in virtualenv: only ``bin/python`` (find_python looks for nothing else). A venv found
    by searching is named by its resolved path (hence the .resolve() of those expectations)."""
    python = directory / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    return python


@pytest.fixture(autouse=True)
def _no_active_venv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No VIRTUAL_ENV from the shell running the tests, and nothing above tmp_path that looks like a venv."""
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    for parent in tmp_path.resolve().parents:
        assert not (parent / ".venv" / "bin" / "python").exists() and not (parent / "venv" / "bin" / "python").exists()


def test_an_explicit_interpreter_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    explicit = venv(tmp_path / "chosen")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))
    venv(tmp_path / "active")
    venv(tmp_path / "project" / ".venv")
    assert find_python(str(explicit), str(tmp_path / "project"), None) == str(explicit)


def test_an_explicit_interpreter_may_start_with_a_tilde(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    python = venv(tmp_path / "env")
    assert find_python("~/env/bin/python", None, None) == str(python)


def test_a_missing_explicit_interpreter_is_refused_with_the_way_out(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as refused:
        find_python(str(tmp_path / "nope" / "python"), None, None)
    assert "does not exist" in str(refused.value)
    assert "omit 'python'" in str(refused.value)


def test_the_active_virtualenv_before_a_nearby_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    active = venv(tmp_path / "active")
    venv(tmp_path / "project" / ".venv")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))
    assert find_python(None, str(tmp_path / "project"), None) == str(active)


def test_an_active_virtualenv_without_python_is_passed_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "gone").mkdir()
    near = venv(tmp_path / "project" / ".venv")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "gone"))
    assert find_python(None, str(tmp_path / "project"), None) == str(near.resolve())


def test_dot_venv_before_venv_in_the_same_directory(tmp_path: Path) -> None:
    dot = venv(tmp_path / "project" / ".venv")
    venv(tmp_path / "project" / "venv")
    assert find_python(None, str(tmp_path / "project"), None) == str(dot.resolve())
    plain = tmp_path / "other"
    only = venv(plain / "venv")
    assert find_python(None, str(plain), None) == str(only.resolve())


def test_the_nearest_venv_up_from_the_working_directory(tmp_path: Path) -> None:
    outer = venv(tmp_path / "repo" / ".venv")
    deep = tmp_path / "repo" / "services" / "api" / "src"
    deep.mkdir(parents=True)
    assert find_python(None, str(deep), None) == str(outer.resolve())
    inner = venv(tmp_path / "repo" / "services" / "api" / "venv")
    assert find_python(None, str(deep), None) == str(inner.resolve())  # nearer wins, even a plain venv over a .venv


def test_the_working_directory_before_the_programs_directory(tmp_path: Path) -> None:
    from_cwd = venv(tmp_path / "work" / ".venv")
    venv(tmp_path / "tool" / ".venv")
    program = tmp_path / "tool" / "bin" / "run.py"
    program.parent.mkdir(parents=True)
    program.write_text("")
    assert find_python(None, str(tmp_path / "work"), str(program)) == str(from_cwd.resolve())


def test_the_programs_directory_and_its_parents_without_a_working_directory(tmp_path: Path) -> None:
    near_program = venv(tmp_path / "tool" / ".venv")
    program = tmp_path / "tool" / "scripts" / "run.py"
    program.parent.mkdir(parents=True)
    program.write_text("")
    assert find_python(None, None, str(program)) == str(near_program.resolve())
    empty = tmp_path / "elsewhere"
    empty.mkdir()
    assert find_python(None, str(empty), str(program)) == str(near_program.resolve())  # cwd has none: the program's


def test_a_scripts_interpreter_named_by_path_in_its_shebang(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A tool installed in an environment of its own (pipx, a venv not named venv) runs with that environment's
    Python, whatever venv is active; ``#!/usr/bin/env python3`` names none, so the usual search decides."""
    tool_python = venv(tmp_path / "pipx" / "tool")
    tool = tmp_path / "pipx" / "tool" / "bin" / "tool"
    tool.write_text(f"#!{tool_python}\nimport sys\n")
    active = venv(tmp_path / "active")
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "active"))
    assert find_python(None, str(tmp_path), str(tool)) == str(tool_python)
    assert find_python(str(active), str(tmp_path), str(tool)) == str(active)  # explicit still wins
    portable = tmp_path / "portable"
    portable.write_text("#!/usr/bin/env python3\n")
    assert find_python(None, str(tmp_path), str(portable)) == str(active)
    shell = tmp_path / "shell"
    shell.write_text("#!/bin/sh\n")
    assert find_python(None, str(tmp_path), str(shell)) == str(active)


def test_polydbgs_own_interpreter_when_nothing_else(tmp_path: Path) -> None:
    program = tmp_path / "run.py"
    program.write_text("")
    assert find_python(None, str(tmp_path), str(program)) == sys.executable
    assert find_python(None, None, None) == sys.executable


# -- python_error: pydevd's evaluate tracebacks cut to the exception ------------------------------------

PYDEVD = "/venv/lib/python3.11/site-packages/debugpy/_vendored/pydevd/_pydevd_bundle/pydevd_vars.py"


def test_a_syntax_error_keeps_the_exception_and_the_caret() -> None:
    text = (f'Traceback (most recent call last):\n  File "{PYDEVD}", line 406, in new_func\n'
            "    return _run_with_unblock_threads(original_func)\n"
            '  File "<string>", line 1\n    items +* )\n             ^\nSyntaxError: unmatched \')\'\n')
    assert python_error(text) == "SyntaxError: unmatched ')'\nitems +* )\n         ^"


def test_an_error_in_the_expression_itself_is_one_line() -> None:
    text = ('Traceback (most recent call last):\n  File "<string>", line 1, in <module>\n'
            "NameError: name 'nope' is not defined\n")
    assert python_error(text) == "NameError: name 'nope' is not defined"


def test_an_error_raised_in_user_code_says_where() -> None:
    text = (f'Traceback (most recent call last):\n  File "{PYDEVD}", line 1, in evaluate\n    x\n'
            '  File "<string>", line 1, in <module>\n  File "/app/basic.py", line 5, in add\n'
            "    total = a + b\nTypeError: unsupported operand type(s) for +: 'NoneType' and 'int'\n")
    assert python_error(text) == ("TypeError: unsupported operand type(s) for +: 'NoneType' and 'int' "
                                  "(raised at /app/basic.py:5 in add)")


def test_a_message_without_a_traceback_is_kept() -> None:
    assert python_error("Unable to find thread to evaluate variable reference.") == \
        "Unable to find thread to evaluate variable reference."


# -- justMyCode: off when a breakpoint is in library code ---------------------------------------------------

@pytest.mark.parametrize(("path", "library"), [
    ("/p/.venv/lib/python3.11/site-packages/flask/app.py", True),
    ("/usr/lib/python3/dist-packages/yaml/__init__.py", True),
    ("/root/.pyenv/versions/3.11.7/lib/python3.11/json/__init__.py", True),
    ("/work/project/app.py", False),
    ("/work/project/lib/python_helpers.py", False),
])
def test_library_code_is_told_by_its_path(path: str, library: bool) -> None:
    assert is_library(path) is library
    assert just_my_code((path, "/work/project/main.py")) is not library
