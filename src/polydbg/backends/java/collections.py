"""The JDK's collections as their elements — ``ArrayList size=2 ["alpha", "beta"]``, ``HashMap size=3
{"a"=1, …}`` — listed and paged by position, in the order their own iterators give.

Read from fields, never by calling methods: ``size()`` or an iterator invoked over JDWP runs the
program's code, takes its locks, lets the other threads run meanwhile, and is refused on a thread that
``debug_pause`` stopped. So each layout here names OpenJDK's private fields (``elementData``/``size``,
``table``/``Node.next``, a TreeMap's red-black tree, …). A layout whose fields are missing or of
another kind (another JDK) is not opened: the value is then listed by its fields like any object.

The work is bounded: array-backed collections read only the slice asked for; linked ones (LinkedList,
LinkedHashMap, hash chains, TreeMap) cost a request per element walked, so one listing walks at most
``WALK_CAP`` elements; nodes that do not wait on each other (other hash bins, a level of a TreeMap
subtree) are asked together, their round trips overlapping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from polydbg.backends.java.classes import JavaClass
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import Tag, Value

if TYPE_CHECKING:
    from polydbg.backends.java.values import Values

WALK_CAP = 10_000  # links one listing may walk
SLOT_CHUNK = 1024  # table slots read per request while scanning a hash table
IN_FLIGHT = 128  # requests sent together (more only slows the client's bookkeeping of what is pending)
NAME_CHARS = 120  # a map entry's name is its key's text, cut to this
VIEW_DEPTH = 4  # wrappers unwrapped at most (an unmodifiable view of a synchronized view of …)
TREEBIN = -2  # ConcurrentHashMap's hash of a bin that holds a tree (its nodes are linked from ``first``)
_INTEGRAL = frozenset({Tag.INT, Tag.LONG, Tag.SHORT, Tag.BYTE})

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


class UnknownLayout(Exception):
    """A field a layout needs is missing or of another kind: this JDK lays the class out otherwise."""


class Item(NamedTuple):
    key: Value | None  # a map entry's key; None in lists and sets
    value: Value


class Children(NamedTuple):
    """A page of a collection's listing: (name, value) pairs, and why fewer than asked, if so."""

    named: list[tuple[str, Value]]
    note: str = ""


T = TypeVar("T")


async def _pipelined(read: Callable[[int], Awaitable[T]], ids: list[int]) -> list[T]:
    """``read`` of each id, IN_FLIGHT requests at a time: their round trips overlap."""
    found: list[T] = []
    for at in range(0, len(ids), IN_FLIGHT):
        found += await asyncio.gather(*(read(one) for one in ids[at:at + IN_FLIGHT]))
    return found


def _int(value: Value) -> int:
    if value.tag not in _INTEGRAL:
        raise UnknownLayout
    return int(value.value)


def _ref(value: Value) -> int:
    if not value.is_object:
        raise UnknownLayout
    return int(value.value or 0)


class Elements:
    """A collection opened by its layout: its size, and its items by position in iteration order."""

    is_map = False
    walked = False  # positions are reached by walking links (at most WALK_CAP per listing)
    from_end = False  # … or from the last one backwards, whichever is nearer

    def __init__(self, size: int) -> None:
        self.size = max(0, size)

    def window(self, start: int, count: int) -> tuple[int, int]:
        """The positions ``[start, end)`` a listing of ``count`` from ``start`` reads."""
        end = min(start + count, self.size, WALK_CAP if self.walked else self.size)
        return start, max(start, end)

    async def items(self, start: int, end: int) -> list[Item]:
        return await self._items(start, end) if start < end else []

    async def _items(self, start: int, end: int) -> list[Item]:
        raise NotImplementedError


class Listed(Elements):
    """Items read whole at opening: singletons, ``List.of(a, b)``, ``Map.of(k, v)``, empty ones."""

    def __init__(self, items: list[Item], is_map: bool = False) -> None:
        super().__init__(len(items))
        self.listed = items
        self.is_map = is_map

    async def _items(self, start: int, end: int) -> list[Item]:
        return self.listed[start:end]


class ArraySlots(Elements):
    """Elements in an array from ``head`` on (ArrayList, Vector, ``List.of``…); ``capacity`` > 0 wraps
    around (ArrayDeque's ring)."""

    def __init__(self, values: Values, array: int, size: int, head: int = 0, capacity: int = 0) -> None:
        super().__init__(size)
        self.values, self.array, self.head, self.capacity = values, array, head, capacity

    async def _items(self, start: int, end: int) -> list[Item]:
        first, count = start + self.head, end - start
        if self.capacity:
            first %= self.capacity
        run = min(count, self.capacity - first) if self.capacity else count
        found = await self.values.array_items(self.array, first, run)
        if run < count:
            found += await self.values.array_items(self.array, 0, count - run)
        return [Item(None, value) for value in found]


class Chain(Elements):
    """Nodes linked one to the next (LinkedList, LinkedHashMap); walked from whichever end is nearer
    when ``last`` and ``back`` are known. ``ahead``/``back`` are field ids: the link, then the item's
    (item; or key and value)."""

    walked = True

    def __init__(self, values: Values, size: int, first: int, ahead: list[int], is_map: bool,
                 last: int = 0, back: list[int] | None = None) -> None:
        super().__init__(size)
        self.values, self.first, self.ahead, self.last, self.back = values, first, ahead, last, back
        self.is_map = is_map
        self.from_end = bool(back)

    def window(self, start: int, count: int) -> tuple[int, int]:
        end = min(start + count, self.size)
        if self.back and self.size - start <= WALK_CAP:
            return start, max(start, end)
        return super().window(start, count)

    async def _items(self, start: int, end: int) -> list[Item]:
        if self.back and self.size - start < end:
            found = await self._walk(self.last, self.back, self.size - end, end - start)
            return found[::-1]
        return await self._walk(self.first, self.ahead, start, end - start)

    async def _walk(self, node: int, fields: list[int], skip: int, take: int) -> list[Item]:
        for _ in range(skip):
            if not node:
                return []
            node = _ref((await self.values.field_values(node, fields[:1]))[0])
        found: list[Item] = []
        while node and len(found) < take:
            link, *item = await self.values.field_values(node, fields)
            found.append(Item(item[0], item[1]) if self.is_map else Item(None, item[0]))
            node = _ref(link)
        return found


NodeReader = Callable[[int], Awaitable[tuple[Item | None, int]]]  # a node → its item (if any) and next node


class Buckets(Elements):
    """A hash table of bins, each a chain of nodes (HashMap, ConcurrentHashMap), iterated bin by bin."""

    walked = True
    is_map = True

    def __init__(self, values: Values, size: int, table: int, length: int, node: NodeReader) -> None:
        super().__init__(size)
        self.values, self.table, self.length, self.node = values, table, length, node

    async def _items(self, start: int, end: int) -> list[Item]:
        found: list[Item] = []
        position = slot = 0
        while slot < self.length and position < end:
            chunk = await self.values.array_items(self.table, slot, min(SLOT_CHUNK, self.length - slot))
            slot += len(chunk) or self.length
            heads = [_ref(value) for value in chunk if value.value]
            while heads and position < end:
                needed = end - position  # each bin holds at least one node: no more bins than that are read
                batch, heads = heads[:needed], heads[needed:]
                for item in await self._bins(batch, needed):
                    if start <= position < end:
                        found.append(item)
                    position += 1
        return found

    async def _bins(self, heads: list[int], needed: int) -> list[Item]:
        """The items of the bins starting at ``heads``, in order, until ``needed`` are certain: one
        request per link, the bins' nodes read together."""
        bins: list[list[Item]] = [[] for _ in heads]
        frontier = list(enumerate(heads))
        budget = self.size + 2 * len(heads)  # a chain that loops (a map torn mid-update) ends here
        while frontier and budget > 0 and _settled(bins, {index for index, _ in frontier}) < needed:
            budget -= len(frontier)
            read = await _pipelined(self.node, [node for _, node in frontier])
            following = []
            for (index, _), (item, link) in zip(frontier, read, strict=True):
                if item is not None:
                    bins[index].append(item)
                if link:
                    following.append((index, link))
            frontier = following
        unfinished = {index for index, _ in frontier}
        ordered: list[Item] = []
        for index, items in enumerate(bins):
            ordered += items
            if index in unfinished:
                break
        return ordered


def _settled(bins: list[list[Item]], unfinished: set[int]) -> int:
    """How many leading items of ``bins`` are in their final place (up to the first bin not fully read)."""
    count = 0
    for index, items in enumerate(bins):
        count += len(items)
        if index in unfinished:
            break
    return count


class TreeNode(NamedTuple):
    left: int
    right: int
    item: Item


class Tree(Elements):
    """TreeMap's red-black tree, read in order (sorted by key). Reaching a position skips whole left
    subtrees, each counted in one sweep whose requests go together level by level, rather than one
    request after another; ``fields``: left, right, key, value."""

    walked = True
    is_map = True

    def __init__(self, values: Values, size: int, root: int, fields: list[int]) -> None:
        super().__init__(size)
        self.values, self.root, self.fields = values, root, fields
        self._nodes: dict[int, TreeNode] = {}
        self._sizes: dict[int, int] = {}  # node → how many nodes its subtree holds

    async def _items(self, start: int, end: int) -> list[Item]:
        pending: list[tuple[int, Item]] = []  # ancestors still to list: (right child, item)
        node, position = await self._skip(start, pending)
        found: list[Item] = []
        visits = 0
        while (pending or node) and position < end:
            while node and visits <= self.size:  # a tree that loops (torn mid-update) ends here
                visits += 1
                read = await self._node(node)
                pending.append((read.right, read.item))
                node = read.left
            if not pending:
                break
            node, item = pending.pop()
            if position >= start:
                found.append(item)
            position += 1
        return found

    async def _skip(self, start: int, pending: list[tuple[int, Item]]) -> tuple[int, int]:
        """Descends to position ``start``: the node to walk on from, and the position reached."""
        node, position = self.root, 0
        for _ in range(self.size + 1):
            if not node or position >= start:
                break
            read = await self._node(node)
            after_left = position + await self._count(read.left)
            if start <= after_left:
                pending.append((read.right, read.item))
                if start == after_left:
                    return 0, after_left
                node = read.left
            else:
                position, node = after_left + 1, read.right
        return node, position

    async def _count(self, root: int) -> int:
        """The size of ``root``'s subtree, its nodes read level by level (each level's together)."""
        if root and root not in self._sizes:
            order: list[int] = []
            level, seen = [root], {root}
            while level and len(order) <= self.size:
                nodes = await _pipelined(self._node, level)
                order += level
                level = [child for node in nodes for child in (node.left, node.right)
                         if child and child not in seen and child not in self._sizes]
                seen.update(level)
            for node_id in reversed(order):  # children before their parents
                read = self._nodes[node_id]
                self._sizes[node_id] = 1 + self._sizes.get(read.left, 0) + self._sizes.get(read.right, 0)
        return self._sizes.get(root, 0)

    async def _node(self, node: int) -> TreeNode:
        found = self._nodes.get(node)
        if found is None:
            left, right, key, value = await self.values.field_values(node, self.fields)
            found = self._nodes[node] = TreeNode(_ref(left), _ref(right), Item(key, value))
        return found


class Sparse(Elements):
    """``Set.of``/``Map.of`` past two: an open-addressed table (key-value pairs: ``stride`` 2), null
    where empty, iterated as ImmutableCollections' iterators do: from a per-run salted slot ``first``,
    upwards or downwards, wrapping."""

    def __init__(self, values: Values, size: int, table: int, length: int, stride: int, first: int,
                 upwards: bool) -> None:
        super().__init__(size)
        self.values, self.table, self.stride, self.first, self.upwards = values, table, stride, first, upwards
        self.slots = length // stride
        self.is_map = stride == 2

    async def _items(self, start: int, end: int) -> list[Item]:
        found: list[Item] = []
        position = 0
        async for slot in self._in_order():
            if not slot[0].value:
                continue
            if position >= start:
                found.append(Item(slot[0], slot[1]) if self.is_map else Item(None, slot[0]))
            position += 1
            if position >= end:
                break
        return found

    async def _in_order(self) -> AsyncIterator[list[Value]]:
        for low, high in self._runs():
            bounds = list(range(low, high, SLOT_CHUNK))
            for chunk_low in bounds if self.upwards else bounds[::-1]:
                chunk_high = min(chunk_low + SLOT_CHUNK, high)
                flat = await self.values.array_items(self.table, chunk_low * self.stride,
                                                     (chunk_high - chunk_low) * self.stride)
                slots = [flat[at:at + self.stride] for at in range(0, len(flat), self.stride)]
                for slot in slots if self.upwards else slots[::-1]:
                    yield slot

    def _runs(self) -> list[tuple[int, int]]:
        """The slot ranges in visiting order (each read upwards or downwards as the iterator goes)."""
        if self.upwards:
            after = (self.first + 1) % self.slots
            return [(after, self.slots), (0, after)]
        before = (self.first - 1) % self.slots
        return [(0, before + 1), (before + 1, self.slots)]


class _Projection(Elements):
    """One side of a map's entries as a collection of their own."""

    def __init__(self, inner: Elements) -> None:
        super().__init__(inner.size)
        self.inner = inner
        self.walked, self.from_end = inner.walked, inner.from_end

    def window(self, start: int, count: int) -> tuple[int, int]:
        return self.inner.window(start, count)


class KeysOf(_Projection):
    """A set kept as a map's keys (HashSet, TreeSet, …)."""

    async def _items(self, start: int, end: int) -> list[Item]:
        return [Item(None, item.key) for item in await self.inner.items(start, end) if item.key is not None]


class ValuesOf(_Projection):
    """A map's values as a collection (``map.values()``)."""

    async def _items(self, start: int, end: int) -> list[Item]:
        return [Item(None, item.value) for item in await self.inner.items(start, end)]


Opener = Callable[[int, JavaClass], Awaitable[Elements]]


class Layouts:
    """Opens an object as its elements when its class is, or extends, a JDK collection whose layout is
    known here (a ``class MyList extends ArrayList`` reads as an ArrayList)."""

    def __init__(self, values: Values) -> None:
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
            inner = _ref((await self.values.field_values(object_id, [outer]))[0])
        else:
            inner = _ref((await self._read(object_id, layout, field))[0])
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
        return await self._slots(_ref(array), _int(size))

    async def _vector(self, object_id: int, cls: JavaClass) -> Elements:
        array, size = await self._read(object_id, cls, "elementData", "elementCount")
        return await self._slots(_ref(array), _int(size))

    async def _priority_queue(self, object_id: int, cls: JavaClass) -> Elements:
        array, size = await self._read(object_id, cls, "queue", "size")  # heap order, as its iterator
        return await self._slots(_ref(array), _int(size))

    async def _array_deque(self, object_id: int, cls: JavaClass) -> Elements:
        array, head, tail = await self._read(object_id, cls, "elements", "head", "tail")
        ring = _ref(array)
        if not ring:
            return Listed([])
        length = await self.values.array_length(ring)
        return await self._slots(ring, (_int(tail) - _int(head)) % max(length, 1), _int(head), ring=True)

    async def _whole_array(self, object_id: int, cls: JavaClass, field: str) -> Elements:
        array = _ref((await self._read(object_id, cls, field))[0])
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
        if not _ref(first):
            return Listed([])
        node = await self._jdk_class("java.util.LinkedList$Node")
        return Chain(self.values, _int(size), _ref(first), await self._ids(node, "next", "item"), False,
                     _ref(last), await self._ids(node, "prev", "item"))

    async def _linked_hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        size, head, tail = await self._read(object_id, cls, "size", "head", "tail")
        if not _ref(head):
            return Listed([], is_map=True)
        entry = await self._jdk_class("java.util.LinkedHashMap$Entry")
        return Chain(self.values, _int(size), _ref(head), await self._ids(entry, "after", "key", "value"), True,
                     _ref(tail), await self._ids(entry, "before", "key", "value"))

    async def _hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        table, size = await self._read(object_id, cls, "table", "size")
        if not _ref(table) or not _int(size):
            return Listed([], is_map=True)
        fields = await self._ids(await self._jdk_class("java.util.HashMap$Node"), "key", "value", "next")

        async def node(node_id: int) -> tuple[Item | None, int]:
            key, value, link = await self.values.field_values(node_id, fields)
            return Item(key, value), _ref(link)

        return Buckets(self.values, _int(size), _ref(table), await self.values.array_length(_ref(table)), node)

    async def _concurrent_hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        table, base, cells = await self._read(object_id, cls, "table", "baseCount", "counterCells")
        size = _int(base) + await self._counted(_ref(cells))
        if not _ref(table) or size <= 0:
            return Listed([], is_map=True)
        fields = await self._ids(await self._jdk_class("java.util.concurrent.ConcurrentHashMap$Node"), "hash", "key",
                                 "val", "next")

        async def node(node_id: int) -> tuple[Item | None, int]:
            hashed, key, value, link = await self.values.field_values(node_id, fields)
            if _int(hashed) >= 0:
                return Item(key, value), _ref(link)
            if _int(hashed) == TREEBIN:
                tree_bin = await self._jdk_class("java.util.concurrent.ConcurrentHashMap$TreeBin")
                return None, _ref((await self._read(node_id, tree_bin, "first"))[0])
            return None, 0  # a bin being moved by a resize (its nodes are in the next table) or reserved

        return Buckets(self.values, size, _ref(table), await self.values.array_length(_ref(table)), node)

    async def _counted(self, cells: int) -> int:
        """The sum of ConcurrentHashMap's counter cells (its size is ``baseCount`` plus them)."""
        if not cells:
            return 0
        found = [_ref(cell) for cell in await self.values.array_items(cells, 0, await self.values.array_length(cells))]
        cell_class = await self._jdk_class("java.util.concurrent.ConcurrentHashMap$CounterCell")
        value = await self._ids(cell_class, "value")
        counts = await _pipelined(lambda cell: self.values.field_values(cell, value), [cell for cell in found if cell])
        return sum(_int(count[0]) for count in counts)

    async def _tree_map(self, object_id: int, cls: JavaClass) -> Elements:
        root, size = await self._read(object_id, cls, "root", "size")
        if not _ref(root):
            return Listed([], is_map=True)
        entry = await self._jdk_class("java.util.TreeMap$Entry")
        return Tree(self.values, _int(size), _ref(root), await self._ids(entry, "left", "right", "key", "value"))

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
            self._immutables = (_int(salt) if salt is not None and reverse is not None else None,
                                bool(reverse.value) if reverse is not None else True,
                                _ref(empty) if empty is not None else 0)
        return self._immutables

    async def _present(self, *values: Value) -> list[Value]:
        """The values that fill a slot: not null, not ImmutableCollections.EMPTY."""
        _, _, empty = await self._immutable_statics()
        return [value for value in values if _ref(value) and _ref(value) != empty]

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
        length = await self.values.array_length(_ref(table)) if _ref(table) else 0
        if not length or not _int(size):
            return Listed([], is_map=stride == 2)
        salt, reverse, _ = await self._immutable_statics()
        first = -1 if salt is None else (salt * (length // stride)) >> 32  # as SetNIterator, MapNIterator
        return Sparse(self.values, _int(size), _ref(table), length, stride, first, reverse or salt is None)

    async def _identity_hash_map(self, object_id: int, cls: JavaClass) -> Elements:
        """Keys and values side by side in ``table``, null where empty, iterated from slot 0 up."""
        table, size = await self._read(object_id, cls, "table", "size")
        length = await self.values.array_length(_ref(table)) if _ref(table) else 0
        if not length or not _int(size):
            return Listed([], is_map=True)
        return Sparse(self.values, _int(size), _ref(table), length, 2, -1, True)

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
