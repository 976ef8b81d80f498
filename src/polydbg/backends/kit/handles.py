"""Handle tables: ints handed out for things valid for one stop, and breakpoint id maps."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

T = TypeVar("T")
N = TypeVar("N", bound=Hashable)


class HandleTable(Generic[T]):
    """Ints for values valid until ``clear()`` (the program moved). Numbers are never reused, so a
    handle from an earlier stop is recognizably stale (``is_stale``) instead of silently meaning
    something else; a ``key`` hands out the same int for the same thing within one stop."""

    def __init__(self, first: int = 1) -> None:
        self._next = first
        self._floor = first
        self._items: dict[int, T] = {}
        self._by_key: dict[Hashable, int] = {}

    def add(self, value: T, key: Hashable | None = None) -> int:
        if key is not None:
            known = self._by_key.get(key)
            if known is not None:
                return known
        handle = self._next
        self._next += 1
        self._items[handle] = value
        if key is not None:
            self._by_key[key] = handle
        return handle

    def get(self, handle: int) -> T | None:
        return self._items.get(handle)

    def is_stale(self, handle: int) -> bool:
        """True for a handle given out before the last ``clear()``."""
        return handle < self._floor and handle not in self._items

    def clear(self) -> None:
        self._items.clear()
        self._by_key.clear()
        self._floor = self._next

    @property
    def next(self) -> int:
        """The number the next handle gets (a following table starts here, so none is reused)."""
        return self._next

    def __len__(self) -> int:
        return len(self._items)


class IdMap(Generic[N]):
    """polydbg's breakpoint ids ↔ one debugger's own breakpoint handles (numbers, strings, tuples)."""

    def __init__(self) -> None:
        self._to_native: dict[int, N] = {}
        self._to_id: dict[N, int] = {}

    def bind(self, bp_id: int, native: N) -> None:
        old = self._to_native.pop(bp_id, None)
        if old is not None:
            self._to_id.pop(old, None)
        previous_owner = self._to_id.get(native)
        if previous_owner is not None:
            self._to_native.pop(previous_owner, None)
        self._to_native[bp_id] = native
        self._to_id[native] = bp_id

    def id_of(self, native: N) -> int | None:
        return self._to_id.get(native)

    def native_of(self, bp_id: int) -> N | None:
        return self._to_native.get(bp_id)

    def forget(self, bp_id: int) -> None:
        native = self._to_native.pop(bp_id, None)
        if native is not None:
            self._to_id.pop(native, None)

    def ids(self) -> list[int]:
        return list(self._to_native)
