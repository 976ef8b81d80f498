"""The lldb-dap backend the registry names (``LldbDapBackend``): starting lldb-dap, its events routed,
its requests shaped, and its end, which leaves no lldb-server or debuggee behind.

The jobs it hands on: the arguments and lldb commands it starts with (``launch``), why it stopped
(``stops.LldbStops``, in order through ``kit.ordering``), and how values, types and frame names read
in the program's language (``values``). Console output lldb-dap sends about itself (its banner,
start-up lines, known harmless complaints) is dropped here; the package docstring lists the quirks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import signal
import time
from collections.abc import Sequence
from typing import Any, ClassVar

from polydbg import procs, tracee
from polydbg.backends.base import (
    AttachSpec,
    BackendListener,
    BreakpointResult,
    Configure,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    FunctionBreakpoint,
    LaunchSpec,
    Scope,
    SourceBreakpoint,
    StepKind,
    Thread,
    ThreadLocks,
    Variable,
)
from polydbg.backends.dap import wire
from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.kit import cxx, mutexes, returns, thrown, timeouts
from polydbg.backends.kit.lifecycle import Phase
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.lldb import expressions, hits, launch, lines, stops, values
from polydbg.backends.lldb.calltrace import LldbCallTrace
from polydbg.backends.lldb.launch import COMMAND_PREFIX
from polydbg.backends.lldb.locks import LldbMutexes
from polydbg.backends.locate import find_lldb_dap
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterError, AdapterRequestError, EnvironmentProblem, UsageError, echo
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

THROW_FILTER = "cpp_throw"
_FILTER_PREFIXES = ("cpp_", "objc_", "swift_")  # lldb-dap's filters (the registry's "raised" names cpp_throw)
_BREAKPOINT_MADE = re.compile(r"^Breakpoint (\d+):", re.MULTILINE)
RAISED_MARK = "<polydbg-raised>"  # the raised log's lines (shims/throws.py)
_THROW_BREAKPOINT = re.compile(r"^(\d+): Exception breakpoint \(catch: off throw: on\)", re.MULTILINE)
CHILDREN_CAP = 256  # children listed when no count is asked for (lldb's own max-children-count)
PREVIEWS_PER_LIST = 64  # container previews built per listing (each costs a request)
DISABLE_WATCH_S = 2.0  # for lldb to disarm the watchpoints before a detach
RELEASE_POLL_S = 0.02  # how often a detach looks whether lldb has let the program go
CALL_GRACE_S = 5.0  # past the deadline, for lldb to interrupt a call it was given that deadline for, and answer

_CONSOLE_NOISE = (
    "which was unable to be parsed",  # lldb 22 on GCC's unique_ptr tuple; cxx_formatters reads it anyway
    "To get started with the debug console", "For more information visit https://lldb.llvm.org",
    "has no plugin for the language \"rust\"",  # expected: the toolchain's formatters stand in for it
)
RETURN_VALUE = "(Return Value)"  # lldb-dap's name for what a step out returned, among frame 0's locals
_PROCESS_EXITED = re.compile(r"^Process \d+ exited with status = ")  # the report says so already


class LldbDapBackend(DapBackend):
    name = "lldb-dap"
    adapter_id = "lldb-dap"
    evaluate_context: ClassVar[EvaluateContext] = "watch"  # "repl" runs a word naming an lldb command

    def __init__(self, listener: BackendListener, language: str = "c") -> None:
        ordered = OrderedEvents(listener)  # stops that need a look at the stack keep later events behind them
        super().__init__(ordered, language)
        self._ordered = ordered
        self._rust_etc: str | None = None
        self._adapter_path: str | None = None
        self._quiet = launch.QUIET
        self._scope_refs: set[int] = set()  # variable references of scopes at this stop (never capped)
        self._helpers: list[procs.ProcStat] = []  # lldb-server and the debuggee, found before the end
        self._judging = False  # the throw breakpoint carries the callback that judges C++ types (shims/throws.py)
        self._raised_sink: RaisedSink | None = None  # the log of raised exceptions, while armed
        self._stops = stops.LldbStops(language, ordered, self._frames, self._request, self._stop_event,
                                      self._breakpoints.ids, self._breakpoints.watch_label)
        self._listed: list[Thread] = []  # the threads of the last listing (lldb-dap lists none while it runs)
        self._tops: dict[int, list[Frame]] = {}  # each thread's innermost frames listed at this stop, none hidden
        self._leaving: str | None = None  # the function the last step out left (its value is "(Return Value)")
        self._mutexes = LldbMutexes(self._request, self._top_frames)
        self._program: str | None = None  # the executable, for the names a call trace may take
        self._recording: LldbCallTrace | None = None

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
        self._quiet = launch.quiet_prefix(self._adapter_path)

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        self._locate()
        self._stops.testing = spec.test
        if self.language == "rust":
            self._rust_etc = await launch.rust_lldb_dir(
                spec.cwd or (os.path.dirname(spec.program) if spec.program else None))
        if spec.core:
            if not os.path.isfile(spec.core):
                raise UsageError(f"core file {spec.core!r} not found; pass the path of an existing core dump")
            self._stops.core = spec.core
            await self._begin("attach", launch.core_arguments(spec, self._common(panics=False)), configure,
                              timeout_s)
        else:
            await self._begin("launch", self._launch_arguments(spec), configure, timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        self._locate()
        if self.language == "rust":
            self._rust_etc = await launch.rust_lldb_dir(os.path.dirname(spec.program) if spec.program else None)
        await self._begin("attach", self._attach_arguments(spec), configure, timeout_s)

    def _common(self, panics: bool = True) -> dict[str, Any]:
        return launch.common_arguments(self.language, self._rust_etc, self._quiet, panics)

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        self._program = spec.program
        args = launch.launch_arguments(spec, self._common())
        if spec.stdin is not None:
            args["stdio"] = [self._proc.input_file(spec.stdin), None, None]
        return args

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        args = launch.attach_arguments(spec, self._common())
        self._stops.remote = spec.pid is None  # a gdbserver: its first stop is the connection's
        return args

    def _tune_capabilities(self) -> None:
        caps = self.capabilities
        caps.registers = True  # every frame has a "Registers" scope
        caps.stops_on_faults = True  # a fatal signal
        caps.raw_command = True
        # C++ throw/catch filters only mean something for C++; Objective-C ones never here
        caps.exception_filters = tuple(f for f in caps.exception_filters if f.startswith("cpp_")) \
            if self.language == "cpp" else ()
        caps.exception_types = self.language == "cpp"

    # -- events -------------------------------------------------------------------------------------

    def _wire_events(self, client: DapClient) -> None:
        super()._wire_events(client)
        client.on_event("continued", lambda _b: self._stops.continued())

    def _on_output(self, body: dict[str, Any]) -> None:
        category = str(body.get("category", "console"))
        text = str(body.get("output", "")).replace("\r\n", "\n")
        if self._took_logpoint(category, text):  # a logpoint's line, also one printed while starting
            return
        if category in ("console", "important") and any(noise in text for noise in _CONSOLE_NOISE):
            log.debug("lldb-dap %s: %s", category, text.rstrip())
            return
        if category == "console" and (_PROCESS_EXITED.match(text) or text == "\n" or (
                self._life.phase < Phase.STARTED and "error" not in text.lower()
                and "warning" not in text.lower())):
            return  # start-up chatter (banner, "Executable binary set to …", "Attached to process …"), blank lines
        if self._stops.output(category, text):
            return  # lldb's report of a watchpoint hit: the stop's description says it
        if RAISED_MARK in text:
            text = self._took_raised(text)
            if not text:
                return
        super()._on_output({**body, "output": text})

    def _on_stopped(self, body: dict[str, Any]) -> None:
        self._forget_threads()
        self._ordered.deliver(lambda: self._stops.take(body))

    async def threads(self) -> list[Thread]:
        """The threads; while the program runs lldb-dap lists none ("notStopped"), so the last listing stands (what
        a pause needs: a thread to name)."""
        try:
            self._listed = await super().threads()
        except AdapterRequestError as exc:
            if "notStopped" not in exc.message:
                raise
        return self._listed

    async def _configured(self) -> None:
        """lldb-dap answers the first ``threads`` after configurationDone with the threads there were then (its
        "baseline", kept for a client that asks while the program runs), at whatever stop it is asked: a program
        that started its threads since listed only its main thread. Asked now, the later ones are the stop's."""
        with contextlib.suppress(AdapterError):
            self._listed = await super().threads()

    def _forget_threads(self) -> None:
        self._tops.clear()
        self._mutexes.forget()

    # -- execution ----------------------------------------------------------------------------------

    def _moving(self) -> None:
        super()._moving()
        self._scope_refs.clear()
        self._stops.moving()
        self._forget_threads()

    async def pause(self, thread_id: int | None) -> None:
        self._stops.pausing()
        await super().pause(thread_id)

    async def resume(self, thread_id: int | None) -> None:
        self._stops.running(stepping=False)
        await super().resume(thread_id)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        self._leaving = await self._top_function(thread_id) if kind == "out" else None
        self._stops.running(stepping=True)
        await super().step(thread_id, kind)

    async def _top_function(self, thread_id: int) -> str | None:
        """The function frame 0 of the thread is in: a step out's value is listed without it."""
        frames = self._tops.get(thread_id)
        if not frames:
            with contextlib.suppress(AdapterError):
                frames, _ = await self.stack_trace(thread_id, 0, 1)
        return frames[0].name if frames else None

    def returned_by(self, variable: Variable) -> str | None:
        """lldb-dap lists what a step out returned first among frame 0's locals (lldb's ``GetStopReturnValue``),
        named ``(Return Value)``; which function returned it is the one the step left."""
        return returns.outcome(self._leaving) if variable.name == RETURN_VALUE else None

    # -- breakpoints --------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        sent, refused = self._stops.hits.prepare(breakpoints)

        async def send(these: list[SourceBreakpoint]) -> list[BreakpointResult]:
            return await DapBackend.set_breakpoints(self, file, these)

        async def locations(first: int, last: int) -> dict[str, Any]:
            return await self._request("breakpointLocations", {"source": {"path": file}, "line": first,
                                                               "endLine": last})
        answered = await lines.bound_to_code(file, sent, await send(sent), locations, send)
        results = hits.merged(breakpoints, answered, refused)
        for bp in sent:
            native = self._breakpoints.ids.native_of(bp.id)
            if native is not None:
                (self._stops.conditional.add if bp.condition else self._stops.conditional.discard)(native)
        return results

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        if self._recording is not None and not self._recording.stopped:
            raise UsageError("a call trace is already recording in this session: let it end first")

        async def lldb_command(text: str) -> str:
            return await DapBackend.command(self, COMMAND_PREFIX + text, None)
        trace = LldbCallTrace(lldb_command, spec, sink)
        await trace.arm(self._program)
        self._recording = trace
        return trace

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        sent, refused = self._stops.hits.prepare(breakpoints)
        return hits.merged(breakpoints, await super().set_function_breakpoints(sent), refused)

    async def set_exception_filters(self, filters: list[str]) -> None:
        """The filters lldb-dap offers; C++ type names through its throw breakpoint, which a callback of
        polydbg's (``shims/throws.py``) lets stop only for those types and their subclasses."""
        sent = [f for f in filters if f in self.capabilities.exception_filters]
        types = [f for f in filters if not f.startswith(_FILTER_PREFIXES)] if self.capabilities.exception_types else []
        for name in types:
            await self._check_type(name)
        judged = bool(types) and THROW_FILTER not in sent
        await super().set_exception_filters([*sent, THROW_FILTER] if judged else sent)
        if judged or (self._judging and THROW_FILTER in sent):  # lldb-dap may keep its breakpoint: its command too
            number = await self._throw_breakpoint()
            names = "\n".join(types).encode().hex()
            await self.command(f"breakpoint command add -F throws.throws -k names -v {names} {number}" if judged
                               else f"breakpoint command delete {number}", None)
        self._judging = judged

    def _took_raised(self, text: str) -> str:
        """The records of the raised log out of a piece of output (shims/throws.py); what is left of it."""
        kept = []
        for line in text.splitlines(keepends=True):
            record = cxx.raised_record(line.strip()[len(RAISED_MARK):]) if line.startswith(RAISED_MARK) else None
            if record is None:
                kept.append(line)
            elif self._raised_sink is not None:
                self._raised_sink(record)
        return "".join(kept)

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Every C++ exception the program throws, recorded by callbacks of polydbg's that never stop
        (shims/throws.py)."""
        if self.language != "cpp":
            raise UsageError("lldb-dap records raised exceptions of C++ programs only; stop on them with "
                             "debug_break(exception=[\"cpp_throw\"]) instead")
        numbers = []
        for where, callback in (("__cxa_throw", "raised_throw"), ("__cxa_begin_catch", "raised_catch"),
                                ("std::terminate", "raised_terminate")):
            made = _BREAKPOINT_MADE.search(await self.command(f"breakpoint set -n {where}", None))
            if made is not None:
                numbers.append(made.group(1))
                await self.command(f"breakpoint command add -F throws.{callback} {made.group(1)}", None)
        self._raised_sink = sink
        return _RaisedLog(self, sink, numbers)

    async def _stop_raised(self, sink: RaisedSink, numbers: list[str]) -> None:
        if self._raised_sink is sink:
            self._raised_sink = None
            with contextlib.suppress(AdapterError, UsageError):
                await self.command(f"breakpoint delete {' '.join(numbers)}", None)

    async def _check_type(self, name: str) -> None:
        """Refuse a C++ type the program's debug info does not have (the standard library's are taken as they are)."""
        if name.startswith("std::"):
            return
        try:
            found = "found in" in await self.command(f"image lookup -t {name}", None)
        except AdapterRequestError:
            found = False
        if not found:
            raise UsageError(f"no C++ type {echo(name)} in the program's debug info; name a class it throws "
                             "(AppError, app::Error, std::runtime_error), or a filter: cpp_throw, cpp_catch")

    async def _throw_breakpoint(self) -> int:
        listed = await self.command("breakpoint list", None)
        found = _THROW_BREAKPOINT.search(listed)
        if found is None:
            raise AdapterRequestError("setExceptionBreakpoints", "lldb-dap set no C++ throw breakpoint")
        return int(found.group(1))

    def _thrown_object(self, frame: FrameRef | None) -> str:
        objects = self._stops.thrown_objects
        found = objects.get(frame.thread_id) if frame is not None else next(iter(objects.values()), None)
        if found is None:
            raise thrown.not_at_an_exception("lldb")
        return f"(*({found[0]} *) {hex(found[1])})"

    def _data_name(self, expression: str) -> str:
        return f"&({expression})"  # lldb-dap evaluates the name as the address to watch

    # -- inspection ---------------------------------------------------------------------------------

    def _frame(self, raw: dict[str, Any]) -> Frame | None:
        return values.frame(raw, self.language)

    async def _hidden_frames(self, thread_id: int) -> int:
        return self._frames.hidden(thread_id) or 0

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        frames, total = await super().stack_trace(thread_id, start, levels)
        if start == 0 and not self._frames.hidden(thread_id) and (
                len(frames) >= mutexes.TOP_FRAMES or total == len(frames)):
            self._tops[thread_id] = frames
        return frames, total

    async def _top_frames(self, thread_ids: Sequence[int]) -> dict[int, tuple[list[Frame], int | None]]:
        """Each thread's innermost frames, as a listing read them or asked now (all at once), and lldb-dap's id of
        its frame 0 (None where frames are hidden: that thread stopped in an abort, a panic or a throw)."""
        async def read(thread: int) -> None:
            with contextlib.suppress(AdapterError):
                await self.stack_trace(thread, 0, mutexes.TOP_FRAMES)
        await asyncio.gather(*(read(t) for t in thread_ids if t not in self._tops))
        return {t: (self._tops.get(t, []), None if self._frames.hidden(t) else self._frames.get(FrameRef(t, 0)))
                for t in thread_ids}

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        """The pthread mutexes (std::mutex) threads wait for and their owners, Rust Mutexes without (locks.py)."""
        return await self._mutexes.locks(thread_ids)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        return self._stops.above(thread_id)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        found = await super().scopes(frame)
        self._scope_refs.update(scope.ref for scope in found)
        return found

    async def _children(self, ref: int, start: int, count: int) -> list[Variable]:
        """A value's children as lldb-dap lists them, unshaped (for previews)."""
        return await super().variables(ref, start, count)

    async def _shaped(self, var: Variable) -> Variable:
        return await values.shaped(var, self._children, self.language)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        """Children, shaped; of a value at most ``CHILDREN_CAP`` when no count is given (lldb-dap would list
        all of a million-element vector): the session pages past them through ``child_slice``."""
        if count is None and ref not in self._scope_refs:
            start, count = start or 0, CHILDREN_CAP
        children = await super().variables(ref, start, count)
        out = []
        for index, child in enumerate(children):
            out.append(await self._shaped(child) if index < PREVIEWS_PER_LIST
                       else values.renamed(child, self.language))
        return out

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        """``$exception`` is the C++ object a throw stop is at, named by its type and address; at a Rust panic, its
        message."""
        if thrown.names_it(expression):
            thread = frame.thread_id if frame is not None else None
            panic = self._stops.known_detail(thread) if thread is not None else None
            if panic is not None and panic.type == "panic" and thread not in self._stops.thrown_objects:
                if expression.strip() != thrown.NAME:
                    raise UsageError(f"at a panic {thrown.NAME} is its message, a string, evaluated alone; "
                                     f"evaluate {thrown.NAME} and read it")
                return thrown.message(expression, panic.message, "&str")
            found = await self.evaluate(thrown.substitute(expression, self._thrown_object(frame)), frame, context)
            return found._replace(name=expression, evaluate_name=expression)
        try:
            found = await self._evaluated(expression, frame, context)
        except AdapterRequestError as exc:
            found = await self._evaluate_again(expression, frame, context, exc)
        return await self._shaped(found)

    async def _evaluated(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        """A variable path as lldb-dap reads it (``hover``: no code runs); anything else through lldb's
        ``expression`` command with polydbg's deadline, not the API's 0.5 s (``expressions``)."""
        if context != "watch" or "\n" in expression:  # lldb-dap runs each line of a command as a command
            return await super().evaluate(expression, frame, context)
        try:
            return await super().evaluate(expression, frame, "hover")
        except AdapterRequestError:
            pass
        thread = frame.thread_id if frame is not None else None
        self._evaluations.refuse_if_busy(thread)
        await self._select(frame)
        deadline = timeouts.INSPECT_S
        arguments = {"expression": COMMAND_PREFIX + expressions.call_command(expression, deadline),
                     "context": "repl", **await self._frame_args(frame)}
        started = time.monotonic()
        body = await self._evaluations.run(self.client, thread, expression, arguments, grace_s=CALL_GRACE_S)
        output = str(body.get("result", ""))
        result = expressions.command_result(output, time.monotonic() - started, deadline)
        if result is None:  # a call that returns nothing
            return Variable(name=expression, value=output.strip(), type=None if output.strip() else "void")
        value = await super().evaluate(result, frame, "watch")  # the result as lldb-dap reads a value
        return value._replace(name=expression)

    async def _evaluate_again(self, expression: str, frame: FrameRef | None, context: EvaluateContext,
                              failed: AdapterRequestError) -> Variable:
        """A Rust field path lldb's C++ parser could not take through a reference or Box, evaluated again a step
        at a time (``expressions``); any other failure raised with lldb's error cut to the error itself."""
        rust = self.language == "rust" and expressions.through_pointer(failed.message)
        parts = expressions.rust_path(expression) if rust else None
        if parts is None:
            hint = (" — a Rust reference or Box is a pointer to lldb: dereference it as its type says, e.g. "
                    "(**node).next for node: &Box<Node>") if rust else ""
            raise AdapterRequestError(failed.command, expressions.short_error(failed.message) + hint) from failed

        async def step(text: str) -> Variable:
            return await DapBackend.evaluate(self, text, frame, context)
        spelt, found = await expressions.rust_field_path(parts, step)
        return found._replace(name=expression, evaluate_name=spelt)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await self._shaped(await super().set_variable(ref, name, value))

    async def _select(self, frame: FrameRef | None) -> None:
        """lldb-dap runs a command in lldb's selected thread and frame, whichever the request names: select it."""
        if frame is None:
            return
        level = frame.index + await self._hidden_frames(frame.thread_id)
        for command in (f"thread select -t {frame.thread_id}", f"frame select {level}"):
            said = str((await self._request("evaluate", {"expression": COMMAND_PREFIX + command,
                                                         "context": "repl"})).get("result", ""))
            if said.lstrip().startswith("error:"):
                raise AdapterRequestError("evaluate", f"cannot select frame {frame.index} of thread "
                                          f"{frame.thread_id}: {said.strip().removeprefix('error:').strip()}")

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        if not parent.ref:
            return None
        return await self.variables(parent.ref, start, count)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        known = self._stops.known_detail(thread_id)
        if known is not None:
            return known
        try:
            detail = await super().exception_info(thread_id)
        except AdapterError:
            return None
        return None if detail is None else stops.signal_detail(detail)

    # -- native operations --------------------------------------------------------------------------

    async def registers(self, frame: FrameRef) -> list[Variable]:
        """The general-purpose registers (lldb-dap groups them: general, floating point, vector)."""
        for scope in await self.scopes(frame):
            if not wire.is_register_scope(scope):
                continue
            groups = await super().variables(scope.ref)
            if not groups or not all(g.ref for g in groups):
                return groups
            general = next((g for g in groups if "general" in g.name.lower()), groups[0])
            return values.general_registers(await super().variables(general.ref))
        return []

    async def command(self, text: str, frame: FrameRef | None) -> str:
        """An lldb command (``frame variable``, ``register read``, ``memory read`` …) and its output; a
        command lldb rejects is an error, as gdb's are (lldb-dap answers it as a normal result). An empty one is
        refused: lldb would repeat the last command (a ``next`` steps again)."""
        if not text.strip().removeprefix(COMMAND_PREFIX).strip():
            raise UsageError("the command is empty; send an lldb command as you would type it at lldb's prompt, "
                             "e.g. 'bt', 'frame variable', 'register read', 'image list' ('help' lists them)")
        await self._select(frame)
        output = await super().command(text if text.startswith(COMMAND_PREFIX) else COMMAND_PREFIX + text, frame)
        if output.lstrip().startswith("error:"):
            raise AdapterRequestError("evaluate", output.strip().removeprefix("error:").strip())
        return output

    # -- ending -------------------------------------------------------------------------------------

    async def _before_end(self, terminate_debuggee: bool) -> None:
        # lldb-dap starts lldb-server, which starts the debuggee: found now, while they are its descendants
        self._helpers = procs.descendants(self._proc.pid) if self._proc.pid is not None else []
        if not terminate_debuggee and self._breakpoints.watching:
            # lldb 22 detaches a program with a watchpoint set (or deleted) with its debug registers armed: the
            # program dies of SIGTRAP at its next write there; one disabled first is let go cleanly
            with contextlib.suppress(AdapterError):
                await self._request("evaluate", {"expression": f"{COMMAND_PREFIX}watchpoint disable",
                                                 "context": "repl"}, DISABLE_WATCH_S)

    async def _let_go(self, answer: asyncio.Future[dict[str, Any]], deadline_s: float) -> None:
        """lldb answers the detach of a program it launched only ~5 s after letting it go (lldb 22, the CLI's
        ``process detach`` too), so the program alive, no thread of it traced, and lldb-server gone is the answer."""
        program = self._program_pid
        servers = {helper.pid for helper in self._helpers if helper.name.startswith("lldb-server")}
        if program is None or tracee.tracer_of(program) not in servers:
            await super()._let_go(answer, deadline_s)
            return
        loop = asyncio.get_running_loop()
        deadline = loop.time() + deadline_s
        while not answer.done():
            if tracee.released(program) and not any(procs.read_stat(helper.pid) == helper for helper in self._helpers
                                                   if helper.pid in servers):
                return  # every thread let go, and lldb-server, done with it, has exited
            if loop.time() >= deadline:
                raise asyncio.TimeoutError
            await asyncio.wait({answer}, timeout=RELEASE_POLL_S)
        answer.result()

    async def _after_end(self, terminate_debuggee: bool) -> None:
        for helper in self._helpers:  # lldb-server, and on terminate the debuggee
            if (terminate_debuggee or helper.name.startswith("lldb-server")) and procs.read_stat(helper.pid) == helper:
                with contextlib.suppress(OSError):
                    os.kill(helper.pid, signal.SIGKILL)


class _RaisedLog:
    def __init__(self, backend: LldbDapBackend, sink: RaisedSink, numbers: list[str]) -> None:
        self._backend = backend
        self._sink = sink
        self._numbers = numbers

    async def stop(self) -> list[str]:
        await self._backend._stop_raised(self._sink, self._numbers)
        return []
