"""The typed answers of the tools (pydantic): they become ``outputSchema`` and ``structuredContent``.

Field names are short and optional fields default to None so that both the schema and the JSON
stay small; ``render.py`` turns each into the compact text a model reads.
"""

from __future__ import annotations

from enum import Enum

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class State(str, Enum):
    starting = "starting"
    running = "running"
    stopped = "stopped"
    exited = "exited"
    terminated = "terminated"


class Location(_Model):
    file: str | None = None
    line: int | None = None
    function: str | None = None


class Var(_Model):
    name: str
    value: str
    type: str | None = None
    ref: int | None = None  # expand with debug_variables(ref=…)
    truncated: bool | None = None  # value cut to the report's limit


class ExceptionInfo(_Model):
    type: str
    message: str
    details: list[str] | None = None  # more of the report: a sanitizer's access, allocation and free stacks


class Output(_Model):
    """New output since the previous report; when long, its tail (the part nearest the stop). Logpoints' lines,
    when there are any, are apart (``text`` is then the rest), so the program's output never cuts them away."""

    text: str
    next_cursor: int  # cursor just after ``text``: debug_output(cursor=…) continues from here
    truncated: int = 0  # earlier new bytes left out: debug_output(cursor=earlier_cursor) reads them
    earlier_cursor: int | None = None
    logpoints: str | None = None
    logpoints_truncated: int = 0  # earlier lines left out: debug_output(stream="logpoints", cursor=logpoints_cursor)
    logpoints_cursor: int | None = None  # reads every logpoint line since the previous report


class TestResult(_Model):
    """How a test run by name ended (``debug_launch(test=…)``)."""

    __test__ = False  # not a test class, whatever pytest reads in its name

    name: str
    runner: str
    outcome: str  # passed, failed, not found, error
    seconds: float | None = None
    summary: str | None = None  # the runner's own line
    closest: list[str] | None = None  # for a name that matched no test


class CallTrace(_Model):
    """Calls of named functions and exceptions raised, recorded while the program ran (``session/calllog.py``)."""

    calls: int = 0
    raised: int = 0
    summary: list[str]  # a line per function (calls, distinct arguments, returned values, exceptions, time), per type
    rows: list[str]  # the first calls (all of them when they fit)
    last_rows: list[str] | None = None  # the last calls, when the first do not reach them
    raised_rows: list[str] | None = None  # the first exceptions raised, then the last ones
    skipped: int = 0  # rows left out: debug_output(stream="trace", cursor=more_cursor) reads every row
    more_cursor: int | None = None
    note: str | None = None
    # the trace log's cursor of each row, for an answer that must leave some out (not in the structured copy)
    row_cursors: list[int] | None = Field(default=None, exclude=True)


class StopReport(_Model):
    session_id: str
    state: State
    reason: str | None = None
    description: str | None = None
    thread_id: int | None = None
    thread_name: str | None = None  # which worker or child process stopped, when it is not the program
    location: Location | None = None
    source: str | None = None
    locals: list[Var] | None = None
    locals_more: int = 0
    exception: ExceptionInfo | None = None
    output: Output | None = None
    exit_code: int | None = None
    timed_out: bool = False
    note: str | None = None
    deadlocks: list[str] | None = None  # at a pause: threads waiting for each other's locks (session/locks.py)
    test: TestResult | None = None  # at the end of a test run by name
    returned: list[str] | None = None  # after a step: what the calls stepped out of or over returned
    trace: CallTrace | None = None  # a launch's trace (debug_launch(trace=…)) up to this report


class BreakpointInfo(_Model):
    id: int
    kind: str  # line / function / data
    file: str | None = None
    line: int | None = None  # requested
    actual_line: int | None = None
    function: str | None = None
    watch: str | None = None
    access: str | None = None
    condition: str | None = None
    hit_condition: str | None = None
    log_message: str | None = None
    verified: bool = False
    message: str | None = None
    hits: int = 0


class BreakpointList(_Model):
    session_id: str
    breakpoints: list[BreakpointInfo]  # a page of them when there are many
    exception_filters: list[str]
    total: int | None = None  # when the page is not all of them
    start: int | None = None
    by_file: str | None = None  # how many each file holds, and how many are bound
    more: str | None = None  # the call that reads the next page


class FrameInfo(_Model):
    index: int  # < 0: library code listed above frame 0 (a watched write inside memcpy), not a frame_id
    function: str
    file: str | None = None
    line: int | None = None


class LockState(_Model):
    """What a thread holds and waits for (``session/locks.py``), where its runtime tells."""

    holds: list[str] | None = None
    holds_more: int = 0
    waits_for: str | None = None
    owner: int | None = None  # the thread holding what it waits for
    state: str | None = None  # why it is not running ("blocked on a monitor", a goroutine's wait reason)


class AsyncFrame(_Model):
    """A caller past an ``await``: listed, not selectable (no frame_id)."""

    function: str
    file: str | None = None
    line: int | None = None
    via: str | None = None  # on the first frame of each segment: what joins it ("await", "Promise.then")


class ThreadStack(_Model):
    thread_id: int
    name: str
    frames: list[FrameInfo]
    locks: LockState | None = None
    async_frames: list[AsyncFrame] | None = None
    total: int | None = None
    same: int | None = None  # how many other threads have this same stack (all_threads lists it once)
    same_ids: list[int] | None = None  # the first of them


class TaskInfo(_Model):
    name: str
    awaiting: str
    frames: list[FrameInfo] | None = None


class StackResult(_Model):
    session_id: str
    threads: list[ThreadStack]
    more: str | None = None
    current_thread: int | None = None  # the thread frame_id and later calls default to
    tasks: list[TaskInfo] | None = None  # with all_threads: the pending asyncio tasks, what each awaits
    deadlocks: list[str] | None = None  # each cycle of threads waiting for each other's locks, in a sentence


class VariablesResult(_Model):
    session_id: str
    scope: str | None = None
    ref: int | None = None
    start: int = 0
    variables: list[Var]
    total: int | None = None
    more: str | None = None
    scopes: list[str] | None = None


class EvaluateResult(_Model):
    session_id: str
    expression: str
    value: str
    type: str | None = None
    ref: int | None = None
    truncated: bool = False


class SessionInfo(_Model):
    session_id: str
    state: State
    language: str
    adapter: str
    target: str
    pid: int | None = None  # the program's process id, once its debugger has said it
    location: Location | None = None
    exit_code: int | None = None
    cause: str | None = None


class SessionList(_Model):
    sessions: list[SessionInfo]
    current: str | None = None


class SourceResult(_Model):
    file: str
    start: int
    end: int
    total_lines: int
    text: str


class OutputResult(_Model):
    session_id: str
    text: str
    next_cursor: int
    dropped: int = 0
    more: bool = False
    state: State


class TraceHit(_Model):
    file: str
    line: int
    values: dict[str, str]
    thread: str | None = None  # the thread that hit it, where the debugger says


class TraceResult(_Model):
    session_id: str
    hits: list[TraceHit]  # the first hits (all of them when they fit the answer)
    total_hits: int
    stopped_because: str  # max_hits / exited / terminated / timeout / stopped
    state: State
    report: StopReport | None = None
    last_hits: list[TraceHit] | None = None  # the last hits, when the first do not reach them
    skipped: int = 0  # hits between the two: debug_output(stream="trace", cursor=more_cursor) reads every row
    more_cursor: int | None = None
    values: dict[str, str] | None = None  # per expression, the values it took (counted, first, last, range)
    threads: list[str] | None = None  # with several threads: each one's hits and values
    where: str | None = None  # how often the `where` condition held, its first and last hit
    note: str | None = None
    calls: CallTrace | None = None  # debug_trace(functions=…): the calls and exceptions recorded


class MemoryResult(_Model):
    session_id: str
    address: str
    count: int
    hex: str
    dump: str
    unreadable: int = 0
    written: int | None = None


class InstructionInfo(_Model):
    address: str
    text: str
    symbol: str | None = None
    line: int | None = None
    current: bool = False


class DisassemblyResult(_Model):
    session_id: str
    pc: str | None = None
    instructions: list[InstructionInfo]


class CommandResult(_Model):
    session_id: str
    command: str
    output: str
    truncated: bool = False


class Ack(_Model):
    session_id: str
    message: str
