"""JDWP's encoding: packets, ids of the sizes the VM announces, tagged values, the composite event."""

from __future__ import annotations

import struct

import pytest

from polydbg.backends.java.classes import java_name, short_name
from polydbg.backends.java.primitives import primitive_text
from polydbg.jdwp.codec import (
    EventKind,
    IdSizes,
    Location,
    Reader,
    Tag,
    Value,
    Writer,
    decode_composite,
)
from polydbg.jdwp.stream import command, encode

SIZES = IdSizes(field=8, method=8, object=8, reference_type=8, frame=8)
SMALL = IdSizes(field=4, method=4, object=4, reference_type=4, frame=4)


def test_a_command_packet_has_length_id_flags_and_command() -> None:
    packet = encode(command(7, 1, 9, b"\x01\x02"))
    assert packet == struct.pack(">IIB", 13, 7, 0) + b"\x01\x09\x01\x02"


@pytest.mark.parametrize("sizes", [SIZES, SMALL])
def test_values_and_locations_round_trip_at_any_id_size(sizes: IdSizes) -> None:
    where = Location(1, 0x1234, 0x56, 42)
    items = [Value(Tag.INT, -5), Value(Tag.LONG, 1 << 40), Value(Tag.BOOLEAN, True), Value(Tag.CHAR, ord("é")),
             Value(Tag.DOUBLE, 0.5), Value(Tag.BYTE, -1), Value(Tag.SHORT, 300), Value(Tag.OBJECT, 0xABCD),
             Value(Tag.STRING, 0), Value(Tag.ARRAY, 9)]
    writer = Writer(sizes).location(where).string("héllo 🌍")
    for item in items:
        writer.value(item)
    reader = Reader(writer.bytes(), sizes)
    assert reader.location() == where
    assert reader.string() == "héllo 🌍"
    assert [reader.value() for _ in items] == items
    assert reader.remaining == 0


def test_a_short_packet_is_an_error_not_garbage() -> None:
    with pytest.raises(ValueError, match="ends early"):
        Reader(b"\x00\x00", SIZES).i4()


def test_a_composite_event_with_a_class_prepare_and_a_breakpoint() -> None:
    where = Location(1, 3, 4, 10)
    data = (Writer(SIZES).u1(2).i4(2)
            .u1(EventKind.CLASS_PREPARE).i4(11).object_id(1).u1(1).reference_type(3).string("LDemo$Point;").i4(7)
            .u1(EventKind.BREAKPOINT).i4(12).object_id(1).location(where).bytes())
    prepare, hit = decode_composite(data, SIZES)
    assert (prepare.kind, prepare.request_id, prepare.type_id, prepare.signature) == (8, 11, 3, "LDemo$Point;")
    assert (hit.kind, hit.request_id, hit.thread, hit.location, hit.suspend_policy) == (2, 12, 1, where, 2)


def test_an_exception_event_carries_the_exception_and_where_it_is_caught() -> None:
    throw, catch = Location(1, 3, 4, 10), Location(1, 5, 6, 0)
    data = (Writer(SIZES).u1(2).i4(1).u1(EventKind.EXCEPTION).i4(3).object_id(1).location(throw)
            .value(Value(Tag.OBJECT, 77)).location(catch).bytes())
    (event,) = decode_composite(data, SIZES)
    assert (event.location, event.exception, event.catch_location) == (throw, Value(Tag.OBJECT, 77), catch)


@pytest.mark.parametrize(("signature", "full", "short"), [
    ("Ljava/util/ArrayList;", "java.util.ArrayList", "ArrayList"),
    ("LDemo$Point;", "Demo$Point", "Demo.Point"),
    ("[I", "int[]", "int[]"),
    ("[[Ljava/lang/String;", "java.lang.String[][]", "String[][]"),
    ("LBusy$$Lambda$14+0x0000000800c01000;", "Busy$$Lambda$14+0x0000000800c01000", "Busy.lambda"),
])
def test_type_names(signature: str, full: str, short: str) -> None:
    assert (java_name(signature), short_name(signature)) == (full, short)


@pytest.mark.parametrize(("value", "text"), [
    (Value(Tag.CHAR, ord("a")), "'a'"), (Value(Tag.CHAR, ord("'")), "'\\''"), (Value(Tag.CHAR, ord('"')), "'\"'"),
    (Value(Tag.BOOLEAN, False), "false"),
    (Value(Tag.DOUBLE, 2.0), "2.0"), (Value(Tag.FLOAT, 0.1), "0.1"), (Value(Tag.DOUBLE, float("nan")), "NaN"),
    (Value(Tag.LONG, -7), "-7"),
])
def test_primitives_read_as_java_prints_them(value: Value, text: str) -> None:
    assert primitive_text(value) == text
