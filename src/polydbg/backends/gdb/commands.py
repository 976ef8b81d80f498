"""GDB/MI text both ways: the commands polydbg sends (a launched program's setup, arguments, path
mappings, logpoints, watchpoints, the Python it loads into gdb) and the records it reads back
(breakpoints, disassembly). Pure functions but one: ``rust_printer_dir`` asks rustc once where its gdb
pretty printers are."""

from __future__ import annotations

import asyncio
import logging
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

from polydbg import procs
from polydbg.backends.base import (
    BreakpointResult,
    DataBreakpoint,
    FunctionBreakpoint,
    Instruction,
    LaunchSpec,
    SourceBreakpoint,
)
from polydbg.backends.gdb.values import as_dict, to_int
from polydbg.backends.kit import shims
from polydbg.mi.client import mi_quote

log = logging.getLogger(__name__)


LOG_MARK = "<polydbg-log>"  # prefixes every logpoint line gdb prints (see GDB_PYTHON)
WATCH_FLAGS = {"write": "", "read": "-r ", "readWrite": "-a "}
CORE_SIGNAL = re.compile(r"Program terminated with signal (SIG[A-Z0-9]+), ([^.\n]*)")
REGISTER_LINE = re.compile(r"^(\w+)\s+(\S+)")

# gdb's Python at start: logpoint formatting and a refusing $_shell (shims/gdb_init.py).
RAISED_MARK = "<polydbg-raised>"  # prefixes each record of the log of raised C++ exceptions (see GDB_PYTHON)
GDB_PYTHON = shims.source(__file__, "gdb_init.py").replace("RAISED_MARK", RAISED_MARK).replace("MARK", LOG_MARK)


def breakpoint_result(bkpt: dict[str, Any]) -> BreakpointResult:
    """A BreakpointResult from a gdb ``bkpt`` tuple (pending, single or multiple locations)."""
    line = bkpt.get("line")
    locations = bkpt.get("locations")
    if line is None and isinstance(locations, list):
        line = next((loc.get("line") for loc in locations if isinstance(loc, dict) and loc.get("line")), None)
    pending = bkpt.get("addr") == "<PENDING>" or "pending" in bkpt
    message = None
    if pending:
        what = bkpt.get("pending") or bkpt.get("original-location") or "the location"
        message = f"pending: {what} is not in the program's code (yet); it resolves if a library loads it"
    return BreakpointResult(verified=not pending, line=to_int(line) or None if line else None, message=message)


def shell_args(args: tuple[str, ...]) -> tuple[str, bool]:
    """The argument string for ``-exec-arguments`` and whether it needs gdb's startup shell.

    Without the shell gdb splits arguments at whitespace and passes quotes literally, so plain
    arguments go as they are (no shell: faster start); any argument with whitespace, quotes or shell
    syntax is quoted for /bin/sh and the shell is used.
    """
    if all(a and not re.search(r"[\s'\"\\$`|&;<>(){}*?\[\]~#!]", a) for a in args):
        return " ".join(args), False
    return " ".join(shlex.quote(a) for a in args), True


def console(text: str) -> str:
    """A CLI command run through MI (its output arrives as console text)."""
    return f"-interpreter-exec console {mi_quote(text)}"


def program_commands(spec: LaunchSpec, tty: str, stdin_file: str | None) -> list[str]:
    """How a launched program runs: on its own terminal ``tty``, with its arguments (through gdb's startup
    shell only when they need one, or when ``stdin_file`` is redirected into it), in its directory and
    with its environment."""
    commands = [f"-inferior-tty-set {mi_quote(tty)}"]
    arguments, shell = shell_args(spec.args)
    if stdin_file is not None:  # the shell gdb starts the program with redirects its input
        arguments = f"{arguments} < {shlex.quote(stdin_file)}".strip()
        shell = True
    commands.append(f"-gdb-set startup-with-shell {'on' if shell else 'off'}")
    if arguments:
        commands.append(console("set args " + arguments))
    if spec.cwd:
        commands.append(f"-environment-cd {mi_quote(spec.cwd)}")
    for name, value in spec.env:
        commands.append(console(f"set environment {name}={value}"))
    return commands


def substitute_paths(mappings: tuple[tuple[str, str], ...]) -> list[str]:
    """``set substitute-path`` for each (local, remote) mapping: gdb reads the remote program's paths here."""
    return [console("set substitute-path " + gdb_arg(remote) + " " + gdb_arg(local)) for local, remote in mappings]


def logpoint_call(message: str) -> str:
    return f'$_polydbg_log("{message.encode().hex()}")'


def watchpoint_of(payload: dict[str, Any]) -> dict[str, Any]:
    return next((as_dict(payload[k]) for k in ("wpt", "hw-rwpt", "hw-awpt") if isinstance(payload.get(k), dict)), {})


def gdb_arg(text: str) -> str:
    """One argument for gdb commands that split with buildargv (quotes and backslashes honoured)."""
    if text and not re.search(r"[\s'\"\\]", text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def python_exec(source: str) -> str:
    return f"python exec(bytes.fromhex('{source.encode().hex()}').decode())"


def flatten_disassembly(items: list[Any]) -> list[Instruction]:
    out: dict[int, Instruction] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        group = item.get("src_and_asm_line") if isinstance(item.get("src_and_asm_line"), dict) else None
        if group is None and "line_asm_insn" in item:
            group = item
        if group is not None:
            path = group.get("fullname") or group.get("file")
            line = to_int(group.get("line")) or None
            for insn in group.get("line_asm_insn") or []:
                if isinstance(insn, dict):
                    ins = _instruction(insn, str(path) if path else None, line)
                    out.setdefault(ins.address, ins)
        else:
            ins = _instruction(item, None, None)
            out.setdefault(ins.address, ins)
    return [out[a] for a in sorted(out)]


def _instruction(insn: dict[str, Any], path: str | None, line: int | None) -> Instruction:
    func = insn.get("func-name")
    symbol = f"{func}+{insn.get('offset', 0)}" if func else None
    return Instruction(address=to_int(insn.get("address"), 0, 16), text=str(insn.get("inst", "")),
                       symbol=symbol, file=path, line=line)


_rust_dir_cache: dict[str, str | None] = {}


async def rust_printer_dir() -> str | None:
    """The toolchain's lib/rustlib/etc when it has gdb's Rust pretty printers (asked of rustc once)."""
    rustc = shutil.which("rustc")
    if rustc is None:
        return None
    if rustc in _rust_dir_cache:
        return _rust_dir_cache[rustc]
    found = None
    try:
        process = await procs.spawn([rustc, "--print", "sysroot"], stdin=asyncio.subprocess.DEVNULL,
                                    stderr=asyncio.subprocess.DEVNULL)
        try:
            out, _ = await asyncio.wait_for(process.communicate(), 15.0)
        finally:
            await procs.reap(process, 1.0)
        etc = Path(out.decode().strip()) / "lib" / "rustlib" / "etc"
        if (etc / "gdb_load_rust_pretty_printers.py").is_file():
            found = str(etc)
    except (OSError, asyncio.TimeoutError):
        log.debug("cannot ask rustc for its sysroot", exc_info=True)
    _rust_dir_cache[rustc] = found
    return found


def line_key(bp: SourceBreakpoint) -> tuple[Any, ...]:
    return (bp.line, bp.condition, bp.hit_condition, bp.log_message)


def function_key(bp: FunctionBreakpoint) -> tuple[Any, ...]:
    return (bp.name, bp.condition, bp.hit_condition)


def watch_key(bp: DataBreakpoint) -> tuple[Any, ...]:
    return (bp.expression, bp.access)
