"""What lldb-dap starts with: the language's lldb commands and the launch, core and attach arguments."""

from __future__ import annotations

import pytest

from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.lldb import launch
from polydbg.errors import UsageError


def test_lldb_vscode_gets_no_quiet_prefix() -> None:
    assert launch.quiet_prefix("/usr/bin/lldb-dap-22") == "?"
    assert launch.quiet_prefix("/usr/bin/lldb-vscode-15") == ""
    assert launch.quiet_prefix(None) == "?"


def test_rust_loads_the_toolchains_formatters_and_breaks_on_panics() -> None:
    args = launch.common_arguments("rust", "/tc/etc", "?")
    assert args["initCommands"] == [
        "?settings set symbols.enable-lldb-index-cache true",
        '?command script import "/tc/etc/lldb_lookup.py"',
        '?command source -s 1 "/tc/etc/lldb_commands"',
        "?settings set target.process.thread.step-avoid-regexp ^(<|_\\$LT\\$)?(std|core|alloc)(::|\\.\\.)",
    ]
    assert args["preRunCommands"] == ["?breakpoint set --name rust_panic"]
    assert args["commandEscapePrefix"] == launch.COMMAND_PREFIX
    assert "preRunCommands" not in launch.common_arguments("rust", None, "?", panics=False)


def test_cpp_loads_polydbgs_formatters_and_c_nothing() -> None:
    cpp = launch.common_arguments("cpp", None, "")
    formatters = cpp["initCommands"][1]
    assert formatters.startswith('command script import "') and "cxx_formatters.py" in formatters
    assert launch.common_arguments("c", None, "?")["initCommands"] == [
        "?settings set symbols.enable-lldb-index-cache true"]


def test_launch_arguments() -> None:
    spec = LaunchSpec(program="/bin/app", args=("-v",), cwd="/tmp", env=(("A", "1"),), stop_on_entry=True)
    args = launch.launch_arguments(spec, {"x": 1})
    assert args == {"name": "polydbg", "type": "lldb-dap", "request": "launch", "program": "/bin/app",
                    "args": ["-v"], "stopOnEntry": True, "x": 1, "cwd": "/tmp", "env": {"A": "1"}}
    with pytest.raises(UsageError, match="pass program"):
        launch.launch_arguments(LaunchSpec(), {})


def test_a_core_file_is_an_attach() -> None:
    assert launch.core_arguments(LaunchSpec(program="/bin/app", core="/tmp/core"), {}) == {
        "name": "polydbg", "type": "lldb-dap", "request": "attach", "coreFile": "/tmp/core", "program": "/bin/app"}


def test_attach_to_a_pid_or_a_gdbserver() -> None:
    assert launch.attach_arguments(AttachSpec(pid=42), {})["pid"] == 42
    remote = launch.attach_arguments(AttachSpec(host="10.0.0.2", port=1234, program="/bin/app",
                                                path_mappings=(("/local", "/remote"),)), {})
    assert remote["gdb-remote-port"] == 1234 and remote["gdb-remote-hostname"] == "10.0.0.2"
    assert remote["program"] == "/bin/app" and remote["sourceMap"] == [["/remote", "/local"]]
    with pytest.raises(UsageError, match="pass pid"):
        launch.attach_arguments(AttachSpec(), {})
