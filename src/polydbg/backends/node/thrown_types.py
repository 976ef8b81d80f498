"""Exceptions by constructor name on Node: ``debug_break(exception=["ParseError"])`` stops where a value whose
prototype chain has a constructor of that name is thrown (its subclasses too), caught or not.

V8 pauses on exceptions by state only ("all", "uncaught"), so with a name set it pauses on every throw and the
backend resumes at once those that match nothing. The judgment runs none of the program's code where it can:
the pause's value names its own constructor (``className``: ``ParseError``), which settles a throw of the class
itself; for the rest, one ``Runtime.callFunctionOn`` walks the prototype chain with ``Object.getPrototypeOf`` and
reads each ``constructor`` by its property descriptor (no getter runs; only a Proxy's trap could). Cost: a pause,
that call and a resume for each other throw — ~3-4 ms where Node's own code throws and catches a lot.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection

from polydbg.backends.kit import timeouts
from polydbg.backends.node import failures
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterRequestError, UsageError, echo

# the error constructors every JavaScript runtime (and Node's assert) has: a name a little unlike one is a slip
BUILTIN_ERRORS = ("AggregateError", "AssertionError", "DOMException", "Error", "EvalError", "RangeError",
                  "ReferenceError", "SyntaxError", "TypeError", "URIError")
NEAR = 0.85  # as alike as TypeEror is to TypeError (0.94), not as MyError is to Error (0.83)
_IDENTIFIER = re.compile(r"[A-Za-z_$][\w$]*")


def check(names: Collection[str]) -> None:
    """Refuse a constructor name that cannot match (not an identifier) or is a slip of a built-in error's
    (``TypeEror``): it would be set and never stop. A name like none of them is a class of the program's."""
    for name in names:
        if not _IDENTIFIER.fullmatch(name):
            raise UsageError(f"{echo(name)} is neither an exception filter nor a constructor's name (TypeError, "
                             "ParseError): pass the class's name as the program spells it, without its module")
        near = [] if name in BUILTIN_ERRORS else difflib.get_close_matches(name, BUILTIN_ERRORS, 3, NEAR)
        if near:
            raise UsageError(f"{name!r} is no built-in error constructor; the closest: {', '.join(near)}. Pass the "
                             "name as the program spells it")

# the constructor names along a value's prototype chain (outermost last)
CHAIN = ("function () { const names = []; let p = Object.getPrototypeOf(Object(this)); for (let n = 0; p && n < 64; "
         "n++, p = Object.getPrototypeOf(p)) { const c = Object.getOwnPropertyDescriptor(p, 'constructor'); "
         "if (c && typeof c.value === 'function') names.push(c.value.name); } return names; }")


async def matches(target: Target, names: Collection[str]) -> bool:
    """Whether the value thrown at this exception pause is an instance of a constructor named in ``names``, and the
    user's: one a frame above the user's catches (a library's ``new Function`` probe, which no blackbox hides) is
    the library's own."""
    if await failures.libraries_own(target):
        return False
    data = target.pause_data or {}
    if str(data.get("className") or "") in names:
        return True
    object_id = data.get("objectId")
    if not object_id:
        return False  # a primitive thrown (throw "text"): no constructor
    try:
        answer = await target.request("Runtime.callFunctionOn", {
            "objectId": object_id, "functionDeclaration": CHAIN, "returnByValue": True, "silent": True},
            timeout=timeouts.INSPECT_S)
    except AdapterRequestError:
        return False
    chain = (answer.get("result") or {}).get("value")
    return isinstance(chain, list) and any(str(name) in names for name in chain)
