"""What dlv dap is launched with (tests/unit/backends/delve/test_helpers.py covers module_dir)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.delve import build
from polydbg.errors import EnvironmentProblem, UsageError


def test_a_source_program_is_built_into_a_private_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "go.mod").write_text("module example.com/m\n")
    (tmp_path / "cmd").mkdir()
    main = tmp_path / "cmd" / "main.go"
    main.write_text("package main\n")
    monkeypatch.setattr(shutil, "which", lambda name: "/usr/bin/go")
    planned = build.launch(LaunchSpec(program=str(main), args=("a",), env=(("K", "v"),)))
    try:
        assert planned.workdir == str(tmp_path)
        assert planned.build_dir is not None and os.path.isdir(planned.build_dir)
        assert planned.arguments["mode"] == "debug"
        assert planned.arguments["output"] == os.path.join(planned.build_dir, "__debug_bin")
        assert planned.arguments["cwd"] == str(tmp_path / "cmd") and planned.arguments["args"] == ["a"]
        assert planned.env["K"] == "v"
    finally:
        if planned.build_dir is not None:
            shutil.rmtree(planned.build_dir)


def test_a_source_program_needs_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(EnvironmentProblem, match="the go command is not on PATH"):
        build.launch(LaunchSpec(program=str(tmp_path)))


def test_a_binary_is_run_and_a_core_opened(tmp_path: Path) -> None:
    binary = tmp_path / "app"
    planned = build.launch(LaunchSpec(program=str(binary), cwd="/tmp"))
    assert planned.arguments["mode"] == "exec" and planned.build_dir is None
    assert planned.workdir == str(tmp_path) and planned.arguments["cwd"] == "/tmp"
    core = build.launch(LaunchSpec(program=str(binary), core=str(tmp_path / "core")))
    assert core.arguments["mode"] == "core" and core.arguments["coreFilePath"] == str(tmp_path / "core")


def test_what_delve_cannot_launch() -> None:
    with pytest.raises(UsageError, match="stdin is not supported"):
        build.launch(LaunchSpec(program="/bin/app", stdin="x"))
    with pytest.raises(UsageError, match="pass program"):
        build.launch(LaunchSpec())


def test_a_build_cache_when_go_has_nowhere_to_put_one(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GOCACHE", "XDG_CACHE_HOME", "HOME"):
        monkeypatch.delenv(name, raising=False)
    assert build.go_env()["GOCACHE"].endswith("polydbg-gocache")
    monkeypatch.setenv("HOME", "/home/u")
    assert "GOCACHE" not in build.go_env()


def test_attach_to_a_pid_or_a_server() -> None:
    assert build.attach_arguments(AttachSpec(pid=5)) == {
        "request": "attach", "hideSystemGoroutines": True, "stopOnEntry": False, "mode": "local", "processId": 5}
    remote = build.attach_arguments(AttachSpec(port=4000, path_mappings=(("/here", "/there"),)))
    assert remote["mode"] == "remote" and remote["substitutePath"] == [{"from": "/here", "to": "/there"}]


def test_a_build_failure_is_the_compilers_messages() -> None:
    error = "Build Error: go build -o /tmp/x -gcflags all=-N -l .\n./main.go:5:2: undefined: helper (exit status 1)"
    message = build.build_failure(error, "launch failed", "/app/main.go")
    assert message.startswith("go build failed:\n./main.go:5:2: undefined: helper\n(a .go file is built alone")
    assert build.build_failure(None, "launch failed", "/app/main.go") == "launch failed"
    assert build.build_failure("Build Error: boom", "x", "/app") == "go build failed:\nBuild Error: boom"
