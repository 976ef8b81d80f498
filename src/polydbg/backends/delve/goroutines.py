"""How many goroutines a program has, when delve's thread list leaves some out.

delve's DAP server lists at most 1,024 goroutines (``maxGoroutines`` in service/dap/server.go, a constant in
1.20 and later: no launch option raises it, and ``goroutineFilters``/``hideSystemGoroutines`` filter only those
1,024). When it leaves some out it says so in a console line ("Too many goroutines, only loaded N") and in
nothing else: the listing of a program with 5,000 goroutines showed ~1,020 and no word of the rest.

The total is the runtime's own count (``runtime.NumGoroutine``: every goroutine created, less those free for
reuse and the runtime's own), read from its variables as the listing's stop sees them; a runtime whose
variables read otherwise (another Go version) gets the number created instead, said as an upper bound.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from polydbg.backends.base import Variable
from polydbg.backends.delve import native
from polydbg.errors import AdapterError

LISTED_AT_MOST = 1024  # delve's maxGoroutines
_CAPPED = re.compile(r"Too many goroutines, only loaded (\d+)")

Evaluate = Callable[[str], Awaitable[Variable]]  # an expression evaluated in no frame


def capped(text: str) -> int | None:
    """How many goroutines delve listed, when ``text`` is its console line saying it left some out."""
    found = _CAPPED.search(text)
    return int(found[1]) if found else None


async def _number(evaluate: Evaluate, *expressions: str) -> int | None:
    """The first of ``expressions`` that reads as an integer (one per layout of the runtime's variables)."""
    for expression in expressions:
        try:
            value = native.number((await evaluate(expression)).value)
        except AdapterError:
            continue
        if value is not None:
            return value
    return None


async def counted(evaluate: Evaluate) -> tuple[int, bool] | None:
    """(goroutines, exact): the runtime's count (gcount: created, less free and system ones), or the number
    created when the others do not read (not exact); None when not even that reads."""
    created = await _number(evaluate, "runtime.allglen")
    if created is None:
        return None
    free = await _number(evaluate, "runtime.sched.gFree.n")
    system = await _number(evaluate, "runtime.sched.ngsys.value", "runtime.sched.ngsys")
    processors = await _number(evaluate, "len(runtime.allp)")
    if free is None or system is None or processors is None:
        return created, False
    for index in range(processors):
        per_p = await _number(evaluate, f"runtime.allp[{index}].gFree.n")
        if per_p is None:
            return created, False
        free += per_p
    return max(1, created - free - system), True


def left_out(listed: int, count: tuple[int, bool] | None) -> str:
    """What the thread list leaves out, for the stack listing."""
    limit = f"delve lists at most {LISTED_AT_MOST:,} goroutines (a limit of its DAP server, with no option to raise it)"
    if count is None:
        return f"{listed:,} goroutines listed, not all: {limit}"
    total, exact = count
    if exact:
        return f"{total:,} goroutines, {listed:,} listed: {limit}"
    return f"{listed:,} goroutines listed of up to {total:,} created (some may have ended): {limit}"
