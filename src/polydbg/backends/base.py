"""The Backend contract: what the session layer asks of a debugger, whatever protocol it speaks.

DAP adapters (debugpy, lldb-dap, delve), GDB/MI, the V8 inspector and JDWP each get one
implementation. The vocabulary is DAP's (frames, scopes, variable references, stop reasons) because
DAP is the richest common model; a non-DAP backend translates into it. Three rules keep the seam
protocol-neutral:

- **Breakpoint ids are polydbg's.** Every breakpoint spec carries the session's id; results come
  back in the order of the specs, and stop/change events name breakpoints by that id. A backend maps
  them to its debugger's numbers (``kit.IdMap``), so watchpoints, deferred and re-bound breakpoints
  need no id arithmetic above the seam.
- **Frames are addressed by (thread, index)** (``FrameRef``), index 0 being the innermost frame the
  backend shows (after hiding runtime machinery). The backend resolves a FrameRef to its protocol's
  frame handle and re-resolves it when the handles are invalidated (JDWP invalidates frame ids after
  every method invocation).
- **Value references are ints valid for one stop**; a backend whose protocol uses other handles
  (CDP object ids, JDWP object ids) keeps a ``kit.HandleTable``.

Value types are NamedTuples: a dozen frozen dataclasses cost ~12 ms of import time, NamedTuples ~1 ms.
Events flow back through a ``BackendListener`` the session supplies. ``Backend`` is a Protocol whose
optional hooks have defaults: a backend subclasses it to inherit them, and mypy checks it against it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Literal, NamedTuple, Protocol

from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.backends.timecontrol import (
    DEFAULT_RECORD_LIMIT,
    RecordAction,
    RecordMode,
    Reloaded,
    RestartNeeded,
    ReverseKind,
    no_reverse,
)
from polydbg.errors import UsageError
from polydbg.namespaces import Namespaces

StepKind = Literal["over", "into", "out"]
EvaluateContext = Literal["watch", "repl", "hover", "clipboard"]
Access = Literal["write", "read", "readWrite"]
BreakOn = Literal["uncaught", "raised", "none"]


class LaunchSpec(NamedTuple):
    """Everything needed to start (or restart) a debuggee; kept by the session for restart."""

    program: str | None = None  # a script, a native executable, a Go package dir or .go file
    module: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    stop_on_entry: bool = False
    core: str | None = None  # a core dump to open post-mortem with ``program``
    breakpoint_files: tuple[str, ...] = ()  # files with breakpoints at the start (debugpy: library code?)
    stdin: str | None = None  # what the program reads on its standard input (then end of input)
    runtime: str | None = None  # the interpreter or runtime executable (python, node), when not the one found
    runtime_args: tuple[str, ...] = ()  # flags for the runtime itself (node --max-old-space-size=…)
    test: bool = False  # runs one test (debug_launch(test=…)): built as a test, stopped where the runner fails it
    recorded: bool = False  # calls are recorded from the first line (debug_launch(trace=…)): a backend may prepare
    record: RecordMode | None = None  # record from the first stop on, for running backwards (``timecontrol``)
    record_limit: int = DEFAULT_RECORD_LIMIT  # the instructions a recording keeps (the record_limit setting)


class AttachSpec(NamedTuple):
    pid: int | None = None
    host: str | None = None
    port: int | None = None  # a listening debug server (debugpy --listen, dlv --headless, gdbserver)
    path_mappings: tuple[tuple[str, str], ...] = ()  # (local, remote)
    program: str | None = None  # the executable, for targets that need its symbols (gdbserver)
    breakpoint_files: tuple[str, ...] = ()
    namespaces: Namespaces | None = None  # a pid in a container: its files and loopback ports (``namespaces``)

    @property
    def address(self) -> str:
        """The debug server's host as a socket takes it: 127.0.0.1 if none, an IPv6 address without brackets
        (``::1`` and ``[::1]`` are both accepted)."""
        host = self.host or "127.0.0.1"
        return host[1:-1] if host.startswith("[") and host.endswith("]") else host

    @property
    def host_in_url(self) -> str:
        """The host for a ``host:port`` string: an IPv6 address in brackets (``[::1]:2345``)."""
        return f"[{self.address}]" if ":" in self.address else self.address


class SourceBreakpoint(NamedTuple):
    id: int  # polydbg's breakpoint id
    line: int
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None


class FunctionBreakpoint(NamedTuple):
    id: int
    name: str
    condition: str | None = None
    hit_condition: str | None = None


class DataBreakpoint(NamedTuple):
    """A watchpoint on ``expression``; ``data_id`` is the debugger's handle for it, once resolved."""

    id: int
    expression: str
    access: Access = "write"
    data_id: str | None = None


class BreakpointResult(NamedTuple):
    """What the debugger made of one breakpoint spec (results come in the order of the specs)."""

    verified: bool
    line: int | None = None
    message: str | None = None
    data_id: str | None = None  # a watchpoint's resolved handle, to re-send it without re-resolving


class Thread(NamedTuple):
    id: int
    name: str


@dataclass(frozen=True, slots=True)
class FrameRef:
    """A frame as the session addresses it: the thread and the index from the innermost shown frame."""

    thread_id: int
    index: int


class Frame(NamedTuple):
    name: str
    file: str | None
    line: int | None
    column: int | None = None
    pc: int | None = None  # instruction pointer, where the debugger reports it


class Lock(NamedTuple):
    """A lock as its runtime knows it, in the terms the agent reads."""

    id: str  # its identity for this stop: a mutex's address, a JVM object id, a Python object id
    name: str  # how it reads: "mutex B at 0x55…a0", "java.lang.Object@34", "threading.Lock at 0x7f…"
    owner: int | None = None  # the thread holding it (an id threads() gives); None: free, or not recorded
    kind: str = ""  # "pthread mutex", "monitor", "ReentrantLock", "RLock", "sync.Mutex", …


class ThreadLocks(NamedTuple):
    """What one thread holds and waits for, as far as the runtime tells."""

    holds: tuple[Lock, ...] = ()
    waits_for: Lock | None = None  # the lock it is blocked acquiring
    state: str | None = None  # why it is not running: "blocked on a monitor", "in Object.wait()", "chan receive"


class Scope(NamedTuple):
    name: str
    ref: int
    expensive: bool = False
    hint: str | None = None  # DAP presentationHint: locals / arguments / registers …


class Variable(NamedTuple):
    name: str
    value: str
    type: str | None = None
    ref: int = 0
    evaluate_name: str | None = None
    indexed_count: int | None = None
    named_count: int | None = None
    memory_reference: str | None = None


class ExceptionDetail(NamedTuple):
    type: str
    message: str
    details: tuple[str, ...] = ()  # more of the report, a line each: a sanitizer's allocation and free stacks


class Task(NamedTuple):
    """A coroutine the runtime schedules apart from the threads (an asyncio task): pending, what it awaits."""

    name: str
    awaiting: str  # what it waits for ("Event.wait at locks.py:213", "Task-3", "sleep")
    frames: tuple[Frame, ...] = ()  # its coroutine chain, outermost first


class Instruction(NamedTuple):
    address: int
    text: str
    symbol: str | None = None
    file: str | None = None
    line: int | None = None


class MemoryBlock(NamedTuple):
    address: int
    data: bytes
    unreadable: int = 0  # bytes after ``data`` that could not be read


class StopEvent(NamedTuple):
    reason: str
    thread_id: int | None
    description: str | None = None
    text: str | None = None
    hit_breakpoint_ids: tuple[int, ...] = ()  # polydbg's breakpoint ids
    thread_name: str | None = None  # where the thread is not the program's own (a worker, a child process)
    held: bool = False  # made earlier, shown only now: another process's stop was shown meanwhile (kit.gate)


@dataclass
class Capabilities:
    """What the backend supports, read from the adapter's ``initialize`` answer (or declared); the session
    refuses what a backend lacks before asking it, saying what to do instead."""

    conditional_breakpoints: bool = False
    hit_conditional_breakpoints: bool = False
    log_points: bool = False  # logpoints and debug_trace
    function_breakpoints: bool = False
    set_variable: bool = False
    exception_info: bool = False  # the exception's type and message at an exception stop
    exception_filters: tuple[str, ...] = ()
    exception_types: bool = False  # exception type names beside the filters (a class and its subclasses)
    # native-code operations (debug_memory, debug_disassemble, debug_registers, debug_watch, debug_command)
    memory: bool = False
    disassemble: bool = False
    registers: bool = False
    data_breakpoints: bool = False
    raw_command: bool = False
    # a crash (a fatal signal, an unrecovered panic) stops the program whatever the exception filters, so a
    # program with no breakpoint can still stop
    stops_on_faults: bool = False


NativeCapability = Literal["memory", "disassemble", "registers", "data_breakpoints", "raw_command"]


def parse_address(value: object) -> int | None:
    """An address from a DAP memory/instruction reference ("0x7ff…" or decimal), or None."""
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value, 0)
        except ValueError:
            return None
    return None


# The output category of a logpoint's line, whatever the debugger calls it (debugpy and delve send it as the
# program's stdout, lldb-dap as its console, V8 has no logpoints): the session keeps it as a stream of its own.
LOGPOINT = "logpoint"
# In a logpoint message, replaced by the thread that hit it, by a backend that writes the line (trace_thread).
TRACE_THREAD = "\x1a"


def logpoint_line(message: str) -> str:
    """A logpoint's message as a backend reports it: one line (its own line breaks escaped: a value's, an error's
    notes), so a trace's hit is one row whatever its values hold."""
    return message.rstrip("\r\n").replace("\r", "\\r").replace("\n", "\\n") + "\n"


class BackendListener(Protocol):
    """Events a backend reports to its session. Called on the event loop, must not block. ``on_output``'s
    category is ``stdout`` or ``stderr`` (the program's own), ``LOGPOINT``, or anything else (the debugger's notes)."""

    def on_stopped(self, event: StopEvent) -> None: ...

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None: ...

    def on_output(self, category: str, text: str) -> None: ...

    def on_exited(self, exit_code: int | None) -> None: ...

    def on_terminated(self, cause: str | None) -> None: ...

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None: ...


Configure = Callable[[], Awaitable[None]]


class InjectingEnv(NamedTuple):
    """Environment variables that make a runtime (or the build a debugger runs) load code from elsewhere."""

    names: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()  # every variable that starts with one …
    harmless: frozenset[str] = frozenset()  # … except these


class CommandEscape(NamedTuple):
    """How an expression reaches a raw debugger command (refused unless the policy allows raw commands)."""

    pattern: str  # a regex searched in the expression
    why: str  # what a match does, for the refusal ("calls gdb's $_shell, which runs a shell command")
    short: str  # how the policy's help names it ("gdb's $_shell")


NO_INJECTING_ENV = InjectingEnv()


def no_data_breakpoints(debugger: str) -> str:
    """``debug_watch``'s refusal by a debugger that cannot stop where a value is written, with what does instead."""
    return (f"{debugger} has no data breakpoints (it cannot stop where a value is written); to see where it changes, "
            "debug_trace records it at the lines that may write it (points=[{file, line}, …], expressions=[the "
            "value]) without stopping, or debug_break with a condition on it stops where it first holds a value")


@dataclass(frozen=True)
class BackendInfo:
    """What polydbg knows about a backend before importing it: languages, how to find its debugger,
    how to install it, its exception filters — and what the layers above need to know about the
    languages it debugs, so that ``session/`` and ``policy`` name none. ``registry`` and ``doctor``
    read only this; each backend package declares its own in ``info.py``."""

    name: str
    target: str  # "module:Class", imported when a session needs it
    languages: tuple[str, ...]
    find: Callable[[], str | None]  # the debugger's path on this machine, or None
    install: str  # how to install it (Debian/Ubuntu first)
    version_args: tuple[str, ...] = ("--version",)
    # debug_launch's break_on_exception → this debugger's exception filters
    break_on_exception: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # "module:function(condition, log_message)" raising UsageError for an expression the debugger would not
    # evaluate as written (checked when a breakpoint is set, never at the hit); imported when first used
    expression_check: str | None = None
    command_escape: CommandEscape | None = None
    # the debug_launch argument naming the runtime executable the program runs on (``python``, ``node``)
    runtime_argument: str | None = None
    runtime_flags: str | None = None  # a regex of runtime flags that run no other code (allowed without allow_build)
    # runtime flags whose value is a path list (inside the roots) → what each path is, for a refusal's words
    runtime_path_flags: Mapping[str, str] = field(default_factory=dict)
    # "module:function(cwd, runtime) -> directories" where a project keeps its commands (a virtualenv's bin,
    # node_modules/.bin), searched before PATH for a program named without a directory; imported when first used
    command_dirs: str | None = None
    injecting_env: InjectingEnv = NO_INJECTING_ENV
    process_names: tuple[str, ...] = ()  # a running process's executable names (``python3.11`` → ``python``)
    attach_hint: str | None = None  # how to start a program under a debug server debug_attach can reach
    module_runner: str | None = None  # how debug_launch's ``module`` runs (``python -m``), where the backend has one
    # debug_memory, debug_disassemble, … refused: what the answer offers instead (``refusals``: for one of them)
    native_refusal: str = "this debugger does not offer it"
    refusals: Mapping[NativeCapability, str] = field(default_factory=dict)
    # debug_command's first words that only read (a JVM query: ``threads``, ``classes``): allowed without allow_command
    read_only_commands: tuple[str, ...] = ()
    # debug_watch refused by the debugger: what the answer suggests (None: the debugger's message says it)
    watch_hint: str | None = "watch an lvalue such as a global, a local in the current frame, or *(int*)0x…"
    records: tuple[RecordMode, ...] = ()  # the recordings it runs backwards through (``timecontrol``)


class Backend(Protocol):
    """One debugger connection for one debuggee.

    Methods with a body are optional hooks with their defaults; a backend that subclasses this
    Protocol inherits them. The native operations are only called when the matching capability is
    set.
    """

    name: str
    language: str
    capabilities: Capabilities
    # the evaluate context debug_evaluate uses ("repl" where it accepts statements)
    evaluate_context: ClassVar[EvaluateContext] = "watch"
    # why a pause may stop no thread, for the answer when one did not
    pause_limits: ClassVar[str] = "the debugger has not stopped any thread yet"
    # each thread stops and runs on its own (Node's workers and processes): debug_pause(thread_id) at a stop pauses
    # that thread and shows its stop (the backend's gate keeps the one shown before), not only makes it current
    threads_stop_apart: ClassVar[bool] = False
    # what to do when the debugger does not answer while the program runs ({pid}: the program's)
    busy_hint: ClassVar[str] = "it may be busy in code it cannot interrupt. Try again later, or debug_terminate"

    @property
    def program_pid(self) -> int | None:
        """The debugged program's process id on this machine, once known (None: not known, or remote)."""
        return None

    # -- lifecycle ------------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        """Start the debugger and the debuggee; call ``configure`` when breakpoints may be sent."""
        ...

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None: ...

    async def terminate(self) -> None:
        """End the debuggee and the debugger; idempotent, never raises, never leaves a process behind."""
        ...

    async def detach(self) -> None:
        """Leave the debuggee running and close the debugger; never raises."""
        ...

    # -- breakpoints ----------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        """Replace the file's breakpoints; one result per spec, in order."""
        ...

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]: ...

    async def set_exception_filters(self, filters: list[str]) -> None: ...

    # -- execution ------------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None: ...

    async def step(self, thread_id: int, kind: StepKind) -> None: ...

    async def pause(self, thread_id: int | None) -> None: ...

    # -- inspection (valid while stopped) ---------------------------------------------------------------

    async def threads(self) -> list[Thread]: ...

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        """Frames ``start..start+levels`` of the shown stack and the total when known."""
        ...

    async def scopes(self, frame: FrameRef) -> list[Scope]: ...

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]: ...

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable: ...

    async def set_variable(self, ref: int, name: str, value: str) -> Variable: ...

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None: ...

    # -- optional hooks ---------------------------------------------------------------------------------

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        """Children ``start..start+count`` of a value when ``variables`` cannot page; None if unsupported."""
        return None

    async def frames_above(self, thread_id: int) -> list[Frame]:
        """Library frames hidden above frame 0 that a stack listing still shows, innermost first (a watched
        variable written inside memcpy: the stop is the user's call, memcpy is listed above it); not
        addressable by index."""
        return []

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        """What each of ``thread_ids`` holds and waits for, where the runtime can tell (the program is
        stopped); threads it knows nothing of are left out. Read only: never runs the program's code where
        the debugger can avoid it."""
        return {}

    async def async_callers(self, thread_id: int) -> list[tuple[str, list[Frame]]]:
        """The callers past an ``await`` (or a callback's scheduling) of ``thread_id``'s stack, outward:
        (what joins them — "await", "Promise.then" —, their frames). Listed, not addressable by index."""
        return []

    async def tasks(self) -> list[Task]:
        """The program's pending tasks (asyncio's), where the runtime has them; listed with all threads."""
        return []

    def threads_left_out(self) -> str | None:
        """What the last ``threads`` answer left out, when the debugger lists only some (None: it listed all)."""
        return None

    def length_of(self, parent: Variable, children: list[Variable]) -> int | None:
        """How many children ``parent`` has, when the backend knows better than ``indexed_count``."""
        return None

    def frameless(self, thread: Thread) -> str | None:
        """Why ``thread`` lists no frames, and how to see them (None: nothing to say)."""
        return None

    def is_noise(self, variable: Variable) -> bool:
        """A variable a locals listing should leave out (synthetic, compiler-made, module clutter)."""
        return False

    def returned_by(self, variable: Variable) -> str | None:
        """How ``variable`` reads as what a call just stepped out of (or over) returned, where the backend lists
        that among the caller's locals (debugpy's ``(return) add`` → ``add() returned``; ``parse() raised``, see
        ``kit.returns``); None for a variable of the program's."""
        return None

    def trace_interpolation(self, expression: str) -> str:
        """How a logpoint message interpolates ``expression`` (``{expr}`` in DAP)."""
        return "{" + expression + "}"

    def trace_thread(self) -> str | None:
        """What in a logpoint message becomes the thread that hit it, named as the stacks name threads: an
        interpolation (``{expr}``), or ``TRACE_THREAD`` where the backend writes the line and knows the thread;
        None where the debugger cannot say (a trace's rows then name no thread)."""
        return None

    # -- recording while the program runs (backends/recording.py) ----------------------------------------

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        """Record every call of ``spec.functions`` (and their callees to ``spec.depth``) without stopping."""
        raise UsageError(f"{self.name} cannot record calls yet; trace lines with debug_trace(points=…) instead")

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Record every exception the user's code raises, caught or not, without stopping."""
        raise UsageError(f"{self.name} cannot record raised exceptions yet; stop on them with "
                         "debug_break(exception=\"raised\") instead")

    # -- time control (backends/timecontrol.py) -------------------------------------------------------------

    async def record(self, action: RecordAction, limit: int) -> str:
        """Start recording at the current stop (at most ``limit`` instructions), or stop; a note for the answer."""
        raise self._cannot_reverse()

    async def reverse(self, thread_id: int, kind: ReverseKind) -> None:
        """Step or continue backwards through the recording; the stop comes as an event."""
        raise self._cannot_reverse()

    async def checkpoint(self) -> int:
        raise self._cannot_reverse()

    async def restore(self, number: int) -> None:
        raise self._cannot_reverse()

    def _cannot_reverse(self) -> UsageError:
        return no_reverse(self.name, "only gdb records (C, C++, Rust: debug_launch(…, adapter=\"gdb\", record=true)); "
                                     "debug_trace records values over a whole run, and debug_restart goes back to "
                                     "the start")

    async def reload(self, thread_id: int | None) -> Reloaded:
        """Put the edited source files into the running program, all or none (``timecontrol``)."""
        raise RestartNeeded(f"{self.name} cannot change a running program's code")

    # -- native operations (defaults for a backend whose capabilities offer none) ---------------------------

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        raise _lacks("memory", self)

    async def write_memory(self, address: int, data: bytes) -> int:
        """Write ``data`` at ``address``; returns the number of bytes written."""
        raise _lacks("memory", self)

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        """``count`` instructions starting ``offset`` instructions from ``address`` (offset may be < 0)."""
        raise _lacks("disassemble", self)

    async def registers(self, frame: FrameRef) -> list[Variable]:
        raise _lacks("registers", self)

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        """Replace all watchpoints; resolves each expression (in ``frame``) where needed."""
        raise _lacks("data_breakpoints", self)

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """Run a raw debugger command (lldb, gdb, dlv …) and return its output."""
        raise _lacks("raw_command", self)


def _lacks(capability: NativeCapability, backend: Backend) -> NotImplementedError:
    """What a native operation a backend does not offer raises (the session asks only when the capability is
    set, so reaching this is a bug). A call, not a bare raise: such a default would make the method abstract to
    the type checker, and every backend without native code would have to restate it."""
    return NotImplementedError(f"{backend.name} has no {capability} capability")


BackendFactory = Callable[[BackendListener], Backend]
