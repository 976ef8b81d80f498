"""Where Java looks for the class a simple name means (JLS 6.5, 7.5, simplified), as lists of binary
names to try in order. Pure: ``lookup.py`` asks the VM which of them is loaded.

The order for ``Point`` written in a method of ``demo.Shapes$Inner``: the classes nested in the
current class and in each class it is nested in (``demo.Shapes$Inner$Point``, ``demo.Shapes$Point``),
the current package (``demo.Point``), ``java.lang``, then what the source file's imports name. The
imports are read from the source file itself (the class file does not keep them).
"""

from __future__ import annotations

import re

_IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\.\*)?)\s*;", re.MULTILINE)


def candidates(current: str, name: str) -> list[str]:
    """The binary names a simple ``name`` may mean in class ``current`` (imports aside), in Java's order."""
    package = current.rpartition(".")[0]
    found = []
    outer = current
    while outer:
        found.append(f"{outer}${name}")
        outer = outer.rpartition("$")[0]
    return [*found, f"{package}.{name}" if package else name, f"java.lang.{name}"]


def imports_in(source: str) -> list[str]:
    """A source file's imports (``java.util.Arrays``, ``java.util.*``), static ones left out."""
    return [match.group(1) for match in _IMPORT.finditer(source)]


def imported(imports: list[str], name: str) -> list[str]:
    """Where ``imports`` say a simple name may come from: ``import java.util.Arrays;`` gives
    ``java.util.Arrays`` (single-type imports first), ``import java.util.*;`` gives ``java.util.<name>``."""
    found = []
    for one in imports:
        if one.endswith(".*"):
            found.append(f"{one[:-2]}.{name}")
        elif one.rpartition(".")[2] == name:
            found.insert(0, one)
    return found


def simply_named(binary_name: str, name: str) -> bool:
    """Whether a class's simple name is ``name`` (``demo.Shapes$Point`` is ``Point``)."""
    return binary_name.rpartition(".")[2].rpartition("$")[2] == name


def nested_spelling(name: str) -> str | None:
    """``Outer.Inner`` written with a dot, as the binary name ``Outer$Inner`` (None: the last part of
    ``name`` is no class nested in a class, as far as its capitals tell)."""
    if "." not in name or "$" in name.rpartition(".")[2]:
        return None
    head, _, tail = name.rpartition(".")
    if head[:1].isupper() or ("." in head and head.rpartition(".")[2][:1].isupper()):
        return f"{head}${tail}"
    return None


def spellings(dotted: str) -> list[str]:
    """The binary names ``a.b.C.D`` may mean, package-most first: ``a.b.C.D``, ``a.b.C$D``, ``a.b$C$D`` …"""
    parts = dotted.split(".")
    return [".".join([*parts[:cut], "$".join(parts[cut:])]) for cut in range(len(parts) - 1, -1, -1)]
