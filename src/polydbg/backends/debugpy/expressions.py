"""Python conditions and logpoint expressions, checked when a breakpoint is set.

debugpy accepts any condition and, when it does not compile, prints a SyntaxError into the program's
output at every hit and never stops: the agent waits for a stop that cannot come. A Python
expression's syntax can be checked exactly with ``ast``, so a broken one is refused when it is set,
with the reason.
"""

from __future__ import annotations

import ast
import re

from polydbg.errors import UsageError, echo

_ASSIGNMENT = re.compile(r"(?<![=!<>:])=(?!=)")


def check(condition: str | None, log_message: str | None) -> None:
    """Raise ``UsageError`` for a condition or logpoint expression that is not a Python expression."""
    if condition is not None:
        problem = _problem(condition)
        if problem:
            raise UsageError(f"condition {echo(condition)} is not a Python expression ({problem}); "
                             "the breakpoint was not set. Pass an expression that is true where it should stop")
    if log_message is not None:
        for expression in _interpolated(log_message):
            problem = _problem(expression)
            if problem:
                raise UsageError(f"{{{expression}}} in log_message is not a Python expression ({problem}); "
                                 "the logpoint was not set")


def _interpolated(log_message: str) -> list[str]:
    """The ``{expression}``s of a log message as pydevd splits it: a ``{`` opens one and the ``}`` that balances it
    ends it, nested braces counted (strings are not skipped: pydevd does not skip them either), so a dict or set
    display, a comprehension or an f-string inside is one expression."""
    found: list[str] = []
    level, start = 0, 0
    for index, char in enumerate(log_message):
        if char == "{":
            level += 1
            start = index + 1 if level == 1 else start
        elif char == "}" and level:
            level -= 1
            if level == 0:
                found.append(log_message[start:index])
    if level:
        raise UsageError(f"log_message {echo(log_message)} has a {{ that no }} closes (debugpy would print "
                         "'Unbalanced braces' at every hit); the logpoint was not set. Close each {expression}")
    return [expression for expression in found if expression.strip()]


def _problem(expression: str) -> str | None:
    if not expression.strip():
        return "it is empty"
    try:
        ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        hint = "; to compare, write ==" if _ASSIGNMENT.search(expression) else ""
        return f"{exc.msg}{hint}"
    return None
