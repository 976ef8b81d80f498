"""Line breakpoints (and stop_on_entry's) on the JVM: each a ``Breakpoint`` event request per location,
suspending the whole VM.

- Binding: a file's classes are found by their ``SourceFile`` attribute and package, not by class
  name, so inner, anonymous and lambda classes of the file are covered (``classes.matches_file``).
  Classes not loaded yet get a ``ClassPrepare`` request per file (``SourceNameMatch`` on the file's
  name, suspending only the loading thread): when one loads, its line tables are read and the
  breakpoints set (``class_prepared``; the event's thread is resumed by the stop logic). A line
  without code binds at the next line with code in the same method (``Classes.locations_of_line``).
  A file's first breakpoint after the JVM ran past its start scans the classes loaded already.
- Changes: a file's breakpoints are diffed against those set (``kit.bpdiff``): an unchanged one keeps
  its JDWP requests and its hit count, as gdb's do; only changed ones are cleared and set again.
- Hits: conditions, hit counts and logpoints are checked here at each hit (conditions.py; a hit that
  does not stop resumes the VM).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field

from polydbg.backends.base import BreakpointResult, SourceBreakpoint
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.checks import problem as expression_problem
from polydbg.backends.java.classes import JavaClass, matches_file
from polydbg.backends.java.conditions import Conditions
from polydbg.backends.java.sources import Sources
from polydbg.backends.kit import bpdiff, hits
from polydbg.backends.kit.bpdiff import Placed
from polydbg.jdwp.codec import EventKind, Location, Modifier, Suspend

MAIN_SIGNATURES = ("([Ljava/lang/String;)V", "()V")  # main(String[]) and Java 21's / Kotlin's main()
NOT_BOUND = "not bound yet: no class of this file is loaded; it binds when one loads"


@dataclass
class LineBp:
    spec: SourceBreakpoint
    file: str
    package: str
    requests: dict[int, Location] = field(default_factory=dict)  # JDWP request id → where it is set
    counter: hits.HitCounter = field(default_factory=lambda: hits.HitCounter(None))
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))


def line_key(spec: SourceBreakpoint) -> Hashable:
    """What makes a line breakpoint the same one (everything but polydbg's id)."""
    return (spec.line, spec.condition, spec.hit_condition, spec.log_message)


def result_of(entry: Placed[LineBp]) -> BreakpointResult:
    """What to report for a breakpoint: a set one's own result (it changes as its classes load), else the refusal."""
    return entry.handle.result if entry.handle is not None else entry.result


class LineBreakpoints:
    def __init__(self, vm: jvm.Vm, sources: Sources, conditions: Conditions,
                 changed: Callable[[int, BreakpointResult], None], classes_loaded: Callable[[], bool]) -> None:
        self._vm = vm
        self._sources = sources
        self._conditions = conditions
        self._changed = changed
        self._classes_loaded = classes_loaded  # whether the JVM may have loaded program classes (past its start)
        self._files: dict[str, list[Placed[LineBp]]] = {}  # file → its breakpoints, in the specs' order
        self._by_request: dict[int, LineBp] = {}
        self._prepare_requests: dict[str, int] = {}  # SourceFile name → ClassPrepare request id

    def files(self) -> list[str]:
        """The files with breakpoints set (not only refused ones)."""
        return [path for path, entries in self._files.items() if any(e.handle is not None for e in entries)]

    async def replace(self, file: str, specs: list[SourceBreakpoint]) -> list[BreakpointResult]:
        path = os.path.abspath(file)
        package = self._sources.package_of(path)
        self._sources.add_file_root(path, package)
        plan = bpdiff.plan(self._files.pop(path, []), specs, line_key)
        for spec, kept in zip(specs, plan.keep, strict=True):
            if kept is not None and kept.handle is not None:
                kept.handle.spec = spec  # the same breakpoint (its id may be new)
        fresh = [self._new(spec, path, package) for spec in plan.to_insert(specs)]
        entries = self._files[path] = bpdiff.merge(plan.keep, fresh)  # a class loading meanwhile binds them too
        await self._remove([entry.handle for entry in plan.delete if entry.handle is not None])
        for entry in fresh:
            if entry.handle is not None:
                await self._bind_loaded(entry.handle)
        name = os.path.basename(path)
        if specs and name not in self._prepare_requests:
            modifiers = self._vm.client.writer().u1(Modifier.SOURCE_NAME_MATCH).string(name).bytes()
            self._prepare_requests[name] = await self._vm.event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD,
                                                                        modifiers, 1)
            await self._scan_loaded(name)  # may bind what was reported unbound above
        return [result_of(entry) for entry in entries]

    @staticmethod
    def _new(spec: SourceBreakpoint, path: str, package: str) -> Placed[LineBp]:
        """A breakpoint to set, or its refusal (an expression that does not parse, a hit condition that
        is not one)."""
        problem = expression_problem(spec.condition, spec.log_message)
        if problem:
            return Placed(line_key(spec), None, BreakpointResult(False, message=problem))
        try:
            counter = hits.HitCounter.of(spec.hit_condition)
        except ValueError:
            return Placed(line_key(spec), None, hits.refusal(str(spec.hit_condition)))
        return Placed(line_key(spec), LineBp(spec, path, package, counter=counter), BreakpointResult(False))

    async def _bind_loaded(self, bp: LineBp) -> None:
        """Set a new breakpoint in the file's classes known to be loaded."""
        for cls in list(self._vm.classes.by_id.values()):
            if cls.source is not None and matches_file(cls, bp.file, bp.package):
                await self._bind_in(bp, cls)
        if not bp.result.verified:
            bp.result = BreakpointResult(False, message=NOT_BOUND)

    async def _scan_loaded(self, source_name: str) -> None:
        """Classes of the file loaded before its ClassPrepare request existed (a breakpoint added later);
        none can be while the JVM waits at its start."""
        if not self._classes_loaded():
            return
        for cls in await jvm.program_classes(self._vm):
            if cls.source == source_name:
                await self.class_prepared(cls)

    async def _bind_in(self, bp: LineBp, cls: JavaClass) -> None:
        if any(where.class_id == cls.id for where in bp.requests.values()):
            return
        line, locations = await self._vm.classes.locations_of_line(cls, bp.spec.line)
        for where in locations:
            modifiers = self._vm.client.writer().u1(Modifier.LOCATION_ONLY).location(where).bytes()
            request = await self._vm.event_request(EventKind.BREAKPOINT, Suspend.ALL, modifiers, 1)
            bp.requests[request] = where
            self._by_request[request] = bp
        if locations and not bp.result.verified:
            bp.result = BreakpointResult(True, line=line)

    async def class_prepared(self, cls: JavaClass) -> None:
        """A class of a file with breakpoints was loaded: set the ones its methods contain, their requests
        pipelined (one after another, 2,000 breakpoints cost 2,000 round trips while the JVM waited)."""
        wanted = [entry.handle for path, entries in list(self._files.items())
                  if matches_file(cls, path, self._sources.package_of(path))
                  for entry in entries if entry.handle is not None]
        was = [bp.result.verified for bp in wanted]
        await asyncio.gather(*(self._bind_in(bp, cls) for bp in wanted))
        for bp, verified in zip(wanted, was, strict=True):
            if bp.result.verified and not verified:
                self._changed(bp.spec.id, bp.result)

    async def redefined(self, cls: JavaClass) -> None:
        """A reload replaced ``cls``'s code, and the JVM's agent dropped its breakpoints with the old code: each is
        set again in the new code at its line (which may bind elsewhere now: the agent is told)."""
        for path, entries in list(self._files.items()):
            if not matches_file(cls, path, self._sources.package_of(path)):
                continue
            for bp in (entry.handle for entry in entries if entry.handle is not None):
                was = bp.result
                if not jvm.forget_requests_in(cls.id, bp.requests, self._by_request):
                    continue
                if not bp.requests:
                    bp.result = BreakpointResult(False, message=NOT_BOUND)
                await self._bind_in(bp, cls)
                if bp.result != was:
                    self._changed(bp.spec.id, bp.result)

    async def _remove(self, doomed: list[LineBp]) -> None:
        """Clear breakpoints no spec wants (no hit of theirs counts from now on)."""
        requests = [request for bp in doomed for request in bp.requests]
        for request in requests:
            self._by_request.pop(request, None)
        for request in requests:
            await self._vm.clear_request(EventKind.BREAKPOINT, request)

    async def hit(self, request_id: int, thread: int) -> tuple[int, str] | None:
        """A hit of breakpoint request ``request_id`` on ``thread``: None when it does not stop (not
        ours, its condition is false, its hit count not reached, or a logpoint, which logs here), else
        its id and "" — or why its condition could not be evaluated (it stops, saying so)."""
        bp = self._by_request.get(request_id)
        if bp is None:
            return None
        spec = bp.spec
        holds = await self._conditions.holds(spec.condition, thread)
        if holds is False:
            return None
        if isinstance(holds, str):
            bp.counter.hit()
            return spec.id, holds
        if not bp.counter.hit():
            return None
        if spec.log_message is not None:
            await self._conditions.log(spec.log_message, thread)
            return None
        return spec.id, ""


class EntryBreakpoint:
    """stop_on_entry: a breakpoint at the first line of the main class's ``main``, set when it loads."""

    def __init__(self, vm: jvm.Vm, output: Callable[[str, str], None]) -> None:
        self._vm = vm
        self._output = output
        self._class: str | None = None  # the main class's signature
        self._request: int | None = None  # the breakpoint at main's first line

    async def request(self, main_class: str | None) -> None:
        if main_class is None:
            self._output("console", "polydbg: the main class is unknown, so stop_on_entry cannot stop; set a "
                                    "breakpoint in main\n")
            return
        self._class = "L" + main_class.replace(".", "/") + ";"
        modifiers = self._vm.client.writer().u1(Modifier.CLASS_MATCH).string(main_class).bytes()
        await self._vm.event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD, modifiers, 1)

    async def class_prepared(self, cls: JavaClass) -> None:
        if cls.signature != self._class:
            return
        classes = self._vm.classes
        for method in (await classes.methods(cls)).values():
            if method.name == "main" and method.signature in MAIN_SIGNATURES:
                lines = await classes.lines(cls, method)
                where = Location(cls.tag, cls.id, method.id, lines[0][0] if lines else 0)
                modifiers = self._vm.client.writer().u1(Modifier.LOCATION_ONLY).location(where).bytes()
                self._request = await self._vm.event_request(EventKind.BREAKPOINT, Suspend.ALL, modifiers, 1)
                return

    async def hit(self, request_id: int) -> bool:
        """Whether the breakpoint request is the entry's (then cleared: it stops once)."""
        if self._request is None or request_id != self._request:
            return False
        self._request = None
        await self._vm.clear_request(EventKind.BREAKPOINT, request_id)
        return True
