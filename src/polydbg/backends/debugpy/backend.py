"""Python through debugpy (``python -m debugpy.adapter`` over stdio).

Quirks handled here, not in the session:
- Latency: debugpy's sockets (adapter ↔ pydevd) leave Nagle on, which with delayed ACKs
  costs ~40 ms per request (debugpy issue 2054). The adapter runs under a shim that sets
  TCP_NODELAY on its sockets; the debuggee runs under a shim that sets it on its first TCP
  connection (the one back to the adapter) and then restores ``socket.connect``, so the user's
  program sees an unpatched socket module. (debugpy starts the launcher itself, unshimmed; its
  connection carries only process events.)
- The target interpreter needs no debugpy: the launcher runs the adapter's copy.
- pydevd shows at most 100 children of a container and ignores start/count, so ``child_slice``
  evaluates a slice; its synthetic children (``len()``, groups of dunders) are filtered.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, ClassVar

from polydbg.backends.base import (
    AttachSpec,
    BackendListener,
    BreakpointResult,
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
    Variable,
)
from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.debugpy import children
from polydbg.backends.kit import shims
from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterError, AdapterRequestError, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

ADAPTER_SHIM = shims.source(__file__, "adapter.py")
DEBUGGEE_SHIM = shims.source(__file__, "debuggee.py")



def find_python(explicit: str | None, cwd: str | None, program: str | None) -> str:
    """The interpreter for the debuggee: explicit, else the active or a nearby venv, else ours."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.exists():
            raise UsageError(f"python interpreter {explicit!r} does not exist; pass an existing interpreter "
                             "path, or omit 'python' to use the project's virtualenv")
        return str(path)
    virtual_env = os.environ.get("VIRTUAL_ENV")
    if virtual_env and (Path(virtual_env) / "bin" / "python").exists():
        return str(Path(virtual_env) / "bin" / "python")
    starts = [Path(p).resolve() for p in (cwd, Path(program).parent if program else None) if p]
    for start in starts:
        for directory in (start, *start.parents):
            for name in (".venv", "venv"):
                candidate = directory / name / "bin" / "python"
                if candidate.exists():
                    return str(candidate)
    return sys.executable


# pydevd's synthetic children: groups of dunders/methods, the length, and the "more items" marker.
_GROUPS = frozenset({"special variables", "function variables", "class variables", "protected variables"})
_NOISE_TYPES = frozenset({"module", "function", "type", "builtin_function_or_method", "method", "ABCMeta"})
_PYDEVD_NOTE = re.compile(r"\s*\(note: full exception trace is shown but execution is paused at: .*\)\s*$")
_MAPPINGS = frozenset({"dict", "ordereddict", "defaultdict", "counter", "mappingproxy"})
_LIBRARY_SKIPPED = ("not hit: this is library code, and the session started debugging only your code "
                    "(justMyCode); debug_restart starts again with library code debugged, as this breakpoint asks")
_LIBRARY = re.compile(r"[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d\.\d+[/\\]")
_EXCLUDED = "excluded by filters"
# pydevd's warning when a step into lands in library code it skips, and what polydbg can offer instead
# (its advice, a launch.json setting, is not something the agent has).
_SKIPPED_STEP_IN = "Frame skipped from debugging during step-in."
_SKIPPED_STEP_IN_NOTE = ("(the step went past library code: this session debugs only your code (justMyCode); to step "
                         "through a library, set a breakpoint in its file and debug_restart)\n")


_FRAME = re.compile(r'^\s+File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<function>.+))?$')


def python_error(text: str) -> str:
    """A Python traceback from pydevd cut to what the agent needs: the exception, the caret of a
    SyntaxError, and where the error was raised when that is not the expression itself (pydevd's own
    frames, ~2 KB of them, are dropped)."""
    if "Traceback (most recent call last):" not in text:
        return text
    lines = text.rstrip().splitlines()
    last = max((i for i, line in enumerate(lines) if line and not line[0].isspace()), default=len(lines) - 1)
    exception = lines[last]
    frames = [(i, m) for i, line in enumerate(lines[:last]) if (m := _FRAME.match(line))]
    if exception.startswith(("SyntaxError", "IndentationError", "TabError")):
        start = frames[-1][0] + 1 if frames else last
        caret = [line for line in lines[start:last] if line.strip()]
        indent = min((len(line) - len(line.lstrip()) for line in caret), default=0)
        return "\n".join([exception, *(line[indent:] for line in caret)])
    user = [m for _, m in frames if "pydevd" not in m["file"] and "debugpy" not in m["file"]]
    if user and user[-1]["file"] != "<string>":
        where = user[-1]
        return f"{exception} (raised at {where['file']}:{where['line']} in {where['function'] or '?'})"
    return exception


def is_library(path: str) -> bool:
    """Installed or standard-library code, which debugpy skips while justMyCode is on."""
    return _LIBRARY.search(path) is not None


def just_my_code(breakpoint_files: tuple[str, ...]) -> bool:
    """Debug only the user's code, unless a breakpoint asks to stop in a library (then honour it)."""
    return not any(is_library(f) for f in breakpoint_files)


class DebugpyProcess(DapBackend):
    """One Python process through debugpy (the program, or one of its children)."""

    name = "debugpy"
    adapter_id = "debugpy"

    def _on_output(self, body: dict[str, Any]) -> None:
        if str(body.get("output", "")).startswith(_SKIPPED_STEP_IN):
            body = {**body, "output": _SKIPPED_STEP_IN_NOTE}
        super()._on_output(body)
    evaluate_context: ClassVar[EvaluateContext] = "repl"  # statements too; pydevd prints their output
    pause_limits: ClassVar[str] = (
        "debugpy stops a thread only when it runs Python code it traces (your code: library code is "
        "skipped), and no thread has: each is blocked (a lock, socket, sleep or C call) or running only "
        "library code, like a server's accept loop. A thread stops as soon as it runs your code (a "
        "request to the server, say). Set a breakpoint where you expect it and debug_continue, or "
        "debug_terminate")

    def __init__(self, listener: BackendListener, language: str = "python") -> None:
        super().__init__(listener, language)
        self._lengths: dict[int, int] = {}
        self._launched = False  # launched under our shim (not attached)
        self._connect_to: tuple[str, int] | None = None

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        """Children without pydevd's synthetic entries; ``len()`` is kept aside for ``length_of``."""
        out = []
        for child in await super().variables(ref, start, count):
            if child.name in _GROUPS:
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

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        """Frames without the launch shim's own ``<module>`` frame at the bottom of every stack."""
        frames, total = await super().stack_trace(thread_id, start, levels)
        if frames and frames[-1].file == "<string>" and frames[-1].name == "<module>" and \
                (total is None or start + len(frames) >= total):
            frames = frames[:-1]
            total = total - 1 if total is not None else None
        elif total is not None and start + len(frames) < total:
            total -= 1  # the shim frame is further down
        return frames, total

    def _on_stopped(self, body: dict[str, Any]) -> None:
        for key in ("description", "text"):
            if isinstance(body.get(key), str):
                body[key] = _PYDEVD_NOTE.sub("", body[key]).strip()
        super()._on_stopped(body)

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        detail = await super().exception_info(thread_id)
        if detail is None:
            return None
        return ExceptionDetail(type=_PYDEVD_NOTE.sub("", detail.type).strip(), message=detail.message)

    def trace_interpolation(self, expression: str) -> str:
        """A logpoint interpolation of ``expression`` that yields its repr, or ``<error: …>``."""
        if not self._launched:
            return "{" + expression + "}"
        return "{__import__('_polydbg').v('" + expression.encode().hex() + "')}"

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        try:
            return await super().evaluate(expression, frame, context)
        except AdapterRequestError as exc:
            raise AdapterRequestError(exc.command, python_error(exc.message)) from exc

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        results = await super().set_breakpoints(file, breakpoints)
        return [r._replace(message=_LIBRARY_SKIPPED) if r.message and _EXCLUDED in r.message else r
                for r in results]

    def length_of(self, parent: Variable, children: list[Variable]) -> int | None:
        return self._lengths.get(parent.ref)

    def is_noise(self, variable: Variable) -> bool:
        """Modules, functions and classes in a scope listing (they flood module-level stops)."""
        return (variable.type or "") in _NOISE_TYPES or (
            variable.name.startswith("__") and variable.name.endswith("__"))

    async def _start_adapter(self) -> FramedStream:
        if self._connect_to is not None:  # `debugpy --listen` runs its own adapter: talk DAP to it directly
            host, port = self._connect_to
            try:
                return await asyncio.wait_for(FramedStream.connect_tcp(host, port, self.name), 10.0)
            except (OSError, asyncio.TimeoutError) as exc:
                raise UsageError(f"cannot connect to a debug server at {host}:{port} ({exc}); start the program "
                                 f"with python -m debugpy --listen {host}:{port} yourprogram.py") from exc
        env = dict(os.environ)
        env.pop("PYTHONSTARTUP", None)
        return await self._spawn_stdio_adapter([sys.executable, "-c", ADAPTER_SHIM], env=env)

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        python = find_python(spec.runtime, spec.cwd, spec.program)
        self._launched = True
        args: dict[str, Any] = {
            "type": "python", "request": "launch", "name": "polydbg",
            "python": [python, "-X", "frozen_modules=off", "-c", DEBUGGEE_SHIM],
            "args": list(spec.args), "console": "internalConsole", "redirectOutput": True,
            "justMyCode": just_my_code(spec.breakpoint_files), "stopOnEntry": spec.stop_on_entry,
            "showReturnValue": True, "subProcess": True,
            "breakOnSystemExit": [],  # an exit is an exit, whatever its code, not an exception stop
        }
        if spec.module:
            args["module"] = spec.module
        else:
            args["program"] = spec.program
        if spec.cwd:
            args["cwd"] = spec.cwd
        if spec.env:
            args["env"] = dict(spec.env)
        if spec.stdin is not None:  # the shim puts it on fd 0 before the program runs
            args["env"] = {**args.get("env", {}), "POLYDBG_STDIN": self._proc.input_file(spec.stdin)}
        return args

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        args: dict[str, Any] = {"type": "python", "request": "attach", "name": "polydbg",
                                "justMyCode": just_my_code(spec.breakpoint_files), "subProcess": True,
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

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        """Evaluate ``parent[start:start+count]`` (pydevd ignores start/count and caps at 300)."""
        if not parent.evaluate_name:
            return None
        expr = parent.evaluate_name
        end = start + count
        kind = (parent.type or "").lower()
        if kind in _MAPPINGS:
            sliced = f"dict(list(({expr}).items())[{start}:{end}])"
        elif kind in ("set", "frozenset", "deque"):
            sliced = f"list({expr})[{start}:{end}]"
        else:
            sliced = f"({expr})[{start}:{end}]"
        result = await self.evaluate(sliced, frame, "watch")
        if not result.ref:
            return None
        children = await self.variables(result.ref)
        out: list[Variable] = []
        for child in children:
            name = child.name
            evaluate_name: str | None
            if name.isdigit() and kind not in _MAPPINGS:
                name = str(start + int(name))
                evaluate_name = f"({expr})[{name}]"
            else:
                evaluate_name = child.evaluate_name
            out.append(Variable(name=name, value=child.value, type=child.type, ref=child.ref,
                                evaluate_name=evaluate_name))
        return out


class ChildBackend(DebugpyProcess):
    """A child process of the program: a second connection to the same adapter (debugpy_children)."""

    def __init__(self, listener: BackendListener, config: dict[str, Any], pid: int) -> None:
        super().__init__(listener)
        self._config = config
        self.pid = pid

    async def _start_adapter(self) -> FramedStream:
        return await children.connect(self._config, self.name)

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        return {**self._config, "request": "attach"}


class DebugpyBackend(DebugpyProcess):
    """The program and its child Python processes as one backend: requests are routed by id."""

    def __init__(self, listener: BackendListener, language: str = "python") -> None:
        self._gate = StopGate(listener, lambda thread: children.split_thread(thread)[0])
        super().__init__(GatedListener(self._gate), language)
        self._children: dict[int, ChildBackend] = {}
        self._next_child = 1
        self._sent_files: dict[str, list[SourceBreakpoint]] = {}
        self._sent_functions: list[FunctionBreakpoint] = []
        self._sent_filters: list[str] = []

    # -- children -------------------------------------------------------------------------------------

    def _wire_events(self, client: DapClient) -> None:
        super()._wire_events(client)
        client.on_event("debugpyAttach", self._on_child)

    def _on_child(self, body: dict[str, Any]) -> None:
        index, self._next_child = self._next_child, self._next_child + 1
        pid = int(body.get("subProcessId") or 0)
        listener = children.ChildListener(self._gate, index, pid, self._child_ended)
        child = self._children[index] = ChildBackend(listener, dict(body), pid)
        self._in_background(self._attach_child(index, child))

    async def _attach_child(self, index: int, child: ChildBackend) -> None:
        async def configure() -> None:
            for file, specs in self._sent_files.items():
                await child.set_breakpoints(file, specs)
            if self._sent_functions:
                await child.set_function_breakpoints(self._sent_functions)
            await child.set_exception_filters(self._sent_filters)

        try:
            await child.attach(AttachSpec(), configure, children.CONNECT_TIMEOUT_S)
            self._listener.on_output("console", f"[child process {child.pid} started: debugged in this session]\n")
        except Exception as exc:  # a child that cannot be attached must not take the session down
            log.warning("debugpy: cannot attach child process %s: %s", child.pid, exc)
            self._listener.on_output("console", f"[child process {child.pid} could not be debugged: {exc}]\n")
            self._child_ended(index)

    def _child_ended(self, index: int) -> None:
        self._gate.ended(index)
        child = self._children.pop(index, None)
        if child is not None:
            self._in_background(child.terminate())

    def _child(self, index: int) -> ChildBackend:
        child = self._children.get(index)
        if child is None:
            raise children.refused_child(index)
        return child

    # -- breakpoints reach every process --------------------------------------------------------------

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        self._sent_files[file] = list(breakpoints)
        results = await super().set_breakpoints(file, breakpoints)
        for child in list(self._children.values()):
            with contextlib.suppress(AdapterError):
                await child.set_breakpoints(file, breakpoints)
        return results

    async def set_function_breakpoints(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        self._sent_functions = list(breakpoints)
        results = await super().set_function_breakpoints(breakpoints)
        for child in list(self._children.values()):
            with contextlib.suppress(AdapterError):
                await child.set_function_breakpoints(breakpoints)
        return results

    async def set_exception_filters(self, filters: list[str]) -> None:
        self._sent_filters = list(filters)
        await super().set_exception_filters(filters)
        for child in list(self._children.values()):
            with contextlib.suppress(AdapterError):
                await child.set_exception_filters(filters)

    # -- requests routed by id ------------------------------------------------------------------------

    async def threads(self) -> list[Thread]:
        found = await super().threads()
        for index, child in list(self._children.items()):
            with contextlib.suppress(AdapterError):
                found += [Thread(children.child_thread(index, t.id), f"{t.name} (pid {child.pid})")
                          for t in await child.threads()]
        return found

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        index, native = children.split_thread(thread_id)
        if index == 0:
            return await super().stack_trace(thread_id, start, levels)
        return await self._child(index).stack_trace(native, start, levels)

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        index, native = _frame_route(frame)
        if native is None:
            return await super().scopes(frame)
        found = await self._child(index).scopes(native)
        return [s._replace(ref=children.child_ref(index, s.ref)) for s in found]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        index, native = children.split_ref(ref)
        if index == 0:
            return await super().variables(ref, start, count)
        return [_in_child(index, v) for v in await self._child(index).variables(native, start, count)]

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        index, native = _frame_route(frame)
        if native is None:
            return await super().evaluate(expression, frame, context)
        return _in_child(index, await self._child(index).evaluate(expression, native, context))

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        index, native = children.split_ref(ref)
        if index == 0:
            return await super().set_variable(ref, name, value)
        return _in_child(index, await self._child(index).set_variable(native, name, value))

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        index, native = _frame_route(frame)
        if native is None:
            return await super().child_slice(parent, start, count, frame)
        found = await self._child(index).child_slice(parent._replace(ref=children.split_ref(parent.ref)[1]), start,
                                                     count, native)
        return [_in_child(index, v) for v in found] if found is not None else None

    def length_of(self, parent: Variable, children_: list[Variable]) -> int | None:
        index, native = children.split_ref(parent.ref)
        if index == 0:
            return super().length_of(parent, children_)
        child = self._children.get(index)
        return child.length_of(parent._replace(ref=native), children_) if child is not None else None

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        index, native = children.split_thread(thread_id)
        if index == 0:
            return await super().exception_info(thread_id)
        return await self._child(index).exception_info(native)

    async def resume(self, thread_id: int | None) -> None:
        index, native = children.split_thread(thread_id) if thread_id is not None else (0, 0)
        if thread_id is None:
            for child in list(self._children.values()):
                with contextlib.suppress(AdapterError):
                    await child.resume(None)
        if index == 0:
            await super().resume(thread_id)
        else:
            await self._child(index).resume(native)
        self._gate.resumed(None if thread_id is None else index)

    async def step(self, thread_id: int, kind: StepKind) -> None:
        index, native = children.split_thread(thread_id)
        if index == 0:
            await super().step(thread_id, kind)
        else:
            await self._child(index).step(native, kind)
        self._gate.resumed(index)

    async def pause(self, thread_id: int | None) -> None:
        index, native = children.split_thread(thread_id) if thread_id is not None else (0, 0)
        if index == 0:
            await super().pause(thread_id)
        else:
            await self._child(index).pause(native)

    async def terminate(self) -> None:
        await self._end_children(ChildBackend.terminate)
        await super().terminate()

    async def detach(self) -> None:
        await self._end_children(ChildBackend.detach)
        await super().detach()

    async def _end_children(self, end: Callable[[ChildBackend], Awaitable[None]]) -> None:
        for child in list(self._children.values()):
            with contextlib.suppress(Exception):
                await end(child)
        self._children.clear()


def _frame_route(frame: FrameRef | None) -> tuple[int, FrameRef | None]:
    """The child a frame belongs to, and the frame in that child's numbering (None: the program's own)."""
    if frame is None:
        return 0, None
    index, native = children.split_thread(frame.thread_id)
    return index, FrameRef(native, frame.index) if index else None


def _in_child(index: int, variable: Variable) -> Variable:
    return variable._replace(ref=children.child_ref(index, variable.ref))
