"""The scripts V8 has parsed, their source maps, and positions translated between the two.

Every location the agent sees is in the file it wrote: a frame in a mapped script reports the
original (``.ts``) file and line; a position the map does not cover (a loader's helper code) has no
line. Node's own modules (``node:…``) and dependencies (``/node_modules/``) are not the user's code:
stepping does not stop there. A user script whose map cannot be read keeps why (``map_problem``): a
breakpoint in a file no loaded map covers says so, since that map may well be the one that should.
"""

from __future__ import annotations

import logging
import os
import time
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from polydbg.backends.node import lexical, sourcemap
from polydbg.backends.node.launcher import TS_EXTENSIONS
from polydbg.backends.node.sourcemap import SourceMap, SourceMapError

log = logging.getLogger(__name__)


class Place(NamedTuple):
    file: str | None  # a path for the user's files, the URL for Node's own (node:internal/…)
    line: int | None  # 1-based, in the file's own terms; None where a map does not cover the position
    column: int | None


@dataclass
class Script:
    id: str
    url: str
    path: str | None  # for file:// scripts
    map: SourceMap | None = None
    map_problem: str | None = None  # why its source map could not be read
    source: lexical.Source | None = None  # the generated source, once something needed it
    loaded: str | None = None  # a TypeScript file's text when it loaded (a reload compares the file with it)
    parsed_ns: int = field(default_factory=time.time_ns)  # when V8 parsed it (a dependency edited later is reloaded)

    @property
    def internal(self) -> bool:
        return not self.url.startswith("file://") or "/node_modules/" in self.url


def _text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def path_of(url: str) -> str | None:
    if not url.startswith("file://"):
        return None
    return os.path.normpath(urllib.parse.unquote(urllib.parse.urlparse(url).path))


# What Node's pathToFileURL leaves as it is in a script's URL (v20): ``@`` of a scoped package among them, which
# Python's as_uri writes %40 (a breakpoint's URL would name no script Node loads).
_URL_PLAIN = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/-._@+,;=!$&'()*:")


def url_of(path: str) -> str:
    """The ``file://`` URL Node gives the script at ``path``."""
    return "file://" + "".join(chr(b) if b in _URL_PLAIN else f"%{b:02X}" for b in os.fsencode(str(Path(path))))


class PathMap:
    """An attach's ``path_mappings`` ({local: remote}): the program's own (remote) paths as the agent's
    (local) ones, and back; the longest matching root wins, a path under none is left as it is."""

    def __init__(self, pairs: Sequence[tuple[str, str]] = ()) -> None:
        self._pairs = [(os.path.normpath(local), os.path.normpath(remote)) for local, remote in pairs]

    def local(self, path: str) -> str:
        return self._swap(path, 1)

    def remote(self, path: str) -> str:
        return self._swap(path, 0)

    def _swap(self, path: str, side: int) -> str:
        roots = [pair for pair in self._pairs if path == pair[side] or path.startswith(pair[side].rstrip("/") + "/")]
        if not roots:
            return path
        pair = max(roots, key=lambda p: len(p[side]))
        rest = path[len(pair[side]):].lstrip("/")
        return os.path.join(pair[1 - side], rest) if rest else pair[1 - side]


def position(location: dict[str, Any]) -> tuple[str, int, int]:
    """A CDP ``Location`` (or a ``Runtime.CallFrame``, which has its fields) as (script id, 0-based line, 0-based
    column)."""
    return str(location.get("scriptId")), int(location.get("lineNumber", 0)), int(location.get("columnNumber", 0))


class Scripts:
    def __init__(self, paths: PathMap | None = None) -> None:
        self._paths = paths or PathMap()
        self._by_id: dict[str, Script] = {}
        self._mapped: list[Script] = []  # the few scripts with a source map (Node's own have none)
        self._broken: list[Script] = []  # user scripts whose source map could not be read

    def parsed(self, params: dict[str, Any]) -> Script:
        """Record a ``Debugger.scriptParsed``; a user script's source map is read now, before it runs."""
        url = str(params.get("url") or "")
        path = path_of(url)
        script = Script(str(params.get("scriptId")), url, None if path is None else self._paths.local(path))
        self._by_id[script.id] = script
        map_url = str(params.get("sourceMapURL") or "")
        if map_url and script.path is not None and not script.internal:
            try:
                script.map = sourcemap.load(map_url, script.path)
            except SourceMapError as exc:
                script.map_problem = str(exc)
                self._broken.append(script)
                log.info("source map of %s: %s", url, exc)
        if script.map is not None:
            self._mapped.append(script)
            if script.path is not None and script.path.lower().endswith(TS_EXTENSIONS):
                script.loaded = _text(script.path)
        return script

    def get(self, script_id: str) -> Script | None:
        return self._by_id.get(script_id)

    def user_scripts(self) -> list[Script]:
        """The loaded scripts of the program's own (not Node's, not a dependency's)."""
        return [script for script in self._by_id.values() if not script.internal]

    def files(self) -> list[Script]:
        """The loaded scripts read from files: the program's own and its dependencies'."""
        return [script for script in self._by_id.values() if script.path is not None]

    def mapping(self, path: str) -> list[Script]:
        """Loaded scripts whose source maps cover ``path``."""
        return [s for s in self._mapped if s.map is not None and s.map.knows(path)]

    def map_problems(self) -> str:
        """Why loaded scripts' source maps could not be read, as a parenthesis to add to a message ("" if none)."""
        broken = self._broken
        if not broken:
            return ""
        first = broken[0]
        if len(broken) == 1:
            return f" (the source map of {first.path} could not be read: {first.map_problem})"
        return (f" (the source maps of {len(broken)} loaded scripts could not be read; {first.path}: "
                f"{first.map_problem})")

    def place(self, script_id: str, line: int, column: int) -> Place:
        """A 0-based generated position as the user's file, 1-based line and column."""
        script = self._by_id.get(script_id)
        if script is None:
            return Place(None, line + 1, column + 1)
        if script.map is not None:
            original = script.map.original(line, column)
            if original is None:
                return Place(script.path, None, None)
            return Place(original.path, original.line + 1, original.column + 1)
        return Place(script.path or script.url, line + 1, column + 1)

    def is_user_code(self, script_id: str, line: int, column: int) -> bool:
        script = self._by_id.get(script_id)
        if script is None or script.internal:
            return False
        return script.map is None or script.map.original(line, column) is not None
