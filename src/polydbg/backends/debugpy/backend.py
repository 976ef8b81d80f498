"""The debugpy backend the registry names (``DebugpyBackend``): the program's own ``DebugpyProcess`` and
its child processes' ``ChildBackend``s, seen by the session as one backend.

Children are attached as debugpy announces them (``debugpyAttach``) and configured with the
breakpoints and exception filters the session sent (kept here for that); breakpoints set later reach
every live process. A child's start is said once it is configured, before it runs on (at
``configurationDone``, before debugpy answers the attach: said after the attach, it came after the child's
first lines). Requests are routed by id (``children`` folds a child's thread ids and variables
references into the parent's id spaces), and one stop is shown at a time (``kit.gate``): a child's
stop while another process's is shown waits, its process stopped, until the shown one resumes.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg import procs
from polydbg.backends.base import (
    AttachSpec,
    BackendListener,
    BreakpointResult,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    FunctionBreakpoint,
    Scope,
    SourceBreakpoint,
    StepKind,
    Thread,
    Variable,
)
from polydbg.backends.debugpy import children, python
from polydbg.backends.debugpy.children import ChildBackend
from polydbg.backends.debugpy.process import DebugpyProcess
from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.backends.timecontrol import Reloaded
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterError

log = logging.getLogger(__name__)


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
        self._life.spawn(self._attach_child(index, child), f"attach child process {pid}")

    async def _attach_child(self, index: int, child: ChildBackend) -> None:
        async def configure() -> None:
            for file, specs in self._sent_files.items():
                await child.set_breakpoints(file, specs)
            if self._sent_functions:
                await child.set_function_breakpoints(self._sent_functions)
            await child.set_exception_filters(self._sent_filters)
            # said before the child runs on (at configurationDone): its own output comes after, as it happened
            self._listener.on_output("console", f"[child process {child.pid} started: debugged in this session]\n")

        try:
            await child.attach(AttachSpec(), configure, children.ATTACH_S)
        except Exception as exc:  # a child that cannot be attached must not take the session down
            log.warning("debugpy: cannot attach child process %s: %r", child.pid, exc)
            if procs.read_stat(child.pid) is None:  # a short-lived child: done before its attach was
                note = "ended before the debugger attached to it (it ran without breakpoints)"
            else:  # it waits for a debugger to attach: ended below, so that its parent does not wait for good
                note = f"could not be debugged, and was ended: {str(exc) or type(exc).__name__}"
            self._listener.on_output("console", f"[child process {child.pid} {note}]\n")
            self._child_ended(index)

    def _child_ended(self, index: int) -> None:
        self._gate.ended(index)
        child = self._children.pop(index, None)
        if child is not None:
            self._life.spawn(child.terminate(), f"end child process {child.pid}")

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
        types = [f for f in filters if f not in self.capabilities.exception_filters]
        if [name for name in types if name not in python.BUILTIN_EXCEPTIONS]:  # a slip (KeyErorr) never matches
            like: dict[str, bool | list[str]] | None = None  # the program's classes, when it is stopped
            with contextlib.suppress(AdapterError, ValueError, SyntaxError):
                found = await self._in_stopped_frame(python.classes_like(types), "watch")
                like = python.classes_answer(found.value) if found is not None else None
            python.check_exception_types(types, like)
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

    def frameless(self, thread: Thread) -> str | None:
        if not self._just_my_code:
            return None
        index, _ = children.split_thread(thread.id)
        child = self._children.get(index) if index else None
        name = thread.name.removesuffix(f" (pid {child.pid})") if child is not None else thread.name
        return python.frameless(thread.id, name, child.pid if child is not None else None,
                                None if child is not None else self._listed_thread())

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

    # -- execution routed by thread -------------------------------------------------------------------

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

    async def reload(self, thread_id: int | None) -> Reloaded:
        """Reloaded by the process that stopped; the others keep their old code (said in the notes)."""
        index, native = children.split_thread(thread_id) if thread_id is not None else (0, None)
        done = await (super().reload(thread_id) if index == 0 else self._child(index).reload(native))
        others = [f"pid {child.pid}" for i, child in self._children.items() if i != index]
        if index:
            others.insert(0, "the parent process")
        if not done.replaced or not others:
            return done
        keep = "keeps" if len(others) == 1 else "keep"
        return done._replace(notes=(*done.notes, f"{', '.join(others)} {keep} the old code (the reload ran in the "
                                                 "process that stopped; each takes it at a stop of its own)"))

    async def pause(self, thread_id: int | None) -> None:
        index, native = children.split_thread(thread_id) if thread_id is not None else (0, 0)
        if index == 0:
            await super().pause(thread_id)
        else:
            await self._child(index).pause(native)

    # -- ending ---------------------------------------------------------------------------------------

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
