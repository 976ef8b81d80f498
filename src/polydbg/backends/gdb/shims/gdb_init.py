"""Loaded into gdb's Python at start (``python exec(…)``; ``MARK`` is replaced by ``commands.LOG_MARK``).

``$_polydbg_log(hex)`` formats a logpoint message (hex-encoded UTF-8, so no quoting can break it): each
{expression} is evaluated in the stopped frame (with the pretty printers), a failure reads <error: …> instead
of stopping the program, and the message is written to gdb's console as one line (its line breaks escaped)
with the mark in front. It returns 0, printed by the dprintf as "%.0d" (nothing): a dprintf ``%s`` of a string
made by gdb would have to be copied into the inferior. ``$_shell(cmd)`` (gdb ≥ 14) would run a shell command
from any expression — a condition, a logpoint, debug_evaluate — so it is replaced by a function that refuses
(shell commands are debug_command's, under the security policy's allow_command).
``$_polydbg_throws(hex)``, a throw catchpoint's condition, says whether the exception thrown is of a C++ type
named, or derives from one (``debug_break(exception=["AppError"])``). ``_polydbg_raised`` is the log of raised C++
exceptions: breakpoints that never stop, whose records go to the console behind their own mark (~1 ms per
exception: 2,000 throws and catches recorded in 2.9 s, against 0.7 s unrecorded).
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


def _user_frame(frame):
    """The innermost frame of the program's own source at or above ``frame`` (a file on disk, not a runtime
    header), with whether it is ``frame`` itself; (None, False) when there is none."""
    import os as _os
    first, current = True, frame
    while current is not None:
        symtab = current.find_sal().symtab
        path = symtab.fullname() if symtab is not None else ""
        if path and _os.path.isfile(path) and not path.startswith(("/usr/include/", "/usr/lib/gcc/", "/rustc/")):
            return current, first
        first, current = False, current.older()
    return None, False


def _where(frame):
    sal = frame.find_sal()
    return {"file": sal.symtab.fullname() if sal.symtab else None, "line": sal.line, "function": frame.name()}


class _PolydbgRaised:
    """The log of C++ exceptions the program raises (``debug_trace(functions=["raised"])``): breakpoints on
    ``__cxa_throw``, ``__cxa_begin_catch`` and ``std::terminate`` whose ``stop`` never stops. A throw is read in
    ``__cxa_throw`` (its type_info's name, the object as gdb prints it, the string after the vtable pointer for the
    standard exceptions), kept per thread until a handler begins to catch it (the handler is the caller of
    ``__cxa_begin_catch``) or the program terminates with it, then written to the console with the mark, one JSON
    line each. One thrown and caught by the runtime's own code only is left out. Memory and debug info only."""

    def __init__(self):
        self.points = []
        self.pending = {}

    def arm(self):
        self.disarm()
        _gdb.execute("set breakpoint pending on", to_string=True)
        for where, seen in (("__cxa_throw", self.thrown), ("__cxa_begin_catch", self.caught),
                            ("std::terminate", self.terminated)):
            self.points.append(_NeverStops(where, seen))

    def disarm(self):
        for point in self.points:
            try:
                point.delete()
            except Exception:
                pass
        self.points, self.pending = [], {}

    def thrown(self):
        frame = _gdb.newest_frame()
        user, own = _user_frame(frame.older())
        if user is None:
            return
        row = dict(_where(user), thread=_gdb.selected_thread().num, library=not own)
        for key, expression in (("mangled", "*(char **)($rsi + 8)"), ("string", "*(char **)($rdi + 8)")):
            try:
                row[key] = _gdb.parse_and_eval(expression).string(errors="replace")[:200]
            except Exception:
                row[key] = ""
        row["type"], row["printed"] = "", ""
        try:  # "typeinfo for app::ParseError in section .data.rel.ro of …": the type's name, demangled by gdb
            named = _re.match(r"typeinfo for (.+?) in section ", _gdb.execute("info symbol $rsi", to_string=True))
            row["type"] = named.group(1).partition("@")[0] if named else ""  # (std::out_of_range@GLIBCXX_3.4)
            row["printed"] = str(_gdb.parse_and_eval("*(%s *) $rdi" % row["type"])) if named else ""
        except Exception:
            pass
        self.pending[row["thread"]] = (row, int(_gdb.parse_and_eval("(unsigned long) $rdi")))

    def caught(self):
        thread = _gdb.selected_thread().num
        found = self.pending.pop(thread, None)
        if found is None:
            return
        row, _ = found
        handler = _gdb.newest_frame().older()
        user, own = _user_frame(handler)
        if row.pop("library") and not own:
            return  # thrown and caught by the runtime's or a library's own code
        if user is not None and own:
            where = _where(user)
            row["caught"] = "%s (%s:%s)" % (where["function"], (where["file"] or "?").rsplit("/", 1)[-1],
                                            where["line"])
        self.emit(row)

    def terminated(self):
        found = self.pending.pop(_gdb.selected_thread().num, None)
        if found is not None:
            found[0].pop("library", None)
            self.emit(found[0])

    def emit(self, row):
        import json
        _gdb.write("RAISED_MARK" + json.dumps(row) + "\n")


class _NeverStops(_gdb.Breakpoint):
    def __init__(self, where, seen):
        super().__init__(where, internal=True)
        self.seen = seen

    def stop(self):
        try:
            self.seen()
        except Exception:
            pass
        return False

_polydbg_raised = _PolydbgRaised()
