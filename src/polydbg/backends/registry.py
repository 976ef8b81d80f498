"""Which backends exist, which languages each debugs, and what language a program is in.

Backends are imported only when a session needs one (start-up stays cheap), and a backend is the
default for a language only when its debugger is found on this machine.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from typing import Any

from polydbg.errors import UsageError

# adapter name → "module:Class"; every class takes (listener, language) and has ``find() -> str | None``
BACKENDS: dict[str, str] = {
    "debugpy": "polydbg.backends.debugpy:DebugpyBackend",
    "lldb-dap": "polydbg.backends.lldb_dap:LldbDapBackend",
    "gdb": "polydbg.backends.gdb_mi:GdbMiBackend",
    "delve": "polydbg.backends.delve:DelveBackend",
}

# language → adapters that can debug it, preferred first
LANGUAGE_ADAPTERS: dict[str, tuple[str, ...]] = {
    "python": ("debugpy",),
    "c": ("lldb-dap", "gdb"),
    "cpp": ("lldb-dap", "gdb"),
    "rust": ("lldb-dap", "gdb"),
    "go": ("delve",),
}

_ALIASES = {"c++": "cpp", "py": "python", "golang": "go", "rs": "rust"}
_SOURCE_EXTENSIONS = {".py": "python", ".pyw": "python", ".go": "go", ".c": "c", ".h": "c", ".cc": "cpp",
                      ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".rs": "rust"}
_COMPILED = frozenset({"c", "cpp", "rust"})
_SNIFF_BYTES = 64 * 1024 * 1024


def backend_class(adapter: str) -> Any:
    target = BACKENDS.get(adapter)
    if target is None:
        raise UsageError(f"unknown adapter {adapter!r}; known: {sorted(BACKENDS)}")
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def normalize_language(language: str) -> str:
    lang = _ALIASES.get(language.lower(), language.lower())
    if lang not in LANGUAGE_ADAPTERS:
        raise UsageError(f"language {language!r} is not supported; supported: {sorted(LANGUAGE_ADAPTERS)}")
    return lang


def sniff_binary(path: str) -> str | None:
    """The language of a native executable (Go, Rust, C++ or C), or None when it is not one."""
    try:
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
    """The language to debug ``program`` as: explicit, else from its extension or its contents."""
    if language:
        return normalize_language(language)
    if module:
        return "python"
    if not program:
        raise UsageError("pass program (or module for python -m)")
    if os.path.isdir(program):
        if os.path.exists(os.path.join(program, "go.mod")) or any(
                name.endswith(".go") for name in os.listdir(program)):
            return "go"
        raise UsageError(f"{program!r} is a directory without Go sources; pass a program file")
    ext = os.path.splitext(program)[1].lower()
    lang = _SOURCE_EXTENSIONS.get(ext)
    if lang in _COMPILED:
        raise UsageError(f"{program!r} is {lang} source: pass the executable built with debug info as program, "
                         "and build='gcc -g -O0 -o app app.c' (or 'cargo build') to build it first")
    if lang is not None:
        return lang
    sniffed = sniff_binary(program)
    if sniffed is not None:
        return sniffed
    raise UsageError(f"cannot tell the language of {program!r}; pass language= (one of "
                     f"{sorted(LANGUAGE_ADAPTERS)})")


def choose_adapter(language: str, adapter: str | None) -> str:
    """The adapter for ``language``: the one asked for, else the first one installed here."""
    choices = LANGUAGE_ADAPTERS[language]
    if adapter:
        if adapter not in choices:
            raise UsageError(f"adapter {adapter!r} cannot debug {language}; use one of {list(choices)}")
        return adapter
    for name in choices:
        if backend_class(name).find() is not None:
            return name
    return choices[0]  # its backend explains what to install when it fails to start


def make_factory(adapter: str, language: str) -> Callable[[Any], Any]:
    cls = backend_class(adapter)

    def make(listener: Any) -> Any:
        return cls(listener, language)
    return make
