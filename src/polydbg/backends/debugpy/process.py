"""One Python process through debugpy (``DebugpyProcess``): starting or reaching the adapter, the launch
and attach arguments, and pydevd's answers shaped (children, tracebacks, stacks, breakpoint messages).

The program and each of its child processes is one ``DebugpyProcess`` (the children's class is in
``children``); ``backend.DebugpyBackend`` puts them together. The adapter runs under the
``shims/adapter.py`` shim and the debuggee under ``shims/debuggee.py`` (TCP_NODELAY, see the
package docstring for why).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections import Counter
from collections.abc import Sequence
from typing import Any, ClassVar

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
    StepKind,
    Task,
    Thread,
    ThreadLocks,
    Variable,
)
from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.debugpy import calls, container, held, inject, lines, probe, python, reload, shimframe, threads
from polydbg.backends.debugpy.pydevd_log import PydevdLog
from polydbg.backends.kit import returns, shims, thrown, timeouts
from polydbg.backends.recording import CallSink, CallSpec, RaisedSink, Recorder
from polydbg.backends.timecontrol import Reloaded
from polydbg.errors import AdapterError, AdapterRequestError, EnvironmentProblem, SessionError, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)
ADAPTER_SHIM = shims.source(__file__, "adapter.py")
DEBUGGEE_SHIM = shims.source(__file__, "debuggee.py")
VALUES = shims.path(__file__, "pydevd")  # pydevd's extensions: compact numpy, pandas and sqlite3 values
CURRENT_FRAME = " (Current frame)"  # pydevd's mark on the frame a user-unhandled exception is shown at
NO_DESCRIPTION = "exception: no description"  # pydevd's message for an exception without one


class DebugpyProcess(DapBackend):
    """One Python process through debugpy (the program, or one of its children)."""

    name = "debugpy"
    adapter_id = "debugpy"
    evaluate_context: ClassVar[EvaluateContext] = "repl"  # statements too; pydevd prints their output
    pause_limits: ClassVar[str] = (
        "debugpy stops a thread only when it runs Python code it traces (your code: library code is "
        "skipped), and no thread has: each is blocked (a lock, socket, sleep or C call) or running only "
        "library code, like a server's accept loop (a program debug_launch started is stopped anyway; an attached "
        "one is not). A thread stops as soon as it runs your code (a request to the server, say). Set a breakpoint "
        "where you expect it and debug_continue, or debug_terminate")
    busy_hint: ClassVar[str] = (
        "debugpy answers only between Python lines, and the program is running C code that holds the "
        "interpreter's lock (a long computation in a C extension, a blocking call that keeps the lock). To see "
        "where it is, debug_attach(pid={pid}, language=\"c\") in a second session shows its native stack (the "
        "interpreter's and the extension's C frames); or try again later, or debug_terminate")

    def __init__(self, listener: BackendListener, language: str = "python") -> None:
        super().__init__(listener, language)
        self._lengths: dict[int, int] = {}
        self._launched = False  # launched under our shim (not attached)
        self._exception_names: list[str] = []  # the session's exception filters and types, as last set
        self._raised_sink: RaisedSink | None = None  # the raised log, while armed (record_raised)
        self._connect_to: tuple[str, int] | None = None
        self._pydevd_log = PydevdLog()  # pydevd's messages, out of the program's stderr
        self._injecting: asyncio.Future[str] | None = None  # while attaching by pid: debugpy's injector failed
        self._container: container.InContainer | None = None  # attached in a container: debugpy copied in
        self._injector_failed = False  # debugpy said so; its next output is what the injector printed
        self._just_my_code = True  # library code is left out (steps, stacks); children inherit it
        self._probe = probe.Probe()  # wakes a thread of the program's when a pause stops nothing
        self._calls = calls.CallChannel()  # the program's call recorder connects to it
        self._held = held.HeldStop(self._hold, lambda: self.resume(None),  # a stop of polydbg's own, unseen
                                   lambda body: DapBackend._on_stopped(self, body), self._life.spawn)
        self._configuring = False  # a launch's configure callback runs: the program's code has not started
        self._stopped = asyncio.Event()  # set by a stop: a pause that has stopped the program needs no probe
        self._stop_thread: int | None = None  # the thread debugpy stopped (the probe's too): it can evaluate
        self._names: dict[int, str] = {}  # the threads' names at this stop
        self._tops: dict[int, Frame | None] = {}  # their innermost frames at this stop
        # threads debugpy has not stopped (blocked in C): their frames are read through the helper (``threads``)
        self._blocked: set[int] = set()
        self._scope_frames: dict[int, tuple[FrameRef, str]] = {}  # a scope's ref → its frame and name
        self._shim = shimframe.ShimFrame()  # the launch shim's frame, left out of stacks

    # -- starting ---------------------------------------------------------------------------------

    async def _start_adapter(self) -> FramedStream:
        if self._connect_to is not None:  # `debugpy --listen` runs its own adapter: talk DAP to it directly
            host, port = self._connect_to
            try:
                return await asyncio.wait_for(FramedStream.connect_tcp(host, port, self.name), timeouts.CONNECT_S)
            except (OSError, asyncio.TimeoutError) as exc:
                raise UsageError(f"cannot connect to a debug server at {host}:{port} ({exc}); start the program "
                                 f"with python -m debugpy --listen {host}:{port} yourprogram.py") from exc
        env = dict(os.environ)
        env.pop("PYTHONSTARTUP", None)
        return await self._spawn_stdio_adapter([sys.executable, "-c", ADAPTER_SHIM], env=env)

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        await self._calls.close()
        if spec.recorded:  # the recorder listens from the start (otherwise from the stop a trace begins at)
            await self._calls.create()
        self._configuring = True

        async def configured() -> None:
            try:
                await configure()
            finally:
                self._configuring = False
        await super().launch(spec, configured, timeout_s)

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        interpreter = python.find_python(spec.runtime, spec.cwd, spec.program)
        self._launched = True
        args: dict[str, Any] = {
            "type": "python", "request": "launch", "name": "polydbg",
            "python": [interpreter, "-X", "frozen_modules=off", "-c", DEBUGGEE_SHIM],
            "args": list(spec.args), "console": "internalConsole", "redirectOutput": True,
            "justMyCode": self._mine_only(spec.breakpoint_files), "stopOnEntry": spec.stop_on_entry,
            "showReturnValue": True, "subProcess": True,
            "breakOnSystemExit": [],  # an exit is an exit, whatever its code, not an exception stop
        }
        if spec.module:
            args["module"] = spec.module
        else:
            args["program"] = spec.program
        if spec.cwd:
            args["cwd"] = spec.cwd
        args["env"] = {**dict(spec.env), **self._pydevd_log.env(), "POLYDBG_VALUES": str(VALUES),
                       probe.ENV: self._probe.create(), **({calls.ENV: self._calls.path} if self._calls.path else {})}
        if spec.stdin is not None:  # the shim puts it on fd 0 before the program runs
            args["env"] = {**args.get("env", {}), "POLYDBG_STDIN": self._proc.input_file(spec.stdin)}
        return args

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        """Attach; to a pid only once gdb is known to inject safely here (``inject``), and as soon as debugpy's
        injector says it failed, with its output (debugpy itself waits 60 s for a server that cannot come)."""
        if spec.pid is None:
            return await super().attach(spec, configure, timeout_s)
        if spec.namespaces is not None:  # in a container: debugpy copied in, listening there (``container``)
            self._container = container.InContainer(spec.namespaces)
            await self._container.start(timeout_s)
            return await super().attach(spec._replace(pid=None, port=self._container.port), configure, timeout_s)
        problem = await inject.injection_problem()
        if problem is not None:
            raise EnvironmentProblem(inject.cannot_inject(
                spec.pid, f"{problem}. The injection would fail and could leave the program damaged, so pid "
                          f"{spec.pid} was not touched"))
        failed = self._injecting = asyncio.get_running_loop().create_future()
        attaching = asyncio.ensure_future(super().attach(spec, configure, timeout_s))
        try:
            await asyncio.wait({attaching, failed}, return_when=asyncio.FIRST_COMPLETED)
        except BaseException:
            attaching.cancel()
            raise
        finally:
            self._injecting = None
        if attaching.done():
            failed.cancel()
            return attaching.result()
        attaching.cancel()  # the wait for a debug server that will not come
        await asyncio.wait({attaching})
        if not attaching.cancelled():
            attaching.exception()  # superseded by the injector's failure
        raise EnvironmentProblem(inject.cannot_inject(spec.pid, f"debugpy's injection failed: {failed.result()}"))

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        args: dict[str, Any] = {"type": "python", "request": "attach", "name": "polydbg",
                                "justMyCode": self._mine_only(spec.breakpoint_files), "subProcess": True,
                                "breakOnSystemExit": []}
        if spec.pid is not None:
            args["processId"] = spec.pid
        else:
            self._connect_to = (spec.address, int(spec.port or 0))
            args["connect"] = {"host": self._connect_to[0], "port": self._connect_to[1]}
        if spec.path_mappings:
            args["pathMappings"] = [{"localRoot": local, "remoteRoot": remote}
                                    for local, remote in spec.path_mappings]
        return args

    def _mine_only(self, breakpoint_files: tuple[str, ...]) -> bool:
        self._just_my_code = python.just_my_code(breakpoint_files)
        return self._just_my_code

    async def _after_end(self, terminate_debuggee: bool) -> None:
        if self._container is not None:
            await self._container.close()
        self._pydevd_log.close()
        self._probe.close()
        await self._calls.close()

    # -- events -----------------------------------------------------------------------------------

    def _on_output(self, body: dict[str, Any]) -> None:
        text = str(body.get("output", ""))
        if self._injecting is not None:  # debugpy's injector reports: its progress and, on failure, gdb's output
            if text.startswith("Attach to PID failed"):
                self._injector_failed = True
            elif self._injector_failed and not self._injecting.done():
                self._injecting.set_result(inject.gdb_error(text))  # the output debugpy collected from it
            return
        record = python.raised_record(text) if body.get("category") == "console" else None
        if record is not None:
            if self._raised_sink is not None:
                self._raised_sink(record)
            return
        if text.startswith(python.SKIPPED_STEP_IN):
            body = {**body, "output": python.SKIPPED_STEP_IN_NOTE}
        super()._on_output(body)

    def _on_stopped(self, body: dict[str, Any]) -> None:
        if body.get("reason") == "step" and self._launched and isinstance(body.get("threadId"), int):
            self._life.spawn(self._step_stopped(body), "a step's stop")
        else:
            self._stopped_at(body)

    async def _step_stopped(self, body: dict[str, Any]) -> None:
        """A step's stop, or past the end of the program's code, on to its exit (``python.past_the_program``)."""
        with contextlib.suppress(AdapterError):
            if python.past_the_program(await self._request("stackTrace", {"threadId": body["threadId"], "levels": 2})):
                await DapBackend.resume(self, body["threadId"])
                return
        self._stopped_at(body)

    def _stopped_at(self, body: dict[str, Any]) -> None:
        for key in ("description", "text"):
            if isinstance(body.get(key), str):
                body[key] = python.without_note(body[key])
        self._forget_stop()
        stopped = body.get("threadId")
        self._stop_thread = stopped if isinstance(stopped, int) else None
        body["threadId"] = self._probe.stopped_as(stopped)
        self._stopped.set()
        if not self._held.took(body):
            super()._on_stopped(body)

    # -- execution ----------------------------------------------------------------------------------

    async def pause(self, thread_id: int | None) -> None:
        """debugpy's pause, and the probe woken when it has stopped nothing a moment later (``probe``)."""
        self._stopped.clear()
        self._held.agent_pauses()
        await super().pause(thread_id)
        if self._probe.path is not None:
            shown = self._probe.listed(await super().threads(), thread_id)
            if thread_id is None:  # a thread running only library code lists no frames: the first that does
                for thread in shown[:probe.SHOWN_AMONG]:
                    if (await super().stack_trace(thread.id, 0, 1))[0]:
                        self._probe.shown = thread.id
                        break
            self._life.spawn(self._wake_unless_stopped(), "wake the probe")

    async def step(self, thread_id: int, kind: StepKind) -> None:
        """A step; refused for a thread debugpy has not stopped (blocked in C code: it would never step, and the
        program would read as running while it stays stopped)."""
        if thread_id != self._stop_thread:
            found = await self._helper_on(thread_id, "stopped")
            if found is not None and not found.get("stopped"):
                waits = f" ({found['state']})" if found.get("state") else ""
                raise AdapterRequestError("step", f"thread {thread_id} is blocked in C code{waits}, where debugpy "
                                          "cannot stop it, so it cannot step: debug_continue runs the program on "
                                          "(a breakpoint where it goes next stops it there); its frames, variables "
                                          "and evaluations can be read here meanwhile")
        await super().step(thread_id, kind)

    async def _wake_unless_stopped(self) -> None:
        try:
            await asyncio.wait_for(self._stopped.wait(), probe.WAKE_AFTER_S)
        except asyncio.TimeoutError:
            self._probe.wake()

    # -- breakpoints and logpoints ------------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        """A breakpoint on a line without code is sent on the next line with code (``lines``)."""
        placed = [bp._replace(line=lines.placed(file, bp.line)) for bp in breakpoints]
        results = await super().set_breakpoints(file, placed)
        return [r._replace(message=python.LIBRARY_SKIPPED) if r.message and python.EXCLUDED in r.message else r
                for r in results]

    def trace_interpolation(self, expression: str) -> str:
        """A logpoint interpolation of ``expression`` that yields its repr, or ``<error: …>``."""
        if not self._launched:
            return "{" + expression + "}"
        return "{__import__('_polydbg').v('" + expression.encode().hex() + "')}"

    def trace_thread(self) -> str:
        """The hitting thread's name, as pydevd names threads in the stacks (``Thread-2 (work)``)."""
        return "{__import__('threading').current_thread().name}"

    # -- inspection -------------------------------------------------------------------------------

    def _moving(self) -> None:
        super()._moving()
        self._forget_stop()
        self._stop_thread = None  # nothing can evaluate until the next stop

    def _on_continued(self, body: dict[str, Any]) -> None:
        if body.get("allThreadsContinued", True):
            self._forget_stop()
            self._stop_thread = None
        super()._on_continued(body)

    def _forget_stop(self) -> None:
        self._shim.forget()
        self._names.clear()
        self._tops.clear()
        self._blocked.clear()
        self._scope_frames.clear()

    # -- recording ----------------------------------------------------------------------------------

    async def record_calls(self, spec: CallSpec, sink: CallSink) -> Recorder:
        """Calls recorded by a profile hook in the program (``calls``), begun at its stop or one unseen (``held``)."""
        if self._configuring:
            return await calls.record_calls(self._calls, spec, sink, self._in_each_stopped_thread)
        calls.unreachable(self._container is not None, self._connect_to)

        async def armed() -> Recorder:
            await calls.start(lambda code: self._in_stopped_frame(code, "repl"), await self._calls.created())
            return await calls.record_calls(self._calls, spec, sink, self._in_each_stopped_thread)
        if self._stop_thread is not None:
            return await armed()
        return await self._held.run(armed)

    async def _hold(self) -> None:
        self._stopped.clear()
        await DapBackend.pause(self, None)
        if self._probe.path is not None:
            self._life.spawn(self._wake_unless_stopped(), "wake the probe")

    async def _in_each_stopped_thread(self, expression: str) -> int:
        """Evaluate ``expression`` in the top frame of every thread stopped now (pydevd runs it in that thread); how
        many ran it."""
        ran = 0
        for thread in await self.threads():
            try:
                frames, _ = await self.stack_trace(thread.id, 0, 1)
                if frames:
                    await super().evaluate(expression, FrameRef(thread.id, 0), "repl")
                    ran += 1
            except AdapterError:
                continue  # running, or blocked in C code: not stopped by pydevd
        return ran

    async def reload(self, thread_id: int | None) -> Reloaded:
        """The edited files put into the program by the thread debugpy stopped (``reload``); refused while running."""
        if thread_id is None or self._stop_thread is None:
            raise UsageError(reload.PAUSE_FIRST)
        try:
            return reload.reloaded(await self._in_stopped_frame(reload.expression(), "clipboard"))
        except AdapterRequestError as exc:
            raise UsageError(f"the reload could not run in the program, which runs its old code still: "
                             f"{python.python_error(exc.message)}") from exc

    async def threads(self) -> list[Thread]:
        """The program's threads, without the probe."""
        found = self._probe.listed(await super().threads(), None) if self._probe.path else await super().threads()
        self._names = {t.id: t.name for t in found}
        return found

    def _listed_thread(self) -> int | None:
        """The thread a stop shows that lists frames (the probe is not listed; its stop is shown as one)."""
        shown = self._probe.stopped_as(self._stop_thread)
        return shown if isinstance(shown, int) and self._tops.get(shown) is not None else None

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        """What the threads hold and wait for, in one evaluation of ``shims/threads.py`` in a stopped frame."""
        found = await self._helper("locks", await self._wanted(thread_ids))
        return threads.thread_locks(found) if found is not None else {}

    async def tasks(self) -> list[Task]:
        """asyncio's pending tasks, with what each awaits and its chain of coroutines (``shims/threads.py``)."""
        found = await self._helper("tasks")
        return threads.tasks(found, self._just_my_code) if found else []

    async def async_callers(self, thread_id: int) -> list[tuple[str, list[Frame]]]:
        """The tasks awaiting the one ``thread_id`` runs, outward (a coroutine's stack ends at its task's step)."""
        found = await self._helper_on(thread_id, "async_callers")
        return threads.callers(found, self._just_my_code) if found else []

    async def _wanted(self, thread_ids: Sequence[int]) -> list[list[Any]]:
        """The threads as the helper matches them: by name, and by their innermost frames where names repeat (asked
        where not known yet: a stack request a thread, 2 ms each)."""
        if not self._names:
            await self.threads()
        named = Counter(self._names.values())
        for tid in thread_ids:
            if tid not in self._tops and named[self._names.get(tid, '')] > 1:
                await self.stack_trace(tid, 0, 1)
        return threads.wanted(list(thread_ids), self._names, self._tops)

    async def _helper_on(self, thread_id: int, function: str) -> Any:
        """The helper's ``function`` of one thread (None: a thread not listed, or no stopped frame)."""
        listed = await self._wanted([thread_id])
        return await self._helper(function, listed[0]) if listed else None

    async def _helper(self, function: str, *args: Any) -> Any:
        """The answer of the helper's ``function`` evaluated in the stopped thread's frame (None: no such frame)."""
        try:
            value = await self._in_stopped_frame(threads.call(function, *args), "clipboard")
            return threads.answer(value.value) if value is not None else None
        except (AdapterRequestError, ValueError) as exc:  # a frame that cannot evaluate: nothing more is known
            log.debug("debugpy: the threads helper's %s failed: %s", function, exc)
            return None

    async def _in_stopped_frame(self, expression: str, context: EvaluateContext) -> Variable | None:
        """``expression`` evaluated in the frame debugpy stopped in (the probe's too): its value, with a ref whose
        children debugpy lists (None: no such frame)."""
        if self._stop_thread is None:
            return None
        frames, _ = await self.stack_trace(self._stop_thread, 0, 1)
        if not frames:
            return None
        return await super().evaluate(expression, FrameRef(self._stop_thread, 0), context)

    async def _at(self, frame: FrameRef, function: str, *args: Any) -> Variable:
        """The helper's ``function`` run on a frame of a thread debugpy has not stopped (blocked in C code)."""
        listed, _ = await self.stack_trace(frame.thread_id, 0, frame.index + 1)
        thread = await self._wanted([frame.thread_id])
        value = await self._in_stopped_frame(
            threads.call(function, thread[0] if thread else [frame.thread_id, "", None, None],
                         [[f.name, f.line] for f in listed[:frame.index + 1]], *args), "repl")
        if value is None:
            raise AdapterRequestError("evaluate", f"thread {frame.thread_id} is not stopped (it is blocked in C code) "
                                                  "and no stopped thread can read it")
        return value

    def _not_stopped(self, exc: AdapterRequestError, thread_id: int) -> bool:
        """Whether pydevd refused because the thread is not stopped (blocked in C code): then it is remembered."""
        if "Unable to find thread" in exc.message and self._stop_thread is not None:
            self._blocked.add(thread_id)
            return True
        return False

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        """A frame's scopes; a blocked thread's read by the helper (pydevd lists them, but not their variables)."""
        if frame.thread_id in self._blocked:
            found = []
            for name in ("Locals", "Globals"):
                value = await self._at(frame, "scope_at", name)
                self._scope_frames[value.ref] = (frame, name)
                found.append(Scope(name, value.ref, expensive=name == "Globals"))
            return found
        found = await super().scopes(frame)
        self._scope_frames.update({s.ref: (frame, s.name) for s in found})
        return found

    async def _blocked_scope(self, ref: int, exc: AdapterRequestError) -> int:
        """The helper's ref for a scope pydevd cannot list (its thread is blocked in C code), or ``exc`` raised."""
        frame, name = self._scope_frames.get(ref, (None, ""))
        if frame is None or not self._not_stopped(exc, frame.thread_id):
            raise exc
        return next((s.ref for s in await self.scopes(frame) if s.name == name), 0)

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        """Frames without the launch shim's own ``<module>`` frame (``shimframe``)."""
        frames, total = await self._shim.stack_trace(super().stack_trace, self._frames, thread_id, start, levels)
        if start == 0:
            self._tops[thread_id] = frames[0] if frames else None
        return frames, total

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        """Children without pydevd's synthetic entries; ``len()`` is kept aside for ``length_of``."""
        out = []
        try:
            listed = await super().variables(ref, start, count)
        except AdapterRequestError as exc:
            listed = await super().variables(await self._blocked_scope(ref, exc), start, count)
        for child in listed:
            if child.name in python.GROUPS:
                continue
            if child.name == "len()":
                if child.value.isdigit():
                    self._lengths[ref] = int(child.value)
                continue
            if child.name == "more" and child.value == "...":
                continue
            if child.name.isdigit() and child.name.startswith("0") and len(child.name) > 1:
                child = child._replace(name=child.name.lstrip("0") or "0")
            out.append(child)
        return out

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        """Evaluate ``parent[start:start+count]`` (pydevd ignores start/count and caps at 300)."""
        if not parent.evaluate_name:
            return None
        kind = (parent.type or "").lower()
        sliced = python.slice_expression(parent.evaluate_name, kind, start, start + count)
        result = await self.evaluate(sliced, frame, "watch")
        if not result.ref:
            return None
        return python.renumbered(await self.variables(result.ref), parent.evaluate_name, kind, start)

    def _frame(self, raw: dict[str, Any]) -> Frame | None:
        """pydevd names the frame an exception is shown at "name (Current frame)" when it shows the exception's
        traceback (a user-unhandled exception): the report says where it stopped already."""
        frame = super()._frame(raw)
        return frame._replace(name=frame.name.removesuffix(CURRENT_FRAME)) if frame is not None else None

    def length_of(self, parent: Variable, children: list[Variable]) -> int | None:
        return self._lengths.get(parent.ref)

    def returned_by(self, variable: Variable) -> str | None:
        return returns.returned_by(variable.name)  # pydevd's "(return) add" (showReturnValue)

    def is_noise(self, variable: Variable) -> bool:
        """Modules, functions and classes in a scope listing (they flood module-level stops)."""
        return python.is_noise(variable)

    def _tune_capabilities(self) -> None:
        self.capabilities.exception_types = True

    async def set_exception_filters(self, filters: list[str]) -> None:
        offered = self.capabilities.exception_filters
        types = [f for f in filters if f not in offered]
        self._exception_names = list(filters)
        if not types and self._raised_sink is None:
            await super().set_exception_filters(filters)
            return
        options = python.exception_options(filters, types, self._raised_sink is not None)
        await self._request("setExceptionBreakpoints", {"filters": [], "exceptionOptions": options})

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Every exception the user's code raises, recorded in the debuggee by the shim (``shims/debuggee.py``)."""
        if not self._launched:
            raise UsageError("the log of raised exceptions needs the program started by debug_launch (it is recorded "
                             "inside it); stop on them with debug_break(exception=[\"raised\"]) instead")
        self._raised_sink = sink
        await self.set_exception_filters(self._exception_names)
        return _RaisedLog(self, sink)

    async def _stop_raised_log(self, sink: RaisedSink) -> None:
        if self._raised_sink is sink:
            self._raised_sink = None
            await self.set_exception_filters(self._exception_names)  # answered after the log's last lines

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        """An evaluation; in a frame of a thread blocked in C code, by the helper from a stopped thread's frame.
        ``$exception`` is the exception pydevd keeps in the stopping frame's locals at an exception stop."""
        if thrown.names_it(expression):
            try:
                return (await self.evaluate(thrown.substitute(expression, "__exception__[1]"), frame, context)
                        )._replace(name=expression, evaluate_name=expression)
            except AdapterRequestError as exc:
                if "__exception__" in exc.message:
                    raise thrown.not_at_an_exception(self.name) from exc
                raise
        try:
            if frame is None or frame.thread_id not in self._blocked:
                try:
                    return await super().evaluate(expression, frame, context)
                except AdapterRequestError as exc:
                    if frame is None or not self._not_stopped(exc, frame.thread_id):
                        raise
            value = await self._at(frame, "value_at", expression)
            return value._replace(name=expression, evaluate_name=expression)
        except AdapterRequestError as exc:
            raise AdapterRequestError(exc.command, python.python_error(exc.message)) from exc

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        """An assignment; to a local of a thread blocked in C code, by the helper."""
        frame, _scope = self._scope_frames.get(ref, (None, ""))
        if frame is None or frame.thread_id not in self._blocked:
            return await super().set_variable(ref, name, value)
        return (await self._at(frame, "assign_at", name, value))._replace(name=name)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        detail = await super().exception_info(thread_id)
        if detail is None:
            return None
        message = "" if detail.message == NO_DESCRIPTION else detail.message  # a bare `assert x == y`: the line says it
        return ExceptionDetail(type=python.without_note(detail.type), message=message)


class _RaisedLog:
    def __init__(self, process: DebugpyProcess, sink: RaisedSink) -> None:
        self._process = process
        self._sink = sink

    async def stop(self) -> list[str]:
        with contextlib.suppress(AdapterError, SessionError):
            await self._process._stop_raised_log(self._sink)
        return []
