"""The commands that set up a launched program and an attached one's path mappings (commands.py). No gdb runs."""

from __future__ import annotations

from polydbg.backends.base import LaunchSpec
from polydbg.backends.gdb.commands import console, program_commands, substitute_paths
from polydbg.mi.client import mi_quote

TTY = "/dev/pts/9"


def test_plain_arguments_run_without_the_startup_shell() -> None:
    spec = LaunchSpec(program="./points", args=("1", "two"))
    assert program_commands(spec, TTY, None) == [f"-inferior-tty-set {mi_quote(TTY)}",
                                                 "-gdb-set startup-with-shell off", console("set args 1 two")]


def test_quoted_arguments_and_input_go_through_the_shell() -> None:
    spec = LaunchSpec(program="./points", args=("a b",), cwd="/work dir", env=(("MODE", "x y"),), stdin="data")
    assert program_commands(spec, TTY, "/tmp/in put") == [
        f"-inferior-tty-set {mi_quote(TTY)}", "-gdb-set startup-with-shell on",
        console("set args 'a b' < '/tmp/in put'"), f"-environment-cd {mi_quote('/work dir')}",
        console("set environment MODE=x y")]
    assert program_commands(LaunchSpec(program="./points"), TTY, "/tmp/in")[1:] == [
        "-gdb-set startup-with-shell on", console("set args < /tmp/in")]


def test_path_mappings_are_substitute_paths_remote_to_local() -> None:
    assert substitute_paths((("/home/me/src", "/build"), ("/my dir", "/r"))) == [
        f"-interpreter-exec console {mi_quote('set substitute-path /build /home/me/src')}",
        f"-interpreter-exec console {mi_quote('set substitute-path /r ' + chr(34) + '/my dir' + chr(34))}"]
