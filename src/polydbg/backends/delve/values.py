"""delve's values as polydbg lists them: a DAP variable's fields, and containers counted by their elements alone."""

from __future__ import annotations

import re
from typing import Any

from polydbg.backends.base import Variable

METADATA = frozenset({"len()", "string()"})  # delve's synthetic children of maps and byte slices
# a type or function of a package named by its import path: github.com/x/go-humanize.testList, gopkg.in/yaml.v3.Node
_QUALIFIED = re.compile(r"(?<![\w./~-])((?:[\w.~-]+/)+)([\w~-]+(?:\.v\d+)?)\.(?=[\w(*\[])")
_QUOTED = re.compile(r'("(?:[^"\\]|\\.)*"|`[^`]*`)')  # a Go string literal, left as it is
_FIELD = re.compile(r"(struct \{ |; )[\w.~-]+\.(?=\w+ )")  # an anonymous struct's field, qualified by its package
_VERSION = re.compile(r"(?:^|/)([\w~-]+)[./]v\d+$")  # foo/v2, yaml.v3: the package is foo, yaml


def plain(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"))


def tidy(variable: Variable) -> Variable:
    """Containers count only their elements: the metadata children delve adds are dropped. Types are named as Go
    prints them (:func:`short_types`)."""
    if variable.type:
        variable = variable._replace(type=short_types(variable.type), value=short_types(variable.value))
    if variable.indexed_count:
        return variable._replace(named_count=None)
    return variable


def short_types(text: str) -> str:
    """``text`` (a type, or a value delve shows with its types) with each package named by the last element of its
    import path, as Go prints types: ``github.com/dustin/go-humanize.testList`` → ``go-humanize.testList``,
    ``gopkg.in/yaml.v3.Node`` → ``yaml.Node``; an anonymous struct's fields by their own names (delve qualifies an
    unexported one: ``struct { github.com/x/pkg.name string }`` → ``struct { name string }``). Two paths that end
    alike are left whole (``a/util.T`` and ``b/util.T`` stay apart); string literals are left as they are."""
    if "/" not in text:
        return text
    parts = _QUOTED.split(text)  # odd indexes: string literals
    paths: dict[str, str] = {}
    for part in parts[::2]:
        for found in _QUALIFIED.finditer(part):
            path = found[1] + found[2]
            versioned = _VERSION.search(path)
            paths[path] = versioned[1] if versioned else found[2]
    named: dict[str, list[str]] = {}
    for path, name in paths.items():
        named.setdefault(name, []).append(path)

    def package(found: re.Match[str]) -> str:
        path = found[1] + found[2]
        return f"{paths[path]}." if len(named[paths[path]]) == 1 else found[0]
    for index in range(0, len(parts), 2):
        parts[index] = _FIELD.sub(r"\1", _QUALIFIED.sub(package, parts[index]))
    return "".join(parts)
