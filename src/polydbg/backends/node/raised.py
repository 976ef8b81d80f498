"""Every exception the program's code throws, recorded without stopping the agent (``Backend.record_raised``).

While the log is armed V8 pauses on every exception (``setPauseOnExceptions("all")``; Node's and the dependencies'
scripts stay blackboxed, so their own caught throws do not pause), and each pause with a frame of the user's code is
recorded and resumed unless a filter, a type or a breakpoint stops it too. Where it was thrown is the user's
innermost frame; V8 says whether anything catches it (``uncaught``), and the catching frame is found as the
``failures`` filter finds one (one that a frame above the user's catches, a library's own, is not logged): the first
frame outward whose pause lies in a ``try`` block with a ``catch``, read from the scripts' sources (nothing runs in
the program), past the stack's end through the frames awaiting it. One that reaches a test runner's frame first
(``failures.RUNNER``: node:test, jest, vitest, mocha) is uncaught, as Python's log says of a failing test's
assertion: the runner's catch is what fails the test, no handler of the user's. A throw caught only by a promise's
handler names no frame ("a promise's handler"). Cost: a pause and a resume per throw, 2.4 ms (4,000 throws in a loop:
9.6 s, against 0.5 s unrecorded).
"""

from __future__ import annotations

import os
from typing import Any

from polydbg.backends.base import Frame
from polydbg.backends.node import failures
from polydbg.backends.node.scripts import position
from polydbg.backends.node.target import Target
from polydbg.backends.recording import RaisedRecord, RaisedSink
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

MESSAGE_CHARS = 200
BY_A_PROMISE = "a promise's handler"


async def record(target: Target, sink: RaisedSink) -> None:
    """The exception this pause is at, when a frame of the user's code is on the stack."""
    frames = target.frames
    first = next((i for i, cdp in enumerate(frames) if target.scripts.is_user_code(*_place(cdp))), None)
    if first is None or await failures.libraries_own(target):
        return  # a library's (or Node's) own exception, thrown and caught in its code: not the user's
    detail = target.exception_detail()
    if (target.pause_data or {}).get("type") == "object" and (target.pause_data or {}).get("subtype") != "error":
        detail = await failures.detail(target)  # no Error (assume's Object.create(Error.prototype)): its message
    if detail is None:
        return
    thrown = target.frame_of(frames[first])
    caught = None if (target.pause_data or {}).get("uncaught") else await _catcher(target, frames[first:])
    sink(RaisedRecord(type=detail.type, message=detail.message[:MESSAGE_CHARS], file=thrown.file, line=thrown.line,
                      function=thrown.name, thread=target.name, caught=caught))


async def _catcher(target: Target, frames: list[dict[str, Any]]) -> str | None:
    """Where the first frame outward that catches it is, or None when the exception reaches a test runner first:
    the runner's catch is what fails the test, so to the user the exception was uncaught. Past the stack's end the
    way goes on through the frames awaiting it (an async test's runner awaits its promise)."""
    trace = target.async_trace
    while True:
        for cdp in frames:
            if failures.RUNNER.search(_url(target, cdp)):
                return None
            if await _in_try(target, cdp):
                return _at(target.frame_of(cdp)) if "location" in cdp else _at_awaiting(cdp)
        if trace is None or trace.get("description") != "await":
            return BY_A_PROMISE  # a .then's or a timer's callback, or an await V8 keeps no trace of
        frames = list(trace.get("callFrames") or [])
        parent = trace.get("parent")
        trace = parent if isinstance(parent, dict) else None


def _url(target: Target, cdp: dict[str, Any]) -> str:
    script = target.scripts.get(_place(cdp)[0])
    return script.url if script is not None else str(cdp.get("url") or "")


def _at_awaiting(cdp: dict[str, Any]) -> str:
    """An awaiting frame of the async stack trace (a ``Runtime.CallFrame``: no frame object to show)."""
    name, url = cdp.get("functionName") or "(anonymous)", str(cdp.get("url") or "")
    return f"{name} ({os.path.basename(url) or '?'}:{int(cdp.get('lineNumber', 0)) + 1})"


def _place(cdp: dict[str, Any]) -> tuple[str, int, int]:
    return position(cdp.get("location") or cdp)


async def _in_try(target: Target, cdp: dict[str, Any]) -> bool:
    script_id, line, column = _place(cdp)
    try:
        source = await target.source(script_id)
    except (AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
        return False
    return source is not None and len(source.text) <= source.LIMIT and source.in_try(source.offset(line, column))


def _at(frame: Frame) -> str:
    return f"{frame.name} ({os.path.basename(frame.file) if frame.file else '?'}:{frame.line})"



