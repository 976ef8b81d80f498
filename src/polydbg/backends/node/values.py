"""V8 RemoteObjects as short value texts: what ``Point {x: 1, y: 2}`` or ``Map(2) {"a" => 1, …}`` reads.

CDP describes a value by type/subtype/className/description and, when asked, a *preview* of its
first properties. The text here follows what Node's own inspector console shows, compact: strings
JSON-quoted, functions by name only (their description is their whole source), an Error by its
first line, a Promise with its state, containers with their size and first entries. How many
children a value has (``count_of``) lets the session page arrays and collections. An exception's
``ExceptionDetails`` reads as its first line (``exception_text``).
"""

from __future__ import annotations

import json
import re
from typing import Any

_COUNT = re.compile(r"\((\d+)\)")
_IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")
PREVIEW_ITEMS = 5
INDEXED = frozenset({"array", "typedarray", "arraybuffer", "dataview"})
KEYED = frozenset({"map", "weakmap"})
LISTED = frozenset({"set", "weakset"})


def text_of(obj: dict[str, Any]) -> str:
    """A RemoteObject as one line."""
    kind = obj.get("type")
    if kind == "undefined":
        return "undefined"
    if kind == "string":
        return json.dumps(obj.get("value", ""), ensure_ascii=False)
    if kind in ("number", "bigint"):
        unserializable = obj.get("unserializableValue")
        if unserializable is not None:
            return str(unserializable)
        return str(obj.get("description") or _number(obj.get("value")))
    if kind == "boolean":
        return "true" if obj.get("value") else "false"
    if kind == "symbol":
        return str(obj.get("description", "Symbol()"))
    if kind == "function":
        return function_text(obj)
    subtype = obj.get("subtype")
    if subtype == "null":
        return "null"
    description = str(obj.get("description") or obj.get("className") or "Object")
    if subtype == "error":
        return description.split("\n", 1)[0]
    if subtype in ("regexp", "date"):
        return description
    preview = obj.get("preview")
    if subtype == "promise":
        return _promise(preview)
    if not isinstance(preview, dict):
        return description
    head = _head(obj, description)
    body = _preview_body(preview, subtype)
    return f"{head} {body}" if head else body


_STACK = re.compile(r"^\s+at ", re.MULTILINE)  # where an error's description goes on with its stack


def error_message(class_name: str, description: str) -> str:
    """An Error's message from V8's description (``Name: message`` and the stack), without the name before it:
    the class's, or the class's without the ``_`` a bundler put before it (chai's ``_AssertionError`` is named
    ``AssertionError``: the raised log read "_AssertionError: AssertionError: expected …"), nor the code Node's own
    errors have after it (``AssertionError [ERR_ASSERTION]: Expected values …``); a message of several lines
    (node:assert's "strictly equal:", then the values) as one line, up to the stack."""
    first = " ".join(line.strip() for line in _STACK.split(description, 1)[0].splitlines() if line.strip())
    for name in (class_name, class_name.lstrip("_$")):
        named = re.match(re.escape(name) + r"(?: \[[\w-]+\])?: ", first) if name else None
        if named:
            return first[named.end():]
    return first


def type_of(obj: dict[str, Any]) -> str:
    kind = str(obj.get("type", ""))
    if kind == "object":
        if obj.get("subtype") == "null":
            return "null"
        return str(obj.get("className") or "Object")
    return kind


def function_text(obj: dict[str, Any]) -> str:
    """``ƒ add(a, b)`` or ``class Point`` — never the function's whole source."""
    description = str(obj.get("description") or "")
    first = description.split("\n", 1)[0].strip()
    if first.startswith("class"):
        match = re.match(r"class\s+([\w$]+)", first)
        return f"class {match.group(1)}" if match else "class"
    head = first.split("{", 1)[0].split("=>", 1)[0].strip()
    head = re.sub(r"^(async\s+)?function\s*\*?\s*", r"\1", head)
    if "=>" in first and not head.startswith("("):
        head = f"({head})" if head else "()"
    return f"ƒ {head}" if head else "ƒ"


def count_of(obj: dict[str, Any]) -> int | None:
    """How many elements/entries an array, typed array, Map or Set has (from ``Array(3)``, ``Map(2)``)."""
    if obj.get("type") != "object" or obj.get("subtype") not in INDEXED | KEYED | LISTED:
        return None
    match = _COUNT.search(str(obj.get("description") or ""))
    return int(match.group(1)) if match else None


def expandable(obj: dict[str, Any]) -> bool:
    if obj.get("type") != "object" or "objectId" not in obj:
        return False
    return obj.get("subtype") not in ("null", "regexp", "date")


def member_access(parent: str | None, name: str) -> str | None:
    """How to name a child in an expression: ``p.x``, ``a[3]``, ``o["odd key"]``."""
    if not parent:
        return None
    if name.isdigit():
        return f"{parent}[{name}]"
    if _IDENTIFIER.match(name):
        return f"{parent}.{name}"
    return f"{parent}[{json.dumps(name)}]"


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return str(value)


def _head(obj: dict[str, Any], description: str) -> str:
    if obj.get("subtype") in INDEXED | KEYED | LISTED:
        return description
    class_name = str(obj.get("className") or "Object")
    return "" if class_name == "Object" else class_name


def _promise(preview: Any) -> str:
    if not isinstance(preview, dict):
        return "Promise"
    props = {p.get("name"): p for p in preview.get("properties") or []}
    state = (props.get("[[PromiseState]]") or {}).get("value", "pending")
    result = props.get("[[PromiseResult]]")
    if state == "pending" or result is None:
        return f"Promise {{<{state}>}}"
    return f"Promise {{<{state}>: {_preview_value(result)}}}"


def _preview_body(preview: dict[str, Any], subtype: Any) -> str:
    more = "…" if preview.get("overflow") else ""
    if subtype in KEYED | LISTED:
        entries = preview.get("entries") or []
        items = [(f"{_preview_value(e['key'])} => " if "key" in e else "") + _preview_value(e.get("value") or {})
                 for e in entries[:PREVIEW_ITEMS]]
        more = "…" if more or len(entries) > PREVIEW_ITEMS else ""
        return "{" + ", ".join(items + ([more] if more else [])) + "}"
    props = [p for p in preview.get("properties") or [] if not str(p.get("name", "")).startswith("[[")
             and (subtype not in INDEXED or str(p.get("name", "")).isdigit())]
    shown = props[:PREVIEW_ITEMS]
    more = "…" if more or len(props) > PREVIEW_ITEMS else ""
    if subtype in INDEXED:
        items = [_preview_value(p) for p in shown]
        return "[" + ", ".join(items + ([more] if more else [])) + "]"
    items = [f"{p.get('name')}: {_preview_value(p)}" for p in shown]
    return "{" + ", ".join(items + ([more] if more else [])) + "}"


def _preview_value(prop: dict[str, Any]) -> str:
    """One property of a preview (``ObjectPreview``/``PropertyPreview``), compact."""
    kind = prop.get("type")
    value = prop.get("value", prop.get("description", ""))
    if kind == "string":
        return json.dumps(value, ensure_ascii=False)
    if kind == "function":
        return "ƒ"
    if kind == "object":
        subtype = prop.get("subtype")
        if subtype == "null":
            return "null"
        if "properties" in prop or "entries" in prop:  # a nested ObjectPreview
            return "{…}" if subtype not in INDEXED else "[…]"
        text = str(value or prop.get("description") or "Object")
        if "\n" in text:  # an Error's description is its message and stack: one line of it, as for a value
            text = text.split("\n", 1)[0].rstrip() + " …"
        return "{…}" if text == "Object" else "[…]" if text.startswith("Array(") else text
    if kind == "accessor":
        return "(getter)"
    return str(value)


def exception_text(details: dict[str, Any]) -> str:
    """A CDP ``ExceptionDetails`` as one line: the thrown error's first line, else what V8 says."""
    exception = details.get("exception") or {}
    description = exception.get("description")
    if isinstance(description, str) and description:
        return description.split("\n", 1)[0]
    if exception:
        return text_of(exception)
    return str(details.get("text") or "exception")


def call_argument(obj: dict[str, Any]) -> dict[str, Any]:
    """A RemoteObject as the ``CallArgument`` that passes it back to V8."""
    if "objectId" in obj:
        return {"objectId": obj["objectId"]}
    if "unserializableValue" in obj:
        return {"unserializableValue": obj["unserializableValue"]}
    if obj.get("type") == "undefined":
        return {}
    return {"value": obj.get("value")}
