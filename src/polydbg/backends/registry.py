"""Which backends exist, which languages each debugs, and what language a program is in.

Each backend is described by a ``BackendInfo`` (languages, how to find its debugger, install hint,
exception filters); ``doctor`` and the session manager read only these. A backend's module is
imported only when a session needs it (start-up stays cheap), and a backend is the default for a
language only when its debugger is found on this machine.
"""

from __future__ import annotations

import importlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from typing import cast

from polydbg.backends import locate
from polydbg.backends.base import Backend, BackendFactory, BackendInfo, BackendListener
from polydbg.errors import UsageError, echo

BACKENDS: dict[str, BackendInfo] = {info.name: info for info in (
    BackendInfo(
        name="debugpy", target="polydbg.backends.debugpy.backend:DebugpyBackend", languages=("python",),
        find=locate.python_itself, install="pip install debugpy (a dependency of polydbg)", version_args=(),
        break_on_exception={"uncaught": ("uncaught",), "raised": ("raised", "uncaught")}),
    BackendInfo(
        name="lldb-dap", target="polydbg.backends.lldb.backend:LldbDapBackend", languages=("c", "cpp", "rust"),
        find=locate.find_lldb_dap, install="apt-get install lldb-22   (or any lldb ≥ 18 that ships lldb-dap)",
        break_on_exception={"raised": ("cpp_throw",)}),  # C++ only; other languages drop it
    BackendInfo(
        name="gdb", target="polydbg.backends.gdb.backend:GdbMiBackend", languages=("c", "cpp", "rust"),
        find=lambda: locate.which("gdb"), install="apt-get install gdb gdbserver",
        break_on_exception={"raised": ("throw", "panic"), "uncaught": ("panic",)}),  # panic: Rust only
    BackendInfo(
        name="delve", target="polydbg.backends.delve.backend:DelveBackend", languages=("go",),
        find=lambda: locate.which("dlv"), version_args=("version",),
        install="apt-get install delve golang-go   (or: go install github.com/go-delve/delve/cmd/dlv@latest)"),
    BackendInfo(
        name="node", target="polydbg.backends.node.backend:NodeBackend", languages=("javascript", "typescript"),
        find=locate.find_node, install="apt-get install nodejs   (Node ≥ 18; TypeScript also needs tsx in the project: "
                                       "npm install --save-dev tsx)",
        break_on_exception={"uncaught": ("uncaught",), "raised": ("raised", "uncaught")}),
    BackendInfo(
        name="java", target="polydbg.backends.java.backend:JavaBackend", languages=("java", "kotlin"),
        find=locate.find_java, install="apt-get install openjdk-17-jdk-headless   (any JDK ≥ 11; javac for .java "
                                       "programs, kotlinc for .kt ones)", version_args=("-version",),
        break_on_exception={"uncaught": ("uncaught",), "raised": ("raised", "uncaught")}),
)}

_ALIASES = {"c++": "cpp", "py": "python", "golang": "go", "rs": "rust", "js": "javascript", "node": "javascript",
            "ts": "typescript", "jvm": "java", "kt": "kotlin"}
_SOURCE_EXTENSIONS = {".py": "python", ".pyw": "python", ".go": "go", ".c": "c", ".h": "c", ".cc": "cpp",
                      ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".rs": "rust", ".js": "javascript",
                      ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript",
                      ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
                      ".java": "java", ".jar": "java", ".class": "java", ".kt": "kotlin"}
_COMPILED = frozenset({"c", "cpp", "rust"})
_NATIVE = frozenset({"c", "cpp", "rust", "go"})
_NAMES = {"c": "C", "cpp": "C++", "rust": "Rust", "go": "Go", "python": "Python", "javascript": "JavaScript",
          "typescript": "TypeScript", "java": "Java", "kotlin": "Kotlin"}
# Programs of languages without a backend here: named in the refusal.
_OTHER_LANGUAGES = {".kts": "Kotlin script",
                    ".rb": "Ruby", ".lua": "Lua", ".pl": "Perl", ".php": "PHP", ".sh": "shell", ".bash": "shell",
                    ".cs": "C#", ".swift": "Swift", ".zig": "Zig", ".scala": "Scala", ".ex": "Elixir",
                    ".exs": "Elixir", ".erl": "Erlang", ".hs": "Haskell", ".r": "R", ".jl": "Julia", ".dart": "Dart"}
# Interpreters and VMs that are sometimes passed as the program itself.
_INTERPRETERS = {"python": "python", "pypy": "python", "java": "java", "node": "node", "nodejs": "node",
                 "ruby": "ruby", "perl": "perl", "php": "php", "lua": "lua", "luajit": "lua", "bash": "shell",
                 "sh": "shell", "dash": "shell", "zsh": "shell", "deno": "deno", "bun": "bun"}
_SNIFF_BYTES = 64 * 1024 * 1024
_JVM_CLASS = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")


def languages() -> list[str]:
    return sorted({lang for info in BACKENDS.values() for lang in info.languages})


def adapters_for(language: str) -> list[str]:
    """The backends that debug ``language``, preferred first."""
    return [name for name, info in BACKENDS.items() if language in info.languages]


def info(adapter: str) -> BackendInfo:
    found = BACKENDS.get(adapter)
    if found is None:
        raise UsageError(f"unknown adapter {echo(adapter)}; known: {sorted(BACKENDS)}")
    return found


BackendClass = Callable[[BackendListener, str], Backend]  # (listener, language) → backend


def backend_class(adapter: str) -> BackendClass:
    module, _, name = info(adapter).target.partition(":")
    return cast("BackendClass", getattr(importlib.import_module(module), name))


def break_filters(adapter: str, mode: str) -> list[str]:
    """The adapter's exception filters for debug_launch's ``break_on_exception``."""
    return list(info(adapter).break_on_exception.get(mode, ()))


def normalize_language(language: str) -> str:
    lang = _ALIASES.get(language.lower(), language.lower())
    if lang not in languages():
        raise UsageError(f"language {echo(language)} is not supported; supported: {languages()}")
    return lang


def sniff_binary(path: str) -> str | None:
    """The language of a native executable (Go, Rust, C++ or C), or None when it is not one."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block the reader
            return None
        with open(path, "rb") as handle:
            if handle.read(4) != b"\x7fELF":
                return None
            data = handle.read(_SNIFF_BYTES)
    except OSError:
        return None
    if b"\xff Go buildinf:" in data or b"runtime.gopanic" in data:
        return "go"
    if b"/rustc/" in data or b"rust_panic" in data:
        return "rust"
    if b"_ZNSt" in data or b"libstdc++" in data or b"__gxx_personality" in data:
        return "cpp"
    return "c"


def infer_language(program: str | None, module: str | None, language: str | None) -> str:
    """The language to debug ``program`` as: explicit, else from its extension or its contents.

    A program polydbg cannot debug is refused here with what to do instead: a script of a language
    it has no backend for, an interpreter passed as the program, a native language asked of a file
    that is no executable.
    """
    if module:
        return normalize_language(language) if language else "python"
    if not program:
        raise UsageError("pass program (or module for python -m)")
    if os.path.isdir(program):
        if language and normalize_language(language) != "go":
            raise UsageError(f"{echo(program)} is a directory; pass the {language} program file")
        if os.path.exists(os.path.join(program, "go.mod")) or any(
                name.endswith(".go") for name in os.listdir(program)):
            return "go"
        raise UsageError(f"{echo(program)} is a directory without Go sources; pass a program file")
    ext = os.path.splitext(program)[1].lower()
    lang = _SOURCE_EXTENSIONS.get(ext)
    other = _OTHER_LANGUAGES.get(ext)
    if other is not None and lang is None:
        raise UsageError(f"{echo(program)} is a {other} program, and polydbg has no {other} debugger yet; it "
                         f"debugs {', '.join(_NAMES.get(n, n) for n in languages())}")
    sniffed = sniff_binary(program)
    interpreter = _interpreter(program) if sniffed is not None else None
    if interpreter is not None:
        raise UsageError(f"{echo(program)} is the {interpreter} interpreter, not a program to debug: pass the "
                         f"{interpreter} script (or program) itself as program"
                         + (", its arguments as args, and this interpreter as python=" if interpreter == "python"
                            else ""))
    if language:
        lang = normalize_language(language)
        if lang in _NATIVE and sniffed is None:
            raise UsageError(f"{echo(program)} is not a native executable, so it cannot be debugged as {lang}: pass "
                             "the executable built with debug info (build= can build it first)")
        if lang == "python" and sniffed is not None:
            raise UsageError(f"{echo(program)} is a native executable, not a Python script; omit language= "
                             f"(it is {sniffed}) or pass the .py script")
        return lang
    if lang in _COMPILED:
        raise UsageError(f"{echo(program)} is {lang} source: pass the executable built with debug info as program, "
                         "and build='gcc -g -O0 -o app app.c' (or 'cargo build') to build it first")
    if lang is not None:
        return lang
    if sniffed is not None:
        return sniffed
    raise UsageError(f"cannot tell the language of {echo(program)}; pass language= (one of {languages()})")


def jvm_main_class(program: str, language: str | None, runtime_args: Sequence[str]) -> str | None:
    """The language (java or kotlin) of a program that names a JVM main class (``demo.MainKt``)
    rather than a file: asked for as java/kotlin, or run with a classpath in ``runtime_args``."""
    ext = os.path.splitext(program)[1].lower()
    if not _JVM_CLASS.match(program) or ext in _SOURCE_EXTENSIONS or ext in _OTHER_LANGUAGES:
        return None
    lang = _ALIASES.get(language.lower(), language.lower()) if language else None
    if lang in ("java", "kotlin"):
        return lang
    if lang is None and any(arg in ("-cp", "-classpath", "--class-path") for arg in runtime_args):
        return "java"
    return None


def check_launchable(program: str) -> None:
    """A native executable must be one the system can run (lldb-dap reports pid 0 for it, gdb exit 127)."""
    if sniff_binary(program) is not None and not os.access(program, os.X_OK):
        raise UsageError(f"{echo(program)} is not executable (its mode lacks the execute bit); make it executable "
                         "with chmod +x, or rebuild it")


def _interpreter(path: str) -> str | None:
    """The interpreter an executable is (``python3.11`` → python), or None for an ordinary program."""
    name = os.path.basename(os.path.realpath(path)).lower()
    base = re.sub(r"[-.\d]+$", "", name)
    return _INTERPRETERS.get(base)


def choose_adapter(language: str, adapter: str | None) -> str:
    """The adapter for ``language``: the one asked for, else the first one installed here."""
    choices = adapters_for(language)
    if adapter:
        if adapter not in choices:
            raise UsageError(f"adapter {echo(adapter)} cannot debug {language}; use one of {choices}")
        return adapter
    for name in choices:
        if BACKENDS[name].find() is not None:
            return name
    return choices[0]  # its backend explains what to install when it fails to start


def make_factory(adapter: str, language: str) -> BackendFactory:
    cls = backend_class(adapter)

    def make(listener: BackendListener) -> Backend:
        return cls(listener, language)
    return make
