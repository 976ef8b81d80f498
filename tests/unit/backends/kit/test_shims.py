"""Code run in another process is a real file under a backend's ``shims/``, sent without its docstring."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from polydbg.backends.kit import shims

BACKENDS = Path(shims.__file__).parents[1]


def backend_module(tmp_path: Path, name: str, text: str) -> str:
    """A backend package in ``tmp_path`` with the shim ``name``; the path of its backend module."""
    (tmp_path / "shims").mkdir()
    (tmp_path / "shims" / name).write_text(text, encoding="utf-8")
    return str(tmp_path / "backend.py")


def test_path_is_the_shims_folder_beside_the_module() -> None:
    assert shims.path("/x/backends/gdb/backend.py", "gdb_init.py") == Path("/x/backends/gdb/shims/gdb_init.py")


def test_source_strips_the_module_docstring_and_the_blank_lines_after_it(tmp_path: Path) -> None:
    module = backend_module(tmp_path, "hook.py", '"""What this hook does,\n\nover two paragraphs."""\n\n\n'
                                                 'import sys\nprint("""not a docstring""")\n')
    assert shims.source(module, "hook.py") == 'import sys\nprint("""not a docstring""")\n'


def test_source_without_a_docstring_is_the_file(tmp_path: Path) -> None:
    text = "# a comment\nx = 'a string, but an assignment'\n"
    assert shims.source(backend_module(tmp_path, "plain.py", text), "plain.py") == text


def test_source_keeps_a_first_expression_that_is_not_a_string(tmp_path: Path) -> None:
    text = "print('hello')\n"
    assert shims.source(backend_module(tmp_path, "call.py", text), "call.py") == text


@pytest.mark.parametrize("shim", sorted(str(p.relative_to(BACKENDS)) for p in BACKENDS.glob("*/shims/*.py")))
def test_every_python_shim_is_sent_as_valid_code_without_its_docstring(shim: str) -> None:
    package, _, name = shim.split("/")
    sent = shims.source(str(BACKENDS / package / "backend.py"), name)
    tree = ast.parse(sent)
    assert ast.get_docstring(tree) is None
    assert (BACKENDS / package / "shims" / name).read_text(encoding="utf-8").endswith(sent)
