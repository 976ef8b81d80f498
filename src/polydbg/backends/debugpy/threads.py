"""Calls into ``shims/threads.py`` inside the program, and its answers in the Backend's terms (pure, no adapter).

The helper is sent with its first call (defined once per process as ``_polydbg_threads``, so an attached program
needs nothing of the launch shim) and answers in JSON, read from an evaluation in the ``clipboard`` context (in
``repl`` pydevd's safe repr cuts nested values).
"""

from __future__ import annotations

import ast
import contextlib
import json
from typing import Any

from polydbg.backends.base import Frame, Lock, Task, ThreadLocks
from polydbg.backends.debugpy import python
from polydbg.backends.kit import shims

MODULE = "_polydbg_threads"
HELPER = shims.source(__file__, "threads.py")


def call(function: str, *args: Any) -> str:
    """The expression that runs the helper's ``function(*args)`` in the program (JSON-able arguments)."""
    return call_in(MODULE, HELPER, function, *args)


def call_in(name: str, source: str, function: str, *args: Any) -> str:
    """The expression that runs ``function(*args)`` of the shim ``source``, defined once in the program as the module
    ``name`` (kept in ``sys.modules``, with its state, for the next call)."""
    code, given = source.encode().hex(), json.dumps(args).encode().hex()
    module = (f"(s.modules.get({name!r}) or s.modules.setdefault({name!r}, (lambda m: (exec(bytes.fromhex("
              f"'{code}').decode(), m.__dict__), m)[1])(__import__('types').ModuleType({name!r}))))")
    return (f"(lambda s: {module}.{function}(*__import__('json').loads(bytes.fromhex('{given}').decode())))"
            "(__import__('sys'))")


def answer(value: str) -> Any:
    """The helper's JSON from an evaluation's value (a string's repr, or the string itself)."""
    text = value
    if value[:1] in ("'", '"'):
        with contextlib.suppress(ValueError, SyntaxError):
            text = ast.literal_eval(value)
    return json.loads(text)


def wanted(thread_ids: list[int], names: dict[int, str], tops: dict[int, Frame | None]) -> list[list[Any]]:
    """The threads as the helper matches them to the program's: [id, name, top function, top line]."""
    return [[tid, names[tid], (tops.get(tid) or Frame("", None, None)).name or None,
             (tops.get(tid) or Frame("", None, None)).line] for tid in thread_ids if tid in names]


def thread_locks(found: dict[str, Any]) -> dict[int, ThreadLocks]:
    """The helper's ``locks`` answer as ThreadLocks, for the threads that hold, wait for or wait in something."""
    locks = {key: Lock(id=key, name=str(name), kind=str(kind), owner=owner if isinstance(owner, int) else None)
             for key, (name, kind, owner) in found.get("locks", {}).items()}
    out: dict[int, ThreadLocks] = {}
    for tid, state in found.get("threads", {}).items():
        holds = tuple(locks[key] for key in state.get("holds") or () if key in locks)
        waits = locks.get(state.get("waits") or "")
        if holds or waits or state.get("state"):
            out[int(tid)] = ThreadLocks(holds=holds, waits_for=waits, state=state.get("state"))
    return out


def _frames(listed: list[list[Any]], mine_only: bool) -> list[Frame]:
    """A coroutine chain's frames; with ``mine_only`` (justMyCode) the library's are left out, as in stacks, but for
    the ends (where the chain starts and what it awaits)."""
    frames = [Frame(name=str(name), file=str(file), line=int(line)) for name, file, line in listed]
    if not mine_only or len(frames) < 3:
        return frames
    return [f for i, f in enumerate(frames) if i in (0, len(frames) - 1) or not python.is_library(f.file or "")]


def tasks(found: list[dict[str, Any]], mine_only: bool) -> list[Task]:
    """The helper's ``tasks`` answer as Tasks."""
    return [Task(name=str(t["name"]), awaiting=str(t["awaiting"]), frames=tuple(_frames(t["frames"], mine_only)))
            for t in found]


def callers(found: list[list[Any]], mine_only: bool) -> list[tuple[str, list[Frame]]]:
    """The helper's ``async_callers`` answer: (how each task awaits the one inside it, its frames)."""
    return [(str(how), _frames(frames, mine_only)) for how, frames in found]
