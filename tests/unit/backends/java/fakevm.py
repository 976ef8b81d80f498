"""A ``Vm`` that answers event requests itself and knows classes given to it, for the java backend's
parts that bind breakpoints (no JVM: the JDWP client is never started)."""

from __future__ import annotations

from typing import Any, cast

from polydbg.backends.java.classes import JavaClass, Method
from polydbg.backends.java.vm import Vm
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import TypeTag


class FakeVm(Vm):
    def __init__(self) -> None:
        super().__init__()
        self.connect(JdwpClient(cast(Any, None)), self._no_source)
        self.set: list[tuple[int, int]] = []  # (kind, request id) of each EventRequest.Set
        self.cleared: list[tuple[int, int]] = []
        self._next = 0

    @staticmethod
    async def _no_source(_cls: JavaClass) -> str | None:
        return None

    async def event_request(self, kind: int, suspend: int, modifiers: bytes, count: int) -> int:
        self._next += 1
        self.set.append((kind, self._next))
        return self._next

    async def clear_request(self, kind: int, request_id: int) -> None:
        self.cleared.append((kind, request_id))

    def load(self, class_id: int, signature: str, source: str, lines: dict[int, list[tuple[int, int]]]) -> JavaClass:
        """A loaded class with its source file and, per method id, its line table (code index, line)."""
        cls = self.classes.known(class_id, TypeTag.CLASS, signature)
        cls.source, cls.source_asked, cls.smap_asked = source, True, True
        cls.methods = {mid: Method(mid, f"m{mid}", "()V", 0, lines=table) for mid, table in lines.items()}
        return cls
