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
"""

from __future__ import annotations

import json
import re
from typing import Any

from polydbg.backends.node import values as jsv
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterRequestError, echo

_INTERPOLATION = re.compile(r"\{([^{}]+)\}")
# Before an interpolated expression: its value is shown as a value, a string quoted (a trace's expressions: an empty
# string or a space must not read as nothing), where a logpoint's message has a string as it is (console.log's way)
AS_VALUE = "\x1d"
_FORMAT = re.compile(r"%s|%o|%%")
LOG_CONTEXT = "polydbg-log"  # the console context logpoints log through
# Node's own console: a test runner puts one of its own in globalThis (vitest's worker, jest: a console.Console,
# which has no context(): every logpoint and line trace of a test run logged nothing); Node's is its console module
NODE_CONSOLE = ('(globalThis.console.context ? globalThis.console : globalThis.process?.getBuiltinModule?.("console") '
            '?? globalThis.console)')


def interpolated(message: str) -> list[str]:
    """The ``{expression}``s of a log message, in order."""
    return [expression.removeprefix(AS_VALUE) for expression in _INTERPOLATION.findall(message)]


def v8_condition(condition: str | None, log_message: str | None) -> str | None:
    """The condition V8 gets: ``condition`` (None when empty), with a logpoint's ``console.log`` after it."""
    if log_message is None:
        return condition or None
    fmt = _INTERPOLATION.sub(_placeholder, log_message.replace("%", "%%"))
    arguments = "".join(
        f", (() => {{ try {{ return {_shown(e)}; }} catch (e) {{ return '<error: ' + (e && e.message) + '>'; }} }})()"
        for e in _INTERPOLATION.findall(log_message))
    log_call = f"({NODE_CONSOLE}.context({json.dumps(LOG_CONTEXT)}).log({json.dumps(fmt)}{arguments}), false)"
    return f"({condition}) && {log_call}" if condition else log_call


def _placeholder(match: re.Match[str]) -> str:
    """``console.log``'s: ``%s`` makes a logpoint's value a string (V8 converts it), ``%o`` keeps a trace's value an
    object, read as the agent reads values (an object was "[object Object]", an array its items joined)."""
    return "%o" if match.group(1).startswith(AS_VALUE) else "%s"


def _shown(expression: str) -> str:
    """What the logpoint logs of an interpolated expression: a value's string quoted as ``values.text_of`` quotes it
    (JSON's), so that ``""`` and ``" "`` read as strings; numbers, objects and undefined as they are."""
    if not expression.startswith(AS_VALUE):
        return f"({expression})"
    return f'((v) => typeof v === "string" ? JSON.stringify(v) : v)(({expression.removeprefix(AS_VALUE)}))'


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
