"""gdb's stop and exit records read as polydbg's reports: a ``*stopped`` record → one ``StopEvent`` and the
facts the stop leaves for later questions (which signal, which exception filter, whose runtime frames to
hide); an ``exited*`` record → the exit code; a loaded core file → one post-mortem stop.

Pure functions: the backend drains the program's terminal, invalidates the last stop's values and hands
the record here; what the breakpoints know (kinds, polydbg's ids) is asked through ``BreakpointBook``.

How gdb's reasons map (checked against gdb 13.1, GDB/MI 3):

==============================================  ==============================================================
gdb's ``reason``                                polydbg's stop
==============================================  ==============================================================
breakpoint-hit                                  breakpoint / function breakpoint; the temporary breakpoint of
                                                ``-exec-run --start`` (disp=del, not ours) → entry; a catch or
                                                the ``rust_panic`` breakpoint → exception
end-stepping-range, location-reached            step
function-finished                               step; the return value (and gdb's ``$N`` holding it) is kept
                                                for the caller's locals (``(return) add = 6``)
signal-received                                 exception named by the signal (SIGSEGV …); SIGINT/SIGTRAP/SIGSTOP
                                                (or "0") right after ``-exec-interrupt`` → pause
watchpoint-trigger, read-/access-…-trigger      data breakpoint (``#3 x: 1 → 2`` or ``#3 x = 2``: polydbg's id)
watchpoint-scope                                data breakpoint; gdb deleted the watchpoint (its frame returned)
exception-caught, exception-thrown              exception (C++ thrown / caught)
no reason, or any after an interrupt            pause
any other                                       the reason in words (``solib-event`` → solib event)
exited, exited-normally, exited-signalled       exit code (octal in the record; 128+N for signal N)
==============================================  ==============================================================
"""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass, field
from typing import Any, Protocol

from polydbg.backends.base import StopEvent
from polydbg.backends.gdb.commands import CORE_SIGNAL, watchpoint_of
from polydbg.backends.gdb.values import as_dict, to_int
from polydbg.backends.kit.frames import is_runtime_source, library_call
from polydbg.backends.kit.panics import panic_message

WATCH_OUT_OF_SCOPE = "the watched expression went out of scope (its frame returned)"
_PAUSE_SIGNALS = ("SIGINT", "SIGTRAP", "SIGSTOP", "0")  # what an -exec-interrupt stop reports
_WATCH_REASONS = ("watchpoint-trigger", "read-watchpoint-trigger", "access-watchpoint-trigger")


@dataclass(frozen=True)
class StopFacts:
    """What the current stop is about, for ``exception_info`` and the frames hidden at it."""

    signal: tuple[str, str] | None = None  # (name, meaning) of the signal that stopped the program
    catch: str | None = None  # the exception filter that stopped it: throw | catch | panic
    machinery_thread: int | None = None  # the thread whose runtime frames are hidden (throw, catch, abort)
    listed_above: bool = False  # the hidden frames are still listed above frame 0 (a watchpoint in memcpy)
    returned: Returned | None = None  # what the call a finish stepped out of returned


@dataclass(frozen=True)
class Returned:
    """What ``-exec-finish`` reported: the function it left, on which thread, its value and gdb's ``$N`` for it."""

    thread: int | None
    function: str
    value: str
    result_var: str


@dataclass(frozen=True)
class Stop:
    event: StopEvent
    facts: StopFacts = field(default_factory=StopFacts)
    watch_gone: int | None = None  # the watchpoint gdb deleted at this stop (out of scope)


class BreakpointBook(Protocol):
    """What a stop report asks of the breakpoints by gdb's number."""

    def kind_of(self, number: int) -> str | None:
        """line | function | watch | catch, or None for a breakpoint polydbg did not set."""
        ...

    def catch_of(self, number: int) -> str:
        """The exception filter (throw | catch | panic) a catchpoint was set for."""
        ...

    def ids_hit(self, number: int) -> tuple[int, ...]:
        """polydbg's id of the breakpoint, as ``hit_breakpoint_ids``."""
        ...


def classify(reason: str, payload: dict[str, Any], *, interrupting: bool, breakpoints: BreakpointBook,
             output: str, finishing: str | None = None) -> Stop:
    """The stop a ``*stopped`` record (not an exit) reports; ``interrupting``: polydbg sent
    ``-exec-interrupt`` before it; ``output``: the program's latest output (a panic's message);
    ``finishing``: the function an ``-exec-finish`` was sent to leave."""
    thread = to_int(payload.get("thread-id"), 0) or None
    if reason == "breakpoint-hit":
        number = to_int(payload.get("bkptno"), 0)
        kind = breakpoints.kind_of(number)
        if kind is None and payload.get("disp") == "del":
            return Stop(StopEvent("entry", thread, "stopped at the program's entry (main)"))
        if kind == "catch":
            return caught(thread, breakpoints.catch_of(number), output)
        word = "function breakpoint" if kind == "function" else "breakpoint"
        return Stop(StopEvent(word, thread, f"breakpoint {number}", hit_breakpoint_ids=breakpoints.ids_hit(number)))
    if reason in ("end-stepping-range", "location-reached"):
        return Stop(StopEvent("step", thread))
    if reason == "function-finished":
        value, result_var = payload.get("return-value"), payload.get("gdb-result-var")
        if value is None or result_var is None:  # a void function
            return Stop(StopEvent("step", thread))
        returned = Returned(thread, finishing or "the function", str(value), str(result_var))
        return Stop(StopEvent("step", thread), StopFacts(returned=returned))
    if reason == "signal-received":
        name = str(payload.get("signal-name") or "signal")
        meaning = str(payload.get("signal-meaning") or "")
        if interrupting and name in _PAUSE_SIGNALS:
            return Stop(StopEvent("pause", thread, "paused"))
        # abort()/assert(): report the frame that called them
        facts = StopFacts(signal=(name, meaning), machinery_thread=thread if name == "SIGABRT" else None)
        return Stop(StopEvent("exception", thread, name, f"{name} ({meaning})" if meaning else name), facts)
    if reason in _WATCH_REASONS:
        wpt = watchpoint_of(payload)
        number = to_int(wpt.get("number"), 0)
        ids = breakpoints.ids_hit(number)
        name = f"#{ids[0]}" if ids else f"gdb's watchpoint {number}"  # polydbg's id, not gdb's number
        text = f"{name} {watch_text(wpt, payload)}"
        top = as_dict(payload.get("frame"))
        facts = StopFacts()
        if top and machinery(top):  # fired inside memcpy & co.: the stop is the user's call, memcpy listed above
            facts = StopFacts(machinery_thread=thread, listed_above=True)
            text = f"{text} {library_call(str(top.get('func') or '??'))}"
        return Stop(StopEvent("data breakpoint", thread, f"watchpoint {name}", text, hit_breakpoint_ids=ids), facts)
    if reason == "watchpoint-scope":
        number = to_int(payload.get("wpnum"), 0)
        ids = breakpoints.ids_hit(number)
        name = f"#{ids[0]}" if ids else f"gdb's watchpoint {number}"
        return Stop(StopEvent("data breakpoint", thread, f"watchpoint {name} deleted",
                              "the watched expression went out of scope; its frame returned",
                              hit_breakpoint_ids=ids), watch_gone=number)
    if reason in ("exception-caught", "exception-thrown"):
        return caught(thread, breakpoints.catch_of(to_int(payload.get("bkptno"), 0)), output)
    if interrupting or not reason:
        return Stop(StopEvent("pause", thread, "paused"))
    return Stop(StopEvent(reason.replace("-", " "), thread))


def machinery(frame: dict[str, Any]) -> bool:
    """A runtime frame above the user's at a throw, panic, abort or a watchpoint that fired in library code:
    no source here, or the runtime's (libstdc++'s headers, Rust's std)."""
    fullname = str(frame.get("fullname") or "")
    return not (frame.get("line") and os.path.isfile(fullname)) or is_runtime_source(fullname)


def caught(thread: int | None, what: str, output: str) -> Stop:
    """A stop at an exception filter's catchpoint: the runtime's frames above the code that threw (or
    panicked) are hidden on ``thread``."""
    facts = StopFacts(catch=what, machinery_thread=thread)  # __cxa_throw / __cxa_begin_catch / rust_panic
    if what == "panic":  # the hook printed the message before calling rust_panic (the pty is drained)
        message = panic_message(output) or "Rust panic"
        return Stop(StopEvent("exception", thread, message, message), facts)
    text = "C++ exception thrown" if what == "throw" else "C++ exception caught"
    return Stop(StopEvent("exception", thread, text, text), facts)


def watch_text(wpt: dict[str, Any], payload: dict[str, Any]) -> str:
    """What a watchpoint saw: ``x: 1 → 2`` for a write, ``x = 2`` for a read."""
    value = as_dict(payload.get("value"))
    if "old" in value and "new" in value:
        return f"{wpt.get('exp')}: {value['old']} → {value['new']}"
    if "new" in value or "value" in value:
        return f"{wpt.get('exp')} = {value.get('new', value.get('value'))}"
    return str(wpt.get("exp") or "")


def exit_status(reason: str, payload: dict[str, Any]) -> tuple[int | None, str | None]:
    """The exit code an ``exited*`` record reports (128+N for signal N; None for a signal Python does not
    know) and, for a signal, the console line that says so."""
    if reason == "exited-signalled":
        name = str(payload.get("signal-name") or "signal")
        meaning = str(payload.get("signal-meaning") or "")
        number = getattr(signal, name, None)
        code = 128 + int(number) if number is not None else None
        return code, f"program terminated by {name}" + (f" ({meaning})" if meaning else "") + "\n"
    if reason == "exited":
        return to_int(payload.get("exit-code"), 0, 8), None  # gdb prints the exit code in octal
    return 0, None


def core_stop(console: str, thread: int | None, core: str | None) -> Stop:
    """The one stop a loaded core file is: an exception when gdb's load message names the fatal signal
    (``Program terminated with signal SIGSEGV, Segmentation fault.``), else ``core``."""
    name = os.path.basename(core or "core")
    match = CORE_SIGNAL.search(console)
    if match is None:
        return Stop(StopEvent("core", thread, f"post-mortem: core file {name}"))
    signal_name, meaning = match.group(1), match.group(2).strip()
    return Stop(StopEvent("exception", thread, f"post-mortem: core file {name} ({signal_name})",
                          f"{signal_name} ({meaning})"), StopFacts(signal=(signal_name, meaning)))
