"""The registry's pure parts: language names, the language of a program (by argument, extension,
directory contents or the bytes of an executable), and an explicitly chosen adapter. Nothing runs."""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from polydbg.backends.registry import (
    adapters_for,
    check_launchable,
    choose_adapter,
    infer_language,
    info,
    languages,
    named_program,
    normalize_language,
    sniff_binary,
)
from polydbg.errors import UsageError

ELF = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56  # an ELF header's start; the sniffer reads only the magic and strings


def crafted(path: Path, *markers: bytes) -> str:
    """A small file that starts like an ELF executable and holds ``markers`` among filler bytes."""
    path.write_bytes(ELF + b"\x00".join([b"filler", *markers, b"end"]))
    return str(path)


# -- normalize_language -------------------------------------------------------------------------------------


@pytest.mark.parametrize(("given", "language"), [
    ("python", "python"), ("Python", "python"), ("py", "python"), ("PY", "python"),
    ("c", "c"), ("C", "c"), ("cpp", "cpp"), ("c++", "cpp"), ("C++", "cpp"),
    ("rust", "rust"), ("rs", "rust"), ("go", "go"), ("golang", "go"), ("GoLang", "go"),
    ("js", "javascript"), ("JavaScript", "javascript"), ("node", "javascript"), ("ts", "typescript"),
])
def test_normalize_language_accepts_names_and_aliases_in_any_case(given: str, language: str) -> None:
    assert normalize_language(given) == language


@pytest.mark.parametrize("given", ["cobol", "", "c#", "python3", "jscript"])
def test_normalize_language_refuses_others_and_lists_the_supported(given: str) -> None:
    with pytest.raises(UsageError) as refused:
        normalize_language(given)
    assert all(language in str(refused.value) for language in languages())


# -- sniff_binary --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("markers", "language"), [
    ((b"\xff Go buildinf:",), "go"),
    ((b"runtime.gopanic",), "go"),
    ((b"/rustc/59807616e1fa2540724bfbac14d7976d7e4a3860/library/std/src/rt.rs",), "rust"),
    ((b"rust_panic",), "rust"),
    ((b"_ZNSt6vectorIiSaIiEE",), "cpp"),
    ((b"libstdc++.so.6",), "cpp"),
    ((b"__gxx_personality_v0",), "cpp"),
    ((), "c"),  # an ELF with none of them
    ((b"\xff Go buildinf:", b"/rustc/abc/", b"_ZNSt"), "go"),  # Go first (cgo links C++ and more)
    ((b"/rustc/abc/", b"libstdc++.so.6"), "rust"),  # then Rust (a Rust binary may link libstdc++)
])
def test_sniff_binary_tells_the_language_of_an_elf(tmp_path: Path, markers: tuple[bytes, ...],
                                                   language: str) -> None:
    assert sniff_binary(crafted(tmp_path / "app", *markers)) == language


def test_sniff_binary_of_what_is_no_elf(tmp_path: Path) -> None:
    script = tmp_path / "run"
    script.write_text("#!/bin/sh\necho /rustc/ runtime.gopanic\n")
    assert sniff_binary(str(script)) is None  # the markers count only in an ELF
    short = tmp_path / "short"
    short.write_bytes(b"\x7fEL")
    assert sniff_binary(str(short)) is None
    (tmp_path / "empty").write_bytes(b"")
    assert sniff_binary(str(tmp_path / "empty")) is None
    assert sniff_binary(str(tmp_path)) is None  # a directory
    assert sniff_binary(str(tmp_path / "missing")) is None


# -- infer_language ------------------------------------------------------------------------------------------


def test_an_explicit_language_wins_where_the_program_can_be_it(tmp_path: Path) -> None:
    go_binary = crafted(tmp_path / "app", b"\xff Go buildinf:")
    assert infer_language(go_binary, None, "C++") == "cpp"  # any executable may be debugged as native code
    assert infer_language("script.py", None, "python") == "python"
    with pytest.raises(UsageError, match="not a native executable, so it cannot be debugged as go"):
        infer_language("script.py", None, "golang")
    with pytest.raises(UsageError, match=r"not a native executable.*build="):
        infer_language("main.c", None, "c")  # the source, not the program built from it
    with pytest.raises(UsageError, match="not supported"):
        infer_language("script.py", None, "cobol")


def test_a_module_is_python(tmp_path: Path) -> None:
    assert infer_language(None, "http.server", None) == "python"
    assert infer_language(crafted(tmp_path / "app"), "pkg", None) == "python"  # module decides before program


def test_neither_program_nor_module_is_refused() -> None:
    with pytest.raises(UsageError, match="pass program"):
        infer_language(None, None, None)
    with pytest.raises(UsageError, match="pass program"):
        infer_language("", "", None)


@pytest.mark.parametrize(("name", "language"), [
    ("app.py", "python"), ("APP.PY", "python"), ("gui.pyw", "python"), ("main.go", "go"), ("x/y/Main.Go", "go"),
])
def test_sources_that_run_as_they_are(name: str, language: str) -> None:
    assert infer_language(name, None, None) == language  # by extension: the file need not exist yet


@pytest.mark.parametrize(("name", "language"), [
    ("main.c", "C"), ("util.h", "C"), ("main.cpp", "C++"), ("main.cc", "C++"), ("main.cxx", "C++"),
    ("util.hpp", "C++"), ("src/main.rs", "Rust"), ("MAIN.C", "C"),
])
def test_a_compiled_languages_source_is_refused_with_a_hint(name: str, language: str) -> None:
    with pytest.raises(UsageError) as refused:
        infer_language(name, None, None)
    message = str(refused.value)
    assert f"is {language} source: debug the executable built from it with debug info" in message
    if name.endswith(("h", "hpp")):  # a header builds nothing of its own
        assert "from the sources that include this header, with -g -O0" in message, message
    elif language == "Rust":  # outside any cargo package
        assert "build='rustc -g -o main main.rs'" in message, message
    else:
        compiler = "g++" if language == "C++" else "gcc"
        stem, file = os.path.splitext(name)[0], os.path.basename(name)
        assert f"build='{compiler} -g -O0 -o {stem} {file}'" in message, message


def test_a_directory_with_go_mod_or_go_files_is_go(tmp_path: Path) -> None:
    module = tmp_path / "module"
    module.mkdir()
    (module / "go.mod").write_text("module example.com/m\n")
    assert infer_language(str(module), None, None) == "go"
    package = tmp_path / "package"
    package.mkdir()
    (package / "main.go").write_text("package main\n")
    assert infer_language(str(package), None, None) == "go"


def test_a_directory_without_go_is_refused(tmp_path: Path) -> None:
    (tmp_path / "main.py").write_text("")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "main.go").write_text("package main\n")  # only directly inside counts
    with pytest.raises(UsageError, match="directory without Go sources; pass a program file"):
        infer_language(str(tmp_path), None, None)


def test_an_executable_without_extension_is_sniffed(tmp_path: Path) -> None:
    assert infer_language(crafted(tmp_path / "server", b"runtime.gopanic"), None, None) == "go"
    assert infer_language(crafted(tmp_path / "tool", b"rust_panic"), None, None) == "rust"
    assert infer_language(crafted(tmp_path / "app.bin", b"__gxx_personality_v0"), None, None) == "cpp"
    assert infer_language(crafted(tmp_path / "a.out"), None, None) == "c"


@pytest.mark.parametrize("content", [b"plain text\n", b"MZ\x90\x00 a PE file", b""])
def test_a_file_of_unknown_kind_is_refused_asking_for_the_language(tmp_path: Path, content: bytes) -> None:
    program = tmp_path / "mystery"
    program.write_bytes(content)
    with pytest.raises(UsageError) as refused:
        infer_language(str(program), None, None)
    assert "cannot tell the language" in str(refused.value)
    assert "pass language=" in str(refused.value)


def test_a_missing_file_without_extension_is_refused_asking_for_the_language(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="cannot tell the language"):
        infer_language(str(tmp_path / "missing"), None, None)


# -- choose_adapter, when the adapter is named ------------------------------------------------------------------


@pytest.mark.parametrize(("language", "adapter"), [
    ("python", "debugpy"), ("c", "gdb"), ("c", "lldb-dap"), ("cpp", "gdb"), ("rust", "lldb-dap"), ("go", "delve"),
])
def test_a_named_adapter_that_debugs_the_language(language: str, adapter: str) -> None:
    assert choose_adapter(language, adapter) == adapter


@pytest.mark.parametrize(("language", "adapter"), [("python", "gdb"), ("go", "lldb-dap"), ("c", "delve"),
                                                   ("rust", "debugpy"), ("c", "nope")])
def test_a_named_adapter_that_cannot_is_refused_with_the_choices(language: str, adapter: str) -> None:
    with pytest.raises(UsageError) as refused:
        choose_adapter(language, adapter)
    assert f"cannot debug {language}" in str(refused.value)
    assert all(choice in str(refused.value) for choice in adapters_for(language))


# -- refusals: programs polydbg cannot debug are refused with what to do instead (issue 7.12, 7.14)

ELF_HEADER = b"\x7fELF" + b"\0" * 60


def _file(path: Path, data: bytes, executable: bool = True) -> str:
    path.write_bytes(data)
    path.chmod(0o755 if executable else 0o644)
    return str(path)


@pytest.mark.parametrize(("name", "language"), [("app.swift", "Swift"), ("tool.pl", "Perl"), ("App.scala", "Scala")])
def test_a_script_of_a_language_without_a_backend_is_named(tmp_path: Path, name: str, language: str) -> None:
    path = _file(tmp_path / name, b"print('x')\n")
    with pytest.raises(UsageError, match=f"is a {language} program, and polydbg has no {language} debugger yet"):
        infer_language(path, None, None)


@pytest.mark.parametrize("name", ["Main.java", "app.jar", "Main.class"])
def test_java_sources_jars_and_classes_go_to_the_jvm(tmp_path: Path, name: str) -> None:
    assert infer_language(_file(tmp_path / name, b"x"), None, None) == "java"


def test_kotlin_sources_go_to_the_jvm_as_kotlin(tmp_path: Path) -> None:
    assert infer_language(_file(tmp_path / "Main.kt", b"fun main() {}"), None, None) == "kotlin"
    assert adapters_for("kotlin") == ["java"] and normalize_language("kt") == "kotlin"


@pytest.mark.parametrize(("program", "language", "runtime_args", "expected"), [
    ("demo.shapes.MainKt", None, ["-cp", "out:kotlin-stdlib.jar"], "java"),
    ("MainKt", "kotlin", [], "kotlin"),
    ("Basics", "jvm", [], "java"),
    ("Basics", None, [], None),  # a missing file, not a class asked for
    ("Main.java", "java", [], None),  # a missing source file, not a class
    ("build/Main", "java", [], None),
    ("app", "python", ["-cp", "x"], None),
])
def test_a_jvm_main_class_passed_by_name(program: str, language: str | None, runtime_args: list[str],
                                         expected: str | None) -> None:
    assert named_program(program, language, runtime_args) == expected


def test_an_interpreter_given_a_program_to_run_is_refused_with_both_ways(tmp_path: Path) -> None:
    python = os.path.realpath(sys.executable)
    with pytest.raises(UsageError) as refused:
        infer_language(python, None, None, args=["app.py", "--verbose"])
    message = str(refused.value)
    assert "is the python interpreter (given a program to run)" in message
    assert "pass it as program, a module as module=" in message and "this interpreter as python=" in message
    assert "to debug the interpreter itself as native code, pass language='c'" in message
    java = _file(tmp_path / "java", ELF_HEADER)
    with pytest.raises(UsageError, match=r"is the java interpreter.*the java flags as runtime_args"):
        infer_language(java, None, None, args=["-cp", "classes", "demo.Main"])
    node = _file(tmp_path / "node", ELF_HEADER + b"_ZNSt6vectorIiSaIiEE")
    with pytest.raises(UsageError, match=r"this interpreter as node=.*pass language='cpp'"):
        infer_language(node, None, None, args=["app.js"])


@pytest.mark.parametrize("name", ["lua", "lua5.4", "python3", "python3.12", "node", "java", "ruby", "perl", "bash"])
def test_an_executable_named_like_an_interpreter_is_a_native_program(tmp_path: Path, name: str) -> None:
    """A self-built interpreter is debugged as the C program it is: by an explicit language or adapter, and
    without them when it is given no program to run or is the runtime of no language polydbg debugs."""
    binary = crafted(tmp_path / name)
    assert infer_language(binary, None, "c", args=["script", "-x"]) == "c"
    assert infer_language(binary, None, "C++", args=["script"]) == "cpp"
    assert infer_language(binary, None, None, adapter="gdb", args=["script"]) == "c"
    assert infer_language(binary, None, None, adapter="lldb-dap") == "c"
    assert infer_language(binary, None, None) == "c"
    if name.startswith(("lua", "perl", "bash")):  # no backend runs their scripts: always the native program
        assert infer_language(binary, None, None, args=["test.lua"]) == "c"


def test_a_wrapper_script_named_like_a_runtime_is_refused_as_the_runtime(tmp_path: Path) -> None:
    shim = _file(tmp_path / "python3", b'#!/usr/bin/env bash\nexec pyenv exec python3 "$@"\n')  # pyenv's shims
    with pytest.raises(UsageError, match=r"is the python interpreter \(a wrapper script that starts it\)"):
        infer_language(shim, None, None)


def test_a_runtime_asked_for_its_own_language_says_to_pass_the_program(tmp_path: Path) -> None:
    python = _file(tmp_path / "python3.11", ELF_HEADER)
    with pytest.raises(UsageError, match=r"not a Python program; pass the Python program as program and this "
                                         r"interpreter as python=, or omit language="):
        infer_language(python, None, "python")


@pytest.mark.parametrize(("line", "language"), [
    ("#!/usr/bin/env node", "javascript"), ("#!/usr/local/bin/nodejs", "javascript"),
    ("#!/usr/bin/env -S node --experimental-vm-modules", "javascript"), ("#!/usr/bin/python3 -u", "python"),
    ("#!/usr/bin/env -S PYTHONUNBUFFERED=1 python3.12 -X dev", "python"), ("#!/opt/pypy/bin/pypy3", "python"),
    ("#!/usr/bin/env tsx", "typescript"), ("#!/usr/bin/env -S npx ts-node", "typescript"),
    ("#!/usr/bin/env ruby", "ruby"), ("#!/usr/bin/ruby3.1 -w", "ruby"),
])
def test_a_script_without_extension_is_known_by_its_shebang(tmp_path: Path, line: str, language: str) -> None:
    assert infer_language(_file(tmp_path / "tool", f"{line}\nx\n".encode()), None, None) == language


def test_an_extension_decides_before_the_shebang(tmp_path: Path) -> None:
    assert infer_language(_file(tmp_path / "tool.py", b"#!/usr/bin/env node\n"), None, None) == "python"
    assert infer_language(_file(tmp_path / "tool", b"#!/usr/bin/env node\n"), None, "python") == "python"


@pytest.mark.parametrize(("line", "refusal"), [
    ("#!/usr/bin/env perl", r"is a Perl program \(its #! line runs 'perl'\), and polydbg has no Perl debugger yet"),
    ("#!/usr/bin/lua5.4", r"is a Lua program .* no Lua debugger yet; it debugs C, C\+\+"),
    ("#!/bin/sh -e", r"is a shell script \(its #! line runs '/bin/sh -e'\).*pass the program the script starts"),
    ("#!/usr/bin/env -S bash -x", "is a shell script"),
    ("#!/usr/bin/awk -f", r"cannot tell the language of .*its #! line runs '/usr/bin/awk -f'.*pass language="),
])
def test_a_shebang_of_a_language_without_a_backend_is_named(tmp_path: Path, line: str, refusal: str) -> None:
    with pytest.raises(UsageError, match=refusal):
        infer_language(_file(tmp_path / "tool", f"{line}\necho\n".encode()), None, None)


def test_a_native_language_asked_of_a_script_is_refused(tmp_path: Path) -> None:
    script = _file(tmp_path / "run_me", b"#!/bin/sh\necho 1\n")
    with pytest.raises(UsageError, match="not a native executable, so it cannot be debugged as c"):
        infer_language(script, None, "c")
    binary = _file(tmp_path / "app", ELF_HEADER)
    with pytest.raises(UsageError, match="native executable, not a Python program"):
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


@pytest.mark.parametrize(("name", "language"), [("app.js", "javascript"), ("app.mjs", "javascript"),
                                                ("app.cjs", "javascript"), ("index.ts", "typescript"),
                                                ("index.mts", "typescript")])
def test_javascript_and_typescript_go_to_node(tmp_path: Path, name: str, language: str) -> None:
    assert infer_language(_file(tmp_path / name, b"console.log(1)\n"), None, None) == language
    assert choose_adapter(language, None) == "node"


@pytest.mark.parametrize(("call", "says"), [
    (lambda: normalize_language("pyhton"), "did you mean 'python'?"),
    (lambda: info("lldb"), "did you mean 'lldb-dap'?"),
    (lambda: choose_adapter("c", "gbd"), "did you mean 'gdb'?"),
])
def test_a_misspelt_language_or_adapter_names_the_one_meant(call: Callable[[], object], says: str) -> None:
    with pytest.raises(UsageError, match=re.escape(says)):
        call()
