"""What V8 evaluates at a breakpoint: the agent's condition, and a logpoint as a condition.

V8 has no logpoints: a logpoint is a condition that calls ``console.log`` and answers false, so the
program never stops there (the message reaches the agent as the program's stdout). Each ``{expr}``
in the message is evaluated on its own, its exception shown in place (``<error: …>``) instead of
silencing the whole line; ``%`` in the message is escaped (``console.log``'s first argument is a
format). V8 treats a condition that does not parse as never true, so every expression is compiled
first (``Runtime.compileScript``) and one that does not parse refuses the breakpoint.
"""

from __future__ import annotations

import json
import re

from polydbg.backends.node import values as jsv
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterRequestError, echo

_INTERPOLATION = re.compile(r"\{([^{}]+)\}")


def interpolated(message: str) -> list[str]:
    """The ``{expression}``s of a log message, in order."""
    return _INTERPOLATION.findall(message)


def v8_condition(condition: str | None, log_message: str | None) -> str | None:
    """The condition V8 gets: ``condition`` (None when empty), with a logpoint's ``console.log`` after it."""
    if log_message is None:
        return condition or None
    expressions = interpolated(log_message)
    fmt = _INTERPOLATION.sub("\x00", log_message.replace("%", "%%")).replace("\x00", "%s")
    arguments = "".join(
        f", (() => {{ try {{ return ({e}); }} catch (e) {{ return '<error: ' + (e && e.message) + '>'; }} }})()"
        for e in expressions)
    log_call = f"(console.log({json.dumps(fmt)}{arguments}), false)"
    return f"({condition}) && {log_call}" if condition else log_call


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
