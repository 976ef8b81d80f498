"""A TypeScript loader's compile error, told as the build error it is.

tsx compiles each ``.ts`` file with esbuild as Node loads it. A file that does not parse throws esbuild's
``TransformError`` — "Transform failed with 1 error:", then one ``FILE:LINE:COLUMN: ERROR: MESSAGE`` line
per error — from inside tsx's minified code (checked with tsx 4.20, esbuild 0.25, Node 20.20). Under
CommonJS it is an uncaught exception thrown in tsx, where a stop shows minified code and the message's
first line; in an ES module it is thrown in Node's module-hooks worker and rethrown by Node's ESM loader
as a plain ``Error`` that only ``Runtime.exceptionThrown`` reports (its preview cuts the message). Either
way the file never ran and the program ends with code 1: the session ends on the build error, each error
with its file:line:column, its message and the source line it points at.
"""

from __future__ import annotations

import os
import re

_HEADER = re.compile(r"(?:Transform|Build) failed with \d+ errors?:")
_ERROR = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<column>\d+): ERROR: (?P<message>.+)$", re.MULTILINE)
SHOWN = 5  # errors listed at most


def is_compile_error(text: str) -> bool:
    """Whether an exception's text is esbuild's refusal of a file (tsx's loader throws it)."""
    return _HEADER.search(text) is not None


def describe(text: str, cwd: str | None) -> str | None:
    """The build error an esbuild ``TransformError``'s text states, paths relative to ``cwd`` where they lie
    under it; None when ``text`` is not one."""
    errors = list(_ERROR.finditer(text)) if is_compile_error(text) else []
    if not errors:
        return None
    files = sorted({_shown(_real(e["file"]), cwd) for e in errors})
    lines = [f"TypeScript did not compile: tsx (esbuild) refused {', '.join(files)}"]
    for error in errors[:SHOWN]:
        line, column, path = int(error["line"]), int(error["column"]), _real(error["file"])
        lines.append(f"{_shown(path, cwd)}:{line}:{column + 1}: {error['message']}")
        lines.extend(_excerpt(path, line, column))
    if len(errors) > SHOWN:
        lines.append(f"… and {len(errors) - SHOWN} more errors")
    return "\n".join(lines)


def _real(path: str) -> str:
    """The file an error names: tsx names an ES module's ``x.mts`` (or ``x.cts``) ``x.ts`` to esbuild."""
    stem, extension = os.path.splitext(path)
    if extension != ".ts" or os.path.exists(path):
        return path
    return next((stem + e for e in (".mts", ".cts") if os.path.exists(stem + e)), path)


def _shown(path: str, cwd: str | None) -> str:
    base = os.path.abspath(cwd or os.getcwd())
    return os.path.relpath(path, base) if os.path.isabs(path) and path.startswith(base + os.sep) else path


def _excerpt(path: str, line: int, column: int) -> list[str]:
    """The source line an error points at, with a caret under its column (esbuild's columns count from 0)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = next((t for number, t in enumerate(handle, 1) if number == line), None)
    except OSError:
        return []
    if text is None:
        return []
    text = text.rstrip("\n")[:200]
    gutter = f"{line:>5} | "
    return [gutter + text, " " * (len(gutter) - 2) + "| " + " " * min(column, len(text)) + "^"]
