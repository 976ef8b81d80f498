"""JDWP values as short texts, the way Java prints them: ``"héllo"``, ``'c'``, ``int[3] {3, 1, 4}``,
``Point {x=2, y=-5}``, ``5`` (an Integer), ``ArrayList size=2 [Point {x=1, y=2}, …]`` — reading what
is needed over JDWP, never invoking a method (``toString()`` runs the program's code and is refused on
a paused thread anyway).

Inside an object's text (and an array's or a collection's items, which show their first fields) a
value that reads as one thing shows itself: a box its number, a ``java.lang.Class`` the class it
reflects (``class demo.User$Inner``, ``int``), an enum constant its name (``Color.RED``); any other
object is ``…``, one expansion away. A proxy (``jdk.proxy1.$Proxy7``) says what it implements."""

from __future__ import annotations

import json
from typing import NamedTuple

from polydbg.backends.java.classes import Classes, JavaClass, java_name, short_name
from polydbg.backends.java.collections import Layouts
from polydbg.backends.java.primitives import UNBOX, primitive_text
from polydbg.backends.java.terms import TAG_NAMES
from polydbg.backends.kit import timeouts
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Tag, TypeTag, Value

PREVIEW_ITEMS = 5
STRING_CHARS = 2000
CLASSES_KEPT = 100_000  # objects whose class is remembered (then forgotten all at once)


class Described(NamedTuple):
    text: str
    type: str
    length: int | None = None  # an array's length, a collection's size
    children: str = ""  # "array" | "collection" | "object": what listing it shows; "" for values without any


def primitive_type(tag: int) -> str:
    return TAG_NAMES.get(tag, "?")


class Values:
    """Reads what a value's text needs: an object's class, a string's characters, an array's length."""

    def __init__(self, client: JdwpClient, classes: Classes) -> None:
        self.client = client
        self.classes = classes
        self.collections = Layouts(self)
        self._class_of: dict[int, JavaClass] = {}  # object id → its class

    async def class_of(self, object_id: int) -> JavaClass:
        """An object's class, asked once: an object never changes class, and JDWP never gives its id to
        another object (polydbg disposes of none), so previews of many objects' fields cost a request each."""
        known = self._class_of.get(object_id)
        if known is not None:
            return known
        reply = await self.client.request(CommandSet.OBJECT_REFERENCE, 1, self.client.writer().object_id(
            object_id).bytes(), "ObjectReference.ReferenceType", timeouts.INSPECT_S)
        tag, class_id = reply.u1(), reply.reference_type()
        cls = await self.classes.get(class_id)
        cls.tag = tag
        if len(self._class_of) >= CLASSES_KEPT:
            self._class_of.clear()
        self._class_of[object_id] = cls
        return cls

    async def string(self, object_id: int) -> str:
        reply = await self.client.request(CommandSet.STRING_REFERENCE, 1, self.client.writer().object_id(
            object_id).bytes(), "StringReference.Value", timeouts.INSPECT_S)
        return reply.string()

    async def array_length(self, object_id: int) -> int:
        reply = await self.client.request(CommandSet.ARRAY_REFERENCE, 1, self.client.writer().object_id(
            object_id).bytes(), "ArrayReference.Length", timeouts.INSPECT_S)
        return reply.i4()

    async def array_items(self, object_id: int, start: int, count: int) -> list[Value]:
        if count <= 0:
            return []  # GetValues(…, 0) on an empty array is an error (503)
        writer = self.client.writer().object_id(object_id).i4(start).i4(count)
        reply = await self.client.request(CommandSet.ARRAY_REFERENCE, 2, writer.bytes(), "ArrayReference.GetValues",
                                          timeouts.INSPECT_S)
        tag, total = reply.u1(), reply.i4()
        if tag in (Tag.OBJECT, Tag.ARRAY, Tag.STRING) or chr(tag) in "tgcl":
            return [reply.value() for _ in range(total)]
        return [reply.untagged(tag) for _ in range(total)]

    async def field_values(self, object_id: int, field_ids: list[int]) -> list[Value]:
        if not field_ids:
            return []
        writer = self.client.writer().object_id(object_id).i4(len(field_ids))
        for field_id in field_ids:
            writer.field_id(field_id)
        reply = await self.client.request(CommandSet.OBJECT_REFERENCE, 2, writer.bytes(), "ObjectReference.GetValues",
                                          timeouts.INSPECT_S)
        return [reply.value() for _ in range(reply.i4())]

    async def static_values(self, class_id: int, field_ids: list[int]) -> list[Value]:
        if not field_ids:
            return []
        writer = self.client.writer().reference_type(class_id).i4(len(field_ids))
        for field_id in field_ids:
            writer.field_id(field_id)
        reply = await self.client.request(CommandSet.REFERENCE_TYPE, 6, writer.bytes(), "ReferenceType.GetValues",
                                          timeouts.INSPECT_S)
        return [reply.value() for _ in range(reply.i4())]

    async def describe(self, value: Value, depth: int = 1) -> Described:
        """A value's text, type and what it has inside; ``depth`` > 0 previews an array's or a
        collection's items (an object always shows its first fields: ``Point {x=1, y=2}``)."""
        if not value.is_object:
            return Described(primitive_text(value), primitive_type(value.tag))
        object_id = int(value.value or 0)
        if object_id == 0:
            return Described("null", "null")
        if value.tag == Tag.STRING:
            text = await self.string(object_id)
            return Described(json.dumps(text[:STRING_CHARS], ensure_ascii=False), "String")
        cls = await self.class_of(object_id)
        type_name = short_name(cls.signature)
        if cls.signature.startswith("["):
            length = await self.array_length(object_id)
            head = type_name.replace("[]", f"[{length}]", 1)
            if depth <= 0 or length == 0:
                return Described(head + (" {}" if length == 0 else ""), type_name, length, "array")
            items = await self.array_items(object_id, 0, min(length, PREVIEW_ITEMS))
            shown = [(await self.describe(item, 0)).text for item in items]
            more = ", …" if length > PREVIEW_ITEMS else ""
            return Described(f"{head} {{{', '.join(shown)}{more}}}", type_name, length, "array")
        leaf = await self._leaf(object_id, cls, value.tag)
        if leaf is not None:
            return Described(leaf, type_name, children="" if cls.name in UNBOX else "object")
        if value.tag == Tag.THREAD or cls.name == "java.lang.Thread":
            name = await self._field_named(object_id, cls, "name")
            text = (await self.describe(name, 0)).text if name is not None else ""
            return Described(f"Thread {text}".rstrip(), type_name, children="object")
        collection = await self.collections.text(object_id, cls, type_name, depth, PREVIEW_ITEMS)
        if collection is not None:
            return Described(collection[0], type_name, collection[1], "collection")
        instance = [f for f in await self.classes.fields(cls) if not f.is_static]
        fields = instance[:PREVIEW_ITEMS]
        values = await self.field_values(object_id, [f.id for f in fields])
        parts = [f"{field.name}={await self._preview(item)}" for field, item in zip(fields, values, strict=False)]
        more = ", …" if len(instance) > PREVIEW_ITEMS else ""
        head = f"{type_name} implements {await self._implemented(cls)}" if is_proxy(cls) else type_name
        return Described(f"{head} {{{', '.join(parts)}{more}}}", type_name, children="object")

    async def _preview(self, value: Value) -> str:
        """A field's value inside an object's text: a primitive, null, a string, a box's number, a class,
        an enum's constant; ``…`` for any other object (its own text is one expansion away)."""
        if not value.is_object or not value.value or value.tag == Tag.STRING:
            return (await self.describe(value, 0)).text
        object_id = int(value.value)
        cls = await self.class_of(object_id)
        if cls.signature.startswith("["):
            return "…"
        return await self._leaf(object_id, cls, value.tag) or "…"

    async def _leaf(self, object_id: int, cls: JavaClass, tag: int) -> str | None:
        """The text of an object that reads as one value: a box (``3``), a class (``class demo.User$Inner``),
        an enum's constant (``Color.RED``); None for others."""
        if cls.name in UNBOX:
            inner = await self._field_named(object_id, cls, "value")
            return primitive_text(inner) if inner is not None else short_name(cls.signature)
        if cls.name == "java.lang.Class" or tag == Tag.CLASS_OBJECT:
            return await self.class_text(object_id)
        enum = await self._enum_class(cls)
        if enum is not None:
            name = await self._field_named(object_id, cls, "name")
            text = await self.string(int(name.value)) if name is not None and name.value else "?"
            return f"{short_name(enum.signature)}.{text}"
        return None

    async def class_text(self, object_id: int) -> str:
        """A ``java.lang.Class`` as Java prints it, arrays as they are written: ``class demo.User$Inner``,
        ``interface java.util.List``, ``int``, ``class java.lang.String[]``."""
        try:
            reply = await self.client.request(CommandSet.CLASS_OBJECT_REFERENCE, 1, self.client.writer().object_id(
                object_id).bytes(), "ClassObjectReference.ReflectedType", timeouts.INSPECT_S)
            tag, class_id = reply.u1(), reply.reference_type()
        except JdwpRequestError:
            tag, class_id = 0, 0
        if not class_id:  # a primitive type's class (int.class): its name field, once it is set
            name = await self._field_named(object_id, await self.class_of(object_id), "name")
            return await self.string(int(name.value)) if name is not None and name.value else "class"
        reflected = await self.classes.get(class_id)
        reflected.tag = tag
        if not reflected.signature.startswith(("L", "[")):
            return java_name(reflected.signature)  # int.class prints as int
        return f"{'interface' if tag == TypeTag.INTERFACE else 'class'} {java_name(reflected.signature)}"

    async def _enum_class(self, cls: JavaClass) -> JavaClass | None:
        """The enum ``cls`` is (or whose constant's body it is), by its superclasses; None for other classes."""
        current: JavaClass | None = cls
        for _ in range(2):  # an enum extends java.lang.Enum; a constant with a body extends its enum
            parent = await self.classes.superclass(current) if current is not None and current.tag == TypeTag.CLASS \
                else None
            if parent is None:
                return None
            if parent.name == "java.lang.Enum":
                return current
            current = parent
        return None

    async def _implemented(self, cls: JavaClass) -> str:
        return ", ".join(short_name(i.signature) for i in await self.classes.interfaces(cls)) or "nothing"

    async def _field_named(self, object_id: int, cls: JavaClass, name: str) -> Value | None:
        for field in await self.classes.fields(cls):
            if field.name == name and not field.is_static:
                return (await self.field_values(object_id, [field.id]))[0]
        return None


def is_proxy(cls: JavaClass) -> bool:
    """A ``java.lang.reflect.Proxy`` class (``jdk.proxy1.$Proxy7``): what it is is what it implements."""
    return cls.name.rpartition(".")[2].startswith("$Proxy")
