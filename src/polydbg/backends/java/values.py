"""JDWP values as short texts, the way Java prints them: ``"héllo"``, ``'c'``, ``int[3] {3, 1, 4}``,
``Point {x=2, y=-5}``, ``Integer 5``, ``ArrayList size=2 ["alpha", "beta"]`` — reading what is needed
over JDWP, never invoking a method (``toString()`` runs the program's code and is refused on a paused
thread anyway)."""

from __future__ import annotations

import json
from typing import NamedTuple

from polydbg.backends.java.classes import Classes, JavaClass, short_name
from polydbg.backends.java.collections import Layouts
from polydbg.backends.java.primitives import UNBOX, primitive_text
from polydbg.backends.java.terms import TAG_NAMES
from polydbg.backends.kit import timeouts
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import CommandSet, Tag, Value

PREVIEW_ITEMS = 5
STRING_CHARS = 2000


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

    async def class_of(self, object_id: int) -> JavaClass:
        reply = await self.client.request(CommandSet.OBJECT_REFERENCE, 1, self.client.writer().object_id(
            object_id).bytes(), "ObjectReference.ReferenceType", timeouts.INSPECT_S)
        tag, class_id = reply.u1(), reply.reference_type()
        cls = await self.classes.get(class_id)
        cls.tag = tag
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
        """A value's text, type and what it has inside; ``depth`` > 0 previews contents."""
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
        if cls.name in UNBOX:
            inner = await self._field_named(object_id, cls, "value")
            return Described(primitive_text(inner) if inner is not None else type_name, type_name)
        if cls.name == "java.lang.Class" or value.tag == Tag.CLASS_OBJECT:
            return Described("class", "Class")
        if value.tag == Tag.THREAD or cls.name == "java.lang.Thread":
            name = await self._field_named(object_id, cls, "name")
            text = (await self.describe(name, 0)).text if name is not None else ""
            return Described(f"Thread {text}".rstrip(), type_name, children="object")
        collection = await self.collections.text(object_id, cls, type_name, depth, PREVIEW_ITEMS)
        if collection is not None:
            return Described(collection[0], type_name, collection[1], "collection")
        if depth <= 0:
            return Described(type_name, type_name, children="object")
        instance = [f for f in await self.classes.fields(cls) if not f.is_static]
        fields = instance[:PREVIEW_ITEMS]
        values = await self.field_values(object_id, [f.id for f in fields])
        parts = []
        for field, item in zip(fields, values, strict=False):
            text = (await self.describe(item, 0)).text if not item.is_object or item.tag == Tag.STRING else (
                "null" if not item.value else "…")
            parts.append(f"{field.name}={text}")
        more = ", …" if len(instance) > PREVIEW_ITEMS else ""
        return Described(f"{type_name} {{{', '.join(parts)}{more}}}", type_name, children="object")

    async def _field_named(self, object_id: int, cls: JavaClass, name: str) -> Value | None:
        for field in await self.classes.fields(cls):
            if field.name == name and not field.is_static:
                return (await self.field_values(object_id, [field.id]))[0]
        return None
