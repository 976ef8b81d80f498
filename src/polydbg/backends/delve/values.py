"""delve's values as polydbg lists them: a DAP variable's fields, and containers counted by their elements alone."""

from __future__ import annotations

import re
from typing import Any

from polydbg.backends.base import Variable

METADATA = frozenset({"len()", "string()"})  # delve's synthetic children of maps and byte slices


def plain(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"))


def tidy(variable: Variable) -> Variable:
    """Containers count only their elements: the metadata children delve adds are dropped; the value's types are
    named by their package (``short_types``)."""
    variable = variable._replace(value=short_types(variable.value))
    if variable.indexed_count:
        return variable._replace(named_count=None)
    return variable


# a Go string or raw string (left as it is), else a package's import path before its name and a type's
_PACKAGE_PATH = re.compile(r'"(?:[^"\\]|\\.)*"|`[^`]*`|(?<![\w./])(?:[\w.~-]+/)+(?=\w+\.\w)')


def short_types(value: str) -> str:
    """A value with its types named as Go code names them, by their package's name: delve writes the import path
    (``*github.com/coreos/go-semver/semver.Version {Major: 1, …}``), whose 40 characters filled a call trace's
    60-character value before the field that differed (``Patch``), and two different values read alike. Strings
    are left as they are."""
    return _PACKAGE_PATH.sub(lambda m: m.group(0) if m.group(0)[:1] in ('"', "`") else "", value)
