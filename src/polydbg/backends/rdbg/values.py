"""Ruby values as rdbg lists them, and the Ruby expression that reaches each one (to set it).

rdbg 1.4.0 lists an Array's elements only when asked with ``filter: "indexed"`` (else its class and instance
variables), pages nothing else, names the receiver ``%self``, and has no ``setVariable`` nor ``evaluateName``.
So each value read at this stop is remembered with its frame and the expression that reaches it — a local by
its name, an element ``p[2]``, a Hash entry ``p["key"]`` (rdbg names entries by their key's inspect, a Ruby
literal for strings, symbols and numbers), a Struct member ``p[:x]``, an instance variable
``p.instance_variable_get(:@v)`` — and setting one evaluates the matching assignment in that frame.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from polydbg.backends.base import ExceptionDetail, FrameRef, Variable
from polydbg.errors import UsageError

_RAISED = re.compile(r"#<([A-Z][\w:]*)(?:: (.*))?> is raised\.", re.DOTALL)  # a catch stop's text
_SYNTHETIC = ("#class", "%ancestors", "#length", "#encoding", "#begin", "#end")
# Values rdbg lets expand into nothing but their class (or a String's length and encoding): shown as leaves
_LEAVES = frozenset({"Integer", "Float", "Symbol", "NilClass", "TrueClass", "FalseClass", "String", "Rational",
                     "Complex"})


class _Known(NamedTuple):
    frame: FrameRef
    expression: str | None  # None: a scope (its children are locals, named by themselves)
    value: str = ""
    indexed: int = 0  # an Array's length


class Values:
    """The values of this stop by reference: their frame, their expression, their elements."""

    def __init__(self) -> None:
        self._known: dict[int, _Known] = {}
        self._children: dict[int, dict[str, str | None]] = {}  # ref → child name → its expression

    def clear(self) -> None:
        self._known.clear()
        self._children.clear()

    def scope(self, ref: int, frame: FrameRef) -> None:
        self._known[ref] = _Known(frame, None)

    def frame_of(self, ref: int) -> FrameRef | None:
        """The frame whose scope ``ref`` is; None for a value's ref."""
        known = self._known.get(ref)
        return known.frame if known is not None and known.expression is None else None

    def request(self, ref: int, start: int | None, count: int | None) -> dict[str, Any]:
        """The ``variables`` arguments that list ``ref``'s children (an Array's elements ``start..``)."""
        known = self._known.get(ref)
        if known is None or not known.indexed:
            return {"variablesReference": ref}
        first = min(start or 0, known.indexed)
        return {"variablesReference": ref, "filter": "indexed", "start": first,
                "count": max(0, min(count if count is not None else known.indexed, known.indexed - first))}

    def children(self, ref: int, found: list[Variable]) -> list[Variable]:
        """``ref``'s children as the session shows them (``%self`` as ``self``), each remembered with its path."""
        known = self._known.get(ref)
        shown = []
        names = self._children.setdefault(ref, {})
        for child in found:
            if child.name == "#class":  # the value's type says it
                continue
            if child.name == "%self":
                child = child._replace(name="self")
            if child.type in _LEAVES and (child.named_count or 0) <= 3 and not child.indexed_count:
                child = child._replace(ref=0)
            path = None if known is None else _path(known, child.name)
            names[child.name] = path
            if known is not None and child.ref:
                self._known[child.ref] = _Known(known.frame, path, child.value, child.indexed_count or 0)
            shown.append(child._replace(evaluate_name=path))
        return shown

    def evaluated(self, found: Variable, frame: FrameRef) -> Variable:
        """An evaluation's value, remembered (its children are reached through the expression)."""
        if found.type in _LEAVES and (found.named_count or 0) <= 3 and not found.indexed_count:
            found = found._replace(ref=0)
        if found.ref:
            self._known[found.ref] = _Known(frame, f"({found.name})", found.value, found.indexed_count or 0)
        return found

    def assignment(self, ref: int, name: str, value: str) -> tuple[FrameRef, str]:
        """The frame and the Ruby that sets ``ref``'s child ``name`` to ``value``."""
        known = self._known.get(ref)
        if known is None:
            raise UsageError("that value was read at another stop, or not listed yet: list it with debug_variables "
                             "and set it again")
        if name.startswith(("#", "%")) or name == "self":
            raise UsageError(f"{name} is rdbg's view of the value (its class, length, …), not a variable to set")
        if known.expression is None:
            return known.frame, f"{name} = ({value})"
        if name.startswith("@"):
            return known.frame, f"{known.expression}.instance_variable_set(:{name}, ({value}))"
        path = self._children.get(ref, {}).get(name) or _path(known, name)
        if path is None:
            raise UsageError(f"{name} cannot be set through rdbg; set it with debug_evaluate")
        return known.frame, f"{path} = ({value})"


def _path(parent: _Known, name: str) -> str | None:
    """The Ruby expression of ``parent``'s child ``name``, or None for rdbg's synthetic entries."""
    if parent.expression is None:
        return "self" if name in ("%self", "self") else name
    if name in _SYNTHETIC:
        return None
    if name.startswith("@"):
        return f"{parent.expression}.instance_variable_get(:{name})"
    if parent.indexed and name.isdigit():
        return f"{parent.expression}[{name}]"
    if parent.value.startswith("#<struct "):
        return f"{parent.expression}[:{name}]"
    return f"{parent.expression}[{name}]"  # a Hash entry, named by its key's inspect


def exception(raised: Variable) -> ExceptionDetail:
    """The exception rdbg lists as ``_raised``: its class, and the message its inspect shows (``#<Class: msg>``)."""
    type_name = raised.type or "Exception"
    text = raised.value
    prefix = f"#<{type_name}: "
    message = text[len(prefix):-1] if text.startswith(prefix) and text.endswith(">") else (
        "" if text == type_name or text == f"#<{type_name}>" else text)
    return ExceptionDetail(type=type_name, message=message.strip())  # RSpec's starts with a line break


def raised_text(text: str) -> str:
    """A catch stop's description as the other debuggers word theirs (``Class: message``), not rdbg's
    ``#<Class: message> is raised.``"""
    match = _RAISED.fullmatch(text)
    if match is None:
        return text
    return f"{match[1]}: {match[2].strip()}" if match[2] and match[2].strip() else match[1]
