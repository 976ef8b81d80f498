"""Expressions on lldb-dap: a call given polydbg's deadline, an error cut to the error itself, and Rust field paths
lldb cannot read as written.

lldb-dap evaluates an expression that is not a variable path through ``SBFrame::EvaluateExpression``, whose
options default to a 0.5 s timeout (``EvaluateExpressionOptions::default_timeout``): a call running longer is
interrupted, the program put back, and the error names the stop reason the thread had before the call
("Expression execution was interrupted: breakpoint 1.1."), though no breakpoint was hit — a ``sleep(3)`` fails
where ``usleep(300000)`` works. lldb's own ``expression`` command has no timeout unless given one. So an
expression that is not a variable path runs as ``expression --timeout`` (``call_command``) with polydbg's
evaluation deadline, and the same options as the API's default (breakpoints ignored, the program put back on an
error): a long call returns, an endless one is interrupted by lldb at the deadline and said so
(``command_result``). Its result is lldb's persistent variable (``$N``), read again as lldb-dap reads any value.

An error is clang's diagnostics: a call with no matching overload of a ``std::map`` member is 1.5 KB, the
line echoed with a caret, then a note per candidate spelling every template argument of every type. The
agent gets the errors (without lldb's ``<user expression N>:1:7:`` position and the caret lines), the first
note with its long type names shortened (``std::map<…>::key_type``), and how many notes were left out.

lldb 22 has no Rust expression parser: it says "Expression evaluation in Rust not supported. Falling back to
default language. Ran expression as 'Objective C++'." and parses the Rust as C++, where ``.`` does not go
through a pointer — and a Rust reference or ``Box`` is a pointer to lldb: ``node.next`` on a ``&Box<Node>``
(``Node **``) fails with "member reference base type 'Node **' is not a structure or union", and
``(*node).next`` reads the wrong memory (the ``Box`` as if it were the ``Node``). So a Rust field path
(``node.next``, ``self.items``, ``pair.0``) that fails that way is evaluated again a step at a time, each
base dereferenced as many times as its type is a pointer (``(**node).next``; a tuple field ``.0`` is
``.__0``), and answers under the name the agent wrote; when that fails too, the error says what to write.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from polydbg.backends.base import Variable
from polydbg.errors import AdapterRequestError

MAX_ERRORS = 3  # errors kept from one evaluation (clang stops at 20)
LONG_TYPE = 60  # a quoted type name longer than this has its template arguments shortened

_FALLBACK = re.compile(r"^(?:note: )?(?:Expression evaluation in [\w ]+ not supported\. "
                       r"(?:Falling back to default language\. )?)?Ran expression as '([^']+)'\.\s*$")
_DIAGNOSTIC = re.compile(r"^(error|warning|note): (?:<user expression \d+>:\d+:\d+: )?(.*)$")
_ECHO = re.compile(r"^\s*(?:\d+\s*)?\|")  # "    1 | table.at(5)" and "      | ~~~~~~^~"
_QUOTED = re.compile(r"'([^']*)'")
_TEMPLATE_ARGUMENTS = re.compile(r"<[^<>]*>")
_RUST_PATH = re.compile(r"^\s*([A-Za-z_]\w*)((?:\s*\.\s*(?:[A-Za-z_]\w*|\d+))+)\s*$")
_THROUGH_POINTER = ("is not a structure or union", "is a pointer; did you mean to use '->'")
_RESULT_NAME = re.compile(r"^\(.*?\) (\$\d+) = ", re.MULTILINE)  # "(unsigned int) $0 = 0"
_INTERRUPTED = "Expression execution was interrupted"
_PUT_BACK = "has been returned to the state before expression evaluation"


def call_command(expression: str, timeout_s: float) -> str:
    """The lldb command evaluating ``expression`` with lldb-dap's options but a deadline of ``timeout_s``."""
    return (f"expression --timeout {max(1, round(timeout_s * 1_000_000))} --ignore-breakpoints true "
            f"--unwind-on-error true -- {expression}")


def command_result(output: str, elapsed_s: float, timeout_s: float) -> str | None:
    """The persistent variable (``$N``) holding what a ``call_command`` printed; None when it printed no value
    (a void call). Its error raised (``AdapterRequestError``): a call lldb interrupted at the deadline said so."""
    if not any(line.startswith("error:") for line in output.splitlines()):
        found = _RESULT_NAME.search(output)
        return found.group(1) if found else None
    if _INTERRUPTED in output and elapsed_s >= timeout_s * 0.95:
        where = ("lldb interrupted it; the program is back as it was before, still stopped here" if _PUT_BACK in output
                 else "lldb interrupted it and left the program inside it: debug_command 'thread return -x' returns "
                 "to the stop")
        raise AdapterRequestError("evaluate", f"the call did not return within {timeout_s:g} s (polydbg's "
                                  f"evaluation deadline), so {where}; a call that never returns (an endless loop, "
                                  "a wait) cannot be evaluated")
    raise AdapterRequestError("evaluate", output)


def short_error(text: str) -> str:
    """lldb's evaluation error as the agent reads it: the errors, the first note, nothing echoed."""
    errors: list[str] = []
    notes: list[str] = []
    other: list[str] = []
    rust = False
    for line in text.splitlines():
        fallback = _FALLBACK.match(line)
        if fallback is not None:
            rust = rust or "Expression evaluation in Rust" in line
            continue
        diagnostic = _DIAGNOSTIC.match(line)
        if diagnostic is not None:
            (notes if diagnostic.group(1) == "note" else errors).append(_short_types(diagnostic.group(2).strip()))
        elif line.strip() and not _ECHO.match(line):
            other.append(line.strip())
    parts = list(dict.fromkeys(errors))[:MAX_ERRORS] or other[:MAX_ERRORS] or [text.strip()]
    if len(set(errors)) > MAX_ERRORS:
        parts.append(f"({len(set(errors)) - MAX_ERRORS} more errors)")
    if notes:
        more = len(notes) - 1
        parts.append(f"note: {notes[0]}" + (f" ({more} more note{'s' if more > 1 else ''})" if more else ""))
    return "; ".join(parts) + (" (lldb has no Rust parser: it read this as C++)" if rust else "")


def _short_types(message: str) -> str:
    """Long quoted type names with their template arguments cut: ``'std::map<…>::key_type'``."""
    def shorten(match: re.Match[str]) -> str:
        name = match.group(1)
        if len(name) <= LONG_TYPE:
            return match.group(0)
        while _TEMPLATE_ARGUMENTS.search(name):
            name = _TEMPLATE_ARGUMENTS.sub("\0", name)
        return "'" + name.replace("\0", "<…>") + "'"
    return _QUOTED.sub(shorten, message)


def rust_path(expression: str) -> list[str] | None:
    """A Rust field path (``node.next``, ``self.pair.0``) as its parts; None for anything else."""
    match = _RUST_PATH.match(expression)
    if match is None:
        return None
    return [match.group(1), *(part.strip() for part in match.group(2).split(".") if part.strip())]


def through_pointer(message: str) -> bool:
    """The error of a ``.`` that C++ does not take through a pointer (a Rust reference or Box)."""
    return any(text in message for text in _THROUGH_POINTER)


def pointer_depth(type_name: str | None) -> int:
    """How many times a value of this (lldb-spelt) type is a pointer: ``Node **`` → 2."""
    name = (type_name or "").rstrip()
    return len(name) - len(name.rstrip("*"))


async def rust_field_path(parts: list[str], evaluate: Callable[[str], Awaitable[Variable]]) -> tuple[str, Variable]:
    """Evaluate a Rust field path a step at a time, each base dereferenced as its type needs; the C++ spelling
    that worked and its value. A step that fails raises lldb's error, cut, saying how it was spelt."""
    expression = parts[0]
    try:
        for field in parts[1:]:
            depth = pointer_depth((await evaluate(expression)).type)
            member = f"__{field}" if field.isdigit() else field
            expression = f"({'*' * depth}{expression}).{member}" if depth else f"{expression}.{member}"
        return expression, await evaluate(expression)
    except AdapterRequestError as exc:
        raise AdapterRequestError(exc.command, f"{short_error(exc.message)} (evaluated as {expression}, each "
                                  "reference and Box dereferenced)") from exc
