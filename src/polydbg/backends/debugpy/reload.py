"""Edited Python put into the running program (``Backend.reload``, ``backends/timecontrol.py``): ``shims/reload.py``
evaluated in the frame debugpy stopped in, which finds the user's files edited since the program loaded them,
compiles them all first (a syntax error or a change the running program cannot take refuses the whole reload, and
nothing changed) and replaces the changed functions' code in place (what pydevd's ``xreload`` does, without running
the module's code again).

Nothing is re-entered: CPython cannot change the code a frame runs nor restart a frame (debugpy answers
``supportsRestartFrame: false``, and its goto jumps within the old code), so a call in progress of a replaced function
finishes with the old code and the notes say which; the function's next calls run the new code. In a loop that calls
the function (in its caller, or the function itself stopped at a breakpoint) that is the next iteration. The reload
runs in the stopped thread: a running program is refused (pydevd evaluates only at a stop); debug_pause first.
A one-function change adds ~9 ms to a ``debug_continue`` (median of 10 through an MCP client: 18 ms against 9 ms at load
1.2 on 2 cores); the first reload of a process ~48 ms, as the shim is sent and defined.
"""

from __future__ import annotations

from typing import Any

from polydbg.backends.base import Variable
from polydbg.backends.debugpy import threads
from polydbg.backends.kit import shims
from polydbg.backends.timecontrol import Reloaded, ReloadRefused
from polydbg.errors import UsageError

MODULE = "_polydbg_reload"  # kept in the program's sys.modules: what each file was when last compared
HELPER = shims.source(__file__, "reload.py")
OURS = str(shims.path(__file__, "reload.py").parent)  # the call recorder is loaded from a file here: not the user's
PAUSE_FIRST = ("the program is running: Python takes edited code at a stop (the thread stopped there replaces it); "
               "debug_pause (or a breakpoint) first, then debug_continue(reload=true)")
NO_FRAME = ("no thread is stopped in Python code that can run the reload (the stop is in C code); step or continue to "
            "a line of Python, then debug_continue(reload=true)")


def expression() -> str:
    """What the stopped thread evaluates (in the ``clipboard`` context: its JSON answer is not cut)."""
    return threads.call_in(MODULE, HELPER, "reload", [OURS])


def reloaded(value: Variable | None) -> Reloaded:
    """The shim's answer as ``Reloaded``; its refusal as ``ReloadRefused`` (nothing was changed)."""
    if value is None:
        raise UsageError(NO_FRAME)
    try:
        found: dict[str, Any] = threads.answer(value.value)
    except ValueError as exc:  # the evaluation raised: pydevd answers with the error's text as the value
        raise UsageError(f"the reload failed inside the program, which runs its old code still: {value.value[:300]}"
                         ) from exc
    if "refused" in found:
        raise ReloadRefused(f"nothing was reloaded, the program runs its old code: {found['refused']}")
    return Reloaded(replaced=tuple(found["replaced"]), notes=tuple(found["notes"]))
