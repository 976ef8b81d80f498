"""Loaded into gdb's Python at start (``python exec(…)``; ``MARK`` is replaced by ``commands.LOG_MARK``).

``$_polydbg_log(hex)`` formats a logpoint message (hex-encoded UTF-8, so no quoting can break it): each
{expression} is evaluated in the stopped frame (with the pretty printers), a failure reads <error: …> instead
of stopping the program, and the message is written to gdb's console as one line (its line breaks escaped)
with the mark in front. It returns 0, printed by the dprintf as "%.0d" (nothing): a dprintf ``%s`` of a string
made by gdb would have to be copied into the inferior. ``$_shell(cmd)`` (gdb ≥ 14) would run a shell command
from any expression — a condition, a logpoint, debug_evaluate — so it is replaced by a function that refuses
(shell commands are debug_command's, under the security policy's allow_command).
``$_polydbg_throws(hex)``, a throw catchpoint's condition, says whether the exception thrown is of a C++ type
named, or derives from one (``debug_break(exception=["AppError"])``).
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

def _derives(kind, wanted, depth):
    """Whether the C++ type ``kind`` is named in ``wanted`` (qualified or by its last name) or derives from one."""
    name = str(kind.unqualified())
    if name in wanted or name.rpartition("::")[2] in wanted:
        return True
    try:
        fields = kind.fields() if depth < 16 else []
    except TypeError:
        return False
    return any(f.is_base_class and _derives(f.type.strip_typedefs(), wanted, depth + 1) for f in fields)


def _mangled_is(mangled, name):
    """Whether an Itanium-mangled type name (a type_info's: ``St12out_of_range``, ``N3app5ErrorE``) is ``name``."""
    parts = name.split("::")
    std = parts[0] == "std"
    code = "".join("%d%s" % (len(p), p) for p in (parts[1:] if std else parts))
    return mangled in (("St" if std else "") + code, "N" + ("St" if std else "") + code + "E") or (
        len(parts) == 1 and mangled.endswith(code + "E") and mangled.startswith("N"))


class _PolydbgThrows(_gdb.Function):
    """$_polydbg_throws(hex): at a throw catchpoint (in __cxa_throw), whether the exception thrown is of a type named
    in the hex-encoded, newline-separated names or derives from one, its bases read from the debug info; a type the
    debug info does not describe (the standard library's) is matched by its type_info's own name only. Memory and
    debug info only: nothing of the program runs."""
    def __init__(self):
        super().__init__("_polydbg_throws")

    def invoke(self, names):
        wanted = bytes.fromhex(names.string()).decode("utf-8", "replace").split("\n")
        try:
            return int(_derives(_gdb.parse_and_eval("$_exception").type.strip_typedefs(), wanted, 0))
        except Exception:
            pass
        try:
            mangled = _gdb.parse_and_eval("*(char **)($rsi + 8)").string()
        except Exception:
            return 1  # cannot tell: a stop rather than a miss
        return int(any(_mangled_is(mangled, name) for name in wanted))

_PolydbgThrows()
