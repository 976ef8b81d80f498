"""A collection's elements by position, read the way its layout keeps them: a slice of an array
(ArrayList, ArrayDeque's ring), links walked one to the next (LinkedList, LinkedHashMap), a hash
table's bins (HashMap), a red-black tree in order (TreeMap), an open-addressed table
(``Set.of``/``Map.of``, IdentityHashMap). ``collections.py`` says which JDK class has which layout
and where its fields are; this module only walks what it is given, over the ``Reads`` it needs.

The work is bounded: array-backed collections read only the slice asked for; linked ones (LinkedList,
LinkedHashMap, hash chains, TreeMap) cost a request per element walked, so one listing walks at most
``WALK_CAP`` elements; nodes that do not wait on each other (other hash bins, a level of a TreeMap
subtree) are asked together, their round trips overlapping.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import NamedTuple, Protocol, TypeVar

from polydbg.jdwp.codec import Tag, Value

WALK_CAP = 10_000  # links one listing may walk
SLOT_CHUNK = 1024  # table slots read per request while scanning a hash table
IN_FLIGHT = 128  # requests sent together (more only slows the client's bookkeeping of what is pending)
_INTEGRAL = frozenset({Tag.INT, Tag.LONG, Tag.SHORT, Tag.BYTE})


class Reads(Protocol):
    """The JDWP reads a walk makes (``values.Values`` has them)."""

    async def array_items(self, object_id: int, start: int, count: int) -> list[Value]: ...

    async def field_values(self, object_id: int, field_ids: list[int]) -> list[Value]: ...


class UnknownLayout(Exception):
    """A field a layout needs is missing or of another kind: this JDK lays the class out otherwise."""


class Item(NamedTuple):
    key: Value | None  # a map entry's key; None in lists and sets
    value: Value


T = TypeVar("T")


async def pipelined(read: Callable[[int], Awaitable[T]], ids: list[int]) -> list[T]:
    """``read`` of each id, IN_FLIGHT requests at a time: their round trips overlap."""
    found: list[T] = []
    for at in range(0, len(ids), IN_FLIGHT):
        found += await asyncio.gather(*(read(one) for one in ids[at:at + IN_FLIGHT]))
    return found


def int_of(value: Value) -> int:
    if value.tag not in _INTEGRAL:
        raise UnknownLayout
    return int(value.value)


def ref_of(value: Value) -> int:
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

    def __init__(self, values: Reads, array: int, size: int, head: int = 0, capacity: int = 0) -> None:
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

    def __init__(self, values: Reads, size: int, first: int, ahead: list[int], is_map: bool,
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
            node = ref_of((await self.values.field_values(node, fields[:1]))[0])
        found: list[Item] = []
        while node and len(found) < take:
            link, *item = await self.values.field_values(node, fields)
            found.append(Item(item[0], item[1]) if self.is_map else Item(None, item[0]))
            node = ref_of(link)
        return found


NodeReader = Callable[[int], Awaitable[tuple[Item | None, int]]]  # a node → its item (if any) and next node


class Buckets(Elements):
    """A hash table of bins, each a chain of nodes (HashMap, ConcurrentHashMap), iterated bin by bin."""

    walked = True
    is_map = True

    def __init__(self, values: Reads, size: int, table: int, length: int, node: NodeReader) -> None:
        super().__init__(size)
        self.values, self.table, self.length, self.node = values, table, length, node

    async def _items(self, start: int, end: int) -> list[Item]:
        found: list[Item] = []
        position = slot = 0
        while slot < self.length and position < end:
            chunk = await self.values.array_items(self.table, slot, min(SLOT_CHUNK, self.length - slot))
            slot += len(chunk) or self.length
            heads = [ref_of(value) for value in chunk if value.value]
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
            read = await pipelined(self.node, [node for _, node in frontier])
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

    def __init__(self, values: Reads, size: int, root: int, fields: list[int]) -> None:
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
                nodes = await pipelined(self._node, level)
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
            found = self._nodes[node] = TreeNode(ref_of(left), ref_of(right), Item(key, value))
        return found


class Sparse(Elements):
    """``Set.of``/``Map.of`` past two: an open-addressed table (key-value pairs: ``stride`` 2), null
    where empty, iterated as ImmutableCollections' iterators do: from a per-run salted slot ``first``,
    upwards or downwards, wrapping."""

    def __init__(self, values: Reads, size: int, table: int, length: int, stride: int, first: int,
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
