"""What lldb-dap is started with: the arguments of ``launch`` (a program), ``attach`` (a pid or a
gdbserver) and ``attach`` with ``coreFile`` (post-mortem), and the lldb commands run before the target.

The commands (``initCommands``/``preRunCommands``) switch lldb's index cache on and load the
language's helpers: for Rust, the toolchain's own formatters (``lldb_lookup.py`` + ``lldb_commands``
from ``rustc --print sysroot``, found once per directory since a rust-toolchain.toml there may pick
another toolchain) — only for Rust, they break the C++ STL ones — a step-avoid pattern so step into
never stops in the standard library, and a breakpoint on ``rust_panic`` (how a panic is caught);
for C++, ``shims/cxx_formatters.py``. Each is prefixed with ``?`` so its output shows only on error
(lldb ≥ 18; lldb-vscode, LLVM ≤ 17, runs "?command" as an unknown command, so no prefix there).
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Any

from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.kit import sanitizers, shims
from polydbg.errors import UsageError

COMMAND_PREFIX = "`"  # lldb-dap's commandEscapePrefix: a repl line starting with it is an lldb command
QUIET = "?"  # lldb-dap's prefix for commands whose output is shown only on error (lldb ≥ 18)
CXX_FORMATTERS = str(shims.path(__file__, "cxx_formatters.py"))
THROWS = str(shims.path(__file__, "throws.py"))
# Step into never stops in the standard library (its source is not on this machine).
_RUST_STEP_AVOID = r"^(<|_\$LT\$)?(std|core|alloc)(::|\.\.)"

_rust_etc_cache: dict[str, str | None] = {}


def quiet_prefix(adapter_path: str | None) -> str:
    """The prefix that keeps a command's output quiet for this adapter (none for lldb-vscode)."""
    if adapter_path and os.path.basename(adapter_path).startswith("lldb-vscode"):
        return ""  # lldb-vscode (LLVM ≤ 17) runs "?command" as an unknown command
    return QUIET


async def rust_lldb_dir(cwd: str | None) -> str | None:
    """The toolchain's ``lib/rustlib/etc`` (lldb_lookup.py, lldb_commands), or None without rustc.
    rustc runs in ``cwd`` (the program's directory), so a rust-toolchain.toml there picks the toolchain."""
    key = cwd or ""
    if key in _rust_etc_cache:
        return _rust_etc_cache[key]
    rustc = shutil.which("rustc") or next(
        (str(p) for p in [Path.home() / ".cargo" / "bin" / "rustc"] if p.exists()), None)
    found = None
    if rustc:
        try:
            proc = await asyncio.create_subprocess_exec(rustc, "--print", "sysroot", stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.DEVNULL,
                                                        stdin=asyncio.subprocess.DEVNULL,
                                                        cwd=cwd if cwd and os.path.isdir(cwd) else None)
            out, _ = await asyncio.wait_for(proc.communicate(), 20)
            etc = Path(out.decode().strip()) / "lib" / "rustlib" / "etc"
            if (etc / "lldb_lookup.py").exists() and (etc / "lldb_commands").exists():
                found = str(etc)
        except (OSError, asyncio.TimeoutError):
            found = None
    _rust_etc_cache[key] = found
    return found


def common_arguments(language: str, rust_etc: str | None, quiet: str, panics: bool = True) -> dict[str, Any]:
    """The arguments every request shares: lldb-dap's settings and the lldb commands of the language."""
    init = []
    pre_run = []
    if language == "rust" and rust_etc:
        init += [f'{quiet}command script import "{rust_etc}/lldb_lookup.py"',
                 f'{quiet}command source -s 1 "{rust_etc}/lldb_commands"']
    if language == "rust":
        init.append(f"{quiet}settings set target.process.thread.step-avoid-regexp {_RUST_STEP_AVOID}")
        if panics:
            pre_run.append(f"{quiet}breakpoint set --name rust_panic")
    if language == "cpp":  # lldb 22 crashes on some GCC unique_ptrs without these (see the script)
        init.append(f'{quiet}command script import "{CXX_FORMATTERS}"')
        init.append(f'{quiet}command script import "{THROWS}"')  # exceptions by type (shims/throws.py)
    init.insert(0, f"{quiet}settings set symbols.enable-lldb-index-cache true")
    args: dict[str, Any] = {"commandEscapePrefix": COMMAND_PREFIX, "enableAutoVariableSummaries": True,
                            "enableSyntheticChildDebugging": False, "displayExtendedBacktrace": False}
    if init:
        args["initCommands"] = init
    if pre_run:
        args["preRunCommands"] = pre_run
    return args


def launch_arguments(spec: LaunchSpec, common: dict[str, Any]) -> dict[str, Any]:
    """``launch`` a program (its standard input, a file, is the backend's to add as ``stdio``)."""
    if not spec.program:
        raise UsageError("pass program: the executable to debug (built with debug info, e.g. gcc -g -O0)")
    args: dict[str, Any] = {"name": "polydbg", "type": "lldb-dap", "request": "launch",
                            "program": spec.program, "args": list(spec.args),
                            "stopOnEntry": spec.stop_on_entry, **common}
    if spec.cwd:
        args["cwd"] = spec.cwd
    env = sanitizers.environment(spec.program, spec.env)  # a sanitizer's report stops the program
    if env:
        args["env"] = dict(env)
    return args


def core_arguments(spec: LaunchSpec, common: dict[str, Any]) -> dict[str, Any]:
    """``attach`` to a core file (``common`` without the rust_panic breakpoint: nothing runs)."""
    args: dict[str, Any] = {"name": "polydbg", "type": "lldb-dap", "request": "attach",
                            "coreFile": spec.core, **common}
    if spec.program:
        args["program"] = spec.program
    return args


def attach_arguments(spec: AttachSpec, common: dict[str, Any]) -> dict[str, Any]:
    """``attach`` to a running process (pid) or to a gdbserver / lldb-server gdbserver (host:port)."""
    args: dict[str, Any] = {"name": "polydbg", "type": "lldb-dap", "request": "attach", **common}
    if spec.pid is not None:
        args["pid"] = spec.pid
    elif spec.port is not None:  # a gdbserver / lldb-server gdbserver listening on host:port
        args["gdb-remote-port"] = spec.port
        args["gdb-remote-hostname"] = spec.host_in_url  # lldb makes it connect://host:port
    else:
        raise UsageError("pass pid (a running process) or port (a gdbserver listening on host:port)")
    if spec.program:
        args["program"] = spec.program
    if spec.path_mappings:
        args["sourceMap"] = [[remote, local] for local, remote in spec.path_mappings]
    return args
