"""How gdb prints values, read for an agent: short type names, element counts, which values get a
ref, and one-level summaries of compound children. Pure functions: no gdb runs here."""

from __future__ import annotations

import re
from typing import Any

SUMMARY_ITEMS = 12  # members shown in the one-level summary of a compound child
_ACCESS_GROUPS = frozenset({"public", "private", "protected"})
_COUNT = re.compile(r"\b(?:of length|with) (\d+) elements?\b|\bof length (\d+)\b|\b(?:size|len)=(\d+)\b")
ARRAY_TYPE = re.compile(r"\[(\d+)\]$")
_CHAR_POINTER = re.compile(r"\bchar(?:8_t|16_t|32_t)?\s*(?:const\s*)?\*$|\bwchar_t\s*(?:const\s*)?\*$")
_FUNCTION_POINTER = re.compile(r"\(\*\)")


def to_int(value: Any, default: int = 0, base: int = 10) -> int:
    try:
        return int(str(value), base)
    except (TypeError, ValueError):
        return default


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def children_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    kids = payload.get("children") or []
    out = []
    for kid in kids if isinstance(kids, list) else [kids]:
        if isinstance(kid, dict):
            out.append(kid.get("child", kid) if isinstance(kid.get("child"), dict) else kid)
    return out


def is_access_group(child: dict[str, Any]) -> bool:
    return str(child.get("exp")) in _ACCESS_GROUPS and "type" not in child


def is_pointer(type_: str) -> bool:
    t = type_.strip()
    return t.endswith("*") or t.endswith("* const") or t.startswith(("*const ", "*mut "))


def pointer_expandable(type_: str, value: str) -> bool:
    t = type_.strip()
    if not (is_pointer(t) or t.startswith("&")) or _FUNCTION_POINTER.search(t) or _CHAR_POINTER.search(t):
        return False
    if re.match(r"^(const\s+)?void\s*\*", t) or t.startswith(("&str", "&[u8]")):
        return False
    address = value.split(None, 1)[0] if value else ""
    return address not in ("0x0", "", "<optimized") and not value.startswith("<")


def expandable(type_: str | None, value: str, compound: bool | None) -> bool:
    """Whether a value has children worth a ref: compound (struct/array/container) or a pointer to one."""
    v = value.strip()
    if v.startswith("<") and v.endswith(">"):  # <optimized out>, <error: …>, <synthetic pointer>
        return False
    if compound:
        return not v.startswith(('"', "'")) and v not in ("{}", "")
    if type_ and re.search(r"&&?$", type_.strip()):  # a C++ reference: what it refers to decides
        compound = None
    if compound is None and (v.startswith("{") or " = {" in v or re.search(r"\) = \[", v)):
        return v not in ("{}",)
    return bool(type_) and pointer_expandable(type_ or "", v)


_RUST_PATHS = re.compile(r"\b(?:alloc::(?:vec|string|boxed|rc|sync|collections::[a-z_]+)|core::(?:option|result|cell)"
                         r"|std::collections::hash::(?:map|set))::")


_RUST_ENUM = re.compile(r"\bcore::(?:option::Option|result::Result)<.*?>::(Some|None|Ok|Err)\b")


def short_rust_type(type_: str) -> str:
    """A Rust type without std's module paths and default allocator: ``Vec<i32>``, ``Option<String>``."""
    return _RUST_PATHS.sub("", type_.replace(", alloc::alloc::Global", ""))


def short_rust_value(value: str) -> str:
    """``Some(7)`` for gdb's ``core::option::Option<i32>::Some(7)`` (and None, Ok, Err)."""
    return _RUST_ENUM.sub(r"\1", value) if "core::" in value else value


def element_count(type_: str | None, value: str) -> int | None:
    """The number of elements of an array type or of a pretty-printed container, when it says."""
    if type_:
        match = ARRAY_TYPE.search(type_.strip())
        if match:
            return int(match.group(1))
    head = value.split("=", 1)[0] if " = {" in value else value
    match = _COUNT.search(head[:200])
    if match:
        return int(next(g for g in match.groups() if g is not None))
    return None


def is_placeholder(value: str) -> bool:
    """A varobj's stand-in for a compound value: ``{...}`` (struct) or ``[N]`` (array)."""
    return value == "{...}" or bool(re.fullmatch(r"\[\d+\]", value))


def child_name(kid: dict[str, Any]) -> str:
    exp = str(kid.get("exp", kid.get("name", "?")))
    return f"[{exp}]" if exp.isdigit() else exp


def pair_up(kids: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A map-hinted varobj lists key, value, key, value …: show ``[key] = value`` children."""
    out = []
    for i in range(0, len(kids) - 1, 2):
        key, value = kids[i], dict(kids[i + 1])
        value["exp"] = f"[{key.get('value', '?')}]"
        out.append(value)
    return out


def summary_of(kids: list[dict[str, Any]], hint: str) -> str:
    if hint == "map":
        pairs = pair_up(kids)
        items = [f"{p['exp']} = {p.get('value', '')}" for p in pairs[:SUMMARY_ITEMS]]
        more = len(pairs) > SUMMARY_ITEMS
    else:
        positional = all(str(k.get("exp", "")).strip("[]").isdigit() for k in kids)
        items = [str(k.get("value", "")) if positional else f"{k.get('exp')} = {k.get('value', '')}"
                 for k in kids[:SUMMARY_ITEMS]]
        more = len(kids) > SUMMARY_ITEMS
    return "{" + ", ".join(items) + (", …" if more else "") + "}"
