"""The command a script's ``#!`` line runs, read the way the kernel and ``env`` read it.

A program passed without a telling extension (``/usr/bin/npm``, ``bin/serve``, a tool installed by pip)
is often a script whose first line names its interpreter. The kernel splits that line once: the
interpreter's path, then everything after the first blank as a single argument. ``/usr/bin/env`` then
takes options (``-i``, ``-u NAME``, ``-C DIR``, ``NAME=value``, and ``-S``/``--split-string``, which splits
the rest into words) before the command it runs. The registry maps the command to a language; this
module only reads the line, never runs anything.
"""

from __future__ import annotations

import os
import shlex
import stat

_LINE_BYTES = 256  # Linux reads at most 256 bytes of a #! line (BINPRM_BUF_SIZE), so nothing beyond counts
_ENV_WITH_VALUE = frozenset({"-u", "--unset", "-C", "--chdir", "-P", "--default-signal", "--ignore-signal",
                             "--block-signal"})
# Launchers whose next word (after their own flags) is the command that really runs the script.
_LAUNCHERS = frozenset({"npx", "pnpx", "bunx"})


def command(path: str) -> list[str] | None:
    """The words of the command ``path``'s ``#!`` line runs (``["node", "--no-warnings"]`` for
    ``#!/usr/bin/env -S node --no-warnings``), or None when it has no ``#!`` line or names no command."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block the reader
            return None
        with open(path, "rb") as handle:
            head = handle.read(_LINE_BYTES)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if not line:
        return None
    interpreter, *rest = line.split(None, 1)  # blanks are spaces or tabs, as for the kernel
    argument = rest[0].strip() if rest else ""
    if os.path.basename(interpreter) != "env":
        return [interpreter, argument] if argument else [interpreter]
    return _after_env(argument)


def _after_env(argument: str) -> list[str] | None:
    """What ``env`` runs, given the single argument the kernel passed it."""
    words = argument.split()
    index = 0
    while index < len(words):
        word = words[index]
        split = word[len("--split-string="):] if word.startswith("--split-string=") else \
            "" if word == "--split-string" else word[2:] if word.startswith("-S") else None
        if split is not None:  # -S: the rest of the line is split into words, as a shell would, and read again
            try:
                words = shlex.split(" ".join([split, *words[index + 1:]]))
            except ValueError:  # an unbalanced quote: env refuses it too
                return None
            index = 0
        elif word == "--":
            index += 1
            break
        elif word in _ENV_WITH_VALUE:
            index += 2
        elif word.startswith("-") or ("=" in word and not word.startswith("=")):
            index += 1  # a flag (-i, --ignore-environment, -v, --unset=NAME …) or an assignment NAME=value
        else:
            break
    found = words[index:]
    if found and os.path.basename(found[0]) in _LAUNCHERS:
        found = [w for w in found[1:] if not w.startswith("-")]
    return found or None
