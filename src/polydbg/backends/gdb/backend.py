"""GdbMiBackend: the Backend protocol over GDB/MI — starting gdb, launching, attaching and ending, and
routing gdb's records to the parts that handle them (the mapping onto gdb: the package docstring).

The backend owns gdb's process, the program's terminal, the lifecycle (``kit.lifecycle``: one end
however many callers, one termination report) and whether the program runs. Each job is a part of its
own, handed the shared ``GdbState`` and the parts it calls: ``breakpoints``, ``frames`` (threads, stacks,
frame selection), ``inspection`` (values, evaluation, exception info), ``native`` (memory, disassembly,
registers, raw commands); ``stops`` reads stop and exit records. gdb's records are routed by name
(``*stopped``, ``*running``, ``=thread-group-started``, ``=breakpoint-modified``/``-deleted``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import shutil
import signal
from collections.abc import Sequence
from typing import Any

from polydbg import procs, tracee
from polydbg.backends.base import (
    LOGPOINT,
    AttachSpec,
    Backend,
    BackendListener,
    BreakpointResult,
    Capabilities,
    Configure,
    DataBreakpoint,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    FunctionBreakpoint,
    Instruction,
    LaunchSpec,
    MemoryBlock,
    Scope,
    SourceBreakpoint,
    StepKind,
    StopEvent,
    Thread,
    ThreadLocks,
    Variable,
)
from polydbg.backends.gdb import raised, rr, stops, timetravel
from polydbg.backends.gdb.breakpoints import Breakpoints
from polydbg.backends.gdb.calls import Calls
from polydbg.backends.gdb.calltrace import CALL_MARK, GdbCallTrace
from polydbg.backends.gdb.commands import (
    GDB_PYTHON,
    LOG_MARK,
    RAISED_MARK,
    console,
    gdb_arg,
    program_commands,
    python_exec,
    rust_printer_dir,
    substitute_paths,
)
from polydbg.backends.gdb.frames import Frames
from polydbg.backends.gdb.inspection import NOISE, Inspection
from polydbg.backends.gdb.locks import Mutexes
from polydbg.backends.gdb.native import Native
from polydbg.backends.gdb.state import Execution, GdbState
from polydbg.backends.gdb.terminal import InferiorTerminal
from polydbg.backends.gdb.values import as_dict, to_int
from polydbg.backends.kit import cxx, returns, sanitizers
from polydbg.backends.kit.lifecycle import Lifecycle, Phase
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.backends.timecontrol import RecordAction, ReverseKind
from polydbg.errors import (
    AdapterError,
    AdapterGoneError,
    AdapterRequestError,
    AdapterTimeoutError,
    EnvironmentProblem,
    UsageError,
)
from polydbg.mi.client import MiClient, MiResult
from polydbg.transport.streams import LineStream

log = logging.getLogger(__name__)


OUTPUT_TAIL_CHARS = 16384  # the program output kept for a panic's message, a sanitizer's report (GdbState.output_tail)
END_STEP_S = 2.0  # each step of leaving the target at the end (interrupt, kill or detach)
GDB_EXIT_S = 1.0
_STEP_COMMANDS: dict[StepKind, str] = {"over": "-exec-next", "into": "-exec-step", "out": "-exec-finish"}
_SETUP = ["-gdb-set mi-async on", "-gdb-set confirm off", "-gdb-set pagination off", "-gdb-set width 0",
          "-gdb-set height 0", "-gdb-set breakpoint pending on", "-gdb-set print object on",
          "-gdb-set print entry-values no", "-gdb-set unwindonsignal on", "-enable-pretty-printing"]


class GdbMiBackend(Backend):
    """The Backend protocol over GDB/MI."""

    name = "gdb"

    def __init__(self, listener: BackendListener, language: str = "") -> None:
        self._listener = listener
        self.language = language
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True,
            function_breakpoints=True, set_variable=True, exception_info=True, exception_types=language == "cpp",
            exception_filters=("throw", "catch") if language == "cpp" else ("panic",) if language == "rust" else (),
            memory=True, disassemble=True, registers=True, data_breakpoints=True, raw_command=True,
            stops_on_faults=True)
        self._life = Lifecycle("gdb", listener)
        self._proc = procs.DebuggerProcess("gdb")
        self._gdb = GdbState(language, self._proc)
        self._execution = Execution()
        self._mode = "launch"  # launch | core | attach | remote
        self._core: str | None = None
        self._attach_stop: asyncio.Event | None = None
        self.debuggee_pid: int | None = None
        self._terminal = InferiorTerminal(self._on_program_output)
        self._console_line = ""
        self._raised_sink: RaisedSink | None = None  # the log of raised exceptions, while armed
        self._rust_etc: str | None = None
        self._frames = Frames(self._gdb)
        self._breakpoints = Breakpoints(self._gdb, self._frames, listener, self.capabilities.exception_filters)
        self._calls = Calls(self._gdb)
        self._native = Native(self._gdb, self._frames, self._calls)
        self._inspection = Inspection(self._gdb, self._frames, self._native, self._calls)
        self._mutexes = Mutexes(self._gdb, self._frames)
        self._recording: GdbCallTrace | None = None  # a call trace's finished calls come as console lines
        self._time = timetravel.TimeControl(self._gdb, self._calls)
        self._rr: rr.RrReplay | None = None  # debug_launch(record="rr"): rr's replay, gdb's target

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: the executable to debug (built with -g)")
        if spec.record == "rr":  # UNTESTED IN CI (rr.py)
            await self._replay_rr(spec, configure, timeout_s)
            return
        self._life.starting()
        self._mode = "core" if spec.core else "launch"
        self._core = spec.core
        client = await self._start_gdb(timeout_s)
        commands = [f"-file-exec-and-symbols {gdb_arg(spec.program)}"]
        commands += self._language_commands()
        if spec.record == "full" and not spec.core:  # recorded from the first stop
            self._time.start_at_first_stop = spec.record_limit
            spec = spec._replace(env=timetravel.environment(spec, os.environ.get("GLIBC_TUNABLES")))
        if not spec.core:
            stdin_file = self._proc.input_file(spec.stdin) if spec.stdin is not None else None
            sanitized = spec._replace(env=sanitizers.environment(spec.program, spec.env))  # reports stop it
            commands += program_commands(sanitized, self._terminal.open(), stdin_file)
        await client.commands(commands, timeout_s)
        await configure()
        self._life.started()
        if spec.core:
            # -target-select hands its arguments to "target core" verbatim (no unquoting)
            result = await client.command(f"-target-select core {spec.core}", timeout_s)
            await self._report_core(result)
        else:
            await client.command("-exec-run" + (" --start" if spec.stop_on_entry else ""), timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        self._life.starting()  # until configured: the attach stop is not reported, nor the continue
        client = await self._start_gdb(timeout_s)
        commands = []
        if spec.program:
            commands.append(f"-file-exec-and-symbols {gdb_arg(spec.program)}")
        commands += self._language_commands()
        commands += substitute_paths(spec.path_mappings)
        await client.commands(commands, timeout_s)
        self._attach_stop = asyncio.Event()
        if spec.pid is not None:
            self._mode = "attach"
            await client.command(f"-target-attach {int(spec.pid)}", timeout_s)
            try:
                await asyncio.wait_for(self._attach_stop.wait(), timeout_s)
            except asyncio.TimeoutError as exc:
                raise AdapterTimeoutError(f"gdb attached to {spec.pid} but the process did not stop "
                                          f"within {timeout_s:g} s") from exc
        else:
            self._mode = "remote"
            target = f"{spec.host_in_url}:{int(spec.port or 0)}"
            try:
                await client.command(f"-target-select remote {target}", timeout_s)
            except AdapterRequestError as exc:
                raise AdapterRequestError("attach", f"cannot connect to gdbserver at {target}: {exc}; start it "
                                          f"with gdbserver {target} ./program") from exc
        await self._run_configured(configure, timeout_s)

    async def _replay_rr(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        """``record="rr"`` (UNTESTED IN CI, rr.py): rr records the program to its end, or takes the trace given as
        program; gdb connects to rr's replay of it as to a gdbserver and runs through it both ways."""
        self._rr, connect = await rr.prepare(spec, self._listener.on_output, timeout_s)
        self._life.starting()
        self._mode = "remote"
        client = await self._start_gdb(timeout_s)
        await client.commands(self._language_commands() + connect, timeout_s)
        self._time.replay_rr(self._rr.ending)
        await self._run_configured(configure, timeout_s)

    async def _run_configured(self, configure: Configure, timeout_s: float) -> None:
        await configure()
        self._life.started()
        self._execution.ran()
        await self._gdb.client.command("-exec-continue", timeout_s)

    async def _start_gdb(self, timeout_s: float) -> MiClient:
        gdb = shutil.which("gdb")
        if gdb is None:
            raise EnvironmentProblem("gdb is not installed; install it (apt-get install gdb) or use adapter "
                                     "lldb-dap")
        argv = [gdb, "--interpreter=mi3", "-q", "-nx"]
        self._rust_etc = await rust_printer_dir() if self.language == "rust" else None
        if self._rust_etc:
            argv += ["-iex", f"add-auto-load-safe-path {self._rust_etc}"]
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP")}
        process = await self._proc.start(argv, env=env)
        assert process.stdout is not None and process.stdin is not None
        client = self._gdb.mi = MiClient(LineStream(process.stdout, process.stdin, "gdb"), "gdb",
                                         claim_console=lambda text: text.startswith((LOG_MARK, CALL_MARK, RAISED_MARK))
                                         or self._time.claims(text))
        client.on_async("stopped", self._on_stopped)
        client.on_async("running", self._on_running)
        client.on_async("thread-group-started", self._on_group_started)
        client.on_async("breakpoint-modified", self._breakpoints.on_modified)
        client.on_async("breakpoint-deleted", self._breakpoints.on_deleted)
        client.on_async("record-started", self._time.on_started)
        client.on_async("record-stopped", self._time.on_stopped)
        client.on_stream(self._on_stream)
        client.start()
        self._life.spawn(self._watch_client(client), "watch gdb")
        python = client.send(console(python_exec(GDB_PYTHON)))
        try:
            await client.commands(_SETUP, timeout_s)
        except AdapterGoneError as exc:
            raise AdapterGoneError(f"{exc}{self._proc.stderr_hint()}") from exc
        try:
            await asyncio.wait_for(asyncio.shield(python), timeout_s)
            self._gdb.python = True
        except (AdapterRequestError, asyncio.TimeoutError):
            log.info("gdb has no Python: logpoints are unavailable")
            self.capabilities.log_points = False
        return client

    def _language_commands(self) -> list[str]:
        if self._rust_etc:
            return [console("source " + os.path.join(self._rust_etc, "gdb_load_rust_pretty_printers.py"))]
        return []

    async def _watch_client(self, client: MiClient) -> None:
        await client.closed.wait()
        if not self._life.ending:
            self._life.report_terminated(await self._proc.exit_cause())

    # -- gdb's records ----------------------------------------------------------------------------------

    def _on_program_output(self, text: str) -> None:
        self._gdb.output_tail = (self._gdb.output_tail + text)[-OUTPUT_TAIL_CHARS:]
        self._listener.on_output("stdout", text)

    def _on_stream(self, kind: str, text: str) -> None:
        if kind == "target":
            self._listener.on_output("stdout", text)
            return
        self._time.on_text(text)
        if self._time.wedged and self._execution.running:  # gdb repeats the failure forever: nothing stops it
            self._life.report_terminated(timetravel.WEDGED)
        if kind != "console":
            log.debug("gdb %s: %s", kind, text.rstrip())
            return
        self._console_line += text
        *lines, self._console_line = self._console_line.split("\n")
        logged = [line[len(LOG_MARK):] for line in lines if line.startswith(LOG_MARK)]
        for line in lines:
            if line.startswith(CALL_MARK):
                if self._recording is not None:
                    self._recording.on_line(line[len(CALL_MARK):])
            elif line.startswith(RAISED_MARK):
                record = cxx.raised_record(line[len(RAISED_MARK):])
                if record is not None and self._raised_sink is not None:
                    self._raised_sink(record)
            elif not line.startswith(LOG_MARK):
                log.debug("gdb console: %s", line)
        if logged:
            self._listener.on_output(LOGPOINT, "".join(line + "\n" for line in logged))

    def _on_group_started(self, payload: dict[str, Any]) -> None:
        pid = to_int(payload.get("pid"), 0)
        if not pid or self._mode == "remote":
            return
        self.debuggee_pid = pid
        if self._mode == "launch":  # an attached program's process group is not ours to kill
            self._proc.track_debuggee(pid)
        self._proc.watch_debuggee(pid, self._debuggee_gone)

    def _debuggee_gone(self, cause: str) -> None:
        """The program ended and gdb did not say so (killed from outside while stopped). Where the kernel knows how
        it ended, it is an exit, said as the DAP backends say it (the session reads how from the kernel)."""
        if self._proc.program_end() is not None:
            self._life.report_exited(None)
        self._life.report_terminated(cause)

    def _on_running(self, payload: dict[str, Any]) -> None:
        self._execution.ran()
        self._moved()
        if self._life.is_started:
            self._listener.on_continued(None, True)

    def _on_stopped(self, payload: dict[str, Any]) -> None:
        self._execution.halted()
        self._terminal.drain()
        reason = str(payload.get("reason") or "")
        if reason.startswith("exited"):
            self._on_exit(reason, payload)
            return
        if self._life.phase == Phase.STARTING:
            if self._attach_stop is not None:
                self._attach_stop.set()
            return
        if self._life.ending:
            return
        if self._calls.unwinding and reason == "signal-received":
            log.debug("gdb stopped the call polydbg interrupted: not a stop of the program's")
            return
        self._moved()
        interrupting = self._execution.take_interrupt()
        stop = stops.classify(reason, payload, interrupting=interrupting, breakpoints=self._breakpoints,
                              output=self._gdb.output_tail, finishing=self._execution.take_finishing())
        if self._time.involved():  # gdb is asked about the recording first (or starts it): reported after
            self._life.spawn(self._report_recorded(stop, payload, interrupting), "a stop while recording")
            return
        self._report(stop)

    async def _report_recorded(self, stop: stops.Stop, payload: dict[str, Any], interrupting: bool) -> None:
        try:
            stop = await self._time.settle(stop, payload, interrupting)
        except AdapterError as exc:
            log.debug("gdb did not say what the recording is at this stop: %s", exc)
        self._report(stop)

    def _report(self, stop: stops.Stop) -> None:
        self._gdb.stop = stop.facts
        if stop.watch_gone is not None:
            self._breakpoints.forget_watch(stop.watch_gone, stops.WATCH_OUT_OF_SCOPE)
        self._listener.on_stopped(stop.event)

    def _on_exit(self, reason: str, payload: dict[str, Any]) -> None:
        if self._life.exited or self._life.ending:
            return
        code, message = stops.exit_status(reason, payload)
        if message is not None:
            self._listener.on_output("console", message)
        self._life.report_exited(code)
        self._life.report_terminated(None)

    async def _report_core(self, result: MiResult) -> None:
        info = await self._gdb.cmd("-thread-info")
        stop = stops.core_stop(result.console, to_int(info.payload.get("current-thread-id"), 0) or None, self._core)
        self._gdb.stop = stop.facts
        self._listener.on_stopped(stop.event)

    def _moved(self) -> None:
        """The program moved: every ref, varobj and hidden-frame count of the last stop is stale."""
        self._inspection.forget()
        self._frames.forget()
        self._mutexes.forget()

    # -- breakpoints ----------------------------------------------------------------------------------

    @property
    def program_pid(self) -> int | None:
        return self.debuggee_pid if self._mode != "remote" else None

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        return await self._breakpoints.set_breakpoints(file, breakpoints)

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        if not self._gdb.python:
            raise UsageError("this gdb has no Python, which a call trace needs; trace lines with "
                             "debug_trace(points=…) instead")
        if self._recording is not None and not self._recording.stopped:
            raise UsageError("a call trace is already recording in this session: let it end first")
        trace = GdbCallTrace(self._gdb.client, spec, sink)
        await trace.arm()
        self._recording = trace
        return trace

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        return await self._breakpoints.set_function_breakpoints(breakpoints)

    async def set_exception_filters(self, filters: list[str]) -> None:
        await self._breakpoints.set_exception_filters(filters)

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Every C++ exception the program throws, recorded by breakpoints of gdb's Python that never stop
        (``_PolydbgRaised`` in shims/gdb_init.py; raised.py)."""
        if self.language != "cpp" or not self._gdb.python:
            raise UsageError("gdb records raised exceptions of C++ programs only (with its Python); stop on them "
                             "with debug_break(exception=[\"throw\"]) instead")
        self._raised_sink = sink
        await self._gdb.cmd(console("python _polydbg_raised.arm()"))
        return raised.Log(self._gdb, lambda: self._raised_sink is sink, self._forget_raised)

    def _forget_raised(self) -> None:
        self._raised_sink = None

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        return await self._breakpoints.set_data_breakpoints(breakpoints, frame)

    # -- execution ------------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        await self._forward("-exec-continue")

    async def _forward(self, command: str) -> None:
        if self._time.recording:
            await self._time.forward()
        await self._gdb.cmd(command)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        thread = f" --thread {thread_id}" if thread_id else ""
        if kind != "out":
            await self._forward(_STEP_COMMANDS[kind] + thread)
            return
        # the finish record gives only the value: the function it leaves is named first (its stop may be read
        # before the finish's own answer is awaited)
        frame = await self._gdb.cmd("-stack-info-frame" + thread)
        self._execution.finishing = str(as_dict(frame.payload.get("frame")).get("func") or "") or None
        try:
            await self._forward(_STEP_COMMANDS[kind] + thread)
        except (AdapterError, UsageError):
            self._execution.finishing = None  # refused ("not meaningful in the outermost frame"): no stop comes
            raise

    async def pause(self, thread_id: int | None) -> None:
        if not self._execution.running:
            return
        self._execution.interrupting = True
        await self._gdb.cmd("-exec-interrupt")

    # -- time control (timetravel.py) -----------------------------------------------------------------

    async def record(self, action: RecordAction, limit: int) -> str:
        return await self._time.record(action, limit)

    async def reverse(self, thread_id: int, kind: ReverseKind) -> None:
        await self._time.reverse(thread_id, kind)

    async def checkpoint(self) -> int:
        info = await self._gdb.cmd("-thread-info")
        return await self._time.checkpoint(to_int(info.payload.get("current-thread-id"), 0) or None)

    async def restore(self, number: int) -> None:
        text = await self._time.restore(number)
        self._moved()
        info = await self._gdb.cmd("-thread-info")
        thread = to_int(info.payload.get("current-thread-id"), 0) or None
        self._report(stops.Stop(StopEvent("checkpoint", thread, f"checkpoint {number}", text)))

    # -- threads, frames and values -------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        return await self._frames.threads()

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        return await self._frames.stack_trace(thread_id, start, levels)

    async def frames_above(self, thread_id: int) -> list[Frame]:
        return await self._frames.above(thread_id)

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        """The pthread mutexes (std::mutex) threads wait for and their owners, Rust Mutexes without (locks.py)."""
        return await self._mutexes.locks(thread_ids)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        return await self._inspection.scopes(frame)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        return await self._inspection.variables(ref, start, count)

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        return await self._inspection.child_slice(parent, start, count)

    def length_of(self, parent: Variable, children: list[Variable]) -> int | None:
        return parent.indexed_count

    def trace_thread(self) -> str:
        """gdb's global thread number, as the stacks number threads (``$_polydbg_log`` evaluates it)."""
        return "thread {$_gthread}"

    def is_noise(self, variable: Variable) -> bool:
        """The compiler's ``__PRETTY_FUNCTION__`` / ``__func__`` statics in a locals listing."""
        return variable.name in NOISE

    def returned_by(self, variable: Variable) -> str | None:
        return returns.returned_by(variable.name)  # a finish's value, listed first among the caller's locals

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        return await self._inspection.evaluate(expression, frame)

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        return await self._inspection.set_variable(ref, name, value)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        return await self._inspection.exception_info(thread_id)

    # -- native operations ----------------------------------------------------------------------------

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        return await self._native.read_memory(address, count)

    async def write_memory(self, address: int, data: bytes) -> int:
        return await self._native.write_memory(address, data)

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        return await self._native.disassemble(address, count, offset)

    async def registers(self, frame: FrameRef) -> list[Variable]:
        return await self._native.registers(frame)

    async def command(self, text: str, frame: FrameRef | None) -> str:
        return await self._native.command(text, frame)

    # -- ending ---------------------------------------------------------------------------------------

    async def terminate(self) -> None:
        await self._life.end(functools.partial(self._end, kill=True))

    async def detach(self) -> None:
        await self._life.end(functools.partial(self._end, kill=False))

    async def _end(self, kill: bool) -> None:
        """A detach gdb does not answer raises, once everything is ended, saying what became of the program
        (``tracee``: its code is put back first, so it does not die of a breakpoint left in it)."""
        client = self._gdb.mi
        unreleased = ""
        try:
            self._proc.wake()  # gdb stopped by a signal can neither detach nor kill the program
            if client is not None and not client.is_closed:
                try:
                    if not kill:
                        await self._calls.settle()  # gdb still busy with a call would never read the detach
                    await self._leave_target(client, kill)
                except (AdapterError, OSError) as exc:
                    if not kill:
                        unreleased = self._unreleased(str(exc))
                with contextlib.suppress(AdapterError):
                    await client.command("-gdb-exit", GDB_EXIT_S)
                await client.close("session ended")
        finally:
            if kill:
                self._terminal.close()
            else:
                self._terminal.release()  # closing the program's terminal would kill it (SIGHUP)
            await self._proc.end(kill_debuggee=kill)
            if self._rr is not None:
                await self._rr.close()
            self._life.report_terminated(None)
        if unreleased:
            raise AdapterGoneError(unreleased)

    def _unreleased(self, why: str) -> str:
        """What became of the program when gdb did not answer its detach: one gdb started dies with gdb (it has
        the kernel kill it, PTRACE_O_EXITKILL); one it attached to is let go (``tracee``)."""
        if self._mode == "launch":
            return (f"gdb did not answer the detach ({why}), so polydbg ended it, and the program gdb started ended "
                    "with it (gdb has the system kill the programs it starts when it dies); debug_launch starts "
                    "it again")
        return tracee.detach_failed(self.name, why, self.debuggee_pid)

    async def _leave_target(self, client: MiClient, kill: bool) -> None:
        exited = self._life.exited
        local = self.debuggee_pid if self._mode in ("launch", "attach") and not exited else None
        if kill and local is not None:
            with contextlib.suppress(OSError):
                os.kill(local, signal.SIGKILL)  # a ptrace-stopped process dies of SIGKILL at once
            if self._execution.running:  # gdb 13.1 must see a running program die before -gdb-exit, or it
                with contextlib.suppress(asyncio.TimeoutError):  # fails an assertion and dumps core in the cwd
                    await asyncio.wait_for(self._execution.stopped.wait(), END_STEP_S)
            return  # -gdb-exit reaps it
        if self._mode == "core" or exited:
            return
        if self._execution.running:
            await client.command("-exec-interrupt", END_STEP_S)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._execution.stopped.wait(), END_STEP_S)
        if kill:
            await client.command(console("kill"), END_STEP_S)
        else:
            await client.command("-target-detach", END_STEP_S)
