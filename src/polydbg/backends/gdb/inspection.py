"""Values under gdb: scopes, locals, expandable values (varobjs), their children and one-level summaries,
evaluation and assignment — valid for one stop.

- Scopes are "Locals" (``-stack-list-variables``, arguments first) and "Registers" (``native``). The
  locals are asked twice, pipelined in one round trip: ``--simple-values`` says which are compound
  (no value given) and their types, ``--all-values`` gives every value as gdb prints it.
- Values are printed by gdb with pretty printers on (libstdc++'s auto-load on Debian; Rust's
  ``gdb_load_rust_pretty_printers.py`` sourced from the toolchain for Rust only), so a
  ``std::vector<int>`` reads ``std::vector of length 3, capacity 3 = {1, 2, 3}``. Types are shortened
  (``kit.typenames`` for C++, ``values.short_rust_type`` for Rust).
- An expandable value gets a ref (an expression and its frame); expanding it creates a varobj
  (``-var-create``) and lists its children (``-var-list-children``), C++ access groups
  (public/private/protected) flattened, a map's key/value pairs shown as ``[key] = value``. A compound
  child, which a varobj shows as ``{...}`` / ``[N]``, gets gdb's own print of its path expression
  (``{id = 1, label = "one"}``), or below a pretty printer (no path expression) a summary built from
  its first members. Root varobjs are deleted when the program moves (``forget``), without waiting.
- ``set_variable`` on a local or register evaluates ``name = (value)`` in the frame; on a child it is
  ``-var-assign``, and the child is listed again to report what gdb made of it.
- Evaluation pipelines ``-data-evaluate-expression`` with a ``whatis`` for the type (one round trip).
- ``exception_info`` reads the signal, or at an exception filter's stop gdb's ``$_exception``; that
  fails without libstdc++'s debug info (gdb 13.1 on Debian 12: ``No symbol "runtime_error" in namespace
  "std"``), so for a throw the type and message are read from ``__cxa_throw``'s arguments (``kit.cxx``),
  and for a panic the message is the one the panic hook printed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from polydbg.backends.base import ExceptionDetail, FrameRef, Scope, Variable
from polydbg.backends.gdb.calls import Calls
from polydbg.backends.gdb.frames import Frames
from polydbg.backends.gdb.native import Native
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.values import (
    ARRAY_TYPE,
    SUMMARY_ITEMS,
    child_name,
    children_of,
    element_count,
    expandable,
    is_access_group,
    is_placeholder,
    is_pointer,
    pair_up,
    pointer_expandable,
    short_rust_type,
    short_rust_value,
    summary_of,
    to_int,
)
from polydbg.backends.kit import cxx, sanitizers, thrown, timeouts
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.kit.panics import panic_message
from polydbg.backends.kit.typenames import short_type
from polydbg.errors import AdapterError, AdapterRequestError
from polydbg.mi.client import mi_quote

CHILD_CAP = 256  # children listed when no count is asked (the session pages the rest with child_slice)
SUMMARY_CHILDREN = 32  # compound children per listing that get a one-level {…} summary
NOISE = ("__PRETTY_FUNCTION__", "__func__", "__FUNCTION__")  # the compiler's statics in a locals listing


@dataclass
class _Ref:
    kind: str  # "locals" | "registers" | "expr" | "varobj"
    frame: FrameRef | None
    expression: str = ""
    varobj: str = ""
    dynamic: bool = False
    hint: str = ""
    names: dict[str, str] = field(default_factory=dict)  # shown child name → child varobj


class Inspection:
    def __init__(self, gdb: GdbState, frames: Frames, native: Native, calls: Calls) -> None:
        self._gdb = gdb
        self._frames = frames
        self._native = native
        self._calls = calls
        self._refs: HandleTable[_Ref] = HandleTable()
        self._roots: list[str] = []  # root varobjs created at this stop

    def forget(self) -> None:
        """The program moved: every ref and varobj of the last stop is stale."""
        for name in self._roots:
            self._gdb.fire(f"-var-delete {mi_quote(name)}")
        self._roots.clear()
        self._refs.clear()

    def _ref(self, key: tuple[Any, ...], make: Callable[[], _Ref]) -> int:
        return self._refs.add(make(), key)

    # -- scopes and variables -----------------------------------------------------------------------------

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        return [
            Scope("Locals", self._ref(("locals", frame), lambda: _Ref("locals", frame)), hint="locals"),
            Scope("Registers", self._ref(("registers", frame), lambda: _Ref("registers", frame)),
                  expensive=True, hint="registers"),
        ]

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        info = self._refs.get(ref)
        if info is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        if info.kind == "locals":
            return await self._locals(info)
        if info.kind == "registers":
            return await self._native.registers(info.frame or FrameRef(0, 0))
        return await self._children(ref, info, start or 0, count if count is not None else CHILD_CAP)

    async def child_slice(self, parent: Variable, start: int, count: int) -> list[Variable] | None:
        info = self._refs.get(parent.ref)
        if info is None or info.kind in ("locals", "registers"):
            return None
        return await self._children(parent.ref, info, start, count)

    async def _locals(self, info: _Ref) -> list[Variable]:
        context = await self._frames.where(info.frame)
        simple, full = await self._gdb.cmds([f"-stack-list-variables {context}--simple-values",
                                             f"-stack-list-variables {context}--all-values"])
        kinds = simple.payload.get("variables") or []
        values = full.payload.get("variables") or []
        if len(kinds) != len(values):
            by_name = {str(v.get("name")): v for v in values if isinstance(v, dict)}
            values = [by_name.get(str(k.get("name")), {}) for k in kinds]
        out = []
        for kind, value in zip(kinds, values, strict=False):
            if not isinstance(kind, dict):
                continue
            name = str(kind.get("name"))
            text = str(value.get("value", kind.get("value", "")) if isinstance(value, dict) else "")
            out.append(self._value(name, name, text, kind.get("type"), "value" not in kind, info.frame))
        return out

    def _type(self, type_: Any) -> str | None:
        if not type_:
            return None
        return short_rust_type(str(type_)) if self._gdb.language == "rust" else short_type(str(type_))

    def _shown(self, value: str) -> str:
        return short_rust_value(value) if self._gdb.language == "rust" else value

    def _value(self, name: str, expression: str, value: str, type_: Any, compound: bool | None,
               frame: FrameRef | None) -> Variable:
        type_text = self._type(type_)
        ref = 0
        count = None
        if expandable(type_text, value, compound):
            ref = self._ref(("expr", frame, expression), lambda: _Ref("expr", frame, expression))
            count = element_count(type_text, value)
        return Variable(name=name, value=self._shown(value), type=type_text, ref=ref, evaluate_name=expression,
                        indexed_count=count)

    # -- varobjs and their children -------------------------------------------------------------------------

    async def _varobj(self, info: _Ref) -> _Ref:
        """Turn an expression ref into a varobj (created on first expansion)."""
        if info.kind == "expr":
            result = await self._gdb.cmd(
                f"-var-create {await self._frames.where(info.frame)}- * {mi_quote(info.expression)}")
            info.kind = "varobj"
            info.varobj = str(result.payload.get("name"))
            info.dynamic = result.payload.get("dynamic") == "1"
            info.hint = str(result.payload.get("displayhint") or "")
            self._roots.append(info.varobj)
        return info

    async def _list_children(self, varobjs: list[str], start: int, count: int) -> list[list[dict[str, Any]]]:
        """The children of several varobjs in one round trip, C++ access groups flattened."""
        results = await self._gdb.cmds([f"-var-list-children --all-values {mi_quote(v)} {start} {start + count}"
                                        for v in varobjs])
        listed = [children_of(r.payload) for r in results]
        groups = [kid for kids in listed for kid in kids if is_access_group(kid)]
        if groups:
            nested = await self._list_children([str(g["name"]) for g in groups], 0, CHILD_CAP)
            inner = {str(g["name"]): kids for g, kids in zip(groups, nested, strict=True)}
            listed = [[k for kid in kids for k in (inner.get(str(kid["name"]), []) if is_access_group(kid)
                                                  else [kid])] for kids in listed]
        return listed

    async def _children(self, ref: int, info: _Ref, start: int, count: int) -> list[Variable]:
        info = await self._varobj(info)
        [kids] = await self._list_children([info.varobj], start, count)
        if info.hint == "map":
            kids = pair_up(kids)
        compound = [k for k in kids if is_placeholder(str(k.get("value", ""))) and k.get("name")][:SUMMARY_CHILDREN]
        summaries = await self._summaries(info, compound) if compound else {}
        out = []
        for kid in kids:
            name = child_name(kid)
            varobj = str(kid.get("name"))
            info.names[name] = varobj
            value = summaries.get(varobj, str(kid.get("value", "")))
            type_text = self._type(kid.get("type"))
            dynamic = kid.get("dynamic") == "1"
            hint = str(kid.get("displayhint") or "")
            if type_text and is_pointer(type_text):
                has_children = pointer_expandable(type_text, value)
            else:
                has_children = to_int(kid.get("numchild")) > 0 or (dynamic and hint != "string")
            if has_children:
                made = _Ref("varobj", info.frame, varobj=varobj, dynamic=dynamic, hint=hint)
                child_ref = self._ref(("varobj", varobj), lambda made=made: made)  # type: ignore[misc]
                count_of = to_int(kid.get("numchild")) if not dynamic and type_text and ARRAY_TYPE.search(type_text) \
                    else element_count(type_text, value)
            else:
                child_ref, count_of = 0, None
            out.append(Variable(name=name, value=self._shown(value), type=type_text, ref=child_ref,
                                indexed_count=count_of))
        return out

    async def _summaries(self, parent: _Ref, compound: list[dict[str, Any]]) -> dict[str, str]:
        """Printed values for children a varobj shows as ``{...}`` / ``[N]``: gdb's own print of the
        child's path expression where it has one (not below a pretty printer), else a summary built
        from the child's first members."""
        client = self._gdb.client
        names = [str(k["name"]) for k in compound]
        out: dict[str, str] = {}
        if not parent.dynamic:
            paths = [(n, client.send(f"-var-info-path-expression {mi_quote(n)}")) for n in names]
            where = await self._frames.where(parent.frame)
            printed = []
            for name, future in paths:
                with contextlib.suppress(AdapterError):
                    [path] = await client.gather([(name, future)], timeouts.INSPECT_S)
                    expression = str(path.payload.get("path_expr") or "")
                    if expression:
                        printed.append((name, client.send(
                            f"-data-evaluate-expression {where}{mi_quote(expression)}")))
            for name, future in printed:
                with contextlib.suppress(AdapterError):
                    [value] = await client.gather([(name, future)], timeouts.INSPECT_S)
                    out[name] = str(value.payload.get("value", ""))
        rest = [k for k in compound if str(k["name"]) not in out]
        if rest:
            with contextlib.suppress(AdapterRequestError):
                nested = await self._list_children([str(k["name"]) for k in rest], 0, SUMMARY_ITEMS + 1)
                for kid, grandkids in zip(rest, nested, strict=True):
                    out[str(kid["name"])] = summary_of(grandkids, str(kid.get("displayhint") or ""))
        return out

    # -- evaluation and assignment ----------------------------------------------------------------------------

    async def evaluate(self, expression: str, frame: FrameRef | None) -> Variable:
        """``$exception`` is the C++ exception of a throw or catch stop: gdb's ``$_exception``, which it reads only
        in the runtime's frame (``__cxa_throw``), so it is named by type and address in the shown frames."""
        if thrown.names_it(expression):
            expression_in_frame = thrown.substitute(expression, await self._thrown_object())
        else:
            expression_in_frame = expression
        value, kind = await self._evaluate_with_type(expression_in_frame, frame)
        return self._value(expression, expression, value, kind, None, frame)

    async def _thrown_object(self) -> str:
        thread = self._gdb.stop.machinery_thread
        if self._gdb.stop.catch not in ("throw", "catch") or thread is None:
            raise thrown.not_at_an_exception("gdb")
        where = f"--thread {thread} --frame 0 "
        kind = cxx.whatis_type(await self._printed(where, "$_exception", command="whatis") or "")
        address = await self._printed(where, "(unsigned long) &$_exception")
        if not kind or not address:
            raise AdapterRequestError("evaluate", f"{thrown.NAME} cannot be read here: gdb has no type for the "
                                      "exception (the standard library's types are described only with its debug "
                                      "symbols); the stop's exception says its type and message")
        return f"(*({kind} *) {address})"

    async def _evaluate_with_type(self, expression: str, frame: FrameRef | None) -> tuple[str, str | None]:
        """The value (the expression may call a function: bounded by ``calls``) and its type."""
        where = await self._frames.where(frame)
        client = self._gdb.client
        whatis = client.send(f"-interpreter-exec {where}console {mi_quote('whatis ' + expression)}")  # runs no code
        value = await self._calls.run(f"-data-evaluate-expression {where}{mi_quote(expression)}",
                                      frame.thread_id if frame is not None else None)
        kind = None
        with contextlib.suppress(AdapterError):
            kind = (await client.wait(whatis, "whatis", timeouts.INSPECT_S)).console.strip().removeprefix("type = ")
        return str(value.payload.get("value", "")), kind or None

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        info = self._refs.get(ref)
        if info is None:
            raise AdapterRequestError("setVariable", f"ref {ref} is not valid at this stop")
        if info.kind in ("locals", "registers"):
            target = ("$" + name.lstrip("$")) if info.kind == "registers" else name
            where = await self._frames.where(info.frame)
            await self._calls.run(f"-data-evaluate-expression {where}{mi_quote(f'{target} = ({value})')}",
                                  info.frame.thread_id if info.frame is not None else None)
            text, kind = await self._evaluate_with_type(target, info.frame)
            return self._value(name, target, text, kind, None, info.frame)
        info = await self._varobj(info)
        if name not in info.names:
            await self._children(ref, info, 0, CHILD_CAP)
        child = info.names.get(name)
        if child is None:
            raise AdapterRequestError("setVariable", f"no member {name!r} here")
        await self._gdb.cmd(f"-var-assign {mi_quote(child)} {mi_quote(value)}")
        for variable in await self._children(ref, info, 0, CHILD_CAP):
            if variable.name == name:
                return variable
        raise AdapterRequestError("setVariable", f"{name} is gone after the assignment")

    # -- the exception a stop is about -----------------------------------------------------------------------

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        facts = self._gdb.stop
        if facts.signal is not None:
            name, meaning = facts.signal
            reported = sanitizers.report(self._gdb.output_tail) if name == "SIGABRT" else None
            return reported or ExceptionDetail(type=name, message=meaning or name)
        if facts.catch == "panic":
            message = panic_message(self._gdb.output_tail)
            return ExceptionDetail(type="panic", message=(message or "Rust panic").removeprefix("panicked at "))
        if facts.catch is not None:
            return await self._exception(thread_id, facts.catch) or ExceptionDetail(
                type="C++ exception", message=f"exception {facts.catch}")
        return None

    async def _exception(self, thread_id: int, catch: str) -> ExceptionDetail | None:
        """Type and message of the exception a throw or catch stop is about (see kit.cxx), memory only: at a throw
        from ``__cxa_throw``'s arguments (the type from its type_info, known without the type's debug info), at a
        catch from gdb's ``$_exception``, which needs it (the type is gdb's ``whatis``)."""
        where = f"--thread {thread_id} --frame 0 "
        printed = await self._printed(where, "$_exception")
        if catch == "throw":
            first, second = (f"${r}" for r in cxx.ARGUMENT_REGISTERS)
            address = first
            type_ = cxx.demangle_type(cxx.printed_string(await self._printed(where, f"*(char **)({second} + 8)") or "")
                                      or "") or None
        else:
            address = "&$_exception"
            type_ = cxx.whatis_type(await self._printed(where, "$_exception", command="whatis") or "")
        if not type_:
            return None
        if type_ in cxx.STRING_MESSAGE_TYPES:
            return ExceptionDetail(type=type_, message=await self._c_string(where, f"(char *)({address}) + 8"))
        if type_ in cxx.C_STRINGS:
            return ExceptionDetail(type=type_, message=await self._c_string(where, f"(char *)({address})"))
        if printed is None:
            return ExceptionDetail(type=type_, message=cxx.NO_FIELDS)
        std_base, message = cxx.fields_message(printed)
        if std_base:  # derived from runtime_error & co.: their string, after the vtable pointer
            message = await self._c_string(where, f"(char *)({address}) + 8")
        return ExceptionDetail(type=type_, message=message)

    async def _printed(self, where: str, expression: str, command: str = "") -> str | None:
        """gdb's print of an expression (or a console command's output on it, ``whatis``); None when it fails."""
        line = (f"-interpreter-exec {where}console {mi_quote(f'{command} {expression}')}" if command else
                f"-data-evaluate-expression {where}{mi_quote(expression)}")
        try:
            result = await self._gdb.cmd(line)
        except AdapterRequestError:
            return None
        return result.console.strip() if command else str(result.payload.get("value", ""))

    async def _c_string(self, where: str, pointer_at: str) -> str:
        """The string a ``char *`` stored at address ``pointer_at`` points to ("" when unreadable)."""
        return cxx.printed_string(await self._printed(where, f"*(char **)({pointer_at})") or "") or ""
