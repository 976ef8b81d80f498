"""The Backend protocol: what the session layer asks of a debugger, whatever protocol it speaks.

DAP adapters (debugpy, lldb-dap, delve), GDB/MI and the V8 inspector each get one implementation.
The vocabulary is DAP's (frames, scopes, variable references, stop reasons) because DAP is the
richest common model; a non-DAP backend translates into it. Value types are NamedTuples: a dozen
frozen dataclasses cost ~12 ms of import time, NamedTuples ~1 ms. Events flow back through a
``BackendListener`` the session supplies.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal, NamedTuple, Protocol

StepKind = Literal["over", "into", "out"]


class LaunchSpec(NamedTuple):
    """Everything needed to start (or restart) a debuggee; kept by the session for restart."""

    program: str | None = None  # a script, a native executable, a Go package dir or .go file
    module: str | None = None
    args: tuple[str, ...] = ()
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    python: str | None = None
    stop_on_entry: bool = False
    core: str | None = None  # a core dump to open post-mortem with ``program``


class AttachSpec(NamedTuple):
    pid: int | None = None
    host: str | None = None
    port: int | None = None  # a listening debug server (debugpy --listen, dlv --headless, gdbserver)
    path_mappings: tuple[tuple[str, str], ...] = ()  # (local, remote)
    program: str | None = None  # the executable, for targets that need its symbols (gdbserver)


class SourceBreakpoint(NamedTuple):
    line: int
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None


class FunctionBreakpoint(NamedTuple):
    name: str
    condition: str | None = None
    hit_condition: str | None = None


class BreakpointResult(NamedTuple):
    verified: bool
    line: int | None = None
    adapter_id: int | None = None
    message: str | None = None
    data_id: str | None = None  # a watchpoint's resolved handle, to re-send it without re-resolving


class Thread(NamedTuple):
    id: int
    name: str


class Frame(NamedTuple):
    id: int
    name: str
    file: str | None
    line: int | None
    column: int | None = None
    pc: int | None = None  # instruction pointer, where the debugger reports it


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


class DataBreakpoint(NamedTuple):
    """A watchpoint on ``expression``; ``data_id`` is the adapter's handle for it, once resolved."""

    expression: str
    access: Literal["write", "read", "readWrite"] = "write"
    data_id: str | None = None


class StopEvent(NamedTuple):
    reason: str
    thread_id: int | None
    description: str | None = None
    text: str | None = None
    hit_breakpoint_ids: tuple[int, ...] = ()
    all_threads_stopped: bool = True


@dataclass
class Capabilities:
    """What the backend supports, read from the adapter's ``initialize`` answer (or declared)."""

    conditional_breakpoints: bool = False
    hit_conditional_breakpoints: bool = False
    log_points: bool = False
    function_breakpoints: bool = False
    set_variable: bool = False
    exception_info: bool = False
    terminate_request: bool = False
    child_paging: bool = False  # honours start/count on variables
    exception_filters: tuple[str, ...] = ()
    # native-code operations (debug_memory, debug_disassemble, debug_registers, debug_watch, debug_command)
    memory: bool = False
    disassemble: bool = False
    registers: bool = False
    data_breakpoints: bool = False
    raw_command: bool = False
    extra: dict[str, bool] = field(default_factory=dict)


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


class BackendListener(Protocol):
    """Events a backend reports to its session. Called on the event loop, must not block."""

    def on_stopped(self, event: StopEvent) -> None: ...

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None: ...

    def on_output(self, category: str, text: str) -> None: ...

    def on_exited(self, exit_code: int | None) -> None: ...

    def on_terminated(self, cause: str | None) -> None: ...

    def on_breakpoint_changed(self, adapter_id: int, result: BreakpointResult) -> None: ...


Configure = Callable[[], Awaitable[None]]


class Backend(Protocol):
    """One debugger connection for one debuggee."""

    name: str
    capabilities: Capabilities

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        """Start the adapter and the debuggee; call ``configure`` when breakpoints may be sent."""
        ...

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None: ...

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]: ...

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]: ...

    async def set_exception_filters(self, filters: list[str]) -> None: ...

    async def threads(self) -> list[Thread]: ...

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]: ...

    async def scopes(self, frame_id: int) -> list[Scope]: ...

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]: ...

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame_id: int | None = None) -> list[Variable] | None:
        """Children ``start..start+count`` of a value when the adapter cannot page; None if unsupported."""
        ...

    async def evaluate(self, expression: str, frame_id: int | None, context: str) -> Variable: ...

    async def set_variable(self, ref: int, name: str, value: str) -> Variable: ...

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None: ...

    async def resume(self, thread_id: int | None) -> None: ...

    async def step(self, thread_id: int, kind: StepKind) -> None: ...

    async def pause(self, thread_id: int | None) -> None: ...

    # -- native operations; only called when the matching capability is set ----------------------

    async def read_memory(self, address: int, count: int) -> MemoryBlock: ...

    async def write_memory(self, address: int, data: bytes) -> int:
        """Write ``data`` at ``address``; returns the number of bytes written."""
        ...

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        """``count`` instructions starting ``offset`` instructions from ``address`` (offset may be < 0)."""
        ...

    async def registers(self, frame_id: int) -> list[Variable]: ...

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame_id: int | None) -> list[BreakpointResult]:
        """Replace all watchpoints; resolves each expression (in ``frame_id``) where needed."""
        ...

    async def command(self, text: str, frame_id: int | None) -> str:
        """Run a raw debugger console command (lldb, gdb, dlv) and return its output."""
        ...

    async def terminate(self) -> None:
        """End the debuggee and the adapter; never raises, never leaves a process behind."""
        ...

    async def detach(self) -> None:
        """Leave the debuggee running and close the adapter; never raises."""
        ...
