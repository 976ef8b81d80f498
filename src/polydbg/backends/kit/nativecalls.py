"""What the native debuggers' call traces share (gdb's and lldb's): names as their linespecs, a finished call as
their shims write it (one JSON object), and the closest names to one that binds nowhere.

A shim writes a call as ``{"f"|"n": name, "a": [[arg, value], …], "r": returned, "x": raised, "c": caller,
"t": thread, "d": µs, "s": when it began, "file", "line", "depth": a callee's level}``; one still holding ``began``
had not ended.

Callees (a trace's depth): both shims read the machine code of each function a recorded call runs, once, for its
direct calls whose targets are the program's own functions with debug info (a source file on disk that is not a
runtime header: not libc's, the PLT's, libstdc++'s templates or the C runtime's), and bind those as they bind a
named function, to the depth. A callee's call is recorded when the nearest frame of the program's own above it
(the runtime's and libraries' frames between passed through) is an open recorded call of its thread, one level
below it; called from anywhere else it answers at once and records nothing. An indirect call (a pointer, a
virtual call, a ``std::function``) cannot be read from the code: its target is recorded only when it is bound
anyway, and the functions making such calls are named in the answer's note.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import re
from typing import Any

from polydbg.backends.recording import CallRecord

NM_TIMEOUT_S = 5.0
POINTERS_NAMED = 5  # the functions a note names
INLINED = "inlined "  # before a function's name that ``record_of`` gathered as inlined, not as calling through pointers
_PARAMETERS = re.compile(r"(?<=[\w>])\((?:[^()]|\([^()]*\))*\)(?: const)?$")  # C++'s signature after a name
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")  # the legacy mangling's hash after a Rust function's path
_CALLER = re.compile(r"^(.*) \(([^()]*)\)$")  # "function (file:line)"
NAMES = "name it as func, file.c:func, Class::method or module::func"


def linespec(name: str) -> str:
    """An agent's name as a debugger's linespec: ``Class.method`` → ``Class::method`` (a file's ``a.c:f`` kept)."""
    where, colon, function = name.rpartition(":") if re.search(r"\.\w+:\w", name) else ("", "", name)
    if "::" not in function and "." in function:
        function = function.replace(".", "::")
    return f"{where}{colon}{function}"


def without_parameters(name: str) -> str:
    """``Parser::parse(std::string const&)`` → ``Parser::parse``; Rust's ``crate::total::h0123…`` → ``crate::total``;
    a template's return type (lldb's ``int twice<int>(int)``) left out too."""
    name = _RUST_HASH.sub("", _PARAMETERS.sub("", name))
    nesting, space = 0, -1
    for index, char in enumerate(name):
        nesting += (char in "<(") - (char in ">)")
        if char == " " and nesting == 0:
            space = index
    return name if space < 0 or "operator" in name else name[space + 1:]


def record_of(line: str, pointers: list[str]) -> CallRecord | None:
    """A finished call as a shim wrote it (None: not one, or the shim's own error); a followed function that calls
    through pointers (``{"pointers": name}``) or functions inlined into one (``{"inlined": [name…]}``) are added to
    ``pointers`` for ``callee_notes`` instead."""
    try:
        call: dict[str, Any] = json.loads(line)
    except ValueError:
        return None
    if not isinstance(call, dict) or "error" in call:
        return None
    if "pointers" in call:
        pointers.append(without_parameters(str(call["pointers"])))
        return None
    if "inlined" in call:
        pointers.extend(f"{INLINED}{without_parameters(str(name))}" for name in call["inlined"] or [])
        return None
    raised = call.get("x")
    caller = call.get("c")
    if isinstance(caller, str) and (where := _CALLER.match(caller)) is not None:
        caller = f"{without_parameters(where.group(1))} ({where.group(2)})"
    return CallRecord(
        function=without_parameters(str(call.get("n") or call.get("f"))),
        args=tuple((str(n), str(v)) for n, v in call.get("a") or []),
        returned=None if raised else call.get("r"), raised=raised, caller=caller, thread=call.get("t"),
        duration_us=round(float(call["d"]), 1) if "d" in call else None, file=call.get("file"),
        line=call.get("line"), ended="began" not in call, started=float(call["s"]) if "s" in call else None,
        depth=int(call.get("depth") or 0))


def callee_notes(told: list[str]) -> list[str]:
    """The notes of a trace with a depth: the followed functions that call through pointers, and the program's
    functions the compiler inlined into followed ones (``INLINED`` before their names), as ``record_of`` gathered
    them."""
    inlined = sorted({name.removeprefix(INLINED) for name in told if name.startswith(INLINED)})
    pointers = sorted({name for name in told if not name.startswith(INLINED)})
    notes = []
    if pointers:
        notes.append(f"calls through pointers (virtual calls, callbacks) in {_listed(pointers)} are followed only "
                     "to functions traced otherwise: name their targets")
    if inlined:
        notes.append(f"{_listed(inlined)} inlined by the compiler into the functions followed: no calls to record "
                     "(build without optimisation, -O0, to see them)")
    return notes


def _listed(names: list[str]) -> str:
    return ", ".join(names[:POINTERS_NAMED]) + (f" and {len(names) - POINTERS_NAMED} more"
                                                if len(names) > POINTERS_NAMED else "")


async def closest_functions(program: str | None, name: str) -> list[str]:
    """The functions the program's executable defines (``nm``: its own symbols, not its libraries') nearest to
    ``name``."""
    if not program:
        return []
    try:
        process = await asyncio.create_subprocess_exec("nm", "-C", "--defined-only", program,
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.DEVNULL)
        out, _ = await asyncio.wait_for(process.communicate(), NM_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError):
        return []
    names = set()
    for line in out.decode(errors="replace").splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("T", "t") and not parts[2].startswith(("_", ".")):
            names.add(without_parameters(parts[2]))
    return difflib.get_close_matches(linespec(name).rpartition(":")[2], sorted(names), n=5, cutoff=0.6)
