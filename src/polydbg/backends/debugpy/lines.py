"""Where a breakpoint in a Python file binds: its own line when that line has code, else the next line that has.

pydevd moves a breakpoint on a line without code (a comment, a blank line, a docstring's inside) to the line
with code *before* it: a trace point on a comment after a loop recorded every turn of the loop's last line, and
one on a comment at the top of a function body bound to its ``def`` line, hit once at import. gdb, lldb-dap,
Node and the JVM move such a point to the next line with code, and so does polydbg now: it sends pydevd that
line itself, found as pydevd finds lines with code (the starts of the line tables of the module's code and of
every function and class in it), and pydevd binds it as sent; the session reports the move. A line inside a
statement over several lines (a closing bracket, a constant of a list) binds to where that statement starts,
not to the statement after it. A line after the file's last code, or a file this interpreter cannot compile
(newer syntax), is sent as it is.
"""

from __future__ import annotations

import ast
import bisect
import dis
import os
import tokenize
import types
from functools import lru_cache
from typing import NamedTuple

_MEMO = 64  # files whose lines are kept (a file is read again only when it changes)


class CodeLines(NamedTuple):
    lines: tuple[int, ...]  # the lines with code, sorted
    statements: tuple[tuple[int, int], ...]  # (first, last) line of each simple statement over several lines


def placed(path: str, line: int) -> int:
    """The line a breakpoint asked for at ``line`` of ``path`` is sent as."""
    try:
        stat = os.stat(path)
    except OSError:
        return line
    found = code_lines(path, stat.st_mtime_ns, stat.st_size)
    if not found.lines or line in found.lines:
        return line
    for first, last in found.statements:
        if first < line <= last:
            start = bisect.bisect_left(found.lines, first)
            if start < len(found.lines) and found.lines[start] <= line:
                return found.lines[start]  # where the statement starts
    after = bisect.bisect_right(found.lines, line)
    return found.lines[after] if after < len(found.lines) else line


@lru_cache(maxsize=_MEMO)
def code_lines(path: str, mtime_ns: int, size: int) -> CodeLines:
    """What ``path`` holds (nothing when it cannot be compiled here); cached by name, modification time and size."""
    try:
        with tokenize.open(path) as handle:
            tree = ast.parse(handle.read(), path)
        code = compile(tree, path, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return CodeLines((), ())
    statements = tuple((node.lineno, node.end_lineno) for node in ast.walk(tree)
                       if isinstance(node, ast.stmt) and not hasattr(node, "body")
                       and node.end_lineno is not None and node.end_lineno > node.lineno)
    return CodeLines(tuple(sorted(set(_starts(code)))), statements)


def _starts(code: types.CodeType) -> list[int]:
    found = [line for _, line in dis.findlinestarts(code) if line is not None]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _starts(const)
    return found
