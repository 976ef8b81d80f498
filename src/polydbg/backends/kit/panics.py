"""A Rust panic's message, read from what the panic hook printed before ``rust_panic`` was called.

Every native backend stops a panic at ``rust_panic`` (a breakpoint there is how a debugger "catches"
one); the message is not in any register, but the default hook has already written it to stderr.
"""

from __future__ import annotations

import re

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
