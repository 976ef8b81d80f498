"""Which bindings a paused frame sees are still in their temporal dead zone, in its scopes and its evaluations.

V8 shows a ``let``, ``const`` or ``class`` binding the program has not reached as ``undefined`` (in a loop's
next iteration: as the last iteration left it), in a scope's listing and in an evaluation alike (Node 20.20:
``Debugger.evaluateOnCallFrame`` answers ``undefined`` where the program would throw "Cannot access 'x' before
initialization"). ``lexical`` finds, in the script's source, whether the frame running a scope has passed
each declaration; this module picks the scopes that can be judged and the position to judge each by:

- the paused frame's own scopes (its blocks, its function's), by where it is paused;
- a script's top level, also when a function reaches it as a closure (one called while the module loads,
  reading a ``const`` declared below the call: the classic TDZ bug), by where the frame running the top
  level, further down the stack, is paused. A CommonJS module's top level is the local scope of the
  function Node wraps the file in: it spans the whole file (the wrapper's parameters are not in the
  source), or, when a loader such as tsx writes the wrapper into the code, it is the script's outermost
  function, called by the loader. A module's body runs once, so that frame is the one that made the
  closure. With no such frame the top level has finished (or waits in a top-level ``await``): not judged.

Another function's closure is not judged: which of its calls made the closure is not known.

An evaluation that reads such a binding gets the same answer: a bare name reads ``<uninitialized>``; an
expression that reads one is refused with the ReferenceError the program would get, rather than computed
on ``undefined``. A name an inner scope binds (a parameter, a nested ``let``) shadows the dead one.
"""

from __future__ import annotations

import asyncio
from typing import Any, NamedTuple

from polydbg.backends.base import Variable
from polydbg.backends.node import lexical
from polydbg.backends.node.scripts import position
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterRequestError

UNINITIALIZED = "<uninitialized>"
_OWN = ("block", "catch", "local", "module")
_TOP_LEVEL = ("local", "module")


class _Judged(NamedTuple):
    scope: dict[str, Any]  # the CDP scope, as the paused frame's chain has it
    location: dict[str, Any]  # where the frame that runs it is paused


async def mark(target: Target, frame_index: int, object_id: str, listing: list[Variable]) -> list[Variable]:
    """``listing`` (one scope of frame ``frame_index``) with its bindings in their TDZ read as uninitialized."""
    if not listing or not target.paused:
        return listing
    target.frame(frame_index)  # a frame of this stop
    judged = next((j for j in _judged(target, frame_index) if _object_id(j.scope) == object_id), None)
    if judged is None:
        return listing
    dead = await _dead(target, judged, {v.name for v in listing})
    return [v._replace(value=UNINITIALIZED, type=dead[v.name]) if v.name in dead else v for v in listing]


async def read_before_initialized(target: Target, frame_index: int, expression: str) -> Variable | None:
    """An evaluation in frame ``frame_index`` of a binding in its TDZ: a bare name's uninitialized value; an
    expression reading one raises the ReferenceError the program would get. None when it reads none."""
    names = lexical.free_names(expression)
    if not names or not target.paused:
        return None
    chain = list(target.frame(frame_index).get("scopeChain") or [])
    for judged in _judged(target, frame_index):
        dead = await _dead(target, judged, names)
        if not dead:
            continue
        inner = chain[:next((i for i, s in enumerate(chain) if _object_id(s) == _object_id(judged.scope)), 0)]
        shadowed = await _bound_in(target, inner)
        name = next((n for n in sorted(dead) if n not in shadowed), None)
        if name is None:
            continue
        if expression.strip() == name:
            return Variable(name, UNINITIALIZED, dead[name], evaluate_name=name)
        raise AdapterRequestError("evaluate", (
            f"ReferenceError: Cannot access '{name}' before initialization: {name} (a {dead[name]}) is in its "
            "temporal dead zone, its declaration has not run yet, so the program would throw this here (V8's "
            "debugger would read it as undefined and compute on); evaluate it once the declaration has run"))
    return None


def _judged(target: Target, index: int) -> list[_Judged]:
    """The scopes of frame ``index`` that can be judged, innermost first, each with the position to judge by."""
    frames = target.shown()
    cdp = frames[index]
    chain = list(cdp.get("scopeChain") or [])
    own = _own_scopes(cdp)
    found = [_Judged(scope, cdp.get("location") or {}) for scope in own]
    for number, scope in enumerate(chain[len(own):], len(own)):
        if scope.get("type") not in ("closure", "module") or "startLocation" not in scope:
            continue
        runner = next((at for at in range(index + 1, len(frames)) if any(
            s.get("type") in _TOP_LEVEL and _where(s) == _where(scope) for s in _own_scopes(frames[at]))), None)
        if runner is None:
            continue
        outermost = all(s.get("type") in ("global", "script") for s in chain[number + 1:])
        caller = frames[runner + 1].get("location") or {} if runner + 1 < len(frames) else None
        loaded = caller is None or not target.scripts.is_user_code(*position(caller))  # by Node's loader
        if scope.get("type") == "module" or (outermost and loaded):  # a module's body: it runs once
            found.append(_Judged(scope, frames[runner].get("location") or {}))
    return found


def _own_scopes(cdp: dict[str, Any]) -> list[dict[str, Any]]:
    """The scopes a frame's own code made: its blocks, its function's (or its module's when it is top-level)."""
    own = []
    for scope in cdp.get("scopeChain") or []:
        kind = scope.get("type")
        if kind not in _OWN:
            break
        own.append(scope)
        if kind in _TOP_LEVEL:
            break
    return own


async def _dead(target: Target, judged: _Judged, names: set[str]) -> dict[str, str]:
    """Of ``names``, those the judged scope binds that are still in their TDZ, each with its keyword."""
    scope = judged.scope
    if "startLocation" not in scope or "endLocation" not in scope:
        return {}
    script_id, line, column = position(judged.location)
    if script_id != position(scope["startLocation"])[0]:
        return {}
    source = await target.source(script_id)
    if source is None:
        return {}
    span = _span(scope)
    top_level = scope.get("type") == "module" or source.is_whole(span)  # not opened by a bracket
    return source.uninitialized(span, (line, column), names, top_level=top_level)


async def _bound_in(target: Target, scopes: list[dict[str, Any]]) -> set[str]:
    """The names ``scopes`` bind (they shadow a binding further out)."""
    listings = await asyncio.gather(*(
        target.request("Runtime.getProperties", {"objectId": _object_id(scope), "ownProperties": True})
        for scope in scopes if _object_id(scope)))
    return {str(prop.get("name")) for listing in listings for prop in listing.get("result") or []}


def _span(scope: dict[str, Any]) -> tuple[tuple[int, int], tuple[int, int]]:
    _, *start = position(scope.get("startLocation") or {})
    _, *end = position(scope.get("endLocation") or {})
    return (start[0], start[1]), (end[0], end[1])


def _where(scope: dict[str, Any]) -> tuple[str, tuple[tuple[int, int], tuple[int, int]]]:
    return position(scope.get("startLocation") or {})[0], _span(scope)


def _object_id(scope: dict[str, Any]) -> str | None:
    found = (scope.get("object") or {}).get("objectId")
    return str(found) if found is not None else None

