"""delve's values as polydbg lists them: a DAP variable's fields, and containers counted by their elements alone."""

from __future__ import annotations

from typing import Any

from polydbg.backends.base import Variable

METADATA = frozenset({"len()", "string()"})  # delve's synthetic children of maps and byte slices


def plain(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"))


def tidy(variable: Variable) -> Variable:
    """Containers count only their elements: the metadata children delve adds are dropped."""
    if variable.indexed_count:
        return variable._replace(named_count=None)
    return variable
