"""JDWP's binary encoding: packets, id sizes, tagged values, locations, and the composite event.

Written by hand: no maintained Python JDWP library exists on PyPI (the few there are unmaintained
single-purpose scripts), and the encoding is small — big-endian fixed-width integers, length-prefixed
UTF-8 strings, and object/method/field/frame ids whose widths the VM announces (``IDSizes``).

A packet is ``length:u4 id:u4 flags:u1`` then, for a command, ``command set:u1 command:u1`` and data;
for a reply (flags 0x80), ``error:u2`` and data.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any, NamedTuple

HANDSHAKE = b"JDWP-Handshake"
HEADER = struct.Struct(">IIB")
REPLY_FLAG = 0x80


class CommandSet:
    VM = 1
    REFERENCE_TYPE = 2
    CLASS_TYPE = 3
    ARRAY_TYPE = 4
    METHOD = 6
    OBJECT_REFERENCE = 9
    STRING_REFERENCE = 10
    THREAD_REFERENCE = 11
    THREAD_GROUP_REFERENCE = 12
    ARRAY_REFERENCE = 13
    EVENT_REQUEST = 15
    STACK_FRAME = 16
    CLASS_OBJECT_REFERENCE = 17
    EVENT = 64


class EventKind:
    SINGLE_STEP = 1
    BREAKPOINT = 2
    EXCEPTION = 4
    THREAD_START = 6
    THREAD_DEATH = 7
    CLASS_PREPARE = 8
    CLASS_UNLOAD = 9
    FIELD_ACCESS = 20
    FIELD_MODIFICATION = 21
    METHOD_ENTRY = 40
    METHOD_EXIT = 41
    METHOD_EXIT_WITH_RETURN_VALUE = 42
    VM_START = 90
    VM_DEATH = 99
    VM_DISCONNECTED = 100


class Suspend:
    NONE = 0
    EVENT_THREAD = 1
    ALL = 2


class Modifier:
    COUNT = 1
    THREAD_ONLY = 3
    CLASS_ONLY = 4
    CLASS_MATCH = 5
    CLASS_EXCLUDE = 6
    LOCATION_ONLY = 7
    EXCEPTION_ONLY = 8
    FIELD_ONLY = 9
    STEP = 10
    INSTANCE_ONLY = 11
    SOURCE_NAME_MATCH = 12


class TypeTag:
    CLASS = 1
    INTERFACE = 2
    ARRAY = 3


class Tag:
    ARRAY = ord("[")
    BYTE = ord("B")
    CHAR = ord("C")
    OBJECT = ord("L")
    FLOAT = ord("F")
    DOUBLE = ord("D")
    INT = ord("I")
    LONG = ord("J")
    SHORT = ord("S")
    VOID = ord("V")
    BOOLEAN = ord("Z")
    STRING = ord("s")
    THREAD = ord("t")
    THREAD_GROUP = ord("g")
    CLASS_LOADER = ord("l")
    CLASS_OBJECT = ord("c")


OBJECT_TAGS = frozenset({Tag.ARRAY, Tag.OBJECT, Tag.STRING, Tag.THREAD, Tag.THREAD_GROUP, Tag.CLASS_LOADER,
                         Tag.CLASS_OBJECT})
_PRIMITIVES: dict[int, struct.Struct] = {
    Tag.BYTE: struct.Struct(">b"), Tag.CHAR: struct.Struct(">H"), Tag.FLOAT: struct.Struct(">f"),
    Tag.DOUBLE: struct.Struct(">d"), Tag.INT: struct.Struct(">i"), Tag.LONG: struct.Struct(">q"),
    Tag.SHORT: struct.Struct(">h"), Tag.BOOLEAN: struct.Struct(">?")}
TAG_OF_SIGNATURE = {"B": Tag.BYTE, "C": Tag.CHAR, "F": Tag.FLOAT, "D": Tag.DOUBLE, "I": Tag.INT, "J": Tag.LONG,
                    "S": Tag.SHORT, "Z": Tag.BOOLEAN, "V": Tag.VOID, "L": Tag.OBJECT, "[": Tag.ARRAY}

ERRORS = {
    10: "invalid thread", 13: "thread not suspended", 15: "thread not alive", 20: "object collected",
    21: "invalid class", 23: "invalid method id", 24: "invalid location", 25: "invalid field id",
    30: "invalid frame id", 31: "no more frames", 32: "opaque frame", 34: "invalid slot", 35: "duplicate",
    41: "absent information",
    60: "invalid class format", 61: "circular class definition", 62: "fails verification",
    63: "add method not implemented", 64: "schema change not implemented", 65: "invalid typestate",
    66: "hierarchy change not implemented", 67: "delete method not implemented", 68: "unsupported version",
    69: "names don't match", 70: "class modifiers change not implemented",
    71: "method modifiers change not implemented", 72: "class attribute change not implemented",
    99: "not implemented", 100: "null pointer", 101: "absent information", 102: "invalid event type",
    103: "illegal argument", 110: "out of memory", 112: "vm dead", 502: "invalid length",
    503: "invalid index", 506: "invalid string", 507: "invalid class loader", 508: "invalid array",
    510: "invalid object",
}


class JdwpError(Exception):
    def __init__(self, code: int, label: str) -> None:
        self.code = code
        super().__init__(f"{label}: JDWP error {code} ({ERRORS.get(code, 'unknown')})")


@dataclass(frozen=True)
class IdSizes:
    field: int = 8
    method: int = 8
    object: int = 8
    reference_type: int = 8
    frame: int = 8


class Location(NamedTuple):
    type_tag: int
    class_id: int
    method_id: int
    code_index: int


class Value(NamedTuple):
    """A tagged value: primitives as Python numbers/bools, objects as their id (0 is null)."""

    tag: int
    value: Any

    @property
    def is_object(self) -> bool:
        return self.tag in OBJECT_TAGS


class Writer:
    def __init__(self, sizes: IdSizes) -> None:
        self.sizes = sizes
        self._parts: list[bytes] = []

    def u1(self, value: int) -> Writer:
        self._parts.append(struct.pack(">B", value))
        return self

    def boolean(self, value: bool) -> Writer:
        return self.u1(1 if value else 0)

    def i4(self, value: int) -> Writer:
        self._parts.append(struct.pack(">i", value))
        return self

    def i8(self, value: int) -> Writer:
        self._parts.append(struct.pack(">q", value))
        return self

    def string(self, value: str) -> Writer:
        return self.blob(value.encode("utf-8"))

    def sized(self, value: int, size: int) -> Writer:
        self._parts.append(value.to_bytes(size, "big", signed=False))
        return self

    def blob(self, data: bytes) -> Writer:
        """A byte array (a class file for ``RedefineClasses``): its length, then the bytes."""
        self._parts.append(struct.pack(">I", len(data)) + data)
        return self

    def object_id(self, value: int) -> Writer:
        return self.sized(value, self.sizes.object)

    def reference_type(self, value: int) -> Writer:
        return self.sized(value, self.sizes.reference_type)

    def method_id(self, value: int) -> Writer:
        return self.sized(value, self.sizes.method)

    def field_id(self, value: int) -> Writer:
        return self.sized(value, self.sizes.field)

    def frame_id(self, value: int) -> Writer:
        return self.sized(value, self.sizes.frame)

    def location(self, where: Location) -> Writer:
        return self.u1(where.type_tag).reference_type(where.class_id).method_id(where.method_id).i8(where.code_index)

    def untagged(self, value: Value) -> Writer:
        if value.tag in OBJECT_TAGS:
            return self.object_id(int(value.value or 0))
        if value.tag == Tag.VOID:
            return self
        self._parts.append(_PRIMITIVES[value.tag].pack(value.value))
        return self

    def value(self, value: Value) -> Writer:
        return self.u1(value.tag).untagged(value)

    def bytes(self) -> bytes:
        return b"".join(self._parts)


class Reader:
    def __init__(self, data: bytes, sizes: IdSizes) -> None:
        self._data = memoryview(data)
        self._at = 0
        self.sizes = sizes

    def _take(self, count: int) -> memoryview:
        if self._at + count > len(self._data):
            raise ValueError(f"JDWP packet ends early (wanted {count} bytes at {self._at} of {len(self._data)})")
        chunk = self._data[self._at:self._at + count]
        self._at += count
        return chunk

    def u1(self) -> int:
        return self._take(1)[0]

    def boolean(self) -> bool:
        return self.u1() != 0

    def i4(self) -> int:
        return int(struct.unpack(">i", self._take(4))[0])

    def i8(self) -> int:
        return int(struct.unpack(">q", self._take(8))[0])

    def string(self) -> str:
        return self.blob().decode("utf-8", "replace")

    def blob(self) -> bytes:
        """A byte array: its length, then the bytes (a method's bytecode)."""
        length = struct.unpack(">I", self._take(4))[0]
        return bytes(self._take(length))

    def sized(self, size: int) -> int:
        return int.from_bytes(self._take(size), "big", signed=False)

    def object_id(self) -> int:
        return self.sized(self.sizes.object)

    def reference_type(self) -> int:
        return self.sized(self.sizes.reference_type)

    def method_id(self) -> int:
        return self.sized(self.sizes.method)

    def field_id(self) -> int:
        return self.sized(self.sizes.field)

    def frame_id(self) -> int:
        return self.sized(self.sizes.frame)

    def location(self) -> Location:
        return Location(self.u1(), self.reference_type(), self.method_id(), self.i8())

    def untagged(self, tag: int) -> Value:
        if tag in OBJECT_TAGS:
            return Value(tag, self.object_id())
        if tag == Tag.VOID:
            return Value(tag, None)
        codec = _PRIMITIVES.get(tag)
        if codec is None:
            raise ValueError(f"unknown JDWP value tag {tag!r}")
        return Value(tag, codec.unpack(self._take(codec.size))[0])

    def value(self) -> Value:
        return self.untagged(self.u1())

    @property
    def remaining(self) -> int:
        return len(self._data) - self._at


@dataclass
class Event:
    """One event of a composite event packet."""

    kind: int
    request_id: int
    suspend_policy: int
    thread: int = 0
    location: Location | None = None
    exception: Value | None = None
    catch_location: Location | None = None
    type_tag: int = 0
    type_id: int = 0
    signature: str = ""
    value: Value | None = None
    field_id: int = 0
    object: Value | None = None


def decode_composite(data: bytes, sizes: IdSizes) -> list[Event]:
    reader = Reader(data, sizes)
    policy = reader.u1()
    events = []
    for _ in range(reader.i4()):
        kind = reader.u1()
        event = Event(kind, reader.i4(), policy)
        if kind == EventKind.VM_START or kind in (EventKind.THREAD_START, EventKind.THREAD_DEATH):
            event.thread = reader.object_id()
        elif kind in (EventKind.SINGLE_STEP, EventKind.BREAKPOINT, EventKind.METHOD_ENTRY, EventKind.METHOD_EXIT):
            event.thread, event.location = reader.object_id(), reader.location()
        elif kind == EventKind.METHOD_EXIT_WITH_RETURN_VALUE:
            event.thread, event.location, event.value = reader.object_id(), reader.location(), reader.value()
        elif kind == EventKind.EXCEPTION:
            event.thread, event.location = reader.object_id(), reader.location()
            event.exception, event.catch_location = reader.value(), reader.location()
        elif kind == EventKind.CLASS_PREPARE:
            event.thread, event.type_tag, event.type_id = reader.object_id(), reader.u1(), reader.reference_type()
            event.signature = reader.string()
            reader.i4()  # class status
        elif kind == EventKind.CLASS_UNLOAD:
            event.signature = reader.string()
        elif kind in (EventKind.FIELD_ACCESS, EventKind.FIELD_MODIFICATION):
            event.thread, event.location = reader.object_id(), reader.location()
            event.type_tag, event.type_id, event.field_id = reader.u1(), reader.reference_type(), reader.field_id()
            event.object = reader.value()
            if kind == EventKind.FIELD_MODIFICATION:
                event.value = reader.value()
        elif kind in (EventKind.VM_DEATH, EventKind.VM_DISCONNECTED):
            pass
        else:  # monitor events and anything newer: the rest of the packet cannot be parsed
            events.append(event)
            break
        events.append(event)
    return events
