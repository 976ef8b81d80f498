"""Method breakpoints on Java: ``Class.method``, ``pkg.Class.method``, ``Outer$Inner.method`` or
``Outer.Inner.method``, ``Class::method``, ``Class.<init>`` (or ``Class.Class``) for constructors, and a
bare ``method`` (that method in every class outside the JDK).

Each method found gets a breakpoint at its first line-table location (every overload, synthetic
and bridge methods left out). Classes loaded already are searched at once; for the rest, a
``ClassPrepare`` request per class-name pattern (every non-JDK class for a bare name) binds the
breakpoint when a matching class loads. Hit counts are counted here, like line breakpoints'.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field

from polydbg.backends.base import BreakpointResult, FunctionBreakpoint
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.classes import JavaClass, Method, short_name
from polydbg.backends.kit import hits
from polydbg.errors import echo
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import EventKind, Location, Modifier, Suspend

SYNTHETIC = 0x1000
BRIDGE = 0x40
LISTED_METHODS = 12
_PARAMETERS = re.compile(r"\s*\(.*\)\s*$")


@dataclass(frozen=True)
class MethodName:
    qualifier: str | None  # the class part as written ("Basics.Point"); None for a bare name
    method: str  # "<init>" for constructors

    def wants(self, cls: JavaClass) -> bool:
        if jvm.is_hidden(cls):
            return False
        if self.qualifier is None:
            return not jvm.is_runtime(cls)
        return jvm.class_matches(cls, self.qualifier)


def parse(name: str) -> MethodName:
    """The class and method a function breakpoint's name means; ValueError says what is accepted."""
    text = _PARAMETERS.sub("", name.strip()).replace("::", ".").replace("#", ".")
    qualifier, _, method = text.rpartition(".")
    accepted = ("name a Java method as Class.method, pkg.Class.method, Outer.Inner.method (or Outer$Inner.method), "
                "Class.<init> for constructors, or a bare method name (every class outside the JDK)")
    if not (jvm.IDENTIFIER.match(method) or method in ("<init>", "<clinit>")):
        raise ValueError(f"{echo(name)} is not a method name: {accepted}")
    if qualifier and not jvm.valid_qualifier(qualifier):
        raise ValueError(f"{echo(name)} is not a method name: {accepted}")
    if qualifier and method == re.split(r"[.$]", qualifier)[-1]:
        method = "<init>"  # Point.Point: the constructor
    return MethodName(qualifier or None, method)


@dataclass
class MethodBp:
    spec: FunctionBreakpoint
    name: MethodName
    counter: hits.HitCounter = field(default_factory=lambda: hits.HitCounter(None))
    requests: dict[int, Location] = field(default_factory=dict)  # JDWP breakpoint request → where
    bound: list[str] = field(default_factory=list)  # "Basics.square(int)" for each method bound
    classes_seen: set[int] = field(default_factory=set)
    missing: list[str] = field(default_factory=list)  # classes of that name without the method
    line: int | None = None

    def result(self) -> BreakpointResult:
        if self.bound:
            shown = ", ".join(self.bound[:4]) + (f" and {len(self.bound) - 4} more" if len(self.bound) > 4 else "")
            return BreakpointResult(True, line=self.line, message=f"in {shown}")
        if self.missing:
            return BreakpointResult(False, message="; ".join(self.missing[:3]))
        what = self.name.qualifier or f"with a method {self.name.method}"
        return BreakpointResult(False, message=f"not bound yet: no class {what} is loaded; it binds when one loads")


class MethodBreakpoints:
    """The function breakpoints of one JVM connection."""

    def __init__(self, vm: jvm.Vm, changed: Callable[[int, BreakpointResult], None]) -> None:
        self._vm = vm
        self._changed = changed
        self._bps: dict[int, MethodBp] = {}
        self._by_request: dict[int, int] = {}  # JDWP breakpoint request → polydbg id
        self._prepares: list[int] = []

    async def replace(self, specs: list[FunctionBreakpoint], started: bool) -> list[BreakpointResult]:
        old = self._bps
        for request in self._by_request:
            await self._vm.clear_request(EventKind.BREAKPOINT, request)
        await jvm.clear_prepares(self._vm, self._prepares)
        self._bps, self._by_request, self._prepares = {}, {}, []
        loaded = await jvm.loaded_classes(self._vm) if started and specs else []
        results = []
        qualifiers: set[str | None] = set()
        for spec in specs:
            try:
                name = parse(spec.name)
            except ValueError as exc:
                results.append(BreakpointResult(False, message=str(exc)))
                continue
            try:
                counter = hits.HitCounter.of(spec.hit_condition)
            except ValueError:
                results.append(hits.refusal(str(spec.hit_condition)))
                continue
            previous = old.get(spec.id)
            if previous is not None and previous.spec == spec:
                counter = previous.counter  # an unchanged breakpoint keeps counting
            bp = self._bps[spec.id] = MethodBp(spec, name, counter)
            for cls in loaded:
                if name.wants(cls):
                    with contextlib.suppress(JdwpRequestError):  # unloaded since it was listed
                        await self._bind(bp, cls)
            qualifiers.add(name.qualifier)
            results.append(bp.result())
        if None in qualifiers:
            qualifiers = {None}  # every non-JDK class covers the named ones too
        for qualifier in sorted(qualifiers, key=str):
            self._prepares.extend(await jvm.prepare_requests(self._vm, qualifier))
        return results

    async def class_loaded(self, cls: JavaClass) -> None:
        """A class was prepared: bind the breakpoints whose name means it."""
        for bp in self._bps.values():
            if bp.name.wants(cls):
                was = bp.result()
                await self._bind(bp, cls)
                now = bp.result()
                if now != was:
                    self._changed(bp.spec.id, now)

    async def redefined(self, cls: JavaClass) -> None:
        """A reload replaced ``cls``'s code, and the JVM's agent dropped its breakpoints with the old code: set again
        in the new code."""
        prefix = short_name(cls.signature) + "."
        for bp in self._bps.values():
            was = bp.result()
            if not jvm.forget_requests_in(cls.id, bp.requests, self._by_request):
                continue
            bp.bound = [name for name in bp.bound if not name.startswith(prefix)]
            bp.classes_seen.discard(cls.id)
            if not bp.requests:
                bp.line = None
            await self._bind(bp, cls)
            if bp.result() != was:
                self._changed(bp.spec.id, bp.result())

    def owner(self, request_id: int) -> int | None:
        return self._by_request.get(request_id)

    def counts(self, bp_id: int) -> bool:
        """A hit of the breakpoint: whether it stops (its hit condition holds)."""
        bp = self._bps.get(bp_id)
        if bp is None:
            return False
        return bp.counter.hit()

    def spec(self, bp_id: int) -> FunctionBreakpoint | None:
        bp = self._bps.get(bp_id)
        return bp.spec if bp is not None else None

    async def _bind(self, bp: MethodBp, cls: JavaClass) -> None:
        if cls.id in bp.classes_seen:
            return
        bp.classes_seen.add(cls.id)
        classes = self._vm.classes
        methods = [m for m in (await classes.methods(cls)).values() if not m.modifiers & (SYNTHETIC | BRIDGE)]
        named = [m for m in methods if m.name == bp.name.method]
        if not named:
            if bp.name.qualifier is not None:
                others = sorted({m.name for m in methods if not m.name.startswith("<")})
                listed = ", ".join(others[:LISTED_METHODS]) + (", …" if len(others) > LISTED_METHODS else "")
                bp.missing.append(f"{cls.name} has no method {bp.name.method!r} (it has: {listed or 'none'})")
            return
        client = self._vm.client
        for method in named:
            table = await classes.lines(cls, method)
            if not table:  # abstract or native: no code to stop in
                if bp.name.qualifier is not None:
                    bp.missing.append(f"{describe(cls, method)} has no code (abstract or native): name an "
                                      f"implementation, or the bare method name {method.name}")
                continue
            where = Location(cls.tag, cls.id, method.id, table[0][0])
            modifiers = client.writer().u1(Modifier.LOCATION_ONLY).location(where).bytes()
            request = await self._vm.event_request(EventKind.BREAKPOINT, Suspend.ALL, modifiers, 1)
            bp.requests[request] = where
            self._by_request[request] = bp.spec.id
            bp.bound.append(describe(cls, method))
            if bp.line is None:
                bp.line = table[0][1]


def describe(cls: JavaClass, method: Method) -> str:
    """``Basics.Point.norm1()``, ``Ticker.add(String)``, ``Ticker.<init>(String)``."""
    parameters, _ = jvm.parameter_types(method.signature)
    return f"{short_name(cls.signature)}.{method.name}({', '.join(parameters)})"
