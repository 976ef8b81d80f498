"""An endless evaluation costs one deadline: the next one on its thread is refused at once, until it ends."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from polydbg.backends.dap.evaluation import Evaluations
from polydbg.backends.kit import timeouts
from polydbg.dap.client import DapClient
from polydbg.errors import AdapterTimeoutError
from polydbg.transport.streams import MemoryStream, memory_pair


@pytest.fixture
async def pair() -> AsyncIterator[tuple[DapClient, MemoryStream[dict[str, Any]]]]:
    client_end, adapter_end = memory_pair()
    client = DapClient(client_end, "fake")
    client.start()
    yield client, adapter_end
    await client.close()


async def test_an_evaluation_past_its_deadline_blocks_its_thread_until_it_answers(
        pair: tuple[DapClient, MemoryStream[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch) -> None:
    client, adapter = pair
    monkeypatch.setattr(timeouts, "INSPECT_S", 0.05)  # read at the call
    evaluations = Evaluations("fake")
    with pytest.raises(AdapterTimeoutError, match=r"still running after 0\.05 s .* fake cannot interrupt"):
        await evaluations.run(client, 1, "spin()", {"expression": "spin()"})
    endless = await adapter.receive()
    assert endless is not None and endless["arguments"] == {"expression": "spin()"}
    with pytest.raises(AdapterTimeoutError, match=r"'spin\(\)' is still running in the program"):
        evaluations.refuse_if_busy(1)
    evaluations.refuse_if_busy(2)  # another thread is free
    evaluations.refuse_if_busy(None)
    await adapter.send({"seq": 1, "type": "response", "request_seq": endless["seq"], "command": "evaluate",
                        "success": True, "body": {"result": "done"}})

    async def free() -> None:
        while True:
            try:
                return evaluations.refuse_if_busy(1)
            except AdapterTimeoutError:
                await asyncio.sleep(0)  # a loop turn: the late answer is being dispatched

    await asyncio.wait_for(free(), 2.0)


async def test_an_answer_in_time_is_the_body(pair: tuple[DapClient, MemoryStream[dict[str, Any]]]) -> None:
    client, adapter = pair
    task = asyncio.create_task(Evaluations("fake").run(client, None, "1 + 1", {"expression": "1 + 1"}))
    request = await adapter.receive()
    assert request is not None
    await adapter.send({"seq": 1, "type": "response", "request_seq": request["seq"], "command": "evaluate",
                        "success": True, "body": {"result": "2"}})
    assert await task == {"result": "2"}


async def test_an_adapter_that_cannot_be_evaluating_is_not_answering_not_running_an_expression(
        pair: tuple[DapClient, MemoryStream[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch) -> None:
    client, _ = pair
    monkeypatch.setattr(timeouts, "INSPECT_S", 0.05)
    evaluations = Evaluations("fake", lambda: "its process (pid 7) is stopped by a signal")
    with pytest.raises(AdapterTimeoutError, match=r"^fake is not answering \(no answer to the evaluation within "
                                                   r"0\.05 s\): its process \(pid 7\) is stopped by a signal\."):
        await evaluations.run(client, 1, "x", {"expression": "x"})
    with pytest.raises(AdapterTimeoutError, match=r"^fake is not answering \(still no answer to 'x' after"):
        evaluations.refuse_if_busy(1)


async def test_an_evaluation_behind_an_unanswered_request_is_not_said_to_run_endlessly(
        pair: tuple[DapClient, MemoryStream[dict[str, Any]]], monkeypatch: pytest.MonkeyPatch) -> None:
    """debugpy answers in order: busy with stack requests sent before it, it had not begun the evaluation, which was
    still said to be "an endless loop" and refused on its thread from then on."""
    client, _ = pair
    monkeypatch.setattr(timeouts, "INSPECT_S", 0.05)
    busy = client.send_request("stackTrace", {"threadId": 5})
    evaluations = Evaluations("fake")
    with pytest.raises(AdapterTimeoutError) as failed:
        await evaluations.run(client, 1, "len(ts)", {"expression": "len(ts)"})
    said = str(failed.value)
    assert "has not answered the 'stackTrace' sent" in said and "may not have started" in said, said
    assert "endless" not in said and "still running" not in said, said
    evaluations.refuse_if_busy(1)  # not remembered as running: the next one is sent
    busy.cancel()
