"""Code polydbg runs inside another process (a debugger's Python, the debuggee's interpreter), kept as real
files in a backend's ``shims/`` folder so they are read, linted and diffed like code; sent without their
docstring, as they travel on command lines."""

from __future__ import annotations

import ast
import functools
from pathlib import Path


def path(module_file: str, name: str) -> Path:
    """The shim ``name`` of the backend package whose module is ``module_file``."""
    return Path(module_file).with_name("shims") / name


@functools.cache
def source(module_file: str, name: str) -> str:
    """The shim's source without its module docstring."""
    text = path(module_file, name).read_text(encoding="utf-8")
    body = ast.parse(text).body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        lines = text.splitlines(keepends=True)
        return "".join(lines[body[0].end_lineno or 0:]).lstrip("\n")
    return text
