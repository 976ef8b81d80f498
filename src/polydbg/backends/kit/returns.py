"""What a step out of (or over) a call returned, as a variable among the caller's locals at the stop.

debugpy lists it that way itself (pydevd's ``(return) add``). The backends that learn the value elsewhere — gdb's
``-exec-finish`` record, V8's ``returnValue`` at a function's return position, a JDWP method-exit event — list
it the same way, under the names made here, so the value reads and expands like any other and one reading
(``returned_by``) serves them all: the session says it apart from the locals, ``add() returned 6`` or
``parse() raised TypeError: bad``.
"""

from __future__ import annotations

RETURNED = "(return) "  # pydevd's own mark (showReturnValue); the others take it too
RAISED = "(raised) "  # an exception that left the call instead of a value


def returned_name(function: str, raised: bool = False) -> str:
    """The name of the variable holding what ``function`` returned (or raised)."""
    return (RAISED if raised else RETURNED) + function


def returned_by(name: str) -> str | None:
    """How a variable named ``name`` reads as a call's outcome (``add() returned``, ``parse() raised``); None for
    a variable of the program's."""
    for mark, raised in ((RETURNED, False), (RAISED, True)):
        if name.startswith(mark):
            return outcome(name[len(mark):], raised)
    return None


def outcome(function: str | None, raised: bool = False) -> str:
    """``add() returned`` for ``add`` (or a frame's ``add(int, int)``), ``parse() raised``; ``the call returned``
    when the function is not known."""
    verb = "raised" if raised else "returned"
    return f"{bare(function)}() {verb}" if function else f"the call {verb}"


def bare(function: str) -> str:
    """A function's name without the parameter list a native debugger shows (``Shape::area(int) const`` →
    ``Shape::area``)."""
    text = function.strip()
    if text.endswith(" const"):
        text = text[:-len(" const")].rstrip()
    if not text.endswith(")"):
        return text
    depth = 0
    for index in range(len(text) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(text[index], 0)
        if depth == 0:
            return text[:index].rstrip() or text
    return text
