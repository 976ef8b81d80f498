"""Loaded into gdb's Python for a call trace (``python exec(…)``; ``MARK`` and ``POLYDBG_CHARS`` are replaced).

A named function gets an internal breakpoint whose ``stop`` reads the call's arguments, caller and thread,
sets a ``FinishBreakpoint`` on the call's frame, and answers False: gdb resumes at once, nothing is reported.
The finish breakpoint's ``stop`` reads the return value (``return_value``) and answers False too. A C++
exception pops frames without a return, and gdb notices a finish breakpoint's frame gone only lazily (a later
call made from the same place has the same frame id, and its return would be taken for the old one's): so
``__cxa_throw`` notes the type thrown on the thread, and ``__cxa_begin_catch`` ends every traced call on the
thread deeper than the catching frame with it. Each finished call is one console line, the mark in front and
JSON after, read by the backend (``calltrace``).
"""
import json as _json
import os as _os
import time as _time

import gdb as _gdb

_CHARS = POLYDBG_CHARS  # noqa: F821 (replaced as the shim is loaded)


def _cut(text):
    return text if len(text) <= _CHARS else text[:_CHARS] + "…"


def _where(frame):
    sal = frame.find_sal()
    place = "%s:%s" % (_os.path.basename(sal.symtab.filename), sal.line) if sal.symtab else "?"
    return "%s (%s)" % (frame.name() or "??", place)


def _send(call):
    _gdb.write("MARK" + _json.dumps(call) + "\n")


class _Exit(_gdb.FinishBreakpoint):
    def __init__(self, frame, call):
        super().__init__(frame, internal=True)
        self.silent = True
        self.call = call
        self.thread = _gdb.selected_thread().num
        self.sp = int(frame.read_register("sp"))  # the call's frame: deeper ones have lower addresses

    def stop(self):
        took = _time.perf_counter() - self.call.pop("began")
        value = self.return_value
        self.call.update(r=None if value is None else _cut(str(value)), d=took * 1e6)
        _send(self.call)
        _polydbg_calls.exits.discard(self)
        return False

    def out_of_scope(self):
        self.call.pop("began", None)
        self.call.update(x="the frame was left without a return (a C++ exception or a longjmp)")
        _send(self.call)
        _polydbg_calls.exits.discard(self)


class _Entry(_gdb.Breakpoint):
    def __init__(self, spec, name):
        super().__init__(spec, internal=True)
        self.silent = True
        self.traced = name

    def stop(self):
        try:
            frame = _gdb.newest_frame()
            args = []
            block = frame.block()
            while block.function is None and block.superblock is not None:
                block = block.superblock
            for symbol in block:
                if symbol.is_argument:
                    try:
                        args.append([symbol.print_name, _cut(str(symbol.value(frame)))])
                    except Exception as exc:
                        args.append([symbol.print_name, "<error: %s>" % exc])
            older = frame.older()
            thread = _gdb.selected_thread()
            function = frame.function()
            sal = frame.find_sal()
            call = {"f": self.traced, "n": function.print_name if function else self.traced, "a": args,
                    "c": _where(older) if older is not None else None,
                    "t": "thread %d" % thread.global_num,
                    "file": function.symtab.fullname() if function and function.symtab else None,
                    "line": function.line if function else sal.line, "began": _time.perf_counter()}
            call["s"] = call["began"]
            if older is None:
                call.pop("began")
                _send(call)
            else:
                _polydbg_calls.exits.add(_Exit(frame, call))
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
            kind = _polydbg_calls.thrown.get(thread, "a C++ exception")
            for bp in list(_polydbg_calls.exits):
                if bp.thread == thread and (sp is None or bp.sp < sp) and bp.is_valid():
                    bp.call.pop("began", None)
                    bp.call.update(x=kind)
                    _send(bp.call)
                    _polydbg_calls.exits.discard(bp)
                    bp.delete()
        except Exception as exc:
            _gdb.write("MARK" + _json.dumps({"error": str(exc)}) + "\n")
        return False


class _Calls:
    def __init__(self):
        self.entries = []
        self.thrown = {}  # thread → the type of the C++ exception it threw last
        self.exits = set()  # finish breakpoints waiting (gdb deletes each once hit)

    def arm(self, names):
        """Set the entries; each name's locations, or its absence, as JSON."""
        found = {}
        for name in names:
            entry = _Entry(name, name)
            locations = [loc for loc in getattr(entry, "locations", []) if loc.enabled]
            if entry.pending or (not locations and not entry.location):
                entry.delete()
                found[name] = 0
            else:
                self.entries.append(entry)
                found[name] = max(1, len(locations))
        for kind, function in ((_Throw, "__cxa_throw"), (_Catch, "__cxa_begin_catch")):
            try:  # C++'s runtime: pending until libstdc++ loads, where the program has it
                bp = kind(function, internal=True)
                bp.silent = True
                self.entries.append(bp)
            except Exception:
                pass
        print(_json.dumps({"found": found, "program": _gdb.current_progspace().filename}))

    def disarm(self):
        for entry in self.entries:
            if entry.is_valid():
                entry.delete()
        self.entries = []
        for bp in self.exits:
            if bp.is_valid():
                bp.delete()
        self.exits = set()


_polydbg_calls = _Calls()
