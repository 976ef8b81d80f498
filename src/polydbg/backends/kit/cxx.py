"""The C++ exception a ``__cxa_throw`` stop is about: its type and, for the standard exceptions that
carry a string, its message — read from the throw's arguments without running code in the program.

``__cxa_throw(void *object, std::type_info *type, void (*destructor)(void *))`` is entered with the
object in the first argument register and the type_info in the second; a type_info holds a pointer
to its mangled name right after its vtable pointer, and libstdc++'s ``runtime_error``/``logic_error``
family keeps its what() string the same way (a ``__cow_string`` after the vtable pointer). Calling
``what()`` would run code in the debuggee (lldb-dap has been seen never to answer again after one
such call), so only memory is read. A class of the program's own is read as its type from memory (by the
debugger's formatters: ``fields_message``): derived from that family (its first base), the base's string;
else its first string member (an ``AppError`` keeping ``std::string msg`` for its own ``what()``), else
its fields. A thrown ``const char *`` is its string, a thrown number its value.
"""

from __future__ import annotations

import json
import re

from polydbg.backends.recording import RaisedRecord

# x86-64 System V: the first two integer arguments
ARGUMENT_REGISTERS = ("rdi", "rsi")

STRING_MESSAGE_TYPES = frozenset(f"std::{name}" for name in (
    "runtime_error", "logic_error", "out_of_range", "invalid_argument", "domain_error", "length_error",
    "range_error", "overflow_error", "underflow_error", "system_error", "ios_base::failure",
    "filesystem::__cxx11::filesystem_error", "regex_error", "future_error"))

_LENGTH_NAME = re.compile(r"(\d+)")
_BUILTIN = {"v": "void", "b": "bool", "c": "char", "a": "signed char", "h": "unsigned char", "s": "short",
            "t": "unsigned short", "i": "int", "j": "unsigned int", "l": "long", "m": "unsigned long",
            "x": "long long", "y": "unsigned long long", "f": "float", "d": "double", "e": "long double",
            "w": "wchar_t"}
NO_FIELDS = "(its fields: its type is not in the program's debug info)"  # a type g++ described nowhere
C_STRINGS = frozenset({"const char *", "char *"})  # ``throw "text"``: the object is the pointer
# a debugger's print of an object read as its type: "(ConfigError) 0x55… = (std::runtime_error = …, code = 7)"
_PRINTED_OBJECT = re.compile(r"^\([^)]*\)\s*0x[0-9a-fA-F]+\s*=\s*(.*)$", re.DOTALL)
# the first base, through first bases of the program's own classes: lldb's "(AppError = (std::runtime_error = …",
# gdb's "{<AppError> = {<std::runtime_error> = …"
_FIRST_BASE = re.compile(r"^[({]\s*(?:<?[\w:]+>?\s*=\s*[({]\s*)*<?(std::[\w:]+)>?\s*=")
_EMPTY_BASE = re.compile(r"<[^<>=]+> = \{<No data fields>\}(?:,\s*)?")  # gdb's base class with no fields
_STRING_MEMBER = re.compile(r'\b\w+\s*=\s*(?:0x[0-9a-fA-F]+\s*)?"((?:[^"\\]|\\.)*)"')
_REAL_TYPE = re.compile(r"/\* real type = (.+?) \*/")
_QUOTED = re.compile(r'"((?:[^"\\]|\\.)*)"(?:\.\.\.)?\s*$')


def demangle_type(mangled: str) -> str:
    """An Itanium-mangled type name (``St13runtime_error``, ``N3app5ErrorE``, ``5Oops``) read as C++;
    anything it cannot read is returned as it is."""
    if mangled in _BUILTIN:
        return _BUILTIN[mangled]
    if mangled.startswith(("PK", "P")) and mangled.lstrip("PK") in _BUILTIN:  # PKc: const char *
        base = _BUILTIN[mangled.lstrip("PK")]
        return f"{'const ' if mangled.startswith('PK') else ''}{base} *"
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


def whatis_type(printed: str) -> str | None:
    """The type gdb's ``whatis`` names: with ``print object on``, the object's dynamic type where it says one
    (``type = /* real type = ConfigError */`` then the static type)."""
    real = _REAL_TYPE.search(printed)
    if real is not None:
        return real.group(1).strip()
    first = printed.strip().splitlines()[0] if printed.strip() else ""
    return first.removeprefix("type = ").strip() or None


def printed_string(value: str) -> str | None:
    """The string in a debugger's print of a ``char *`` (``0x4a2b "too big"``), unescaped, or None."""
    match = _QUOTED.search(value.strip())
    if match is None:
        return None
    return match.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")


def fields_message(printed: str) -> tuple[bool, str]:
    """What a thrown object of the program's own class says, from the debugger's print of it as its type:
    (True, "") when its first base is one of the standard exceptions whose string sits after the vtable
    pointer (read it there), else (False, its first string member, or its fields, or its value)."""
    match = _PRINTED_OBJECT.match(printed.strip())
    value = (match.group(1) if match else printed).strip()
    base = _FIRST_BASE.match(value)
    if base is not None and base.group(1) in STRING_MESSAGE_TYPES:
        return True, ""
    member = _STRING_MEMBER.search(value)
    if member is not None:
        return False, member.group(1).encode("latin-1", "backslashreplace").decode("unicode_escape", "replace")
    value = _EMPTY_BASE.sub("", value)
    if value[:1] + value[-1:] in ("()", "{}"):
        value = value[1:-1]
    return False, value.strip()


def raised_record(text: str) -> RaisedRecord | None:
    """A record of the log of raised C++ exceptions, as gdb's and lldb's scripts of polydbg's write it (one JSON
    object: the type as the debugger names it or the type_info's mangled name, the object as it prints it, the
    string after the vtable pointer, where it was thrown and caught), its message told as an exception stop tells
    it; None for a line it cannot read."""
    try:
        row = json.loads(text)
        kind = str(row.get("type") or "") or demangle_type(str(row.get("mangled") or "")) or "C++ exception"
        printed = str(row.get("printed") or "")
        std_base, message = fields_message(printed) if printed else (False, "")
        if kind in STRING_MESSAGE_TYPES or std_base:
            message = str(row.get("string") or "")
        elif not printed:
            message = NO_FIELDS
        return RaisedRecord(type=kind, message=message, file=row.get("file"), line=row.get("line"),
                            function=row.get("function"), thread=str(row.get("thread")), caught=row.get("caught"))
    except (ValueError, TypeError, AttributeError):
        return None
