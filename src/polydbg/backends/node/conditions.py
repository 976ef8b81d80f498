"""What V8 evaluates at a breakpoint: the agent's condition, and a logpoint as a condition.

V8 has no logpoints: a logpoint is a condition that logs and answers false, so the program never stops
there. It logs through a console of its own (``console.context``, V8's; Node's console module's where the program put
another console in ``globalThis``, as test runners do): the inspector hears the call
(``Runtime.consoleAPICalled`` with that context) and the program's stdout does not, so a logpoint's line
is never mixed into what the program prints, nor split by a pipe's reads. Each ``{expr}``
in the message is evaluated on its own, its exception shown in place (``<error: …>``) instead of
silencing the whole line; a trace's expressions (``AS_VALUE``) log strings quoted, where a logpoint's message has
them as they are; ``%`` in the message is escaped (``console.log``'s first argument is a
format). V8 treats a condition that does not parse as never true, so every expression is compiled
first (``Runtime.compileScript``) and one that does not parse refuses the breakpoint.

An expression may hold braces of its own (a template literal ```${a}-${b}```, an object literal ``{a, b}``): its
closing ``}`` is the one that balances its ``{``, strings, template literals and comments skipped (``pieces``); a
``{`` no brace closes is the message's text. Each expression (and the condition) is followed by a line break where
it is spliced, so a ``//`` comment in it ends there, not in what follows.
"""

from __future__ import annotations

import json
import re
from typing import Any

from polydbg.backends.node import values as jsv
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterRequestError, echo

# Before an interpolated expression: its value is shown as a value, a string quoted (a trace's expressions: an empty
# string or a space must not read as nothing), where a logpoint's message has a string as it is (console.log's way)
AS_VALUE = "\x1d"
_FORMAT = re.compile(r"%s|%o|%%")
LOG_CONTEXT = "polydbg-log"  # the console context logpoints log through
# Node's own console: a test runner puts one of its own in globalThis (vitest's worker, jest: a console.Console,
# which has no context(): every logpoint and line trace of a test run logged nothing); Node's is its console module
NODE_CONSOLE = ('(globalThis.console.context ? globalThis.console : globalThis.process?.getBuiltinModule?.("console") '
            '?? globalThis.console)')


class Expression(str):
    """An interpolated ``{expression}`` of a log message (its text without the braces)."""


def pieces(message: str) -> list[str]:
    """A log message as its text and its ``{expression}``s (``Expression``), in order."""
    found: list[str] = []
    text, i = 0, 0
    while i < len(message):
        end = _closing(message, i + 1) if message[i] == "{" else None
        if end is not None and message[i + 1:end].strip():
            found += [message[text:i]] if i > text else []
            found.append(Expression(message[i + 1:end]))
            text = i = end + 1
        else:
            i += 1
    return found + ([message[text:]] if text < len(message) else [])


def _closing(text: str, i: int) -> int | None:
    """The index of the ``}`` closing a ``{`` just before ``i``: strings, template literals (their ``${…}`` too) and
    comments skipped; None when none does."""
    depth = 1
    while i < len(text):
        char = text[i]
        if char in "'\"":
            i = _past_string(text, i)
            continue
        if char == "`":
            i = _past_template(text, i)
            continue
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return None


def _past_string(text: str, i: int) -> int:
    quote, i = text[i], i + 1
    while i < len(text) and text[i] != quote and text[i] != "\n":
        i += 2 if text[i] == "\\" else 1
    return i + 1 if i < len(text) and text[i] == quote else len(text) + 1  # unclosed: past the end


def _past_template(text: str, i: int) -> int:
    i += 1
    while i < len(text) and text[i] != "`":
        if text[i] == "\\":
            i += 2
        elif text.startswith("${", i):
            end = _closing(text, i + 2)
            if end is None:
                return len(text) + 1
            i = end + 1
        else:
            i += 1
    return i + 1 if i < len(text) else len(text) + 1


def interpolated(message: str) -> list[str]:
    """The ``{expression}``s of a log message, in order."""
    return [piece.removeprefix(AS_VALUE) for piece in pieces(message) if isinstance(piece, Expression)]


def v8_condition(condition: str | None, log_message: str | None) -> str | None:
    """The condition V8 gets: ``condition`` (None when empty), with a logpoint's ``console.log`` after it."""
    if log_message is None:
        return condition or None
    parts = pieces(log_message)
    fmt = "".join(_placeholder(p) if isinstance(p, Expression) else p.replace("%", "%%") for p in parts)
    arguments = "".join(
        f", (() => {{ try {{ return {_shown(e)}; }} catch (e) {{ return '<error: ' + (e && e.message) + '>'; }} }})()"
        for e in parts if isinstance(e, Expression))
    log_call = f"({NODE_CONSOLE}.context({json.dumps(LOG_CONTEXT)}).log({json.dumps(fmt)}{arguments}), false)"
    return f"({condition}\n) && {log_call}" if condition else log_call


def _placeholder(expression: str) -> str:
    """``console.log``'s: ``%s`` makes a logpoint's value a string (V8 converts it), ``%o`` keeps a trace's value an
    object, read as the agent reads values (an object was "[object Object]", an array its items joined)."""
    return "%o" if expression.startswith(AS_VALUE) else "%s"


def _shown(expression: str) -> str:
    """What the logpoint logs of an interpolated expression: a value's string quoted as ``values.text_of`` quotes it
    (JSON's), so that ``""`` and ``" "`` read as strings; numbers, objects and undefined as they are."""
    if not expression.startswith(AS_VALUE):
        return f"({expression}\n)"
    return f'((v) => typeof v === "string" ? JSON.stringify(v) : v)(({expression.removeprefix(AS_VALUE)}\n))'


def logged_line(params: dict[str, Any]) -> str | None:
    """A logpoint's line from a ``Runtime.consoleAPICalled`` event (its format filled in as ``console.log``
    would: strings as they are, other values as the agent reads them); None for any other console call."""
    if str(params.get("context")).partition("#")[0] != LOG_CONTEXT:  # V8 numbers each: "polydbg-log#1"
        return None
    args = [a for a in params.get("args") or [] if isinstance(a, dict)]
    if not args:
        return ""
    values = iter(args[1:])

    def filled(match: re.Match[str]) -> str:
        if match.group(0) == "%%":
            return "%"
        value = next(values, None)
        if value is None:
            return match.group(0)
        return str(value.get("value", "")) if value.get("type") == "string" else jsv.text_of(value)
    return _FORMAT.sub(filled, str(args[0].get("value", "")))


async def check_syntax(target: Target, expression: str, what: str) -> None:
    """Refuse ``expression`` (an AdapterRequestError naming ``what``) when it is not a JavaScript
    expression; nothing is checked before the target has an execution context."""
    if target.context_id is None:
        return
    found = await target.request("Runtime.compileScript", {
        "expression": f"({expression}\n)", "sourceURL": "", "persistScript": False,
        "executionContextId": target.context_id})
    details = found.get("exceptionDetails")
    if details:
        problem = jsv.exception_text(details)
        raise AdapterRequestError("setBreakpoint", f"{what} {echo(expression)} is not a JavaScript expression "
                                                   f"({problem}); the breakpoint was not set")
