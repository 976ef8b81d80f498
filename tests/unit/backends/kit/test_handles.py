"""Handle tables: ints valid for one stop, never reused, so an old one is known stale; breakpoint id maps."""

from __future__ import annotations

from polydbg.backends.kit.handles import HandleTable, IdMap


def test_handles_count_up_from_the_first_and_resolve_to_their_values() -> None:
    table: HandleTable[str] = HandleTable(first=5)
    assert (table.add("a"), table.add("b")) == (5, 6)
    assert (table.get(5), table.get(6), table.get(7)) == ("a", "b", None)
    assert len(table) == 2 and table.next == 7


def test_a_key_gives_the_same_handle_within_a_stop_and_a_new_one_after_clear() -> None:
    table: HandleTable[str] = HandleTable()
    first = table.add("locals of frame 0", key=("scope", 0))
    assert table.add("asked again", key=("scope", 0)) == first
    assert table.get(first) == "locals of frame 0"  # the first value stays
    assert table.add("no key") != table.add("no key")  # without a key every add is new
    table.clear()
    again = table.add("locals of frame 0", key=("scope", 0))
    assert again > first


def test_handles_before_a_clear_are_stale_and_never_reused() -> None:
    table: HandleTable[str] = HandleTable()
    old = [table.add(name) for name in ("a", "b", "c")]
    table.clear()
    assert len(table) == 0
    assert all(table.is_stale(handle) and table.get(handle) is None for handle in old)
    new = table.add("d")
    assert new not in old and not table.is_stale(new)
    assert not table.is_stale(new + 10)  # never given out is not stale either


def test_a_following_table_starts_where_the_last_ended_and_knows_its_handles_stale() -> None:
    table: HandleTable[int] = HandleTable()
    earlier = [table.add(1), table.add(2)]
    following: HandleTable[int] = HandleTable(first=table.next)  # the next stop's refs
    assert following.add(3) == 3
    assert all(following.is_stale(handle) for handle in earlier)


def test_an_id_map_binds_both_ways_and_rebinding_drops_the_old_pairing() -> None:
    ids: IdMap[int] = IdMap()
    ids.bind(1, 101)
    ids.bind(2, 102)
    assert (ids.native_of(1), ids.id_of(102)) == (101, 2)
    ids.bind(1, 201)  # the debugger re-created breakpoint 1 under a new number
    assert ids.native_of(1) == 201 and ids.id_of(101) is None and ids.id_of(201) == 1
    ids.bind(3, 102)  # the debugger reused number 102 for another breakpoint
    assert ids.id_of(102) == 3 and ids.native_of(2) is None
    assert sorted(ids.ids()) == [1, 3]


def test_forgetting_an_id_frees_its_native_handle() -> None:
    ids: IdMap[tuple[str, int]] = IdMap()
    ids.bind(7, ("main.c", 12))
    ids.forget(7)
    ids.forget(8)  # unknown: nothing happens
    assert ids.native_of(7) is None and ids.id_of(("main.c", 12)) is None and ids.ids() == []
