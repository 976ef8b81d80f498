"""Reading and changing a paused target's values: scopes, variables, paged children, evaluation.

Values are RemoteObjects behind the target's ``HandleTable`` (``Target.refs``, one stop's worth).
The first scope, "Locals", merges the block, function and closure scopes up to the script scope
(the innermost binding of a name wins), with ``this`` when the frame is a method of an instance.
Arrays, Maps and Sets are paged by a function run on the object (``callFunctionOn``), never by
listing 100,000 properties; getters are not invoked. An evaluation waits one inspection deadline,
as every request does (a Node SIGSTOPped is asked nothing, ``Target.check_answering``; one stopped while
an evaluation runs costs that once and then the stalled debugger's second), and V8 is told to stop it
before then (``EVALUATE_SHARE`` of the deadline): an endless loop in an expression is ended inside V8,
which then answers.
"""

from __future__ import annotations

import asyncio
from typing import Any

from polydbg.backends.base import Scope, Variable
from polydbg.backends.kit import thrown, timeouts
from polydbg.backends.node import deadzone
from polydbg.backends.node import values as jsv
from polydbg.backends.node.target import GROUP, Ref, Target
from polydbg.errors import AdapterRequestError

EVALUATE_SHARE = 0.8  # of the inspection deadline, V8 may run an evaluation; then it stops it (an endless loop)
CHILD_CAP = 100  # elements listed before paging
MODULE_WRAPPER = frozenset({"exports", "require", "module", "__filename", "__dirname"})
_BUNDLER_PREFIXES = ("__vite_ssr_", "__vi_import_", "__webpack_")
# the helpers esbuild (tsx's compiler) writes at the top of a module it converts
ESBUILD_HELPERS = frozenset({"__create", "__defProp", "__getOwnPropDesc", "__getOwnPropNames", "__getProtoOf",
                             "__hasOwnProp", "__name", "__export", "__copyProps", "__toESM", "__toCommonJS",
                             "__commonJS", "__esm", "__require", "__defNormalProp", "__publicField", "__async",
                             "__spreadValues", "__spreadProps", "__objRest", "__reExport", "__decorateClass"})
_MERGED_TYPES = frozenset({"local", "block", "catch", "closure", "with", "eval", "module"})
_SCOPE_NAMES = {"local": "Local", "block": "Block", "catch": "Catch", "closure": "Closure", "module": "Module",
                "script": "Script", "global": "Global", "with": "With", "eval": "Eval",
                "wasm-expression-stack": "Wasm stack"}
_SLICE = "function(s, c) { return Array.prototype.slice.call(this, s, s + c); }"
_ENTRIES = ("function(s, c) { const out = []; let i = 0; for (const [k, v] of this) { if (i >= s + c) break; "
            "if (i++ >= s) out.push(k, v); } return out; }")
_VALUES = ("function(s, c) { const out = []; let i = 0; for (const v of this) { if (i >= s + c) break; "
           "if (i++ >= s) out.push(v); } return out; }")
_ASSIGN = "function(k, v) { this[k] = v; return this[k]; }"
_INTERNAL_SHOWN = frozenset({"[[PromiseState]]", "[[PromiseResult]]", "[[Target]]", "[[Handler]]", "[[BoundThis]]",
                             "[[PrimitiveValue]]", "[[GeneratorState]]"})


def is_noise(variable: Variable) -> bool:
    """Module clutter: CommonJS's wrapper arguments, a bundler's or vitest's import bindings, esbuild's helpers."""
    if variable.name.startswith(_BUNDLER_PREFIXES) or (variable.name in ESBUILD_HELPERS
                                                       and variable.type == "function"):
        return True
    return variable.name in MODULE_WRAPPER and variable.type in ("function", "Module", "Object", "string")


def scopes(target: Target, index: int) -> list[Scope]:
    cdp = target.frame(index)
    chain = [s for s in cdp.get("scopeChain") or [] if "objectId" in (s.get("object") or {})]
    merged: list[tuple[str, str]] = []
    for s in chain:  # innermost first, up to the script and global scopes
        kind = str(s.get("type"))
        if kind not in _MERGED_TYPES:
            break
        merged.append((kind, s["object"]["objectId"]))
    this = cdp.get("this") or {}
    instance = (this.get("type") == "object" and this.get("subtype") is None and cdp.get("functionName")
                and this.get("className") not in ("Object", "global", "Window", None))
    found = [Scope("Locals", target.refs.add(Ref("merged", index, merged, this=this if instance else None)),
                   hint="locals")]
    for s in chain:
        kind = str(s.get("type"))
        label = _SCOPE_NAMES.get(kind, kind)
        if kind == "closure" and s.get("name"):
            label = f"Closure ({s['name']})"
        ref = target.refs.add(Ref("scope", index, [(kind, s["object"]["objectId"])]))
        found.append(Scope(label, ref, expensive=kind == "global"))
    return found


def handle(target: Target, ref: int) -> Ref:
    found = target.refs.get(ref)
    if found is None:
        raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
    return found


async def variables(target: Target, ref: int, start: int | None, count: int | None) -> list[Variable]:
    found = handle(target, ref)
    if found.kind == "merged":
        return await _merged(target, found)
    if found.kind == "scope":
        object_id = found.objects[0][1]
        return await deadzone.mark(target, found.frame, object_id, await _properties(target, object_id, None))
    return await children(target, found, start or 0, count)


async def _merged(target: Target, found: Ref) -> list[Variable]:
    listings = await asyncio.gather(*(
        _properties(target, object_id, None, skip_functions=number > 0 and kind in ("closure", "module"))
        for number, (kind, object_id) in enumerate(found.objects)))
    listings = [await deadzone.mark(target, found.frame, object_id, listing)
                for (_, object_id), listing in zip(found.objects, listings, strict=True)]
    seen: set[str] = set()
    out: list[Variable] = []
    if found.this is not None:
        out.append(variable(target, "this", found.this, "this"))
        seen.add("this")
    for number, listing in enumerate(listings):
        for item in listing:
            if item.name not in seen:
                seen.add(item.name)
                found.owners[item.name] = number
                out.append(item)
    return out


async def _properties(target: Target, object_id: str, parent_name: str | None,
                      skip_functions: bool = False, inherited: bool = False) -> list[Variable]:
    """An object's (or a scope's) own properties, getters listed, not run; with ``inherited``, also the
    getters its prototypes define (``req.headers``, ``req.query``: where classes keep them) and its
    ``[[Prototype]]``, as Node's own inspector shows an object."""
    asked = [target.request("Runtime.getProperties", {
        "objectId": object_id, "ownProperties": True, "generatePreview": True})]
    if inherited:
        asked.append(target.request("Runtime.getProperties", {
            "objectId": object_id, "ownProperties": False, "accessorPropertiesOnly": True}))
    found, *chain = await asyncio.gather(*asked)
    own = found.get("result") or []
    names = {str(prop.get("name")) for prop in own}
    getters = {str(prop.get("name")): prop for listing in chain for prop in reversed(listing.get("result") or [])
               if not prop.get("isOwn") and "get" in prop}  # the nearest prototype's, where several define one
    out = []
    for prop in own + [p for name, p in reversed(getters.items()) if name not in names and name != "__proto__"]:
        name = str(prop.get("name"))
        value = prop.get("value")
        if value is None:
            if "get" in prop:
                out.append(Variable(name, "(getter)", "accessor", evaluate_name=jsv.member_access(parent_name, name)))
            continue
        if skip_functions and value.get("type") == "function":
            continue
        evaluate_name = jsv.member_access(parent_name, name) if parent_name is not None else name
        out.append(variable(target, name, value, evaluate_name))
    for prop in found.get("privateProperties") or []:
        if "value" in prop:
            out.append(variable(target, str(prop.get("name")), prop["value"], None))
    for prop in found.get("internalProperties") or []:
        name = str(prop.get("name"))
        if (name in _INTERNAL_SHOWN or (inherited and name == "[[Prototype]]")) and "value" in prop:
            out.append(variable(target, name, prop["value"], None))
    return out


def variable(target: Target, name: str, obj: dict[str, Any], evaluate_name: str | None) -> Variable:
    """A RemoteObject as a Variable, with a handle when it has children."""
    ref = target.refs.add(Ref("object", obj=obj, name=evaluate_name)) if jsv.expandable(obj) else 0
    return Variable(name, jsv.text_of(obj), jsv.type_of(obj), ref, evaluate_name, jsv.count_of(obj))


async def children(target: Target, found: Ref, start: int, count: int | None) -> list[Variable]:
    obj = found.obj
    subtype = obj.get("subtype")
    object_id = str(obj.get("objectId"))
    total = jsv.count_of(obj)
    if subtype in jsv.INDEXED | jsv.KEYED | jsv.LISTED:
        size = count if count is not None else min(CHILD_CAP, total if total is not None else CHILD_CAP)
        return await _slice(target, found, start, size)
    listing = await _properties(target, object_id, found.name, inherited=True)
    return listing[start:start + count] if count is not None else listing


async def _slice(target: Target, found: Ref, start: int, count: int) -> list[Variable]:
    """Elements ``start..start+count`` of an array, typed array, Map or Set, by a function run on it."""
    subtype = found.obj.get("subtype")
    function = _ENTRIES if subtype in jsv.KEYED else _VALUES if subtype in jsv.LISTED else _SLICE
    answer = await target.request("Runtime.callFunctionOn", {
        "objectId": found.obj["objectId"], "functionDeclaration": function, "objectGroup": GROUP,
        "arguments": [{"value": start}, {"value": count}], "silent": True})
    result = answer.get("result") or {}
    if "objectId" not in result:
        return []
    listed = await target.request("Runtime.getProperties", {
        "objectId": result["objectId"], "ownProperties": True, "generatePreview": True})
    items = [p.get("value") or {} for p in listed.get("result") or [] if str(p.get("name")).isdigit()]
    if subtype in jsv.KEYED:
        return [variable(target, jsv.text_of(k), v, None) for k, v in zip(items[::2], items[1::2], strict=False)]
    name = found.name
    return [variable(target, str(start + i), item, jsv.member_access(name, str(start + i))
                     if subtype not in jsv.LISTED else None) for i, item in enumerate(items)]


async def evaluate_variable(target: Target, expression: str, frame_index: int | None) -> Variable:
    """An evaluation as the agent reads it: a binding in its temporal dead zone as the program sees it
    (``deadzone``), not as the ``undefined`` V8 reads."""
    if frame_index is not None and target.paused and target.frames:
        uninitialized = await deadzone.read_before_initialized(target, frame_index, expression)
        if uninitialized is not None:
            return uninitialized
    found = await evaluate(target, expression, frame_index)
    return variable(target, expression, found.get("result") or {}, expression)


async def evaluate(target: Target, expression: str, frame_index: int | None) -> dict[str, Any]:
    """Evaluate in a frame of the stop (or the target's default context): V8's answer; the exception
    it threw as an AdapterRequestError. ``$exception`` is the value thrown, at an exception pause."""
    if not thrown.names_it(expression):
        return await _evaluate(target, expression, frame_index)
    if not target.paused or target.pause_reason not in ("exception", "promiseRejection") or target.pause_data is None:
        raise thrown.not_at_an_exception("Node")
    # the expression as an arrow function of $exception made in the frame (its scope and `this` are the frame's),
    # called with the pause's value: V8 cannot name a remote object inside an evaluation
    closure = (await _evaluate(target, f"(({thrown.NAME}) => ({expression}))", frame_index)).get("result") or {}
    found = await target.request("Runtime.callFunctionOn", {
        "objectId": closure.get("objectId"), "functionDeclaration": "function (value) { return this(value); }",
        "arguments": [jsv.call_argument(target.pause_data)], "objectGroup": GROUP, "generatePreview": True,
        "silent": True}, timeout=timeouts.INSPECT_S)
    details = found.get("exceptionDetails")
    if details:
        raise AdapterRequestError("evaluate", jsv.exception_text(details))
    return found


async def _evaluate(target: Target, expression: str, frame_index: int | None) -> dict[str, Any]:
    deadline = timeouts.INSPECT_S  # one deadline, as every request: a Node that cannot answer costs no more
    params: dict[str, Any] = {"expression": expression, "objectGroup": GROUP, "generatePreview": True,
                              "silent": True, "timeout": int(deadline * EVALUATE_SHARE * 1000)}
    if frame_index is not None and target.paused and target.frames:
        method = "Debugger.evaluateOnCallFrame"
        params["callFrameId"] = target.frame(frame_index)["callFrameId"]
    else:
        method = "Runtime.evaluate"
        params["replMode"] = True
        if target.context_id is not None:
            params["contextId"] = target.context_id
    try:
        found = await target.request(method, params, timeout=deadline)
    except AdapterRequestError as exc:
        if exc.message != "Execution was terminated":
            raise
        raise AdapterRequestError("evaluate", (  # V8 stopped it at the timeout it was given
            f"the expression was still running after {params['timeout'] / 1000:g} s and was stopped (an endless "
            "loop, or a call that waits?); the program is still stopped where it was")) from exc
    details = found.get("exceptionDetails")
    if details:
        raise AdapterRequestError("evaluate", jsv.exception_text(details))
    return found


async def set_variable(target: Target, ref: int, name: str, value: str) -> Variable:
    found = handle(target, ref)
    if found.kind in ("merged", "scope"):
        cdp = target.frame(found.frame)
        new = (await evaluate(target, value, found.frame)).get("result") or {}
        number = _scope_number(cdp, found, name)
        try:
            if number is None:
                raise AdapterRequestError("setVariableValue", "not a local scope")
            await target.request("Debugger.setVariableValue", {
                "scopeNumber": number, "variableName": name, "newValue": jsv.call_argument(new),
                "callFrameId": cdp["callFrameId"]})
        except AdapterRequestError:  # block scopes (let/const in a block) take an assignment instead
            await evaluate(target, f"{name} = ({value})", found.frame)
        updated = await evaluate(target, name, found.frame)
        return variable(target, name, updated.get("result") or {}, name)
    new = (await evaluate(target, value, found.frame if target.paused else None)).get("result") or {}
    answer = await target.request("Runtime.callFunctionOn", {
        "objectId": found.obj["objectId"], "functionDeclaration": _ASSIGN, "objectGroup": GROUP,
        "arguments": [{"value": name}, jsv.call_argument(new)], "generatePreview": True, "silent": True})
    if answer.get("exceptionDetails"):
        raise AdapterRequestError("setVariable", jsv.exception_text(answer["exceptionDetails"]))
    return variable(target, name, answer.get("result") or {}, jsv.member_access(found.name, name))


def _scope_number(cdp: dict[str, Any], found: Ref, name: str) -> int | None:
    """The number of the scope (in the frame's chain) that holds ``name``, if V8 can set a variable there."""
    index = found.owners.get(name, 0) if found.kind == "merged" else 0
    if index >= len(found.objects):
        return None
    object_id = found.objects[index][1]
    for number, s in enumerate(cdp.get("scopeChain") or []):
        if (s.get("object") or {}).get("objectId") == object_id:
            return number if s.get("type") in ("local", "closure", "catch") else None
    return None
