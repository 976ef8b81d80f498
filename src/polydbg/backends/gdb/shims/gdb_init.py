"""Loaded into gdb's Python at start (``python exec(…)``; ``MARK`` is replaced by ``commands.LOG_MARK``).

``$_polydbg_log(hex)`` formats a logpoint message (hex-encoded UTF-8, so no quoting can break it): each
{expression} is evaluated in the stopped frame (with the pretty printers), a failure reads <error: …> instead
of stopping the program, and the message is written to gdb's console as one line (its line breaks escaped)
with the mark in front. It returns 0, printed by the dprintf as "%.0d" (nothing): a dprintf ``%s`` of a string
made by gdb would have to be copied into the inferior. ``$_shell(cmd)`` (gdb ≥ 14) would run a shell command
from any expression — a condition, a logpoint, debug_evaluate — so it is replaced by a function that refuses
(shell commands are debug_command's, under the security policy's allow_command).
"""
import re as _re

import gdb as _gdb


class _PolydbgLog(_gdb.Function):
    def __init__(self):
        super().__init__("_polydbg_log")

    def invoke(self, template):
        text = bytes.fromhex(template.string()).decode("utf-8", "replace")

        def value(match):
            try:
                return str(_gdb.parse_and_eval(match.group(1)))
            except Exception as exc:
                return "<error: %s>" % exc

        out = _re.sub(r"\{([^{}]+)\}", value, text)
        _gdb.write("MARK" + out.replace("\r", "\\r").replace("\n", "\\n") + "\n")
        return 0

_PolydbgLog()

class _PolydbgHit(_gdb.Function):
    """$_polydbg_hit(k): counts a hit of the breakpoint with counter k and returns its count (in any language
    mode: gdb's Rust mode reads C's ++ as two unary pluses)."""
    def __init__(self):
        super().__init__("_polydbg_hit")
        self.counts = {}

    def invoke(self, number):
        key = int(number)
        self.counts[key] = self.counts.get(key, 0) + 1
        return self.counts[key]

_PolydbgHit()

class _PolydbgNoShell(_gdb.Function):
    def __init__(self):
        super().__init__("_shell")

    def invoke(self, *args):
        raise _gdb.GdbError("polydbg turns $_shell off in expressions (it runs a shell command); "
                            "debug_command runs gdb's shell command where the policy allows raw commands")

_PolydbgNoShell()
