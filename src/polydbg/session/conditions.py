"""Breakpoint conditions and logpoint messages checked before the debugger sees them.

debugpy accepts any condition and, when it does not compile, prints a SyntaxError into the program's
output at every hit and never stops: the agent waits for a stop that cannot come. A Python
expression's syntax can be checked here, exactly, with ``ast`` — so a broken one is refused when it
is set, with the reason. Java's (and Kotlin's, evaluated as Java) are parsed by the java backend's own
parser, which knows the subset its evaluator runs. (Native conditions are read by the debugger at the
hit; see the backends.)
"""

from __future__ import annotations

import ast
import re

from polydbg.backends.java import expr as java_expr
from polydbg.errors import UsageError, echo

_INTERPOLATION = re.compile(r"\{([^{}]+)\}")
_ASSIGNMENT = re.compile(r"(?<![=!<>:])=(?!=)")


def check(language: str, condition: str | None, log_message: str | None) -> None:
    """Raise ``UsageError`` for a condition or logpoint expression that cannot be evaluated as written."""
    if language in ("java", "kotlin"):
        _check_java(condition, log_message)
        return
    if language != "python":
        return
    if condition is not None:
        problem = _python_problem(condition)
        if problem:
            raise UsageError(f"condition {echo(condition)} is not a Python expression ({problem}); "
                             "the breakpoint was not set. Pass an expression that is true where it should stop")
    if log_message is not None:
        for expression in _INTERPOLATION.findall(log_message):
            problem = _python_problem(expression)
            if problem:
                raise UsageError(f"{{{expression}}} in log_message is not a Python expression ({problem}); "
                                 "the logpoint was not set")


def _python_problem(expression: str) -> str | None:
    if not expression.strip():
        return "it is empty"
    try:
        ast.parse(expression.strip(), mode="eval")
    except SyntaxError as exc:
        hint = "; to compare, write ==" if _ASSIGNMENT.search(expression) else ""
        return f"{exc.msg}{hint}"
    return None


def _check_java(condition: str | None, log_message: str | None) -> None:
    checks = [("condition", condition)] if condition is not None else []
    checks += [(f"{{{e}}} in log_message", e) for e in _INTERPOLATION.findall(log_message or "")]
    for what, text in checks:
        try:
            java_expr.parse(text or "")
        except java_expr.ParseError as exc:
            raise UsageError(f"{what} {echo(text or '')} is not evaluable Java ({exc}); the breakpoint was not "
                             "set") from None
