"""What debugpy's answers mean in Python's terms: pure helpers, no adapter.

Which interpreter runs the debuggee; which files are library code (debugpy skips them while
``justMyCode`` is on, so a breakpoint there asks for it off); a pydevd traceback cut to what the
agent needs; pydevd's synthetic children and decorations, recognised so they can be dropped; and
the expression that slices a container, since pydevd ignores ``start``/``count``.
"""

from __future__ import annotations

import ast
import builtins
import difflib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from polydbg.backends import shebang
from polydbg.backends.base import Variable
from polydbg.backends.recording import RaisedRecord
from polydbg.errors import UsageError, echo

# pydevd's synthetic children: groups of dunders/methods, the length, and the "more items" marker.
GROUPS = frozenset({"special variables", "function variables", "class variables", "protected variables"})
NOISE_TYPES = frozenset({"module", "function", "type", "builtin_function_or_method", "method", "ABCMeta"})
PYDEVD_NOTE = re.compile(r"\s*\(note: full exception trace is shown but execution is paused at: .*\)\s*$")
MAPPINGS = frozenset({"dict", "ordereddict", "defaultdict", "counter", "mappingproxy"})
# children named by their index label (polydbg's pydevd extension), sliced by position
LABELLED = frozenset({"dataframe", "series"})
LIBRARY_SKIPPED = ("not hit: this is library code, and the session started debugging only your code "
                   "(justMyCode); debug_restart starts again with library code debugged, as this breakpoint asks")
EXCLUDED = "excluded by filters"
# pydevd's warning when a step into lands in library code it skips, and what polydbg can offer instead
# (its advice, a launch.json setting, is not something the agent has).
SKIPPED_STEP_IN = "Frame skipped from debugging during step-in."
SKIPPED_STEP_IN_NOTE = ("(the step went past library code: this session debugs only your code (justMyCode); to step "
                        "through a library, set a breakpoint in its file and debug_restart)\n")
_LIBRARY = re.compile(r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d\.\d+[/\\]")
_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>.+))?$')


def find_python(explicit: str | None, cwd: str | None, program: str | None) -> str:
    """The interpreter for the debuggee: explicit, else the one a script's ``#!`` line names by its path (a
    tool installed in some environment runs with that environment's Python), else the active or a nearby
    venv, else ours."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.exists():
            raise UsageError(f"python interpreter {explicit!r} does not exist; pass an existing interpreter "
                             "path, or omit 'python' to use the project's virtualenv")
        return str(path)
    words = shebang.command(program) if program else None
    if words and os.path.isabs(words[0]) and os.access(words[0], os.X_OK) \
            and os.path.basename(words[0]).startswith(("python", "pypy")):
        return words[0]
    virtual_env = os.environ.get("VIRTUAL_ENV")
    if virtual_env and (Path(virtual_env) / "bin" / "python").exists():
        return str(Path(virtual_env) / "bin" / "python")
    starts = [Path(p).resolve() for p in (cwd, Path(program).parent if program else None) if p]
    for start in starts:
        for directory in (start, *start.parents):
            for name in (".venv", "venv"):
                candidate = directory / name / "bin" / "python"
                if candidate.exists():
                    return str(candidate)
    return sys.executable


def command_dirs(cwd: str | None, runtime: str | None) -> list[str]:
    """Where the project's Python commands are (``pytest``, ``flask``): the bin directory of the interpreter
    ``find_python`` picks, unless that is only polydbg's own (no project environment was found)."""
    python = find_python(runtime, cwd, None)
    return [] if python == sys.executable else [os.path.dirname(python)]


def python_error(text: str) -> str:
    """A Python traceback from pydevd cut to what the agent needs: the exception, the caret of a
    SyntaxError, and where the error was raised when that is not the expression itself (pydevd's own
    frames, ~2 KB of them, are dropped)."""
    if "Traceback (most recent call last):" not in text:
        return text
    lines = text.rstrip().splitlines()
    last = max((i for i, line in enumerate(lines) if line and not line[0].isspace()), default=len(lines) - 1)
    exception = lines[last]
    frames = [(i, m) for i, line in enumerate(lines[:last]) if (m := _FRAME.match(line))]
    if exception.startswith(("SyntaxError", "IndentationError", "TabError")):
        start = frames[-1][0] + 1 if frames else last
        caret = [line for line in lines[start:last] if line.strip()]
        indent = min((len(line) - len(line.lstrip()) for line in caret), default=0)
        return "\n".join([exception, *(line[indent:] for line in caret)])
    user = [m for _, m in frames if "pydevd" not in m["file"] and "debugpy" not in m["file"]]
    if user and user[-1]["file"] != "<string>":
        where = user[-1]
        return f"{exception} (raised at {where['file']}:{where['line']} in {where['function'] or '?'})"
    return exception


def is_library(path: str) -> bool:
    """Installed or standard-library code, which debugpy skips while justMyCode is on."""
    return _LIBRARY.search(path) is not None


def just_my_code(breakpoint_files: tuple[str, ...]) -> bool:
    """Debug only the user's code, unless a breakpoint asks to stop in a library (then honour it)."""
    return not any(is_library(f) for f in breakpoint_files)


def without_note(text: str) -> str:
    """A stop's text without pydevd's "(note: full exception trace is shown …)"."""
    return PYDEVD_NOTE.sub("", text).strip()


def is_noise(variable: Variable) -> bool:
    """Modules, functions and classes in a scope listing (they flood module-level stops), and the temporaries
    pytest's assertion rewriting puts in a test's frame (``@py_assert1``, ``@py_format5``: the failing
    assertion's message says what they hold)."""
    return ((variable.type or "") in NOISE_TYPES or (variable.name.startswith("__") and variable.name.endswith("__"))
            or variable.name.startswith("@py_"))


def slice_expression(expression: str, kind: str, start: int, end: int) -> str:
    """The expression whose value is items ``start..end`` of ``expression``, a container of type ``kind``
    (lower case): a dict's items as a dict, a set's or deque's as a list, a pandas one by position, anything else
    sliced."""
    if kind in MAPPINGS:
        return f"dict(list(({expression}).items())[{start}:{end}])"
    if kind in ("set", "frozenset", "deque"):
        return f"list({expression})[{start}:{end}]"
    if kind in LABELLED:
        return f"({expression}).iloc[{start}:{end}]"
    return f"({expression})[{start}:{end}]"


def renumbered(children: list[Variable], expression: str, kind: str, start: int) -> list[Variable]:
    """A slice's children named by their index in the whole container (a dict's keep their keys)."""
    out: list[Variable] = []
    for child in children:
        name = child.name
        evaluate_name: str | None
        if name.isdigit() and kind not in MAPPINGS and kind not in LABELLED:
            name = str(start + int(name))
            evaluate_name = f"({expression})[{name}]"
        else:
            evaluate_name = child.evaluate_name
        out.append(Variable(name=name, value=child.value, type=child.type, ref=child.ref,
                            evaluate_name=evaluate_name))
    return out


def frameless(thread_id: int, name: str, pid: int | None, evaluate_in: int | None = None) -> str:
    """Why a thread lists no frames under justMyCode, and the expression that lists them (pydevd leaves library
    frames out of stacks, so a thread running only library code, a server's ``serve_forever``, lists none), evaluated
    in the frames of ``evaluate_in`` (a thread that lists some) where one is known."""
    frames = (f"[f'{{s.filename}}:{{s.lineno}} {{s.name}}' for t in __import__('threading').enumerate() if t.name == "
              f"{name!r} for s in __import__('traceback').extract_stack(__import__('sys')._current_frames()[t.ident])]")
    where = f" while a thread of its process (pid {pid}) is stopped" if pid else ""
    thread = f", thread_id={evaluate_in}" if evaluate_in is not None else ""
    return (f"thread {thread_id} lists no frames: it runs only library code, which this session leaves out of stacks "
            f"(it debugs your code only); its frames, outermost first: debug_evaluate(expression=\"{frames}\"{thread})"
            f"{where}")


RAISED = "polydbg.raised"  # as the debuggee shim names the raised log's breakpoint and prefixes its lines
RAISED_MARK = "\x1epolydbg-raised "
_BREAK_MODES = {"raised": "always", "uncaught": "unhandled", "userUnhandled": "userUnhandled"}
_ROOT = {"names": ["Python Exceptions"]}


# the exception classes every Python has, by name (a name the program's code spells without its module)
BUILTIN_EXCEPTIONS = tuple(sorted(name for name, value in vars(builtins).items()
                                  if isinstance(value, type) and issubclass(value, BaseException)))
NEAR = 0.85  # how alike a name must be to a built-in class's to be taken for a slip of it (KeyErorr: 0.875)


def check_exception_types(types: list[str], like: dict[str, bool | list[str]] | None = None) -> None:
    """Refuse an exception type name that is a slip of a class's (``KeyErorr``), naming the closest: it would bind
    by name and never match. ``like``: the program's answer (:func:`classes_like`) when it is stopped — each name
    True when a class of it is loaded, else the loaded exception classes close to it; without it, Python's built-in
    ones are compared. A dotted name (``pkg.errors.MyError``: its module may be imported later), and one like none
    of them (a class of the program's not loaded yet: ``MyError``) bind by name."""
    for name in types:
        if not all(part.isidentifier() for part in name.split(".")):
            raise UsageError(f"{echo(name)} is neither an exception filter (raised, uncaught, userUnhandled) nor a "
                             "Python class's name (KeyError, MyError, mypkg.errors.MyError)")
        said = like.get(name) if like is not None else None
        near = ([] if name in BUILTIN_EXCEPTIONS else difflib.get_close_matches(name, BUILTIN_EXCEPTIONS, 3, NEAR)
                ) if said is None else ([] if said is True else [str(n) for n in said or []])
        if "." not in name and near:
            whose = "the program has" if said is not None else "Python has built in"
            raise UsageError(f"{name!r} is no exception class {whose}; the closest: {', '.join(near)}. Pass the "
                             f"class's name as Python spells it, or a class of the program's with its module "
                             f"(mypkg.errors.{name}: bound by name when it is raised, once its module is imported)")


def classes_like(names: list[str]) -> str:
    """An expression the program evaluates (stopped) to a JSON object: per name, true when an exception class of
    that name is loaded, else the names of the loaded ones close to it."""
    walk = "(lambda f: f(f, BaseException))(lambda f, k: [k] + [d for s in type.__subclasses__(k) for d in f(f, s)])"
    return (f"(lambda known: __import__('json').dumps({{n: n in known or __import__('difflib').get_close_matches("
            f"n, sorted(known), 3, {NEAR}) for n in {names!r}}}))({{c.__name__ for c in {walk}}})")


def classes_answer(value: str) -> dict[str, bool | list[str]]:
    """The program's answer to :func:`classes_like`, as debugpy shows the string (its repr)."""
    answer = json.loads(ast.literal_eval(value))
    return {str(name): said for name, said in answer.items() if said is True or isinstance(said, list)}


def exception_options(filters: list[str], types: list[str], recording: bool = False) -> list[dict[str, Any]]:
    """debugpy's ``exceptionOptions`` for filters and class names together (with options pydevd ignores the
    filters): a class stops where it is raised, caught or not, its subclasses too. The debuggee shim lets a
    name pydevd cannot import (a class of ``__main__``, of a module not imported yet) match by name along the
    raised class's MRO (``MyError``, ``pkg.errors.MyError``)."""
    options: list[dict[str, Any]] = [{"path": [_ROOT], "breakMode": _BREAK_MODES[f]}
                                     for f in filters if f in _BREAK_MODES]
    if types:
        options.append({"path": [_ROOT, {"names": types}], "breakMode": "always"})
    if recording:  # the raised log (shims/debuggee.py): a breakpoint the shim records at and never stops for
        options.append({"path": [_ROOT, {"names": [RAISED]}], "breakMode": "always"})
    return options


def raised_record(text: str) -> RaisedRecord | None:
    """A record the debuggee shim's raised log wrote to the console (None: a line of the program's)."""
    if not text.startswith(RAISED_MARK):
        return None
    try:
        row = json.loads(text[len(RAISED_MARK):])
        return RaisedRecord(type=str(row["type"]), message=str(row["message"]), file=row.get("file"),
                            line=row.get("line"), function=row.get("function"), thread=row.get("thread"),
                            caught=row.get("caught"))
    except (ValueError, KeyError, TypeError):
        return None


def past_the_program(stack: dict[str, Any]) -> bool:
    """Whether a thread's stack (a ``stackTrace`` answer) is the launch shim's frame alone. A step past the end of
    the program's code (over its last line, out of a test into the runner that then returns) stops there, in the
    shim's ``finally``, which stacks leave out: the stop showed no frame at all ("frame 0 does not exist"), and
    each step again the same. The user's code is done there: the program is run on to its exit."""
    frames = stack.get("stackFrames") or []
    source = frames[0].get("source") if len(frames) == 1 and isinstance(frames[0], dict) else None
    return isinstance(source, dict) and source.get("path") == "<string>" and frames[0].get("name") == "<module>"
