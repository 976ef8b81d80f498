"""What the gdb backend's parts share (state.py): commands with the inspection deadline read at each call,
gdb's absence as an error, and whether the program runs. No gdb runs."""

from __future__ import annotations

import pytest

from polydbg.backends.gdb.state import Execution, GdbState
from polydbg.backends.kit import timeouts
from polydbg.errors import AdapterGoneError
from polydbg.mi.client import MiResult


class Client:
    is_closed = False

    def __init__(self) -> None:
        self.calls: list[tuple[str, float]] = []

    async def command(self, command: str, timeout: float) -> MiResult:
        self.calls.append((command, timeout))
        return MiResult("done", {})


async def test_commands_wait_the_inspection_deadline_read_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    gdb = GdbState("c")
    with pytest.raises(AdapterGoneError):
        await gdb.cmd("-thread-info")
    gdb.fire("-var-delete v1")  # nothing to send it to: dropped
    client = Client()
    gdb.mi = client  # type: ignore[assignment]
    monkeypatch.setattr(timeouts, "INSPECT_S", 0.5)
    await gdb.cmd("-thread-info")
    assert client.calls == [("-thread-info", 0.5)]


def test_an_interrupt_is_taken_by_one_stop() -> None:
    execution = Execution()
    execution.ran()
    assert execution.running and not execution.stopped.is_set()
    execution.interrupting = True
    execution.halted()
    assert not execution.running and execution.stopped.is_set()
    assert execution.take_interrupt() and not execution.take_interrupt()
