"""Breakpoint sync: the store of what the agent asked for, kept in step with the debugger.

Breakpoints live in the session's store, independent of any debugger connection: they are sent
in groups (a file, the function list, the watchpoints) on every change while connected, and all of
them during each (re)start's handshake. Results come back in spec order and are applied to the
stored breakpoints by polydbg's own ids.
"""

from __future__ import annotations

from collections.abc import Awaitable

from polydbg.backends.base import Backend, BreakpointResult, FrameRef, StopEvent
from polydbg.errors import AdapterRequestError, SessionEndedError, UsageError, closest, echo
from polydbg.session import conditions
from polydbg.session import source as src
from polydbg.session.breakpoints import Breakpoint, data_spec, function_spec, source_spec
from polydbg.session.core import SessionCore
from polydbg.session.model import BreakpointInfo, State


def _check_exception_names(names: list[str], backend: Backend, adapter: str) -> None:
    """Refuse a name that is neither one of the backend's filters nor, where it takes them, a type name: a
    lowercase word close to a filter (``raise``) is a misspelt filter, not a class."""
    offered = backend.capabilities.exception_filters
    unknown = [n for n in names if n not in offered]
    if not unknown:
        return
    if not backend.capabilities.exception_types:
        raise UsageError(f"unknown exception filter(s) {echo(unknown)}; {adapter} offers {list(offered)} and "
                         "takes no exception type names")
    for name in unknown:
        near = closest(name, offered) if name.islower() and name.isidentifier() else None
        if near is not None:
            raise UsageError(f"unknown exception filter {echo(name)}; did you mean {near!r}? {adapter} offers "
                             f"{list(offered)}, or an exception type's name")


class BreakpointSync:
    def __init__(self, core: SessionCore) -> None:
        self.core = core

    # -- the handshake and group sends ---------------------------------------------------------------

    async def configure(self) -> None:
        """Everything the debugger must know before the program runs (called during the start)."""
        store = self.core.breakpoints
        backend = self.core.connected_backend()
        for file in sorted(store.files()):
            await self.send_file(file)
        if store.functions():
            await self.send_functions()
        if store.watches() and backend.capabilities.data_breakpoints:
            await self.send_watches(None)
        await backend.set_exception_filters(list(self.core.exception_filters))

    async def send_file(self, file: str) -> None:
        bps = self._supported(self.core.breakpoints.in_file(file))
        results = await self.core.connected_backend().set_breakpoints(file, [source_spec(b) for b in bps])
        _apply(bps, results)

    async def send_functions(self) -> None:
        bps = self._supported(self.core.breakpoints.functions())
        results = await self.core.connected_backend().set_function_breakpoints([function_spec(b) for b in bps])
        _apply(bps, results)

    def _supported(self, bps: list[Breakpoint]) -> list[Breakpoint]:
        """The breakpoints the debugger can set, by id; the others (set before the session, with what this
        debugger lacks) are marked unverified with the reason instead of being sent."""
        out = []
        backend = self.core.connected_backend()
        for bp in sorted(bps, key=lambda b: b.id):
            problem = self._lacks(backend, bp.condition, bp.hit_condition)
            if problem is None:
                out.append(bp)
            else:
                bp.apply(BreakpointResult(False, message=problem))
        return out

    def _lacks(self, backend: Backend, condition: str | None, hit_condition: str | None) -> str | None:
        """What ``backend`` cannot do with a breakpoint's condition or hit condition, or None."""
        if condition and not backend.capabilities.conditional_breakpoints:
            return (f"{self.core.adapter} does not support conditions on breakpoints; set the breakpoint without one "
                    "and check the value with debug_evaluate when it stops")
        if hit_condition and not backend.capabilities.hit_conditional_breakpoints:
            return (f"{self.core.adapter} does not support hit conditions; set the breakpoint without one and "
                    "continue past the hits you do not want")
        return None

    async def send_watches(self, frame: FrameRef | None) -> None:
        bps = sorted(self.core.breakpoints.watches(), key=lambda b: b.id)
        results = await self.core.connected_backend().set_data_breakpoints([data_spec(b) for b in bps], frame)
        _apply(bps, results)

    # -- events -----------------------------------------------------------------------------------------

    def changed(self, bp_id: int, result: BreakpointResult) -> None:
        bp = self.core.breakpoints.items.get(bp_id)
        if bp is not None:
            bp.apply(result)

    def count_hits(self, event: StopEvent) -> bool:
        """Count the hits a stop names; False when it names none (counted by location in the report)."""
        counted = False
        for bp_id in event.hit_breakpoint_ids:
            bp = self.core.breakpoints.items.get(bp_id)
            if bp is not None:
                bp.hits += 1
                counted = True
        return counted

    # -- what the agent asks ------------------------------------------------------------------------------

    def validate_line(self, path: str, line: int) -> None:
        lines = src.read_lines(path)
        if line < 1 or line > len(lines):
            raise UsageError(f"line {line} is outside {path} (it has {len(lines)} lines); "
                             f"pass a line between 1 and {len(lines)}")

    def check_supported(self, condition: str | None, hit_condition: str | None) -> None:
        """Refuse what the session's debugger cannot do with a breakpoint (one set before the session is sent
        at its start only if the debugger can do it, else it is listed unverified with the reason)."""
        backend = self.core.live_backend()
        problem = self._lacks(backend, condition, hit_condition) if backend is not None else None
        if problem is not None:
            raise UsageError(problem)

    async def add_line(self, file: str, line: int, condition: str | None = None, hit_condition: str | None = None,
                       log_message: str | None = None, internal: bool = False) -> Breakpoint:
        path = self.core.resolve_path(file)
        self.validate_line(path, line)
        conditions.check_hit(hit_condition)
        self.check_supported(condition, hit_condition)
        conditions.check(self.core.language, condition, log_message)
        fields = dict(file=path, line=line, function=None, watch=None, condition=condition,
                      hit_condition=hit_condition, log_message=log_message)
        if not internal and (existing := self.core.breakpoints.same(**fields)) is not None:
            return existing
        bp = self.core.breakpoints.add(**fields, internal=internal)
        if self.core.live_backend() is not None:
            try:
                await self._send(self.send_file(path), f"the debugger rejected the breakpoint at {path}:{line}")
            except UsageError:
                self.core.breakpoints.remove(bp.id)
                raise
        if self.core.life.ended:
            bp.message = self._kept_for_the_next_run()
        return bp

    async def _send(self, change: Awaitable[None], refusal: str | None = None) -> None:
        """Send a change while the program runs or is stopped. A debugger that lost the program as it ended (it
        refused the change, or its connection closed) is not refusing: the program's end is the answer, and the
        session reads ended. A refusal otherwise raises, as ``UsageError("<refusal>: <reason>")`` if named."""
        try:
            await self.core.call(change, may_end=True)
        except AdapterRequestError as exc:
            if await self.core.ended_meanwhile():
                return
            if refusal is not None:
                raise UsageError(f"{refusal}: {exc.message}") from exc
            raise
        except SessionEndedError:
            if self.core.life.state != State.exited:  # the debugger itself is gone: that is the answer
                raise

    def _kept_for_the_next_run(self) -> str:
        """Why a breakpoint added after (or as) the program ended is not set: kept for the next run."""
        life = self.core.life
        ended = f"the program has exited (code {life.exit_code})" if life.state == State.exited else \
            "the session has ended"
        return f"{ended} before it was set; debug_restart runs the program again with it"

    async def add_function(self, function: str, condition: str | None = None,
                           hit_condition: str | None = None) -> Breakpoint:
        backend = self.core.live_backend()
        if backend is not None and not backend.capabilities.function_breakpoints:
            raise UsageError(f"{self.core.adapter} does not support function breakpoints; "
                             "set a line breakpoint on the function's first line instead")
        conditions.check_hit(hit_condition)
        self.check_supported(condition, hit_condition)
        conditions.check(self.core.language, condition, None)
        fields = dict(function=function, condition=condition, hit_condition=hit_condition)
        if (existing := self.core.breakpoints.same(**fields)) is not None:
            return existing
        bp = self.core.breakpoints.add(**fields)
        if backend is not None:
            await self._send(self.send_functions())
        if self.core.life.ended:
            bp.message = self._kept_for_the_next_run()
        return bp

    async def set_exception_filters(self, filters: list[str]) -> None:
        """Filters and, where the backend takes them, exception type names (any name that is not a filter). A test
        run by name keeps the filter that stops where its test fails (a type set beside it must not hide the failure)
        unless the filters are cleared (an empty list)."""
        backend = self.core.live_backend()
        wanted = list(dict.fromkeys(filters))
        test = self.core.test
        if wanted and test is not None:  # a test run's failure stop stays (an empty list clears it too)
            wanted = list(dict.fromkeys([*wanted, *test.filters]))
        if backend is not None and backend.capabilities.exception_filters:
            _check_exception_names(wanted, backend, self.core.adapter)
        if backend is not None:
            await self._send(backend.set_exception_filters(wanted))
        self.core.exception_filters = wanted

    async def remove(self, bp_id: int | None, file: str | None, everything: bool) -> list[int]:
        store = self.core.breakpoints
        if everything:
            doomed = store.visible()
        elif bp_id is not None:
            bp = store.items.get(bp_id)
            if bp is None or bp.internal:
                known = [b.id for b in store.visible()]
                raise UsageError(f"no breakpoint with id {bp_id}; existing ids: {known or 'none'}")
            doomed = [bp]
        elif file is not None:
            path = self.core.resolve_path(file)
            doomed = [b for b in store.in_file(path) if not b.internal]
            if not doomed:
                raise UsageError(f"no breakpoints in {echo(path)}; see debug_breakpoints")
        else:
            raise UsageError("say which breakpoints to remove: id, file, or all=true")
        await self.drop(doomed)
        return [b.id for b in doomed]

    async def drop(self, doomed: list[Breakpoint]) -> None:
        """Remove breakpoints from the store and, when connected, from the debugger."""
        for bp in doomed:
            self.core.breakpoints.retire(bp.id)
        if self.core.live_backend() is None:
            return
        for path in sorted({b.file for b in doomed if b.file}):
            await self.core.call(self.send_file(path))
        if any(b.function for b in doomed):
            await self.core.call(self.send_functions())
        if any(b.watch for b in doomed):
            await self.core.call(self.send_watches(None))

    def infos(self) -> list[BreakpointInfo]:
        return [bp.info() for bp in self.core.breakpoints.visible()]

    def reset_for_restart(self) -> None:
        """A new process: nothing is verified or hit yet, and watched addresses must be resolved again."""
        for bp in self.core.breakpoints.items.values():
            bp.hits = 0
            bp.verified = False
            bp.data_id = None

    def stopped_frame(self) -> FrameRef | None:
        """The frame watch expressions resolve in: the stopped thread's innermost, if stopped."""
        stop = self.core.life.stop
        if self.core.life.state != State.stopped or stop is None:
            return None
        return FrameRef(stop.thread_id or 0, 0)


def _apply(bps: list[Breakpoint], results: list[BreakpointResult]) -> None:
    for bp, result in zip(bps, results, strict=False):
        bp.apply(result)
