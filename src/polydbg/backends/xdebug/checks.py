"""PHP conditions and logpoint expressions, checked when a breakpoint is set: Xdebug evaluates a condition at
each hit and takes one that does not parse for false, so a typo would never stop and never say so. Each is
compiled by PHP's own linter (``php -n -l``: no ini files, ~15 ms) as ``return (EXPR);``; a PHP that cannot
be run leaves the check to the hit."""

from __future__ import annotations

import re
import shutil
import subprocess

from polydbg.errors import UsageError, echo

INTERPOLATION = re.compile(r"\{([^{}]+)\}")
_LINT_S = 10.0
# a lowercase name standing alone: a constant to PHP (an Error at the hit), almost always a variable without its $
_BARE = re.compile(r"(?<![$\w\\>:'\"])([a-z_][a-z0-9_]*)\b(?!\s*[(\\]|::|\w)")
_WORDS = frozenset({"and", "or", "xor", "instanceof", "new", "fn", "function", "true", "false", "null", "clone",
                    "match", "default", "array", "list", "isset", "empty", "static", "self", "parent", "int",
                    "float", "string", "bool", "object", "print", "throw", "yield", "from", "use"})
_ERROR = re.compile(r"(?:PHP )?Parse error:\s*(.*?)(?: in Standard input code on line \d+)?$", re.MULTILINE)


def problem(condition: str | None, log_message: str | None) -> str | None:
    """Why a condition or a logpoint's ``{expression}`` is not a PHP expression (the breakpoint is not set), or
    None."""
    checks = [("condition", condition)] if condition is not None else []
    checks += [(f"{{{e}}} in log_message", e) for e in INTERPOLATION.findall(log_message or "")]
    php = shutil.which("php")
    for what, text in checks:
        said = _lint(php, text or "") or _bare_name(text or "")
        if said is not None:
            return f"{what} {echo(text or '')} is not a PHP expression ({said}); the breakpoint was not set"
    return None


def _lint(php: str | None, expression: str) -> str | None:
    if php is None or not expression.strip():
        return None if php is None else "it is empty"
    try:
        out = subprocess.run([php, "-n", "-l"], input=f"<?php return ({expression});", capture_output=True,
                             text=True, timeout=_LINT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode == 0:
        return None
    found = _ERROR.search(out.stdout + out.stderr)
    return found.group(1).strip() if found else "PHP's parser refused it"


def _bare_name(expression: str) -> str | None:
    unquoted = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", expression)
    for found in _BARE.finditer(unquoted):
        if found.group(1) not in _WORDS:
            name = found.group(1)
            return f"{name} is a constant to PHP, an Error at the hit unless one is defined; a variable is ${name}"
    return None


def check(condition: str | None, log_message: str | None) -> None:
    """Raise ``UsageError`` for a condition or logpoint expression PHP cannot parse."""
    found = problem(condition, log_message)
    if found is not None:
        raise UsageError(found)
