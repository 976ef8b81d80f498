"""A callback on lldb-dap's C++ throw breakpoint (``__cxa_throw``) that lets only exceptions of the types named stop
(``debug_break(exception=["AppError"])``), their subclasses too.

lldb's own type filter (``breakpoint set -E c++ -O TYPE``) works for Swift only. The callback reads the thrown
type's ``type_info`` name (``__cxa_throw``'s second argument), finds the type in the debug info and walks its base
classes; a type the debug info does not describe (the standard library's) matches by its own name only. Returning
False makes lldb go on without a stop, so lldb-dap never sees it. Memory and debug info only: nothing of the
program runs. A re-throw (``__cxa_rethrow``, ``throw;``) is not a new throw: it does not stop.
"""

import re

import lldb  # type: ignore[import-not-found]

_PART = re.compile(r"(\d+)")


def _demangled(mangled):
    """An Itanium-mangled class name (``10ParseError``, ``N3app5ErrorE``, ``St12out_of_range``) as C++ writes it;
    None for anything else (a builtin, a template)."""
    text, parts = mangled, []
    if text.startswith("N") and text.endswith("E"):
        text = text[1:-1]
    if text.startswith("St"):
        parts.append("std")
        text = text[2:]
    while text:
        match = _PART.match(text)
        if match is None:
            return None
        size, start = int(match.group(1)), match.end()
        parts.append(text[start:start + size])
        text = text[start + size:]
    return "::".join(parts) if parts else None


def _named(name, wanted):
    return name in wanted or name.rpartition("::")[2] in wanted


def _derives(kind, wanted, depth=0):
    if not kind.IsValid() or depth > 16:
        return False
    if _named(kind.GetName(), wanted):
        return True
    return any(_derives(kind.GetDirectBaseClassAtIndex(i).GetType(), wanted, depth + 1)
               for i in range(kind.GetNumberOfDirectBaseClasses()))


def throws(frame, bp_loc, extra_args, internal_dict):  # lldb's callback signature
    if frame.GetFunctionName() != "__cxa_throw":
        return False
    wanted = set(bytes.fromhex(extra_args.GetValueForKey("names").GetStringValue(1 << 16)).decode().split("\n"))
    process = frame.GetThread().GetProcess()
    error = lldb.SBError()
    info = frame.FindRegister("rsi").GetValueAsUnsigned()
    pointer = process.ReadPointerFromMemory(info + 8, error)
    mangled = process.ReadCStringFromMemory(pointer, 1024, error) if error.Success() else ""
    name = _demangled(mangled.lstrip("*")) if mangled else None
    if name is None:
        return not mangled  # unreadable: a stop rather than a miss
    if _named(name, wanted):
        return True
    return _derives(process.GetTarget().FindFirstType(name), wanted)
