"""Breakpoint conditions and logpoint messages checked before the debugger sees them.

Some debuggers take any condition and fail only at the hit (debugpy prints a SyntaxError into the
program's output at every hit and never stops; polydbg's own Java evaluator would fail there): the agent
would wait for a stop that cannot come. Where a backend can check an expression exactly, its check
(``BackendInfo.expression_check``) refuses a broken one when it is set, with the reason. Native
debuggers read conditions at the hit; nothing is checked for them here.
"""

from __future__ import annotations

from polydbg.backends import registry
from polydbg.backends.kit import hits
from polydbg.errors import UsageError, echo


def check(language: str | None, condition: str | None, log_message: str | None) -> None:
    """Raise ``UsageError`` for a condition or logpoint expression ``language``'s debugger cannot evaluate."""
    if language is None or (condition is None and log_message is None):
        return
    checker = registry.expression_check(language)
    if checker is not None:
        checker(condition, log_message)


def check_hit(hit_condition: str | None) -> None:
    """Raise ``UsageError`` for a hit condition that is not one. Every debugger reads them one way
    (``kit.hits``), but given one it cannot read, debugpy let the program run to its end without a word
    ('every 2'), delve crashed ('% 0': a division by zero in its goroutine) and the others said the
    breakpoint was not bound yet."""
    if hit_condition is None or not hit_condition.strip():
        return
    try:
        hits.HitCondition.parse(hit_condition)
    except ValueError:
        raise UsageError(f"hit_condition {echo(hit_condition, 60)} is not one: {hits.HIT_SYNTAX}, with N at least 1 "
                         "(0 for > N, < N and <= N)") from None


def check_file(path: str, condition: str | None, log_message: str | None) -> None:
    """The same, for a breakpoint set before any session: the language is the file's."""
    check(registry.language_of_source(path), condition, log_message)
