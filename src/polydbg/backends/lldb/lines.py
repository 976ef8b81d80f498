"""Line breakpoints lldb cannot bind: one on a line outside any function (a comment between two functions, a
declaration) stays pending for ever under lldb, which moves a breakpoint to the nearest code only within a
function; gdb moves it to the next line with code, wherever that is. So a breakpoint lldb left unbound is moved
as gdb does: to the next line lldb-dap lists code for (``breakpointLocations``, within ``LOOKAHEAD`` lines), and
the session reports it bound on another line. Where lldb knows no code at or after it (its file is not in the
code loaded so far, or nothing follows in it), it stays pending, saying so.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.base import BreakpointResult, SourceBreakpoint

LOOKAHEAD = 200  # lines after a breakpoint looked through for code to move it to

SetBreakpoints = Callable[[list[SourceBreakpoint]], Awaitable[list[BreakpointResult]]]
Locations = Callable[[int, int], Awaitable[dict[str, Any]]]


async def bound_to_code(file: str, sent: list[SourceBreakpoint], answered: list[BreakpointResult],
                        locations: Locations, send: SetBreakpoints) -> list[BreakpointResult]:
    """The results of ``sent``, with each breakpoint lldb left unbound moved to the next line with code (``send``
    sets the file's breakpoints again) or said why it stays pending; ``locations(first, last)`` is
    lldb-dap's ``breakpointLocations`` answer for those lines of ``file``."""
    unbound = [i for i, (bp, result) in enumerate(zip(sent, answered, strict=False))
               if not result.verified and not result.message and bp.log_message is None]
    if not unbound:
        return answered
    first = min(sent[i].line for i in unbound)
    body = await locations(first, max(sent[i].line for i in unbound) + LOOKAHEAD)
    code = sorted({int(b["line"]) for b in body.get("breakpoints") or [] if isinstance(b.get("line"), int)})
    moved = {i: line for i in unbound if (line := next((n for n in code if n >= sent[i].line), None)) is not None}
    if moved:
        answered = await send([bp._replace(line=moved.get(i, bp.line)) for i, bp in enumerate(sent)])
    name = os.path.basename(file)
    return [result._replace(message=(
        f"pending: lldb knows no code at or after line {sent[i].line} of {name} (within {LOOKAHEAD} lines): it "
        "is not compiled into the program, or is in a library not loaded yet (it binds if one loads it)"))
        if i in unbound and i not in moved and not result.verified else result for i, result in enumerate(answered)]
