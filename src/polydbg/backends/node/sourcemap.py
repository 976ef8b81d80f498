"""Source maps (revision 3): generated JavaScript positions ↔ original (TypeScript) positions.

Written here rather than taken from PyPI: the packages there decode one direction only (generated →
original) or pull in a dependency tree for what is ~150 lines — base64 VLQ and two sorted lookups.
Both directions are needed: frames and stops are reported in original coordinates, breakpoints
given on a ``.ts`` line are set at the generated line **and column** (``tsx`` emits a whole module
on one generated line, so a line alone says nothing).

Forms handled: an external ``.map`` file (``sources`` relative to the map, ``sourceRoot``), an
inline ``data:`` URL (base64 or percent-encoded), ``file://`` sources, and index maps (``sections``).
All lines and columns here are 0-based, as in the format and in CDP.
"""

from __future__ import annotations

import base64
import bisect
import json
import os
import urllib.parse
from collections.abc import Iterable
from typing import Any, NamedTuple

_B64 = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")}


class SourceMapError(ValueError):
    """A map that cannot be read or decoded."""


class Mapping(NamedTuple):
    gen_line: int
    gen_column: int
    source: int  # index into SourceMap.sources
    line: int
    column: int


class Original(NamedTuple):
    path: str
    line: int
    column: int


class Generated(NamedTuple):
    line: int
    column: int


def decode_vlq(segment: str) -> list[int]:
    """The signed integers of one base64 VLQ segment (``"AAgBC"`` → ``[0, 0, 16, 1]``)."""
    values: list[int] = []
    value = shift = 0
    for char in segment:
        digit = _B64.get(char)
        if digit is None:
            raise SourceMapError(f"invalid base64 VLQ character {char!r}")
        value += (digit & 31) << shift
        if digit & 32:
            shift += 5
            continue
        values.append(-(value >> 1) if value & 1 else value >> 1)
        value = shift = 0
    if shift:
        raise SourceMapError("truncated base64 VLQ segment")
    return values


def decode_mappings(mappings: str) -> list[tuple[int, int, int, int, int]]:
    """Every segment that maps to a source, as (gen_line, gen_column, source, line, column)."""
    out: list[tuple[int, int, int, int, int]] = []
    source = line = column = 0
    for gen_line, group in enumerate(mappings.split(";")):
        gen_column = 0
        for segment in group.split(","):
            if not segment:
                continue
            fields = decode_vlq(segment)
            gen_column += fields[0]
            if len(fields) >= 4:
                source += fields[1]
                line += fields[2]
                column += fields[3]
                out.append((gen_line, gen_column, source, line, column))
    return out


class SourceMap:
    """One decoded map: lookups both ways over mappings sorted by each side."""

    def __init__(self, sources: list[str], mappings: Iterable[tuple[int, int, int, int, int]]) -> None:
        self.sources = sources
        self._by_generated = sorted(Mapping(*m) for m in mappings)
        self._keys = [(m.gen_line, m.gen_column) for m in self._by_generated]
        self._by_source: dict[int, list[Mapping]] = {}
        for m in self._by_generated:
            self._by_source.setdefault(m.source, []).append(m)
        for entries in self._by_source.values():
            entries.sort(key=lambda m: (m.line, m.column, m.gen_line, m.gen_column))
        self._source_keys = {s: [(m.line, m.column) for m in entries] for s, entries in self._by_source.items()}
        self._index = {os.path.normpath(path): i for i, path in enumerate(sources)}

    @classmethod
    def parse(cls, text: str | bytes, base: str) -> SourceMap:
        """Decode a map's JSON; relative ``sources`` are resolved against ``base`` (the map's directory)."""
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise SourceMapError(f"not a JSON source map: {exc}") from exc
        if not isinstance(data, dict):
            raise SourceMapError("not a JSON source map object")
        return cls._from(data, base)

    @classmethod
    def _from(cls, data: dict[str, Any], base: str) -> SourceMap:
        if "sections" in data:  # an index map: each section's map, offset
            sources: list[str] = []
            merged: list[tuple[int, int, int, int, int]] = []
            for section in data.get("sections") or []:
                offset = section.get("offset") or {}
                inner = cls._from(section.get("map") or {}, base)
                first = len(sources)
                sources.extend(inner.sources)
                line0, col0 = int(offset.get("line", 0)), int(offset.get("column", 0))
                for m in inner._by_generated:
                    merged.append((m.gen_line + line0, m.gen_column + (col0 if m.gen_line == 0 else 0),
                                   m.source + first, m.line, m.column))
            return cls(sources, merged)
        root = str(data.get("sourceRoot") or "")
        names = [resolve_source(root, str(s or ""), base) for s in data.get("sources") or []]
        mappings = data.get("mappings")
        if not isinstance(mappings, str):
            raise SourceMapError("source map has no mappings")
        return cls(names, decode_mappings(mappings))

    def knows(self, path: str) -> bool:
        return os.path.normpath(path) in self._index

    def original(self, line: int, column: int) -> Original | None:
        """The original position of a generated one: the last mapping at or before it on its line,
        else the line's first mapping; None when the line maps to nothing."""
        i = bisect.bisect_right(self._keys, (line, column)) - 1
        if i < 0 or self._by_generated[i].gen_line != line:
            i = bisect.bisect_left(self._keys, (line, 0))
            if i >= len(self._keys) or self._by_generated[i].gen_line != line:
                return None
        m = self._by_generated[i]
        return Original(self.sources[m.source], m.line, m.column)

    def generated(self, path: str, line: int, column: int | None = None) -> tuple[Generated, int] | None:
        """Where original ``line`` (and ``column``, if given) starts in the generated code, and the
        original line actually mapped: the first mapped line at or after ``line`` (a blank or comment
        line has no code of its own). None when nothing at or after it is mapped."""
        source = self._index.get(os.path.normpath(path))
        if source is None:
            return None
        entries = self._by_source.get(source, [])
        i = bisect.bisect_left(self._source_keys.get(source, []), (line, column or 0))
        if i >= len(entries):
            return None
        found = entries[i].line
        same = [m for m in entries[i:] if m.line == found]
        first = min(same, key=lambda m: (m.column, m.gen_line, m.gen_column)) if column is None else same[0]
        return Generated(first.gen_line, first.gen_column), found


def resolve_source(root: str, source: str, base: str) -> str:
    """An absolute path for a map's source entry (``file://`` URLs, ``sourceRoot``, relative paths)."""
    joined = source
    if root and not source.startswith(("/", "file:")):
        joined = root.rstrip("/") + "/" + source
    if joined.startswith("file://"):
        return os.path.normpath(urllib.parse.unquote(urllib.parse.urlparse(joined).path))
    if "://" in joined:  # webpack://, http:// …: keep as a name, not a path
        return joined
    return os.path.normpath(os.path.join(base, urllib.parse.unquote(joined)))


def read_data_url(url: str) -> str:
    """The text of a ``data:`` URL (``data:application/json;charset=utf-8;base64,…``)."""
    header, sep, payload = url.partition(",")
    if not sep:
        raise SourceMapError("malformed data: URL")
    if header.endswith(";base64"):
        try:
            return base64.b64decode(payload).decode("utf-8")
        except (ValueError, UnicodeDecodeError) as exc:
            raise SourceMapError(f"bad base64 in inline source map: {exc}") from exc
    return urllib.parse.unquote(payload)


def load(map_url: str, script_path: str | None) -> SourceMap:
    """The map a script names in ``sourceMappingURL``: inline, a ``file://`` URL, or relative to the script."""
    base = os.path.dirname(script_path) if script_path else os.getcwd()
    if map_url.startswith("data:"):
        return SourceMap.parse(read_data_url(map_url), base)
    if map_url.startswith("file://"):
        path = urllib.parse.unquote(urllib.parse.urlparse(map_url).path)
    elif "://" in map_url:
        raise SourceMapError(f"source map {map_url} is not a local file")
    else:
        path = os.path.normpath(os.path.join(base, urllib.parse.unquote(map_url)))
    try:
        with open(path, "rb") as handle:
            text = handle.read()
    except OSError as exc:
        raise SourceMapError(f"cannot read source map {path}: {exc.strerror}") from exc
    return SourceMap.parse(text, os.path.dirname(path))
