"""Why lldb-dap stopped, as polydbg reports it: signals, pauses, core files, Rust panics, aborts,
C++ throws, and breakpoints whose condition lldb could not evaluate.

Most stops are rewritten from the ``stopped`` body alone (``rewrite``). Four need a look at the
stack first, so they are reported after it (``kit.ordering`` holds the events behind them):

- SIGABRT (abort(), a failed assert(), std::terminate): the frames of glibc's and libstdc++'s abort
  path are hidden, so frame 0 is the code that called abort()/assert(); the message std::terminate
  or assert printed (in the program's output) is kept for ``exception_info``.
- A C++ throw (the ``cpp_throw`` filter stops in ``__cxa_throw``): the runtime frames are hidden and
  the thrown exception is read from ``__cxa_throw``'s argument registers and memory (``kit.cxx``),
  never with an lldb expression, which can hang lldb-dap for good.
- A Rust panic stops on polydbg's ``rust_panic`` breakpoint, which is not one of the session's: if
  the top frame is ``rust_panic``, the std/core frames above the panicking code are hidden and the
  panic message the hook printed (``kit.panics``) becomes the stop's description.
- A watchpoint: one that fired inside library code (memcpy writing the watched bytes) is reported at
  the user's frame that called it, the library frames listed above frame 0 (``above``); the old and
  new values lldb printed as console lines just before the stop go to its description, after polydbg's
  id and the watched expression (lldb-dap's own "data breakpoint 2" is lldb's watchpoint number).

A stop at a conditional breakpoint waits ``CONDITION_ERROR_WAIT_S`` for lldb's console line saying
the condition failed to evaluate (lldb stops then, and says so only in output sent just after the
stop), so the report can tell the agent to fix the condition.

A stop at breakpoints whose hit conditions polydbg counts (``hits.LldbHits``) is counted; when no counter
says stop, the thread is resumed before the session hears of it (never after a step: a step that ends on
such a breakpoint counts the hit and is the step's stop).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from collections.abc import Callable
from typing import Any, TypeVar

from polydbg.backends.base import ExceptionDetail, Frame, StopEvent
from polydbg.backends.dap import wire
from polydbg.backends.kit import cxx, sanitizers
from polydbg.backends.kit.frames import FrameHandles, is_runtime_source, leading, library_call
from polydbg.backends.kit.handles import IdMap
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.kit.panics import expected_by_test, panic_message
from polydbg.backends.lldb import values
from polydbg.backends.lldb.hits import LldbHits
from polydbg.backends.lldb.launch import COMMAND_PREFIX
from polydbg.errors import AdapterError

T = TypeVar("T")
PANIC_MESSAGE_WAIT_S = 0.3
STACK_PEEK = 64  # frames read to find the user frame under a panic / abort
CONDITION_ERROR_WAIT_S = 0.1  # lldb prints a failed condition's error just after the stop
OUTPUT_TAIL = 8192  # the program's recent output kept, where panic and abort messages are found

_SIGNAL = re.compile(r"^signal (SIG[A-Z0-9]+)(?::\s*(.*))?$", re.DOTALL)
_FATAL_SIGNAL = re.compile(r"\bSIG(SEGV|ABRT|BUS|FPE|ILL|TRAP|SYS|XCPU|XFSZ)\b")
_CXX_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^'\n]+)'\n\s*what\(\):\s*([^\n]*)")
_CONDITION_FAILED = re.compile(r'stopped due to an error evaluating condition of breakpoint ([\d.]+): "(.*?)"\n')
_ASSERT_FAILED = re.compile(r"(Assertion `.*' failed\.)")
# lldb's console lines just before a watchpoint stop: "Watchpoint 1 hit:", "old value: 0", "new value: 7"
_WATCH_REPORT = re.compile(r"^(?:Watchpoint \d+ hit:|(old |new )?value: (.*))\n?$", re.DOTALL)
_MAIN = "--fullname main"  # C and C++: main itself, not a method named main
# Rust: the crate's main (``app::main``, with its hash under the legacy mangling), not the C main rustc writes
_ENTRY_FUNCTION = {"rust": '--func-regex "^[A-Za-z_][A-Za-z0-9_]*::main(::h[0-9a-f]+)?$"'}
_SANITIZER_NAMES = ("__asan", "__sanitizer", "__ubsan", "__tsan", "__lsan", "__interceptor_", "___interceptor_")
_SANITIZER_SOURCES = ("/libsanitizer/", "/compiler-rt/lib/")
_PLACED = re.compile(r"^Breakpoint (\d+): where = ", re.MULTILINE)
_SIGNAL_TEXT = {
    "SIGABRT": "aborted (abort() was called, e.g. by a failed assert)",
    "SIGSEGV": "segmentation fault",
    "SIGBUS": "bus error",
    "SIGFPE": "arithmetic exception",
    "SIGILL": "illegal instruction",
    "SIGTRAP": "trace/breakpoint trap",
}
# Frames of glibc's and libstdc++'s abort path, above the code that called abort() / assert().
_ABORT_FRAMES = frozenset({
    "__pthread_kill_implementation", "__pthread_kill_internal", "__GI___pthread_kill", "pthread_kill",
    "__pthread_kill", "__GI_raise", "raise", "gsignal", "__GI_abort", "abort", "__assert_fail_base",
    "__GI___assert_fail", "__assert_fail", "__assert_perror_fail", "__libc_message", "__libc_message_impl",
    "__fortify_fail", "__chk_fail", "__stack_chk_fail", "malloc_printerr",
    "__gnu_cxx::__verbose_terminate_handler()", "std::terminate()", "__cxxabiv1::__terminate(void (*)())",
    "__cxa_throw", "__cxa_rethrow", "std::__terminate()",
})


def library_frame(frame: Frame) -> bool:
    """A frame of libc, the C++ runtime or Rust's std, not of the program: no source, a source path
    relative to some build directory (Debian's libc), or Rust's ``/rustc/<commit>/library``."""
    file = frame.file
    return frame.name in _ABORT_FRAMES or not file or not os.path.isabs(file) or is_runtime_source(file) \
        or sanitizer_frame(frame)


def sanitizer_frame(frame: Frame) -> bool:
    """A frame of a sanitizer's runtime (gcc's libsanitizer, LLVM's compiler-rt)."""
    return frame.name.startswith(_SANITIZER_NAMES) or any(part in (frame.file or "") for part in _SANITIZER_SOURCES)


def signal_detail(detail: ExceptionDetail) -> ExceptionDetail:
    """lldb-dap's exception info for a signal ("signal SIGSEGV: invalid address") as the signal's name and
    what it means; any other detail unchanged."""
    match = _SIGNAL.match(detail.message.strip())
    if match:
        name = match.group(1)
        return ExceptionDetail(type=name, message=(match.group(2) or _SIGNAL_TEXT.get(name, "")).strip())
    return detail


def abort_detail(output: str) -> ExceptionDetail | None:
    """Why the program aborted, from what it printed: a sanitizer's report, the uncaught C++ exception
    std::terminate names, or the failed assertion."""
    reported = sanitizers.report(output)
    if reported is not None:
        return reported
    terminate = list(_CXX_TERMINATE.finditer(output))
    failed = list(_ASSERT_FAILED.finditer(output))
    if terminate:  # std::terminate printed the uncaught exception
        return ExceptionDetail(type=terminate[-1].group(1), message=terminate[-1].group(2))
    if failed:
        return ExceptionDetail(type="SIGABRT", message=failed[-1].group(1))
    return None


def watch_values(sofar: str, line: re.Match[str]) -> str:
    """The values of a watchpoint hit as lldb printed them so far, with one more of its lines: ``0 → 7`` for
    a write, ``7`` for a read."""
    if line.group(2) is None:  # "Watchpoint N hit:" starts a new report
        return ""
    value = line.group(2).strip()
    return f"{sofar} → {value}" if line.group(1) == "new " and sofar else value


def condition_failure(text: str) -> str | None:
    """What to tell the agent when lldb's output says a breakpoint's condition could not be evaluated."""
    failed = _CONDITION_FAILED.search(text)
    if failed is None:
        return None
    return (f"the condition {failed.group(2)!r} of this breakpoint could not be evaluated, so lldb stopped here "
            "(its error is in the output); fix it: debug_clear this breakpoint, then debug_break with a valid "
            "condition")


class LldbStops:
    """The stops of one lldb-dap session: classified, rewritten and reported in order."""

    def __init__(self, language: str, ordered: OrderedEvents, frames: FrameHandles[int], request: wire.Request,
                 stop_event: Callable[[dict[str, Any]], StopEvent], breakpoint_ids: IdMap[int],
                 watch_label: Callable[[int], str | None]) -> None:
        self._language = language
        self._ordered = ordered
        self._frames = frames
        self._request = request
        self._stop_event = stop_event
        self._breakpoint_ids = breakpoint_ids  # the session's breakpoints: a stop at any other may be rust_panic
        self._watch_label = watch_label  # lldb's watchpoint id → "#3 counter", as the agent knows it
        self.core: str | None = None  # the core file opened post-mortem
        self.remote = False  # attached to a gdbserver: its initial SIGTRAP stop is not the user's
        self.testing = False  # runs one test (LaunchSpec.test): a panic the test expects is no stop
        self._remote_resumed = False
        self._pause_requested = False
        self._stop_reported = False  # a focus stop was reported since the last resume
        self._first_stop = True
        self._entry_breakpoint: int | None = None  # lldb's one-shot breakpoint at the entry function (stop on entry)
        self.conditional: set[int] = set()  # lldb's ids of breakpoints with a condition
        self.hits = LldbHits()
        self._stepping = False  # a step is under way: its stop is shown whatever the breakpoints there count
        self._panics: dict[int, str] = {}  # thread id → panic message at this stop
        self._aborts: dict[int, ExceptionDetail] = {}  # thread id → why it aborted (uncaught C++ exception …)
        self.thrown_objects: dict[int, tuple[str, int]] = {}  # thread → (type, address) of the C++ throw it is at
        self._above: dict[int, list[Frame]] = {}  # thread id → library frames above a watchpoint stop's frame 0
        self._watch_values = ""  # what lldb printed about the watchpoint that is about to stop ("'\0' → ','")
        self._watch_report = False  # lldb's console lines about a watchpoint hit are arriving
        self._output_tail = ""  # recent program output, where panic messages are found
        self._output_seen = asyncio.Event()
        self._condition_failure: str | None = None  # lldb's complaint about the condition of the next stop
        self._console_seen = asyncio.Event()

    # -- what the backend tells it ------------------------------------------------------------------

    def output(self, category: str, text: str) -> bool:
        """Output the backend shows: lldb's console lines about a condition, the program's own text. True for
        lldb's report of a watchpoint hit, which the stop's description carries instead of the output."""
        watched = _WATCH_REPORT.match(text) if category == "console" else None
        if watched is not None and (watched.group(2) is None or self._watch_report):
            self._watch_report = True
            self._watch_values = watch_values(self._watch_values, watched)
            return True
        self._watch_report = False
        if category == "important":
            self._console_seen.set()
        failure = condition_failure(text)
        if failure is not None:  # lldb stops at a breakpoint whose condition it cannot evaluate: the stop must say so
            self._condition_failure = failure
        if category in ("stdout", "stderr"):  # lldb gives the debuggee a pty: stderr arrives as stdout
            self._output_tail = (self._output_tail + text)[-OUTPUT_TAIL:]
            self._output_seen.set()
        return False

    def continued(self) -> None:
        self._remote_resumed = True

    def pausing(self) -> None:
        self._pause_requested = True

    def running(self, stepping: bool) -> None:
        """The program is resumed (``stepping``: by a step, whose stop is always shown)."""
        self._stepping = stepping
        self.thrown_objects.clear()

    def forget(self) -> None:
        self._frames.clear()
        self._panics.clear()
        self._aborts.clear()
        self._above.clear()

    def moving(self) -> None:
        self._stop_reported = False
        self.forget()

    @property
    def holding(self) -> bool:
        """A stop was reported and the program has not been resumed since: lldb holds it stopped."""
        return self._stop_reported

    def known_detail(self, thread: int) -> ExceptionDetail | None:
        """Why ``thread`` aborted or panicked, when this stop learnt it (None: ask lldb-dap)."""
        if thread in self._aborts:
            return self._aborts[thread]
        if thread in self._panics:
            message = self._panics[thread]
            return ExceptionDetail(type="panic", message=message.removeprefix("panicked at ")
                                   if message.startswith("panicked at ") else message)
        return None

    # -- a stop ---------------------------------------------------------------------------------------

    def take(self, body: dict[str, Any]) -> None:
        """A ``stopped`` event, once the events before it were delivered."""
        if self.remote and not self._remote_resumed and body.get("reason") == "exception" \
                and "SIGTRAP" in str(body.get("description") or ""):
            return  # gdbserver's stop at the connection (lldb-dap resumes from it after configurationDone)
        if body.get("preserveFocusHint") and not body.get("allThreadsStopped", True) and self._stop_reported:
            return  # another thread's reason at a stop already reported for the focus thread
        self.forget()
        if body.get("reason") == "entry" and self.core is None and self._first_stop and not self._pause_requested:
            self._ordered.refine(self._run_to_entry_function(body))
            return
        entry = self._at_entry_function(body)
        if entry is not None:
            body = entry
            if body.get("reason") == "entry":
                self._report(body)
                return
        if self._needs_stack(body):
            self._ordered.refine(self._classify(body))
            return
        if body.get("reason") == "breakpoint" and any(
                i in self.conditional for i in body.get("hitBreakpointIds") or ()):
            self._ordered.refine(self._conditional_stop(body))
            return
        if self._not_counted(body):
            self._ordered.refine(self._resume_quietly(body))
            return
        self._report(self._rewrite(body))

    async def _run_to_entry_function(self, body: dict[str, Any]) -> None:
        """lldb holds a new process at the loader's first instruction (``_start``, no source); gdb's ``start`` at
        ``main``. A one-shot breakpoint at the program's entry function takes it there, and that stop is the
        entry; without one (no such function) the loader's stop is."""
        thread = body.get("threadId")
        where = _ENTRY_FUNCTION.get(self._language, _MAIN)
        try:
            said = str((await self._request("evaluate", {
                "expression": f"{COMMAND_PREFIX}breakpoint set --one-shot true {where}", "context": "repl"})
                        ).get("result", ""))
            placed = _PLACED.search(said)
            if placed is not None:
                self._entry_breakpoint = int(placed.group(1))
                await self._request("continue", {"threadId": thread if isinstance(thread, int) else 0})
                return
        except AdapterError:  # the program ended meanwhile, or lldb-dap is gone: the session hears of that
            return
        self._report(self._rewrite(body))

    def _at_entry_function(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The stop at the entry function's one-shot breakpoint, as the program's entry (a breakpoint of the
        session's there too: that one's stop); None for any other stop."""
        hits = body.get("hitBreakpointIds") or []
        if self._entry_breakpoint is None or body.get("reason") != "breakpoint" or self._entry_breakpoint not in hits:
            return None
        others = [i for i in hits if i != self._entry_breakpoint]
        self._entry_breakpoint = None
        if others:
            return {**body, "hitBreakpointIds": others}
        return {**body, "reason": "entry", "description": "stopped at the program's entry (main)", "text": None,
                "hitBreakpointIds": []}

    async def _conditional_stop(self, body: dict[str, Any]) -> None:
        """A stop at a conditional breakpoint: lldb also stops when the condition fails to evaluate, and
        says so only in console output sent just after the stop — wait a moment for it."""
        self._console_seen.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._console_seen.wait(), CONDITION_ERROR_WAIT_S)
        if self._condition_failure is None and self._not_counted(body):
            await self._resume_quietly(body)
            return
        self._report(self._rewrite(body))

    def _not_counted(self, body: dict[str, Any]) -> bool:
        """A breakpoint stop that no hit counter lets through. The hit is counted even where a step ended on it
        (as gdb's and lldb's own counts do), but then the step's stop is shown."""
        if body.get("reason") != "breakpoint":
            return False
        ids = [bp_id for n in body.get("hitBreakpointIds") or () if isinstance(n, int)
               and (bp_id := self._breakpoint_ids.id_of(n)) is not None]
        return bool(ids) and not self.hits.stops(ids) and not self._stepping

    async def _resume_quietly(self, body: dict[str, Any]) -> None:
        """Let a hit the hit condition does not stop on run on, unseen (the events after it wait)."""
        self.forget()
        thread = body.get("threadId")
        try:
            await self._request("continue", {"threadId": thread if isinstance(thread, int) else 0})
        except AdapterError:  # the program ended meanwhile, or lldb-dap is gone: the session hears of that
            return

    def _report(self, body: dict[str, Any]) -> None:
        """Straight to the session: only called when nothing is queued, or by the refinement itself."""
        self._stepping = False
        self._stop_reported = True
        self._first_stop = False
        self._ordered.target.on_stopped(self._stop_event(body))

    def _needs_stack(self, body: dict[str, Any]) -> bool:
        reason = body.get("reason")
        if "SIGABRT" in str(body.get("description") or "") and (
                reason == "exception" or (self.core is not None and self._first_stop)):
            return True
        if reason == "exception" and "C++ Throw" in str(body.get("description") or ""):
            return True
        if reason == "data breakpoint":  # a watched write inside memcpy & co. is reported at the user's call
            return True
        if reason == "breakpoint" and self.core is None:  # not ours: the rust_panic one, a sanitizer's report
            hits = [i for i in body.get("hitBreakpointIds") or () if isinstance(i, int)]
            return all(self._breakpoint_ids.id_of(i) is None for i in hits)
        return False

    def _rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        """Stop reasons as polydbg reports them (no stack needed)."""
        reason = str(body.get("reason", ""))
        description = str(body.get("description") or "")
        body = dict(body)
        if self._pause_requested and (reason in ("pause", "step", "entry") or (
                reason == "exception" and "SIGSTOP" in description)):  # lldb stops the threads with SIGSTOP
            body.update(reason="pause", description="paused", text=None)
        elif reason == "entry" and self.core is None:
            body.update(description=None, text=None)  # lldb says "signal SIGSTOP": how it holds a new process
        elif self.core is not None and self._first_stop:
            name = os.path.basename(self.core)
            crashed = _FATAL_SIGNAL.search(description)
            body.update(reason="exception" if crashed else "core", text=None,
                        description=f"post-mortem: core file {name}" + (f" ({description})" if description else ""))
        elif reason == "exception" and description.startswith("signal "):
            body["text"] = None
        elif reason == "breakpoint" and self._condition_failure is not None:
            body.update(description=self._condition_failure, text=None)
        self._condition_failure = None
        self._pause_requested = False
        return body

    async def _classify(self, body: dict[str, Any]) -> None:
        """Look at the stack of a stop that may be a panic or an abort, and report it."""
        try:
            classified = await self._classified(body)
        except (AdapterError, LookupError, ValueError, TypeError):
            classified = self._rewrite(body)
        if classified is None:
            await self._resume_quietly(body)
            return
        self._report(classified)

    async def _classified(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The stop as reported; None for a stop to resume unseen (a sanitizer about to print its report, a panic
        a test expects)."""
        thread = body.get("threadId")
        if not isinstance(thread, int):
            return self._rewrite(body)
        frames = await self._raw_frames(thread, 0, STACK_PEEK)
        if body.get("reason") == "breakpoint" and frames and sanitizer_frame(frames[0]):
            return await self._sanitizer_stop(thread, frames, body)
        if "SIGABRT" in str(body.get("description") or ""):  # hide abort()/assert()/std::terminate machinery
            hidden = leading(frames, library_frame)
            body = self._rewrite(body)
            detail = abort_detail(self._output_tail)
            if detail is not None:
                self._aborts[thread] = detail
            self._output_tail = ""
            if hidden:
                self._frames.hide(thread, hidden)
                body["description"] = (f"{body.get('description') or 'signal SIGABRT'} from "
                                       f"{frames[hidden - 1].name} ({hidden} library frames above "
                                       f"{frames[hidden].name} hidden)")
            return body
        if body.get("reason") == "data breakpoint":
            return self._watch_hit(thread, frames, body)
        if "C++ Throw" in str(body.get("description") or ""):  # stopped in __cxa_throw: report the thrower
            hidden = leading(frames, library_frame)
            if hidden and hidden < len(frames):
                self._frames.hide(thread, hidden)
            thrown = await self._thrown(thread)
            if thrown is not None:
                self._aborts[thread] = thrown
            return {**self._rewrite(body), "description": "C++ exception thrown", "text": None}
        if not frames or "rust_panic" not in frames[0].name:
            return self._rewrite(body)
        if self.testing and expected_by_test(frames):
            return None  # a #[should_panic] test passing
        self._frames.hide(thread, leading(frames, library_frame))  # std/core frames above the panicking code
        message = await self._panic_message()
        self._panics[thread] = message
        self._pause_requested = False
        return {**body, "reason": "exception", "description": message, "text": None, "hitBreakpointIds": []}

    async def _sanitizer_stop(self, thread: int, frames: list[Frame], body: dict[str, Any]) -> dict[str, Any] | None:
        """lldb's sanitizer plugins stop by themselves: ASan's and TSan's once the report is printed, reported at the
        faulting frame with the report (``kit.sanitizers``); UBSan's before it prints, resumed unseen: the report
        then aborts the program (polydbg's options), and that SIGABRT is the stop."""
        reported = await self._printed(sanitizers.report)
        if reported is None:
            return None
        hidden = leading(frames, library_frame)
        if hidden:
            self._frames.hide(thread, hidden)
        self._aborts[thread] = reported
        self._output_tail = ""
        self._pause_requested = False
        return {**body, "reason": "exception", "description": reported.type, "text": None, "hitBreakpointIds": []}

    def _watch_hit(self, thread: int, frames: list[Frame], body: dict[str, Any]) -> dict[str, Any]:
        """A watchpoint stop, with the values lldb printed just before it; when it fired inside library code
        (memcpy, memset, a libstdc++ header), the stop is the user's frame that called it, the library frames
        stay listed above it."""
        body = self._rewrite(body)
        labels = [label for n in body.get("hitBreakpointIds") or () if isinstance(n, int)
                  and (label := self._watch_label(n)) is not None]  # lldb's "data breakpoint 2" is its own number
        description = ", ".join(labels) or str(body.get("description") or "data breakpoint")
        if self._watch_values:
            description = f"{description}: {self._watch_values}"
        hidden = leading(frames, library_frame)
        if hidden:
            self._frames.hide(thread, hidden)
            self._above[thread] = frames[:hidden]
            description = f"{description} {library_call(frames[0].name)}"
        self._watch_values, self._watch_report = "", False
        return {**body, "description": description, "text": None}

    def above(self, thread: int) -> list[Frame]:
        """The library frames hidden above a watchpoint stop's frame 0 that the stack lists anyway."""
        return self._above.get(thread, [])

    async def _raw_frames(self, thread_id: int, start: int, levels: int) -> list[Frame]:
        """The stack as lldb-dap lists it, nothing hidden (to decide what to hide)."""
        body = await self._request("stackTrace", {"threadId": thread_id, "startFrame": start, "levels": levels})
        return [values.frame(f, self._language) for f in body.get("stackFrames", [])]

    async def _thrown(self, thread: int) -> ExceptionDetail | None:
        """The exception in __cxa_throw's argument registers (see kit.cxx), read as memory only:
        an lldb expression here can hang lldb-dap for good."""
        with contextlib.suppress(AdapterError, LookupError, ValueError, TypeError):
            top = (await self._request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1}))["stackFrames"]
            scopes = (await self._request("scopes", {"frameId": top[0]["id"]}))["scopes"]
            registers = next(s for s in scopes if str(s.get("name", "")).lower().startswith("register"))
            found: dict[str, int] = {}
            for group in (await self._request("variables", {"variablesReference": registers["variablesReference"]}))[
                    "variables"][:1]:  # the general purpose registers come first
                for register in (await self._request("variables", {
                        "variablesReference": group["variablesReference"]}))["variables"]:
                    if register.get("name") in cxx.ARGUMENT_REGISTERS:
                        found[register["name"]] = int(str(register["value"]).split()[0], 0)
            first, second = (found[r] for r in cxx.ARGUMENT_REGISTERS)
            type_ = cxx.demangle_type(await self._c_string_at(second + 8))
            self.thrown_objects[thread] = (type_, first)
            return ExceptionDetail(type=type_, message=await self._thrown_message(type_, first))
        return None

    async def _thrown_message(self, type_: str, address: int) -> str:
        """What the thrown object at ``address`` says (see kit.cxx), from memory: lldb's formatters print a
        class of the program's own (``memory read -t``, no code run in the program); "" when unreadable."""
        if type_ in cxx.STRING_MESSAGE_TYPES:
            return await self._c_string_at(address + 8)
        if type_ in cxx.C_STRINGS:
            return await self._c_string_at(address)
        with contextlib.suppress(AdapterError, LookupError, ValueError, TypeError):
            printed = str((await self._request("evaluate", {
                "expression": f"{COMMAND_PREFIX}memory read -t '{type_}' -c 1 {hex(address)}", "context": "repl",
            })).get("result", ""))
            if printed.lstrip().startswith("error:"):
                return cxx.NO_FIELDS
            std_base, message = cxx.fields_message(printed)
            return await self._c_string_at(address + 8) if std_base else message
        return ""

    async def _read_memory(self, address: int, count: int) -> bytes:
        body = await self._request("readMemory", {"memoryReference": hex(address), "count": count})
        return wire.memory_block(body, address).data

    async def _c_string_at(self, pointer_address: int, limit: int = 512) -> str:
        """The NUL-terminated string a pointer stored at ``pointer_address`` points to."""
        pointer = int.from_bytes(await self._read_memory(pointer_address, 8), "little")
        data = await self._read_memory(pointer, limit)
        return data.split(b"\0", 1)[0].decode("utf-8", "replace")

    async def _panic_message(self) -> str:
        """The message the panic hook printed just before ``rust_panic`` (it is already in the output)."""
        message = await self._printed(panic_message)
        if message is None:
            return "Rust panic"
        self._output_tail = ""
        return message

    async def _printed(self, parse: Callable[[str], T | None]) -> T | None:
        """What ``parse`` finds in the program's recent output, waited for ``PANIC_MESSAGE_WAIT_S`` at most (the
        runtime printed it before the stop; lldb-dap may relay it just after)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PANIC_MESSAGE_WAIT_S
        while True:
            found = parse(self._output_tail)
            if found is not None:
                return found
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            self._output_seen.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._output_seen.wait(), remaining)
