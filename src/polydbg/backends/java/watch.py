"""Field watchpoints on Java (``debug_watch``): the JVM watches fields, not variables.

What an expression watches:

- ``this.count``, ``obj.field``, ``a.b.field`` (a path from a local, ``this`` or a field, read in
  the stopped frame): that field of *that object only* (``InstanceOnly``);
- ``Class.field`` / ``pkg.Class.field`` / ``Outer.Inner.field``: a static field, or an instance field
  in *every* object of the class;
- a bare ``field``: a field of ``this`` (that object only), else a static field of the frame's class.

Access ``write`` is a ``FieldModification`` request, ``read`` a ``FieldAccess`` one, ``readWrite``
both, each restricted to the field (``FieldOnly``: its declaring class and id). A stop is a "data
breakpoint" stop naming the field and, for a write, the old and the new value (the event carries the
value about to be stored; the field still holds the old one). A static field of a class not loaded
yet (after a restart) is bound when the class loads. The resolved field is the watchpoint's
``data_id`` (``jdwp-field:class:field:object``), valid for one run of the program.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from polydbg.backends.base import Access, BreakpointResult, DataBreakpoint, StopEvent
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.classes import Field, JavaClass, short_name
from polydbg.errors import echo
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Event, EventKind, Location, Modifier, Suspend, Tag, TypeTag, Value

DATA_ID = "jdwp-field"
LISTED_FIELDS = 12
ACCEPTED = "watch a field: this.field, obj.field, Class.staticField (Class.field: in every object) or a bare field name"
FrameAt = tuple[int, int, Location]  # (JDWP thread, frame id, where) of the stopped frame


class Unwatchable(Exception):
    """Why an expression cannot be watched (the breakpoint's message)."""


@dataclass(frozen=True)
class Target:
    declaring: JavaClass
    field: Field
    object_id: int = 0  # 0: every object (or a static field)

    @property
    def label(self) -> str:
        return f"{short_name(self.declaring.signature)}.{self.field.name}"

    def scope(self, expression: str) -> str:
        """Which accesses it stops at, for the watchpoint's message."""
        if self.field.is_static:
            return f"static field {self.label}"
        kind = short_name(self.declaring.signature)
        if self.object_id:
            holder = expression.strip().rpartition(".")[0].strip() or "this"
            which = (f"this object only (object id {self.object_id})" if holder == "this" else
                     f"that object only (the one {holder} is now, object id {self.object_id})")
            return f"{self.label} of {which}; other {kind} objects are not watched ({self.label} watches them all)"
        return f"{self.label} in every {kind} object"


@dataclass
class FieldWatch:
    spec: DataBreakpoint
    target: Target | None = None
    pending: tuple[str, str] | None = None  # (class, field): a static field whose class is not loaded yet
    requests: list[int] = field(default_factory=list)
    result: BreakpointResult = field(default_factory=lambda: BreakpointResult(False))


def kinds(access: Access) -> tuple[int, ...]:
    return {"write": (EventKind.FIELD_MODIFICATION,), "read": (EventKind.FIELD_ACCESS,),
            "readWrite": (EventKind.FIELD_ACCESS, EventKind.FIELD_MODIFICATION)}[access]


class FieldWatches:
    """The watchpoints of one JVM connection."""

    def __init__(self, vm: jvm.Vm, changed: Callable[[int, BreakpointResult], None]) -> None:
        self._vm = vm
        self._changed = changed
        self._watches: dict[int, FieldWatch] = {}
        self._by_request: dict[int, int] = {}
        self._prepares: list[int] = []

    # -- setting ------------------------------------------------------------------------------------

    async def replace(self, specs: list[DataBreakpoint], at: FrameAt | None) -> list[BreakpointResult]:
        for watch in self._watches.values():
            for request, kind in zip(watch.requests, kinds(watch.spec.access), strict=False):
                await self._vm.clear_request(kind, request)
        await jvm.clear_prepares(self._vm, self._prepares)
        self._watches, self._by_request, self._prepares = {}, {}, []
        pending: set[str] = set()
        for spec in specs:
            watch = self._watches[spec.id] = FieldWatch(spec)
            try:
                target = await self._from_data_id(spec.data_id) if spec.data_id else None
                if target is None:
                    target = await self._resolve(spec.expression, at)
            except Unwatchable as exc:
                watch.result = BreakpointResult(False, message=str(exc))
                continue
            except _NotLoaded as exc:
                watch.pending = (exc.qualifier, exc.name)
                pending.add(exc.qualifier)
                watch.result = BreakpointResult(False, message=f"not bound yet: class {exc.qualifier} is not loaded; "
                                                               "it binds when the class loads")
                continue
            await self._set(watch, target)
        for qualifier in sorted(pending):
            self._prepares.extend(await jvm.prepare_requests(self._vm, qualifier))
        return [watch.result for watch in self._watches.values()]

    async def _set(self, watch: FieldWatch, target: Target) -> None:
        client = self._vm.client
        writer = client.writer().u1(Modifier.FIELD_ONLY).reference_type(target.declaring.id).field_id(target.field.id)
        count = 1
        if target.object_id:
            writer.u1(Modifier.INSTANCE_ONLY).object_id(target.object_id)
            count += 1
        try:
            for kind in kinds(watch.spec.access):
                request = await self._vm.event_request(kind, Suspend.ALL, writer.bytes(), count)
                watch.requests.append(request)
                self._by_request[request] = watch.spec.id
        except JdwpRequestError as exc:
            watch.result = BreakpointResult(False, message=f"the JVM refused to watch {target.label}: {exc.message}")
            return
        watch.target, watch.pending = target, None
        data_id = f"{DATA_ID}:{target.declaring.id}:{target.field.id}:{target.object_id}"
        watch.result = BreakpointResult(True, message=f"watching {target.scope(watch.spec.expression)}",
                                        data_id=data_id)

    async def class_loaded(self, cls: JavaClass) -> None:
        """A class was prepared: bind the static-field watchpoints that waited for it."""
        for watch in self._watches.values():
            if watch.pending is None or jvm.is_hidden(cls) or not jvm.class_matches(cls, watch.pending[0]):
                continue
            try:
                target = await self._field_target(cls, watch.pending[1], watch.spec.expression)
            except Unwatchable as exc:
                watch.result = BreakpointResult(False, message=str(exc))
                watch.pending = None
            else:
                await self._set(watch, target)
            self._changed(watch.spec.id, watch.result)

    # -- resolving ----------------------------------------------------------------------------------

    async def _from_data_id(self, data_id: str) -> Target | None:
        kind, _, rest = data_id.partition(":")
        parts = rest.split(":")
        if kind != DATA_ID or len(parts) != 3 or not all(p.isdigit() for p in parts):
            return None
        class_id, field_id, object_id = (int(p) for p in parts)
        classes = self._vm.classes
        try:
            declaring = await classes.get(class_id)
            found = next((f for f in await classes.fields(declaring) if f.id == field_id), None)
        except JdwpRequestError:
            return None  # unloaded since: resolve the expression again
        return Target(declaring, found, object_id) if found is not None else None

    async def _resolve(self, expression: str, at: FrameAt | None) -> Target:
        parts = [part.strip() for part in expression.strip().split(".")]
        if not all(jvm.IDENTIFIER.match(part) for part in parts):
            raise Unwatchable(f"{echo(expression)} is not a field path; {ACCEPTED}")
        *path, name = parts
        if not path:
            if at is None:
                raise Unwatchable(f"{echo(expression)} is read in the stopped frame: pause the program (or stop at a "
                                  f"breakpoint) first, or name its class ({'Class.' + name})")
            return await self._bare(name, at)
        if at is not None:
            value = await self._path_value(path, at)
            if value is not None:
                return await self._member(value, ".".join(path), name)
        qualifier = ".".join(path)
        candidates = [cls for cls in await jvm.loaded_classes(self._vm)
                      if not jvm.is_hidden(cls) and jvm.class_matches(cls, qualifier)]
        if not candidates:
            if at is None and path[0] == "this":
                raise Unwatchable(f"{echo(expression)} is read in the stopped frame: pause the program (or stop at a "
                                  "breakpoint) first")
            raise _NotLoaded(qualifier, name)
        problem: Unwatchable | None = None
        for cls in candidates:
            try:
                return await self._field_target(cls, name, expression)
            except Unwatchable as exc:
                problem = problem or exc
        assert problem is not None
        raise problem

    async def _bare(self, name: str, at: FrameAt) -> Target:
        where = at[2]
        classes = self._vm.classes
        cls, method = await classes.method(where.class_id, where.method_id)
        if method is not None:
            for variable in await classes.variables(cls, method):
                if variable.name == name and variable.visible_at(where.code_index):
                    raise Unwatchable(f"{name!r} is a local variable: the JVM watches fields only; {ACCEPTED}")
        this = await self._this(at)
        if this is not None and this.value:
            owner = await self._vm.values.class_of(int(this.value))
            found = await _find_field(self._vm, owner, name)
            if found is not None:
                declaring, field_ = found
                return Target(declaring, field_, 0 if field_.is_static else int(this.value))
        found = await _find_field(self._vm, cls, name)
        if found is not None and found[1].is_static:
            return Target(*found)
        raise Unwatchable(f"no field {name!r} in {short_name(cls.signature)}{await _fields_hint(self._vm, cls)}; "
                          f"{ACCEPTED}")

    async def _path_value(self, path: list[str], at: FrameAt) -> Value | None:
        """The value ``path`` names in the frame (a local, ``this`` or a field, then fields); None when its
        first name is no variable there (then it is read as a class name)."""
        where = at[2]
        first, *rest = path
        value: Value | None = None
        if first == "this":
            value = await self._this(at)
            if value is None:
                raise Unwatchable("there is no 'this' here: the frame is in a static method")
        else:
            value = await self._local(first, at)
            if value is None:
                this = await self._this(at)
                if this is not None and this.value:
                    value = await self._field_value(this, first)
            if value is None:
                cls = await self._vm.classes.get(where.class_id)
                found = await _find_field(self._vm, cls, first)
                if found is not None and found[1].is_static:
                    value = (await self._vm.values.static_values(found[0].id, [found[1].id]))[0]
        if value is None:
            return None
        walked = first
        for name in rest:
            _check_object(value, walked)
            found_value = await self._field_value(value, name)
            if found_value is None:
                owner = await self._vm.values.class_of(int(value.value))
                raise Unwatchable(f"{walked} ({short_name(owner.signature)}) has no field {name!r}"
                                  f"{await _fields_hint(self._vm, owner)}")
            value, walked = found_value, f"{walked}.{name}"
        return value

    async def _member(self, value: Value, path: str, name: str) -> Target:
        _check_object(value, path)
        owner = await self._vm.values.class_of(int(value.value))
        found = await _find_field(self._vm, owner, name)
        if found is None:
            raise Unwatchable(f"{path} ({short_name(owner.signature)}) has no field {name!r}"
                              f"{await _fields_hint(self._vm, owner)}")
        declaring, field_ = found
        return Target(declaring, field_, 0 if field_.is_static else int(value.value))

    async def _field_target(self, cls: JavaClass, name: str, expression: str) -> Target:
        found = await _find_field(self._vm, cls, name)
        if found is None:
            raise Unwatchable(f"{short_name(cls.signature)} has no field {name!r}{await _fields_hint(self._vm, cls)}")
        return Target(*found)

    async def _this(self, at: FrameAt) -> Value | None:
        thread, frame_id, where = at
        _, method = await self._vm.classes.method(where.class_id, where.method_id)
        if method is None or method.is_static:
            return None
        reply = await self._vm.request(CommandSet.STACK_FRAME, 3, self._vm.client.writer().object_id(thread).frame_id(
            frame_id).bytes(), "StackFrame.ThisObject")
        return reply.value()

    async def _local(self, name: str, at: FrameAt) -> Value | None:
        thread, frame_id, where = at
        classes = self._vm.classes
        cls, method = await classes.method(where.class_id, where.method_id)
        if method is None:
            return None
        for variable in await classes.variables(cls, method):
            if variable.name == name and variable.visible_at(where.code_index):
                tag = Tag.ARRAY if variable.signature.startswith("[") else ord(variable.signature[0])
                writer = self._vm.client.writer().object_id(thread).frame_id(frame_id).i4(1).i4(variable.slot).u1(tag)
                reply = await self._vm.request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues")
                reply.i4()
                return reply.value()
        return None

    async def _field_value(self, value: Value, name: str) -> Value | None:
        if not value.is_object or not value.value:
            return None
        owner = await self._vm.values.class_of(int(value.value))
        found = await _find_field(self._vm, owner, name)
        if found is None:
            return None
        declaring, field_ = found
        if field_.is_static:
            return (await self._vm.values.static_values(declaring.id, [field_.id]))[0]
        return (await self._vm.values.field_values(int(value.value), [field_.id]))[0]

    # -- stopping -----------------------------------------------------------------------------------

    async def stop_for(self, event: Event) -> StopEvent | None:
        """The stop a field access or modification event makes (None: not one of ours)."""
        bp_id = self._by_request.get(event.request_id)
        watch = self._watches.get(bp_id) if bp_id is not None else None
        if watch is None or watch.target is None:
            return None
        target = watch.target
        label = watch.spec.expression if "." in watch.spec.expression else target.label
        values = self._vm.values
        object_id = int(event.object.value or 0) if event.object is not None and event.object.is_object else 0
        try:
            if target.field.is_static or not object_id:
                current = (await values.static_values(target.declaring.id, [target.field.id]))[0]
            else:
                current = (await values.field_values(object_id, [target.field.id]))[0]
            now = (await values.describe(current)).text
            if event.kind == EventKind.FIELD_MODIFICATION and event.value is not None:
                text = f"{label}: {now} → {(await values.describe(event.value)).text}"
            else:
                text = f"{label} read: {now}"
        except JdwpRequestError:
            text = f"{label} {'written' if event.kind == EventKind.FIELD_MODIFICATION else 'read'}"
        return StopEvent("data breakpoint", 0, f"watchpoint {watch.spec.id}", text, hit_breakpoint_ids=(watch.spec.id,))


class _NotLoaded(Exception):
    def __init__(self, qualifier: str, name: str) -> None:
        super().__init__(qualifier)
        self.qualifier = qualifier
        self.name = name


def _check_object(value: Value, path: str) -> None:
    if not value.is_object:
        raise Unwatchable(f"{path} is a primitive value: it has no fields")
    if not value.value:
        raise Unwatchable(f"{path} is null: there is no object to watch a field of")


async def _find_field(vm: jvm.Vm, cls: JavaClass, name: str) -> tuple[JavaClass, Field] | None:
    """The field ``name`` of ``cls`` (its own or inherited) and the class that declares it."""
    classes = vm.classes
    found = next((f for f in await classes.fields(cls) if f.name == name), None)
    if found is None:
        return None
    declaring: JavaClass | None = cls
    owner = cls
    while declaring is not None and any(f.id == found.id for f in await classes.fields(declaring)):
        owner = declaring
        declaring = await classes.superclass(declaring) if declaring.tag == TypeTag.CLASS else None
    return owner, found


async def _fields_hint(vm: jvm.Vm, cls: JavaClass) -> str:
    names = [f.name for f in await vm.classes.fields(cls)]
    if not names:
        return " (it has no fields)"
    return f" (its fields: {', '.join(names[:LISTED_FIELDS])}{', …' if len(names) > LISTED_FIELDS else ''})"
