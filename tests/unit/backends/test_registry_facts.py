"""What the registry tells the layers above about a language, an adapter or every backend, read from the
backends' own ``info.py`` (so session/ and policy.py name none): expression checkers, source languages, raw
command escapes, runtime arguments, flags and environment, process names and the hints in answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends import registry
from polydbg.backends.debugpy import expressions as python_expressions
from polydbg.backends.debugpy import info as debugpy_info
from polydbg.backends.java import checks as java_checks
from polydbg.errors import UsageError


def test_expression_check_is_the_checker_of_the_languages_backend() -> None:
    assert registry.expression_check("python") is python_expressions.check
    assert registry.expression_check("java") is java_checks.check
    assert registry.expression_check("kotlin") is java_checks.check
    for language in ("c", "cpp", "rust", "go", "javascript", "typescript", "cobol"):
        assert registry.expression_check(language) is None, language


def test_language_of_source_is_by_extension_in_any_case() -> None:
    cases = {"/a/app.py": "python", "/a/APP.PY": "python", "gui.pyw": "python", "main.go": "go", "x.c": "c",
             "x.h": "c", "x.hpp": "cpp", "lib.rs": "rust", "index.mjs": "javascript", "App.tsx": "typescript",
             "Main.java": "java", "Main.kt": "kotlin", "script.kts": None, "app.rb": "ruby", "Makefile": None,
             "/dir.py/file": None, "": None}
    assert {path: registry.language_of_source(path) for path in cases} == cases


def escapes(adapter: str | None, text: str) -> list[str]:
    """Why ``text`` reaches a raw command of ``adapter``: the reasons of the escapes that match it."""
    return [why for pattern, why in registry.command_escapes(adapter) if pattern.search(text)]


def test_command_escapes_are_per_debugger() -> None:
    assert escapes("gdb", "$_shell(\"id\")") == ["calls gdb's $_shell, which runs a shell command"]
    assert escapes("gdb", "$_shellfish + 1") == [] and escapes("gdb", "`ls") == []
    assert escapes("lldb-dap", "  `platform shell id") != [] and escapes("lldb-dap", "a + `b`") == []
    assert escapes("delve", "dlv config") != [] and escapes("delve", "dlvx + 1") == []
    assert registry.command_escapes("debugpy") == [] and registry.command_escapes("fake") == []


def test_without_a_session_every_debuggers_escapes_count() -> None:
    assert len(registry.command_escapes(None)) == 3
    for text in ("$_shell(1)", "`help", "dlv help"):
        assert escapes(None, text), text
    assert sorted(registry.command_escape_names()) == ["delve's dlv", "gdb's $_shell", "lldb's `"]


def test_read_only_commands_are_the_queries_a_backend_declares() -> None:
    assert registry.read_only_command("java", "threads") and registry.read_only_command("java", " Classes demo.*")
    assert registry.read_only_command(None, "methods Basics")  # no session: some backend's query
    assert not registry.read_only_command("java", "") and not registry.read_only_command(None, "shell id")
    assert not registry.read_only_command("gdb", "threads") and not registry.read_only_command("fake", "threads")
    assert set(registry.read_only_commands(None)) == {"java"} and registry.read_only_commands("lldb-dap") == {}


def test_runtime_arguments_name_the_runtime_executables() -> None:
    assert registry.runtime_argument("debugpy") == "python"
    assert registry.runtime_argument("node") == "node"
    assert registry.runtime_argument("gdb") is None
    assert registry.runtime_arguments() == ["python", "node"]
    with pytest.raises(UsageError, match="unknown adapter 'fake'"):
        registry.runtime_argument("fake")


def test_harmless_runtime_flags_are_the_backends_declared_ones() -> None:
    harmless = ["-ea", "-da:com.example...", "-enableassertions", "-Xmx512m", "-Xss4M", "-Xms1g", "-Dmode=test",
                "-Dflag", "--enable-source-maps", "--no-warnings", "--max-old-space-size=4096",
                "--unhandled-rejections=strict", "--stack-size=2000",
                "-S", "127.0.0.1:8000", "localhost:8080", "-S0.0.0.0:80", "-dxdebug.max_nesting_level=512",
                "-derror_reporting=E_ALL & ~E_NOTICE", "-dmemory_limit=1G"]  # PHP's built-in server and ini settings
    code_running = ["-javaagent:agent.jar", "-agentlib:jdwp=transport=dt_socket", "-Djava.security.manager=allow",
                    "-Djdk.attach.allowAttachSelf=true", "-Dsun.misc.x=1", "-XX:+UnlockDiagnosticVMOptions",
                    "-Xmx", "--require=./hook.js", "--import=x", "-r", "--inspect", "--loader=x",
                    "--max-old-space-size=$(id)", "--enable-source-maps=x", "-ea; id", "",
                "-dauto_prepend_file=/tmp/x.php", "-dzend_extension=/tmp/evil.so", "-dextension=x", "-f",
                "-dmemory_limit=1G;x", "-S 127.0.0.1:80; id"]
    assert [flag for flag in harmless if not registry.harmless_runtime_flag(flag)] == []
    assert [flag for flag in code_running if registry.harmless_runtime_flag(flag)] == []


def test_runtime_path_flags_are_the_classpath_flags_and_php_s_document_root() -> None:
    assert registry.runtime_path_flags() == {"-cp": "classpath entry", "-classpath": "classpath entry",
                                             "--class-path": "classpath entry", "-t": "document root"}


def test_injecting_env_names_what_makes_a_runtime_or_build_load_other_code() -> None:
    injecting = ["PYTHONPATH", "pythonpath", "PYTHONSTARTUP", "PYTHONHOME", "NODE_OPTIONS", "NODE_PATH",
                 "GOFLAGS", "GOTOOLCHAIN", "CGO_CFLAGS", "CC", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH"]
    harmless = ["PYTHONUNBUFFERED", "PYTHONHASHSEED", "pythonioencoding", "NODE_ENV", "GOOS", "GOMAXPROCS",
                "JAVA_HOME", "HOME", "PATHEXT", "MY_PYTHONPATH"]
    assert [name for name in injecting if not registry.injecting_env(name)] == []
    assert [name for name in harmless if registry.injecting_env(name)] == []


def test_language_of_process_is_by_runtime_name_else_by_the_executable(tmp_path: Path) -> None:
    by_name = {"/usr/bin/python3.11": "python", "python": "python", "/opt/pypy3": "python",
               "/usr/bin/node": "javascript", "nodejs": "javascript", "node-18": "javascript",
               "/usr/lib/jvm/bin/java": "java"}
    assert {exe: registry.language_of_process(exe) for exe in by_name} == by_name
    go = tmp_path / "server"
    go.write_bytes(b"\x7fELF" + b"\x00" * 60 + b"\xff Go buildinf:")
    assert registry.language_of_process(str(go)) == "go"
    named_like = tmp_path / "pythonista"  # starts like python, is not: its bytes decide
    named_like.write_bytes(b"\x7fELF" + b"\x00" * 60 + b"/rustc/abc")
    assert registry.language_of_process(str(named_like)) == "rust"
    assert registry.language_of_process(str(tmp_path / "gone")) == "c"  # unreadable: a native program


def test_the_hints_in_answers_come_from_the_backend_that_declares_them() -> None:
    assert registry.attach_hint() == debugpy_info.INFO.attach_hint == "python -m debugpy --listen 5678"
    assert registry.module_runner() == debugpy_info.INFO.module_runner == "python -m"
