"""One JavaScript thread being debugged — the program's main thread, a worker, a child process — and
how its values are read while it is paused.

Each target has its own CDP channel, its own parsed scripts (script ids are per isolate), its own
breakpoint ids, its own pause and its own values. A value handle (``ref``) names its target by range:
the program's handles count from 1, target ``t``'s from ``t * REF_RANGE``, so the agent's numbers
stay small for the common case and a handle of a target that resumed is recognisably stale.

Values: RemoteObjects behind a ``HandleTable``; arrays, Maps and Sets are paged by a function run on
the object (``callFunctionOn``), never by listing 100,000 properties; getters are not invoked. Objects
fetched for a stop live in one object group, released when the target resumes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from polydbg.backends.base import ExceptionDetail, Frame, Scope, StepKind, Variable
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node import values as jsv
from polydbg.backends.node.scripts import Scripts, position
from polydbg.cdp.client import CdpChannel, WorkerStream
from polydbg.errors import AdapterRequestError

INSPECT_TIMEOUT_S = 10.0
EVALUATE_TIMEOUT_MS = 10_000  # V8 stops an evaluation that runs longer (an endless loop in an expression)
CHILD_CAP = 100  # elements listed before paging
GROUP = "polydbg"  # the object group of everything fetched for a stop
REF_RANGE = 1_000_000
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


@dataclass
class Ref:
    kind: str  # "scope" | "merged" | "object"
    frame: int = 0  # the shown frame index (scopes)
    objects: list[tuple[str, str]] = field(default_factory=list)  # (scope type, objectId), innermost first
    obj: dict[str, Any] = field(default_factory=dict)  # the RemoteObject (objects)
    name: str | None = None  # the expression naming it (objects)
    this: dict[str, Any] | None = None  # merged: the frame's ``this`` when it is an instance
    owners: dict[str, int] = field(default_factory=dict)  # merged: variable name → scope number


@dataclass(eq=False)
class Target:
    thread_id: int
    name: str  # what the agent sees: "main", "worker 1 (pool.js)", "process 4242 (child.js)"
    channel: CdpChannel
    events: OrderedEvents  # this target's stops, refined in order, then through the session's gate
    kind: str = "main"  # "main" | "worker" | "process"
    pid: int | None = None
    parent: Target | None = None
    scripts: Scripts = field(default_factory=Scripts)
    context_id: int | None = None
    entry_bp: str | None = None
    by_native: dict[str, int] = field(default_factory=dict)  # V8 breakpoint id → polydbg's
    native_at: dict[str, tuple[str, int, int]] = field(default_factory=dict)  # V8 id → (script, line, column)
    binding: dict[str, asyncio.Future[list[str]]] = field(default_factory=dict)  # script id → its mapped bps
    workers: dict[str, WorkerStream] = field(default_factory=dict)  # its worker threads' streams, by session
    ended: bool = False
    held: bool = False  # a new child or worker waiting at its start until its breakpoints are set
    # the current pause
    frames: list[dict[str, Any]] = field(default_factory=list)
    hidden: int = 0
    pause_data: dict[str, Any] | None = None
    pause_reason: str = ""
    paused: bool = False
    reported: bool = False
    stepping: StepKind | None = None
    steps_on: int = 0
    pausing: bool = False
    idle: asyncio.Future[bool] | None = None
    refs: HandleTable[Ref] = field(init=False)

    def __post_init__(self) -> None:
        self.refs = HandleTable(self.ref_base + 1)

    @property
    def ref_base(self) -> int:
        return 0 if self.kind == "main" else self.thread_id * REF_RANGE

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float = INSPECT_TIMEOUT_S) -> dict[str, Any]:
        return await self.channel.request(method, params, timeout)

    def on_paused(self, params: dict[str, Any]) -> None:
        self.frames = list(params.get("callFrames") or [])
        self.pause_data = params.get("data") if isinstance(params.get("data"), dict) else None
        self.pause_reason = str(params.get("reason") or "")
        self.paused = True

    def on_resumed(self) -> None:
        self.frames = []
        self.pause_data = None
        self.paused = False
        self.refs.clear()

    async def run(self, method: str) -> None:
        """Resume or step, releasing this stop's values first. Nothing is sent to a target that runs:
        a worker that runs to its end while a message to it is in flight aborts Node (v20)."""
        if self.paused and not self.channel.is_closed:
            self.channel.send("Runtime.releaseObjectGroup", {"objectGroup": GROUP})
        await self.request(method)

    # -- frames -----------------------------------------------------------------------------------------

    def shown(self) -> list[dict[str, Any]]:
        return self.frames[self.hidden:]

    def frame(self, index: int) -> dict[str, Any]:
        if not self.paused:
            raise AdapterRequestError("frame", f"{self.name} is running: it has no frames until it stops")
        shown = self.shown()
        if not 0 <= index < len(shown):
            raise AdapterRequestError("frame", f"no frame {index}; the stack has {len(shown)} frames")
        return shown[index]

    def stack_trace(self, start: int, levels: int) -> tuple[list[Frame], int | None]:
        if not self.paused:
            return [], 0
        shown = self.shown()
        frames = []
        for cdp in shown[start:start + levels]:
            place = self.scripts.place(*position(cdp.get("location") or {}))
            frames.append(Frame(cdp.get("functionName") or "(anonymous)", place.file, place.line, place.column))
        return frames, len(shown)

    def exception_detail(self) -> ExceptionDetail | None:
        data = self.pause_data
        if data is None:
            return None
        if data.get("subtype") == "error" or data.get("type") == "object":
            description = str(data.get("description") or "")
            first = description.split("\n", 1)[0]
            class_name = str(data.get("className") or "Error")
            message = first[len(class_name) + 2:] if first.startswith(class_name + ":") else first
            if data.get("subtype") != "error":
                message = jsv.text_of(data)
            return ExceptionDetail(class_name, message)
        return ExceptionDetail(jsv.type_of(data), jsv.text_of(data))

    # -- values -----------------------------------------------------------------------------------------

    def scopes(self, index: int) -> list[Scope]:
        cdp = self.frame(index)
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
        scopes = [Scope("Locals", self.refs.add(Ref("merged", index, merged, this=this if instance else None)),
                        hint="locals")]
        for s in chain:
            kind = str(s.get("type"))
            label = _SCOPE_NAMES.get(kind, kind)
            if kind == "closure" and s.get("name"):
                label = f"Closure ({s['name']})"
            ref = self.refs.add(Ref("scope", index, [(kind, s["object"]["objectId"])]))
            scopes.append(Scope(label, ref, expensive=kind == "global"))
        return scopes

    async def variables(self, ref: int, start: int | None, count: int | None) -> list[Variable]:
        handle = self.handle(ref)
        if handle.kind == "merged":
            return await self._merged(handle)
        if handle.kind == "scope":
            return await self._properties(handle.objects[0][1], None)
        return await self.children(handle, start or 0, count)

    def handle(self, ref: int) -> Ref:
        handle = self.refs.get(ref)
        if handle is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        return handle

    async def _merged(self, handle: Ref) -> list[Variable]:
        listings = await asyncio.gather(*(
            self._properties(object_id, None, skip_functions=number > 0 and kind in ("closure", "module"))
            for number, (kind, object_id) in enumerate(handle.objects)))
        seen: set[str] = set()
        out: list[Variable] = []
        if handle.this is not None:
            out.append(self.variable("this", handle.this, "this"))
            seen.add("this")
        for number, listing in enumerate(listings):
            for variable in listing:
                if variable.name not in seen:
                    seen.add(variable.name)
                    handle.owners[variable.name] = number
                    out.append(variable)
        return out

    async def _properties(self, object_id: str, parent_name: str | None,
                          skip_functions: bool = False) -> list[Variable]:
        found = await self.request("Runtime.getProperties", {
            "objectId": object_id, "ownProperties": True, "generatePreview": True})
        out = []
        for prop in found.get("result") or []:
            name = str(prop.get("name"))
            value = prop.get("value")
            if value is None:
                if "get" in prop:
                    out.append(Variable(name, "(getter)", "accessor",
                                        evaluate_name=jsv.member_access(parent_name, name)))
                continue
            if skip_functions and value.get("type") == "function":
                continue
            evaluate_name = jsv.member_access(parent_name, name) if parent_name is not None else name
            out.append(self.variable(name, value, evaluate_name))
        for prop in found.get("privateProperties") or []:
            if "value" in prop:
                out.append(self.variable(str(prop.get("name")), prop["value"], None))
        for prop in found.get("internalProperties") or []:
            name = str(prop.get("name"))
            if name in ("[[PromiseState]]", "[[PromiseResult]]", "[[Target]]", "[[Handler]]", "[[BoundThis]]",
                        "[[PrimitiveValue]]", "[[GeneratorState]]") and "value" in prop:
                out.append(self.variable(name, prop["value"], None))
        return out

    def variable(self, name: str, obj: dict[str, Any], evaluate_name: str | None) -> Variable:
        ref = self.refs.add(Ref("object", obj=obj, name=evaluate_name)) if jsv.expandable(obj) else 0
        return Variable(name, jsv.text_of(obj), jsv.type_of(obj), ref, evaluate_name, jsv.count_of(obj))

    async def children(self, handle: Ref, start: int, count: int | None) -> list[Variable]:
        obj = handle.obj
        subtype = obj.get("subtype")
        object_id = str(obj.get("objectId"))
        total = jsv.count_of(obj)
        if subtype in jsv.INDEXED | jsv.KEYED | jsv.LISTED:
            size = count if count is not None else min(CHILD_CAP, total if total is not None else CHILD_CAP)
            return await self._slice(handle, start, size)
        listing = await self._properties(object_id, handle.name)
        return listing[start:start + count] if count is not None else listing

    async def _slice(self, handle: Ref, start: int, count: int) -> list[Variable]:
        """Elements ``start..start+count`` of an array, typed array, Map or Set, by a function run on it."""
        subtype = handle.obj.get("subtype")
        function = _ENTRIES if subtype in jsv.KEYED else _VALUES if subtype in jsv.LISTED else _SLICE
        found = await self.request("Runtime.callFunctionOn", {
            "objectId": handle.obj["objectId"], "functionDeclaration": function, "objectGroup": GROUP,
            "arguments": [{"value": start}, {"value": count}], "silent": True})
        result = found.get("result") or {}
        if "objectId" not in result:
            return []
        listed = await self.request("Runtime.getProperties", {
            "objectId": result["objectId"], "ownProperties": True, "generatePreview": True})
        items = [p.get("value") or {} for p in listed.get("result") or [] if str(p.get("name")).isdigit()]
        if subtype in jsv.KEYED:
            return [self.variable(jsv.text_of(k), v, None) for k, v in zip(items[::2], items[1::2], strict=False)]
        name = handle.name
        return [self.variable(str(start + i), item, jsv.member_access(name, str(start + i))
                              if subtype not in jsv.LISTED else None) for i, item in enumerate(items)]

    async def evaluate_raw(self, expression: str, frame_index: int | None) -> dict[str, Any]:
        params: dict[str, Any] = {"expression": expression, "objectGroup": GROUP, "generatePreview": True,
                                  "silent": True, "timeout": EVALUATE_TIMEOUT_MS}
        if frame_index is not None and self.paused and self.frames:
            method = "Debugger.evaluateOnCallFrame"
            params["callFrameId"] = self.frame(frame_index)["callFrameId"]
        else:
            method = "Runtime.evaluate"
            params["replMode"] = True
            if self.context_id is not None:
                params["contextId"] = self.context_id
        found = await self.request(method, params, timeout=EVALUATE_TIMEOUT_MS / 1000 + INSPECT_TIMEOUT_S)
        details = found.get("exceptionDetails")
        if details:
            raise AdapterRequestError("evaluate", exception_text(details))
        return found

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        handle = self.handle(ref)
        if handle.kind in ("merged", "scope"):
            cdp = self.frame(handle.frame)
            new = (await self.evaluate_raw(value, handle.frame)).get("result") or {}
            number = self._scope_number(cdp, handle, name)
            try:
                if number is None:
                    raise AdapterRequestError("setVariableValue", "not a local scope")
                await self.request("Debugger.setVariableValue", {
                    "scopeNumber": number, "variableName": name, "newValue": call_argument(new),
                    "callFrameId": cdp["callFrameId"]})
            except AdapterRequestError:  # block scopes (let/const in a block) take an assignment instead
                await self.evaluate_raw(f"{name} = ({value})", handle.frame)
            updated = await self.evaluate_raw(name, handle.frame)
            return self.variable(name, updated.get("result") or {}, name)
        new = (await self.evaluate_raw(value, handle.frame if self.paused else None)).get("result") or {}
        found = await self.request("Runtime.callFunctionOn", {
            "objectId": handle.obj["objectId"], "functionDeclaration": _ASSIGN, "objectGroup": GROUP,
            "arguments": [{"value": name}, call_argument(new)], "generatePreview": True, "silent": True})
        if found.get("exceptionDetails"):
            raise AdapterRequestError("setVariable", exception_text(found["exceptionDetails"]))
        return self.variable(name, found.get("result") or {}, jsv.member_access(handle.name, name))

    @staticmethod
    def _scope_number(cdp: dict[str, Any], handle: Ref, name: str) -> int | None:
        index = handle.owners.get(name, 0) if handle.kind == "merged" else 0
        if index >= len(handle.objects):
            return None
        object_id = handle.objects[index][1]
        for number, s in enumerate(cdp.get("scopeChain") or []):
            if (s.get("object") or {}).get("objectId") == object_id:
                return number if s.get("type") in ("local", "closure", "catch") else None
        return None


def call_argument(obj: dict[str, Any]) -> dict[str, Any]:
    if "objectId" in obj:
        return {"objectId": obj["objectId"]}
    if "unserializableValue" in obj:
        return {"unserializableValue": obj["unserializableValue"]}
    if obj.get("type") == "undefined":
        return {}
    return {"value": obj.get("value")}


def exception_text(details: dict[str, Any]) -> str:
    exception = details.get("exception") or {}
    description = exception.get("description")
    if isinstance(description, str) and description:
        return description.split("\n", 1)[0]
    if exception:
        return jsv.text_of(exception)
    return str(details.get("text") or "exception")
