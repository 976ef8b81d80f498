"""Go call traces on delve (``Backend.record_calls``): each call of a named function recorded by stops polydbg
takes and resumes at once, never shown to the agent.

delve's DAP server has no breakpoint that records without stopping except a logpoint, which only a source line
takes and which cannot read the caller or see the call end. So a call is recorded by two stops:

- its entry: an internal function breakpoint per function (delve resolves ``main.fib``, ``fib``,
  ``(*Parser).Parse``, ``prices.Total``), where the frame's Locals hold the arguments (its unnamed results,
  ``~r0``…, are noise until the function returns), frame 1 the caller, the thread the goroutine, and
  ``runtime.frameoff`` (delve's offset of the frame from its goroutine's stack top, stable while the stack grows
  and moves) tells the call apart from the other calls of the same function on that goroutine;
- its exit: an instruction breakpoint on each ``RET`` of the function (found by disassembling it at its first
  entry), where frame 0 is still the call's own frame, so its results are read by their names (``~r0``, a named
  result) as Go's register ABI left them in their slots: delve's DAP server sends no return values.

A call that never reaches a ``RET`` of its own was left by a panic: ``runtime.gopanic`` (an internal breakpoint)
gives the panic's value, and ``runtime.deferreturn`` in that goroutine (a breakpoint whose condition delve judges,
armed only while it panics) is where the function that recovered goes on: the recorded calls deeper than it end
there, raised with that value. The next stop on the goroutine at a call's frame or above it ends it too (raised
if a panic began after it, else ended without a value). A call's time runs from the resume after its entry was
read to its RET's stop: it includes one stop's cost (1-3 ms) and those of the recorded calls it made.

Callees (``spec.depth``): when a recorded call above the depth first runs, the program's own functions its code
calls directly (``CALL $main.clamp(SB)`` in the disassembly its RETs are found in; the runtime's and the standard
library's left out; calls through a function value or an interface unseen) get function breakpoints as named ones
do. A callee's call is recorded only when the call open on its goroutine is its caller (frame 1), one level below it
and within the depth; elsewhere its stops are resumed unrecorded (they cost as a recorded call's do).

delve reports one breakpoint hit per stop: when two goroutines hit theirs at the same moment, the other's hit is
lost (its entry: the call's end is counted as unseen in the notes; its RET: the call reads as not ended).
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import re
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polydbg.backends.base import BreakpointResult, FunctionBreakpoint
from polydbg.backends.delve.values import short_types
from polydbg.backends.recording import CallRecord, CallSink, CallSpec
from polydbg.errors import AdapterError, UsageError

log = logging.getLogger(__name__)

Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
# polydbg's ids of the trace's internal function breakpoints (the session's are positive; delve's backend has others)
PANIC_BREAKPOINT = -22  # on runtime.gopanic: a panic begins
RECOVERED_BREAKPOINT = -23  # on runtime.deferreturn in a goroutine whose panic may be recovered
TRACED_BREAKPOINTS = -100  # one per function the trace records (-100, -101, …)
_RESULT = re.compile(r"^~r\d+$")
_CALL = re.compile(r"^CALL \$(.+)\(SB\)$")
_BOXED = re.compile(r"^interface \{\}\((.+?)\) (.*)$", re.S)
_EXISTS = re.compile(r"exists at (.+):(\d+)")  # delve's refusal of a second breakpoint at a place
SCAN_INSTRUCTIONS = 4000  # at most this many instructions of a function looked at for its RETs
NM_TIMEOUT_S = 10.0
NAMES = "name it as Go does: pkg.Func, main.fib, (*T).Method or T.Method, or a bare Func of the main package"


@dataclass
class _Call:
    function: str
    args: tuple[tuple[str, str], ...]
    results: tuple[str, ...]  # the names its results are read by at a RET (~r0, or the named results)
    caller: str | None
    thread: int
    frame_offset: int
    began: float
    file: str | None
    line: int | None
    started: float
    depth: int = 0  # 0: a named function's; n: a callee n levels below a recorded call


@dataclass
class _Goroutine:
    calls: list[_Call] = field(default_factory=list)  # outermost first
    panic: tuple[float, str] | None = None  # (when, value) of the last panic it began


def bounded(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[:chars - 1] + "…"


def results_text(values: list[str], chars: int) -> str:
    """A call's results as a step out shows them: one as it is, several as a tuple (``(*version.Version {…},
    error nil)``), each cut to its share of ``chars`` so that a wide first one leaves the error after it."""
    if len(values) == 1:
        return bounded(values[0], chars)
    room = max(chars - 2 - 2 * (len(values) - 1), len(values))
    cut: dict[int, str] = {}
    for index in sorted(range(len(values)), key=lambda i: len(values[i])):  # the short ones first, whole
        share = room // (len(values) - len(cut))
        cut[index] = bounded(values[index], share)
        room -= len(cut[index])
    return f"({', '.join(cut[index] for index in range(len(values)))})"


def named_results(path: str | None, line: int | None) -> tuple[str, ...]:
    """The names of a function's named results, from its declaration at ``line`` of its source (DWARF lists them
    with its parameters): ``func parseAll(p *Parser) (parsed int, err error) {`` → ``("parsed", "err")``."""
    try:
        text = Path(path).read_text(errors="replace").splitlines()[line - 1:line + 9] if path and line else []
    except OSError:
        return ()
    declaration = " ".join(text).partition("{")[0]
    groups, depth, start = [], 0, 0
    for index, char in enumerate(declaration):
        if char == "(":
            depth, start = depth + 1, (index + 1 if depth == 0 else start)
        elif char == ")":
            depth -= 1
            if depth == 0:
                groups.append((declaration[start:index], declaration[index + 1:].strip()))
    if not groups or groups[-1][1] or len(groups) < 2 or not declaration[:declaration.find("(")].strip():
        return ()  # the last parenthesis is not a results list (a single unnamed result, or none)
    names = []
    for part in groups[-1][0].split(","):
        words = part.split()
        if len(words) >= 2:
            names.append(words[0])
        elif len(words) == 1 and names:
            return ()  # "(int, error)": unnamed
        elif len(words) == 1:
            names.append(words[0])  # "(a, b int)": a named, its type after the next
    return tuple(names) if len(groups[-1][0].split(",")[-1].split()) >= 2 else ()


def short(function: str) -> str:
    """A function as Go names it in code, its package by its last path element: ``example.com/shop.Total`` →
    ``shop.Total`` (``main.(*Parser).Parse`` as it is)."""
    return function[function.split("(")[0].split("[")[0].rfind("/") + 1:]


def panic_value(shown: str) -> str:
    """A panic's value as delve shows gopanic's ``e``, without the empty interface around it:
    ``interface {}(string) "boom"`` → ``"boom"``, ``interface {}(*errors.errorString) *{s: "x"}`` →
    ``*errors.errorString {s: "x"}``."""
    boxed = _BOXED.match(shown)
    if boxed is None:
        return shown
    kind, value = boxed.groups()
    if kind == "string":
        return value
    return f"{kind} {value[1:] if kind.startswith('*') and value.startswith('*') else value}"


def caller_of(frame: dict[str, Any]) -> str:
    path = (frame.get("source") or {}).get("path")
    name = short(str(frame.get("name")))
    return f"{name} ({Path(path).name}:{frame.get('line')})" if path else name


def body(instructions: list[dict[str, Any]]) -> list[str]:
    """The instructions' text of a function disassembled from its first line on, up to its end (Go pads between
    functions with INT3)."""
    found = []
    growing = False  # past the call that grows the stack, whose JMP back to the start ends the function
    for instruction in instructions:
        text = str(instruction.get("instruction", "")).strip()
        if text.startswith("INT $0x3") or text == "?" or (growing and text.startswith("JMP")):
            break
        growing = growing or text.startswith("CALL $runtime.morestack")
        found.append(text)
    return found


def rets(instructions: list[dict[str, Any]]) -> list[int]:
    """The addresses of the RET instructions of a function disassembled from its first line on, up to its end."""
    return [int(str(instruction["address"]), 16)
            for instruction, text in zip(instructions, body(instructions), strict=False) if text.startswith("RET")]


def callees(instructions: list[dict[str, Any]], module: str | None = None) -> list[str]:
    """The program's own functions a function disassembled from its first line on calls directly (``CALL
    $main.clamp(SB)``), in the order of its code; the runtime's and the standard library's left out."""
    found = [called[1] for text in body(instructions) if (called := _CALL.match(text))]
    return list(dict.fromkeys(function for function in found if own_function(function, module)))


def names_it(name: str, function: str) -> bool:
    """Whether a function a trace names (``fib``, ``main.fib``, ``(*Parser).Parse``) is ``function`` as delve
    names it (``main.fib``)."""
    named = short(function)
    return name in (function, named) or named.endswith("." + name)


def aliased(name: str, refusal: str, bound: list[tuple[str, int | None]]) -> bool:
    """Whether delve refused ``name``'s breakpoint because one of ``bound`` (the names before it in the trace, each
    with the line its breakpoint bound at, None: it did not) names the same function: the refusal says a
    breakpoint exists at that line, and the two names end with the same function's (``Comma``,
    ``humanize.Comma``; ``Parse``, ``(*Parser).Parse``)."""
    place = _EXISTS.search(refusal)
    if place is None:
        return False
    last = re.split(r"[./)]", name)[-1]
    return any(line == int(place[2]) and re.split(r"[./)]", other)[-1] == last for other, line in bound)


def own_function(function: str, module: str | None = None) -> bool:
    """Whether a function is the program's own: of package main, of the program's ``module`` (``shop``,
    ``shop/internal/cart``), or of a module (its path's first element has a dot: ``example.com/shop``), not the
    standard library's (``bytes``, ``compress/flate``) or the runtime's."""
    if module and function.startswith((f"{module}.", f"{module}/")):
        return True
    if function.startswith("main."):
        return function not in ("main.main", "main.init") and not function.startswith("main.init.")
    return "/" in function.split("(")[0] and "." in function.split("/")[0]


async def closest_functions(binary: str | None, name: str, module: str | None = None) -> list[str]:
    """The program's own functions (its executable's symbols, the standard library's left out) nearest to
    ``name``."""
    if not binary or not Path(binary).exists():
        return []
    try:
        process = await asyncio.create_subprocess_exec("go", "tool", "nm", binary, stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.DEVNULL)
        out, _ = await asyncio.wait_for(process.communicate(), NM_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError):
        return []
    names: set[str] = set()
    for line in out.decode(errors="replace").splitlines():
        parts = line.split(maxsplit=2)
        if len(parts) == 3 and parts[1] in ("T", "t") and own_function(parts[2], module):
            names.add(short(parts[2]))
    # a qualified name against the functions' (main.fib, list.(*List).Len), a bare one against their own names
    keyed: dict[str, list[str]] = {}
    for found in names:
        key = found if "." in name else re.split(r"[.)]", found)[-1]
        keyed.setdefault(key, []).append(found)
    return sorted({found for key in difflib.get_close_matches(name, sorted(keyed), n=5, cutoff=0.6)
                   for found in keyed[key]})[:5]


class DelveCalls:
    """One call trace: what is recorded of the calls under way on each goroutine, and the stops it takes."""

    def __init__(self, request: Request, refine: Callable[[Coroutine[Any, Any, None]], None],
                 resume: Callable[[int], Awaitable[None]],
                 send: Callable[[list[FunctionBreakpoint]], Awaitable[None]],
                 send_instructions: Callable[[str, list[int]], Awaitable[dict[int, int]]], spec: CallSpec,
                 sink: CallSink, module: str | None = None) -> None:
        self._module = module  # the program's module path (its functions are its own, a dot in it or not)
        self._request = request
        self._send_instructions = send_instructions  # its RETs' breakpoints, beside a race report's
        self._send = send  # the trace's function breakpoints, sent with the session's (replacing the last)
        self._refine = refine  # runs a stop's handling while later events wait (kit.ordering)
        self._resume = resume
        self.spec = spec
        self._sink = sink
        self.entry_ids: set[int] = set()  # delve's ids of the functions' breakpoints (the callees' too)
        self.callee_ids: set[int] = set()  # of the callees' (spec.depth)
        self._callees: list[str] = []  # the functions the recorded ones call directly, to spec.depth levels
        self._calls_of: dict[str, list[str]] = {}  # function → the program's functions it calls, once disassembled
        self._expanded: set[str] = set()  # the functions whose callees are bound
        self._named: set[str] = set()  # the named functions as delve's frames name them, once entered
        self.panic_id: int | None = None
        self.recovered_id: int | None = None
        self._panicking: set[int] = set()  # goroutines in a panic that recorded calls may be left by
        self.unbound: list[str] = []  # the names that bound nowhere
        self.unseen = 0  # calls seen ending whose entry was not seen
        self.inlined: set[str] = set()  # functions an optimised build inlined: their calls never end for delve
        self.unreadable = 0  # calls whose results delve could not read at their RET
        self._refused: dict[str, str] = {}  # a function the trace names → why delve refused its breakpoint
        self._rets: dict[str, list[int]] = {}  # function → its RET addresses, once disassembled
        self._ret_ids: set[int] = set()
        self._goroutines: dict[int, _Goroutine] = {}
        self._clock = time.monotonic()
        self.stopped = False
        self.delivered = 0

    def wanted(self) -> list[FunctionBreakpoint]:
        if self.stopped:
            return []
        wanted = [FunctionBreakpoint(TRACED_BREAKPOINTS - index, name)
                  for index, name in enumerate((*self.spec.functions, *self._callees))]
        wanted.append(FunctionBreakpoint(PANIC_BREAKPOINT, "runtime.gopanic"))
        if self._panicking:  # the recovering function's deferreturn: delve judges the condition, no stop elsewhere
            wanted.append(FunctionBreakpoint(RECOVERED_BREAKPOINT, "runtime.deferreturn", " || ".join(
                f"runtime.curg.goid == {goroutine}" for goroutine in sorted(self._panicking))))
        return wanted

    async def arm(self) -> None:
        await self._send(self.wanted())

    def bound(self, natives: dict[int, int], answers: dict[int, BreakpointResult]) -> None:
        """delve's ids of the breakpoints :meth:`wanted` that bound, and its answers to each (why it refused one,
        the line one bound at). A name refused because another name of the trace bound at its place (``Comma``
        and ``humanize.Comma``) is that one: its calls are recorded under the function's name, once."""
        answered = [answers.get(TRACED_BREAKPOINTS - index) for index in range(len(self.spec.functions))]
        self._refused = {name: (answer.message or "") if answer is not None and not answer.verified else ""
                         for name, answer in zip(self.spec.functions, answered, strict=True)}
        lines = [answer.line if answer is not None and answer.verified else None for answer in answered]
        same = {TRACED_BREAKPOINTS - index for index, name in enumerate(self.spec.functions)
                if aliased(name, self._refused[name], list(zip(self.spec.functions[:index], lines, strict=False)))}
        self.entry_ids = {natives[index] for index in natives if index <= TRACED_BREAKPOINTS}
        self.callee_ids = {natives[index] for index in natives
                           if index <= TRACED_BREAKPOINTS - len(self.spec.functions)}
        self.panic_id = natives.get(PANIC_BREAKPOINT)
        self.recovered_id = natives.get(RECOVERED_BREAKPOINT)
        self.unbound = [name for index, name in enumerate(self.spec.functions)
                        if TRACED_BREAKPOINTS - index not in natives and TRACED_BREAKPOINTS - index not in same]

    async def refusal(self, executable: str | None) -> UsageError | None:
        """Why the trace cannot record a function it names (None: it can record them all)."""
        if not self.unbound:
            return None
        name = self.unbound[0]
        if "exists" in self._refused.get(name, ""):
            return UsageError(f"{name} already has a breakpoint of this session where it begins, and delve takes one "
                              "breakpoint a place: remove it (debug_clear) to trace the function, or trace "
                              "lines with debug_trace(points=…)")
        closest = await closest_functions(executable, name, self._module)
        return UsageError(f"no function {name} in the program" + (f"; the closest: {', '.join(closest)}" if closest
                                                                  else "") + f" ({NAMES})")

    def claims(self, body: dict[str, Any]) -> bool:
        """Whether a ``stopped`` body is one of the trace's own stops (handled and resumed here)."""
        if self.stopped:
            return False
        hit = set(body.get("hitBreakpointIds") or [])
        thread = body.get("threadId")
        if not isinstance(thread, int) or not hit & (self.entry_ids | self._ret_ids | {self.panic_id,
                                                                                      self.recovered_id}):
            return False
        now = time.monotonic()
        if hit & self.entry_ids:
            self._refine(self._resumed(thread, self._entered(thread, now, callee=hit <= self.callee_ids)))
        elif hit & self._ret_ids:
            self._refine(self._resumed(thread, self._returning(thread, now)))
        elif self.panic_id in hit:
            self._refine(self._resumed(thread, self._panic_began(thread, now)))
        else:
            self._refine(self._resumed(thread, self._recovered(thread, now)))
        return True

    async def _resumed(self, thread: int, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception:
            log.debug("delve: a call trace's stop could not be read", exc_info=True)
        if self.delivered >= self.spec.max_calls and not self.stopped:
            await self.stop()  # as many as were asked for: the program runs on without the trace's stops
        try:
            await self._resume(thread)
        except AdapterError:
            log.debug("delve: a call trace's stop could not be resumed (the session ended?)", exc_info=True)

    async def _frames(self, thread: int, levels: int) -> list[dict[str, Any]]:
        body = await self._request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": levels})
        frames: list[dict[str, Any]] = body.get("stackFrames") or []
        return frames

    async def _value(self, expression: str, frame_id: int) -> str:
        body = await self._request("evaluate", {"expression": expression, "frameId": frame_id, "context": "watch"})
        return str(body.get("result", ""))

    async def _frame_offset(self, frame_id: int) -> int:
        return int(await self._value("runtime.frameoff", frame_id))

    async def _entered(self, thread: int, now: float, callee: bool) -> None:
        frames = await self._frames(thread, 2)
        if not frames:
            return
        top = frames[0]
        depth = self._level(thread, frames) if callee else 0
        if depth is None:
            return  # a callee's call outside a recorded call, or below the depth: not recorded
        if not callee:
            self._named.add(str(top.get("name")))
        offset, local = await asyncio.gather(self._frame_offset(top["id"]), self._locals(top["id"]))  # pipelined
        path = (top.get("source") or {}).get("path")
        named = named_results(path, top.get("line")) if not any(_RESULT.match(name) for name, _ in local) else ()
        results = tuple(name for name, _ in local if _RESULT.match(name) or name in named)
        args = tuple((name, bounded(value, self.spec.value_chars)) for name, value in local if name not in results)
        function = str(top.get("name"))
        call = _Call(function, args, results, caller_of(frames[1]) if len(frames) > 1 else None, thread, offset,
                     time.monotonic(), path, top.get("line"), now - self._clock, depth)  # timed from its resume
        if len(frames) > 1 and top.get("instructionPointerReference") == frames[1].get("instructionPointerReference"):
            self.inlined.add(short(function))  # inlined into its caller (its frame's): no RET of its own
            self._deliver(call, None)
            return
        self._gone(thread, offset, now, including=True)
        if function not in self._rets:
            await self._find_rets(function, str(top.get("instructionPointerReference", "0")))
        if depth < self.spec.depth and function not in self._expanded:
            await self._expand(function)
        self._goroutines.setdefault(thread, _Goroutine()).calls.append(call)

    def _level(self, thread: int, frames: list[dict[str, Any]]) -> int | None:
        """How many levels below a recorded call a callee's call is: one below the call open on its goroutine
        when that one called it (frame 1), within the depth; None otherwise."""
        goroutine = self._goroutines.get(thread)
        if goroutine is None or not goroutine.calls or len(frames) < 2:
            return None
        opened = goroutine.calls[-1]
        level = opened.depth + 1
        return level if frames[1].get("name") == opened.function and level <= self.spec.depth else None

    async def _expand(self, function: str) -> None:
        """Bind the callees of ``function`` (a recorded call above the depth), before it goes on to call them."""
        self._expanded.add(function)
        new = [callee for callee in self._calls_of.get(function, []) if callee not in self._callees
               and not any(names_it(name, callee) for name in self.spec.functions)]
        if new:
            self._callees.extend(new)
            await self.arm()

    async def _find_rets(self, function: str, pc: str) -> None:
        listing = await self._request("disassemble", {"memoryReference": pc, "instructionOffset": 0,
                                                      "instructionCount": SCAN_INSTRUCTIONS, "resolveSymbols": True})
        self._rets[function] = rets(listing.get("instructions") or [])
        self._calls_of[function] = callees(listing.get("instructions") or [], self._module)
        await self._place_rets()

    async def _place_rets(self) -> None:
        addresses = sorted({address for found in self._rets.values() for address in found})
        self._ret_ids = set((await self._send_instructions("calls", addresses)).values())

    async def _returning(self, thread: int, now: float) -> None:
        frames = await self._frames(thread, 1)
        if not frames or frames[0].get("name") not in self._rets:
            return  # another function's RET after the end of this one's
        offset, local = await asyncio.gather(self._frame_offset(frames[0]["id"]), self._locals(frames[0]["id"]))
        self._gone(thread, offset, now, including=False)
        goroutine = self._goroutines.setdefault(thread, _Goroutine())
        call = goroutine.calls[-1] if goroutine.calls else None
        if call is None or call.frame_offset != offset or call.function != frames[0].get("name"):
            # a call begun before the trace, or whose entry delve did not report (a callee's: not recorded)
            self.unseen += frames[0].get("name") in self._named
            return
        goroutine.calls.pop()
        values = {name: value for name, value in local if name in call.results and not value.startswith("(unreadable")}
        self.unreadable += len(values) < len(call.results)
        found = [values[name] for name in call.results if name in values]
        self._deliver(call, now, returned=results_text(found, self.spec.value_chars) if values else None)

    async def _locals(self, frame_id: int) -> list[tuple[str, str]]:
        """The frame's arguments, results and locals in scope, as (name, value)."""
        scopes = (await self._request("scopes", {"frameId": frame_id})).get("scopes") or []
        if not scopes:
            return []
        found = (await self._request("variables", {"variablesReference": scopes[0]["variablesReference"]})
                 ).get("variables") or []
        return [(str(v.get("name", "")), short_types(str(v.get("value", "")))) for v in found]

    async def _panic_began(self, thread: int, now: float) -> None:
        frames = await self._frames(thread, 1)
        goroutine = self._goroutines.get(thread)
        if frames and goroutine is not None and goroutine.calls:
            goroutine.panic = (now, panic_value(await self._value("e", frames[0]["id"])))
            if thread not in self._panicking:
                self._panicking.add(thread)
                await self.arm()

    async def _recovered(self, thread: int, now: float) -> None:
        """The function that recovered a panic goes on at its deferreturn: the calls deeper than it have ended."""
        frames = await self._frames(thread, 2)
        if len(frames) > 1:
            self._gone(thread, await self._frame_offset(frames[1]["id"]), now, including=False)
        self._panicking.discard(thread)
        await self.arm()

    def _gone(self, thread: int, offset: int, now: float, including: bool) -> None:
        """The calls on ``thread`` deeper than the frame at ``offset`` (and at it, ``including``) have ended
        without a RET of their own: a panic unwound them."""
        goroutine = self._goroutines.get(thread)
        if goroutine is None:
            return
        while goroutine.calls and (goroutine.calls[-1].frame_offset < offset
                                   or (including and goroutine.calls[-1].frame_offset == offset)):
            call = goroutine.calls.pop()
            panic = goroutine.panic
            raised = f"panic: {panic[1]}" if panic is not None and panic[0] >= call.began else None
            self._deliver(call, now, raised=bounded(raised, self.spec.value_chars) if raised else None)

    def _deliver(self, call: _Call, now: float | None, returned: str | None = None, raised: str | None = None) -> None:
        if self.delivered >= self.spec.max_calls:
            return
        self.delivered += 1
        self._sink(CallRecord(
            function=short(call.function), args=call.args, returned=returned, raised=raised, caller=call.caller,
            thread=f"goroutine {call.thread}", duration_us=None if now is None else round((now - call.began) * 1e6, 1),
            file=call.file, line=call.line, ended=now is not None, started=call.started, depth=call.depth))

    async def stop(self) -> list[str]:
        """Disarm (idempotent; quiet once the program has ended) and deliver the calls under way as unended."""
        if not self.stopped:
            self.stopped = True
            try:
                await self._send([])
                if self._rets:
                    self._rets.clear()
                    await self._place_rets()
            except Exception:
                log.debug("delve: a call trace's breakpoints could not be cleared", exc_info=True)
            self.unended()
        notes: list[str] = []
        optimised = [f"{', '.join(sorted(self.inlined))} inlined: delve sees where each call begins, not its end "
                     "or value (listed as not ended)"] if self.inlined else []
        if self.unreadable:
            optimised.append(f"the results of {self.unreadable} call(s) unreadable at their RET (kept in registers)")
        if optimised:
            notes.append(f"an optimised build: {'; '.join(optimised)}; build with -gcflags='all=-N -l' (delve does "
                         "for the .go file or package it builds)")
        if not self.unseen:
            return notes
        return [*notes, f"{self.unseen} call(s) ended whose start was not seen, not listed: begun before the trace, "
                "or on a goroutine that hit its breakpoint at the same moment as another (delve's DAP server reports "
                "one hit per stop); a call whose end was missed so reads as not ended"]

    def unended(self) -> None:
        """Deliver the calls still under way, as not ended."""
        for goroutine in self._goroutines.values():
            for call in goroutine.calls:
                self._deliver(call, None)
            goroutine.calls.clear()
