"""A collection's elements walked by position over an in-memory VM: a ring buffer's wrap, a linked
list from its nearer end, hash bins with chains, a red-black tree in order, an open-addressed table in
either direction, a map's keys and values — the order each JDK iterator gives, and the requests spent."""

from __future__ import annotations

from polydbg.backends.java.elements import (
    WALK_CAP,
    ArraySlots,
    Buckets,
    Chain,
    Elements,
    Item,
    KeysOf,
    Listed,
    Sparse,
    Tree,
    ValuesOf,
    ref_of,
)
from polydbg.jdwp.codec import Tag, Value

NULL = Value(Tag.OBJECT, 0)


def i(n: int) -> Value:
    return Value(Tag.INT, n)


def ref(n: int) -> Value:
    return Value(Tag.OBJECT, n) if n else NULL


class Vm:
    """Arrays and objects' fields by id, and how many requests were made."""

    def __init__(self) -> None:
        self.arrays: dict[int, list[Value]] = {}
        self.objects: dict[int, dict[int, Value]] = {}
        self.requests = 0

    async def array_items(self, object_id: int, start: int, count: int) -> list[Value]:
        self.requests += 1
        return self.arrays[object_id][start:start + count]

    async def field_values(self, object_id: int, field_ids: list[int]) -> list[Value]:
        self.requests += 1
        return [self.objects[object_id][field] for field in field_ids]


async def listed(elements: Elements, start: int = 0, count: int = 100) -> list[object]:
    """The values (or, in a map, keys) at positions ``start..start+count``."""
    items = await elements.items(*elements.window(start, count))
    return [(item.key or item.value).value for item in items]


async def test_a_ring_buffer_is_read_from_its_head_and_wraps() -> None:
    vm = Vm()
    vm.arrays[1] = [i(3), i(4), NULL, i(1), i(2)]  # ArrayDeque: head at 3, four elements
    ring = ArraySlots(vm, 1, 4, head=3, capacity=5)
    assert await listed(ring) == [1, 2, 3, 4]
    assert vm.requests == 2  # the run to the end, then the wrapped one
    assert await listed(ring, 1, 2) == [2, 3]
    assert await listed(ArraySlots(vm, 1, 2, head=0), 0, 5) == [3, 4]  # an ArrayList reads only its size


NEXT, PREV, ITEM = 1, 2, 3


def linked(vm: Vm, count: int) -> Chain:
    """A LinkedList of 1..count, its nodes 101..100+count."""
    for n in range(1, count + 1):
        vm.objects[100 + n] = {NEXT: ref(101 + n if n < count else 0), PREV: ref(99 + n if n > 1 else 0), ITEM: i(n)}
    return Chain(vm, count, 101, [NEXT, ITEM], False, 100 + count, [PREV, ITEM])


async def test_a_linked_list_is_walked_from_its_nearer_end() -> None:
    vm = Vm()
    chain = linked(vm, 6)
    assert await listed(chain) == [1, 2, 3, 4, 5, 6]
    vm.requests = 0
    assert await listed(chain, 4, 2) == [5, 6]
    assert vm.requests == 2  # from the last node back, not six from the first
    vm.requests = 0
    assert await listed(chain, 1, 2) == [2, 3]
    assert vm.requests == 3  # one skip, two reads
    one_way = Chain(vm, 6, 101, [NEXT, ITEM], False)
    assert await listed(one_way, 4, 5) == [5, 6]


def test_a_listing_walks_at_most_walk_cap_links_from_either_end() -> None:
    vm = Vm()
    both_ways = Chain(vm, 3 * WALK_CAP, 1, [NEXT, ITEM], False, 2, [PREV, ITEM])
    one_way = Chain(vm, 3 * WALK_CAP, 1, [NEXT, ITEM], False)
    assert one_way.window(WALK_CAP - 2, 5) == (WALK_CAP - 2, WALK_CAP)
    assert both_ways.window(WALK_CAP - 2, 5) == (WALK_CAP - 2, WALK_CAP)
    assert both_ways.window(3 * WALK_CAP - 2, 5) == (3 * WALK_CAP - 2, 3 * WALK_CAP)  # near the end
    assert one_way.window(3 * WALK_CAP - 2, 5) == (3 * WALK_CAP - 2, 3 * WALK_CAP - 2)  # nothing
    assert ArraySlots(vm, 1, 3 * WALK_CAP).window(2 * WALK_CAP, 5) == (2 * WALK_CAP, 2 * WALK_CAP + 5)  # no walk


KEY, VALUE, LINK = 1, 2, 3


async def test_a_hash_table_is_iterated_bin_by_bin_each_chain_in_order() -> None:
    vm = Vm()
    vm.arrays[50] = [NULL, ref(11), NULL, ref(20), ref(30)]
    for node, key, link in ((11, 1, 12), (12, 2, 13), (13, 3, 0), (20, 4, 0), (30, 5, 31), (31, 6, 0)):
        vm.objects[node] = {KEY: i(key), VALUE: i(key * 10), LINK: ref(link)}

    async def read_node(node_id: int) -> tuple[Item | None, int]:
        key, value, link = await vm.field_values(node_id, [KEY, VALUE, LINK])
        return Item(key, value), ref_of(link)

    table = Buckets(vm, 6, 50, 5, read_node)
    assert await listed(table) == [1, 2, 3, 4, 5, 6]
    assert [item.value.value for item in await table.items(0, 6)] == [10, 20, 30, 40, 50, 60]
    assert await listed(table, 2, 3) == [3, 4, 5]
    vm.requests = 0
    assert await listed(table, 0, 1) == [1]
    assert vm.requests == 2  # the slots, then the first bin's head only


LEFT, RIGHT = 1, 2


async def test_a_tree_map_is_read_in_key_order_from_any_position() -> None:
    vm = Vm()
    #        40
    #      20   60
    #    10 30    70
    shape = {40: (20, 60), 20: (10, 30), 60: (0, 70), 10: (0, 0), 30: (0, 0), 70: (0, 0)}
    for node, (left, right) in shape.items():
        vm.objects[node] = {LEFT: ref(left), RIGHT: ref(right), 3: i(node), 4: i(-node)}
    tree = Tree(vm, 6, 40, [LEFT, RIGHT, 3, 4])
    assert await listed(tree) == [10, 20, 30, 40, 60, 70]
    for start in range(6):
        assert await listed(Tree(vm, 6, 40, [LEFT, RIGHT, 3, 4]), start, 2) == [10, 20, 30, 40, 60, 70][start:start + 2]


async def test_an_open_addressed_table_is_read_from_its_salted_slot_both_ways() -> None:
    vm = Vm()
    vm.arrays[7] = [i(1), NULL, i(2), NULL, i(3)]  # Set.of(1, 2, 3) in five slots
    assert await listed(Sparse(vm, 3, 7, 5, 1, 2, True)) == [3, 1, 2]  # slots 3, 4, 0, 1, 2
    assert await listed(Sparse(vm, 3, 7, 5, 1, 2, False)) == [1, 3, 2]  # slots 1, 0, 4, 3, 2
    assert await listed(Sparse(vm, 3, 7, 5, 1, 2, True), 1, 1) == [1]
    vm.arrays[8] = [i(1), i(10), NULL, NULL, i(2), i(20)]  # IdentityHashMap: key, value side by side
    pairs = Sparse(vm, 2, 8, 6, 2, -1, True)
    assert pairs.is_map
    assert [(item.key.value, item.value.value) for item in await pairs.items(0, 2) if item.key] == [(1, 10), (2, 20)]


async def test_a_maps_keys_and_values_are_collections_of_their_own() -> None:
    entries = Listed([Item(i(1), i(10)), Item(i(2), i(20))], is_map=True)
    assert await listed(KeysOf(entries)) == [1, 2]
    assert await listed(ValuesOf(entries)) == [10, 20]
    assert not KeysOf(entries).is_map and KeysOf(entries).size == 2
