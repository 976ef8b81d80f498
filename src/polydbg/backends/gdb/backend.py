"""GdbMiBackend: the Backend protocol over GDB/MI (how each part maps onto gdb: the package docstring)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shlex
import shutil
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from polydbg import procs
from polydbg.backends.base import (
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
    Variable,
)
from polydbg.backends.gdb.commands import (
    CORE_SIGNAL,
    GDB_PYTHON,
    LOG_MARK,
    REGISTER_LINE,
    WATCH_FLAGS,
    breakpoint_result,
    flatten_disassembly,
    function_key,
    gdb_arg,
    line_key,
    logpoint_call,
    python_exec,
    rust_printer_dir,
    shell_args,
    watch_key,
    watchpoint_of,
)
from polydbg.backends.gdb.terminal import InferiorTerminal
from polydbg.backends.gdb.values import (
    ARRAY_TYPE,
    SUMMARY_ITEMS,
    as_dict,
    child_name,
    children_of,
    element_count,
    expandable,
    is_access_group,
    is_placeholder,
    is_pointer,
    pair_up,
    pointer_expandable,
    short_rust_type,
    short_rust_value,
    summary_of,
    to_int,
)
from polydbg.backends.kit import bpdiff, cxx, hits
from polydbg.backends.kit.bpdiff import Placed
from polydbg.backends.kit.frames import FrameHandles, is_runtime_source, leading
from polydbg.backends.kit.handles import HandleTable, IdMap
from polydbg.backends.kit.panics import panic_message
from polydbg.backends.kit.typenames import short_type
from polydbg.errors import (
    AdapterError,
    AdapterGoneError,
    AdapterRequestError,
    AdapterTimeoutError,
    EnvironmentProblem,
)
from polydbg.mi.client import MiClient, MiResult, mi_quote
from polydbg.transport.streams import LineStream

log = logging.getLogger(__name__)


INSPECT_TIMEOUT_S = 10.0
CHILD_CAP = 256  # children listed when no count is asked (the session pages the rest with child_slice)
OUTPUT_TAIL_CHARS = 4096
SUMMARY_CHILDREN = 32  # compound children per listing that get a one-level {…} summary
_STEP_COMMANDS: dict[StepKind, str] = {"over": "-exec-next", "into": "-exec-step", "out": "-exec-finish"}


@dataclass
class _Ref:
    kind: str  # "locals" | "registers" | "expr" | "varobj"
    frame: FrameRef | None
    expression: str = ""
    varobj: str = ""
    dynamic: bool = False
    hint: str = ""
    names: dict[str, str] = field(default_factory=dict)  # shown child name → child varobj


class GdbMiBackend(Backend):
    """The Backend protocol over GDB/MI."""

    name = "gdb"

    def __init__(self, listener: BackendListener, language: str = "") -> None:
        self._listener = listener
        self.language = language
        self.capabilities = Capabilities(
            conditional_breakpoints=True, hit_conditional_breakpoints=True, log_points=True,
            function_breakpoints=True, set_variable=True, exception_info=True,
            exception_filters=("throw", "catch") if language == "cpp" else ("panic",) if language == "rust" else (),
            memory=True, disassemble=True, registers=True, data_breakpoints=True, raw_command=True)
        self._client: MiClient | None = None
        self._proc = procs.DebuggerProcess("gdb")
        self._tasks: set[asyncio.Task[None]] = set()
        self._mode = "launch"  # launch | core | attach | remote
        self._core: str | None = None
        self._starting = False  # attach handshake: the attach stop is not reported
        self._attach_stop: asyncio.Event | None = None
        self._running = False
        self._interrupting = False
        self._stopped = asyncio.Event()
        self._ending = False
        self._ended: asyncio.Future[None] | None = None
        self._terminated_reported = False
        self._exited = False
        self.debuggee_pid: int | None = None
        self._terminal = InferiorTerminal(self._on_program_output)
        self._output_tail = ""  # the program's latest output (a panic's message is read from it)
        self._console_line = ""
        # breakpoints
        self._line_bps: dict[str, list[Placed[int]]] = {}
        self._function_bps: list[Placed[int]] = []
        self._watch_bps: list[Placed[int]] = []
        self._catch_bps: dict[str, int] = {}
        self._kinds: dict[int, str] = {}  # gdb number → line | function | watch | catch
        self._ids: IdMap[int] = IdMap()  # polydbg breakpoint id ↔ gdb number
        self._hit_vars = 0
        # values
        self._refs: HandleTable[_Ref] = HandleTable()
        self._roots: list[str] = []  # root varobjs created at this stop
        self._general_registers: list[int] | None = None
        self._last_signal: tuple[str, str] | None = None
        self._frames: FrameHandles[None] = FrameHandles()  # machinery frames hidden at this stop
        self._skip_thread: int | None = None  # the thread whose machinery frames are hidden at this stop
        self._last_catch: str | None = None
        self._python = False
        self._rust_etc: str | None = None
        self._register_names: dict[int, str] = {}

    # -- lifecycle --------------------------------------------------------------------------------

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        if not spec.program:
            raise AdapterRequestError("launch", "pass program: the executable to debug (built with -g)")
        self._mode = "core" if spec.core else "launch"
        self._core = spec.core
        client = await self._start_gdb(timeout_s)
        commands = [f"-file-exec-and-symbols {gdb_arg(spec.program)}"]
        commands += await self._language_commands()
        if not spec.core:
            commands.append(f"-inferior-tty-set {mi_quote(self._terminal.open())}")
            arguments, shell = shell_args(spec.args)
            if spec.stdin is not None:  # the shell gdb starts the program with redirects its input
                arguments = f"{arguments} < {shlex.quote(self._proc.input_file(spec.stdin))}".strip()
                shell = True
            commands.append(f"-gdb-set startup-with-shell {'on' if shell else 'off'}")
            if arguments:
                commands.append(f"-interpreter-exec console {mi_quote('set args ' + arguments)}")
            if spec.cwd:
                commands.append(f"-environment-cd {mi_quote(spec.cwd)}")
            for name, value in spec.env:
                commands.append(f"-interpreter-exec console {mi_quote(f'set environment {name}={value}')}")
        await client.commands(commands, timeout_s)
        await configure()
        if spec.core:
            # -target-select hands its arguments to "target core" verbatim (no unquoting)
            result = await client.command(f"-target-select core {spec.core}", timeout_s)
            await self._report_core(result)
        else:
            await client.command("-exec-run" + (" --start" if spec.stop_on_entry else ""), timeout_s)

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        client = await self._start_gdb(timeout_s)
        commands = []
        if spec.program:
            commands.append(f"-file-exec-and-symbols {gdb_arg(spec.program)}")
        commands += await self._language_commands()
        for local, remote in spec.path_mappings:
            commands.append(f"-interpreter-exec console "
                            f"{mi_quote('set substitute-path ' + gdb_arg(remote) + ' ' + gdb_arg(local))}")
        await client.commands(commands, timeout_s)
        self._starting = True
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
        await configure()
        self._starting = False
        self._running = True
        self._stopped.clear()
        await client.command("-exec-continue", timeout_s)

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
        loop = asyncio.get_running_loop()
        client = self._client = MiClient(LineStream(process.stdout, process.stdin, "gdb"), "gdb",
                                         claim_console=lambda text: text.startswith(LOG_MARK))
        client.on_async("stopped", self._on_stopped)
        client.on_async("running", self._on_running)
        client.on_async("thread-group-started", self._on_group_started)
        client.on_async("breakpoint-modified", self._on_breakpoint_modified)
        client.on_async("breakpoint-deleted", self._on_breakpoint_deleted)
        client.on_stream(self._on_stream)
        client.start()
        self._tasks.add(loop.create_task(self._watch_client(client)))
        setup = ["-gdb-set mi-async on", "-gdb-set confirm off", "-gdb-set pagination off",
                 "-gdb-set width 0", "-gdb-set height 0", "-gdb-set breakpoint pending on",
                 "-gdb-set print object on", "-gdb-set print entry-values no",
                 "-enable-pretty-printing"]
        python = client.send(f"-interpreter-exec console {mi_quote(python_exec(GDB_PYTHON))}")
        try:
            await client.commands(setup, timeout_s)
        except AdapterGoneError as exc:
            raise AdapterGoneError(f"{exc}{self._proc.stderr_hint()}") from exc
        try:
            await asyncio.wait_for(asyncio.shield(python), timeout_s)
            self._python = True
        except (AdapterRequestError, asyncio.TimeoutError):
            log.info("gdb has no Python: logpoints are unavailable")
            self.capabilities.log_points = False
        return client

    async def _language_commands(self) -> list[str]:
        if self._rust_etc:
            script = os.path.join(self._rust_etc, "gdb_load_rust_pretty_printers.py")
            return [f"-interpreter-exec console {mi_quote('source ' + script)}"]
        return []

    async def _watch_client(self, client: MiClient) -> None:
        await client.closed.wait()
        if not self._ending:
            self._report_terminated(await self._proc.exit_cause())

    def _on_program_output(self, text: str) -> None:
        self._output_tail = (self._output_tail + text)[-OUTPUT_TAIL_CHARS:]
        self._listener.on_output("stdout", text)

    def _report_terminated(self, cause: str | None) -> None:
        if not self._terminated_reported:
            self._terminated_reported = True
            self._listener.on_terminated(cause)

    # -- events ---------------------------------------------------------------------------------------

    def _on_stream(self, kind: str, text: str) -> None:
        if kind == "target":
            self._listener.on_output("stdout", text)
            return
        if kind != "console":
            log.debug("gdb %s: %s", kind, text.rstrip())
            return
        self._console_line += text
        *lines, self._console_line = self._console_line.split("\n")
        logged = [line[len(LOG_MARK):] for line in lines if line.startswith(LOG_MARK)]
        for line in lines:
            if not line.startswith(LOG_MARK):
                log.debug("gdb console: %s", line)
        if logged:
            self._listener.on_output("console", "".join(line + "\n" for line in logged))

    def _on_group_started(self, payload: dict[str, Any]) -> None:
        pid = to_int(payload.get("pid"), 0)
        if not pid or self._mode == "remote":
            return
        self.debuggee_pid = pid
        if self._mode == "launch":  # an attached program's process group is not ours to kill
            self._proc.track_debuggee(pid)
        self._proc.watch_debuggee(pid, self._report_terminated)

    def _on_running(self, payload: dict[str, Any]) -> None:
        self._running = True
        self._stopped.clear()
        self._invalidate()
        if not self._starting and not self._ending:
            self._listener.on_continued(None, True)

    def _on_stopped(self, payload: dict[str, Any]) -> None:
        self._running = False
        self._stopped.set()
        self._terminal.drain()
        reason = str(payload.get("reason") or "")
        if reason.startswith("exited"):
            self._on_exit(reason, payload)
            return
        if self._starting:
            if self._attach_stop is not None:
                self._attach_stop.set()
            return
        if self._ending:
            return
        self._invalidate()
        self._listener.on_stopped(self._stop_event(reason, payload))

    def _stop_event(self, reason: str, payload: dict[str, Any]) -> StopEvent:
        thread = to_int(payload.get("thread-id"), 0) or None
        interrupting, self._interrupting = self._interrupting, False
        self._last_signal = None
        self._last_catch = None
        self._skip_thread = None
        if reason == "breakpoint-hit":
            number = to_int(payload.get("bkptno"), 0)
            kind = self._kinds.get(number)
            if kind is None and payload.get("disp") == "del":
                return StopEvent("entry", thread, "stopped at the program's entry (main)")
            if kind == "catch":
                return self._catch_event(thread, number)
            word = "function breakpoint" if kind == "function" else "breakpoint"
            return StopEvent(word, thread, f"breakpoint {number}", hit_breakpoint_ids=self._hit(number))
        if reason in ("end-stepping-range", "location-reached"):
            return StopEvent("step", thread)
        if reason == "function-finished":
            value = payload.get("return-value")
            text = f"returned {value}" if value is not None else None
            return StopEvent("step", thread, text)
        if reason == "signal-received":
            name = str(payload.get("signal-name") or "signal")
            meaning = str(payload.get("signal-meaning") or "")
            if interrupting and name in ("SIGINT", "SIGTRAP", "SIGSTOP", "0"):
                return StopEvent("pause", thread, "paused")
            self._last_signal = (name, meaning)
            if name == "SIGABRT":
                self._skip_thread = thread  # abort()/assert(): report the frame that called them
            return StopEvent("exception", thread, name, f"{name} ({meaning})" if meaning else name)
        if reason in ("watchpoint-trigger", "read-watchpoint-trigger", "access-watchpoint-trigger"):
            wpt = watchpoint_of(payload)
            number = to_int(wpt.get("number"), 0)
            value = as_dict(payload.get("value"))
            if "old" in value and "new" in value:
                text = f"{wpt.get('exp')}: {value['old']} → {value['new']}"
            elif "new" in value or "value" in value:
                text = f"{wpt.get('exp')} = {value.get('new', value.get('value'))}"
            else:
                text = str(wpt.get("exp") or "")
            return StopEvent("data breakpoint", thread, f"watchpoint {number}", text,
                             hit_breakpoint_ids=self._hit(number))
        if reason == "watchpoint-scope":
            number = to_int(payload.get("wpnum"), 0)
            self._forget_watch(number, "the watched expression went out of scope (its frame returned)")
            return StopEvent("data breakpoint", thread, f"watchpoint {number} deleted",
                             "the watched expression went out of scope; its frame returned",
                             hit_breakpoint_ids=self._hit(number))
        if reason in ("exception-caught", "exception-thrown"):
            return self._catch_event(thread, to_int(payload.get("bkptno"), 0))
        if interrupting or not reason:
            return StopEvent("pause", thread, "paused")
        return StopEvent(reason.replace("-", " "), thread)

    def _catch_event(self, thread: int | None, number: int) -> StopEvent:
        what = next((f for f, n in self._catch_bps.items() if n == number), "throw")
        self._last_catch = what
        self._skip_thread = thread  # __cxa_throw / __cxa_begin_catch: report the frame that threw
        if what == "panic":  # the hook printed the message before calling rust_panic (the pty is drained)
            message = panic_message(self._output_tail) or "Rust panic"
            return StopEvent("exception", thread, message, message)
        text = "C++ exception thrown" if what == "throw" else "C++ exception caught"
        return StopEvent("exception", thread, text, text)

    def _hit(self, number: int) -> tuple[int, ...]:
        bp_id = self._ids.id_of(number) if number else None
        return (bp_id,) if bp_id is not None else ()

    def _on_exit(self, reason: str, payload: dict[str, Any]) -> None:
        if self._exited or self._ending:
            return
        self._exited = True
        if reason == "exited-signalled":
            name = str(payload.get("signal-name") or "signal")
            meaning = str(payload.get("signal-meaning") or "")
            self._listener.on_output("console", f"program terminated by {name}" +
                                     (f" ({meaning})" if meaning else "") + "\n")
            number = getattr(signal, name, None)
            code: int | None = 128 + int(number) if number is not None else None
        elif reason == "exited":
            code = to_int(payload.get("exit-code"), 0, 8)  # gdb prints the exit code in octal
        else:
            code = 0
        self._listener.on_exited(code)
        self._report_terminated(None)

    def _on_breakpoint_modified(self, payload: dict[str, Any]) -> None:
        bkpt = payload.get("bkpt")
        if not isinstance(bkpt, dict):
            return
        number = to_int(bkpt.get("number"), 0)
        bp_id = self._ids.id_of(number)
        if bp_id is None or self._kinds.get(number) not in ("line", "function"):
            return
        for entry in self._all_bps():
            if entry.handle == number:
                result = breakpoint_result(bkpt)
                if result != entry.result:
                    entry.result = result
                    self._listener.on_breakpoint_changed(bp_id, result)
                return

    def _on_breakpoint_deleted(self, payload: dict[str, Any]) -> None:
        number = to_int(payload.get("id"), 0)
        for entry in self._all_bps():
            if entry.handle == number:
                entry.handle = None

    def _forget_watch(self, number: int, message: str) -> None:
        bp_id = self._ids.id_of(number)
        for entry in self._watch_bps:
            if entry.handle == number:
                entry.handle = None
                entry.result = BreakpointResult(False, message=message)
                if bp_id is not None:
                    self._listener.on_breakpoint_changed(bp_id, entry.result)

    def _all_bps(self) -> list[Placed[int]]:
        out = [bp for bps in self._line_bps.values() for bp in bps]
        return out + self._function_bps + self._watch_bps

    # -- commands -------------------------------------------------------------------------------------

    @property
    def client(self) -> MiClient:
        if self._client is None:
            raise AdapterGoneError("gdb is not running")
        return self._client

    async def _cmd(self, command: str, timeout: float = INSPECT_TIMEOUT_S) -> MiResult:
        return await self.client.command(command, timeout)

    async def _cmds(self, commands: list[str], timeout: float = INSPECT_TIMEOUT_S) -> list[MiResult]:
        return await self.client.commands(commands, timeout)

    def _fire(self, command: str) -> None:
        """Send a command nobody waits for (its failure is only logged)."""
        if self._client is not None and not self._client.is_closed:
            self._client.send(command)

    async def _where(self, frame: FrameRef | None) -> str:
        """The ``--thread T --frame L`` options selecting a frame (L counts the hidden frames too)."""
        if frame is None or not frame.thread_id:
            return ""
        level = frame.index + await self._hidden(frame.thread_id)
        return f"--thread {frame.thread_id} --frame {level} "

    def _invalidate(self) -> None:
        """The program moved: every ref and varobj of the last stop is stale."""
        for name in self._roots:
            self._fire(f"-var-delete {mi_quote(name)}")
        self._roots.clear()
        self._refs.clear()
        self._frames.clear()

    def _ref(self, key: tuple[Any, ...], make: Callable[[], _Ref]) -> int:
        return self._refs.add(make(), key)

    # -- breakpoints ----------------------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        def insert(bp: SourceBreakpoint) -> Awaitable[Placed[int]]:
            where = f"--source {mi_quote(file)} --line {bp.line}"
            return self._insert("line", line_key(bp), where, bp.condition, bp.hit_condition, bp.log_message)
        entries = await self._replace(self._line_bps.get(file, []), breakpoints, line_key, insert)
        self._line_bps[file] = entries
        return [e.result for e in entries]

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        def insert(bp: FunctionBreakpoint) -> Awaitable[Placed[int]]:
            return self._insert("function", function_key(bp), f"--function {mi_quote(bp.name)}", bp.condition,
                                bp.hit_condition, None)
        self._function_bps = await self._replace(self._function_bps, breakpoints, function_key, insert)
        return [e.result for e in self._function_bps]

    async def _replace(self, placed: list[Placed[int]], wanted: list[Any], key: Callable[[Any], tuple[Any, ...]],
                       insert: Callable[[Any], Awaitable[Placed[int]]],
                       reusable: Callable[[Placed[int]], bool] = lambda _p: True) -> list[Placed[int]]:
        """Keep the breakpoints whose spec is unchanged, delete the others, insert the new ones; gdb's
        numbers are bound to the specs' polydbg ids."""
        plan = bpdiff.plan(placed, wanted, key, reusable)
        doomed = [entry.handle for entry in plan.delete if entry.handle is not None]
        if doomed:
            for number in doomed:
                self._kinds.pop(number, None)
            with contextlib.suppress(AdapterRequestError):
                await self._cmd("-break-delete " + " ".join(str(n) for n in doomed))
        inserted = await asyncio.gather(*(insert(spec) for spec in plan.to_insert(wanted)))
        entries = bpdiff.merge(plan.keep, inserted)
        for spec, entry in zip(wanted, entries, strict=True):
            if entry.handle is not None:
                self._ids.bind(spec.id, entry.handle)
        return entries

    async def _insert(self, kind: str, key: tuple[Any, ...], where: str, condition: str | None,
                      hit_condition: str | None, log_message: str | None) -> Placed[int]:
        options = ["-f"]
        conditions = [f"({condition})"] if condition else []
        if hit_condition:
            try:
                op, count = hits.HitCondition.parse(hit_condition)
            except ValueError:
                return Placed(key, None, hits.refusal(hit_condition))
            if op == ">=":
                if count > 1:
                    options.append(f"-i {count - 1}")
            elif op == ">":
                options.append(f"-i {count}")
            else:
                self._hit_vars += 1
                var = f"$_polydbg_h{self._hit_vars}"
                await self._cmd(f"-interpreter-exec console {mi_quote(f'set {var} = 0')}")
                test = {"==": "==", "<": "<", "<=": "<="}.get(op)
                conditions.append(f"(++{var}) {test} {count}" if test else f"(++{var}) % {count} == 0")
        if conditions:
            options.append(f"-c {mi_quote(' && '.join(conditions))}")
        if log_message is not None:
            if not self._python:
                return Placed(key, None, BreakpointResult(False, message="logpoints need gdb with Python"))
            command = f"-dprintf-insert {' '.join(options)} {where} \"%.0d\" {mi_quote(logpoint_call(log_message))}"
        else:
            command = f"-break-insert {' '.join(options)} {where}"
        try:
            result = await self._cmd(command)
        except AdapterRequestError as exc:
            return Placed(key, None, BreakpointResult(False, message=exc.message))
        bkpt = as_dict(result.payload.get("bkpt"))
        number = to_int(bkpt.get("number"), 0) or None
        if number is not None:
            self._kinds[number] = kind
        return Placed(key, number, breakpoint_result(bkpt))

    async def set_exception_filters(self, filters: list[str]) -> None:
        wanted = [f for f in filters if f in self.capabilities.exception_filters]
        for name in list(self._catch_bps):
            if name not in wanted:
                number = self._catch_bps.pop(name)
                self._kinds.pop(number, None)
                with contextlib.suppress(AdapterRequestError):
                    await self._cmd(f"-break-delete {number}")
        for name in wanted:
            if name not in self._catch_bps:
                # a Rust panic unwinds without __cxa_throw: "catching" one is stopping at rust_panic
                command = "-break-insert -f rust_panic" if name == "panic" else f"-catch-{name}"
                result = await self._cmd(command)
                bkpt = as_dict(result.payload.get("bkpt"))
                number = to_int(bkpt.get("number"), 0)
                if number:
                    self._catch_bps[name] = number
                    self._kinds[number] = "catch"

    async def set_data_breakpoints(self, breakpoints: list[DataBreakpoint],
                                   frame: FrameRef | None) -> list[BreakpointResult]:
        def insert(bp: DataBreakpoint) -> Awaitable[Placed[int]]:
            return self._watch(bp, frame)
        self._watch_bps = await self._replace(self._watch_bps, breakpoints, watch_key, insert,
                                              reusable=lambda entry: entry.handle is not None)
        return [e.result for e in self._watch_bps]

    async def _watch(self, bp: DataBreakpoint, frame: FrameRef | None) -> Placed[int]:
        key = watch_key(bp)
        try:
            result = await self._cmd(f"-break-watch {await self._where(frame)}{WATCH_FLAGS[bp.access]}"
                                     f"{mi_quote(bp.expression)}")
        except AdapterRequestError as exc:
            return Placed(key, None, BreakpointResult(False, message=exc.message))
        wpt = watchpoint_of(result.payload)
        number = to_int(wpt.get("number"), 0) or None
        if number is not None:
            self._kinds[number] = "watch"
        return Placed(key, number, BreakpointResult(number is not None))

    # -- execution ------------------------------------------------------------------------------------

    async def resume(self, thread_id: int | None) -> None:
        await self._cmd("-exec-continue")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        thread = f" --thread {thread_id}" if thread_id else ""
        await self._cmd(_STEP_COMMANDS[kind] + thread)

    async def pause(self, thread_id: int | None) -> None:
        if not self._running:
            return
        self._interrupting = True
        await self._cmd("-exec-interrupt")

    # -- inspection -----------------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        result = await self._cmd("-thread-info")
        threads = result.payload.get("threads") or []
        out = []
        for t in threads if isinstance(threads, list) else []:
            if isinstance(t, dict) and t.get("id"):
                out.append(Thread(to_int(t["id"]), str(t.get("name") or t.get("target-id") or f"thread {t['id']}")))
        return out

    async def _hidden(self, thread_id: int) -> int:
        """At a C++ throw/catch or SIGABRT stop, the runtime's frames above the first frame whose source
        file is here are hidden on the stopped thread, so frame 0 is the code that threw or called
        abort()/assert()."""
        if thread_id != self._skip_thread:
            return 0
        hidden = self._frames.hidden(thread_id)
        if hidden is None:
            hidden = 0
            with contextlib.suppress(AdapterRequestError):
                top = await self._cmd(f"-stack-list-frames --thread {thread_id} 0 15")
                listed = [f for f in top.payload.get("stack") or [] if isinstance(f, dict)]
                hidden = leading(listed, _machinery)
            self._frames.hide(thread_id, hidden)
        return hidden

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        thread = f"--thread {thread_id} " if thread_id else ""
        skip = await self._hidden(thread_id)
        frames, total = await self._frames_of(thread, start + skip, levels)
        return frames, (total - skip if total is not None else None)

    async def _frames_of(self, thread: str, start: int, levels: int) -> tuple[list[Frame], int | None]:
        result = await self._cmd(f"-stack-list-frames {thread}{start} {start + levels}")
        stack = result.payload.get("stack") or []
        frames = []
        for f in stack if isinstance(stack, list) else []:
            if not isinstance(f, dict):
                continue
            fullname = f.get("fullname")
            path = fullname if isinstance(fullname, str) and os.path.isabs(fullname) else f.get("file")
            frames.append(Frame(name=str(f.get("func") or "??"), file=str(path) if path else None,
                                line=to_int(f.get("line")) or None, pc=to_int(f.get("addr"), 0, 16) or None))
        if len(frames) <= levels:
            return frames, start + len(frames)
        depth = await self._cmd(f"-stack-info-depth {thread}".rstrip())
        return frames[:levels], to_int(depth.payload.get("depth")) or None

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        return [
            Scope("Locals", self._ref(("locals", frame), lambda: _Ref("locals", frame)), hint="locals"),
            Scope("Registers", self._ref(("registers", frame), lambda: _Ref("registers", frame)),
                  expensive=True, hint="registers"),
        ]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        info = self._refs.get(ref)
        if info is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        if info.kind == "locals":
            return await self._locals(info)
        if info.kind == "registers":
            return await self.registers(info.frame or FrameRef(0, 0))
        return await self._children(ref, info, start or 0, count if count is not None else CHILD_CAP)

    async def _locals(self, info: _Ref) -> list[Variable]:
        context = await self._where(info.frame)
        simple, full = await self._cmds([f"-stack-list-variables {context}--simple-values",
                                         f"-stack-list-variables {context}--all-values"])
        kinds = simple.payload.get("variables") or []
        values = full.payload.get("variables") or []
        if len(kinds) != len(values):
            by_name = {str(v.get("name")): v for v in values if isinstance(v, dict)}
            values = [by_name.get(str(k.get("name")), {}) for k in kinds]
        out = []
        for kind, value in zip(kinds, values, strict=False):
            if not isinstance(kind, dict):
                continue
            name = str(kind.get("name"))
            text = str(value.get("value", kind.get("value", "")) if isinstance(value, dict) else "")
            out.append(self._value(name, name, text, kind.get("type"), "value" not in kind, info.frame))
        return out

    def _type(self, type_: Any) -> str | None:
        if not type_:
            return None
        return short_rust_type(str(type_)) if self.language == "rust" else short_type(str(type_))

    def _shown(self, value: str) -> str:
        return short_rust_value(value) if self.language == "rust" else value

    def _value(self, name: str, expression: str, value: str, type_: Any, compound: bool | None,
               frame: FrameRef | None) -> Variable:
        type_text = self._type(type_)
        ref = 0
        count = None
        if expandable(type_text, value, compound):
            ref = self._ref(("expr", frame, expression), lambda: _Ref("expr", frame, expression))
            count = element_count(type_text, value)
        return Variable(name=name, value=self._shown(value), type=type_text, ref=ref, evaluate_name=expression,
                        indexed_count=count)

    async def _varobj(self, info: _Ref) -> _Ref:
        """Turn an expression ref into a varobj (created on first expansion)."""
        if info.kind == "expr":
            result = await self._cmd(f"-var-create {await self._where(info.frame)}- * {mi_quote(info.expression)}")
            info.kind = "varobj"
            info.varobj = str(result.payload.get("name"))
            info.dynamic = result.payload.get("dynamic") == "1"
            info.hint = str(result.payload.get("displayhint") or "")
            self._roots.append(info.varobj)
        return info

    async def _list_children(self, varobjs: list[str], start: int, count: int) -> list[list[dict[str, Any]]]:
        """The children of several varobjs in one round trip, C++ access groups flattened."""
        results = await self._cmds([f"-var-list-children --all-values {mi_quote(v)} {start} {start + count}"
                                    for v in varobjs])
        listed = [children_of(r.payload) for r in results]
        groups = [kid for kids in listed for kid in kids if is_access_group(kid)]
        if groups:
            nested = await self._list_children([str(g["name"]) for g in groups], 0, CHILD_CAP)
            inner = {str(g["name"]): kids for g, kids in zip(groups, nested, strict=True)}
            listed = [[k for kid in kids for k in (inner.get(str(kid["name"]), []) if is_access_group(kid)
                                                  else [kid])] for kids in listed]
        return listed

    async def _children(self, ref: int, info: _Ref, start: int, count: int) -> list[Variable]:
        info = await self._varobj(info)
        [kids] = await self._list_children([info.varobj], start, count)
        if info.hint == "map":
            kids = pair_up(kids)
        compound = [k for k in kids if is_placeholder(str(k.get("value", ""))) and k.get("name")][:SUMMARY_CHILDREN]
        summaries = await self._summaries(info, compound) if compound else {}
        out = []
        for kid in kids:
            name = child_name(kid)
            varobj = str(kid.get("name"))
            info.names[name] = varobj
            value = summaries.get(varobj, str(kid.get("value", "")))
            type_text = self._type(kid.get("type"))
            dynamic = kid.get("dynamic") == "1"
            hint = str(kid.get("displayhint") or "")
            if type_text and is_pointer(type_text):
                has_children = pointer_expandable(type_text, value)
            else:
                has_children = to_int(kid.get("numchild")) > 0 or (dynamic and hint != "string")
            if has_children:
                made = _Ref("varobj", info.frame, varobj=varobj, dynamic=dynamic, hint=hint)
                child_ref = self._ref(("varobj", varobj), lambda made=made: made)  # type: ignore[misc]
                count_of = to_int(kid.get("numchild")) if not dynamic and type_text and ARRAY_TYPE.search(type_text) \
                    else element_count(type_text, value)
            else:
                child_ref, count_of = 0, None
            out.append(Variable(name=name, value=self._shown(value), type=type_text, ref=child_ref,
                                indexed_count=count_of))
        return out

    async def _summaries(self, parent: _Ref, compound: list[dict[str, Any]]) -> dict[str, str]:
        """Printed values for children a varobj shows as ``{...}`` / ``[N]``: gdb's own print of the
        child's path expression where it has one (not below a pretty printer), else a summary built
        from the child's first members."""
        names = [str(k["name"]) for k in compound]
        out: dict[str, str] = {}
        if not parent.dynamic:
            paths = [(n, self.client.send(f"-var-info-path-expression {mi_quote(n)}")) for n in names]
            where = await self._where(parent.frame)
            printed = []
            for name, future in paths:
                with contextlib.suppress(AdapterError):
                    [path] = await self.client.gather([(name, future)], INSPECT_TIMEOUT_S)
                    expression = str(path.payload.get("path_expr") or "")
                    if expression:
                        printed.append((name, self.client.send(
                            f"-data-evaluate-expression {where}{mi_quote(expression)}")))
            for name, future in printed:
                with contextlib.suppress(AdapterError):
                    [value] = await self.client.gather([(name, future)], INSPECT_TIMEOUT_S)
                    out[name] = str(value.payload.get("value", ""))
        rest = [k for k in compound if str(k["name"]) not in out]
        if rest:
            with contextlib.suppress(AdapterRequestError):
                nested = await self._list_children([str(k["name"]) for k in rest], 0, SUMMARY_ITEMS + 1)
                for kid, grandkids in zip(rest, nested, strict=True):
                    out[str(kid["name"])] = summary_of(grandkids, str(kid.get("displayhint") or ""))
        return out

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        info = self._refs.get(parent.ref)
        if info is None or info.kind in ("locals", "registers"):
            return None
        return await self._children(parent.ref, info, start, count)

    def length_of(self, parent: Variable, children: list[Variable]) -> int | None:
        return parent.indexed_count

    def is_noise(self, variable: Variable) -> bool:
        """The compiler's ``__PRETTY_FUNCTION__`` / ``__func__`` statics in a locals listing."""
        return variable.name in ("__PRETTY_FUNCTION__", "__func__", "__FUNCTION__")

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        value, kind = await self._evaluate_with_type(expression, await self._where(frame))
        return self._value(expression, expression, value, kind, None, frame)

    async def _evaluate_with_type(self, expression: str, where: str) -> tuple[str, str | None]:
        sent = [(c, self.client.send(c)) for c in (
            f"-data-evaluate-expression {where}{mi_quote(expression)}",
            f"-interpreter-exec {where}console {mi_quote('whatis ' + expression)}")]
        value = await self.client.gather(sent[:1], INSPECT_TIMEOUT_S)
        try:
            [whatis] = await self.client.gather(sent[1:], INSPECT_TIMEOUT_S)
            kind = whatis.console.strip().removeprefix("type = ") or None
        except AdapterRequestError:
            kind = None
        return str(value[0].payload.get("value", "")), kind

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        info = self._refs.get(ref)
        if info is None:
            raise AdapterRequestError("setVariable", f"ref {ref} is not valid at this stop")
        if info.kind in ("locals", "registers"):
            target = ("$" + name.lstrip("$")) if info.kind == "registers" else name
            where = await self._where(info.frame)
            await self._cmd(f"-data-evaluate-expression {where}{mi_quote(f'{target} = ({value})')}")
            text, kind = await self._evaluate_with_type(target, where)
            return self._value(name, target, text, kind, None, info.frame)
        info = await self._varobj(info)
        if name not in info.names:
            await self._children(ref, info, 0, CHILD_CAP)
        child = info.names.get(name)
        if child is None:
            raise AdapterRequestError("setVariable", f"no member {name!r} here")
        await self._cmd(f"-var-assign {mi_quote(child)} {mi_quote(value)}")
        for variable in await self._children(ref, info, 0, CHILD_CAP):
            if variable.name == name:
                return variable
        raise AdapterRequestError("setVariable", f"{name} is gone after the assignment")

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if self._last_signal is not None:
            name, meaning = self._last_signal
            return ExceptionDetail(type=name, message=meaning or name)
        if self._last_catch is not None:
            with contextlib.suppress(AdapterError):
                result = await self._cmd(f"-data-evaluate-expression --thread {thread_id} --frame 0 $_exception")
                return ExceptionDetail(type="C++ exception", message=str(result.payload.get("value", "")))
            if self._last_catch == "panic":
                message = panic_message(self._output_tail)
                return ExceptionDetail(type="panic", message=(message or "Rust panic").removeprefix("panicked at "))
            if self._last_catch == "throw":
                thrown = await self._thrown(thread_id)
                if thrown is not None:
                    return thrown
            return ExceptionDetail(type="C++ exception", message=f"exception {self._last_catch}")
        return None

    async def _thrown(self, thread_id: int) -> ExceptionDetail | None:
        """Type and message of the exception in __cxa_throw's arguments (see kit.cxx); None off x86-64."""
        first, second = (f"${r}" for r in cxx.ARGUMENT_REGISTERS)
        where = f"--thread {thread_id} --frame 0 "
        try:
            name = await self._cmd(f"-data-evaluate-expression {where}{mi_quote(f'*(char **)({second} + 8)')}")
        except AdapterError:
            return None
        mangled = cxx.printed_string(str(name.payload.get("value", "")))
        if not mangled:
            return None
        type_ = cxx.demangle_type(mangled)
        message = ""
        if type_ in cxx.STRING_MESSAGE_TYPES:
            with contextlib.suppress(AdapterError):
                text = await self._cmd(f"-data-evaluate-expression {where}{mi_quote(f'*(char **)({first} + 8)')}")
                message = cxx.printed_string(str(text.payload.get("value", ""))) or ""
        return ExceptionDetail(type=type_, message=message)

    # -- native operations ----------------------------------------------------------------------------

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        result = await self._cmd(f"-data-read-memory-bytes {address:#x} {count}")
        blocks = result.payload.get("memory") or []
        data = b""
        for block in sorted((b for b in blocks if isinstance(b, dict)), key=lambda b: to_int(b.get("begin"), 0, 16)):
            begin = to_int(block.get("begin"), 0, 16) + to_int(block.get("offset"), 0, 16)
            if begin != address + len(data):
                break
            data += bytes.fromhex(str(block.get("contents", "")))
        return MemoryBlock(address=address, data=data[:count], unreadable=max(0, count - len(data)))

    async def write_memory(self, address: int, data: bytes) -> int:
        await self._cmd(f"-data-write-memory-bytes {address:#x} {data.hex()}")
        return len(data)

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        back = max(0, -offset)
        start = address
        if back:
            probe = await self._cmd(f"-data-disassemble -s {address:#x} -e {address + 1:#x} -- 0")
            insns = probe.payload.get("asm_insns") or []
            first = insns[0] if insns and isinstance(insns[0], dict) else {}
            into = to_int(first.get("offset"), -1)
            if first.get("func-name") and 0 <= into <= 1024:
                start = address - into  # from the function's start: instruction boundaries are sure
        end = address + (count + max(0, offset)) * 16 + 16
        result = await self._cmd(f"-data-disassemble -s {start:#x} -e {end:#x} -- 4")
        insns_out = flatten_disassembly(result.payload.get("asm_insns") or [])
        index = next((i for i, ins in enumerate(insns_out) if ins.address >= address), len(insns_out))
        lo = max(0, index + offset)
        return insns_out[lo:lo + count]

    async def registers(self, frame: FrameRef) -> list[Variable]:
        where = await self._where(frame)
        if self._general_registers is None:
            names, general = await self._cmds(["-data-list-register-names",
                                               f"-interpreter-exec {where}console \"info registers\""])
            numbers = {str(n): i for i, n in enumerate(names.payload.get("register-names") or []) if n}
            wanted = [m.group(1) for m in map(REGISTER_LINE.match, general.console.splitlines())
                      if m and not re.fullmatch(r"k[0-7]", m.group(1))]  # AVX-512 masks are not general
            self._general_registers = [numbers[n] for n in wanted if n in numbers]
            self._register_names = {i: n for n, i in numbers.items()}
        numbers_text = " ".join(str(n) for n in self._general_registers)
        result = await self._cmd(f"-data-list-register-values {where}--skip-unavailable x {numbers_text}")
        out = []
        for item in result.payload.get("register-values") or []:
            if isinstance(item, dict):
                name = self._register_names.get(to_int(item.get("number"), -1), str(item.get("number")))
                out.append(Variable(name=name, value=str(item.get("value", "")), type=None))
        return out

    async def command(self, text: str, frame: FrameRef | None) -> str:
        result = await self._cmd(f"-interpreter-exec {await self._where(frame)}console {mi_quote(text)}")
        return result.console or result.log

    # -- core files -----------------------------------------------------------------------------------

    async def _report_core(self, result: MiResult) -> None:
        match = CORE_SIGNAL.search(result.console)
        info = await self._cmd("-thread-info")
        thread = to_int(info.payload.get("current-thread-id"), 0) or None
        name = os.path.basename(self._core or "core")
        if match:
            self._last_signal = (match.group(1), match.group(2).strip())
            event = StopEvent("exception", thread, f"post-mortem: core file {name} ({match.group(1)})",
                              f"{match.group(1)} ({match.group(2).strip()})")
        else:
            event = StopEvent("core", thread, f"post-mortem: core file {name}")
        self._listener.on_stopped(event)

    # -- ending ---------------------------------------------------------------------------------------

    async def terminate(self) -> None:
        await self._end_once(kill=True)

    async def detach(self) -> None:
        await self._end_once(kill=False)

    async def _end_once(self, kill: bool) -> None:
        """Idempotent: the first caller does the work, later callers wait for it."""
        if self._ended is None:
            self._ended = asyncio.ensure_future(self._end(kill))
        await asyncio.shield(self._ended)

    async def _end(self, kill: bool) -> None:
        self._ending = True
        client = self._client
        try:
            if client is not None and not client.is_closed:
                with contextlib.suppress(AdapterError, OSError):
                    await self._leave_target(client, kill)
                with contextlib.suppress(AdapterError):
                    await client.command("-gdb-exit", 1.0)
                await client.close("session ended")
        finally:
            self._terminal.close()
            await self._proc.end(kill_debuggee=kill)
            for task in list(self._tasks):
                task.cancel()
            self._report_terminated(None)

    async def _leave_target(self, client: MiClient, kill: bool) -> None:
        local = self.debuggee_pid if self._mode in ("launch", "attach") and not self._exited else None
        if kill and local is not None:
            with contextlib.suppress(OSError):
                os.kill(local, signal.SIGKILL)  # a ptrace-stopped process dies of SIGKILL at once
            return  # -gdb-exit reaps it
        if self._mode == "core" or self._exited:
            return
        if self._running:
            await client.command("-exec-interrupt", 2.0)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._stopped.wait(), 2.0)
        if kill:
            await client.command(f"-interpreter-exec console {mi_quote('kill')}", 2.0)
        else:
            await client.command("-target-detach", 2.0)


def _machinery(frame: dict[str, Any]) -> bool:
    """A runtime frame above the user's at a throw, panic or abort: no source here, or Rust's std."""
    fullname = str(frame.get("fullname") or "")
    return not (frame.get("line") and os.path.isfile(fullname)) or is_runtime_source(fullname)
