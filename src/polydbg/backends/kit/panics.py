"""A Rust panic's message, read from what the panic hook printed before ``rust_panic`` was called, and whether a
test expects it.

Every native backend stops a panic at ``rust_panic`` (a breakpoint there is how a debugger "catches"
one); the message is not in any register, but the default hook has already written it to stderr.
A ``#[should_panic]`` test passes by panicking: in a test run its panic is no stop. Which test panicked is
read from the stack (a frame's function, found in its source file with its attributes above it), since
libtest keeps its tests' descriptions in constants the debugger cannot see.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from polydbg.backends.base import Frame

PANIC = re.compile(r"thread '([^']*)'(?: \(\d+\))? panicked at ([^\n']+?:\d+:\d+):?\n(.*?)"
                   r"(?:\nnote: |\nstack backtrace:|\Z)", re.DOTALL)
OLD_PANIC = re.compile(r"thread '([^']*)' panicked at '(.*?)', ([^\s]+:\d+:\d+)", re.DOTALL)  # before Rust 1.73


def panic_message(output: str) -> str | None:
    """``panicked at src/main.rs:5:9: the message`` for the last panic in ``output``, or None."""
    found = list(PANIC.finditer(output))
    old = list(OLD_PANIC.finditer(output))
    if not found and not old:
        return None
    thread, where, message = found[-1].groups() if found else old[-1].group(1, 3, 2)
    text = " ".join(message.split())
    return f"panicked at {where}: {text}"[:400] + ("" if thread == "main" else f" (thread '{thread}')")


_ATTRIBUTE = re.compile(r"^\s*(?:#\[.*|//.*|)$")  # what may stand between a test's attributes and its fn
FRAMES_LOOKED_AT = 16


def expected_by_test(frames: Sequence[Frame]) -> bool:
    """Whether a function on this panic's stack is a ``#[should_panic]`` test (the panic is its passing)."""
    for frame in frames[:FRAMES_LOOKED_AT]:
        name = frame.name.split("<")[0].split("::{")[0].rsplit("::", 1)[-1]
        if frame.file and frame.line and frame.file.endswith(".rs") and name.isidentifier() \
                and _should_panic(frame.file, frame.line, name):
            return True
    return False


def _should_panic(path: str, line: int, function: str) -> bool:
    """``function``, declared at or above ``line`` of ``path``, carries ``#[should_panic]``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return False
    declaration = re.compile(rf"\bfn\s+{re.escape(function)}\s*[<(]")
    at = next((i for i in range(min(line, len(lines)) - 1, -1, -1) if declaration.search(lines[i])), None)
    if at is None:
        return False
    above = at - 1
    while above >= 0 and _ATTRIBUTE.match(lines[above]) and lines[above].strip():
        if lines[above].strip().startswith("#[should_panic"):
            return True
        above -= 1
    return False
