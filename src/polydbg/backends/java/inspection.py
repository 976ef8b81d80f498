"""Reading and changing the stopped program's values: scopes, variables, evaluate, set_variable.

- Scopes: "Locals" (``this``, then the method's variables visible at the frame's code index, from its
  variable table: a class compiled without ``-g`` has none, and says so) and "Statics" (the static
  fields code of the frame's class names without qualification: its own, those it inherits from the
  program's classes, its enclosing classes'), shown only when there are any.
- Children: an object's fields (its class's, then its superclasses'), an array's elements paged by
  ``ArrayReference.GetValues``, the JDK's collections by their elements (collections.py; by their fields
  when the layout is not known). A ref lasts for one stop.
- Evaluate and set_variable: expressions are evaluated by polydbg (expr.py parses, evaluator.py runs;
  scope.py is the frame they see). A new value is converted as Java's assignment converts it, written
  (a local, an instance or a static field — in the class that declares it — or an array element), and
  read back from the VM. After debug_pause no method can be called, nor in another thread's frames than
  the event's (JDWP invokes only on a thread suspended by an event): reading works, a call says so. A
  value's ref keeps the frame it was read in: a new value for one of its members is evaluated there.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from polydbg.backends.base import FrameRef, Scope, Variable
from polydbg.backends.java import kotlin
from polydbg.backends.java.classes import Field, JavaClass, short_name
from polydbg.backends.java.evaluator import Text
from polydbg.backends.java.scope import StoppedFrame, slot_tag
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.values import STRING_CHARS
from polydbg.backends.java.vm import LIBRARY_PACKAGES, Vm
from polydbg.backends.kit.handles import HandleTable
from polydbg.errors import AdapterRequestError
from polydbg.jdwp.codec import CommandSet, Tag, TypeTag, Value

CHILD_CAP = 100
PAUSED = ("the JVM was suspended by debug_pause, and JDWP runs methods only on a thread stopped by an event; set a "
          "breakpoint and continue to it (reading values works here)")


def other_thread(thread: int, stopped: int) -> str:
    """Why a method cannot run in a thread the event did not stop, and what works instead."""
    return (f"thread {thread} did not stop at the event (the JVM suspended it with the others), and JDWP runs "
            f"methods only on the thread an event stopped: thread {stopped}. Reading works in thread {thread}'s frames "
            "(locals, fields, array elements, strings, arithmetic, Thread.currentThread()); call methods in thread "
            f"{stopped}'s frames (debug_evaluate(thread_id={stopped}, …)), or break where thread {thread} runs")


@dataclass
class Ref:
    kind: str  # "locals" | "statics" | "object" | "array" | "collection" | "frame" (an evaluation's)
    thread: int = 0  # JDWP thread id: of the locals, or of the frame a value was read in (0: the stop's)
    frame: int = 0  # shown frame index of that thread
    object_id: int = 0
    name: str | None = None  # the expression naming it


def array_index(name: str) -> int | None:
    """The index an array element's name gives (``[3]``, ``3``); None when it is no index."""
    match = re.fullmatch(r"\[?\s*(\d+)\s*\]?", name.strip())
    return int(match.group(1)) if match else None


class Inspection:
    def __init__(self, vm: Vm, threads: Threads) -> None:
        self._vm = vm
        self._threads = threads
        self._refs: HandleTable[Ref] = HandleTable()

    def clear(self) -> None:
        """The program moved: every ref of the last stop is stale."""
        self._refs.clear()

    def _refusal(self, thread: int) -> str | None:
        """Why no method may be called in ``thread``'s frames (None: they may)."""
        stop = self._threads.stop
        if stop.paused:
            return PAUSED
        if stop.thread is not None and thread != stop.thread:
            return other_thread(self._threads.id_of(thread), self._threads.id_of(stop.thread))
        return None

    # -- scopes and variables ---------------------------------------------------------------------------

    async def scopes(self, frame: FrameRef) -> list[Scope]:
        thread = self._threads.jdwp(frame.thread_id)
        scopes = [Scope("Locals", self._refs.add(Ref("locals", thread, frame.index)), hint="locals")]
        _, _, where = await self._threads.frame_at(frame)
        if any(fields for _, fields in await self._static_fields(await self._vm.classes.get(where.class_id))):
            scopes.append(Scope("Statics", self._refs.add(Ref("statics", thread, frame.index)), expensive=True))
        return scopes

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        values = self._vm.values
        if handle.kind == "locals":
            return await self._locals(handle)
        if handle.kind == "statics":
            return await self._statics(handle)
        if handle.kind == "array":
            length = await values.array_length(handle.object_id)
            first = start or 0
            size = count if count is not None else min(CHILD_CAP, length - first)
            items = await values.array_items(handle.object_id, first, max(0, min(size, length - first)))
            return [await self._variable(f"[{first + i}]", item, f"{handle.name}[{first + i}]" if handle.name else None,
                                         handle) for i, item in enumerate(items)]
        if handle.kind == "collection":  # its elements; by its fields when its layout is not known
            page = await values.collections.children(handle.object_id, start or 0,
                                                     CHILD_CAP if count is None else count)
            if page is not None:
                elements = [await self._variable(name, value, None, handle) for name, value in page.named]
                return elements + ([Variable("(limit)", page.note, "note")] if page.note else [])
        listing = await self._fields(handle.object_id, handle.name, handle)
        return listing[start or 0:(start or 0) + count] if count is not None else listing

    async def child_slice(self, parent: Variable, start: int, count: int) -> list[Variable] | None:
        handle = self._refs.get(parent.ref)
        if handle is None or handle.kind not in ("array", "collection"):
            return None
        return await self.variables(parent.ref, start, count)

    async def _locals(self, handle: Ref) -> list[Variable]:
        thread, frame_id, where = await self._threads.frame_at(FrameRef(self._threads.id_of(handle.thread),
                                                                        handle.frame))
        classes, client = self._vm.classes, self._vm.client
        cls, method = await classes.method(where.class_id, where.method_id)
        if method is None:
            return []
        out: list[Variable] = []
        if not method.is_static:
            reply = await self._vm.request(CommandSet.STACK_FRAME, 3, client.writer().object_id(thread).frame_id(
                frame_id).bytes(), "StackFrame.ThisObject")
            this = reply.value()
            if this.value:
                out.append(await self._variable("this", this, "this", handle))
        variables = await classes.variables(cls, method)
        if method.no_variables:
            out.append(Variable("(locals)", "no variable table: recompile with javac -g", "note"))
            return out
        visible = [v for v in variables if v.visible_at(where.code_index) and v.name != "this"]  # shown above
        if not visible:
            return out
        writer = client.writer().object_id(thread).frame_id(frame_id).i4(len(visible))
        for variable in visible:
            writer.i4(variable.slot).u1(ord(variable.signature[0]) if variable.signature[0] != "[" else Tag.ARRAY)
        reply = await self._vm.request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues")
        values = [reply.value() for _ in range(reply.i4())]
        for variable, value in zip(visible, values, strict=False):
            shown = await self._variable(variable.name, value, variable.name, handle)
            out.append(shown._replace(type=short_name(variable.signature)) if value.is_object and not value.value
                       else shown)  # null: its declared type
        return out

    async def _statics(self, handle: Ref) -> list[Variable]:
        _, _, where = await self._threads.frame_at(FrameRef(self._threads.id_of(handle.thread), handle.frame))
        out: list[Variable] = []
        for cls, fields in await self._static_fields(await self._vm.classes.get(where.class_id)):
            values = await self._vm.values.static_values(cls.id, [f.id for f in fields])
            out.extend([await self._variable(f.name, v, f.name, handle) for f, v in zip(fields, values, strict=False)])
        return out

    async def _static_fields(self, first: JavaClass) -> list[tuple[JavaClass, list[Field]]]:
        """The static fields code of ``cls`` names without qualification: its own, those it inherits
        from the program's classes (not the JDK's), then its enclosing classes' (a name once)."""
        classes = self._vm.classes
        found: list[tuple[JavaClass, list[Field]]] = []
        seen: set[str] = set()
        outer = first.signature[:-1] if first.signature.startswith("L") else ""
        cls: JavaClass | None = first
        while cls is not None:
            runtime_ids: set[int] = set()
            ancestor = await classes.superclass(cls) if cls.tag == TypeTag.CLASS else None
            while ancestor is not None and not ancestor.name.startswith(LIBRARY_PACKAGES):
                ancestor = await classes.superclass(ancestor)
            if ancestor is not None:
                runtime_ids = {f.id for f in await classes.fields(ancestor)}
            fields = [f for f in await classes.fields(cls)
                      if f.is_static and f.id not in runtime_ids and f.name not in seen]
            seen.update(f.name for f in fields)
            found.append((cls, fields))
            cls = None
            while "$" in outer and cls is None:  # the enclosing class, when it is loaded
                outer = outer.rpartition("$")[0]
                cls = await classes.named(outer + ";")
        return found

    async def _fields(self, object_id: int, parent: str | None, origin: Ref) -> list[Variable]:
        cls = await self._vm.values.class_of(object_id)
        fields = [f for f in await self._vm.classes.fields(cls) if not f.is_static]
        values = await self._vm.values.field_values(object_id, [f.id for f in fields])
        return [await self._variable(f.name, v, f"{parent}.{f.name}" if parent else None, origin)
                for f, v in zip(fields, values, strict=False)]

    async def _variable(self, name: str, value: Value, evaluate_name: str | None, origin: Ref | None = None
                        ) -> Variable:
        """A value as a variable; its ref keeps ``origin``'s frame, where a new value for its members is evaluated."""
        found = await self._vm.values.describe(value)
        if found.children == "object" and await self._is_throwable(int(value.value)):
            found = found._replace(text=await self._thrown_text(value, found.text, origin))
        ref = 0
        if found.children:
            thread, frame = (origin.thread, origin.frame) if origin is not None else (0, 0)
            ref = self._refs.add(Ref(found.children, thread, frame, int(value.value), evaluate_name))
        return Variable(name, found.text, found.type, ref, evaluate_name, found.length)

    async def _is_throwable(self, object_id: int) -> bool:
        current: JavaClass | None = await self._vm.values.class_of(object_id)
        while current is not None and current.name != "java.lang.Throwable":
            current = await self._vm.classes.superclass(current)
        return current is not None

    async def _thrown_text(self, value: Value, text: str, origin: Ref | None) -> str:
        """An exception's text led by its message as ``getMessage()`` returns it: ``Mismatch: expected:<3> but
        was:<4> {expected="3", …}``."""
        thread = origin.thread if origin is not None and origin.thread else self._threads.stop.thread
        if thread is None:
            return text
        scope = self._threads.scope(thread, origin.frame if origin is not None else 0, self._refusal(thread))
        cls = await self._vm.values.class_of(int(value.value))
        try:
            message = await self._vm.evaluator.message(value, cls, scope)
        except AdapterRequestError:
            return text
        head, _, fields = text.partition(" {")
        return f"{head}: {json.dumps(message[:STRING_CHARS], ensure_ascii=False) if message is not None else 'null'}" \
            + (f" {{{fields}" if fields else "")

    @staticmethod
    def is_noise(variable: Variable) -> bool:
        """Kotlin's locals for inlined code (``$i$f$forEach``, ``element$iv``; kotlin.py)."""
        return kotlin.is_noise(variable.name)

    # -- evaluate and set_variable --------------------------------------------------------------------

    async def evaluate(self, expression: str, frame: FrameRef | None) -> Variable:
        """The Java subset of ``expr.SUBSET``, in ``frame`` (the stopped thread's top frame by default)."""
        threads = self._threads
        where = frame or FrameRef(threads.id_of(threads.jdwp(None)), 0)
        thread = threads.jdwp(where.thread_id)
        scope = threads.scope(thread, where.index, self._refusal(thread))
        result = await self._vm.evaluator.evaluate(expression, scope)
        name = expression.strip()
        if isinstance(result, Text):
            return Variable(name, json.dumps(result.text[:STRING_CHARS], ensure_ascii=False), "String")
        return await self._variable(name, result, name, Ref("frame", thread, where.index))

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        """A local, a field (instance or static) or an array element, to the value of a Java expression
        converted as assignment converts it; read back from the VM."""
        handle = self._refs.get(ref)
        if handle is None:
            raise AdapterRequestError("setVariable", f"ref {ref} is not valid at this stop")
        thread = handle.thread or self._threads.jdwp(None)  # the frame the value was read in (else the stop's)
        scope = self._threads.scope(thread, handle.frame if handle.thread else 0, self._refusal(thread))
        new = await self._vm.evaluator.evaluate(value, scope)
        if handle.kind == "locals":
            return await self._set_local(handle, name, new, scope)
        if handle.kind == "array":
            return await self._set_element(handle, name, new, scope)
        if handle.kind == "object":
            return await self._set_field(handle, name, new, scope)
        if handle.kind == "statics":
            return await self._set_static(handle, name, new, scope)
        raise AdapterRequestError("setVariable", f"{name} cannot be changed here; change a local, a field or an "
                                                 "array element")

    async def _set_local(self, handle: Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        frame = FrameRef(self._threads.id_of(handle.thread), handle.frame)
        _, _, where = await self._threads.frame_at(frame)
        classes = self._vm.classes
        cls, method = await classes.method(where.class_id, where.method_id)
        variables = await classes.variables(cls, method) if method is not None else []
        found = next((v for v in variables if v.name == name and v.visible_at(where.code_index)), None)
        if found is None:
            hint = "; `this` cannot be replaced" if name == "this" else ""
            raise AdapterRequestError("setVariable", f"{name!r} is not a local variable of this frame{hint}")
        converted = await self._vm.evaluator.assign(new, found.signature, scope)
        _, frame_id, _ = await self._threads.frame_at(frame)  # again: an invoke above made the frame ids stale
        writer = self._vm.client.writer().object_id(handle.thread).frame_id(frame_id).i4(1).i4(found.slot)
        writer.u1(slot_tag(found.signature)).untagged(converted)
        await self._vm.request(CommandSet.STACK_FRAME, 2, writer.bytes(), "StackFrame.SetValues")
        now = await self._threads.scope(handle.thread, handle.frame, None).local(name)
        return await self._variable(name, now if now is not None else converted, name, handle)

    async def _set_field(self, handle: Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        cls = await self._vm.values.class_of(handle.object_id)
        field = next((f for f in await self._vm.classes.fields(cls) if f.name == name), None)
        if field is None:
            raise AdapterRequestError("setVariable", f"{cls.name} has no field {name!r}")
        converted = await self._vm.evaluator.assign(new, field.signature, scope)
        if field.is_static:
            now = await self._write_static(cls, field, converted)
        else:
            writer = self._vm.client.writer().object_id(handle.object_id).i4(1).field_id(field.id).untagged(converted)
            await self._vm.request(CommandSet.OBJECT_REFERENCE, 3, writer.bytes(), "ObjectReference.SetValues")
            now = (await self._vm.values.field_values(handle.object_id, [field.id]))[0]
        return await self._variable(name, now, f"{handle.name}.{name}" if handle.name else None, handle)

    async def _write_static(self, cls: JavaClass, field: Field, value: Value) -> Value:
        """Set a static field in the class that declares it; the value the VM now holds."""
        owner = await self._vm.evaluator.declaring(cls, field)
        writer = self._vm.client.writer().reference_type(owner).i4(1).field_id(field.id).untagged(value)
        await self._vm.request(CommandSet.CLASS_TYPE, 2, writer.bytes(), "ClassType.SetValues")
        return (await self._vm.values.static_values(owner, [field.id]))[0]

    async def _set_static(self, handle: Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        _, _, where = await self._threads.frame_at(FrameRef(self._threads.id_of(handle.thread), handle.frame))
        for cls, fields in await self._static_fields(await self._vm.classes.get(where.class_id)):
            field = next((f for f in fields if f.name == name), None)
            if field is None:
                continue
            converted = await self._vm.evaluator.assign(new, field.signature, scope)
            return await self._variable(name, await self._write_static(cls, field, converted), name, handle)
        raise AdapterRequestError("setVariable", f"{name!r} is not a static field this frame's class sees")

    async def _set_element(self, handle: Ref, name: str, new: Value | Text, scope: StoppedFrame) -> Variable:
        index = array_index(name)
        if index is None:
            raise AdapterRequestError("setVariable", f"{name!r} is not an array index; pass [3] or 3")
        values = self._vm.values
        length = await values.array_length(handle.object_id)
        if index >= length:
            raise AdapterRequestError("setVariable", f"index {index} is out of bounds (length {length})")
        cls = await values.class_of(handle.object_id)
        converted = await self._vm.evaluator.assign(new, cls.signature[1:], scope)
        writer = self._vm.client.writer().object_id(handle.object_id).i4(index).i4(1).untagged(converted)
        await self._vm.request(CommandSet.ARRAY_REFERENCE, 3, writer.bytes(), "ArrayReference.SetValues")
        now = (await values.array_items(handle.object_id, index, 1))[0]
        return await self._variable(f"[{index}]", now, f"{handle.name}[{index}]" if handle.name else None, handle)
