"""PHP values as Xdebug's ``<property>`` elements describe them, read as the agent sees values everywhere.

A property carries its ``name`` (``$a``, an array key, a property name), ``fullname`` (the expression that
reaches it: ``$map["a"]->items[0]``), ``type`` (int, float, bool, string, null, array, object, resource,
uninitialized), for an object its ``classname``, for a container ``numchildren`` and, down to the connection's
``max_depth``, its first page of children. Values read as PHP writes them: ``"text"`` (escaped as PHP's
double-quoted strings), ``true``, ``null``, ``array(3) [1, 2, 3]`` or ``array(2) ["a" => 1, "b" => 2]`` (the
children Xdebug sent along, the rest elided), ``App\\User {name: "Ada", id: 7}``. A string longer than the
connection's ``max_data`` arrives cut: its ``size`` says how long it is, and the value says so.
"""

from __future__ import annotations

import json
from typing import NamedTuple

from polydbg.dbgp.client import Element, text_of

PREVIEW_ITEMS = 5  # children of an array or object shown inline
UNINITIALIZED = "<uninitialized>"


class Prop(NamedTuple):
    """One property, read."""

    name: str
    fullname: str | None
    value: str
    type: str
    children: int  # how many it has (0: a scalar)
    facet: str  # "public", "private", "static public", …


def read(prop: Element) -> Prop:
    kind = prop.get("type") or "unknown"
    count = int(prop.get("numchildren") or 0) if prop.get("children") == "1" else 0
    type_name = prop.get("classname") or kind if kind == "object" else kind
    return Prop(name=prop.get("name") or "", fullname=prop.get("fullname"), value=describe(prop), type=type_name,
                children=count, facet=prop.get("facet") or "")


def describe(prop: Element, nested: bool = False) -> str:
    """A property's value as PHP would write it, its children (those sent along) inline when not ``nested``."""
    kind = prop.get("type") or "unknown"
    if kind == "string":
        text = text_of(prop)
        size = int(prop.get("size") or len(text))
        quoted = php_string(text)
        return quoted if size <= len(text.encode()) else f"{quoted}… ({size} bytes)"
    if kind == "bool":
        return "true" if text_of(prop) == "1" else "false"
    if kind == "null":
        return "null"
    if kind == "uninitialized":
        return UNINITIALIZED
    if kind in ("array", "object"):
        return _container(prop, kind, nested)
    return text_of(prop)  # int, float, resource ("resource id='5' type='stream'")


def _container(prop: Element, kind: str, nested: bool) -> str:
    count = int(prop.get("numchildren") or 0)
    head = f"array({count})" if kind == "array" else prop.get("classname") or "object"
    children = prop.findall("property")
    if nested or not children:
        return head if count or kind == "object" else "[]"
    shown = children[:PREVIEW_ITEMS]
    rest = ", …" if count > len(shown) else ""
    if kind == "array":
        listed = all((c.get("name") or "") == str(i) for i, c in enumerate(children))
        items = [describe(c, True) if listed else f"{_key(c.get('name') or '')} => {describe(c, True)}" for c in shown]
        return f"{head} [{', '.join(items)}{rest}]"
    items = [f"{c.get('name') or ''}: {describe(c, True)}" for c in shown if "static" not in (c.get("facet") or "")]
    return f"{head} {{{', '.join(items)}{rest}}}"


def _key(name: str) -> str:
    return name if name.lstrip("-").isdigit() else php_string(name)


def php_string(text: str) -> str:
    """A double-quoted PHP string literal (JSON's escapes are PHP's, but $ must not start a variable)."""
    return json.dumps(text, ensure_ascii=False).replace("$", "\\$")


def children(prop: Element) -> list[Element]:
    return prop.findall("property")


def page_size(prop: Element) -> int | None:
    value = prop.get("pagesize")
    return int(value) if value and value.isdigit() else None
