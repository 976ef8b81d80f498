"""``$exception``: the exception object of an exception stop, under one name in ``debug_evaluate`` on every backend.

Each language keeps it elsewhere (pydevd's ``__exception__`` tuple, the V8 pause's ``data``, the JDWP event's
object, gdb's ``$_exception``, the panic's value), so each backend maps the name to its own expression before the
language sees it. A failure that has no object but a message (a Go test's ``t.Errorf``, a Rust panic stopped in
its test's frame) answers its message, as a string. ``$`` starts no name in Python, C, C++ or Go, and in
JavaScript and Java no program names an identifier ``$exception`` in practice; the name is replaced only where it
stands as a whole token outside a string literal.
"""

from __future__ import annotations

import json
import re

from polydbg.backends.base import Variable
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


def message(expression: str, text: str, type_name: str) -> Variable:
    """``$exception`` as a failure's message (a string literal, as the language writes one)."""
    return Variable(name=expression, value=json.dumps(text, ensure_ascii=False), type=type_name,
                    evaluate_name=expression)
