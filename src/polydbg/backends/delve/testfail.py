"""A Go test that fails under delve's test mode, stopped where the test failed rather than inside package testing.

``t.Errorf``, ``t.Fatalf`` and testify's ``assert``/``require`` all end in ``testing.(*common).Fail``, and none
of them panics, so delve's panic stop never sees them. A function breakpoint on Fail (sent along with the
agent's own function breakpoints) stops at every failure, and the stop is then placed:

- Fail calls its parent's Fail (a failing subtest fails its parents), and tRunner calls Fail for a panic on its
  way to panicking again: those hits are resumed unseen (the panic's own stop follows, with delve's message);
  so is a Fail package testing makes with no frame of the test's on the stack (a race detected during the test,
  whose own stop came first).
- The message is what the test logged last: with ``-test.v`` Go prints it (``    prices_test.go:16: got 10,
  want 9``) before Fail is called, on the pipe delve's child writes to, so it is at most a read away; it is
  waited for briefly (``MESSAGE_WAIT_S``) when it has not arrived yet.
- An assertion library that ends a test after its own failure (testify's ``require``: ``assert``'s Errorf, then
  ``t.FailNow()``) fails it twice: a FailNow from such a library, in a test that has failed already, is resumed.
- Frame 0 is the frame at the file:line that message names (Go skips ``t.Helper()`` functions to name it);
  without a message, the first frame outside package testing, the Go runtime, the module cache and vendor/.
  The frames above it (Fail, Errorf, testify's) are hidden and listed above frame 0 (``Backend.frames_above``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from typing import Any

from polydbg.backends.base import ExceptionDetail
from polydbg.backends.dap import wire
from polydbg.backends.delve.stops import DelveStops, in_runtime

log = logging.getLogger(__name__)

FAIL_FUNCTION = "testing.(*common).Fail"
FAIL_NOW = "testing.(*common).FailNow"
ALREADY_FAILED = "c.failed"  # in Fail's frame: true once the test has failed before
FAILURE_TYPE = "test failed"
MESSAGE_WAIT_S = 1.0  # for the logged message to come through the pipe (it was written before the stop)
TAIL_CHARS = 16 * 1024
DETAIL_LINES = 12
# a line the testing package logged: 4 spaces, file:line, the text; its further lines 8 spaces in
Evaluate = Callable[[str, int], Awaitable[str]]  # an expression's value in a frame (by delve's frame id)
_LOGGED = re.compile(r"^ {4}(\S+?\.go):(\d+): (.*(?:\n {8}.*)*)", re.MULTILINE)


@dataclass(frozen=True)
class Placed:
    """Where a failure is shown: how many frames hide above the user's, and why it failed."""

    hidden: int
    detail: ExceptionDetail


def in_test_machinery(frame: dict[str, Any]) -> bool:
    """A frame of package testing, the runtime, or a module from the module cache or vendor/ (testify)."""
    path = str((frame.get("source") or {}).get("path") or "").replace(os.sep, "/")
    return in_runtime(frame) or str(frame.get("name", "")).startswith("testing.") or "/pkg/mod/" in path \
        or "/vendor/" in path


class TestFailures:
    __test__ = False  # not a test class, whatever pytest reads in its name

    def __init__(self, stops: DelveStops | None = None) -> None:
        """Failures are placed for ``stops`` (which then hides the test machinery above a panic too)."""
        self._stops = stops
        if stops is not None:
            stops.claim = self._claim
            stops.hidden = in_test_machinery
        self.native_id: int | None = None  # delve's id of the breakpoint on Fail
        self._tail = ""  # the program's recent output
        self._seen = 0  # characters of output seen in all
        self._taken = 0  # where the last message taken ended (a message is one failure's only)
        self._arrived = asyncio.Event()

    def output(self, text: str) -> None:
        self._tail = (self._tail + text)[-TAIL_CHARS:]
        self._seen += len(text)
        self._arrived.set()

    def _claim(self, body: dict[str, Any]) -> Coroutine[Any, Any, None] | None:
        """The refinement of a stop in Fail; None for any other stop."""
        if self.native_id is None or body.get("reason") != "function breakpoint" or \
                self.native_id not in (body.get("hitBreakpointIds") or ()):
            return None
        return self._report(body)

    async def _report(self, body: dict[str, Any]) -> None:
        """The failure shown at the test's frame with its message, or resumed unseen when it is no failure of
        its own."""
        stops = self._stops
        assert stops is not None
        thread = int(body.get("threadId") or 0)

        async def evaluate(expression: str, frame_id: int) -> str:
            answer = await stops.request("evaluate", {"expression": expression, "frameId": frame_id,
                                                      "context": "watch"})
            return str(answer.get("result", ""))

        try:
            frames = (await stops.request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 50})
                      ).get("stackFrames", [])
            placed = await self.placed(frames, evaluate)
            if placed is None:
                await stops.resume_unseen(thread)
                return
        except Exception:
            log.debug("delve: could not place a test failure", exc_info=True)
            if stops.connected:
                stops.report_refined(body)
            return
        line = frames[placed.hidden].get("line") if placed.hidden < len(frames) else None
        stops.report_at(body, placed.hidden, placed.detail, [wire.frame(frame) for frame in frames[:placed.hidden]],
                        line)

    async def placed(self, frames: Sequence[dict[str, Any]], evaluate: Evaluate) -> Placed | None:
        """Where the failure stopped in Fail with ``frames`` (its goroutine's stack) is shown; None for a Fail
        that is no failure of its own (a parent's, a panic's on its way to its own stop, a library's repeat)."""
        names = [str(frame.get("name", "")) for frame in frames]
        if FAIL_FUNCTION in names[1:] or "runtime.gopanic" in names:
            return None
        if not any(not in_test_machinery(frame) for frame in frames):  # testing's own ("race detected during
            return None  # execution of test", after the race's stop): no line of the test's to show
        if len(names) > 2 and names[1] == FAIL_NOW and not names[2].startswith("testing.") and \
                in_test_machinery(frames[2]) and await evaluate(ALREADY_FAILED, int(frames[0].get("id", 0))) == "true":
            return None
        logged = await self._message(frames)
        if logged is not None:
            index, text = logged
        else:
            index = next((i for i, frame in enumerate(frames) if not in_test_machinery(frame)), 0)
            text = "the test called t.Fail (nothing was logged)"
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        details = lines if len(lines) > 1 else []
        return Placed(index, ExceptionDetail(type=FAILURE_TYPE, message=" ".join(" ".join(lines).split()),
                                             details=tuple(details[:DETAIL_LINES])))

    async def _message(self, frames: Sequence[dict[str, Any]]) -> tuple[int, str] | None:
        """The message logged for this failure and the index of the frame it names."""
        places = {(os.path.basename(str((f.get("source") or {}).get("path") or "")), f.get("line")): i
                  for i, f in reversed(list(enumerate(frames)))}
        deadline = time.monotonic() + MESSAGE_WAIT_S
        while True:
            self._arrived.clear()
            start = self._seen - len(self._tail)
            found = None
            for match in _LOGGED.finditer(self._tail):
                index = places.get((match[1], int(match[2])))
                if index is not None and start + match.end() > self._taken:
                    found = (index, match[3], start + match.end())
            if found is not None:
                self._taken = found[2]
                return found[0], found[1].replace("\n        ", "\n")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except asyncio.TimeoutError:
                return None
