"""Loaded into gdb's Python for a call trace (``python exec(…)``; ``MARK``, ``POLYDBG_CHARS`` and ``POLYDBG_DEPTH``
are replaced).

A named function gets an internal breakpoint whose ``stop`` reads the call's arguments, caller and thread, and
notes the call as open with where it returns to and the stack pointer there (its CFA); every return address gets
one breakpoint (``_Return``), whose ``stop`` ends the thread's open call that returns there with that CFA and reads
the value from the return registers as the function's type says. Every ``stop`` answers False: gdb resumes at once,
nothing is reported. (A ``FinishBreakpoint`` per call did the same at a cost that grew with the calls made: 0.65 s
for 300 calls, 14.5 s for 1,200.) A C++ exception pops frames without a return: ``__cxa_throw`` notes the type
thrown on the thread, and ``__cxa_begin_catch`` ends every open call on the thread deeper than the catching frame
with it. A call open when the program exits is sent as still running. Each finished call is one console line, the
mark in front and JSON after, read by the backend (``calltrace``).

Callees (a depth): when a call is entered at a level below the depth, its function's machine code is read once
for its direct calls (``call 0x… <f>``, ``bl``) whose targets are the program's own functions with debug info (a
source file on disk, not a runtime header: not libc's, the PLT's stubs resolved by name to a library of the
program's, libstdc++'s), and each gets a breakpoint like a named one's. Such a breakpoint records a call only when
the nearest frame of the program's own above it (the runtime's frames between passed through) is an open
recorded call of the same thread, one level deeper than it; a call from elsewhere answers at once. A call left
by a longjmp ends when its caller's next traced event shows it gone. Indirect calls (pointers, virtual calls)
are not followed: a function making them is sent once (``{"pointers": name}``) for the answer's note, as are the
program's functions the compiler inlined into a followed one (``{"inlined": [name…]}``: no call to record).
"""
import json as _json
import os as _os
import re as _re
import time as _time

import gdb as _gdb

_CHARS = POLYDBG_CHARS  # noqa: F821 (replaced as the shim is loaded)
_DEPTH = POLYDBG_DEPTH  # noqa: F821
_RUNTIME = ("/usr/include/", "/usr/lib/gcc/", "/rustc/")
_CALL = _re.compile(r"^\s*(call|callq|bl|blr|blx)\s+(\S+)(?:\s+<([^>]+)>)?")
_SCALARS = (_gdb.TYPE_CODE_INT, _gdb.TYPE_CODE_CHAR, _gdb.TYPE_CODE_BOOL, _gdb.TYPE_CODE_ENUM, _gdb.TYPE_CODE_PTR)
_ARTIFICIAL = ("__in_chrg", "__vtt_parm")  # a constructor's or destructor's hidden arguments
_JUMPED = "left without a return (a longjmp)"  # seen gone before any C++ catch ended it


def _cut(text):
    return text if len(text) <= _CHARS else text[:_CHARS] + "…"


def _where(frame):
    sal = frame.find_sal()
    place = "%s:%s" % (_os.path.basename(sal.symtab.filename), sal.line) if sal.symtab else "?"
    return "%s (%s)" % (frame.name() or "??", place)


def _send(call):
    _gdb.write("MARK" + _json.dumps(call) + "\n")


class _Open:
    """A call begun and not yet ended: where it returns to, and the stack pointer there (its CFA)."""

    def __init__(self, frame, call, level):
        caller = frame.older()
        self.call = call
        self.level = level
        self.frame = frame
        self.thread = _gdb.selected_thread().num
        self.sp = int(frame.read_register("sp"))  # the call's frame: deeper ones have lower addresses
        self.back = caller.pc()
        self.cfa = int(caller.read_register("sp"))
        function = frame.function()
        self.type = function.type.target() if function is not None and function.type is not None else None


def _returned(kind):
    """The value a function of return type ``kind`` left in the return registers (at its return address)."""
    if kind is None:
        return None
    bare = kind.strip_typedefs()
    if bare.code == _gdb.TYPE_CODE_VOID:
        return None
    arm = "aarch64" in _gdb.newest_frame().architecture().name()
    if bare.code == _gdb.TYPE_CODE_FLT and bare.sizeof in (4, 8):
        register = ("$s0" if bare.sizeof == 4 else "$d0") if arm else \
            ("$xmm0.v4_float[0]" if bare.sizeof == 4 else "$xmm0.v2_double[0]")
        return _cut(str(_gdb.parse_and_eval(register)))
    integer = _gdb.parse_and_eval("$x0" if arm else "$rax")
    if bare.code in _SCALARS and bare.sizeof <= 8:
        return _cut(str(integer.cast(kind)))
    if bare.sizeof > 16:  # returned in memory the caller gave: its address comes back in the register
        return _cut(str(integer.cast(kind.pointer()).dereference()))
    if bare.code == _gdb.TYPE_CODE_STRUCT and all(
            field.type is not None and field.type.strip_typedefs().code in _SCALARS for field in bare.fields()):
        second = _gdb.parse_and_eval("$x1" if arm else "$rdx")  # integer fields come back in two registers
        size = _gdb.lookup_type("long").sizeof
        data = int(integer).to_bytes(size, "little", signed=int(integer) < 0) + \
            int(second).to_bytes(size, "little", signed=int(second) < 0)
        return _cut(str(_gdb.Value(data[:bare.sizeof], kind)))
    return "(a %s)" % kind


class _Return(_gdb.Breakpoint):
    """A return address of traced calls: ends the open call of this thread that returns here with this CFA."""

    def stop(self):
        try:
            thread = _gdb.selected_thread().num
            calls = _polydbg_calls.open.get(thread)
            if not calls:
                return False
            frame = _gdb.newest_frame()
            sp = int(frame.read_register("sp"))
            pc = frame.pc()
            for index in range(len(calls) - 1, -1, -1):
                done = calls[index]
                if done.back == pc and done.cfa == sp:
                    for gone in calls[index + 1:]:  # opened after it, never returned: a longjmp left them
                        _polydbg_calls.closed(gone, _JUMPED)
                    calls.pop(index)
                    took = _time.perf_counter() - done.call.pop("began")
                    try:
                        value = _returned(done.type)
                    except Exception as exc:
                        value = "<error: %s>" % exc
                    done.call.update(r=value, d=took * 1e6)
                    _send(done.call)
                    break
        except Exception as exc:
            _gdb.write("MARK" + _json.dumps({"error": str(exc)}) + "\n")
        return False


def _entered(frame, name, depth):
    """A call's record at its entry: its arguments, caller, thread and place."""
    args = []
    block = frame.block()
    while block.function is None and block.superblock is not None:
        block = block.superblock
    for symbol in block:
        if symbol.is_argument and symbol.print_name not in _ARTIFICIAL:
            try:
                args.append([symbol.print_name, _cut(str(symbol.value(frame)))])
            except Exception as exc:
                args.append([symbol.print_name, "<error: %s>" % exc])
    older = frame.older()
    function = frame.function()
    call = {"f": name, "n": function.print_name if function else name, "a": args,
            "c": _where(older) if older is not None else None,
            "t": "thread %d" % _gdb.selected_thread().global_num,
            "file": function.symtab.fullname() if function and function.symtab else None,
            "line": function.line if function else frame.find_sal().line, "began": _time.perf_counter()}
    call["s"] = call["began"]
    if depth:
        call["depth"] = depth
    return call


class _Entry(_gdb.Breakpoint):
    """A named function's entry (``level`` None), or a callee's (its calls recorded under an open call only)."""

    def __init__(self, name, callee=False, **where):
        super().__init__(internal=True, **where)
        self.silent = True
        self.traced = name
        self.callee = callee

    def stop(self):
        try:
            frame = _gdb.newest_frame()
            level = 0
            if self.callee:
                parent = _polydbg_calls.parent(frame)
                if parent is None or parent.level >= _DEPTH:
                    return False
                level = parent.level + 1
            call = _entered(frame, self.traced, level)
            if frame.older() is None:
                call.pop("began")
                _send(call)
                return False
            _polydbg_calls.opened(_Open(frame, call, level))
            if level < _DEPTH:
                _polydbg_calls.follow(frame)
        except Exception as exc:
            _gdb.write("MARK" + _json.dumps({"error": str(exc)}) + "\n")
        return False


def _demangled(name):
    try:
        return _gdb.execute("demangle _Z" + name, to_string=True).strip()
    except Exception:
        return name


class _Throw(_gdb.Breakpoint):
    """``__cxa_throw(object, type_info, destructor)``: the type thrown, read from the type_info's name."""

    def stop(self):
        try:
            register = "$x1" if "aarch64" in _gdb.newest_frame().architecture().name() else "$rsi"
            info = _gdb.parse_and_eval(register).cast(_gdb.lookup_type("char").pointer().pointer())
            name = info[1].string()
            _polydbg_calls.thrown[_gdb.selected_thread().num] = _demangled(name.lstrip("*"))
        except Exception:
            _polydbg_calls.thrown[_gdb.selected_thread().num] = "a C++ exception"
        return False


class _Catch(_gdb.Breakpoint):
    """``__cxa_begin_catch``: the frames between the throw and the catching one are gone."""

    def stop(self):
        try:
            catcher = _gdb.newest_frame().older()
            sp = int(catcher.read_register("sp")) if catcher is not None else None
            thread = _gdb.selected_thread().num
            _polydbg_calls.left(thread, sp, _polydbg_calls.thrown.get(thread, "a C++ exception"))
        except Exception as exc:
            _gdb.write("MARK" + _json.dumps({"error": str(exc)}) + "\n")
        return False


def _own(symtab):
    """Whether a function defined in ``symtab`` is the program's own: its source on disk, not a runtime header."""
    path = symtab.fullname() if symtab is not None else ""
    return bool(path) and not path.startswith(_RUNTIME) and "/lib/rustlib/" not in path and _os.path.isfile(path)


class _Calls:
    def __init__(self):
        self.entries = []
        self.thrown = {}  # thread → the type of the C++ exception it threw last
        self.open = {}  # thread → its open calls (``_Open``), in the order they began
        self.returns = {}  # a return address → its breakpoint
        self.followed = set()  # the start addresses of the functions whose callees are bound
        self.bound = set()  # the start addresses of the functions with an entry breakpoint
        self.pointers = set()  # the followed functions that call through a pointer
        self.owned = {}  # a source file → whether it is the program's

    def opened(self, call):
        self.open.setdefault(call.thread, []).append(call)
        if call.back not in self.returns:
            self.returns[call.back] = _Return("*%d" % call.back, internal=True)
            self.returns[call.back].silent = True

    def closed(self, call, raised):
        """``call`` has ended without a return: ``raised`` says how."""
        calls = self.open.get(call.thread) or []
        if call in calls:
            calls.remove(call)
        call.call.pop("began", None)
        call.call.update(x=raised)
        _send(call.call)

    def left(self, thread, sp, raised=_JUMPED):
        """End the open calls of ``thread`` deeper than ``sp`` (all with None): a throw or a longjmp left them."""
        for call in list(self.open.get(thread) or []):
            if sp is None or call.sp < sp:
                self.closed(call, raised)

    def own(self, symtab):
        key = symtab.filename if symtab is not None else ""
        if key not in self.owned:
            self.owned[key] = _own(symtab)
        return self.owned[key]

    def parent(self, frame):
        """The open call ``frame``'s nearest own caller is, on its thread; None when that caller is not one."""
        calls = self.open.get(_gdb.selected_thread().num)
        if not calls:
            return None
        caller = frame.older()
        while caller is not None:
            for index in range(len(calls) - 1, -1, -1):
                if calls[index].frame == caller:
                    for gone in calls[index + 1:]:  # opened later, not on the stack: left by a longjmp
                        self.closed(gone, _JUMPED)
                    return calls[index]
            function = caller.function()
            if function is not None and self.own(function.symtab):
                return None
            caller = caller.older()
        return None

    def follow(self, frame):
        """Bind the direct callees of ``frame``'s function, once."""
        function = frame.function()
        block = frame.block()
        while block.function is None and block.superblock is not None:
            block = block.superblock
        if function is None or block.start in self.followed:
            return
        self.followed.add(block.start)
        inlined = set()
        for insn in frame.architecture().disassemble(block.start, block.end - 1):
            inner = _gdb.block_for_pc(insn["addr"])
            while inner is not None and inner.start != block.start:
                if inner.function is not None and self.own(inner.function.symtab):
                    inlined.add(inner.function.print_name)
                inner = inner.superblock
            found = _CALL.match(insn["asm"])
            if found is None:
                continue
            kind, operand, name = found.groups()
            if operand.startswith("*") or kind in ("blr", "blx"):
                if "(%rip)" not in operand and function.print_name not in self.pointers:  # (a GOT slot: a library's)
                    self.pointers.add(function.print_name)
                    _send({"pointers": function.print_name})
                continue
            try:
                self.bind(int(operand, 16), name)
            except ValueError:
                continue
        if inlined:
            _send({"inlined": sorted(inlined)})

    def bind(self, address, name):
        """An entry breakpoint on the function at ``address`` (``name@plt``: the library's, by its name)."""
        symbol = None
        block = _gdb.block_for_pc(address)
        while block is not None and block.function is None:
            block = block.superblock
        if block is not None and block.start == address:
            symbol = block.function
        elif name and name.endswith("@plt"):
            symbol = _gdb.lookup_global_symbol(name[:-4])
            block = _gdb.block_for_pc(int(symbol.value().address)) if symbol is not None else None
        if symbol is None or block is None or block.start in self.bound or not self.own(symbol.symtab):
            return
        self.bound.add(block.start)
        entry = None
        try:  # after the function's prologue, where its arguments are read
            entry = _Entry(symbol.print_name, True, source=symbol.symtab.fullname(), function=symbol.print_name)
        except Exception:
            pass
        if entry is None or entry.pending:
            if entry is not None:
                entry.delete()
            entry = _Entry(symbol.print_name, True, spec="*%d" % block.start)
        self.entries.append(entry)

    def exited(self, event):
        """The program ended: its open calls were still running."""
        for calls in self.open.values():
            for call in calls:
                _send(call.call)
        self.open = {}

    def arm(self, names):
        """Set the entries; each name's locations, or its absence, as JSON."""
        _gdb.events.exited.connect(self.exited)
        found = {}
        entered = set()  # the addresses the entries stop at
        for name in names:
            entry = _Entry(name, spec=name)
            locations = [loc for loc in getattr(entry, "locations", []) if loc.enabled]
            if entry.pending or (not locations and not entry.location):
                entry.delete()
                found[name] = 0
            else:
                found[name] = max(1, len(locations))
                fresh = 0
                for location in locations:
                    if location.address in entered:
                        location.enabled = False  # a function an earlier name binds (fib, fib(int)): once
                        continue
                    entered.add(location.address)
                    fresh += 1
                    block = _gdb.block_for_pc(location.address)
                    while block is not None and block.function is None:
                        block = block.superblock
                    if block is not None:
                        self.bound.add(block.start)
                if fresh or not locations:
                    self.entries.append(entry)
                else:
                    entry.delete()
        for kind, function in ((_Throw, "__cxa_throw"), (_Catch, "__cxa_begin_catch")):
            try:  # C++'s runtime: pending until libstdc++ loads, where the program has it
                bp = kind(function, internal=True)
                bp.silent = True
                self.entries.append(bp)
            except Exception:
                pass
        print(_json.dumps({"found": found, "program": _gdb.current_progspace().filename}))

    def disarm(self):
        try:
            _gdb.events.exited.disconnect(self.exited)
        except Exception:
            pass
        for entry in self.entries:
            if entry.is_valid():
                entry.delete()
        self.entries = []
        for bp in self.returns.values():
            if bp.is_valid():
                bp.delete()
        self.returns = {}
        self.open = {}


_polydbg_calls = _Calls()
