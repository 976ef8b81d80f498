"""What the function a step leaves returned, or the exception that left it. V8 gives a frame's ``returnValue``
only while it is paused at one of the function's return positions (after ``return expr`` is evaluated, before
the frame is gone):

- a step over (or into) that lands there has it: the report says ``add() returned 6`` at that stop;
- a step out from anywhere else would pass the return position without pausing. For the step, polydbg sets a
  breakpoint at each of the function's return positions (``Debugger.getPossibleBreakpoints`` restricted to the
  function, type ``return``), reads the value where one pauses in the step's own frame (one in a deeper frame, a
  recursive call's, is resumed past: a pause a call; past ``DEEPER_BUDGET`` of them — fib(25) makes 250,000 — the
  breakpoints are removed and the step goes on out a frame at a time, saying nothing), removes them and steps on
  out: the step lands
  where V8's own would (the caller's next statement: ``x = add(1, 2)`` has no pause after the call), saying
  what returned.
- V8's step out of a function that throws runs on past the catch that takes the exception (Node 20: to the end
  of the module's code, or of the program). For the step every throw pauses (``setPauseOnExceptions`` "all",
  the agent's own state put back at the landing); a throw the agent's exception settings (filters, constructor
  names, the raised log) would not stop at is stepped into its catch: a catch outside the step's frame is the
  landing (``checked() raised RangeError: negative``), one inside it (or deeper) and the step goes on out (after
  ``THROW_BUDGET`` such throws, a function catching in a loop, throws pause no more: the step goes on as V8's
  own). A throw in a blackboxed library's code pauses nowhere, yet V8 steps into its catch: there, the catch
  block's binding is what left the function.

The value is listed first among the landing frame's locals (``kit.returns``), read and expanded like any value.
A step out costs one more pause (at the return position) and two requests: measured on Node 20, 2.8 → 5.0 ms
(the fastest of 60 step outs from a function's first line, two busy cores); a step over costs nothing more.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

from polydbg.backends.base import Variable
from polydbg.backends.kit import returns
from polydbg.backends.node.target import RETURNED_GROUP, Returned, Step, Target
from polydbg.errors import AdapterError

_LOCATION = ("scriptId", "lineNumber", "columnNumber")
EVERY_THROW = "all"  # V8's pause-on-exceptions state while a step out is under way
THROW_BUDGET = 10  # throws one step out pauses at (each costs two pauses); then the agent's state is back
DEEPER_BUDGET = 200  # deeper calls' returns one step out pauses at (a pause each); then it says nothing


def at_return(frame: dict[str, Any]) -> Returned | None:
    """What a frame paused at its return position returns."""
    value = frame.get("returnValue")
    return Returned(frame.get("functionName") or "(anonymous)", value) if isinstance(value, dict) else None


async def watch(target: Target, step: Step, exceptions: str) -> None:
    """Before a step out: the value, when frame 0 is at its return position already; else breakpoints at the
    function's return positions, so the step pauses where the value can be read, and every throw pausing
    (``exceptions``: the agent's state, put back at the landing)."""
    if target.hidden or not target.frames:
        return  # the step leaves Node's frames above the user's, not the one shown
    top = target.frames[0]
    step.function = top.get("functionName") or "(anonymous)"
    found = at_return(top)
    if found is not None:
        step.returned = found._replace(value=await kept(target, found.value))
        return
    local = next((s for s in top.get("scopeChain") or [] if s.get("type") == "local"), None)
    step.following = True
    if exceptions != EVERY_THROW:  # sent, not awaited: V8 takes it before the step
        target.channel.send("Debugger.setPauseOnExceptions", {"state": EVERY_THROW})
        step.exceptions = exceptions
    if local is None or not isinstance(local.get("endLocation"), dict):
        return
    with contextlib.suppress(AdapterError):
        possible = await target.request("Debugger.getPossibleBreakpoints", {
            "start": {k: top["location"][k] for k in _LOCATION}, "end": local["endLocation"],
            "restrictToFunction": True})
        places = [p for p in possible.get("locations") or [] if p.get("type") == "return"]
        set_ = await asyncio.gather(*(target.request("Debugger.setBreakpoint", {
            "location": {k: p[k] for k in _LOCATION}}) for p in places), return_exceptions=True)
        step.return_points = [str(r["breakpointId"]) for r in set_ if isinstance(r, dict) and r.get("breakpointId")]


async def passed(target: Target, step: Step, hit: list[str]) -> bool | None:
    """A pause during a step out at the return breakpoints: True when it is the step's own frame (its value read,
    the breakpoints removed: step on out), False when a deeper one's (step on out past it), None when not theirs."""
    if not step.return_points or not any(h in step.return_points for h in hit):
        return None
    found = at_return(target.frames[0]) if len(target.frames) == step.depth else None
    if found is None:
        step.deeper += 1
        if step.deeper >= DEEPER_BUDGET:  # a recursion of many calls: no value, out a frame at a time
            for native in step.return_points:
                target.channel.send("Debugger.removeBreakpoint", {"breakpointId": native})
            step.return_points = []
        return False
    unwatch(target, step)
    step.returned = Returned(step.function, await kept(target, found.value))
    return True


def going_on(step: Step, own: bool) -> str:
    """How a step out goes on from a pause at its return breakpoints: out of its own frame, its value read; past a
    deeper call's return, to the next return position's pause (resumed: one pause a call, while every throw
    pauses the step, so none leaves unseen), else out a frame at a time."""
    if own or not step.return_points or not catches_throws(step):
        step.passing = step.passing or not own
        return "Debugger.stepOut"
    return "Debugger.resume"


def follows_throws(step: Step) -> bool:
    """Whether the step follows a throw into its catch (one no setting of the agent's stops at)."""
    return step.following


def catches_throws(step: Step) -> bool:
    """Whether every throw pauses for this step alone (the agent's settings let only uncaught ones, or none)."""
    return step.exceptions is not None


async def thrown(target: Target, step: Step) -> None:
    """An exception pause only the step asked for: the exception, kept in case it leaves the step's frame. After
    ``THROW_BUDGET`` of them (a function that catches in a loop) throws no longer pause the step."""
    exception = (target.pause_data or {})
    step.returned = Returned(step.function, await kept(target, exception), raised=True) if exception else None
    step.throws += 1
    if step.throws >= THROW_BUDGET:
        step.following = False
        if step.exceptions is not None and not target.channel.is_closed:
            target.channel.send("Debugger.setPauseOnExceptions", {"state": step.exceptions})
        step.exceptions = None


def caught_inside(target: Target, step: Step) -> bool:
    """Where a step into an exception's catch landed: inside the step's frame (or deeper) it did not leave the
    function, and the step out goes on."""
    if step.returned is None or not step.returned.raised or len(target.frames) < step.depth:
        return False
    step.returned = None
    return True


async def kept(target: Target, value: dict[str, Any]) -> dict[str, Any]:
    """A returned object kept past the step that leaves its frame, with the preview a local has (V8 sends a
    ``returnValue`` without one, in the pause's object group, released when the step goes on): the object as a
    function returning ``this`` gives it (none of the program's code runs), in ``RETURNED_GROUP``."""
    if not value.get("objectId"):
        return value
    with contextlib.suppress(AdapterError):
        found = await target.request("Runtime.callFunctionOn", {
            "objectId": value["objectId"], "functionDeclaration": "function() { return this; }",
            "objectGroup": RETURNED_GROUP, "generatePreview": True, "silent": True})
        return found.get("result") or value
    return value


def unwatch(target: Target, step: Step) -> None:
    """The step's return breakpoints removed and the agent's exception state put back (nobody waits: V8 takes
    them in order, before the next run request)."""
    live = not target.channel.is_closed
    for native in step.return_points if live else []:
        target.channel.send("Debugger.removeBreakpoint", {"breakpointId": native})
    if step.exceptions is not None and live:
        target.channel.send("Debugger.setPauseOnExceptions", {"state": step.exceptions})
    step.return_points = []
    step.exceptions = None


async def landed(target: Target, step: Step) -> None:
    """Where a step lands: what the function it left (or is leaving) returned, for the report. A step out that
    read no value and landed in a catch block of a caller: the exception the block caught left the function (a
    throw in a blackboxed library's code pauses nowhere, but V8 still steps into its catch)."""
    unwatch(target, step)
    target.returned = step.returned if step.kind == "out" else None
    if target.returned is not None or target.hidden or not target.frames:
        return
    top = target.frames[0]
    target.returned = at_return(top)
    scopes = top.get("scopeChain") or []
    if target.returned is None and step.kind == "out" and step.function and len(target.frames) < step.depth \
            and scopes and scopes[0].get("type") == "catch" and (scopes[0].get("object") or {}).get("objectId"):
        with contextlib.suppress(AdapterError):
            caught = await target.request("Runtime.getProperties", {"objectId": scopes[0]["object"]["objectId"],
                                                                    "ownProperties": True})
            found = [p["value"] for p in caught.get("result") or [] if isinstance(p.get("value"), dict)]
            if len(found) == 1:  # ``catch (error)``'s binding (a destructuring catch binds several: not said)
                target.returned = Returned(step.function, found[0], raised=True)


async def listed(target: Target,
                 make: Callable[[Target, str, dict[str, Any], str | None], Variable]) -> list[Variable]:
    """The returned value as frame 0's first local (``make``: inspection's RemoteObject → Variable)."""
    if target.returned is None:
        return []
    if target.returned.value.get("objectId") and "preview" not in target.returned.value:  # a step over's
        target.returned = target.returned._replace(value=await kept(target, target.returned.value))
    function, value, raised = target.returned
    return [make(target, returns.returned_name(function, raised), value, None)]
