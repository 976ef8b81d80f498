"""lldb's text as the program's language writes it: Rust and C++ type names, values, function names
and frames, container previews, and the registers worth showing.

Pure except for ``shaped``/``preview``, whose only input is the ``Children`` callable they are given
(a container's first children, asked of lldb-dap): so all of it is tested without a debugger.

- lldb spells Rust types the C way inside generics and with their full paths
  (``alloc::vec::Vec<int, alloc::alloc::Global>``): ``rust_type`` gives ``Vec<i32>``.
- Through a reference, lldb shows a Rust enum's raw layout (``Some{$variants$:{…}}``) and a
  ``&&str`` as a list of chars: ``rust_value`` gives ``Some(…)`` and ``"text"``.
- Rust frame names carry a symbol hash and, in places, legacy symbol escapes (``$LT$``):
  ``rust_function`` drops and decodes them. C++ signatures get libstdc++'s default template
  arguments dropped (``kit.typenames``): spelled out they are kilobytes long.
- Containers whose summary is only ``size=N`` (std::vector, std::map, Rust Vec, HashMap …) get a
  preview built from their first children: ``{10, 20, 30}``, ``{"alice": 31}``, Rust ``[1, 2, 3]``.
- A pointer's memory reference from lldb-dap is the pointer's own address; DAP means the address
  it points at, which is the pointer's value.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.base import Frame, Variable
from polydbg.backends.kit.typenames import short_type
from polydbg.errors import AdapterError

PREVIEW_ITEMS = 10  # children shown in a container preview
PREVIEW_CHARS = 200

# a value's children, from index ``start``, at most ``count`` of them: (ref, start, count) → children
Children = Callable[[int, int, int], Awaitable[list[Variable]]]

_SIZE = re.compile(r"size=(\d+)")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_MAP_TYPE = re.compile(r"(^|::)(multi)?(unordered_)?(multi)?map<|(^|::)(HashMap|BTreeMap)<")
_SET_TYPE = re.compile(r"(^|::)(unordered_)?(multi)?set<|(^|::)(HashSet|BTreeSet)<")
_RUST_PATHS = (
    ("alloc::string::", ""), ("alloc::vec::", ""), ("alloc::boxed::", ""), ("alloc::rc::", ""),
    ("alloc::sync::", ""), ("alloc::collections::vec_deque::", ""), ("alloc::collections::btree::map::", ""),
    ("alloc::collections::btree::set::", ""), ("core::option::", ""), ("core::result::", ""),
    ("core::cell::", ""), ("std::collections::hash::map::", ""), ("std::collections::hash::set::", ""),
    (", alloc::alloc::Global", ""), (", std::hash::random::RandomState", ""),
)
# lldb spells Rust's primitive types inside generics the C way (Vec<int>); longest names first.
_C_TO_RUST = re.compile(r"\b(unsigned long long|unsigned long|unsigned int|unsigned short|unsigned char|"
                        r"signed char|long long|long|int|short|float|double|_Bool|__int128|unsigned __int128)\b")
_C_TO_RUST_NAMES = {
    "unsigned long long": "u64", "unsigned long": "u64", "unsigned int": "u32", "unsigned short": "u16",
    "unsigned char": "u8", "signed char": "i8", "long long": "i64", "long": "i64", "int": "i32", "short": "i16",
    "float": "f32", "double": "f64", "_Bool": "bool", "__int128": "i128", "unsigned __int128": "u128",
}
# Rust's legacy symbol escapes, where lldb leaves them in a name (<Vec<T,A> as Deref>::deref).
_RUST_ESCAPES = (("$LT$", "<"), ("$GT$", ">"), ("$RF$", "&"), ("$BP$", "*"), ("$C$", ","), ("$SP$", "@"),
                 ("$u20$", " "), ("$u27$", "'"), ("$u5b$", "["), ("$u5d$", "]"), ("$u7b$", "{"), ("$u7d$", "}"),
                 ("$u7e$", "~"), ("$u3b$", ";"), ("$u2b$", "+"), ("$u22$", '"'))
# The registers worth showing besides the full-width general-purpose ones (x86-64, AArch64).
_SPECIAL_REGISTERS = frozenset({"rflags", "eflags", "cpsr", "fpsr", "fpcr", "pc", "sp", "lr", "fp"})
_ENUM_LAYOUT = re.compile(r"(\w+)\{\$variants\$:")
_PAYLOAD = "$variant$:{value:{0:"
_CHARS = re.compile(r"\{((?:'(?:\\.|[^'\\])*'(?:, )?)+)\}")


# -- names ----------------------------------------------------------------------------------------------


def rust_type(name: str | None) -> str | None:
    """A Rust type name as Rust spells it: ``Vec<i32>`` for ``alloc::vec::Vec<int, alloc::alloc::Global>``."""
    if not name:
        return name
    for old, new in _RUST_PATHS:
        name = name.replace(old, new)
    return _C_TO_RUST.sub(lambda m: _C_TO_RUST_NAMES[m.group(1)], name)


def rust_function(name: str) -> str:
    """A Rust frame name without its symbol hash and with legacy escapes decoded."""
    name = _RUST_HASH.sub("", name)
    if "$" not in name and ".." not in name:
        return name
    segments = [seg[1:] if seg.startswith("_$") else seg for seg in name.split("::")]
    name = "::".join(segments).replace("..", "::")
    for old, new in _RUST_ESCAPES:
        name = name.replace(old, new)
    return name


def frame(raw: dict[str, Any], language: str) -> Frame:
    """An lldb-dap stack frame: its name as the language spells it; no file or line for lldb-dap's
    disassembly pseudo-source (a path with a backtick and a sourceReference)."""
    source = raw.get("source") or {}
    path = source.get("path") or source.get("name")
    line = raw.get("line") or None
    if source.get("sourceReference") and path and "`" in path:  # lldb-dap's disassembly pseudo-source
        path, line = None, None
    name = str(raw.get("name", "?"))
    if language == "rust":
        name = rust_function(name)
    elif language == "cpp":
        name = short_type(name)  # a signature spelled with every default template argument is KBs long
    return Frame(name=name, file=path, line=line, column=raw.get("column"),
                 pc=_address(raw.get("instructionPointerReference")))


def _address(value: object) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value, 0)
    return None


# -- values ---------------------------------------------------------------------------------------------


def _closing(text: str, start: int) -> int:
    """The index of the brace closing the one at ``start`` (or the end of the text)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1


def rust_value(value: str) -> str:
    """lldb's raw layout of a Rust enum read through a reference (``Some{$variants$:{… $variant$:{value:
    {0:0x55…}}}}``) as Rust prints it (``Some(0x55…)``), and a ``&&str``'s list of chars as a string."""
    while (match := _ENUM_LAYOUT.search(value)) is not None:
        brace = match.start(1) + len(match.group(1))
        end = _closing(value, brace)
        inner = value[match.end():end]
        payload = ""
        if _PAYLOAD in inner:
            start = inner.index(_PAYLOAD) + len(_PAYLOAD)
            payload = "(" + inner[start:_closing(inner, start - 3)] + ")"  # the brace of "{0:"
        value = value[:match.start()] + match.group(1) + payload + value[end + 1:]
    chars = _CHARS.search(value)
    if chars and value[chars.end():].strip() == "":
        text = "".join(c[1:-1] for c in re.findall(r"'(?:\\.|[^'\\])*'", chars.group(1)))
        value = value[:chars.start()] + '"' + text.replace('"', '\\"') + '"'
    return value


def split_top(text: str) -> list[str]:
    """Split ``a, b, c`` on the commas outside quotes and brackets."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    parts.append(text[start:].strip())
    return parts


def pair_of(value: str) -> tuple[str, str] | None:
    """Key and value of a map entry shown as ``{first:"a", second:1}`` (C++) or ``("a", 1)`` (Rust)."""
    if len(value) < 2 or (value[0], value[-1]) not in (("{", "}"), ("(", ")")):
        return None
    parts = split_top(value[1:-1])
    if len(parts) != 2:
        return None
    key, val = parts
    if value[0] == "{":
        if not (key.startswith("first:") and val.startswith("second:")):
            return None
        key, val = key[len("first:"):], val[len("second:"):]
    return key, val


def renamed(var: Variable, language: str) -> Variable:
    """The cheap part of shaping: Rust type names, and a pointer's memory reference (lldb-dap gives
    the pointer's own address; DAP means the address it points at)."""
    if (var.type or "").rstrip().endswith("*"):
        pointee = _HEX.match(var.value)
        if pointee:
            var = var._replace(memory_reference=pointee.group(0))
    if language != "rust":
        return var
    return var._replace(type=rust_type(var.type), value=rust_value(var.value) if "$variants$" in var.value
                        or "{'" in var.value else var.value)


def only_size(value: str) -> bool:
    """lldb's summary says nothing but the size (``size=3``): a preview would say more."""
    return _SIZE.fullmatch(value) is not None


async def shaped(var: Variable, children: Children, language: str, depth: int = 1) -> Variable:
    """A value as the language would print it: container previews (``depth`` levels of containers
    inside), Rust type names. A preview lldb-dap fails to give leaves lldb's summary."""
    shown = renamed(var, language)
    if var.ref and only_size(var.value):
        with contextlib.suppress(AdapterError):
            return shown._replace(value=await preview(var, children, language, depth))
    return shown


async def preview(var: Variable, children: Children, language: str, depth: int) -> str:
    """``{10, 20, 30}``, ``{"alice": 31}``, Rust ``[1, 2, 3]``: the first children of a container whose
    summary is ``size=N``, cut after ``PREVIEW_ITEMS`` or ``PREVIEW_CHARS``, the size said when cut."""
    match = _SIZE.fullmatch(var.value)
    assert match is not None
    size = int(match.group(1))
    rust = language == "rust"
    kind = var.type or ""
    is_map = bool(_MAP_TYPE.search(kind))
    is_set = bool(_SET_TYPE.search(kind))
    items: list[str] = []
    length = 0
    for child in await children(var.ref, 0, min(size, PREVIEW_ITEMS)) if size else []:
        value = child.value
        if depth > 0 and child.ref and only_size(value):
            value = (await shaped(child, children, language, depth - 1)).value
        if is_map:
            pair = pair_of(value)
            if (pair is None or only_size(pair[1])) and child.ref:  # ask for key and value
                parts = await children(child.ref, 0, 2)
                if len(parts) == 2:
                    entry = (await shaped(parts[1], children, language, depth - 1)).value \
                        if depth > 0 else parts[1].value
                    pair = (parts[0].value, entry)
            value = f"{pair[0]}: {pair[1]}" if pair else value
        items.append(value)
        length += len(value) + 2
        if length > PREVIEW_CHARS:
            break
    more = len(items) < size
    body = ", ".join(items) + (", …" if more and items else "…" if more else "")
    opener, closer = ("{", "}") if (is_map or is_set or not rust) else ("[", "]")
    text = f"{opener}{body}{closer}"
    if more:
        text += f" ({'len' if rust else 'size'}={size})"
    return text


def general_registers(found: list[Variable]) -> list[Variable]:
    """The full-width registers of lldb's "General Purpose Registers" group, without their
    sub-registers (eax, ax, al; w0 …), plus the flags and special ones."""
    width = found[0].type if found else None
    return [r for r in found if r.type == width or r.name in _SPECIAL_REGISTERS]
