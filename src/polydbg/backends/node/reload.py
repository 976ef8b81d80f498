"""Edited files put into the running program (``Backend.reload``): V8's LiveEdit, ``Debugger.setScriptSource``.

**Which files.** Every loaded script of the user's (every target: the main thread, workers, child processes each
have their own copy) whose file on disk is not what V8 runs, and a dependency's (``node_modules``: an agent trying a
fix in a library it stopped in) written since V8 parsed it. V8's source (``Debugger.getScriptSource``) is the file
itself, for a CommonJS module (Node ≥ 12 compiles it with ``vm.compileFunction``: the wrapper is not in the source)
as for an ES module; a source in Node's older wrapper is compared, and replaced, wrapped (``_wanted``). A file
whose script has a source map (tsc's output) is reloaded when its generated file changed (rebuilt), its map read
again.

**All or none.** Every change is tried first (``dryRun``): a syntax error, or a change V8 refuses, changes nothing
and says what to do. Then each is put in; one refused after all (nothing should be) puts back those already in.

**Re-entering** (checked on Node 20.20, V8 11.3):

- a changed function that is not running is taken at its next call: nothing to re-enter (a loop's caller stopped
  between calls);
- the function the thread is stopped in: V8 refuses to change a running function (``BlockedByActiveFunction``)
  unless it is the top frame's and only call, with ``allowTopFrameEditing``: V8 then restarts the frame itself
  and pauses at its first statement (a ``Debugger.resumed``, then ``paused``, after the answer). It does so for a
  ``dryRun`` with ``allowTopFrameEditing`` too (the code unchanged, the frame restarted): changes are tried
  without it;
- a changed function further down the stack: ``Debugger.restartFrame(mode: "StepInto")`` drops the frames above
  it and pauses at its start by itself (a ``Debugger.stepInto`` after it would step on, into its first call);
  it is then the top frame, changed as above. Which frame: V8 does not say which function blocks a change, so
  each running function's part of the edit (the lines changed inside it) is tried alone (``_frame_to_restart``);
  the outermost one V8 refuses is the one to restart, and what remains of the edit must go in as it is.
- V8 refuses a change to a script's top level while it runs (a CommonJS module whose top-level code called the
  function stopped in: a comment added there too), to an ES module's top level at any time
  (``BlockedByTopLevelEsModuleChange``) and to a generator or async function suspended at a yield or await.

The pauses of a restart are the reload's own (``Target.restarting``, ``stops``): the stop shown moves to the
function's start, and no stop is reported. V8 drops every breakpoint of a script it changed (those the change
did not touch too): they are set again at their lines in the new code (``Breakpoints.replace_in``).
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import os
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from polydbg.backends.kit import timeouts
from polydbg.backends.node import launcher, lexical, sourcemap, typescript
from polydbg.backends.node.breakpoints import Breakpoints
from polydbg.backends.node.scripts import Script, position
from polydbg.backends.node.sourcemap import SourceMap
from polydbg.backends.node.target import Target
from polydbg.backends.node.targets import Targets
from polydbg.backends.timecontrol import Reloaded, ReloadRefused
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

OK = "Ok"
ACTIVE = "BlockedByActiveFunction"
# Node's CommonJS wrapper before it compiled modules with vm.compileFunction (Node < 12), and what else wraps a file
# the same way: the source V8 has is then the file inside it.
WRAPPER = ("(function (exports, require, module, __filename, __dirname) { ", "\n});")
_REFUSALS = {
    "BlockedByActiveGenerator": "it changes a generator or async function that is suspended (waiting at a yield or "
                                "an await), which V8 cannot change until it finishes: let it finish, or debug_restart",
    "BlockedByTopLevelEsModuleChange": "it changes the ES module's top-level code (outside any function: an import, "
                                       "a statement, a comment there too), which V8 never changes in a loaded "
                                       "module: keep the edit inside functions, or debug_restart",
}
_HEADER = re.compile(r"function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("
                     r"|([A-Za-z_$][\w$]*)\s*[:=]\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)"
                     r"|^\s*(?:(?:static|async|get|set)\s+)*([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{")
_NOT_A_FUNCTION = frozenset({"if", "for", "while", "switch", "catch", "with", "function", "return"})

Hunk = tuple[int, int, int, int]  # old source[a:b] becomes new source[c:d]


@dataclass(eq=False)
class Change:
    target: Target
    script: Script
    file: str  # the user's file (what replaced names)
    old: str  # the source V8 runs
    new: str  # the source V8 is to run
    top: bool = False  # the stopped frame's function changes: V8 restarts it (allowTopFrameEditing)
    restart: int | None = None  # the frame (in target.frames) to restart first: the change is then the top's
    shown: tuple[str, str] | None = None  # the user's file before and after, when V8 runs what it compiles to
    map: SourceMap | None = None  # the new source's map, when V8 runs what the file compiles to


async def reload(targets: Targets, breakpoints: Breakpoints, thread_id: int | None, cwd: str | None) -> Reloaded:
    """Find the edited files, try every change, re-enter the stopped thread's changed function, put them in."""
    shown = targets.find(thread_id) if thread_id is not None else None
    stopped = shown if shown is not None and shown.paused else None
    changes = [change for target in targets.live() for change in await _edited(target, cwd)]
    if not changes:
        return Reloaded()
    for change in changes:
        await _plan(change, change.target is stopped)
    restart = max((change.restart for change in changes if change.restart), default=None)
    reentered: str | None = None
    async with _dependencies_pause(stopped, breakpoints, changes):
        if restart is not None and stopped is not None:
            await _restart(stopped, restart)
        done: list[Change] = []
        try:
            for change in sorted(changes, key=lambda c: c.top):  # V8's restart of the top frame last: it moves
                await _put(change, moved=restart is not None)
                done.append(change)
        except BaseException:
            await _put_back(done)
            raise
        if any(change.top for change in changes) and stopped is not None:
            await _landed(stopped)
            reentered = _function_here(stopped)
    for target in {change.target for change in changes}:
        await breakpoints.replace_in(target, {c.file for c in changes if c.target is target})
    replaced = _replaced(changes)
    return Reloaded(replaced, reentered, _notes(changes, reentered))


@contextlib.asynccontextmanager
async def _dependencies_pause(stopped: Target | None, breakpoints: Breakpoints, changes: list[Change]
                              ) -> AsyncIterator[None]:
    """A dependency's function (``node_modules``: blackboxed) re-entered: V8 skips the pause its restart ends in, and
    the function would run to its end unseen (the thread pausing at the next statement outside the blackbox). The
    dependencies are let out of the blackbox until the restart has landed."""
    if stopped is None or not any(change.script.internal and change.target is stopped
                                  and (change.top or change.restart) for change in changes):
        yield
        return
    patterns = breakpoints.blackbox_patterns()
    node_only = [pattern for pattern in patterns if "node_modules" not in pattern]
    await stopped.request("Debugger.setBlackboxPatterns", {"patterns": node_only})
    try:
        yield
    finally:
        with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
            await stopped.request("Debugger.setBlackboxPatterns", {"patterns": patterns})


# -- which files -------------------------------------------------------------------------------------------

async def _edited(target: Target, cwd: str | None) -> list[Change]:
    """The scripts of ``target`` whose files on disk are not what V8 runs (a TypeScript file: not what tsx loaded); of
    a dependency's (``node_modules``, often thousands) only those written since V8 parsed them are read."""
    found = []
    for script in target.scripts.files():
        if script.path is None or (script.internal and not _written_since(script.path, script.parsed_ns)):
            continue
        try:
            with open(script.path, encoding="utf-8") as handle:
                disk = handle.read()
            source = await target.source(script.id)
        except (OSError, UnicodeDecodeError, AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
            continue
        if source is None:
            continue
        if script.map is not None and script.path.lower().endswith(launcher.TS_EXTENSIONS):
            loaded = typescript.loaded_text(source.text, script.path) or script.loaded
            if loaded is not None and loaded != disk:
                done = await typescript.compile_edited(script.path, loaded, disk, source.text, cwd)
                found.append(Change(target, script, script.path, source.text, done.source, shown=(loaded, disk),
                                    map=done.map))
            continue
        new = _wanted(source.text, disk)
        if new is not None:
            found.append(Change(target, script, script.path, source.text, new))
    return found


def _written_since(path: str, parsed_ns: int) -> bool:
    try:
        return os.stat(path).st_mtime_ns > parsed_ns
    except OSError:
        return False


def _wanted(running: str, disk: str) -> str | None:
    """What V8 should run for a file now on disk (None: what it runs already). Node strips a byte order mark."""
    disk = disk.removeprefix("\ufeff")
    if running.startswith(WRAPPER[0]) and running.endswith(WRAPPER[1]) and not disk.startswith(WRAPPER[0]):
        disk = WRAPPER[0] + disk + WRAPPER[1]
    return None if disk == running else disk


# -- trying ------------------------------------------------------------------------------------------------

async def _try(change: Change, source: str) -> dict[str, Any]:
    """V8's answer to a change tried, not made: its ``status`` (and ``exceptionDetails`` of a compile error)."""
    params = {"scriptId": change.script.id, "scriptSource": source, "dryRun": True}
    try:
        return await change.target.request("Debugger.setScriptSource", params)
    except AdapterRequestError as exc:  # an older V8 refuses by an error rather than a status
        return {"status": "CompileError", "exceptionDetails": {"text": exc.message}}


async def _status(change: Change, source: str) -> str:
    return str((await _try(change, source)).get("status") or OK)


async def _plan(change: Change, stopped_here: bool) -> None:
    """How ``change`` goes in: as it is, or re-entering the stopped thread's function it changes (the top frame's, or
    one further down, restarted first); else ``ReloadRefused`` saying why, nothing changed. A change is tried
    without ``allowTopFrameEditing``: V8 restarts the top frame even for a dry run with it (Node 20.20)."""
    answer = await _try(change, change.new)
    status = str(answer.get("status") or OK)
    if status == OK:
        return
    if status == ACTIVE and stopped_here:
        frame = await _frame_to_restart(change)
        if frame is not None:
            change.top = True
            change.restart = frame or None
            return
    raise ReloadRefused(_refusal(change, status, answer, stopped_here))


def _refusal(change: Change, status: str, answer: dict[str, Any], stopped_here: bool, moved: bool = False) -> str:
    name = os.path.basename(change.file)
    after = (" (the function to re-enter was restarted first: the program is at its start, running the code it "
             "ran)" if moved else "")
    if status == "CompileError":
        details = answer.get("exceptionDetails") or {}
        where = f"{change.file}:{int(details.get('lineNumber', 0)) + 1}:{int(details.get('columnNumber', 0)) + 1}"
        text = str(details.get("text") or "does not compile").removeprefix("Uncaught ")
        return f"{where}: {text}: nothing was reloaded{after}; fix the file and reload again"
    why = _REFUSALS.get(status)
    if why is None and status == ACTIVE:
        if stopped_here:
            why = ("it changes code that is running below the function stopped in and cannot be re-entered: the "
                   "script's top-level code (outside any function: a comment there too, while the top level runs), or "
                   "a function called more than once on the stack; keep the edit inside the functions, or "
                   "debug_restart")
        else:
            why = (f"it changes a function that is running in {change.target.name}, not stopped: debug_pause, then "
                   "reload (the function the thread stops in is re-entered)")
    return f"{name} was not reloaded, nor any other file{after}: {why or f'V8 refused the change ({status})'}"


async def _frame_to_restart(change: Change) -> int | None:
    """The outermost frame of the changed script whose own part of the edit (not a deeper frame's nested in it) V8
    refuses: restarted, it is the top frame, and the change can go in (None: no frame will do)."""
    target, script = change.target, change.script
    hunks = _hunks(change.old, change.new)
    code = lexical.Source(change.old)
    spans = [(index, span) for index, frame in enumerate(target.frames)
             if (span := _function_span(frame, script.id, code)) is not None]
    spans = [(index, span) for index, span in spans if not _wraps_module(target.frames[index], span, spans)]
    for depth in range(len(spans) - 1, -1, -1):
        index, span = spans[depth]
        nested = [s for _, s in spans if s != span and span[0] <= s[0] and s[1] <= span[1]]
        own = [hunk for hunk in hunks if _within(hunk, span) and not any(_within(hunk, s) for s in nested)]
        if not own or await _status(change, _applied(change.old, change.new, own)) != ACTIVE:
            continue
        rest = [hunk for hunk in hunks if not any(_within(hunk, s) for _, s in spans[:depth + 1])]
        if rest and await _status(change, _applied(change.old, change.new, rest)) != OK:
            return None  # what the restart does not take off the stack blocks the change anyway
        return index
    return None


def _wraps_module(frame: dict[str, Any], span: tuple[int, int], spans: list[tuple[int, tuple[int, int]]]) -> bool:
    """A loader's wrapper of the module's code (tsx's ``(()=>{`` … ``})()``): restarting it runs the module again."""
    return not frame.get("functionName") and len(spans) > 1 and all(
        span[0] <= other[0] and other[1] <= span[1] for _, other in spans)


def _function_span(frame: dict[str, Any], script_id: str, code: lexical.Source) -> tuple[int, int] | None:
    """Where a frame's function is in ``script_id`` (offsets); None for another script's frame or a script's top
    level (a module, or the function a CommonJS module is wrapped in: it spans the whole script)."""
    if str((frame.get("location") or {}).get("scriptId")) != script_id:
        return None
    for scope in frame.get("scopeChain") or []:
        start, end = scope.get("startLocation") or {}, scope.get("endLocation") or {}
        if scope.get("type") == "local" and start and end:
            span = (code.offset(int(start.get("lineNumber", 0)), int(start.get("columnNumber", 0))),
                    code.offset(int(end.get("lineNumber", 0)), int(end.get("columnNumber", 0))))
            return None if span[0] == 0 else span
    return None


def _hunks(old: str, new: str) -> list[Hunk]:
    """The edit as (old start, old end, new start, new end) offsets: the lines that differ, narrowed to the
    characters that do (tsx's output is a module on one line)."""
    old_lines, new_lines = old.splitlines(keepends=True), new.splitlines(keepends=True)
    old_at, new_at = _starts(old_lines), _starts(new_lines)
    hunks = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        a, b, c, d = old_at[i1], old_at[i2], new_at[j1], new_at[j2]
        while a < b and c < d and old[a] == new[c]:
            a, c = a + 1, c + 1
        while a < b and c < d and old[b - 1] == new[d - 1]:
            b, d = b - 1, d - 1
        hunks.append((a, b, c, d))
    return hunks


def _starts(lines: list[str]) -> list[int]:
    starts = [0]
    for text in lines:
        starts.append(starts[-1] + len(text))
    return starts


def _within(hunk: Hunk, span: tuple[int, int]) -> bool:
    return span[0] <= hunk[0] and hunk[1] <= span[1] and (hunk[0] < hunk[1] or span[0] < hunk[0] < span[1])


def _applied(old: str, new: str, hunks: list[Hunk]) -> str:
    """The old source with only ``hunks`` of the edit made."""
    out: list[str] = []
    at = 0
    for a, b, c, d in sorted(hunks):
        out.append(old[at:a])
        out.append(new[c:d])
        at = b
    out.append(old[at:])
    return "".join(out)


# -- changing ----------------------------------------------------------------------------------------------

async def _restart(target: Target, index: int) -> None:
    """Restart frame ``index`` of the stopped ``target``: V8 pauses at its start (the reload's own pause)."""
    frame = target.frames[index]
    target.restarting = asyncio.get_running_loop().create_future()
    try:
        await target.request("Debugger.restartFrame", {"callFrameId": frame["callFrameId"], "mode": "StepInto"})
    except AdapterRequestError as exc:
        target.restarting = None
        raise ReloadRefused(f"{frame.get('functionName')} could not be re-entered ({exc.message}), so nothing was "
                            "reloaded: stop in it (or in a function it calls) another way, or debug_restart") from exc
    await _landed(target)


async def _landed(target: Target) -> None:
    """Wait for the pause a restart ends in; from then on the target's pauses are the agent's again."""
    waiting = target.restarting
    try:
        if waiting is not None:
            await asyncio.wait_for(waiting, timeouts.INSPECT_S)
    finally:
        target.restarting = None


async def _put(change: Change, moved: bool) -> None:
    """Make ``change`` (tried already): V8's source, the source kept of it and its map are the new ones."""
    target = change.target
    params: dict[str, Any] = {"scriptId": change.script.id, "scriptSource": change.new}
    if change.top:
        params["allowTopFrameEditing"] = True
        target.restarting = asyncio.get_running_loop().create_future()
    try:
        answer = await target.request("Debugger.setScriptSource", params)
    except BaseException:
        target.restarting = None
        raise
    status = str(answer.get("status") or OK)
    if status != OK:
        target.restarting = None
        raise ReloadRefused(_refusal(change, status, answer, change.top, moved))
    change.script.source = lexical.Source(change.new)
    if change.map is not None:
        change.script.map = change.map
        change.script.loaded = change.shown[1] if change.shown else None
    elif change.script.map is not None:
        _read_map(change.script, change.new)


async def _put_back(done: list[Change]) -> None:
    """A change refused after others went in (V8 tried them all first: it should not be): the others undone."""
    for change in reversed(done):
        with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
            await change.target.request("Debugger.setScriptSource", {"scriptId": change.script.id,
                                                                      "scriptSource": change.old})
            change.script.source = lexical.Source(change.old)


_MAP_URL = re.compile(r"//[#@] sourceMappingURL=(\S+)\s*$")


def _read_map(script: Script, source: str) -> None:
    """The map the new source names (a rebuilt file's is new too)."""
    found = _MAP_URL.search(source[-100_000:])
    if found is None or script.path is None:
        return
    with contextlib.suppress(sourcemap.SourceMapError, OSError):
        script.map = sourcemap.load(found.group(1), script.path)


# -- what is said ------------------------------------------------------------------------------------------

def _function_here(target: Target) -> str:
    """The stopped frame's function and where it is: "total (app.js:12)"."""
    frame = target.shown()[0] if target.shown() else {}
    place = target.scripts.place(*position(frame.get("location") or {}))
    where = f"{os.path.basename(place.file or '?')}:{place.line}" if place.line is not None else "?"
    return f"{frame.get('functionName') or '(anonymous)'} ({where})"


def _replaced(changes: list[Change]) -> tuple[str, ...]:
    """A line per file: its name and the functions the edit is in ("app.js: total, parse")."""
    by_file: dict[str, list[str]] = {}
    for change in changes:
        names = by_file.setdefault(change.file, [])
        old, new = change.shown or (change.old, change.new)
        new_lines = new.splitlines()
        matcher = difflib.SequenceMatcher(None, old.splitlines(), new_lines, autojunk=False)
        for tag, _, _, j1, j2 in matcher.get_opcodes():
            name = _enclosing(new_lines, j1 if j2 > j1 else max(j1 - 1, 0)) if tag != "equal" else ""
            if name != "" and (name or "top level") not in names:
                names.append(name or "top level")
    return tuple(f"{os.path.basename(path)}: {', '.join(names)}" for path, names in by_file.items())


def _enclosing(lines: list[str], index: int) -> str | None:
    """The name of the function whose code holds line ``index``, by the nearest header above it that is indented
    less (the line itself when it is one); None at the top level. What is said, not what is done: a guess."""
    if not lines:
        return None
    index = min(index, len(lines) - 1)
    indent = _indent(lines[index]) + 1
    for line in range(index, -1, -1):
        text = lines[line]
        if not text.strip() or _indent(text) >= indent:
            continue
        indent = _indent(text)
        found = _HEADER.search(text)
        name = next((group for group in found.groups() if group), None) if found else None
        if name is not None and name not in _NOT_A_FUNCTION:
            return name
        if indent == 0:
            return None
    return None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


def _notes(changes: list[Change], reentered: str | None) -> tuple[str, ...]:
    threads = sorted({change.target.name for change in changes})
    notes = []
    if len(threads) > 1:
        notes.append(f"changed in each of {', '.join(threads)}")
    if reentered:
        notes.append("what it had done before the stop is not undone")
    return tuple(notes)
