"""The program's classes, fields and methods by name, as an expression names them, asked of the VM
over JDWP: a class by its binary or simple name (``naming.py`` says where to look), the fields of an
object or a class, the methods of a name up a class's hierarchy, the types a class is assignable to,
and the primitive inside a box.

What never changes for a loaded class is kept for the session: a name's class once found, a class's
supertypes and interfaces, a source file's imports. A name not found is asked again next time (the
class may be loaded by then). ``resolved`` runs ``overloads.py``'s pure decisions, looking up each fact
they ask for, as they ask.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TypeVar

from polydbg.backends.java import naming
from polydbg.backends.java.classes import Classes, Field, JavaClass, Method
from polydbg.backends.java.overloads import Hierarchy, Unknown
from polydbg.backends.java.primitives import UNBOX
from polydbg.backends.java.terms import Text
from polydbg.backends.java.values import Values
from polydbg.backends.kit import timeouts
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import CommandSet, Tag, TypeTag, Value

T = TypeVar("T")
SOURCE_CHARS = 200_000  # read of a source file for its imports (they come first)


class Lookup:
    def __init__(self, client: JdwpClient, classes: Classes, values: Values,
                 source_of: Callable[[JavaClass], Awaitable[str | None]] | None) -> None:
        self.client = client
        self.classes = classes
        self.values = values
        self.source_of = source_of  # a class's source file, if found
        self._by_name: dict[str, JavaClass | None] = {}
        self._supertypes: dict[int, set[str]] = {}
        self._imports: dict[str, list[str]] = {}

    # -- classes ----------------------------------------------------------------------------------

    async def find_class(self, name: str) -> JavaClass | None:
        """A loaded class by its binary name (``java.util.List``, ``Basics$Point``)."""
        if name in self._by_name:
            return self._by_name[name]
        found = await self.classes.named("L" + name.replace(".", "/") + ";")
        nested = naming.nested_spelling(name) if found is None else None
        if nested is not None:
            found = await self.find_class(nested)  # Outer.Inner written with a dot
        if found is not None:
            self._by_name[name] = found
        return found

    async def class_named(self, name: str, current: JavaClass) -> JavaClass | None:
        """A simple class name as Java resolves it in ``current``: its nested classes, its package,
        ``java.lang``, its source's imports, then any loaded class of that simple name."""
        for candidate in naming.candidates(current.name, name) + await self.imported(current, name):
            found = await self.find_class(candidate)
            if found is not None:
                return found
        for cls in list(self.classes.by_id.values()):
            if cls.signature.startswith("L") and naming.simply_named(cls.name, name):
                return cls
        return None

    async def type_names(self, written: str, current: JavaClass) -> list[str]:
        """The binary names a type written in ``current`` may mean, in Java's order: a simple name's
        nested, package, ``java.lang`` and imported candidates; for ``User.Inner``, those of ``User`` with
        ``$Inner``, then the spellings of a qualified name (``java.util.Map.Entry``)."""
        first, _, rest = written.partition(".")
        found = naming.candidates(current.name, first) + await self.imported(current, first)
        if not rest:
            return found
        return list(dict.fromkeys([f"{name}${rest.replace('.', '$')}" for name in found] + naming.spellings(written)))

    async def class_object(self, cls: JavaClass) -> Value:
        """The ``java.lang.Class`` of a loaded class (what ``Foo.class`` gives)."""
        reply = await self.client.request(CommandSet.REFERENCE_TYPE, 11, self.client.writer().reference_type(
            cls.id).bytes(), "ReferenceType.ClassObject", timeouts.INSPECT_S)
        return Value(Tag.CLASS_OBJECT, reply.object_id())

    async def class_loader(self, cls: JavaClass) -> Value:
        """The loader that loaded ``cls`` (null: the bootstrap loader)."""
        reply = await self.client.request(CommandSet.REFERENCE_TYPE, 2, self.client.writer().reference_type(
            cls.id).bytes(), "ReferenceType.ClassLoader", timeouts.INSPECT_S)
        return Value(Tag.OBJECT, reply.object_id())

    async def imported(self, current: JavaClass, name: str) -> list[str]:
        """Where the current source file's imports say a simple name may come from."""
        path = await self.source_of(current) if self.source_of is not None else None
        if not path or not os.path.isabs(path) or not os.path.isfile(path):
            return []
        if path not in self._imports:
            try:
                with open(path, encoding="utf-8", errors="replace") as source:
                    text = source.read(SOURCE_CHARS)
            except OSError:
                text = ""
            self._imports[path] = naming.imports_in(text)
        return naming.imported(self._imports[path], name)

    async def interfaces(self, cls: JavaClass) -> list[JavaClass]:
        """The interfaces ``cls`` declares it implements (or extends)."""
        return await self.classes.interfaces(cls)

    async def supertypes(self, cls: JavaClass) -> set[str]:
        """Every class and interface name ``cls`` is assignable to."""
        known = self._supertypes.get(cls.id)
        if known is not None:
            return known
        names = {cls.name}
        if cls.tag == TypeTag.CLASS:
            parent = await self.classes.superclass(cls)
            if parent is not None:
                names |= await self.supertypes(parent)
        for interface in await self.interfaces(cls):
            names |= await self.supertypes(interface)
        names.add("java.lang.Object")
        self._supertypes[cls.id] = names
        return names

    async def resolved(self, decide: Callable[[Hierarchy], T]) -> T:
        """``decide`` (a pure choice of ``overloads.py``) with each fact it asks for looked up."""
        known = Hierarchy(self._supertypes)
        while True:
            try:
                return decide(known)
            except Unknown as missing:
                if missing.cls is not None:
                    await self.supertypes(missing.cls)
                else:
                    known.classes[missing.signature] = await self.classes.named(missing.signature)

    # -- members ----------------------------------------------------------------------------------

    async def field_of(self, target: Value, name: str, cls: JavaClass | None = None) -> Value | None:
        """The field ``name`` of the object ``target`` (of class ``cls``, when known), instance or static."""
        if cls is None:
            cls = await self.values.class_of(int(target.value))
        for candidate in await self.classes.fields(cls):
            if candidate.name == name:
                if candidate.is_static:
                    return (await self.values.static_values(await self.declaring(cls, candidate), [candidate.id]))[0]
                return (await self.values.field_values(int(target.value), [candidate.id]))[0]
        return None

    async def static_field(self, cls: JavaClass, name: str) -> Value | None:
        for candidate in await self.classes.fields(cls):
            if candidate.name == name and candidate.is_static:
                return (await self.values.static_values(await self.declaring(cls, candidate), [candidate.id]))[0]
        return None

    async def declaring(self, cls: JavaClass, wanted: Field) -> int:
        """The class that declares ``wanted`` (ReferenceType.GetValues wants it, not a subclass)."""
        current: JavaClass | None = cls
        while current is not None:
            own = await self.classes.fields(current)
            parent = await self.classes.superclass(current) if current.tag == TypeTag.CLASS else None
            inherited = await self.classes.fields(parent) if parent is not None else []
            if any(f.id == wanted.id for f in own) and not any(f.id == wanted.id for f in inherited):
                return current.id
            current = parent
        return cls.id

    async def methods_named(self, cls: JavaClass, name: str) -> list[tuple[Method, JavaClass]]:
        """Methods named ``name`` in ``cls``, its superclasses and interfaces (nearest first,
        overridden signatures once: a call dispatches virtually, the nearest one stands for them all)."""
        found: list[tuple[Method, JavaClass]] = []
        seen: set[str] = set()
        queue: list[JavaClass] = [cls]
        visited: set[int] = set()
        while queue:
            current = queue.pop(0)
            if current.id in visited:
                continue
            visited.add(current.id)
            for method in (await self.classes.methods(current)).values():
                if method.name == name and method.signature not in seen:
                    seen.add(method.signature)
                    found.append((method, current))
            if current.tag == TypeTag.CLASS:
                parent = await self.classes.superclass(current)
                if parent is not None:
                    queue.append(parent)
            queue += await self.interfaces(current)
        return found

    async def unboxed(self, value: Value | Text) -> Value | Text:
        """An ``Integer`` as its ``int`` (Java unboxes for arithmetic, comparisons and conditions)."""
        if isinstance(value, Text) or value.tag != Tag.OBJECT or not value.value:
            return value
        cls = await self.values.class_of(int(value.value))
        if cls.name not in UNBOX:
            return value
        inner = await self.field_of(value, "value", cls)
        return inner if inner is not None else value
