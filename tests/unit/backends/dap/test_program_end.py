"""The end of a program under a DAP adapter: an exit the adapter reported is not a death to report for it when
the process is seen gone (the adapter is still delivering what the program printed, and ends itself after), but a
process gone unreported is."""

from __future__ import annotations

import asyncio

import pytest

from polydbg.backends.dap.backend import DapBackend
from polydbg.backends.kit import timeouts
from tests.fakes import RecordingListener


async def test_a_process_gone_after_its_exit_leaves_the_adapter_time_to_deliver_the_rest(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(timeouts, "AFTER_EXIT_S", 0.05)
    listener = RecordingListener()
    backend = DapBackend(listener)
    backend._on_exited({"exitCode": 0})
    backend._program_gone("the program (pid 1) has ended but dap did not report it")
    await asyncio.sleep(0)
    assert listener.kinds() == ["exited"]  # not ended: the adapter may still send output
    backend._on_output({"category": "stdout", "output": "late line\n"})
    await listener.until("terminated")  # the adapter never said it ended: after AFTER_EXIT_S it is taken as ended
    assert listener.events == [("exited", 0), ("output", ("stdout", "late line\n")), ("terminated", None)]


async def test_a_process_gone_unreported_ends_the_session_with_its_cause() -> None:
    listener = RecordingListener()
    backend = DapBackend(listener)
    backend._program_gone("the program (pid 1) has ended but dap did not report it")
    assert listener.events == [("terminated", "the program (pid 1) has ended but dap did not report it")]
