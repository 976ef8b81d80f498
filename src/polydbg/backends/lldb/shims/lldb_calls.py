"""Imported into lldb's Python for a call trace (``command script import``), by lldb-dap's own lldb.

``arm(names, out, chars)`` puts a breakpoint on each named function whose callback reads the call's arguments,
caller and thread, and one on each ``ret`` instruction of the function, whose callback reads the return value
from the return register as the function's return type says (lldb gives a return value only to a step out,
which a callback cannot take); every callback answers False, so the program runs on and lldb-dap reports no
stop. A C++ exception ends the traced calls deeper than the catching frame (``__cxa_begin_catch``) with the
type ``__cxa_throw`` threw. Each finished call is one JSON line appended to ``out``, read by the backend.

Callees (``depth``): a call entered at a level below the depth has its function's instructions read once for its
direct calls (``call 0x…``, ``bl``) whose targets are the program's own functions with debug info (a source file
on disk, not a runtime header; a PLT stub by its name in the program's modules), and each gets an entry breakpoint
after its prologue and breakpoints on its ``ret`` instructions. A callee's call is recorded only when the nearest
frame of the program's own above it is an open call of its thread (matched by CFA), one level below it; its
``ret`` ends the open call of the same CFA, and any opened after it that a longjmp left. A function calling
through a pointer is sent once (``{"pointers": name}``) for the answer's note, as are the program's functions the
compiler inlined into a followed one (``{"inlined": [name…]}``: no call to record).
"""
import json
import os
import subprocess
import time

import lldb

_state = {"out": None, "chars": 200, "depth": 0, "open": {}, "thrown": {}, "breakpoints": [], "followed": set(),
          "bound": set(), "pointers": set(), "owned": {}}
_RUNTIME = ("/usr/include/", "/usr/lib/gcc/", "/rustc/")
_JUMPED = "left without a return (a longjmp)"
_POINTER_CALLS = ("blr", "blx")
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
    """A named function's entry."""
    try:
        while frame.IsInlined() and frame.get_parent_frame().IsValid():  # a callee inlined at the entry: its caller
            frame = frame.get_parent_frame()
        _enter(frame, 0)
    except Exception as exc:
        _send({"error": "entry: %s" % exc})
    return False


def callee(frame, location, extra, internal):
    """A callee's entry: recorded under an open call of its thread, one level below it."""
    try:
        stack = _state["open"].get(frame.GetThread().GetThreadID())
        if not stack:
            return False
        parent = _parent(frame, stack)
        if parent is not None and parent["level"] < _state["depth"]:
            _enter(frame, parent["level"] + 1)
    except Exception as exc:
        _send({"error": "callee: %s" % exc})
    return False


def _gone(stack, index):
    """The calls opened after ``stack[index]``: no longer on the stack (a longjmp left them)."""
    while len(stack) > index + 1:
        call = stack.pop()
        for key in ("began", "cfa", "id", "level"):
            call.pop(key, None)
        call.update(x=_JUMPED)
        _send(call)


def _parent(frame, stack):
    """The open call that is ``frame``'s nearest own caller; None when that caller is not one."""
    caller = frame.get_parent_frame()
    while caller.IsValid():
        cfa = caller.GetCFA()
        for index in range(len(stack) - 1, -1, -1):
            if stack[index]["cfa"] == cfa:
                _gone(stack, index)
                return stack[index]
        if _own(caller.GetFunction()):
            return None
        caller = caller.get_parent_frame()
    return None


def _own(function):
    """A function of the program's own: its source on disk, not a runtime header."""
    if not function.IsValid():
        return False
    spec = function.GetStartAddress().GetLineEntry().GetFileSpec()
    path = spec.fullpath if spec.IsValid() else None
    if path not in _state["owned"]:
        _state["owned"][path] = bool(path) and not path.startswith(_RUNTIME) and "/lib/rustlib/" not in path \
            and os.path.isfile(path)
    return _state["owned"][path]


def _enter(frame, level):
    """Open a call of ``frame``'s function at ``level``; bind its callees when it is below the depth."""
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
            "cfa": frame.GetCFA(), "id": str(function.GetStartAddress()), "level": level}
    call["s"] = call["began"]
    if level:
        call["depth"] = level
    _state["open"].setdefault(thread.GetThreadID(), []).append(call)
    if level < _state["depth"]:
        _follow(frame.GetThread().GetProcess().GetTarget(), function)


def _follow(target, function):
    """Bind the direct callees of ``function``, once."""
    start = _key(function)
    if start in _state["followed"]:
        return
    _state["followed"].add(start)
    for instruction in function.GetInstructions(target):
        mnemonic = instruction.GetMnemonic(target)
        if not mnemonic.startswith("call") and mnemonic not in ("bl", *_POINTER_CALLS):
            continue
        operand = instruction.GetOperands(target).strip()
        try:
            address = int(operand, 16)
        except ValueError:
            if "rip" not in operand and function.GetDisplayName() not in _state["pointers"]:  # (rip: a GOT slot)
                _state["pointers"].add(function.GetDisplayName())
                _send({"pointers": function.GetDisplayName()})
            continue
        _bind(target, target.ResolveLoadAddress(address))
    inlined = sorted(_inlined(function.GetBlock(), set()))
    if inlined:
        _send({"inlined": inlined})


def _inlined(block, names):
    """The program's own functions inlined in ``block`` and the blocks inside it."""
    child = block.GetFirstChild()
    while child.IsValid():
        if child.IsInlined() and child.GetNumRanges():
            spec = child.GetRangeStartAddress(0).GetLineEntry().GetFileSpec()
            path = spec.fullpath if spec.IsValid() else None
            if path and not path.startswith(_RUNTIME) and "/lib/rustlib/" not in path and os.path.isfile(path):
                names.add(child.GetInlinedName())
        _inlined(child, names)
        child = child.GetSibling()
    return names


def _bind(target, address):
    """Entry and ``ret`` breakpoints on the program's function at ``address`` (a PLT stub: its target's)."""
    function = address.GetFunction()
    if not function.IsValid():
        symbol = address.GetSymbol()
        if not symbol.IsValid() or symbol.GetType() != lldb.eSymbolTypeTrampoline:
            return
        found = [context.GetFunction() for context in target.FindFunctions(symbol.GetName())]
        found = [f for f in found if f.IsValid() and _own(f)]
        if len(found) != 1:
            return
        function = found[0]
    if _key(function) in _state["bound"] or not _own(function):
        return
    _state["bound"].add(_key(function))
    _callback(target.BreakpointCreateBySBAddress(_after_prologue(target, function)), "callee")
    _returns(target, function)


def _key(function):
    """A function's identity, the same before the program is loaded and after: its module and file address."""
    start = function.GetStartAddress()
    return (start.GetModule().GetFileSpec().fullpath, start.GetFileAddress())


def _after_prologue(target, function):
    """Where ``function``'s arguments are in place: after its prologue, or (a function on one line, whose prologue
    lldb sizes 0) at the end of its first line-table row."""
    start = function.GetStartAddress()
    size = function.GetPrologueByteSize()
    if not size:
        end = start.GetLineEntry().GetEndAddress().GetFileAddress()  # (file addresses: also before the launch)
        if start.GetFileAddress() < end < function.GetEndAddress().GetFileAddress():
            size = end - start.GetFileAddress()
    start.OffsetAddress(size)
    return start


def _returns(target, function):
    for instruction in function.GetInstructions(target):
        if instruction.GetMnemonic(target).startswith("ret"):
            _callback(target.BreakpointCreateBySBAddress(instruction.GetAddress()), "leave")


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
        cfa = frame.GetCFA()
        for index in range(len(stack) - 1, -1, -1):
            if stack[index]["id"] == key and stack[index]["cfa"] == cfa:
                _gone(stack, index)
                call = stack.pop()
                took = time.perf_counter() - call.pop("began")
                for name in ("cfa", "id", "level"):
                    call.pop(name, None)
                call.update(r=_returned(frame, function), d=took * 1e6)
                _send(call)
                break
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
            for key in ("began", "cfa", "id", "level"):
                call.pop(key, None)
            call.update(x=_state["thrown"].get(thread, "a C++ exception"))
            _send(call)
    except Exception as exc:
        _send({"error": "catch: %s" % exc})
    return False


def _callback(breakpoint, function):
    breakpoint.SetScriptCallbackFunction(__name__ + "." + function)
    _state["breakpoints"].append(breakpoint)


def arm(target, names, out, chars, depth=0):
    """Set the breakpoints; each name's number of functions found, as the file's line ``{"armed": …}``."""
    _state.update(out=out, chars=chars, depth=depth, open={}, thrown={}, followed=set(), bound=set(), pointers=set())
    found = {}
    for name in names:
        where, _, function_name = name.rpartition(":") if ":" in name and "::" not in name else ("", "", name)
        units = lldb.SBFileSpecList()  # file.c:func: the function of that source file (its compile unit)
        if where:
            units.Append(lldb.SBFileSpec(os.path.basename(where)))
        breakpoint = target.BreakpointCreateByName(function_name, lldb.eFunctionNameTypeAuto, lldb.SBFileSpecList(),
                                                   units)
        functions = []
        for index in range(breakpoint.GetNumLocations()):
            function = breakpoint.GetLocationAtIndex(index).GetAddress().GetFunction()
            if function.IsValid():
                functions.append(function)
        found[name] = len(functions)
        target.BreakpointDelete(breakpoint.GetID())  # its locations are moved past one-line functions' prologues
        for function in functions:
            if _key(function) in _state["bound"]:
                continue  # a function an earlier name binds (fib, fib(int)): recorded once
            _state["bound"].add(_key(function))
            _callback(target.BreakpointCreateBySBAddress(_after_prologue(target, function)), "entry")
            _returns(target, function)
    for function_name, callback in (("__cxa_throw", "thrown"), ("__cxa_begin_catch", "caught")):
        _callback(target.BreakpointCreateByName(function_name), callback)
    _send({"armed": found})  # (a print would reach lldb-dap's output events: the program's output)


def disarm(target):
    for breakpoint in _state["breakpoints"]:
        target.BreakpointDelete(breakpoint.GetID())
    _state["breakpoints"] = []
    pending = [call for stack in _state["open"].values() for call in stack]
    _state["open"] = {}
    for call in pending:
        for key in ("cfa", "id", "level"):
            call.pop(key, None)
        if _state["out"]:
            _send(call)
