"""The JDK's collections as their elements — ``ArrayList size=2 ["alpha", "beta"]``, ``HashMap size=3
{"a"=1, …}`` — listed and paged by position, in the order their own iterators give: which JDK class
keeps its elements how (``elements.py`` walks them), and the texts a value listing shows.

Read from fields, never by calling methods: ``size()`` or an iterator invoked over JDWP runs the
program's code, takes its locks, lets the other threads run meanwhile, and is refused on a thread that
``debug_pause`` stopped. So each layout here names OpenJDK's private fields (``elementData``/``size``,
``table``/``Node.next``, a TreeMap's red-black tree, …). A layout whose fields are missing or of
another kind (another JDK) is not opened: the value is then listed by its fields like any object.

What it reads and how an element's text is written come from the ``Inspector`` it is given
(``values.Values``, which shows a collection through this module: the interface keeps the two
modules from importing each other).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol

from polydbg.backends.java.classes import Classes, JavaClass
from polydbg.backends.java.elements import (
    WALK_CAP,
    ArraySlots,
    Buckets,
    Chain,
    Elements,
    Item,
    KeysOf,
    Listed,
    Reads,
    Sparse,
    Tree,
    UnknownLayout,
    ValuesOf,
    int_of,
    pipelined,
    ref_of,
)
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import Value

NAME_CHARS = 120  # a map entry's name is its key's text, cut to this
VIEW_DEPTH = 4  # wrappers unwrapped at most (an unmodifiable view of a synchronized view of …)
TREEBIN = -2  # ConcurrentHashMap's hash of a bin that holds a tree (its nodes are linked from ``first``)

# wrappers that show another collection: the field holding it, and whether they show that map's keys
_VIEWS: dict[str, tuple[str, bool]] = {
    "java.util.HashSet": ("map", True),  # LinkedHashSet too: its map is a LinkedHashMap
    "java.util.TreeSet": ("m", True),
    "java.util.Collections$SetFromMap": ("m", True),
    "java.util.concurrent.ConcurrentHashMap$KeySetView": ("map", True),
    "java.util.Collections$UnmodifiableCollection": ("c", False),  # …List, …Set, …RandomAccessList
    "java.util.Collections$UnmodifiableMap": ("m", False),
    "java.util.Collections$SynchronizedCollection": ("c", False),
    "java.util.Collections$SynchronizedMap": ("m", False),
    "java.util.Collections$CheckedCollection": ("c", False),
    "java.util.Collections$CheckedMap": ("m", False),
    "java.util.HashMap$KeySet": ("this$0", True),  # map.keySet()
    "java.util.LinkedHashMap$LinkedKeySet": ("this$0", True),
    "java.util.TreeMap$KeySet": ("m", True),
    "java.util.IdentityHashMap$KeySet": ("this$0", True),
}
# wrappers that show another map's values (map.values())
_VALUE_VIEWS: dict[str, str] = {
    "java.util.HashMap$Values": "this$0",
    "java.util.LinkedHashMap$LinkedValues": "this$0",
    "java.util.TreeMap$Values": "this$0",
    "java.util.IdentityHashMap$Values": "this$0",
    "java.util.concurrent.ConcurrentHashMap$ValuesView": "map",
}


class Children(NamedTuple):
    """A page of a collection's listing: (name, value) pairs, and why fewer than asked, if so."""

    named: list[tuple[str, Value]]
    note: str = ""


class Shown(Protocol):
    @property
    def text(self) -> str: ...


class Inspector(Reads, Protocol):
    """What the layouts need of ``values.Values``: the VM's classes, its reads, and a value's text."""

    classes: Classes

    async def class_of(self, object_id: int) -> JavaClass: ...

    async def array_length(self, object_id: int) -> int: ...

    async def static_values(self, class_id: int, field_ids: list[int]) -> list[Value]: ...

    async def describe(self, value: Value, depth: int = 1) -> Shown: ...


Opener = Callable[[int, JavaClass], Awaitable[Elements]]


class Layouts:
    """Opens an object as its elements when its class is, or extends, a JDK collection whose layout is
    known here (a ``class MyList extends ArrayList`` reads as an ArrayList)."""

    def __init__(self, values: Inspector) -> None:
        self.values = values
        self._known: dict[int, JavaClass | None] = {}  # class id → the known JDK class it is or extends
        self._jdk: dict[str, JavaClass] = {}  # JDK class name → the loaded class
        self._outer: dict[int, int] = {}  # an inner view class's id → its this$0 field id (0: none)
        self._immutables: tuple[int | None, bool, int] | None = None  # ImmutableCollections' SALT32L, REVERSE, EMPTY
        self._openers: dict[str, Opener] = {
            "java.util.ArrayList": self._array_list,
            "java.util.Vector": self._vector,
            "java.util.ArrayDeque": self._array_deque,
            "java.util.PriorityQueue": self._priority_queue,
            "java.util.concurrent.CopyOnWriteArrayList": self._copy_on_write,
            "java.util.Arrays$ArrayList": self._arrays_as_list,
            "java.util.LinkedList": self._linked_list,
            "java.util.HashMap": self._hash_map,
            "java.util.LinkedHashMap": self._linked_hash_map,
            "java.util.TreeMap": self._tree_map,
            "java.util.concurrent.ConcurrentHashMap": self._concurrent_hash_map,
            "java.util.IdentityHashMap": self._identity_hash_map,
            "java.util.ImmutableCollections$ListN": self._list_n,
            "java.util.ImmutableCollections$List12": self._list12,
            "java.util.ImmutableCollections$SetN": self._set_n,
            "java.util.ImmutableCollections$Set12": self._set12,
            "java.util.ImmutableCollections$MapN": self._map_n,
            "java.util.ImmutableCollections$Map1": self._map1,
            "java.util.Collections$SingletonList": self._singleton,
            "java.util.Collections$SingletonSet": self._singleton,
            "java.util.Collections$SingletonMap": self._singleton_map,
            "java.util.Collections$EmptyList": self._empty,
            "java.util.Collections$EmptySet": self._empty,
            "java.util.Collections$EmptyMap": self._empty_map,
        }

    # -- what the values show ---------------------------------------------------------------------

    async def text(self, object_id: int, cls: JavaClass, type_name: str, depth: int,
                   preview: int) -> tuple[str, int] | None:
        """``ArrayList size=2 ["alpha", "beta"]`` (its first ``preview`` items; the head alone at ``depth``
        0) and the size; None when the object is no collection known here."""
        elements = await self.open(object_id, cls)
        if elements is None:
            return None
        head = f"{type_name} size={elements.size}"
        if depth <= 0:
            return head, elements.size
        try:
            items = await elements.items(*elements.window(0, preview))
            shown = [await self._preview(item) for item in items]
        except (UnknownLayout, JdwpRequestError):
            return None
        more = ", …" if elements.size > len(items) else ""
        opening, closing = "{}" if elements.is_map else "[]"
        return f"{head} {opening}{', '.join(shown)}{more}{closing}", elements.size

    async def children(self, object_id: int, start: int, count: int) -> Children | None:
        """Items ``start..start+count`` named for a listing — ``[i]`` in lists and sets, the key's text
        in maps —; None when the layout is not known here (the object is listed by its fields)."""
        elements = await self.open(object_id, await self.values.class_of(object_id))
        if elements is None:
            return None
        first, end = elements.window(start, count)
        try:
            items = await elements.items(first, end)
            named = [(await self._name(item, first + index), item.value) for index, item in enumerate(items)]
        except (UnknownLayout, JdwpRequestError):
            return None
        wanted = min(start + count, elements.size)
        if end < wanted:
            ends = f"; the last {WALK_CAP:,} are reached from the end" if elements.from_end else ""
            return Children(named, f"positions {end:,} to {wanted - 1:,} are not listed: each is reached by "
                                   f"walking links, one request per element, and a listing walks at most "
                                   f"{WALK_CAP:,}{ends}")
        if first + len(named) < end:
            return Children(named, f"only {len(named):,} of positions {first:,} to {end - 1:,} were found: the "
                                   "collection's size field says more (is it being modified?)")
        return Children(named)

    async def _preview(self, item: Item) -> str:
        shown = (await self.values.describe(item.value, 0)).text
        if item.key is None:
            return shown
        return f"{(await self.values.describe(item.key, 0)).text}={shown}"

    async def _name(self, item: Item, position: int) -> str:
        if item.key is None:
            return f"[{position}]"
        text = (await self.values.describe(item.key, 1)).text
        return text if len(text) <= NAME_CHARS else text[:NAME_CHARS - 1] + "…"

    # -- opening ----------------------------------------------------------------------------------

    async def open(self, object_id: int, cls: JavaClass) -> Elements | None:
        """The object's elements, or None when its class is no collection whose layout is known here."""
        try:
            return await self._open(object_id, cls, 0)
        except (UnknownLayout, JdwpRequestError):
            return None

    async def _open(self, object_id: int, cls: JavaClass, depth: int) -> Elements | None:
        layout = await self._layout(cls)
        if layout is None:
            return None
        view = _VIEWS.get(layout.name)
        if layout.name in _VALUE_VIEWS:
            view = (_VALUE_VIEWS[layout.name], False)
        if view is None:
            return await self._openers[layout.name](object_id, layout)
        field, keys = view
        if field == "this$0":  # an inner class's view of its map (HashMap.keySet(), .values())
            outer = self._outer.get(layout.id)
            if outer is None:
                outer = self._outer[layout.id] = await self.values.classes.outer_field(layout) or 0
            if not outer:
                raise UnknownLayout
            inner = ref_of((await self.values.field_values(object_id, [outer]))[0])
        else:
            inner = ref_of((await self._read(object_id, layout, field))[0])
        if not inner or depth >= VIEW_DEPTH:
            return None
        shown = await self._open(inner, await self.values.class_of(inner), depth + 1)
        if shown is not None and layout.name in _VALUE_VIEWS:
            if not shown.is_map:
                raise UnknownLayout
            return ValuesOf(shown)
        if shown is None or not keys:
            return shown
        if not shown.is_map:
            raise UnknownLayout
        return KeysOf(shown)

    async def _layout(self, cls: JavaClass) -> JavaClass | None:
        """The JDK collection class ``cls`` is or extends, when its layout is known here."""
        if cls.id not in self._known:
            current: JavaClass | None = cls
            while current is not None and current.name not in self._openers and current.name not in _VIEWS and (
                    current.name not in _VALUE_VIEWS):
                current = await self.values.classes.superclass(current)
            self._known[cls.id] = current
        return self._known[cls.id]

    async def _ids(self, cls: JavaClass, *names: str) -> list[int]:
        """The ids of ``cls``'s instance fields (its own or inherited) named ``names``."""
        by_name: dict[str, int] = {}
        for field in await self.values.classes.fields(cls):
            if not field.is_static:
                by_name.setdefault(field.name, field.id)
        try:
            return [by_name[name] for name in names]
        except KeyError:
            raise UnknownLayout from None

    async def _read(self, object_id: int, cls: JavaClass, *names: str) -> list[Value]:
        return await self.values.field_values(object_id, await self._ids(cls, *names))

    async def _jdk_class(self, name: str) -> JavaClass:
        """A JDK class by name (``java.util.HashMap$Node``), as loaded in this VM."""
        found = self._jdk.get(name)
        if found is None:
            found = await self.values.classes.named(f"L{name.replace('.', '/')};")
            if found is None:
                raise UnknownLayout
            self._jdk[name] = found
        return found

    async def _slots(self, array: int, size: int, head: int = 0, ring: bool = False) -> Elements:
        if not array:
            return Listed([])
        length = await self.values.array_length(array)
        return ArraySlots(self.values, array, min(size, length), head, length if ring else 0)

    # -- array-backed -----------------------------------------------------------------------------

    async def _array_list(self, object_id: int, cls: JavaClass) -> Elements:
        array, size = await self._read(object_id, cls, "elementData", "size")
        return await self._slots(ref_of(array), int_of(size))

    async def _vector(self, object_id: int, cls: JavaClass) -> Elements:
        array, size = await self._read(object_id, cls, "elementData", "elementCount")
        return await self._slots(ref_of(array), int_of(size))

    async def _priority_queue(self, object_id: int, cls: JavaClass) -> Elements:
        array, size = await self._read(object_id, cls, "queue", "size")  # heap order, as its iterator
        return await self._slots(ref_of(array), int_of(size))

    async def _array_deque(self, object_id: int, cls: JavaClass) -> Elements:
        array, head, tail = await self._read(object_id, cls, "elements", "head", "tail")
        ring = ref_of(array)
        if not ring:
            return Listed([])
        length = await self.values.array_length(ring)
        return await self._slots(ring, (int_of(tail) - int_of(head)) % max(length, 1), int_of(head), ring=True)

    async def _whole_array(self, object_id: int, cls: JavaClass, field: str) -> Elements:
        array = ref_of((await self._read(object_id, cls, field))[0])
        return await self._slots(array, await self.values.array_length(array) if array else 0)

    async def _copy_on_write(self, object_id: int, cls: JavaClass) -> Elements:
        return await self._whole_array(object_id, cls, "array")

    async def _arrays_as_list(self, object_id: int, cls: JavaClass) -> Elements:
        return await self._whole_array(object_id, cls, "a")

    async def _list_n(self, object_id: int, cls: JavaClass) -> Elements:
        return await self._whole_array(object_id, cls, "elements")

    # -- linked -----------------------------------------------------------------------------------

    async def _linked_list(self, object_id: int, cls: JavaClass) -> Elements:
        size, first, last = await self._read(object_id, cls, "size", "first", "last")
        if not ref_of(first):
            return Listed([])
        node = await self._jdk_class("java.util.LinkedList$Node")
        return Chain(self.values, int_of(size), ref_of(first), await self._ids(node, "next", "item"), False,
                     ref_of(last), await self._ids(node, "prev", "item"))

    async def _linked_hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        size, head, tail = await self._read(object_id, cls, "size", "head", "tail")
        if not ref_of(head):
            return Listed([], is_map=True)
        entry = await self._jdk_class("java.util.LinkedHashMap$Entry")
        return Chain(self.values, int_of(size), ref_of(head), await self._ids(entry, "after", "key", "value"), True,
                     ref_of(tail), await self._ids(entry, "before", "key", "value"))

    async def _hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        table, size = await self._read(object_id, cls, "table", "size")
        if not ref_of(table) or not int_of(size):
            return Listed([], is_map=True)
        fields = await self._ids(await self._jdk_class("java.util.HashMap$Node"), "key", "value", "next")

        async def node(node_id: int) -> tuple[Item | None, int]:
            key, value, link = await self.values.field_values(node_id, fields)
            return Item(key, value), ref_of(link)

        return Buckets(self.values, int_of(size), ref_of(table), await self.values.array_length(ref_of(table)), node)

    async def _concurrent_hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        table, base, cells = await self._read(object_id, cls, "table", "baseCount", "counterCells")
        size = int_of(base) + await self._counted(ref_of(cells))
        if not ref_of(table) or size <= 0:
            return Listed([], is_map=True)
        fields = await self._ids(await self._jdk_class("java.util.concurrent.ConcurrentHashMap$Node"), "hash", "key",
                                 "val", "next")

        async def node(node_id: int) -> tuple[Item | None, int]:
            hashed, key, value, link = await self.values.field_values(node_id, fields)
            if int_of(hashed) >= 0:
                return Item(key, value), ref_of(link)
            if int_of(hashed) == TREEBIN:
                tree_bin = await self._jdk_class("java.util.concurrent.ConcurrentHashMap$TreeBin")
                return None, ref_of((await self._read(node_id, tree_bin, "first"))[0])
            return None, 0  # a bin being moved by a resize (its nodes are in the next table) or reserved

        return Buckets(self.values, size, ref_of(table), await self.values.array_length(ref_of(table)), node)

    async def _counted(self, cells: int) -> int:
        """The sum of ConcurrentHashMap's counter cells (its size is ``baseCount`` plus them)."""
        if not cells:
            return 0
        length = await self.values.array_length(cells)
        found = [ref_of(cell) for cell in await self.values.array_items(cells, 0, length)]
        cell_class = await self._jdk_class("java.util.concurrent.ConcurrentHashMap$CounterCell")
        value = await self._ids(cell_class, "value")
        counts = await pipelined(lambda cell: self.values.field_values(cell, value), [cell for cell in found if cell])
        return sum(int_of(count[0]) for count in counts)

    async def _tree_map(self, object_id: int, cls: JavaClass) -> Elements:
        root, size = await self._read(object_id, cls, "root", "size")
        if not ref_of(root):
            return Listed([], is_map=True)
        entry = await self._jdk_class("java.util.TreeMap$Entry")
        return Tree(self.values, int_of(size), ref_of(root), await self._ids(entry, "left", "right", "key", "value"))

    # -- immutable and small ----------------------------------------------------------------------

    async def _immutable_statics(self) -> tuple[int | None, bool, int]:
        """ImmutableCollections' iteration salt and direction (None: not found, plain order) and its
        EMPTY marker of an unused slot."""
        if self._immutables is None:
            found: dict[str, Value] = {}
            with_statics = await self._jdk_class("java.util.ImmutableCollections")
            wanted = [f for f in await self.values.classes.fields(with_statics)
                      if f.is_static and f.name in ("SALT32L", "REVERSE", "EMPTY")]
            for field, value in zip(wanted, await self.values.static_values(with_statics.id, [f.id for f in wanted]),
                                    strict=True):
                found[field.name] = value
            salt, reverse, empty = found.get("SALT32L"), found.get("REVERSE"), found.get("EMPTY")
            self._immutables = (int_of(salt) if salt is not None and reverse is not None else None,
                                bool(reverse.value) if reverse is not None else True,
                                ref_of(empty) if empty is not None else 0)
        return self._immutables

    async def _present(self, *values: Value) -> list[Value]:
        """The values that fill a slot: not null, not ImmutableCollections.EMPTY."""
        _, _, empty = await self._immutable_statics()
        return [value for value in values if ref_of(value) and ref_of(value) != empty]

    async def _list12(self, object_id: int, cls: JavaClass) -> Elements:
        return Listed([Item(None, value) for value in await self._present(*await self._read(object_id, cls, "e0",
                                                                                            "e1"))])

    async def _set12(self, object_id: int, cls: JavaClass) -> Elements:
        present = await self._present(*await self._read(object_id, cls, "e0", "e1"))
        _, reverse, _ = await self._immutable_statics()
        return Listed([Item(None, value) for value in (present[::-1] if reverse else present)])

    async def _set_n(self, object_id: int, cls: JavaClass) -> Elements:
        return await self._salted(object_id, cls, "elements", 1)

    async def _map_n(self, object_id: int, cls: JavaClass) -> Elements:
        return await self._salted(object_id, cls, "table", 2)

    async def _salted(self, object_id: int, cls: JavaClass, field: str, stride: int) -> Elements:
        table, size = await self._read(object_id, cls, field, "size")
        length = await self.values.array_length(ref_of(table)) if ref_of(table) else 0
        if not length or not int_of(size):
            return Listed([], is_map=stride == 2)
        salt, reverse, _ = await self._immutable_statics()
        first = -1 if salt is None else (salt * (length // stride)) >> 32  # as SetNIterator, MapNIterator
        return Sparse(self.values, int_of(size), ref_of(table), length, stride, first, reverse or salt is None)

    async def _identity_hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        """Keys and values side by side in ``table``, null where empty, iterated from slot 0 up."""
        table, size = await self._read(object_id, cls, "table", "size")
        length = await self.values.array_length(ref_of(table)) if ref_of(table) else 0
        if not length or not int_of(size):
            return Listed([], is_map=True)
        return Sparse(self.values, int_of(size), ref_of(table), length, 2, -1, True)

    async def _map1(self, object_id: int, cls: JavaClass) -> Elements:
        key, value = await self._read(object_id, cls, "k0", "v0")
        return Listed([Item(key, value)], is_map=True)

    async def _singleton(self, object_id: int, cls: JavaClass) -> Elements:
        return Listed([Item(None, (await self._read(object_id, cls, "element"))[0])])

    async def _singleton_map(self, object_id: int, cls: JavaClass) -> Elements:
        key, value = await self._read(object_id, cls, "k", "v")
        return Listed([Item(key, value)], is_map=True)

    async def _empty(self, object_id: int, cls: JavaClass) -> Elements:
        return Listed([])

    async def _empty_map(self, object_id: int, cls: JavaClass) -> Elements:
        return Listed([], is_map=True)
