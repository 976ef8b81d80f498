"""Imported into lldb's Python for a call trace (``command script import``), by lldb-dap's own lldb.

``arm(names, out, chars)`` puts a breakpoint on each named function whose callback reads the call's arguments,
caller and thread, and one on each ``ret`` instruction of the function, whose callback reads the return value
from the return register as the function's return type says (lldb gives a return value only to a step out,
which a callback cannot take); every callback answers False, so the program runs on and lldb-dap reports no
stop. A C++ exception ends the traced calls deeper than the catching frame (``__cxa_begin_catch``) with the
type ``__cxa_throw`` threw. Each finished call is one JSON line appended to ``out``, read by the backend.
"""
import json
import os
import subprocess
import time

import lldb

_state = {"out": None, "chars": 200, "open": {}, "thrown": {}, "breakpoints": [], "functions": {}}
_RETURN = {"x86_64": ("rax", "xmm0"), "aarch64": ("x0", "v0"), "arm64": ("x0", "v0")}


def _cut(text):
    text = "" if text is None else str(text)
    chars = _state["chars"]
    return text if len(text) <= chars else text[:chars] + "…"


def _text(value):
    if not value.IsValid():
        return "?"
    shown = value.GetSummary() or value.GetValue()
    if shown is None:
        shown = str(value).split(" = ", 1)[-1]
    return _cut(shown)


def _send(call):
    with open(_state["out"], "a") as out:
        out.write(json.dumps(call) + "\n")


def _where(frame):
    line = frame.GetLineEntry()
    place = "%s:%d" % (line.GetFileSpec().GetFilename(), line.GetLine()) if line.IsValid() else "?"
    function = frame.GetFunction()
    name = function.GetDisplayName() if function.IsValid() else frame.GetFunctionName()
    return "%s (%s)" % (name or "??", place)


def entry(frame, location, extra, internal):
    try:
        while frame.IsInlined() and frame.get_parent_frame().IsValid():  # a callee inlined at the entry: its caller
            frame = frame.get_parent_frame()
        function = frame.GetFunction()
        arguments = frame.GetVariables(True, False, False, True)
        args = [[arguments.GetValueAtIndex(i).GetName(), _text(arguments.GetValueAtIndex(i))]
                for i in range(arguments.GetSize())]
        parent = frame.get_parent_frame()
        thread = frame.GetThread()
        line = function.GetStartAddress().GetLineEntry()
        call = {"f": function.GetDisplayName() or function.GetName(), "a": args,
                "c": _where(parent) if parent.IsValid() else None, "t": "thread %d" % thread.GetIndexID(),
                "file": line.GetFileSpec().fullpath if line.IsValid() else None,
                "line": line.GetLine() if line.IsValid() else None, "began": time.perf_counter(),
                "cfa": frame.GetCFA(), "id": str(function.GetStartAddress())}
        call["s"] = call["began"]
        _state["open"].setdefault(thread.GetThreadID(), []).append(call)
    except Exception as exc:
        _send({"error": "entry: %s" % exc})
    return False


def _returned(frame, function):
    kind = function.GetType().GetFunctionReturnType()
    if not kind.IsValid() or kind.GetBasicType() == lldb.eBasicTypeVoid or kind.GetName() == "void":
        return None
    triple = frame.GetThread().GetProcess().GetTarget().GetTriple() or ""
    integer, floating = _RETURN.get(triple.split("-")[0], ("rax", "xmm0"))
    floats = (lldb.eBasicTypeFloat, lldb.eBasicTypeDouble)
    register = frame.FindRegister(floating if kind.GetCanonicalType().GetBasicType() in floats else integer)
    if not register.IsValid() or kind.GetByteSize() > 8 or not (
            kind.GetTypeFlags() & (lldb.eTypeIsScalar | lldb.eTypeIsPointer | lldb.eTypeIsEnumeration)):
        return "(a %s)" % kind.GetName()
    error = lldb.SBError()
    data = register.GetData()
    raw = data.ReadRawData(error, 0, kind.GetByteSize())
    if not error.Success():
        return "(a %s)" % kind.GetName()
    buffer = lldb.SBData()
    buffer.SetData(error, raw, data.GetByteOrder(), data.GetAddressByteSize())
    return _text(frame.GetThread().GetProcess().GetTarget().CreateValueFromData("returned", buffer, kind))


def leave(frame, location, extra, internal):
    try:
        stack = _state["open"].get(frame.GetThread().GetThreadID()) or []
        function = frame.GetFunction()
        key = str(function.GetStartAddress())
        if stack and stack[-1]["id"] == key:
            call = stack.pop()
            took = time.perf_counter() - call.pop("began")
            call.pop("cfa", None)
            call.pop("id", None)
            call.update(r=_returned(frame, function), d=took * 1e6)
            _send(call)
    except Exception as exc:
        _send({"error": "exit: %s" % exc})
    return False


def thrown(frame, location, extra, internal):
    try:
        triple = frame.GetThread().GetProcess().GetTarget().GetTriple() or ""
        register = frame.FindRegister("x1" if triple.startswith(("aarch64", "arm64")) else "rsi")
        process = frame.GetThread().GetProcess()
        error = lldb.SBError()
        info = register.GetValueAsUnsigned()
        name_at = process.ReadPointerFromMemory(info + process.GetAddressByteSize(), error)
        name = process.ReadCStringFromMemory(name_at, 256, error).lstrip("*")
        try:
            name = subprocess.run(["c++filt", "_Z" + name], capture_output=True, text=True, timeout=2).stdout.strip()
        except Exception:
            pass
        _state["thrown"][frame.GetThread().GetThreadID()] = name or "a C++ exception"
    except Exception:
        _state["thrown"][frame.GetThread().GetThreadID()] = "a C++ exception"
    return False


def caught(frame, location, extra, internal):
    try:
        parent = frame.get_parent_frame()
        cfa = parent.GetCFA() if parent.IsValid() else None
        thread = frame.GetThread().GetThreadID()
        stack = _state["open"].get(thread) or []
        while stack and (cfa is None or stack[-1]["cfa"] < cfa):
            call = stack.pop()
            for key in ("began", "cfa", "id"):
                call.pop(key, None)
            call.update(x=_state["thrown"].get(thread, "a C++ exception"))
            _send(call)
    except Exception as exc:
        _send({"error": "catch: %s" % exc})
    return False


def _callback(breakpoint, function):
    breakpoint.SetScriptCallbackFunction(__name__ + "." + function)
    _state["breakpoints"].append(breakpoint)


def arm(target, names, out, chars):
    """Set the breakpoints; each name's number of functions found, as JSON."""
    _state.update(out=out, chars=chars, open={}, thrown={})
    found = {}
    for name in names:
        where, _, function_name = name.rpartition(":") if ":" in name and "::" not in name else ("", "", name)
        breakpoint = target.BreakpointCreateByName(function_name, os.path.basename(where)) if where else \
            target.BreakpointCreateByName(function_name)
        functions = []
        for index in range(breakpoint.GetNumLocations()):
            function = breakpoint.GetLocationAtIndex(index).GetAddress().GetFunction()
            if function.IsValid():
                functions.append(function)
        found[name] = len(functions)
        if not functions:
            target.BreakpointDelete(breakpoint.GetID())
            continue
        _callback(breakpoint, "entry")
        for function in functions:
            for instruction in function.GetInstructions(target):
                if instruction.GetMnemonic(target).startswith("ret"):
                    _callback(target.BreakpointCreateBySBAddress(instruction.GetAddress()), "leave")
    for function_name, callback in (("__cxa_throw", "thrown"), ("__cxa_begin_catch", "caught")):
        _callback(target.BreakpointCreateByName(function_name), callback)
    return json.dumps(found)


def disarm(target):
    for breakpoint in _state["breakpoints"]:
        target.BreakpointDelete(breakpoint.GetID())
    _state["breakpoints"] = []
    pending = [call for stack in _state["open"].values() for call in stack]
    _state["open"] = {}
    for call in pending:
        for key in ("cfa", "id"):
            call.pop(key, None)
        if _state["out"]:
            _send(call)
