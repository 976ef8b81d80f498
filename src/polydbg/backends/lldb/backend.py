"""C, C++ and Rust through lldb-dap (LLVM's DAP adapter, formerly lldb-vscode) over stdio.

What lldb-dap does and how this backend shapes it (checked against lldb-dap 22):
- Handshake: lldb-dap answers ``launch``/``attach`` only after ``configurationDone``; the generic
  DapBackend handshake covers that. A core file is opened with ``attach`` {coreFile, program}.
- Values: structs and pairs get lldb-dap's auto summaries ({x:3, y:4}); containers whose summary is
  only ``size=N`` (std::vector, std::map, Rust Vec, HashMap …) get a preview built from their first
  children: ``{10, 20, 30}``, ``{"alice": 31}``, Rust ``[1, 2, 3]``. Rust gets the toolchain's
  formatters (``lldb_lookup.py`` + ``lldb_commands``) — only for Rust: they break the C++ STL ones —
  and Rust-looking type names (``Vec<i32>``, not ``alloc::vec::Vec<int, alloc::alloc::Global>``).
- Stops: a signal is reason ``exception`` with "signal SIGSEGV: …"; exception info names the signal.
  A pause arrives as "signal SIGSTOP" and is reported as ``pause``. A Rust panic stops on an
  internal ``rust_panic`` breakpoint and is reported as an exception with the panic message; for a
  panic and for SIGABRT the frames of the panic/abort machinery are hidden, so frame 0 is the code
  that panicked or called abort()/assert(). Stops that need a look at the stack to be classified are
  reported after that look (``kit.ordering``); events behind them are held back so their order is kept.
- Watchpoints: lldb-dap resolves ``dataBreakpointInfo`` names by *evaluating them as addresses*, so
  an expression is sent as ``&(expr)``; watchpoint ids live in their own number space (the
  generic backend keeps a separate id map for them).
- Raw commands go through the repl context with lldb-dap's command escape prefix (a backtick).
- Processes: lldb-dap starts lldb-server, which starts the debuggee, each in its own process group;
  on terminate every descendant of the adapter that is still alive is killed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
from pathlib import Path
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    AttachSpec,
    BackendListener,
    BreakpointResult,
    Configure,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    LaunchSpec,
    Scope,
    SourceBreakpoint,
    Variable,
)
from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.kit import cxx, shims
from polydbg.backends.kit.frames import is_runtime_source, leading
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.kit.panics import panic_message
from polydbg.backends.kit.typenames import short_type
from polydbg.backends.locate import find_lldb_dap
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterError, AdapterRequestError, EnvironmentProblem, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

COMMAND_PREFIX = "`"  # lldb-dap's commandEscapePrefix: a repl line starting with it is an lldb command
PREVIEW_ITEMS = 10  # children shown in a container preview
PREVIEW_CHARS = 200
CHILDREN_CAP = 256  # children listed when no count is asked for (lldb's own max-children-count)
PREVIEWS_PER_LIST = 64  # container previews built per listing (each costs a request)
PANIC_MESSAGE_WAIT_S = 0.3
STACK_PEEK = 64  # frames read to find the user frame under a panic / abort

_SIZE = re.compile(r"size=(\d+)")
_HEX = re.compile(r"0x[0-9a-fA-F]+")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}$")
_SIGNAL = re.compile(r"^signal (SIG[A-Z0-9]+)(?::\s*(.*))?$", re.DOTALL)
_FATAL_SIGNAL = re.compile(r"\bSIG(SEGV|ABRT|BUS|FPE|ILL|TRAP|SYS|XCPU|XFSZ)\b")
_CXX_TERMINATE = re.compile(r"terminate called after throwing an instance of '([^'\n]+)'\n\s*what\(\):\s*([^\n]*)")
CONDITION_ERROR_WAIT_S = 0.1  # lldb prints a failed condition's error just after the stop
_CONDITION_FAILED = re.compile(r'stopped due to an error evaluating condition of breakpoint ([\d.]+): "(.*?)"\n')
_ASSERT_FAILED = re.compile(r"(Assertion `.*' failed\.)")
_MAP_TYPE = re.compile(r"(^|::)(multi)?(unordered_)?(multi)?map<|(^|::)(HashMap|BTreeMap)<")
_SET_TYPE = re.compile(r"(^|::)(unordered_)?(multi)?set<|(^|::)(HashSet|BTreeSet)<")
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
_RUST_PATHS = (
    ("alloc::string::", ""), ("alloc::vec::", ""), ("alloc::boxed::", ""), ("alloc::rc::", ""),
    ("alloc::sync::", ""), ("alloc::collections::vec_deque::", ""), ("alloc::collections::btree::map::", ""),
    ("alloc::collections::btree::set::", ""), ("core::option::", ""), ("core::result::", ""),
    ("core::cell::", ""), ("std::collections::hash::map::", ""), ("std::collections::hash::set::", ""),
    (", alloc::alloc::Global", ""), (", std::hash::random::RandomState", ""),
)
# lldb spells Rust's primitive types inside generics the C way (Vec<int>); longest names first.
_C_TO_RUST = re.compile(r"\b(unsigned long long|unsigned long|unsigned int|unsigned short|unsigned char|"
                        r"signed char|long long|long|int|short|float|double|_Bool|__int128|unsigned __int128)\b")
_C_TO_RUST_NAMES = {
    "unsigned long long": "u64", "unsigned long": "u64", "unsigned int": "u32", "unsigned short": "u16",
    "unsigned char": "u8", "signed char": "i8", "long long": "i64", "long": "i64", "int": "i32", "short": "i16",
    "float": "f32", "double": "f64", "_Bool": "bool", "__int128": "i128", "unsigned __int128": "u128",
}
_CXX_FORMATTERS = str(shims.path(__file__, "cxx_formatters.py"))
_CONSOLE_NOISE = (
    "which was unable to be parsed",  # lldb 22 on GCC's unique_ptr tuple; cxx_formatters reads it anyway
    "To get started with the debug console", "For more information visit https://lldb.llvm.org",
    "has no plugin for the language \"rust\"",  # expected: the toolchain's formatters stand in for it
)
_PROCESS_EXITED = re.compile(r"^Process \d+ exited with status = ")  # the report says so already
# Rust's legacy symbol escapes, where lldb leaves them in a name (<Vec<T,A> as Deref>::deref).
_RUST_ESCAPES = (("$LT$", "<"), ("$GT$", ">"), ("$RF$", "&"), ("$BP$", "*"), ("$C$", ","), ("$SP$", "@"),
                 ("$u20$", " "), ("$u27$", "'"), ("$u5b$", "["), ("$u5d$", "]"), ("$u7b$", "{"), ("$u7d$", "}"),
                 ("$u7e$", "~"), ("$u3b$", ";"), ("$u2b$", "+"), ("$u22$", '"'))
# The registers worth showing besides the full-width general-purpose ones (x86-64, AArch64).
_SPECIAL_REGISTERS = frozenset({"rflags", "eflags", "cpsr", "fpsr", "fpcr", "pc", "sp", "lr", "fp"})
# Step into never stops in the standard library (its source is not on this machine).
_RUST_STEP_AVOID = r"^(<|_\$LT\$)?(std|core|alloc)(::|\.\.)"


_rust_etc_cache: dict[str, str | None] = {}


async def rust_lldb_dir(cwd: str | None) -> str | None:
    """The toolchain's ``lib/rustlib/etc`` (lldb_lookup.py, lldb_commands), or None without rustc.
    rustc runs in ``cwd`` (the program's directory), so a rust-toolchain.toml there picks the toolchain."""
    key = cwd or ""
    if key in _rust_etc_cache:
        return _rust_etc_cache[key]
    rustc = shutil.which("rustc") or next(
        (str(p) for p in [Path.home() / ".cargo" / "bin" / "rustc"] if p.exists()), None)
    found = None
    if rustc:
        try:
            proc = await asyncio.create_subprocess_exec(rustc, "--print", "sysroot", stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.DEVNULL,
                                                        stdin=asyncio.subprocess.DEVNULL,
                                                        cwd=cwd if cwd and os.path.isdir(cwd) else None)
            out, _ = await asyncio.wait_for(proc.communicate(), 20)
            etc = Path(out.decode().strip()) / "lib" / "rustlib" / "etc"
            if (etc / "lldb_lookup.py").exists() and (etc / "lldb_commands").exists():
                found = str(etc)
        except (OSError, asyncio.TimeoutError):
            found = None
    _rust_etc_cache[key] = found
    return found


def rust_type(name: str | None) -> str | None:
    """A Rust type name as Rust spells it: ``Vec<i32>`` for ``alloc::vec::Vec<int, alloc::alloc::Global>``."""
    if not name:
        return name
    for old, new in _RUST_PATHS:
        name = name.replace(old, new)
    return _C_TO_RUST.sub(lambda m: _C_TO_RUST_NAMES[m.group(1)], name)


_ENUM_LAYOUT = re.compile(r"(\w+)\{\$variants\$:")
_PAYLOAD = "$variant$:{value:{0:"
_CHARS = re.compile(r"\{((?:'(?:\\.|[^'\\])*'(?:, )?)+)\}")


def _closing(text: str, start: int) -> int:
    """The index of the brace closing the one at ``start`` (or the end of the text)."""
    depth = 0
    for index in range(start, len(text)):
        if text[index] == "{":
            depth += 1
        elif text[index] == "}":
            depth -= 1
            if depth == 0:
                return index
    return len(text) - 1


def rust_value(value: str) -> str:
    """lldb's raw layout of a Rust enum read through a reference (``Some{$variants$:{… $variant$:{value:
    {0:0x55…}}}}``) as Rust prints it (``Some(0x55…)``), and a ``&&str``'s list of chars as a string."""
    while (match := _ENUM_LAYOUT.search(value)) is not None:
        brace = match.start(1) + len(match.group(1))
        end = _closing(value, brace)
        inner = value[match.end():end]
        payload = ""
        if _PAYLOAD in inner:
            start = inner.index(_PAYLOAD) + len(_PAYLOAD)
            payload = "(" + inner[start:_closing(inner, start - 3)] + ")"  # the brace of "{0:"
        value = value[:match.start()] + match.group(1) + payload + value[end + 1:]
    chars = _CHARS.search(value)
    if chars and value[chars.end():].strip() == "":
        text = "".join(c[1:-1] for c in re.findall(r"'(?:\\.|[^'\\])*'", chars.group(1)))
        value = value[:chars.start()] + '"' + text.replace('"', '\\"') + '"'
    return value


def rust_function(name: str) -> str:
    """A Rust frame name without its symbol hash and with legacy escapes decoded."""
    name = _RUST_HASH.sub("", name)
    if "$" not in name and ".." not in name:
        return name
    segments = [seg[1:] if seg.startswith("_$") else seg for seg in name.split("::")]
    name = "::".join(segments).replace("..", "::")
    for old, new in _RUST_ESCAPES:
        name = name.replace(old, new)
    return name


def split_top(text: str) -> list[str]:
    """Split ``a, b, c`` on the commas outside quotes and brackets."""
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    start = 0
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"'":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    parts.append(text[start:].strip())
    return parts


def pair_of(value: str) -> tuple[str, str] | None:
    """Key and value of a map entry shown as ``{first:"a", second:1}`` (C++) or ``("a", 1)`` (Rust)."""
    if len(value) < 2 or (value[0], value[-1]) not in (("{", "}"), ("(", ")")):
        return None
    parts = split_top(value[1:-1])
    if len(parts) != 2:
        return None
    key, val = parts
    if value[0] == "{":
        if not (key.startswith("first:") and val.startswith("second:")):
            return None
        key, val = key[len("first:"):], val[len("second:"):]
    return key, val


class LldbDapBackend(DapBackend):
    name = "lldb-dap"
    adapter_id = "lldb-dap"
    evaluate_context: ClassVar[EvaluateContext] = "watch"  # "repl" runs a word naming an lldb command

    def __init__(self, listener: BackendListener, language: str = "c") -> None:
        super().__init__(listener, language)
        self._ordered = OrderedEvents(listener)
        self._listener = self._ordered
        self._rust_etc: str | None = None
        self._adapter_path: str | None = None
        self._quiet = "?"  # lldb-dap's prefix for commands whose output is shown only on error (lldb ≥ 18)
        self._core: str | None = None
        self._remote = False  # attached to a gdbserver: its initial SIGTRAP stop is not the user's
        self._remote_resumed = False
        self._started = False
        self._pause_requested = False
        self._stop_reported = False  # a focus stop was reported since the last resume
        self._first_stop = True
        self._scope_refs: set[int] = set()  # variable references of scopes at this stop (never capped)
        self._panics: dict[int, str] = {}  # thread id → panic message at this stop
        self._aborts: dict[int, ExceptionDetail] = {}  # thread id → why it aborted (uncaught C++ exception …)
        self._output_tail = ""  # recent program output, where panic messages are found
        self._condition_failure: str | None = None  # lldb's complaint about the condition of the next stop
        self._console_seen = asyncio.Event()
        self._conditional: set[int] = set()  # lldb's ids of breakpoints with a condition
        self._output_seen = asyncio.Event()

    # -- adapter and launch -------------------------------------------------------------------------

    async def _start_adapter(self) -> FramedStream:
        path = self._adapter_path or find_lldb_dap()
        if path is None:
            raise EnvironmentProblem("lldb-dap is not installed (looked for lldb-dap, lldb-dap-NN and lldb-vscode "
                                     "on PATH); install LLVM's lldb (e.g. apt install lldb-19, brew install llvm) "
                                     "or use adapter='gdb'")
        return await self._spawn_stdio_adapter([path])

    def _locate(self) -> None:
        self._adapter_path = find_lldb_dap()
        if self._adapter_path and os.path.basename(self._adapter_path).startswith("lldb-vscode"):
            self._quiet = ""  # lldb-vscode (LLVM ≤ 17) runs "?command" as an unknown command

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        self._locate()
        if self.language == "rust":
            self._rust_etc = await rust_lldb_dir(spec.cwd or (os.path.dirname(spec.program) if spec.program else None))
        if spec.core:
            if not os.path.isfile(spec.core):
                raise UsageError(f"core file {spec.core!r} not found; pass the path of an existing core dump")
            self._core = spec.core
            await self._begin("attach", self._core_arguments(spec), configure, timeout_s)
        else:
            await self._begin("launch", self._launch_arguments(spec), configure, timeout_s)
        self._started = True

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        self._locate()
        if self.language == "rust":
            self._rust_etc = await rust_lldb_dir(os.path.dirname(spec.program) if spec.program else None)
        await self._begin("attach", self._attach_arguments(spec), configure, timeout_s)
        self._started = True

    def _common_arguments(self, panics: bool = True) -> dict[str, Any]:
        init = []
        pre_run = []
        if self.language == "rust" and self._rust_etc:
            etc = self._rust_etc
            init += [f'{self._quiet}command script import "{etc}/lldb_lookup.py"',
                     f'{self._quiet}command source -s 1 "{etc}/lldb_commands"']
        if self.language == "rust":
            init.append(f"{self._quiet}settings set target.process.thread.step-avoid-regexp {_RUST_STEP_AVOID}")
            if panics:
                pre_run.append(f"{self._quiet}breakpoint set --name rust_panic")
        if self.language == "cpp":  # lldb 22 crashes on some GCC unique_ptrs without these (see the script)
            init.append(f'{self._quiet}command script import "{_CXX_FORMATTERS}"')
        init.insert(0, f"{self._quiet}settings set symbols.enable-lldb-index-cache true")
        args: dict[str, Any] = {"commandEscapePrefix": COMMAND_PREFIX, "enableAutoVariableSummaries": True,
                                "enableSyntheticChildDebugging": False, "displayExtendedBacktrace": False}
        if init:
            args["initCommands"] = init
        if pre_run:
            args["preRunCommands"] = pre_run
        return args

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        if not spec.program:
            raise UsageError("pass program: the executable to debug (built with debug info, e.g. gcc -g -O0)")
        args: dict[str, Any] = {"name": "polydbg", "type": "lldb-dap", "request": "launch",
                                "program": spec.program, "args": list(spec.args),
                                "stopOnEntry": spec.stop_on_entry, **self._common_arguments()}
        if spec.cwd:
            args["cwd"] = spec.cwd
        if spec.env:
            args["env"] = dict(spec.env)
        if spec.stdin is not None:
            args["stdio"] = [self._proc.input_file(spec.stdin), None, None]
        return args

    def _core_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        args: dict[str, Any] = {"name": "polydbg", "type": "lldb-dap", "request": "attach",
                                "coreFile": spec.core, **self._common_arguments(panics=False)}
        if spec.program:
            args["program"] = spec.program
        return args

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        args: dict[str, Any] = {"name": "polydbg", "type": "lldb-dap", "request": "attach",
                                **self._common_arguments()}
        if spec.pid is not None:
            args["pid"] = spec.pid
        elif spec.port is not None:  # a gdbserver / lldb-server gdbserver listening on host:port
            self._remote = True
            args["gdb-remote-port"] = spec.port
            args["gdb-remote-hostname"] = spec.host_in_url  # lldb makes it connect://host:port
        else:
            raise UsageError("pass pid (a running process) or port (a gdbserver listening on host:port)")
        if spec.program:
            args["program"] = spec.program
        if spec.path_mappings:
            args["sourceMap"] = [[remote, local] for local, remote in spec.path_mappings]
        return args

    def _tune_capabilities(self) -> None:
        caps = self.capabilities
        caps.registers = True  # every frame has a "Registers" scope
        caps.raw_command = True
        # C++ throw/catch filters only mean something for C++; Objective-C ones never here
        caps.exception_filters = tuple(f for f in caps.exception_filters if f.startswith("cpp_")) \
            if self.language == "cpp" else ()

    # -- events -------------------------------------------------------------------------------------

    def _on_output(self, body: dict[str, Any]) -> None:
        category = str(body.get("category", "console"))
        text = str(body.get("output", "")).replace("\r\n", "\n")
        if category in ("console", "important") and any(noise in text for noise in _CONSOLE_NOISE):
            log.debug("lldb-dap %s: %s", category, text.rstrip())
            return
        if category == "console" and (_PROCESS_EXITED.match(text) or (
                not self._started and "error" not in text.lower() and "warning" not in text.lower())):
            return  # start-up chatter (banner, "Executable binary set to …", "Attached to process …")
        if category == "important":
            self._console_seen.set()
        failed = _CONDITION_FAILED.search(text)
        if failed:  # lldb stops at a breakpoint whose condition it cannot evaluate: the stop must say so
            self._condition_failure = (f"the condition {failed.group(2)!r} of this breakpoint could not be "
                                       "evaluated, so lldb stopped here (its error is in the output); fix it: "
                                       "debug_clear this breakpoint, then debug_break with a valid condition")
        if category in ("stdout", "stderr"):  # lldb gives the debuggee a pty: stderr arrives as stdout
            self._output_tail = (self._output_tail + text)[-8192:]
            self._output_seen.set()
        super()._on_output({**body, "output": text})

    def _wire_events(self, client: DapClient) -> None:
        super()._wire_events(client)
        client.on_event("continued", lambda _b: setattr(self, "_remote_resumed", True))

    def _on_stopped(self, body: dict[str, Any]) -> None:
        self._ordered.deliver(lambda: self._take_stop(body))

    def _take_stop(self, body: dict[str, Any]) -> None:
        if self._remote and not self._remote_resumed and body.get("reason") == "exception" \
                and "SIGTRAP" in str(body.get("description") or ""):
            return  # gdbserver's stop at the connection (lldb-dap resumes from it after configurationDone)
        if body.get("preserveFocusHint") and not body.get("allThreadsStopped", True) and self._stop_reported:
            return  # another thread's reason at a stop already reported for the focus thread
        self._forget_stop()
        if self._needs_stack(body):
            self._ordered.refine(self._classify(body))
            return
        if body.get("reason") == "breakpoint" and any(
                i in self._conditional for i in body.get("hitBreakpointIds") or ()):
            self._ordered.refine(self._conditional_stop(body))
            return
        self._report_stop(self._rewrite(body))

    async def _conditional_stop(self, body: dict[str, Any]) -> None:
        """A stop at a conditional breakpoint: lldb also stops when the condition fails to evaluate, and
        says so only in console output sent just after the stop — wait a moment for it."""
        self._console_seen.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._console_seen.wait(), CONDITION_ERROR_WAIT_S)
        self._report_stop(self._rewrite(body))

    def _report_stop(self, body: dict[str, Any]) -> None:
        """Straight to the session: only called when nothing is queued, or by the refinement itself."""
        self._stop_reported = True
        self._first_stop = False
        self._ordered.target.on_stopped(self._stop_event(body))

    def _needs_stack(self, body: dict[str, Any]) -> bool:
        reason = body.get("reason")
        if "SIGABRT" in str(body.get("description") or "") and (
                reason == "exception" or (self._core is not None and self._first_stop)):
            return True
        if reason == "exception" and "C++ Throw" in str(body.get("description") or ""):
            return True
        if reason == "breakpoint" and self.language == "rust" and self._core is None:
            hits = [i for i in body.get("hitBreakpointIds") or () if isinstance(i, int)]
            return all(self._bp_ids.id_of(i) is None for i in hits)  # not ours: maybe the rust_panic one
        return False

    def _rewrite(self, body: dict[str, Any]) -> dict[str, Any]:
        """Stop reasons as polydbg reports them (no stack needed)."""
        reason = str(body.get("reason", ""))
        description = str(body.get("description") or "")
        body = dict(body)
        if self._pause_requested and (reason in ("pause", "step", "entry") or (
                reason == "exception" and "SIGSTOP" in description)):  # lldb stops the threads with SIGSTOP
            body.update(reason="pause", description="paused", text=None)
        elif reason == "entry" and self._core is None:
            body.update(description=None, text=None)  # lldb says "signal SIGSTOP": how it holds a new process
        elif self._core is not None and self._first_stop:
            name = os.path.basename(self._core)
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
            body = await self._classified(body)
        except (AdapterError, LookupError, ValueError, TypeError):
            body = self._rewrite(body)
        self._report_stop(body)

    async def _classified(self, body: dict[str, Any]) -> dict[str, Any]:
        thread = body.get("threadId")
        if not isinstance(thread, int):
            return self._rewrite(body)
        frames = await self._raw_frames(thread, 0, STACK_PEEK)
        if "SIGABRT" in str(body.get("description") or ""):  # hide abort()/assert()/std::terminate machinery
            hidden = leading(frames, _library_frame)
            body = self._rewrite(body)
            terminate = list(_CXX_TERMINATE.finditer(self._output_tail))
            failed = list(_ASSERT_FAILED.finditer(self._output_tail))
            if terminate:  # std::terminate printed the uncaught exception
                self._aborts[thread] = ExceptionDetail(type=terminate[-1].group(1), message=terminate[-1].group(2))
            elif failed:
                self._aborts[thread] = ExceptionDetail(type="SIGABRT", message=failed[-1].group(1))
            self._output_tail = ""
            if hidden:
                self._frames.hide(thread, hidden)
                body["description"] = (f"{body.get('description') or 'signal SIGABRT'} from "
                                       f"{frames[hidden - 1].name} ({hidden} library frames above "
                                       f"{frames[hidden].name} hidden)")
            return body
        if "C++ Throw" in str(body.get("description") or ""):  # stopped in __cxa_throw: report the thrower
            hidden = leading(frames, _library_frame)
            if hidden and hidden < len(frames):
                self._frames.hide(thread, hidden)
            thrown = await self._thrown(thread)
            if thrown is not None:
                self._aborts[thread] = thrown
            return {**self._rewrite(body), "description": "C++ exception thrown", "text": None}
        if not frames or "rust_panic" not in frames[0].name:
            return self._rewrite(body)
        self._frames.hide(thread, leading(frames, _library_frame))  # std/core frames above the panicking code
        message = await self._panic_message()
        self._panics[thread] = message
        self._pause_requested = False
        return {**body, "reason": "exception", "description": message, "text": None, "hitBreakpointIds": []}

    async def _thrown(self, thread: int) -> ExceptionDetail | None:
        """The exception in __cxa_throw's argument registers (see kit.cxx), read as memory only:
        an lldb expression here can hang lldb-dap for good."""
        with contextlib.suppress(AdapterError, LookupError, ValueError, TypeError):
            top = (await self._request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1}))["stackFrames"]
            scopes = (await self._request("scopes", {"frameId": top[0]["id"]}))["scopes"]
            registers = next(s for s in scopes if str(s.get("name", "")).lower().startswith("register"))
            values: dict[str, int] = {}
            for group in (await self._request("variables", {"variablesReference": registers["variablesReference"]}))[
                    "variables"][:1]:  # the general purpose registers come first
                for register in (await self._request("variables", {
                        "variablesReference": group["variablesReference"]}))["variables"]:
                    if register.get("name") in cxx.ARGUMENT_REGISTERS:
                        values[register["name"]] = int(str(register["value"]).split()[0], 0)
            first, second = (values[r] for r in cxx.ARGUMENT_REGISTERS)
            type_ = cxx.demangle_type(await self._c_string_at(second + 8))
            message = await self._c_string_at(first + 8) if type_ in cxx.STRING_MESSAGE_TYPES else ""
            return ExceptionDetail(type=type_, message=message)
        return None

    async def _c_string_at(self, pointer_address: int, limit: int = 512) -> str:
        """The NUL-terminated string a pointer stored at ``pointer_address`` points to."""
        pointer = int.from_bytes((await self.read_memory(pointer_address, 8)).data, "little")
        data = (await self.read_memory(pointer, limit)).data
        return data.split(b"\0", 1)[0].decode("utf-8", "replace")

    async def _panic_message(self) -> str:
        """The message the panic hook printed just before ``rust_panic`` (it is already in the output)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + PANIC_MESSAGE_WAIT_S
        while True:
            message = panic_message(self._output_tail)
            if message is not None:
                self._output_tail = ""
                return message
            remaining = deadline - loop.time()
            if remaining <= 0:
                return "Rust panic"
            self._output_seen.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._output_seen.wait(), remaining)

    # -- execution ----------------------------------------------------------------------------------

    def _forget_stop(self) -> None:
        self._frames.clear()
        self._panics.clear()
        self._aborts.clear()

    def _moving(self) -> None:
        super()._moving()
        self._stop_reported = False
        self._scope_refs.clear()
        self._forget_stop()

    async def pause(self, thread_id: int | None) -> None:
        self._pause_requested = True
        await super().pause(thread_id)

    # -- breakpoints --------------------------------------------------------------------------------

    async def set_exception_filters(self, filters: list[str]) -> None:
        await super().set_exception_filters([f for f in filters if f in self.capabilities.exception_filters])

    def _data_name(self, expression: str) -> str:
        return f"&({expression})"  # lldb-dap evaluates the name as the address to watch

    # -- inspection ---------------------------------------------------------------------------------

    async def _raw_frames(self, thread_id: int, start: int, levels: int) -> list[Frame]:
        """The stack as lldb-dap lists it, nothing hidden (to decide what to hide)."""
        body = await self._request("stackTrace", {"threadId": thread_id, "startFrame": start, "levels": levels})
        return [frame for f in body.get("stackFrames", []) if (frame := self._frame(f)) is not None]

    def _frame(self, raw: dict[str, Any]) -> Frame | None:
        source = raw.get("source") or {}
        path = source.get("path") or source.get("name")
        line = raw.get("line") or None
        if source.get("sourceReference") and path and "`" in path:  # lldb-dap's disassembly pseudo-source
            path, line = None, None
        name = str(raw.get("name", "?"))
        if self.language == "rust":
            name = rust_function(name)
        elif self.language == "cpp":
            name = short_type(name)  # a signature spelled with every default template argument is KBs long
        return Frame(name=name, file=path, line=line, column=raw.get("column"),
                     pc=_address(raw.get("instructionPointerReference")))

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        results = await super().set_breakpoints(file, breakpoints)
        for bp in breakpoints:
            native = self._bp_ids.native_of(bp.id)
            if native is not None:
                (self._conditional.add if bp.condition else self._conditional.discard)(native)
        return results

    async def _hidden_frames(self, thread_id: int) -> int:
        return self._frames.hidden(thread_id) or 0

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        found = await super().scopes(frame)
        self._scope_refs.update(scope.ref for scope in found)
        return found

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        """Children, shaped; of a value at most ``CHILDREN_CAP`` when no count is given (lldb-dap would list
        all of a million-element vector): the session pages past them through ``child_slice``."""
        if count is None and ref not in self._scope_refs:
            start, count = start or 0, CHILDREN_CAP
        children = await super().variables(ref, start, count)
        out = []
        for index, child in enumerate(children):
            out.append(await self._shaped(child) if index < PREVIEWS_PER_LIST else self._renamed(child))
        return out

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        return await self._shaped(await super().evaluate(expression, frame, context))

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await self._shaped(await super().set_variable(ref, name, value))

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        if not parent.ref:
            return None
        return await self.variables(parent.ref, start, count)

    def _renamed(self, var: Variable) -> Variable:
        """The cheap part of shaping: Rust type names, and a pointer's memory reference (lldb-dap gives
        the pointer's own address; DAP means the address it points at)."""
        if (var.type or "").rstrip().endswith("*"):
            pointee = _HEX.match(var.value)
            if pointee:
                var = var._replace(memory_reference=pointee.group(0))
        if self.language != "rust":
            return var
        return var._replace(type=rust_type(var.type), value=rust_value(var.value) if "$variants$" in var.value
                            or "{'" in var.value else var.value)

    async def _shaped(self, var: Variable, depth: int = 1) -> Variable:
        """A value as the language would print it: container previews, Rust type names."""
        renamed = self._renamed(var)
        if var.ref and _SIZE.fullmatch(var.value):
            with contextlib.suppress(AdapterError):
                return renamed._replace(value=await self._preview(var, depth))
        return renamed

    async def _preview(self, var: Variable, depth: int) -> str:
        match = _SIZE.fullmatch(var.value)
        assert match is not None
        size = int(match.group(1))
        rust = self.language == "rust"
        kind = var.type or ""
        is_map = bool(_MAP_TYPE.search(kind))
        is_set = bool(_SET_TYPE.search(kind))
        children = await super().variables(var.ref, 0, min(size, PREVIEW_ITEMS)) if size else []
        items: list[str] = []
        length = 0
        for child in children:
            value = child.value
            if depth > 0 and child.ref and _SIZE.fullmatch(value):
                value = (await self._shaped(child, depth - 1)).value
            if is_map:
                pair = pair_of(value)
                if (pair is None or _SIZE.fullmatch(pair[1])) and child.ref:  # ask for key and value
                    parts = await super().variables(child.ref, 0, 2)
                    if len(parts) == 2:
                        shown = (await self._shaped(parts[1], depth - 1)).value if depth > 0 else parts[1].value
                        pair = (parts[0].value, shown)
                value = f"{pair[0]}: {pair[1]}" if pair else value
            items.append(value)
            length += len(value) + 2
            if length > PREVIEW_CHARS:
                break
        more = len(items) < size
        body = ", ".join(items) + (", …" if more and items else "…" if more else "")
        opener, closer = ("{", "}") if (is_map or is_set or not rust) else ("[", "]")
        text = f"{opener}{body}{closer}"
        if more:
            text += f" ({'len' if rust else 'size'}={size})"
        return text

    async def registers(self, frame: FrameRef) -> list[Variable]:
        """The general-purpose registers (lldb-dap groups them: general, floating point, vector)."""
        for scope in await self.scopes(frame):
            if "register" not in scope.name.lower() and (scope.hint or "").lower() != "registers":
                continue
            groups = await super().variables(scope.ref)
            if not groups or not all(g.ref for g in groups):
                return groups
            general = next((g for g in groups if "general" in g.name.lower()), groups[0])
            found = await super().variables(general.ref)
            # the full-width registers, without their sub-registers (eax, ax, al; w0 …)
            width = found[0].type if found else None
            return [r for r in found if r.type == width or r.name in _SPECIAL_REGISTERS]
        return []

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if thread_id in self._aborts:
            return self._aborts[thread_id]
        if thread_id in self._panics:
            message = self._panics[thread_id]
            return ExceptionDetail(type="panic", message=message.removeprefix("panicked at ")
                                   if message.startswith("panicked at ") else message)
        try:
            detail = await super().exception_info(thread_id)
        except AdapterError:
            return None
        if detail is None:
            return None
        match = _SIGNAL.match(detail.message.strip())
        if match:
            name = match.group(1)
            return ExceptionDetail(type=name, message=(match.group(2) or _SIGNAL_TEXT.get(name, "")).strip())
        return detail

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """An lldb command (``frame variable``, ``register read``, ``memory read`` …) and its output; a
        command lldb rejects is an error, as gdb's are (lldb-dap answers it as a normal result)."""
        output = await super().command(text if text.startswith(COMMAND_PREFIX) else COMMAND_PREFIX + text, frame)
        if output.lstrip().startswith("error:"):
            raise AdapterRequestError("evaluate", output.strip().removeprefix("error:").strip())
        return output

    # -- ending -------------------------------------------------------------------------------------

    async def _end(self, terminate_debuggee: bool) -> None:
        helpers = procs.descendants(self._proc.pid) if self._proc.pid is not None else []
        await super()._end(terminate_debuggee)
        for helper in helpers:  # lldb-server, and on terminate the debuggee
            if (terminate_debuggee or helper.name.startswith("lldb-server")) and procs.read_stat(helper.pid) == helper:
                with contextlib.suppress(OSError):
                    os.kill(helper.pid, signal.SIGKILL)


def _library_frame(frame: Frame) -> bool:
    """A frame of libc, the C++ runtime or Rust's std, not of the program: no source, a source path
    relative to some build directory (Debian's libc), or Rust's ``/rustc/<commit>/library``."""
    file = frame.file
    return frame.name in _ABORT_FRAMES or not file or not os.path.isabs(file) or is_runtime_source(file)


def _address(value: object) -> int | None:
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):
            return int(value, 0)
    return None
