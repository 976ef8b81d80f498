"""``$exception``: the exception object of an exception stop, under one name in ``debug_evaluate`` on every backend.

Each language keeps it elsewhere (pydevd's ``__exception__`` tuple, the V8 pause's ``data``, the JDWP event's
object, gdb's ``$_exception``, the panic's value), so each backend maps the name to its own expression before the
language sees it. ``$`` starts no name in Python, C, C++ or Go, and in JavaScript and Java no program names an
identifier ``$exception`` in practice; the name is replaced only where it stands as a whole token outside a
string literal.
"""

from __future__ import annotations

import re

from polydbg.errors import UsageError

NAME = "$exception"

# a string literal (skipped as is) or the name as a whole token
_TOKEN = re.compile(r"""("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`(?:[^`\\]|\\.)*`)|(?<![\w$])\$exception(?![\w$])""")


def names_it(expression: str) -> bool:
    return any(m.group(1) is None for m in _TOKEN.finditer(expression))


def substitute(expression: str, replacement: str) -> str:
    """``expression`` with each ``$exception`` outside a string literal replaced by ``replacement``."""
    return _TOKEN.sub(lambda m: m.group(1) if m.group(1) is not None else replacement, expression)


def not_at_an_exception(debugger: str) -> UsageError:
    return UsageError(f"{NAME} is the exception of an exception stop, and {debugger} is not stopped at one; "
                      "stop on one with debug_break(exception=[\"raised\"] or a type name), then evaluate it")
