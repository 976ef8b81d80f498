"""Setting a variable in any goroutine's frame: delve's ``setVariable`` works in one frame only.

delve 1.20's DAP server looks the variable up and evaluates the new value in its *current* goroutine's
*topmost* frame, whatever the reference's frame (``onSetVariableRequest``: ``goid, frame := -1, 0``). So
``amount = 77`` in goroutine 19's ``main.transfer`` failed ("could not find symbol value for amount") when
the stop was on goroutine 1, and would have set goroutine 1's own ``amount`` had it one; a local of frame 2
of the stopped goroutine, or of the frame a panic is reported at (the runtime's frames are hidden above
it), fared the same.

So the variable is reached by its address, which does not depend on a frame: ``uintptr(&x)`` is evaluated
in the variable's own frame, and delve sets element 0 of ``*(*[1]T)(address)`` (an expression it names
the same in every frame). The value is evaluated in the variable's frame first, and what delve gets is its
result (a number, ``true``, a quoted string, a pointer cast from its address), so ``amount * 2`` means that
frame's ``amount``. A variable without an address (kept in a register by an optimised build) is set the way
delve can: only in delve's own frame (its goroutine's topmost), refused elsewhere, saying why.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from polydbg.backends.base import Variable
from polydbg.backends.delve import native
from polydbg.errors import AdapterRequestError, UsageError

Evaluate = Callable[[str], Awaitable[Variable]]  # in the variable's frame; raises AdapterRequestError

_LITERAL = re.compile(r"""-?(?:\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?|0[xXoObB][0-9a-fA-F_]+|\.\d+)
                          |true|false|nil|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)+'""", re.VERBOSE)
_NUMBER = re.compile(r"-?\d[\d.eE+-]*")
_TRUNCATED = re.compile(r"\.\.\.\+\d+ more\"?$")  # delve's cut string: "abc...+120 more"


def is_literal(value: str) -> bool:
    return _LITERAL.fullmatch(value.strip()) is not None


async def address_of(evaluate: Evaluate, expression: str) -> int | None:
    """The address of ``expression`` in its frame, None when it has none (a register, a map element)."""
    try:
        return native.number((await evaluate(f"uintptr(&({expression}))")).value)
    except AdapterRequestError:
        return None


def slot(type_name: str, address: int) -> str:
    """The frame-independent expression whose element 0 is the variable at ``address``."""
    return f"*(*[1]{type_name})({address:#x})"


async def value_for(evaluate: Evaluate, value: str, type_name: str | None) -> str:
    """What delve is given to set: ``value`` if it is a literal, else its result in the variable's frame
    (which delve would otherwise evaluate in its own)."""
    if is_literal(value):
        return value.strip()
    try:
        result = await evaluate(value)
    except AdapterRequestError as exc:
        raise UsageError(f"{value!r} does not evaluate in that frame: {exc.message}") from exc
    text = result.value.strip()
    kind = result.type or type_name or ""
    if kind.startswith("*") or kind.startswith("unsafe.Pointer"):
        if text.endswith(" nil") or text == "nil":
            return "nil"
        address = native.number((await evaluate(f"uintptr({value})")).value)
        if address is not None:
            return f"({kind})({address:#x})"
    elif (kind == "string" and text.startswith('"') and not _TRUNCATED.search(text)) or (
            kind == "bool" and text in ("true", "false")):
        return text
    else:
        number = _NUMBER.match(text)  # delve shows some integers as "65 = 0x41"
        if number is not None and kind not in ("string", "bool"):
            return number[0]
    raise UsageError(f"delve sets a variable outside its own frame from a number, a bool, a string or a pointer; "
                     f"{value!r} is {text[:80]!r} ({kind or 'no type'}): pass the value itself")
