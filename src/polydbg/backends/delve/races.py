"""A ``go build -race`` report as a stop at the racy line, with both goroutines' stacks in its details.

Go's race detector prints its report on the program's stderr and lets the program run on (exit 66 at the
end); delve 1.20 neither stops nor says anything, and its function breakpoints cannot name the detector's C
symbols. What delve can stop at is the Go callback the detector calls to symbolize each pc of a report,
``runtime.raceSymbolizeCode`` (only in -race builds, only while a report is made), on the racing goroutine
(but on its system stack: delve unwinds no user frame there). Each pc that is the return address of a call
to ``runtime.raceread``/``racewrite`` (``…range``) — the instruction before ``pc + 1``, disassembled by delve
with its line — is an access of the report; an instruction breakpoint at each such return address stops the
racing goroutine as it comes back from the detector, after the report is printed, at the racy line, with
its own stack live. (A breakpoint anywhere else could land inside an instruction and corrupt it: none is
set unless the instruction before it is such a call.) Where the racing access is inside the runtime
(``append``'s growslice, a map), it comes back to no such place; it stops if it later passes the other
access's. Every other stop on the way (the other pcs, another goroutine passing the same address) is
continued here, unseen by the session; the places of the last ``KEPT_REPORTS`` reports are kept (another
report can begin before the goroutine of the last one came back).

The report's text is read from the program's stderr as it passes (``RaceText``) and parsed into one line
per access and per goroutine's creation, each stack innermost first. Its goroutine numbers are the race
detector's own, not delve's: the racing one is the stop's thread. (go 1.19, delve 1.20.)
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from polydbg.backends.base import ExceptionDetail
from polydbg.backends.delve.stops import RACE

log = logging.getLogger(__name__)

SYMBOLIZER = "runtime.raceSymbolizeCode"
KEPT_REPORTS = 4  # reports whose goroutine may still come back (one inside the runtime may never)
REPORT_WAIT_S = 3.0  # for the report's text to be read from stderr (printed before the goroutine came back)
_ACCESS_CALL = re.compile(r"\bCALL\b.*\bruntime\.race(?:read|write)(?:range)?\(SB\)")
_RULE = "=================="
_HEADER = re.compile(r"(?P<what>.+?)(?: at (?P<address>0x[0-9a-f]+))? by "
                     r"(?:(?:goroutine|thread) (?P<who>\d+)|(?P<main>main) goroutine)"
                     r"(?: \((?P<state>[^)]*)\))?:$|Goroutine (?P<created>\d+) \((?P<cstate>[^)]*)\) created at:$")
_FRAME_FILE = re.compile(r"^\s+(?P<path>\S+):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$")

Request = Callable[..., Awaitable[dict[str, Any]]]


class RaceText:
    """The race reports in the program's stderr, complete ones kept until taken."""

    def __init__(self) -> None:
        self._partial: list[str] | None = None  # lines of the report being printed
        self._buffer = ""
        self.reports: list[list[str]] = []  # complete, not taken yet
        self.completed = 0  # reports complete so far
        self.arrived = asyncio.Event()

    def heard(self, text: str) -> None:
        self._buffer += text
        *lines, self._buffer = self._buffer.split("\n")
        for line in lines:
            line = line.rstrip("\r")
            if self._partial is None:
                self._partial = [] if line == _RULE else None
            elif line == _RULE:
                if any(piece.startswith("WARNING: DATA RACE") for piece in self._partial):
                    self.reports.append(self._partial)
                    self.completed += 1
                    self.arrived.set()
                self._partial = [] if not self._partial else None  # a rule also opens the next report
            else:
                self._partial.append(line)

    async def about(self, path: str | None, line: int | None, within_s: float) -> list[str] | None:
        """The oldest report not taken yet with a frame at ``path:line`` (its access, or a caller of the runtime
        function that made it: ``append`` in growslice), any when the place is unknown, waiting ``within_s``
        for it to finish arriving."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while True:
            for index, report in enumerate(self.reports):
                if path is None or (os.path.basename(path), line) in _places(report):
                    return self.reports.pop(index)
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                return None


def _places(report: list[str]) -> set[tuple[str, int]]:
    return {(os.path.basename(found["path"]), int(found["line"]))
            for line in report if (found := _FRAME_FILE.match(line))}


def detail(report: list[str] | None, thread_id: int) -> ExceptionDetail:
    """A report as the stop's exception: the accesses in the message, each stack a line of its details."""
    if not report:
        return ExceptionDetail(RACE, f"the race detector reported a race on thread {thread_id} (its report is in "
                               "debug_output: stderr)")
    sections: list[tuple[str, list[str]]] = []
    for line in report:
        if not line.strip() or line.startswith("WARNING:"):
            continue
        if not line.startswith(" "):
            sections.append((line.strip(), []))
        elif sections:
            file = _FRAME_FILE.match(line)
            frames = sections[-1][1]
            if file and frames:
                frames[-1] += f" at {os.path.basename(file['path'])}:{file['line']}"
            elif not file:
                frames.append(line.strip().removesuffix("()"))
    states = {said["created"]: said["cstate"] for header, _ in sections
              if (said := _HEADER.match(header)) and said["created"]}
    racing: str | None = None
    accesses: list[str] = []
    lines: list[str] = []
    for header, frames in sections:
        said = _HEADER.match(header)
        if said is None:
            lines.append(f"{header.rstrip(':')}: {' ← '.join(frames)}" if frames else header)
            continue
        who = said["who"] or said["main"] or said["created"]
        racing = racing or who
        name = ("main goroutine" if who == "main" else f"goroutine {who}") + (
            f" (thread {thread_id})" if who == racing else f" ({states[who]})" if who in states else "")
        if said["who"] or said["main"]:
            address = f" at {int(said['address'], 16):#x}" if said["address"] else ""
            accesses.append(f"{said['what'].lower()}{address if not accesses else ''} by {name}")
            lines.append(f"{said['what'].lower()} by {name}: {' ← '.join(frames)}")
        else:
            lines.append(f"goroutine {who} created at: {' ← '.join(frames)}")
    message = " races with ".join(accesses[:2]) or "data race"
    lines.append("(goroutine numbers are the race detector's own; the full report is in debug_output: stderr)")
    return ExceptionDetail(RACE, message, tuple(lines))


@dataclass
class _Pending:
    """A report being made: on which goroutine, and the places it may come back to from the detector."""

    thread: int
    reports_before: int  # the reports complete in the text when it began
    places: dict[int, tuple[str | None, int | None]] = field(default_factory=dict)  # return address → file, line


class SharedInstructions:
    """delve's instruction breakpoints, which one request replaces whole, wanted by a race report's stop and by a
    call trace (calls.py) at once: each owner's sent with the others'."""

    def __init__(self, request: Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]) -> None:
        self._request = request
        self._wanted: dict[str, tuple[list[int], str | None]] = {}

    async def send(self, owner: str, addresses: list[int], condition: str | None = None) -> dict[int, int]:
        """``owner``'s addresses now (its last replaced), stopping only where delve finds ``condition`` true
        (dropped at an address another owner wants too): address → delve's id, of those that bound."""
        self._wanted[owner] = (addresses, condition)
        conditions: dict[int, str | None] = {}
        for found, judged in self._wanted.values():
            for address in found:
                conditions[address] = judged if address not in conditions else None
        wanted = sorted(conditions)
        body = await self._request("setInstructionBreakpoints", {"breakpoints": [
            {"instructionReference": hex(address), **({"condition": conditions[address]} if conditions[address]
                                                      else {})} for address in wanted]})
        return {address: answer["id"] for address, answer in zip(wanted, body.get("breakpoints") or [], strict=False)
                if answer.get("verified") and isinstance(answer.get("id"), int) and address in addresses}


class RaceStops:
    """Turns delve's stops inside a race report into one stop at the racy line (see the module docstring)."""

    def __init__(self, request: Request, refine: Callable[[Any], None], report: Callable[[dict[str, Any]], None],
                 moving: Callable[[], None],
                 send_instructions: Callable[[str, list[int]], Awaitable[dict[int, int]]]) -> None:
        self._request = request
        self._send_instructions = send_instructions  # its instruction breakpoints, beside the call trace's
        self._refine = refine  # runs the handling while later events wait (kit.ordering)
        self._report = report  # a stopped body for the ordinary path (DelveStops.take)
        self._moving = moving
        self.symbolizer_id: int | None = None  # delve's id of the internal function breakpoint, once bound
        self.text = RaceText()
        self._pending: dict[int, _Pending] = {}  # goroutine → its report, until it comes back (the latest few)
        self._natives: dict[int, tuple[int, int]] = {}  # delve's instruction breakpoint → (goroutine, address)
        self._details: dict[int, ExceptionDetail] = {}  # thread → the race it stopped on (this stop only)

    def forget(self) -> None:
        """The program moves on: a race stop's detail belonged to that stop."""
        self._details.clear()

    def detail_of(self, thread_id: int) -> ExceptionDetail | None:
        return self._details.get(thread_id)

    def claims(self, body: dict[str, Any]) -> bool:
        """Whether a ``stopped`` body is one of the report's own stops (handled here, never reported as is)."""
        hit = body.get("hitBreakpointIds") or []
        thread = body.get("threadId")
        if self.symbolizer_id is not None and self.symbolizer_id in hit and isinstance(thread, int):
            self._refine(self._symbolizing(thread))
            return True
        ours = [self._natives[native] for native in hit if native in self._natives]
        if ours:
            pending = self._pending.get(thread) if isinstance(thread, int) else None
            back = next((address for goroutine, address in ours if goroutine == thread), None)
            self._refine(self._resume(thread) if pending is None or back is None
                         else self._came_back(body, pending, back))
            return True
        return False

    async def _resume(self, thread: Any) -> None:
        self._moving()
        await self._request("continue", {"threadId": thread})

    async def _symbolizing(self, thread: int) -> None:
        """One pc of a report being symbolized: each access's call into the detector found is a place the racing
        goroutine may come back to (its own, first; the other access's, where its own is in the runtime)."""
        try:
            pending = self._pending.get(thread)
            if pending is None or self.text.completed > pending.reports_before:  # a new report
                pending = self._pending[thread] = _Pending(thread, self.text.completed)
                for stale in list(self._pending)[:-KEPT_REPORTS]:
                    del self._pending[stale]
            access = await self._access(thread)
            if access is not None and access[0] not in pending.places:
                pending.places[access[0]] = access[1]
                await self._place_breakpoints()
        except Exception:
            log.debug("delve: could not place a race report's stop", exc_info=True)
        await self._resume(thread)

    async def _place_breakpoints(self) -> None:
        """One instruction breakpoint at each place a racing goroutine may come back to (delve's set replaced)."""
        wanted = [(pending.thread, address) for pending in self._pending.values() for address in pending.places]
        bound = await self._send_instructions("races", [address for _, address in wanted])
        self._natives = {bound[address]: (goroutine, address) for goroutine, address in wanted if address in bound}

    async def _access(self, thread: int) -> tuple[int, tuple[str | None, int | None]] | None:
        """The address after the call this pc is the access of, and its file and line, if it is one."""
        frames = (await self._request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1})
                  ).get("stackFrames", [])
        if not frames:
            return None
        body = await self._request("evaluate", {"expression": "ctx.pc", "frameId": frames[0]["id"],
                                                "context": "watch"})
        found = re.match(r"\d+", str(body.get("result", "")))
        if found is None:
            return None
        after = int(found[0]) + 1  # the detector hands return address − 1
        listing = await self._request("disassemble", {"memoryReference": hex(after), "instructionOffset": -1,
                                                      "instructionCount": 1, "resolveSymbols": True})
        before = (listing.get("instructions") or [{}])[0]
        size = len(str(before.get("instructionBytes", ""))) // 2
        if int(str(before.get("address", "0")), 16) + size != after or not _ACCESS_CALL.search(
                str(before.get("instruction", ""))):
            return None
        line = before.get("line")
        return after, ((before.get("location") or {}).get("path"), line if isinstance(line, int) else None)

    async def _came_back(self, body: dict[str, Any], pending: _Pending, address: int) -> None:
        """The racing goroutine is back at its racy line, the report printed: stop there, the report read."""
        thread = pending.thread
        path, line = pending.places[address]
        del self._pending[thread]
        try:
            await self._place_breakpoints()
        except Exception:
            log.debug("delve: could not clear the race stop's instruction breakpoint", exc_info=True)
        found = detail(await self.text.about(path, line, REPORT_WAIT_S), thread)
        self._details[thread] = found
        self._report({**body, "reason": "exception", "description": RACE, "text": found.message})
