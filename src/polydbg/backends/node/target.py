"""One JavaScript thread being debugged — the program's main thread, a worker, a child process: its
connection, its scripts, its breakpoint ids, and its current pause with the frames the agent sees.

Each target has its own CDP channel, its own parsed scripts (script ids are per isolate), its own
breakpoint ids, its own pause and its own values. A value handle (``ref``) names its target by range:
the program's handles count from 1, target ``t``'s from ``t * REF_RANGE``, so the agent's numbers
stay small for the common case and a handle of a target that resumed is recognisably stale. Objects
fetched for a stop live in one object group (``GROUP``), released when the target runs again; what
the handles point at is read by ``inspection``.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from polydbg.backends.base import ExceptionDetail, Frame, StepKind
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node import lexical
from polydbg.backends.node import values as jsv
from polydbg.backends.node.scripts import Scripts, position
from polydbg.cdp.client import CdpChannel, WorkerStream
from polydbg.errors import AdapterRequestError, AdapterTimeoutError

GROUP = "polydbg"  # the object group of everything fetched for a stop
RETURNED_GROUP = "polydbg-returned"  # what a step out read on its way, kept until the run after its landing
REF_RANGE = 1_000_000
MAIN_THREAD = 1  # the program's main thread: the first target, its handles count from 1


@dataclass
class Ref:
    """What a value handle the agent holds names, for one stop."""

    kind: str  # "scope" | "merged" | "object"
    frame: int = 0  # the shown frame index (scopes)
    objects: list[tuple[str, str]] = field(default_factory=list)  # (scope type, objectId), innermost first
    obj: dict[str, Any] = field(default_factory=dict)  # the RemoteObject (objects)
    name: str | None = None  # the expression naming it (objects)
    this: dict[str, Any] | None = None  # merged: the frame's ``this`` when it is an instance
    owners: dict[str, int] = field(default_factory=dict)  # merged: variable name → scope number


class Returned(NamedTuple):
    """What a function a step left returned (a RemoteObject), or the exception that left it."""

    function: str
    value: dict[str, Any]
    raised: bool = False


@dataclass
class Step:
    """A step the agent asked for, until it lands."""

    kind: StepKind
    depth: int  # the frames when it started: a step over lands no deeper, a step out shallower
    origin: tuple[str, int]  # the (script id, line) it started from
    steps_on: int = 0  # steps taken on through code that is not the user's
    passing: bool = False  # going on past a breakpoint hit that did not count, back out to where it lands
    # a step out: V8's ids of the breakpoints at the left function's return positions, while set (``returns``)
    return_points: list[str] = field(default_factory=list)
    function: str = ""  # the function a step out leaves
    returned: Returned | None = None  # what it returned (or the exception on its way out), once read
    exceptions: str | None = None  # the pause-on-exceptions state to put back, while every throw pauses the step
    following: bool = False  # a step out follows each throw no setting of the agent's stops at into its catch
    throws: int = 0  # throws the step paused at
    deeper: int = 0  # returns of deeper calls (recursive ones) the step out paused at


@dataclass(eq=False)
class Target:
    thread_id: int
    name: str  # what the agent sees: "main", "worker 1 (pool.js)", "process 4242 (child.js)"
    channel: CdpChannel
    events: OrderedEvents  # this target's stops, refined in order, then through the session's gate
    kind: str = "main"  # "main" | "worker" | "process"
    pid: int | None = None
    parent: Target | None = None
    inspector: str | None = None  # host:port of its process's inspector (where /json/protocol is served)
    scripts: Scripts = field(default_factory=Scripts)
    context_id: int | None = None
    entry_bp: str | None = None
    entry_regex: str | None = None  # the scripts its entry breakpoint pauses at their start
    entered: set[str] = field(default_factory=set)  # the scripts its entry breakpoint has paused once
    before_mapped: bool = False  # V8 pauses it before a script with a source map runs
    by_native: dict[str, int] = field(default_factory=dict)  # V8 breakpoint id → polydbg's
    native_at: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # V8 id → (script, line, column)
    binding: dict[str, asyncio.Future[list[str]]] = field(default_factory=dict)  # script id → its mapped bps
    workers: dict[str, WorkerStream] = field(default_factory=dict)  # its worker threads' streams, by session
    ended: bool = False
    held: bool = False  # a new child or worker waiting at its start until its breakpoints are set
    # the current pause
    frames: list[dict[str, Any]] = field(default_factory=list)
    async_trace: dict[str, Any] | None = None  # where the stack goes on past an await (CDP StackTrace)
    hidden: int = 0
    pause_data: dict[str, Any] | None = None
    pause_reason: str = ""
    failure: ExceptionDetail | None = None  # a test's failure, with its expected and actual values (``failures``)
    failed_at: tuple[str, tuple[str, int, int]] | None = None  # the last failure stopped at: its exception, its frame
    paused: bool = False
    paused_at: float = 0.0  # time.perf_counter() when the pause arrived
    reported: bool = False
    stops: int = 0  # stops reported so far: a run request that returns after the next one is told by it
    step: Step | None = None
    returned: Returned | None = None  # what the function the last step left returned (``returns``)
    pausing: bool = False
    pausing_over: bool = False  # paused by the agent while another thread's stop is shown: its stop is shown instead
    idle: asyncio.Future[bool] | None = None
    # a reload re-entering a function (``reload``): V8's resume and pause that restart it are not the agent's
    restarting: asyncio.Future[None] | None = None
    refs: HandleTable[Ref] = field(init=False)

    def __post_init__(self) -> None:
        self.refs = HandleTable(self.ref_base + 1)

    @property
    def ref_base(self) -> int:
        return 0 if self.kind == "main" else self.thread_id * REF_RANGE

    @property
    def live(self) -> bool:
        return not self.ended and not self.channel.is_closed

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float | None = None) -> dict[str, Any]:
        """One CDP request; ``timeout`` defaults to an inspection's (``timeouts.INSPECT_S``). Not sent to a
        process stopped by a signal (``check_answering``); unanswered, it fails as the stalled debugger's rule
        says (``protocol.core``), naming a signal that stopped the process meanwhile."""
        self.check_answering(method)
        try:
            return await self.channel.request(method, params, timeouts.INSPECT_S if timeout is None else timeout)
        except AdapterTimeoutError as exc:
            if self.pid is None or not held_by_signal(self.pid):
                raise
            raise AdapterTimeoutError(
                f"{exc}: its process (pid {self.pid}) is stopped by a signal (SIGSTOP, or Ctrl-Z in its terminal) "
                f"and answers nothing until it is continued: kill -CONT {self.pid}. The request was sent: Node "
                "carries it out once continued") from exc

    def check_answering(self, method: str) -> None:
        """Refuse a request to a process stopped by a signal (SIGSTOP, Ctrl-Z), before it is sent: Node would
        answer nothing, then carry it out once continued (a step reported as failed ran then)."""
        if self.pid is not None and held_by_signal(self.pid):
            raise AdapterRequestError(method, (
                f"{self.name}'s process (pid {self.pid}) is stopped by a signal (SIGSTOP, or Ctrl-Z in its "
                f"terminal), so nothing was sent (Node would carry it out once continued): kill -CONT {self.pid}, "
                "then ask again"))

    def on_context(self, params: dict[str, Any]) -> None:
        """``Runtime.executionContextCreated``: the first default context is where evaluations run."""
        context = params.get("context") or {}
        if (context.get("auxData") or {}).get("isDefault", True) and self.context_id is None:
            self.context_id = context.get("id")

    def on_paused(self, params: dict[str, Any]) -> None:
        self.frames = list(params.get("callFrames") or [])
        trace = params.get("asyncStackTrace")
        self.async_trace = trace if isinstance(trace, dict) else None
        self.pause_data = params.get("data") if isinstance(params.get("data"), dict) else None
        self.pause_reason = str(params.get("reason") or "")
        self.paused = True
        self.paused_at = time.perf_counter()

    def on_resumed(self) -> None:
        self.frames = []
        self.async_trace = None
        self.pause_data = None
        self.failure = None
        self.returned = None
        self.paused = False
        self.refs.clear()

    async def run(self, method: str) -> None:
        """Resume or step, releasing this stop's values first. Nothing is sent to a target that runs:
        a worker that runs to its end while a message to it is in flight aborts Node (v20)."""
        self.check_answering(method)  # before this stop's values are let go
        if self.paused and not self.channel.is_closed:
            self.channel.send("Runtime.releaseObjectGroup", {"objectGroup": GROUP})
            if self.returned is not None:  # shown at this stop (a step under way keeps its own)
                self.channel.send("Runtime.releaseObjectGroup", {"objectGroup": RETURNED_GROUP})
        await self.request(method)

    async def source(self, script_id: str) -> lexical.Source | None:
        """The source V8 runs for a script (a loader's output for TypeScript), read once."""
        script = self.scripts.get(script_id)
        if script is None:
            return None
        if script.source is None:
            found = await self.request("Debugger.getScriptSource", {"scriptId": script_id})
            script.source = lexical.Source(str(found.get("scriptSource") or ""))
        return script.source

    # -- frames -----------------------------------------------------------------------------------------

    def shown(self) -> list[dict[str, Any]]:
        return self.frames[self.hidden:]

    def frame(self, index: int) -> dict[str, Any]:
        if not self.paused:
            raise AdapterRequestError("frame", f"{self.name} is running: it has no frames until it stops")
        shown = self.shown()
        if not 0 <= index < len(shown):
            raise AdapterRequestError("frame", f"no frame {index}; the stack has {len(shown)} frames")
        return shown[index]

    def stack_trace(self, start: int, levels: int) -> tuple[list[Frame], int | None]:
        if not self.paused:
            return [], 0
        shown = self.shown()
        return [self.frame_of(cdp) for cdp in shown[start:start + levels]], len(shown)

    def frames_above(self) -> list[Frame]:
        """At a test's failure, the assertion library's frames above the user's (listed, not selectable)."""
        return [self.frame_of(cdp) for cdp in self.frames[:self.hidden]] if self.paused and self.failure else []

    def frame_of(self, cdp: dict[str, Any]) -> Frame:
        place = self.scripts.place(*position(cdp.get("location") or {}))
        return Frame(cdp.get("functionName") or "(anonymous)", place.file, place.line, place.column)

    def async_callers(self, most: int) -> list[tuple[str, list[Frame]]]:
        """Where the stack goes on past an await, a ``.then`` or a timer, outward: each segment's description
        (``await``, ``Promise.then``, ``Timeout``) and its frames in files (Node's own left out, a loader's code
        no source map covers, and the dependencies' frames below the program's own: what ran its code, a
        loader, a test runner), ``most`` frames in all."""
        segments: list[tuple[str, list[Frame]]] = []
        trace = self.async_trace if self.paused else None
        while trace is not None and most > 0:
            frames: list[Frame] = []
            users = 0
            for cdp in trace.get("callFrames") or []:
                script = self.scripts.get(str(cdp.get("scriptId")))
                place = self.scripts.place(*position(cdp))
                if script is None or script.path is None or place.line is None:
                    continue
                frames.append(Frame(cdp.get("functionName") or "(anonymous)", place.file, place.line, place.column))
                if not script.internal:
                    users = len(frames)
            frames = frames[:users or len(frames)]
            if frames:
                segments.append((str(trace.get("description") or "async"), frames[:most]))
                most -= len(segments[-1][1])
            parent = trace.get("parent")
            trace = parent if isinstance(parent, dict) else None
        return segments

    def exception_detail(self) -> ExceptionDetail | None:
        data = self.pause_data
        if self.failure is not None or data is None:
            return self.failure
        if data.get("subtype") == "error" or data.get("type") == "object":
            class_name = str(data.get("className") or "Error")
            message = jsv.error_message(class_name, str(data.get("description") or ""))
            if data.get("subtype") != "error":
                message = jsv.text_of(data)
            return ExceptionDetail(class_name, message)
        return ExceptionDetail(jsv.type_of(data), jsv.text_of(data))


def held_by_signal(pid: int) -> bool:
    """Whether process ``pid`` (on this machine) is stopped by a signal: state T in /proc/PID/stat."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            return handle.read().rpartition(b")")[2].split()[:1] == [b"T"]
    except OSError:
        return False
