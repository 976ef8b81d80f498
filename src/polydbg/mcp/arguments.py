"""A tool call's raw arguments, checked before the SDK validates them.

The SDK's argument models ignore names they do not know, so ``breakpoint`` for ``breakpoints`` or
``stop_at_entry`` for ``stop_on_entry`` ran as if absent and the agent believed its breakpoints were
set. Here every name, at every depth the tool's input schema describes (a breakpoint's fields, a
trace point's), must be one the tool takes; an unknown one is refused naming the closest valid name
and all of them.

Strings are checked too, naming the argument: a lone UTF-16 surrogate (the stdio reader marks it, see
``SURROGATE_MARK``: the SDK's JSON parser refuses such a message outright, so it got no answer at
all), a NUL byte (no path, name or expression can hold one), and a length no tool needs.

The SDK's own validation errors (a wrong type, a value outside an enum or a range) are rewritten in
the same form: the argument, what it takes, what was given (cut), instead of pydantic's multi-line
report with a link.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import ValidationError

from polydbg.errors import ECHO_LIMIT, did_you_mean, echo

# U+10FFFF, a noncharacter "for internal use": the stdio reader puts it where a message held a lone
# surrogate escape, so the tool that receives it can name the argument.
SURROGATE_MARK = "\U0010ffff"
# Strings beyond this are refused (the program's input aside): no path, expression or command needs more.
MAX_STRING = 100_000
# Arguments that carry the program's own data, where any character (NUL included) and length is fine.
_FREE_TEXT = frozenset({"stdin"})
MAX_FREE_TEXT = 16 * 1024 * 1024

_LONE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def problem(tool: str, schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    """What is wrong with ``arguments`` for ``tool`` (whose input schema is ``schema``), or None."""
    for path, name, allowed in _names(schema, arguments, ""):
        if name not in allowed:
            return _unknown(tool, path, name, allowed)
    for path, kinds, value in _typed(schema, arguments, ""):
        if not _fits(kinds, value):
            return f"{tool}: {path} takes {_kinds(kinds)} (got {_shown(value)})"
    for path, text in _strings(arguments, ""):
        arg = path.split("[")[0].split(".")[0]
        if SURROGATE_MARK in text:
            at = text.index(SURROGATE_MARK)
            return (f"{tool}: argument {path!r} holds a lone UTF-16 surrogate (a \\ud800-\\udfff escape with no "
                    f"partner) at character {at}; it is not text. Send valid Unicode (a pair of escapes, or the "
                    "character itself)")
        if arg in _FREE_TEXT:
            if len(text) > MAX_FREE_TEXT:
                return f"{tool}: argument {path!r} is {len(text):,} characters; the limit is {MAX_FREE_TEXT:,}"
            continue
        if "\0" in text:
            return (f"{tool}: argument {path!r} contains a NUL byte (\\0) at character {text.index(chr(0))}; "
                    "paths, names and expressions cannot hold one. Remove it")
        if len(text) > MAX_STRING:
            return (f"{tool}: argument {path!r} is {len(text):,} characters; the limit is {MAX_STRING:,}. "
                    "Pass something shorter (a program's input goes in stdin, data in a file the program reads)")
    return None


def _names(schema: Mapping[str, Any], value: Any, path: str) -> Iterator[tuple[str, str, list[str]]]:
    """(where, name, the names allowed there) for every object key the schema's properties govern."""
    if isinstance(value, Mapping) and isinstance(schema.get("properties"), Mapping):
        properties: Mapping[str, Any] = schema["properties"]
        for name, item in value.items():
            if name not in properties:
                yield path, str(name), list(properties)
                continue
            yield from _names(properties[name], item, f"{path}.{name}" if path else str(name))
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _names(schema["items"], item, f"{path}[{index}]")


def _typed(schema: Mapping[str, Any], value: Any, path: str) -> Iterator[tuple[str, set[str], Any]]:
    """(where, the JSON types the schema allows there, the value) for every value the properties govern."""
    if isinstance(value, Mapping) and isinstance(schema.get("properties"), Mapping):
        for name, item in value.items():
            sub = schema["properties"].get(name)
            if isinstance(sub, Mapping):
                where = f"{path}.{name}" if path else str(name)
                kinds = {k for variant in (sub.get("anyOf") or [sub]) if isinstance(variant, Mapping)
                         for k in ([variant["type"]] if isinstance(variant.get("type"), str) else [])}
                if kinds:
                    yield where, kinds, item
                yield from _typed(sub, item, where)
    elif isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        for index, item in enumerate(value):
            yield from _typed(schema["items"], item, f"{path}[{index}]")


def _fits(kinds: set[str], value: Any) -> bool:
    """Whether ``value`` is one of ``kinds`` as JSON spells it, or as the SDK reads it from a string ("true",
    "3"). Only the conversions that change meaning are refused: a boolean for anything else (``line=true``
    was line 1), anything else for a boolean (``detach="yes"`` detached)."""
    if isinstance(value, bool):
        return "boolean" in kinds
    if "boolean" in kinds and len(kinds) == 1:
        return value in ("true", "false")
    return True


def _kinds(kinds: set[str]) -> str:
    names = {"boolean": "true or false", "integer": "a number", "number": "a number", "string": "text",
             "array": "a list", "object": "an object"}
    return " or ".join(sorted({names.get(k, k) for k in kinds}))


def _strings(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            key_path = f"{path}.{key}" if path else str(key)
            yield from _strings(str(key), key_path)
            yield from _strings(item, key_path)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _strings(item, f"{path}[{index}]")


# Names agents reach for that are another argument's job, with what to pass instead.
_MEANT = {"text": "line (it takes a number or text on the line)", "expr": "expression", "timeout": "timeout_s",
          "frame": "frame_id", "thread": "thread_id", "hit_count": "hit_condition", "logpoint": "log_message"}


def _unknown(tool: str, path: str, name: str, allowed: list[str]) -> str:
    where = f"{tool} has no argument" if not path else f"{tool}: {path} has no field"
    meant = _MEANT.get(name, "")
    hint = f"; pass {meant}." if meant.split()[:1] and meant.split()[0] in allowed else did_you_mean(name, allowed, ".")
    if not allowed:
        return f"{where} {_quoted(name)}: it takes none"
    kind = "arguments" if not path else "fields"
    return f"{where} {_quoted(name)}{hint} Its {kind}: {', '.join(allowed)}"


def _quoted(name: str) -> str:
    """A name as the caller sent it: a lone surrogate (marked by the stdio reader) shown as one."""
    return echo(name, 60).replace(SURROGATE_MARK, "\\udXXX").replace("\\U0010ffff", "\\u(lone surrogate)")


def listed(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with a lone string given for a list of strings made that list (``filter="req"``,
    ``exception="raised"``): what the agent plainly meant. A string holding a JSON list is left to the SDK,
    which reads it as one."""
    properties = schema.get("properties")
    out = dict(arguments)
    if not isinstance(properties, Mapping):
        return out
    for name, value in arguments.items():
        sub = properties.get(name)
        if (isinstance(value, str) and isinstance(sub, Mapping) and sub.get("type") == "array"
                and isinstance(sub.get("items"), Mapping) and sub["items"].get("type") == "string"
                and not value.lstrip().startswith("[")):
            out[name] = [value]
    return out


def unknown_tool(name: str, known: list[str]) -> str:
    return f"no tool {_quoted(name)}{did_you_mean(name, known)} the tools are: {', '.join(known)}"


def validation_message(tool: str, error: ValidationError, schema: Mapping[str, Any] | None = None) -> str:
    """A pydantic error report as one line per argument: where, what it takes, what was given (cut). The
    members of a union (``line``: a number or text) are one argument, not pydantic's ``line.constrained-int``
    and ``line.str``."""
    said: dict[str, list[str]] = {}
    given: dict[str, Any] = {}
    for item in error.errors(include_url=False):
        where = _where(item["loc"], schema) or "arguments"
        said.setdefault(where, [])
        if item["msg"] not in said[where]:
            said[where].append(item["msg"])
        if item["type"] != "missing":
            given.setdefault(where, item.get("input"))
    lines = [f"{where}: {' or '.join(messages)}" + (f" (got {_shown(given[where])})" if where in given else "")
             for where, messages in said.items()]
    return f"{tool}: " + "; ".join(lines)


def _where(loc: tuple[int | str, ...], schema: Mapping[str, Any] | None) -> str:
    """The argument an error's ``loc`` names, without the union members pydantic names in it."""
    parts: list[str] = []
    node: Any = schema
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
            node = node.get("items") if isinstance(node, Mapping) else None
            continue
        properties = node.get("properties") if isinstance(node, Mapping) else None
        if isinstance(properties, Mapping):
            if part not in properties:
                continue  # a union member's tag
            node = properties[part]
        elif schema is not None:
            continue
        parts.append(f".{part}" if parts else part)
    return "".join(parts)


def _shown(value: Any) -> str:
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) <= ECHO_LIMIT else f"{text[:ECHO_LIMIT - 1]}… ({len(text)} characters)"
    return echo(value)


def mark_lone_surrogates(line: str) -> str:
    """A JSON-RPC line with each lone surrogate in its strings replaced by ``SURROGATE_MARK`` (the SDK's
    parser refuses the whole message otherwise, and the client waits for an answer that never comes).
    Lines without a surrogate escape are returned as they are, unparsed."""
    if not _LONE_ESCAPE.search(line):
        return line
    try:
        message = json.loads(line)
    except ValueError:
        return line  # not JSON at all: the SDK answers that
    marked = _marked(message)
    return line if marked == message else json.dumps(marked) + "\n"


def _marked(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub(SURROGATE_MARK, value)
    if isinstance(value, dict):
        return {_marked(k): _marked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_marked(item) for item in value]
    return value
