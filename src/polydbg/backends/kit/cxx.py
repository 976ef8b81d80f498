"""The C++ exception a ``__cxa_throw`` stop is about: its type and, for the standard exceptions that
carry a string, its message — read from the throw's arguments without running code in the program.

``__cxa_throw(void *object, std::type_info *type, void (*destructor)(void *))`` is entered with the
object in the first argument register and the type_info in the second; a type_info holds a pointer
to its mangled name right after its vtable pointer, and libstdc++'s ``runtime_error``/``logic_error``
family keeps its what() string the same way (a ``__cow_string`` after the vtable pointer). Calling
``what()`` would run code in the debuggee (lldb-dap has been seen never to answer again after one
such call), so only memory is read. A type outside that family gets its type, no message.
"""

from __future__ import annotations

import re

# x86-64 System V: the first two integer arguments
ARGUMENT_REGISTERS = ("rdi", "rsi")

STRING_MESSAGE_TYPES = frozenset(f"std::{name}" for name in (
    "runtime_error", "logic_error", "out_of_range", "invalid_argument", "domain_error", "length_error",
    "range_error", "overflow_error", "underflow_error", "system_error", "ios_base::failure",
    "filesystem::__cxx11::filesystem_error", "regex_error", "future_error"))

_LENGTH_NAME = re.compile(r"(\d+)")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"(?:\.\.\.)?\s*$')


def demangle_type(mangled: str) -> str:
    """An Itanium-mangled type name (``St13runtime_error``, ``N3app5ErrorE``, ``5Oops``) read as C++;
    anything it cannot read is returned as it is."""
    text = mangled
    std = False
    if text.startswith("St"):
        std, text = True, text[2:]
    nested = text.startswith("N") and text.endswith("E")
    if nested:
        text = text[1:-1]
        if text.startswith("St"):
            std, text = True, text[2:]
    parts = []
    while text:
        match = _LENGTH_NAME.match(text)
        if match is None:
            return mangled
        length = int(match.group(1))
        start = match.end()
        if length <= 0 or start + length > len(text):
            return mangled
        parts.append(text[start:start + length])
        text = text[start + length:]
    if not parts:
        return mangled
    return "::".join((["std"] if std else []) + parts)


def printed_string(value: str) -> str | None:
    """The string in a debugger's print of a ``char *`` (``0x4a2b "too big"``), unescaped, or None."""
    match = _QUOTED.search(value.strip())
    if match is None:
        return None
    return match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
