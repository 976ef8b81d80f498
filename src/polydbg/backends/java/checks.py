"""Java (and Kotlin, evaluated as Java) conditions and logpoint expressions, checked when a breakpoint is set
by the parser of the subset polydbg's evaluator runs (``expr``): one it cannot parse would fail at every hit.
The session asks through ``check`` (``BackendInfo.expression_check``) before anything is sent; the backend
asks ``problem`` again for breakpoints that reach it another way. Kept apart from the evaluator, so the
session's check imports only the parser."""

from __future__ import annotations

import re

from polydbg.backends.java import expr
from polydbg.errors import UsageError, echo

INTERPOLATION = re.compile(r"\{([^{}]+)\}")


def problem(condition: str | None, log_message: str | None) -> str | None:
    """Why a condition or a logpoint's ``{expression}`` cannot be evaluated (the breakpoint is not set), or None."""
    checks = [("condition", condition)] if condition is not None else []
    checks += [(f"{{{e}}} in log_message", e) for e in INTERPOLATION.findall(log_message or "")]
    for what, text in checks:
        try:
            expr.parse(text or "")
        except expr.ParseError as exc:
            return f"{what} {echo(text or '')} is not evaluable Java ({exc}); the breakpoint was not set"
    return None


def check(condition: str | None, log_message: str | None) -> None:
    """Raise ``UsageError`` for a condition or logpoint expression the evaluator cannot parse."""
    found = problem(condition, log_message)
    if found is not None:
        raise UsageError(found)
