"""Which backends exist, which languages each debugs, what language a program is in, and what the layers
above need to know about a language.

Each backend package describes itself in ``info.py`` with a ``BackendInfo`` (languages, how to find its
debugger, install hint, exception filters, how its expressions are checked and can escape to raw
commands, its runtime's flags and environment); ``doctor``, the session and the policy read only these,
through the functions here, so none of them names a language or an adapter. A backend's module is
imported only when a session needs it (start-up stays cheap), and a backend is the default for a
language only when its debugger is found on this machine.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import stat
from collections.abc import Callable, Mapping, Sequence
from typing import cast

from polydbg.backends import buildhint, shebang
from polydbg.backends.base import Backend, BackendFactory, BackendInfo, BackendListener, CommandEscape
from polydbg.backends.debugpy import info as debugpy_info
from polydbg.backends.delve import info as delve_info
from polydbg.backends.gdb import info as gdb_info
from polydbg.backends.java import info as java_info
from polydbg.backends.lldb import info as lldb_info
from polydbg.backends.node import info as node_info
from polydbg.backends.rdbg import info as rdbg_info
from polydbg.backends.timecontrol import RecordMode
from polydbg.backends.xdebug import info as xdebug_info
from polydbg.errors import UsageError, did_you_mean, echo

BACKENDS: dict[str, BackendInfo] = {info.name: info for info in (
    debugpy_info.INFO, lldb_info.INFO, gdb_info.INFO, delve_info.INFO, node_info.INFO, java_info.INFO,
    rdbg_info.INFO, xdebug_info.INFO)}

# What is assumed of an adapter the registry does not know (a test's fake backend): nothing special.
UNKNOWN = BackendInfo(name="unknown", target="", languages=(), find=lambda: None, install="")
DEFAULT_ADAPTER = "debugpy"  # what an attach to a debug server is, when nothing says otherwise

_ALIASES = {"c++": "cpp", "py": "python", "golang": "go", "rs": "rust", "js": "javascript", "node": "javascript",
            "ts": "typescript", "jvm": "java", "kt": "kotlin"}
_SOURCE_EXTENSIONS = {".py": "python", ".pyw": "python", ".go": "go", ".c": "c", ".h": "c", ".cc": "cpp",
                      ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".rs": "rust", ".js": "javascript",
                      ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript", ".ts": "typescript",
                      ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
                      ".java": "java", ".jar": "java", ".class": "java", ".kt": "kotlin", ".rb": "ruby", ".php": "php"}
_COMPILED = frozenset({"c", "cpp", "rust"})
_NATIVE = frozenset({"c", "cpp", "rust", "go"})
_NAMES = {"c": "C", "cpp": "C++", "rust": "Rust", "go": "Go", "python": "Python", "javascript": "JavaScript",
          "typescript": "TypeScript", "java": "Java", "kotlin": "Kotlin", "ruby": "Ruby",
          "php": "PHP"}
# Programs of languages without a backend here: named in the refusal.
_OTHER_LANGUAGES = {".kts": "Kotlin script",
                    ".lua": "Lua", ".pl": "Perl", ".sh": "shell", ".bash": "shell",
                    ".cs": "C#", ".swift": "Swift", ".zig": "Zig", ".scala": "Scala", ".ex": "Elixir",
                    ".exs": "Elixir", ".erl": "Erlang", ".hs": "Haskell", ".r": "R", ".jl": "Julia", ".dart": "Dart"}
# Runtimes of the backends' languages (``python3.11`` → the debugpy backend's), and interpreters of languages without
# a backend (named in answers): an executable by one of these names may be an interpreter given as the program.
_RUNTIMES = {name: info for info in BACKENDS.values() for name in info.process_names}
_OTHER_INTERPRETERS = {"perl": "Perl", "lua": "Lua", "luajit": "Lua", "bash": "shell",
                       "sh": "shell", "dash": "shell", "zsh": "shell", "ksh": "shell", "fish": "shell",
                       "deno": "Deno", "bun": "Bun", "tclsh": "Tcl", "rscript": "R", "julia": "Julia"}
# Commands of a #! line that run a language's sources without being its runtime's name.
_SCRIPT_RUNNERS = {"tsx": "typescript", "ts-node": "typescript", "ts-node-esm": "typescript"}
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
        raise UsageError(f"unknown adapter {echo(adapter)}{did_you_mean(adapter, BACKENDS)} known: {sorted(BACKENDS)}")
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
        hint = did_you_mean(language, [*languages(), *_ALIASES])
        raise UsageError(f"language {echo(language)} is not supported{hint} supported: {languages()}")
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


def infer_language(program: str | None, module: str | None, language: str | None, adapter: str | None = None,
                   args: Sequence[str] = ()) -> str:
    """The language to debug ``program`` as: explicit, else from its extension, its contents (an executable's
    bytes, a script's ``#!`` line).

    A program polydbg cannot debug is refused here with what to do instead: a script of a language
    it has no backend for, an interpreter given a program to run (a ``language`` or ``adapter`` says to
    debug it as native code), a native language asked of a file that is no executable.
    """
    if module:
        return normalize_language(language) if language else "python"
    if not program:
        raise UsageError("pass program (or module for python -m)")
    if os.path.isdir(program):
        from polydbg.backends.gdb.rr import trace_of  # gdb's modules load when gdb is used
        if trace_of(program) is not None:  # replayed by gdb with record="rr"; its language is not in it
            return normalize_language(language) if language else "c"
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
                         f"debugs {_debugged()}")
    sniffed = sniff_binary(program)
    if not language and not adapter:  # an explicit language or adapter says what the executable is to be
        _refuse_an_interpreter_running_a_program(program, sniffed, args)
    if language:
        lang = normalize_language(language)
        if lang in _NATIVE and sniffed is None:
            raise UsageError(f"{echo(program)} is not a native executable, so it cannot be debugged as {lang}: pass "
                             "the executable built with debug info (build= can build it first)")
        if lang not in _NATIVE and sniffed is not None:
            runtime = _RUNTIMES.get(_interpreter(program) or "")
            instead = (f"pass the {_NAMES.get(lang, lang)} program as program and this interpreter as "
                       f"{runtime.runtime_argument}=" if runtime is not None and runtime.runtime_argument else
                       f"pass the {_NAMES.get(lang, lang)} program")
            raise UsageError(f"{echo(program)} is a native executable, not a {_NAMES.get(lang, lang)} program; "
                             f"{instead}, or omit language= to debug the executable itself (it is {sniffed})")
        return lang
    if lang in _COMPILED:
        raise UsageError(buildhint.refusal(os.path.abspath(program), lang, _NAMES.get(lang, lang)))
    if lang is not None:
        return lang
    if sniffed is not None:
        return sniffed
    words = shebang.command(program)
    if words:
        return _script_language(program, words)
    raise UsageError(f"cannot tell the language of {echo(program)}; pass language= (one of {languages()})")


def _refuse_an_interpreter_running_a_program(program: str, sniffed: str | None, args: Sequence[str]) -> None:
    """An executable named like a backend's runtime (``python3``, ``node``, ``java``) is that runtime, given a
    program to run, when it has ``args`` (or is a wrapper script, like pyenv's shims): the agent means that
    program. Without ``args``, or named like a runtime polydbg has no backend for (``lua``), an executable is
    a native program like any other: a self-built interpreter is debugged as C."""
    name = _interpreter(program)
    runtime = _RUNTIMES.get(name or "")
    if runtime is None or (sniffed is not None and not args):
        return
    kind = _NAMES.get(runtime.languages[0], runtime.languages[0])
    module = f", a module as module= (run as {runtime.module_runner})" if runtime.module_runner else ""
    interpreter = (f"this interpreter as {runtime.runtime_argument}=" if runtime.runtime_argument else
                   f"the {name} flags as runtime_args")
    what = "a wrapper script that starts it" if sniffed is None else "given a program to run"
    native = f"; to debug the interpreter itself as native code, pass language={sniffed!r}" if sniffed else ""
    raise UsageError(f"{echo(program)} is the {name} interpreter ({what}). To debug that {kind} program, pass it "
                     f"as program{module}, its arguments as args and {interpreter}{native}")


def _script_language(program: str, words: Sequence[str]) -> str:
    """The language of a script by the command of its ``#!`` line (``words``), or a refusal naming it."""
    name = _command_name(words[0])
    runtime = _RUNTIMES.get(name)
    if runtime is not None:
        return runtime.languages[0]
    if name in _SCRIPT_RUNNERS:
        return _SCRIPT_RUNNERS[name]
    line = " ".join(words)
    other = _OTHER_INTERPRETERS.get(name)
    if other == "shell":
        raise UsageError(f"{echo(program)} is a shell script (its #! line runs {echo(line)}), and polydbg has no "
                         "shell debugger: pass the program the script starts as program, with its arguments as args")
    if other is not None:
        raise UsageError(f"{echo(program)} is a {other} program (its #! line runs {echo(line)}), and polydbg has no "
                         f"{other} debugger yet; it debugs {_debugged()}")
    raise UsageError(f"cannot tell the language of {echo(program)}: its #! line runs {echo(line)}, which is no "
                     f"runtime polydbg knows; pass language= (one of {languages()})")


def _debugged() -> str:
    return ", ".join(_NAMES.get(n, n) for n in languages())


def named_program(program: str, language: str | None, runtime_args: Sequence[str]) -> str | None:
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
    """The runtime or interpreter an executable is named as (``python3.11`` → python), or None."""
    name = _command_name(os.path.realpath(path))
    return name if name in _RUNTIMES or name in _OTHER_INTERPRETERS else None


def _command_name(command: str) -> str:
    """A command's name without its directory or version (``/usr/bin/python3.11`` → python)."""
    return re.sub(r"[-.\d]+$", "", os.path.basename(command).lower())


def choose_adapter(language: str, adapter: str | None, record: RecordMode | None = None) -> str:
    """The adapter for ``language``: the one asked for, else (to ``record``, one that records that way) the first
    one installed here."""
    choices = adapters_for(language)
    if record is not None and not adapter:
        recording = [name for name in choices if record in BACKENDS[name].records]
        if not recording:
            raise UsageError(f"no debugger here records {language} programs to run them backwards (only gdb, for C, "
                             "C++ and Rust); launch without record, and use debug_trace to record values over a run")
        choices = recording
    if adapter:
        if adapter not in choices:
            raise UsageError(f"adapter {echo(adapter)} cannot debug {language}{did_you_mean(adapter, choices)} use one "
                             f"of {choices}")
        if record is not None and record not in BACKENDS[adapter].records:
            able = [name for name in choices if record in BACKENDS[name].records]
            instead = f"launch with adapter={able[0]!r}" if able else "launch without record"
            raise UsageError(f"{adapter} cannot record {language} programs to run them backwards; {instead}")
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


# -- what the layers above ask about a language, a session's adapter, or every backend --------------------------


def expression_check(language: str) -> Callable[[str | None, str | None], None] | None:
    """The check (condition, log_message) → raises ``UsageError`` of the backend that debugs ``language`` first,
    or None where expressions are read only by the debugger at the hit."""
    for name in adapters_for(language):
        target = BACKENDS[name].expression_check
        if target is not None:
            module, _, function = target.partition(":")
            return cast("Callable[[str | None, str | None], None]", getattr(importlib.import_module(module), function))
    return None


def command_dirs(cwd: str | None, runtimes: Mapping[str, str]) -> list[str]:
    """The directories every backend says a project keeps its commands in (``BackendInfo.command_dirs``), for a
    program named without a directory; ``runtimes`` are the launch's runtime arguments (``python``, ``node``)."""
    found: list[str] = []
    for info in BACKENDS.values():
        if info.command_dirs is not None:
            module, _, function = info.command_dirs.partition(":")
            dirs = getattr(importlib.import_module(module), function)
            runtime = runtimes.get(info.runtime_argument) if info.runtime_argument else None
            found.extend(d for d in dirs(cwd, runtime) if d not in found)
    return found


def language_of_source(path: str) -> str | None:
    """The language of a source file by its extension (a breakpoint's file), or None."""
    return _SOURCE_EXTENSIONS.get(os.path.splitext(path)[1].lower())


def _infos(adapter: str | None) -> list[BackendInfo]:
    """``adapter``'s facts; every backend's with None (no session yet); none for an adapter the registry lacks."""
    return list(BACKENDS.values()) if adapter is None else [BACKENDS[adapter]] if adapter in BACKENDS else []


def command_escapes(adapter: str | None) -> list[tuple[re.Pattern[str], str]]:
    """How expressions reach raw commands in ``adapter`` (every backend's ways with None: no session yet)."""
    return [(_compiled(escape.pattern), escape.why) for info in _infos(adapter)
            if (escape := info.command_escape) is not None]


def read_only_command(adapter: str | None, text: str) -> bool:
    """Whether debug_command ``text`` is a query ``adapter`` declares read-only (with None: some backend's)."""
    words = text.split(None, 1)
    return bool(words) and any(words[0].lower() in info.read_only_commands for info in _infos(adapter))


def read_only_commands(adapter: str | None) -> dict[str, tuple[str, ...]]:
    """The read-only debug_command queries of ``adapter`` (with None: of every backend), by backend."""
    return {info.name: info.read_only_commands for info in _infos(adapter) if info.read_only_commands}


def command_escape_names() -> list[str]:
    escapes: list[CommandEscape] = [i.command_escape for i in BACKENDS.values() if i.command_escape is not None]
    return [escape.short for escape in escapes]


def runtime_argument(adapter: str) -> str | None:
    """The debug_launch argument naming the runtime executable ``adapter``'s programs run on."""
    return info(adapter).runtime_argument


def runtime_arguments() -> list[str]:
    return list(dict.fromkeys(i.runtime_argument for i in BACKENDS.values() if i.runtime_argument))


def harmless_runtime_flag(flag: str) -> bool:
    """A runtime flag that runs no other code, for some backend's runtime."""
    return any(_compiled(i.runtime_flags, re.DOTALL).fullmatch(flag) for i in BACKENDS.values() if i.runtime_flags)


def runtime_path_flags() -> dict[str, str]:
    """Runtime flags whose value is a list of paths (a classpath, a document root), which must lie inside the
    policy's roots → what each path is (the meanings of backends sharing a flag joined: "x or y")."""
    meanings: dict[str, list[str]] = {}
    for backend in BACKENDS.values():
        for flag, meaning in backend.runtime_path_flags.items():
            if meaning not in meanings.setdefault(flag, []):
                meanings[flag].append(meaning)
    return {flag: " or ".join(said) for flag, said in meanings.items()}


def injecting_env(name: str) -> bool:
    """Whether setting ``name`` makes some backend's runtime (or the build its debugger runs) load other code."""
    upper = name.upper()
    for backend in BACKENDS.values():
        env = backend.injecting_env
        if upper in env.names or (upper.startswith(env.prefixes) and upper not in env.harmless):
            return True
    return False


def language_of_process(executable: str) -> str:
    """The language of a running process by its executable: a backend's runtime, else a native program."""
    base = os.path.basename(executable).lower()
    for backend in BACKENDS.values():
        if any(base == n or (base.startswith(n) and not base[len(n)].isalpha()) for n in backend.process_names):
            return backend.languages[0]
    return sniff_binary(executable) or "c"


def module_runner() -> str:
    """How debug_launch's ``module`` runs, for answers about it."""
    return next(i.module_runner for i in BACKENDS.values() if i.module_runner)


def attach_hint() -> str:
    """An example of a debug server debug_attach can reach, for answers that ask for one."""
    return next(i.attach_hint for i in BACKENDS.values() if i.attach_hint)


@functools.cache
def _compiled(pattern: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile(pattern, flags)
