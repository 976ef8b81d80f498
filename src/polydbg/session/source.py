"""Reading source files and rendering numbered excerpts with the current line and breakpoints marked."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection
from functools import lru_cache

from polydbg.errors import UsageError, echo
from polydbg.policy import Policy
from polydbg.session.model import SourceResult

MAX_LINE_CHARS = 160
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s+")


@lru_cache(maxsize=64)
def _lines_cached(path: str, mtime_ns: int, size: int) -> tuple[str, ...]:
    with open(path, encoding="utf-8", errors="replace") as handle:
        return tuple(handle.read().splitlines())


def read_lines(path: str) -> tuple[str, ...]:
    try:
        stat = os.stat(path)
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        raise UsageError(f"source file {echo(path)} does not exist or cannot be read; "
                         "pass an existing path (absolute, or relative to the session's cwd)") from exc
    if not os.path.isfile(path):
        raise UsageError(f"{echo(path)} is not a file; pass the path of a source file")
    return _lines_cached(path, stat.st_mtime_ns, stat.st_size)


def line_number(path: str, line: int | str) -> int:
    """``line`` as a line number of ``path``: a number as it is, a string of digits as its number, and any
    other string the one line that contains it (agents often know the statement, not its line). Text on no
    line, or on several, is refused with what to pass instead (the lines it is on)."""
    if isinstance(line, int):
        return line
    text = line.strip()
    if text.isdigit():
        return int(text)
    if not text:
        raise UsageError("line is empty; pass a line number, or text from the line")
    lines = read_lines(path)
    found = [n for n, content in enumerate(lines, 1) if text in content]
    if not found:  # the same text spaced differently
        squeezed = _SPACE.sub("", text)
        found = [n for n, content in enumerate(lines, 1) if squeezed in _SPACE.sub("", content)]
    if len(found) > 1:  # a line that is exactly the text wins over lines that merely hold it
        exact = [n for n in found if lines[n - 1].strip() == text]
        found = exact if len(exact) == 1 else found
    if len(found) == 1:
        return found[0]
    if not found:
        raise UsageError(f"no line of {echo(path)} contains {echo(text, 80)}; pass the line number, or text copied "
                         "from the line (debug_source shows the file)")
    shown = ", ".join(map(str, found[:12])) + (f" and {len(found) - 12} more" if len(found) > 12 else "")
    raise UsageError(f"{echo(text, 80)} is on {len(found)} lines of {echo(path)}: {shown}; pass the line number, "
                     "or more of the line's text")


def excerpt(path: str, line: int, context: int, current: int | None = None,
            breakpoints: Collection[int] = (), max_chars: int = MAX_LINE_CHARS) -> tuple[str, int, int, int]:
    """Lines ``line-context..line+context`` numbered; returns (text, first, last, total lines).

    ``>`` marks the current line, ``*`` a line with a breakpoint.
    """
    lines = read_lines(path)
    total = len(lines)
    if total == 0:
        return "", 0, 0, 0
    first = max(1, line - context)
    last = min(total, line + context)
    width = len(str(last))
    out = []
    for number in range(first, last + 1):
        mark = ">" if number == current else " "
        mark += "*" if number in breakpoints else " "
        text = lines[number - 1]
        if len(text) > max_chars:
            text = text[:max_chars] + "…"
        out.append(f"{number:>{width}}{mark}{text}")
    return "\n".join(out), first, last, total


def names_near(path: str, line: int, before: int = 1) -> set[str]:
    """The identifiers on ``line`` and the ``before`` lines above it: the variables that matter at a stop."""
    lines = read_lines(path)
    text = " ".join(lines[max(0, line - 1 - before):line])
    return set(_NAME.findall(text))


def view(path: str, line: int | None, context: int, current: int | None = None,
         breakpoints: Collection[int] = ()) -> SourceResult:
    """Numbered source of ``path`` around ``line`` (default 1), the ``current`` line and ``breakpoints`` marked."""
    lines = read_lines(path)
    if line is not None and line > len(lines):
        raise UsageError(f"line {line} is past the end of {echo(path)} ({len(lines)} lines)")
    text, first, last, total = excerpt(path, line or 1, context, current, breakpoints)
    return SourceResult(file=path, start=first, end=last, total_lines=total, text=text)


def view_file(file: str | None, line: int | None, context: int, policy: Policy | None = None) -> SourceResult:
    """``view`` with no session: ``file`` is required and must lie in the ``policy``'s roots."""
    if file is None:
        raise UsageError("no file given and no session stopped; pass file (and line)")
    path = checked_path(file, os.path.abspath)
    if policy is not None:
        policy.check_path(path, "source file")
    return view(path, line, context)


def checked_path(file: str, resolve: Callable[[str], str]) -> str:
    if "\0" in file:
        raise UsageError(f"{echo(file)} contains a NUL byte; pass a path")
    return resolve(file)
