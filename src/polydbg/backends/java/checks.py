"""Java (and Kotlin, evaluated as Java) conditions and logpoint expressions, checked when a breakpoint is set
by the parser of the subset polydbg's evaluator runs (``expr``): one it cannot parse would fail at every hit."""

from __future__ import annotations

import re

from polydbg.backends.java import expr
from polydbg.errors import UsageError, echo

_INTERPOLATION = re.compile(r"\{([^{}]+)\}")


def check(condition: str | None, log_message: str | None) -> None:
    """Raise ``UsageError`` for a condition or logpoint expression the evaluator cannot parse."""
    checks = [("condition", condition)] if condition is not None else []
    checks += [(f"{{{e}}} in log_message", e) for e in _INTERPOLATION.findall(log_message or "")]
    for what, text in checks:
        try:
            expr.parse(text or "")
        except expr.ParseError as exc:
            raise UsageError(f"{what} {echo(text or '')} is not evaluable Java ({exc}); the breakpoint was not "
                             "set") from None
