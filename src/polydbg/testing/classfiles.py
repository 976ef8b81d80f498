"""What a compiled JVM class says about its tests: its name, superclass, source file, and each method's name,
descriptor and annotations — read from the class file itself (Java and Kotlin compile to the same format), so a
project's tests are listed without starting a JVM, and the test a name means is found with its parameter types.
Its interfaces, fields and members' access flags are read too: a reload (backends/java/redefine.py) names the
change the JVM refused by comparing them with the loaded class's.

Only what JUnit needs is read (``RuntimeVisibleAnnotations``' type names, ``SourceFile``); the rest of the file is
skipped by its lengths. A file that is not a class file, or is cut short, reads as None.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass

ABSTRACT = 0x0400
_CONSTANT_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2,
                   20: 2}
_CONST_VALUE_TAGS = frozenset(b"BCDFIJSZs")
_PRIMITIVES = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long", "S": "short",
               "Z": "boolean", "V": "void"}
MAX_CLASS_FILES = 20_000  # a project's compiled classes looked at; past that the listing is partial
_SKIPPED_DIRS = frozenset({".git", "node_modules", ".gradle", ".idea"})


@dataclass(frozen=True)
class Method:
    name: str
    descriptor: str  # (I)V
    annotations: frozenset[str]  # binary names: org.junit.Test
    flags: int = 0


@dataclass(frozen=True)
class Field:
    name: str
    descriptor: str  # I, Ljava/lang/String;
    flags: int


@dataclass(frozen=True)
class ClassFile:
    name: str  # binary name: calc.CalcTest$Empty
    superclass: str | None
    source: str | None  # CalcTest.java
    flags: int
    annotations: frozenset[str]
    methods: tuple[Method, ...]
    interfaces: tuple[str, ...] = ()
    fields: tuple[Field, ...] = ()


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def u1(self) -> int:
        self.at += 1
        return self.data[self.at - 1]

    def u2(self) -> int:
        self.at += 2
        return int(struct.unpack_from(">H", self.data, self.at - 2)[0])

    def u4(self) -> int:
        self.at += 4
        return int(struct.unpack_from(">I", self.data, self.at - 4)[0])

    def skip(self, count: int) -> None:
        self.at += count
        if self.at > len(self.data):
            raise IndexError("cut short")


def read(path: str) -> ClassFile | None:
    try:
        with open(path, "rb") as handle:
            return parse(handle.read())
    except OSError:
        return None


def parse(data: bytes) -> ClassFile | None:
    try:
        return _parse(data) if data[:4] == b"\xca\xfe\xba\xbe" else None
    except (struct.error, IndexError, KeyError, UnicodeDecodeError):
        return None


def _parse(data: bytes) -> ClassFile:
    reader = _Reader(data)
    reader.skip(8)
    count = reader.u2()
    texts: dict[int, str] = {}
    classes: dict[int, int] = {}
    index = 1
    while index < count:
        tag = reader.u1()
        if tag == 1:  # Utf8 (modified UTF-8: what JUnit's names use reads the same)
            length = reader.u2()
            texts[index] = data[reader.at:reader.at + length].decode("utf-8", "replace")
            reader.skip(length)
        elif tag == 7:  # Class
            classes[index] = reader.u2()
        else:
            reader.skip(_CONSTANT_SIZES[tag])
            index += 1 if tag in (5, 6) else 0  # a long or double takes two entries
        index += 1
    flags = reader.u2()
    this, superclass = reader.u2(), reader.u2()
    interfaces = tuple(texts[classes[reader.u2()]].replace("/", ".") for _ in range(reader.u2()))
    fields = []
    for _ in range(reader.u2()):
        access, name, descriptor = reader.u2(), texts[reader.u2()], texts[reader.u2()]
        fields.append(Field(name, descriptor, access))
        _attributes(reader, texts)
    methods = []
    for _ in range(reader.u2()):
        access, name, descriptor = reader.u2(), texts[reader.u2()], texts[reader.u2()]
        methods.append(Method(name, descriptor, _attributes(reader, texts)[0], access))
    annotations, source = _attributes(reader, texts)
    return ClassFile(name=texts[classes[this]].replace("/", "."),
                     superclass=texts[classes[superclass]].replace("/", ".") if superclass else None,
                     source=source, flags=flags, annotations=annotations, methods=tuple(methods),
                     interfaces=interfaces, fields=tuple(fields))


def _attributes(reader: _Reader, texts: dict[int, str]) -> tuple[frozenset[str], str | None]:
    """The annotations' type names and the source file among a member's (or the class's) attributes."""
    annotations: set[str] = set()
    source = None
    for _ in range(reader.u2()):
        name, length = texts[reader.u2()], reader.u4()
        end = reader.at + length
        if name == "RuntimeVisibleAnnotations":
            for _ in range(reader.u2()):
                annotations.add(_annotation(reader, texts))
        elif name == "SourceFile":
            source = texts[reader.u2()]
        reader.at = end
    return frozenset(annotations), source


def _annotation(reader: _Reader, texts: dict[int, str]) -> str:
    kind = texts[reader.u2()]
    for _ in range(reader.u2()):
        reader.skip(2)
        _element_value(reader, texts)
    return kind[1:-1].replace("/", ".") if kind.startswith("L") else kind


def _element_value(reader: _Reader, texts: dict[int, str]) -> None:
    tag = reader.u1()
    if tag in _CONST_VALUE_TAGS or tag == ord("c"):
        reader.skip(2)
    elif tag == ord("e"):
        reader.skip(4)
    elif tag == ord("@"):
        _annotation(reader, texts)
    elif tag == ord("["):
        for _ in range(reader.u2()):
            _element_value(reader, texts)
    else:
        raise KeyError(tag)


def parameter_types(descriptor: str) -> list[str]:
    """A method descriptor's parameters as Java writes them: ``(I[Ljava/lang/String;)V`` → int, java.lang.String[]."""
    types = []
    at, dims = 1, 0
    while at < len(descriptor) and descriptor[at] != ")":
        letter = descriptor[at]
        if letter == "[":
            dims += 1
            at += 1
            continue
        if letter == "L":
            end = descriptor.index(";", at)
            name = descriptor[at + 1:end].replace("/", ".")
            at = end + 1
        else:
            name = _PRIMITIVES[letter]
            at += 1
        types.append(name + "[]" * dims)
        dims = 0
    return types


def class_files(directories: list[str]) -> Iterator[str]:
    """The .class files under ``directories`` (``MAX_CLASS_FILES`` at most)."""
    seen = 0
    for directory in directories:
        for root, dirs, files in os.walk(directory):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS)
            for file in sorted(files):
                if file.endswith(".class") and file != "module-info.class":
                    seen += 1
                    if seen > MAX_CLASS_FILES:
                        return
                    yield os.path.join(root, file)
