"""delve's pure helpers: where ``go build`` runs, Go-quoted strings, and which frames are the Go
runtime's. No delve runs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from polydbg.backends.delve.build import module_dir
from polydbg.backends.delve.stops import in_runtime as _in_runtime
from polydbg.backends.delve.stops import unquote as _unquote

# -- module_dir ---------------------------------------------------------------------------------------------


@pytest.fixture
def module(tmp_path: Path) -> Path:
    """tmp/mod (go.mod) with cmd/app/main.go, and tmp/mod/nested (its own go.mod) with pkg/x.go."""
    root = tmp_path / "mod"
    (root / "cmd" / "app").mkdir(parents=True)
    (root / "go.mod").write_text("module example.com/mod\n")
    (root / "cmd" / "app" / "main.go").write_text("package main\n")
    (root / "nested" / "pkg").mkdir(parents=True)
    (root / "nested" / "go.mod").write_text("module example.com/nested\n")
    (root / "nested" / "pkg" / "x.go").write_text("package pkg\n")
    return root


def test_a_package_dir_or_go_file_inside_a_module_builds_at_the_module_root(module: Path) -> None:
    assert module_dir(str(module)) == str(module)
    assert module_dir(str(module / "cmd" / "app")) == str(module)
    assert module_dir(str(module / "cmd" / "app" / "main.go")) == str(module)


def test_the_nearest_go_mod_wins(module: Path) -> None:
    assert module_dir(str(module / "nested" / "pkg" / "x.go")) == str(module / "nested")
    assert module_dir(str(module / "nested" / "pkg")) == str(module / "nested")


def test_without_a_go_mod_the_programs_own_directory(tmp_path: Path) -> None:
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "main.go").write_text("package main\n")
    (loose / "go.mod").mkdir()  # a directory named go.mod is no module file
    assert not any((Path(p) / "go.mod").is_file() for p in tmp_path.parents)  # nothing above makes it a module
    assert module_dir(str(loose / "main.go")) == str(loose)
    assert module_dir(str(loose)) == str(loose)


def test_a_relative_program_gives_an_absolute_directory(module: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(module / "cmd")
    assert module_dir(os.path.join("app", "main.go")) == str(module)
    assert module_dir("app") == str(module)


# -- _unquote ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "unquoted"), [
    ('"boom"', "boom"),
    ('""', ""),
    (r'"a \"q\" b"', 'a "q" b'),  # escapes are decoded
    (r'"line\nbreak\ttab"', "line\nbreak\ttab"),
    (r'"caf\u00e9"', "café"),
    ('"5"', "5"),  # a quoted number stays text
])
def test_unquote_decodes_a_quoted_string(text: str, unquoted: str) -> None:
    assert _unquote(text) == unquoted


@pytest.mark.parametrize("text", ["plain", "42", '"', '"unterminated', 'ends with a quote"', "", "'single'"])
def test_unquote_leaves_anything_else_unchanged(text: str) -> None:
    assert _unquote(text) == text


def test_unquote_strips_the_quotes_of_a_string_json_cannot_decode() -> None:
    assert _unquote(r'"Go only \x41 escape"') == r"Go only \x41 escape"


# -- _in_runtime -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("frame", [
    {"name": "runtime.gopanic"},
    {"name": "runtime.main", "source": {"path": "/usr/lib/go/src/runtime/proc.go"}},
    {"name": "gogo", "source": {"path": "/usr/lib/go-1.19/src/runtime/asm_amd64.s"}},  # runtime assembly
    {"name": "main.helper", "presentationHint": "subtle"},  # delve says so
])
def test_runtime_frames(frame: dict[str, Any]) -> None:
    assert _in_runtime(frame)


@pytest.mark.parametrize("frame", [
    {"name": "main.main", "source": {"path": "/home/u/app/main.go"}},
    {"name": "fmt.Println", "source": {"path": "/usr/lib/go/src/fmt/print.go"}},
    {"name": "main.run", "source": {"path": "/home/u/src/runtime/x.go"}},  # a user package called runtime
    {"name": "myruntime.f"},
    {"name": "gogo"},  # no source to tell
    {"name": "runtime", "source": None},
    {"name": "x", "presentationHint": "normal"},
    {},
])
def test_user_and_library_frames(frame: dict[str, Any]) -> None:
    assert not _in_runtime(frame)
