"""Where delve stopped, as polydbg reports it: which goroutine a pause or a fatal error is shown on,
and the Go runtime's frames hidden above the user's code.

- Panics: delve stops on an unrecovered panic or a fatal error with reason "exception"; its message
  (a Go-quoted string) is unquoted, and the runtime frames of the panic machinery
  (runtime.fatalpanic, runtime.gopanic, …) are hidden from the top of the panicking goroutine's
  stack, so frame 0 is the user function that panicked.
- Fatal errors (a deadlock: "all goroutines are asleep") stop on the runtime thread that detected
  them, with no user frame: the stop is moved to a user goroutine (frame 0: the deadlocked line)
  and the error kept for ``exception_info``.
- Pause: delve halts every thread and names whichever it halted first, often a runtime thread with
  no goroutine (sysmon, in runtime.usleep). The stop is moved to a user goroutine, preferably one
  that was running. A running goroutine caught inside the runtime (async preemption, a signal
  handler) sometimes does not unwind to its own frames (delve cannot unwind through sigtramp), so it
  is resumed for a few milliseconds and paused again (``PAUSE_ATTEMPTS`` at most), and runtime
  frames left on top of it are hidden as for panics: an infinite loop is reported at its line.
- At the entry point there is no goroutine yet (delve still names "thread 1"): the current OS
  thread's stack is listed instead (``at_entry``).

Moving a stop takes requests, so these stops are reported after them (``kit.ordering`` holds the
events behind them); the continue and the stop of a re-pause are the refinement's own, not news.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
from collections.abc import Callable, Coroutine
from typing import Any

from polydbg.backends.base import ExceptionDetail, Frame, FrameRef, StopEvent
from polydbg.backends.dap import wire
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.frames import FrameHandles, leading
from polydbg.backends.kit.ordering import OrderedEvents

log = logging.getLogger(__name__)

RACE = "data race"  # a race report's stop (races.py), reported where it is, as a panic is
PROGRAM_VANISHED = "the program ended without delve reporting it: it was probably killed from outside"
PAUSE_ATTEMPTS = 4
LEAVE_EXTRA_STEPS = 4  # step-outs past the hidden frames' count, for the parents' Fail calls on the way
TOP_LEVELS = 24  # frames read per goroutine to find the user's code under the runtime's and library's
# a goroutine as delve names it: selected?, its topmost user function, and its OS thread when running
_GOROUTINE = re.compile(r"(\* )?\[Go \d+\] (\S+)( \(Thread \d+\))?$")


def unquote(text: str) -> str:
    """A Go-quoted string value (``"boom"``) as its text; anything else unchanged."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            return text[1:-1]
        return value if isinstance(value, str) else text
    return text


def in_runtime(frame: dict[str, Any]) -> bool:
    """A frame of the Go runtime (also its assembly, e.g. gogo in asm_amd64.s)."""
    name = str(frame.get("name", ""))
    path = str((frame.get("source") or {}).get("path") or "").replace(os.sep, "/")
    return frame.get("presentationHint") == "subtle" or name.startswith("runtime.") \
        or ("." not in name and "/src/runtime/" in path)


def goroot_of(frames: list[dict[str, Any]]) -> str | None:
    """The Go installation a stack's runtime frames come from (``/usr/lib/go-1.19`` for
    ``/usr/lib/go-1.19/src/runtime/proc.go``), or None."""
    for frame in frames:
        path = str((frame.get("source") or {}).get("path") or "").replace(os.sep, "/")
        if str(frame.get("name", "")).startswith("runtime.") and "/src/runtime/" in path:
            return path[:path.index("/src/runtime/")]
    return None


def in_library(frame: dict[str, Any], goroot: str | None) -> bool:
    """A frame of Go's standard library (its source under the installation's src/: sync, time, fmt …)."""
    path = str((frame.get("source") or {}).get("path") or "").replace(os.sep, "/")
    return goroot is not None and path.startswith(goroot + "/src/")


def pause_target(threads: list[dict[str, Any]], current: int | None) -> tuple[int | None, bool]:
    """Of delve's threads (goroutines), the one to report a pause on, and whether it was running (on an OS
    thread): a running one in user code (``current`` if it is one), else one running in the runtime, else
    the selected one, else one in user code, else any goroutine."""
    ranked: list[tuple[int, int, bool]] = []
    for thread in threads:
        match = _GOROUTINE.match(str(thread.get("name", "")))
        if match is None:
            continue
        running, in_user_code = bool(match[3]), not match[2].startswith("runtime.")
        rank = (0 if in_user_code else 1) if running else (2 if match[1] else 3 if in_user_code else 4)
        ranked.append((rank, int(thread["id"]), running))
    if not ranked:
        return None, False
    if any(goroutine == current and rank == 0 for rank, goroutine, _ in ranked):
        return current, True
    _, goroutine, running = min(ranked)
    return goroutine, running


class DelveStops:
    """The stop shown now: which goroutine it is on, what is hidden, what a moved fatal error was."""

    def __init__(self, ordered: OrderedEvents, frames: FrameHandles[int], request: wire.Request,
                 stop_event: Callable[[dict[str, Any]], StopEvent], connected: Callable[[], bool],
                 vanished: Callable[[str], None]) -> None:
        self._ordered = ordered
        self._frames = frames
        self._request = request
        self._stop_event = stop_event
        self._connected = connected  # the connection to delve is still open
        self._vanished = vanished  # the program's end, with its cause
        self.stopped = False  # the program is stopped (a detach must resume it)
        self.at_entry = False  # stopped before the runtime made any goroutine
        self._trim_thread: int | None = None  # the goroutine that panicked or was paused
        self._stop_thread: int | None = None  # the goroutine the stop is reported on
        self.delve_thread: int | None = None  # the one delve stopped on (its current goroutine), before any move
        self._raw: dict[int, list[dict[str, Any]]] = {}  # top_frames at this stop
        self.generation = 0  # counts the stops and moves: what was read at one stop is not the next one's
        self.goroot: str | None = None  # where the program's Go installation is (its sources under src/)
        self._pause_waiter: asyncio.Future[dict[str, Any]] | None = None
        self._exception_detail: ExceptionDetail | None = None  # a fatal error moved to a user goroutine
        # a stop another module places (a test's failure, testfail.py): the refinement to run, or None
        self.claim: Callable[[dict[str, Any]], Coroutine[Any, Any, None] | None] | None = None
        self.hidden: Callable[[dict[str, Any]], bool] = in_runtime  # frames hidden above a panic's
        self._above: dict[int, list[Frame]] = {}  # goroutine → the frames hidden above a test failure's frame 0
        self._failure_line: dict[int, int | None] = {}  # goroutine → the line of a test failure's frame 0

    def moving(self) -> None:
        self.stopped = False
        self._forget_frames()
        self._exception_detail = None
        self.at_entry = False
        self._trim_thread = None
        self._above.clear()

    def moved_exception(self, thread: int) -> ExceptionDetail | None:
        """The fatal error a stop was moved to ``thread`` for (delve knows it only on the runtime's thread)."""
        return self._exception_detail if thread == self._trim_thread else None

    async def top_frames(self, thread_id: int) -> list[dict[str, Any]]:
        """The innermost ``TOP_LEVELS`` frames of a goroutine as delve lists them (nothing hidden), read once
        per stop; the first ones read tell where the Go installation is (``goroot``)."""
        frames = self._raw.get(thread_id)
        if frames is None:
            body = await self._request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": TOP_LEVELS})
            frames = self._raw[thread_id] = list(body.get("stackFrames", []))
            self.goroot = self.goroot or goroot_of(frames)
        return frames

    async def hidden_frames(self, thread_id: int) -> int:
        """How many frames top a goroutine's stack above the user's code: the runtime's, and the standard
        library's under them, on the goroutine that panicked, was paused or hit a fatal error, and on every
        other goroutine parked in the runtime (on a lock, a channel, a sleep); none on the goroutine of a
        breakpoint or step, whatever code it stopped in."""
        hidden = self._frames.hidden(thread_id)
        if hidden is None:
            hidden = 0
            if not self.at_entry and (thread_id == self._trim_thread or thread_id != self._stop_thread):
                frames = await self.top_frames(thread_id)
                if thread_id == self._trim_thread or (frames and in_runtime(frames[0])):
                    hidden = leading(frames, lambda frame: self.hidden(frame) or in_library(frame, self.goroot))
            self._frames.hide(thread_id, hidden)
        return hidden

    def above(self, thread_id: int) -> list[Frame]:
        """The frames hidden above a test failure's frame 0 (package testing's, an assertion library's)."""
        return self._above.get(thread_id, [])

    async def is_delves_own(self, frame: FrameRef) -> bool:
        """Whether ``frame`` is the topmost of delve's current goroutine: the one frame delve sets variables in."""
        return frame.thread_id == self.delve_thread and frame.index + await self.hidden_frames(frame.thread_id) == 0

    async def library_above(self, thread_id: int) -> list[dict[str, Any]]:
        """The standard library's frames among those hidden on ``thread_id``, innermost first: what it is
        blocked in, as Go's own traceback shows it (sync.(*Mutex).Lock, time.Sleep; not the runtime's)."""
        hidden = await self.hidden_frames(thread_id)
        if not hidden:
            return []
        return [frame for frame in (await self.top_frames(thread_id))[:hidden] if not in_runtime(frame)]

    # -- a stop ---------------------------------------------------------------------------------------

    def take(self, body: dict[str, Any]) -> None:
        """A ``stopped`` event: reported, moved to a user goroutine first, or the answer a re-pause waits for."""
        self.stopped = True
        self._forget_frames()
        self.delve_thread = body.get("threadId")
        self._exception_detail = None
        self._above.clear()
        self._trim_thread = body.get("threadId") if body.get("reason") == "exception" else None
        self.at_entry = body.get("reason") == "entry"
        if isinstance(body.get("text"), str):
            body["text"] = unquote(body["text"])
        if self._pause_waiter is not None and not self._pause_waiter.done():
            self._pause_waiter.set_result(body)  # a pause being refined by _report_pause
            return
        refinement = self.claim(body) if self.claim is not None else None
        if refinement is not None:
            self._ordered.refine(refinement)
            return
        if body.get("reason") == "exception" and "no such process" in (body.get("text"), body.get("description")):
            self._vanished(PROGRAM_VANISHED)  # delve tried to resume a program killed from outside
            return
        if body.get("reason") == "exception" and body.get("description") not in ("panic", RACE):
            self._ordered.refine(self._report_fatal(body))
        elif body.get("reason") == "pause":
            self._ordered.refine(self._report_pause(body))
        else:
            self._stop_thread = body.get("threadId")
            self._ordered.on_stopped(self._stop_event(body))

    def _forget_frames(self) -> None:
        self._frames.clear()
        self._raw.clear()
        self.generation += 1

    @property
    def request(self) -> wire.Request:
        return self._request

    @property
    def connected(self) -> bool:
        return self._connected()

    def report_refined(self, body: dict[str, Any]) -> None:
        """A refined stop goes straight to the session (events behind it wait in ``_ordered``)."""
        self._forget_frames()
        self._stop_thread = body.get("threadId")
        self._ordered.target.on_stopped(self._stop_event(body))

    async def leave_hidden(self, thread: int, kind: str) -> bool:
        """Step out of the frames hidden above a test failure's frame 0 (Fail, Errorf, testify's), their stops
        unseen, so a step goes on from the test's own line; False when it cannot (a stop of another kind came
        meanwhile and is reported, the steps outlived their deadline, or the test ends: t.FailNow never
        returns, so the program is resumed instead). Fail calls its parent's Fail on the way: those hits are
        stepped out of too."""
        above = list(self._above.get(thread, []))
        line = self._failure_line.get(thread)
        if any(frame.name.endswith(".FailNow") for frame in above):
            self.moving()
            await self._request("continue", {"threadId": thread})
            return False
        hidden = {frame.name for frame in above}
        try:
            for _ in range(len(above) + LEAVE_EXTRA_STEPS):
                waiter = self._pause_waiter = asyncio.get_running_loop().create_future()
                self.moving()
                await self._request("stepOut", {"threadId": thread})
                body = await asyncio.wait_for(waiter, timeouts.INSPECT_S)
                top = (await self._request("stackTrace", {"threadId": thread, "startFrame": 0, "levels": 1})
                       ).get("stackFrames", [])
                name = str(top[0].get("name", "")) if top else ""
                if body.get("reason") not in ("step", "function breakpoint") or \
                        (body.get("reason") != "step" and name not in hidden):
                    self._pause_waiter = None
                    self.take(body)
                    return False
                if name not in hidden:
                    if top[0].get("line") == line or kind == "out":
                        return True
                    self._pause_waiter = None
                    self.take(body)  # the step out of the test's call already reached the next line
                    return False
        except asyncio.TimeoutError:
            return False
        finally:
            self._pause_waiter = None
        return True

    async def resume_unseen(self, thread: int) -> None:
        """Resume a stop no one is told of (a refinement found it no stop of the user's)."""
        self.moving()
        await self._request("continue", {"threadId": thread})

    def report_at(self, body: dict[str, Any], hidden: int, detail: ExceptionDetail, above: list[Frame],
                  line: int | None) -> None:
        """Report a refined stop as an exception with ``detail``, its ``hidden`` top frames listed ``above``, at
        ``line`` of the frame under them."""
        thread = int(body.get("threadId") or 0)
        self._failure_line[thread] = line
        self._forget_frames()
        self._stop_thread = self._trim_thread = thread
        self._exception_detail = detail
        self._above[thread] = above
        self._frames.hide(thread, hidden)
        self._ordered.target.on_stopped(self._stop_event({**body, "reason": "exception", "description": detail.type,
                                                          "text": detail.message, "hitBreakpointIds": []}))

    async def _report_pause(self, body: dict[str, Any]) -> None:
        """Report a pause on a user goroutine, preferably one that was running, not on whichever
        thread delve halted first (often the runtime's sysmon thread, in runtime.usleep).

        A running goroutine caught inside the runtime (async preemption, a signal handler) may not
        unwind to its user frames (delve cannot unwind through sigtramp), so it is resumed for a few
        milliseconds and paused again, a few times at most.
        """
        try:
            for attempt in range(PAUSE_ATTEMPTS):
                goroutine, running = await self._pause_target(body.get("threadId"))
                if goroutine is not None:
                    body["threadId"] = goroutine
                if goroutine is None or not running or attempt + 1 == PAUSE_ATTEMPTS:
                    break
                top = (await self._request("stackTrace", {"threadId": goroutine, "startFrame": 0, "levels": 1})
                       ).get("stackFrames", [])
                if not top or not in_runtime(top[0]):
                    break
                waiter = self._pause_waiter = asyncio.get_running_loop().create_future()
                await self._request("continue", {"threadId": goroutine})
                await asyncio.sleep(0.01 * 2 ** attempt)  # let it leave the runtime (re-pausing at once would not)
                await self._request("pause", {"threadId": goroutine})
                body = await asyncio.wait_for(waiter, timeouts.INSPECT_S)
                if body.get("reason") != "pause":
                    break  # it hit a breakpoint (or similar) meanwhile: report that
        except Exception:
            log.debug("delve: could not refine a pause", exc_info=True)
            if not self._connected():
                return
        finally:
            self._pause_waiter = None
        if body.get("reason") == "pause":
            self._trim_thread = body.get("threadId")  # it may be inside asyncPreempt or a signal handler
        self.report_refined(body)

    async def _report_fatal(self, body: dict[str, Any]) -> None:
        """A fatal error (a deadlock, a concurrent map write) stops on the runtime's own thread, with
        no user frame: report it on a user goroutine instead, keeping the error for exception_info."""
        try:
            thread = body.get("threadId")
            frames = (await self._request("stackTrace", {"threadId": thread or 0, "startFrame": 0, "levels": 50})
                      ).get("stackFrames", [])
            if all(in_runtime(frame) for frame in frames):
                goroutine, _ = await self._pause_target(thread)
                if goroutine is not None and goroutine != thread:
                    self._exception_detail = ExceptionDetail(type=str(body.get("description") or "fatal error"),
                                                             message=str(body.get("text") or ""))
                    body["threadId"] = self._trim_thread = goroutine
        except Exception:
            log.debug("delve: could not place a fatal error on a goroutine", exc_info=True)
        self.report_refined(body)

    async def _pause_target(self, current: int | None) -> tuple[int | None, bool]:
        """The goroutine to report a pause on, and whether it was running (on an OS thread)."""
        return pause_target((await self._request("threads")).get("threads", []), current)
