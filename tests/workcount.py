"""Work counted, not timed: guards against quadratic behaviour that give the same answer on every host.

A test that bounds CPU or wall time fails on a slow or loaded machine and passes a regression that is small
there; counting what the code examines (the attribute reads of a class's objects, the equality tests of
breakpoint ids) is the same number everywhere. Performance itself is measured by the scripts under bench/.

A ``Budget`` raises as soon as it is overspent, so a regression fails at once instead of running its
quadratic course; it also keeps counting, and ``check`` fails the test even if the code under test
swallowed that first error.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any


class BudgetSpent(AssertionError):
    pass


class Budget:
    def __init__(self, what: str, limit: int) -> None:
        self.what = what
        self.limit = limit
        self.spent = 0

    def spend(self) -> None:
        self.spent += 1
        if self.spent == self.limit + 1:
            raise BudgetSpent(self.verdict())

    def verdict(self) -> str:
        return f"more than {self.limit:,} {self.what}: work that grows with the square of the breakpoints"

    def check(self) -> None:
        assert self.spent <= self.limit, self.verdict()


@contextlib.contextmanager
def reads_of(cls: type, budget: Budget) -> Iterator[Budget]:
    """Every attribute read of a ``cls`` object (its fields, properties and methods) spends one unit."""
    assert all("__getattribute__" not in vars(c) for c in cls.__mro__[:-1]), f"{cls.__name__} reads its own way"

    def counted(self: Any, name: str) -> Any:
        budget.spend()
        return object.__getattribute__(self, name)

    setattr(cls, "__getattribute__", counted)  # noqa: B010 (mypy refuses assigning a method)
    try:
        yield budget
    finally:
        delattr(cls, "__getattribute__")


def counted_ids(budget: Budget) -> type[int]:
    """An int whose equality tests spend one unit each: ids made of it count how many times code compared
    one breakpoint's id with another's (a list's ``in`` compares with each element; a set or dict hashes)."""

    class CountedId(int):
        __hash__ = int.__hash__

        def __eq__(self, other: object) -> bool:
            budget.spend()
            return int.__eq__(self, other) is True

        def __ne__(self, other: object) -> bool:
            return not self == other

    return CountedId
