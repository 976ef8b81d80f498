"""A ``go build -race`` report as a stop at the racy line, with both goroutines' stacks in its details.

Go's race detector prints its report on the program's stderr and lets the program run on (exit 66 at the
end); delve 1.20 neither stops nor says anything, and its function breakpoints cannot name the detector's C
symbols. What delve can stop at is the Go callback the detector calls to symbolize each pc of a report,
``runtime.raceSymbolizeCode`` (only in -race builds, only while a report is made), on the racing goroutine
(but on its system stack: delve unwinds no user frame there). Measured with go 1.19 / delve 1.20, a
report's pcs come stack by stack, each outermost first (goexit, …, the access): so the first pc that is
the return address of a call to ``runtime.raceread``/``racewrite`` (``…range``) — the instruction before
``pc + 1``, disassembled by delve with its line — is the racing access. An instruction breakpoint at that
return address stops the racing goroutine as it comes back from the detector, after the report is printed,
at the racy line, with its own stack live (a breakpoint anywhere else could land inside an instruction and
corrupt it: none is set unless the instruction before it is such a call). Every other stop on the way
(the other pcs, another goroutine passing the same address) is continued here, unseen by the session.

The report's text is read from the program's stderr as it passes (``RaceText``) and parsed into one line
per access and per goroutine's creation, each stack innermost first. Its goroutine numbers are the race
detector's own, not delve's: the racing one is the stop's thread. A report whose access is not user code
(a map inside the runtime) is not stopped at; its text is in the output as without a debugger.
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from polydbg.backends.base import ExceptionDetail
from polydbg.backends.delve.stops import RACE
from polydbg.backends.kit import timeouts

log = logging.getLogger(__name__)

SYMBOLIZER = "runtime.raceSymbolizeCode"
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
        self.reports: list[list[str]] = []
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
                    self.arrived.set()
                self._partial = [] if not self._partial else None  # a rule also opens the next report
            else:
                self._partial.append(line)

    async def about(self, path: str | None, line: int | None, within_s: float) -> list[str] | None:
        """The report whose first access is at ``path:line`` (the oldest such one not taken yet, or the oldest
        one when the place is unknown), waiting ``within_s`` for it to finish arriving."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + within_s
        while True:
            for index, report in enumerate(self.reports):
                if path is None or _first_place(report) == (os.path.basename(path), line):
                    return self.reports.pop(index)
            self.arrived.clear()
            try:
                await asyncio.wait_for(self.arrived.wait(), max(0.0, deadline - loop.time()))
            except asyncio.TimeoutError:
                return None


def _first_place(report: list[str]) -> tuple[str, int] | None:
    for line in report:
        found = _FRAME_FILE.match(line)
        if found:
            return os.path.basename(found["path"]), int(found["line"])
    return None


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
    """A report being made: on which goroutine, and where it will come back to (once found)."""

    thread: int
    resume_at: int | None = None  # the return address of the racing access's call into the detector
    place: tuple[str | None, int | None] = (None, None)  # the access's file and line, as delve disassembled it
    native_id: int | None = None  # the instruction breakpoint there


class RaceStops:
    """Turns delve's stops inside a race report into one stop at the racy line (see the module docstring)."""

    def __init__(self, request: Request, refine: Callable[[Any], None], report: Callable[[dict[str, Any]], None],
                 moving: Callable[[], None]) -> None:
        self._request = request
        self._refine = refine  # runs the handling while later events wait (kit.ordering)
        self._report = report  # a stopped body for the ordinary path (DelveStops.take)
        self._moving = moving
        self.symbolizer_id: int | None = None  # delve's id of the internal function breakpoint, once bound
        self.text = RaceText()
        self._pending: _Pending | None = None
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
        pending = self._pending
        if pending is not None and pending.native_id is not None and pending.native_id in hit:
            self._refine(self._came_back(body) if thread == pending.thread else self._resume(thread))
            return True
        return False

    async def _resume(self, thread: Any) -> None:
        self._moving()
        await self._request("continue", {"threadId": thread})

    async def _symbolizing(self, thread: int) -> None:
        """One pc of a report being symbolized: the first call into the detector found is where to stop."""
        try:
            if self._pending is None:
                self._pending = _Pending(thread)
            if self._pending.resume_at is None and self._pending.thread == thread:
                access = await self._access(thread)
                if access is not None:
                    return_address, self._pending.place = access
                    body = await self._request("setInstructionBreakpoints", {"breakpoints": [
                        {"instructionReference": hex(return_address)}]})
                    answer = (body.get("breakpoints") or [{}])[0]
                    if answer.get("verified") and isinstance(answer.get("id"), int):
                        self._pending.resume_at, self._pending.native_id = return_address, answer["id"]
        except Exception:
            log.debug("delve: could not place a race report's stop", exc_info=True)
        await self._resume(thread)

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

    async def _came_back(self, body: dict[str, Any]) -> None:
        """The racing goroutine is back at its racy line, the report printed: stop there, the report read."""
        thread = int(body["threadId"])
        path, line = self._pending.place if self._pending is not None else (None, None)
        self._pending = None
        try:
            await self._request("setInstructionBreakpoints", {"breakpoints": []})
        except Exception:
            log.debug("delve: could not clear the race stop's instruction breakpoint", exc_info=True)
        found = detail(await self.text.about(path, line, timeouts.INSPECT_S), thread)
        self._details[thread] = found
        self._report({**body, "reason": "exception", "description": RACE, "text": found.message})
