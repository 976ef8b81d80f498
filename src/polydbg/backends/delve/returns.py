"""What a Go step out of (or over the return of) a function returned, as gdb's finish and the others report it.

delve's DAP server sends no return values after a step (1.20.2 and its source of Aug 2026: proc reads them,
``Thread.ReturnValues``, for its terminal client only). So before a step out — or a step over a line that starts
with ``return`` — instruction breakpoints go on each ``RET`` of frame 0's function, conditioned (delve judges the
condition: no stop elsewhere) on the goroutine and on ``runtime.frameoff``, the frame's offset from its stack's
top, so a recursive call of the same function returning first does not count. At the hit, frame 0 is still the
function's own: its results are read there by their names (``~r0``…, or the named results of its declaration),
several as a tuple, the breakpoints are taken away, and the step goes on (delve's ``continue`` resumes a step a
breakpoint interrupted). The value is listed first among the caller's locals at the step's stop, named as
``kit.returns`` names it. A function that left by a panic reached no ``RET``: when the step ends in a frame above
it while the goroutine is panicking (its value at ``runtime.curg._panic.arg``), the panic is what it raised.

Cost: one ``evaluate`` of the frame's offset (frame 0 as the stop's report listed it), a disassembly of the function
the first time it is left, one ``setInstructionBreakpoints`` (the next step's or resume's replaces it), and the stop
at the ``RET`` (``stackTrace``, ``scopes``, ``variables``; named results: one ``evaluate`` each) and the ``stepOut``
from it: about 2× delve's plain step out, see bench/go_step_returns.py.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polydbg.backends.base import FrameRef, StepKind, Variable
from polydbg.backends.delve.calls import named_results, panic_value, rets, short
from polydbg.backends.delve.values import short_types
from polydbg.backends.kit import returns
from polydbg.backends.kit.frames import FrameHandles
from polydbg.errors import AdapterError

log = logging.getLogger(__name__)

Request = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
OWNER = "returns"  # its instruction breakpoints among the others' (races.SharedInstructions)
BEFORE = 600  # instructions disassembled before the PC, back to the function's start
AFTER = 1500  # and after it, to its end
_RESULT = re.compile(r"^~r\d+$")
_FUNC = re.compile(r"^\s*func\b|\bfunc\s*\(")


@dataclass
class _Leaving:
    function: str
    thread: int
    frame_offset: int
    results: tuple[str, ...] | None  # its named results (None: unnamed, ~r0…, which no expression can name)
    ids: set[int]
    at_ret: bool = False  # its RET was reached (a panic reaches none)
    returned: Variable | None = None  # what it returned, read there (None: nothing, or unreadable)


def function_start(path: str | None, line: int | None) -> int | None:
    """The line of the declaration of the function (or function literal) that ``line`` of ``path`` is in: the
    innermost ``func`` whose brace encloses it (braces in strings and comments are not told apart)."""
    try:
        text = Path(path).read_text(errors="replace").splitlines() if path and line else []
    except OSError:
        return None
    if not line or line > len(text):
        return None
    if _FUNC.search(text[line - 1]):
        return line
    depth = 0
    for index in range(line - 2, -1, -1):
        for char in reversed(text[index].partition("//")[0]):
            if char == "}":
                depth += 1
            elif char == "{" and depth:
                depth -= 1
            elif char == "{" and _FUNC.search(text[index]):
                return index + 1
    return None


def returns_here(path: str | None, line: int | None) -> bool:
    """Whether ``line`` of ``path`` is a ``return`` statement (or a ``panic``, or a one-line function's body): a
    step over it leaves the function."""
    try:
        text = Path(path).read_text(errors="replace").splitlines()[line - 1] if path and line else ""
    except (OSError, IndexError):
        return False
    return re.match(r"\s*(return\b|panic\()", text) is not None or re.search(r"\{\s*return\b", text) is not None


def bounds(instructions: list[dict[str, Any]], pc: int) -> list[int]:
    """The RETs of the function holding ``pc``, in a disassembly around it: back to the function's start (the INT3
    padding or the stack-growth call that ends the function before it) and on to its end."""
    at = next((index for index, i in enumerate(instructions) if _address(i) == pc), None)
    if at is None:
        return []
    start = at
    while start > 0:
        text = str(instructions[start - 1].get("instruction", "")).strip()
        if text.startswith("INT $0x3") or text == "?" or text.startswith("CALL $runtime.morestack"):
            break
        start -= 1
    return sorted(set(rets(instructions[start:at])) | set(rets(instructions[at:])))


def _address(instruction: dict[str, Any]) -> int:
    try:
        return int(str(instruction.get("address", "0")), 16)
    except ValueError:
        return 0


def shown(values: list[Variable]) -> Variable | None:
    """One result as it is, several as a tuple."""
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return Variable(name="", value=f"({', '.join(v.value for v in values)})")


class StepReturns:
    """The RET breakpoints of the step under way, and what it returned for the stop that ends it."""

    def __init__(self, request: Request, refine: Callable[[Coroutine[Any, Any, None]], None],
                 send_instructions: Callable[..., Awaitable[dict[int, int]]],
                 resume: Callable[[int, str], Awaitable[None]], frames: FrameHandles[int]) -> None:
        self._request = request
        self._frames = frames  # delve's ids of the frames the session listed at this stop
        self._raw: dict[int, dict[str, Any]] = {}  # delve's frames listed at this stop, by their ids
        self._refine = refine
        self._send = send_instructions
        self._resume = resume
        self._rets: dict[str, list[int]] = {}  # function → its RET addresses, once disassembled
        self._leaving: _Leaving | None = None
        self._armed = False
        self._shown: tuple[int, Variable] | None = None  # (thread, the variable) at the step's stop
        self._scope: int | None = None  # the first scope of that thread's frame 0, once listed

    async def arm(self, thread: int, kind: StepKind) -> None:
        """Before a step: its RETs armed when it may leave frame 0's function (quiet when they cannot be), the
        last step's taken away in the same request."""
        self._leaving = None
        try:
            if kind != "into" and await self._arm(thread, kind):
                return
        except (AdapterError, ValueError, KeyError):
            log.debug("delve: no return value for this step", exc_info=True)
            self._leaving = None
        await self.disarm()

    async def _arm(self, thread: int, kind: StepKind) -> bool:
        listed = None if self._frames.hidden(thread) else self._frames.get(FrameRef(thread, 0))  # (none hidden)
        top = self._raw.get(listed or 0) or next(iter((await self._request("stackTrace", {
            "threadId": thread, "startFrame": 0, "levels": 1})).get("stackFrames") or []), None)
        if top is None:
            return False
        path, line, function = (top.get("source") or {}).get("path"), top.get("line"), str(top.get("name"))
        if not path or function.startswith("runtime.") or (kind == "over" and not returns_here(path, line)):
            return False
        pc = int(str(top.get("instructionPointerReference", "0")), 16)
        offset, found = await asyncio.gather(self._value("runtime.frameoff", top["id"]), self._find(function, pc))
        if not found:
            return False
        ids = await self._send(OWNER, found, f"runtime.curg.goid == {thread} && runtime.frameoff == {int(offset)}")
        self._armed = True
        named = named_results(path, function_start(path, line))
        self._leaving = _Leaving(function, thread, int(offset), named or None, set(ids.values()))
        return True

    async def _find(self, function: str, pc: int) -> list[int]:
        if function not in self._rets:
            listing = await self._request("disassemble", {
                "memoryReference": hex(pc), "instructionOffset": -BEFORE, "instructionCount": BEFORE + AFTER,
                "resolveSymbols": True})
            self._rets[function] = bounds(listing.get("instructions") or [], pc)
        return self._rets[function]

    async def _value(self, expression: str, frame_id: int) -> str:
        body = await self._request("evaluate", {"expression": expression, "frameId": frame_id, "context": "watch"})
        return str(body.get("result", ""))

    async def disarm(self) -> None:
        """Take the RETs away (before the program runs on: a step's are left armed at its stop, where the
        function's frame is gone, so that the next step's replace them in one request)."""
        self._leaving = None
        if self._armed:
            self._armed = False
            await self._send(OWNER, [])

    def claims(self, body: dict[str, Any]) -> bool:
        """Whether a ``stopped`` body is the hit of a RET of the function being left (read, and the step resumed)."""
        leaving = self._leaving
        if leaving is None or leaving.at_ret or not set(body.get("hitBreakpointIds") or []) & leaving.ids:
            return False
        self._refine(self._returned(leaving))
        return True

    async def _returned(self, leaving: _Leaving) -> None:
        leaving.at_ret = True
        try:
            values = await self._results(leaving)
            readable = [v for v in values if not v.value.startswith("(unreadable")]
            value = shown(readable) if len(readable) == len(values) else None
            leaving.returned = None if value is None else value._replace(  # named as the trace's rows name it
                name=returns.returned_name(short(leaving.function)), value=short_types(value.value))
        except (AdapterError, IndexError, KeyError):
            log.debug("delve: a step's return value could not be read", exc_info=True)
        await self._resume(leaving.thread, "stepOut")  # a breakpoint on the goroutine stepping ended its step

    async def _results(self, leaving: _Leaving) -> list[Variable]:
        """The function's results at its RET: named ones evaluated in the goroutine that stopped there (its frame 0;
        one request each, together), unnamed ones read from its frame's locals."""
        if leaving.results is not None:
            answers = await asyncio.gather(*(self._request("evaluate", {"expression": name, "context": "watch"})
                                             for name in leaving.results))
            return [Variable(name, str(body.get("result", "")), body.get("type") or None)
                    for name, body in zip(leaving.results, answers, strict=True)]
        frames = (await self._request("stackTrace", {"threadId": leaving.thread, "startFrame": 0, "levels": 1})
                  ).get("stackFrames") or []
        scopes = (await self._request("scopes", {"frameId": frames[0]["id"]})).get("scopes") or []
        found = (await self._request("variables", {"variablesReference": scopes[0]["variablesReference"]})
                 ).get("variables") or []
        return [Variable(str(v.get("name")), str(v.get("value", "")), v.get("type") or None) for v in found
                if _RESULT.match(str(v.get("name")))]

    def stopped(self, body: dict[str, Any]) -> Coroutine[Any, Any, None] | None:
        """A stop that is not the RET's: when it ends the step, what it returned is kept for its locals; a
        coroutine to run before the stop is reported when the left function's panic must be read."""
        leaving, self._leaving = self._leaving, None
        self._shown, self._scope = None, None
        if leaving is None or body.get("reason") != "step" or body.get("threadId") != leaving.thread:
            return None
        if leaving.at_ret:
            self._shown = None if leaving.returned is None else (leaving.thread, leaving.returned)
            return None
        return self._panicked(leaving)

    async def _panicked(self, leaving: _Leaving) -> None:
        """The step ended elsewhere than in the function without its RET: if the goroutine panics (a deferred
        function runs, or the caller's recovering one), that is what the function raised."""
        try:
            frames = (await self._request("stackTrace", {"threadId": leaving.thread, "startFrame": 0, "levels": 1})
                      ).get("stackFrames") or []
            if not frames or (frames[0].get("name") == leaving.function and int(await self._value(
                    "runtime.frameoff", frames[0]["id"])) == leaving.frame_offset):
                return  # still in the function: it did not leave
            value = panic_value(await self._value("runtime.curg._panic.arg", frames[0]["id"]))  # (nil: no panic)
            self._shown = (leaving.thread, Variable(returns.returned_name(short(leaving.function), raised=True),
                                                    f"panic: {short_types(value)}"))
        except (AdapterError, ValueError, IndexError, KeyError):
            log.debug("delve: no panic read for a step", exc_info=True)

    def scopes(self, frame: FrameRef, refs: list[int]) -> None:
        """The scopes of a frame as listed: frame 0's first, at the step's stop, lists the return value."""
        if self._shown is not None and frame.index == 0 and frame.thread_id == self._shown[0] and refs:
            self._scope = refs[0]

    def variables(self, ref: int, found: list[Variable], start: int | None) -> list[Variable]:
        if self._shown is None or ref != self._scope or start:
            return found
        return [self._shown[1], *found]

    def seen(self, raw: dict[str, Any]) -> None:
        """A frame delve listed at this stop (a step from it needs no listing of its own)."""
        if isinstance(raw.get("id"), int):
            self._raw[raw["id"]] = raw

    def moving(self) -> None:
        self._shown, self._scope = None, None
        self._raw.clear()
