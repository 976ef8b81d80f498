"""The launch that builds a C, C++ or Rust source file given as the program (buildhint.py): spelt for that file,
a Rust file's executable found from its cargo package."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends import buildhint, registry
from polydbg.errors import UsageError


def test_a_c_or_cpp_file_is_compiled_alone_next_to_itself(tmp_path: Path) -> None:
    source = tmp_path / "my app.c"
    assert buildhint.launch_hint(str(source), "c") == (
        f"program={str(tmp_path / 'my app')!r}, build=\"gcc -g -O0 -o 'my app' 'my app.c'\", cwd={str(tmp_path)!r}")
    assert "build='g++ -g -O0 -o shapes shapes.cpp'" in buildhint.launch_hint(str(tmp_path / "shapes.cpp"), "cpp")


def _package(root: Path, manifest: str) -> Path:
    (root / "src" / "bin").mkdir(parents=True)
    (root / "Cargo.toml").write_text(manifest)
    return root


def test_a_rust_file_is_built_by_cargo_and_its_binary_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    crate = _package(tmp_path / "lst", '[package]\nname = "list-demo"\nversion = "0.1.0"\n\n'
                                       '[[bin]]\nname = "tool"\npath = "tools/tool.rs"\n\n[dependencies]\nx = "1"\n')
    target = crate / "target" / "debug"
    assert buildhint.launch_hint(str(crate / "src" / "main.rs"), "rust") == (
        f"program={str(target / 'list-demo')!r}, build='cargo build', cwd={str(crate)!r}")
    assert repr(str(target / "extra")) in buildhint.launch_hint(str(crate / "src" / "bin" / "extra.rs"), "rust")
    assert repr(str(target / "tool")) in buildhint.launch_hint(str(crate / "tools" / "tool.rs"), "rust")


def test_a_workspace_member_builds_into_the_workspaces_target(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CARGO_TARGET_DIR", raising=False)
    (tmp_path / "Cargo.toml").write_text('[workspace]\nmembers = ["app"]\n')
    crate = _package(tmp_path / "app", '[package]\nname = "app"\n')
    assert repr(str(tmp_path / "target" / "debug" / "app")) in buildhint.launch_hint(str(crate / "src" / "main.rs"),
                                                                                      "rust")
    monkeypatch.setenv("CARGO_TARGET_DIR", "/tmp/shared-target")
    assert "'/tmp/shared-target/debug/app'" in buildhint.launch_hint(str(crate / "src" / "main.rs"), "rust")


def test_a_rust_file_outside_any_package_is_built_by_rustc(tmp_path: Path) -> None:
    assert "build='rustc -g -o hello hello.rs'" in buildhint.launch_hint(str(tmp_path / "hello.rs"), "rust")


def test_a_source_file_given_as_the_program_is_refused_with_its_own_build(tmp_path: Path) -> None:
    """It offered a gcc line for a Rust file."""
    crate = _package(tmp_path / "lst", '[package]\nname = "lst"\n')
    (crate / "src" / "main.rs").write_text("fn main() {}\n")
    with pytest.raises(UsageError) as refused:
        registry.infer_language(str(crate / "src" / "main.rs"), None, None)
    assert "is Rust source" in str(refused.value) and "build='cargo build'" in str(refused.value)
    assert "gcc" not in str(refused.value)
