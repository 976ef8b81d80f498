"""The CDP channel's own parts (the request/answer contract is in tests/unit/protocol/test_contract.py): what
an error answer reads as, events and odd messages, and a worker thread reached through its process's
``NodeWorker`` domain — its own ids and pending table, its messages wrapped in ``sendMessageToWorker`` and
unwrapped on delivery."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from polydbg.cdp.client import CdpChannel, WorkerStream, error_text
from polydbg.errors import AdapterGoneError, AdapterRequestError
from polydbg.transport.streams import MemoryStream, memory_pair

DEADLINE_S = 2.0


@dataclass
class Inspector:
    """polydbg's channel and the inspector's end of its stream."""

    channel: CdpChannel
    end: MemoryStream[dict[str, Any]]

    async def request(self) -> dict[str, Any]:
        message = await asyncio.wait_for(self.end.receive(), DEADLINE_S)
        assert message is not None
        return message


@pytest.fixture
async def inspector() -> AsyncIterator[Inspector]:
    ours, theirs = memory_pair()
    channel = CdpChannel(ours, "node")
    channel.start()
    yield Inspector(channel, theirs)
    await channel.close()


@pytest.mark.parametrize(("error", "text"), [
    ({"code": -32000, "message": "Could not find object with given id", "data": "objectId 7"},
     "Could not find object with given id: objectId 7"),
    ({"code": -32601, "message": "'Foo.bar' wasn't found"}, "'Foo.bar' wasn't found"),
    ({"code": -32000}, "request failed"),
    ("a bare string", "a bare string"),
])
def test_error_text_is_the_message_and_its_data(error: Any, text: str) -> None:
    assert error_text(error) == text


async def test_an_error_answer_fails_the_request_naming_it(inspector: Inspector) -> None:
    asking = asyncio.ensure_future(inspector.channel.request("Runtime.getProperties", {"objectId": "7"}))
    request = await inspector.request()
    assert request == {"id": 1, "method": "Runtime.getProperties", "params": {"objectId": "7"}}
    await inspector.end.send({"id": 1, "error": {"code": -32000, "message": "No object", "data": "id 7"}})
    with pytest.raises(AdapterRequestError) as refused:
        await asyncio.wait_for(asking, DEADLINE_S)
    assert refused.value.command == "Runtime.getProperties" and refused.value.message == "No object: id 7"


async def test_a_result_that_is_not_an_object_reads_as_empty(inspector: Inspector) -> None:
    asking = asyncio.ensure_future(inspector.channel.request("Debugger.resume"))
    request = await inspector.request()
    assert request["params"] == {}
    await inspector.end.send({"id": request["id"], "result": None})
    assert await asyncio.wait_for(asking, DEADLINE_S) == {}


async def test_events_carry_their_params_and_odd_messages_are_ignored(inspector: Inspector) -> None:
    got: list[tuple[str, dict[str, Any]]] = []
    arrived = asyncio.Event()

    def paused(params: dict[str, Any]) -> None:
        got.append(("paused", params))

    def resumed(params: dict[str, Any]) -> None:
        got.append(("resumed", params))
        arrived.set()

    inspector.channel.on_event("Debugger.paused", paused)
    inspector.channel.on_event("Debugger.resumed", resumed)
    await inspector.end.send({"method": "Debugger.paused", "params": {"reason": "other", "callFrames": []}})
    await inspector.end.send({"id": 99, "result": {}})  # an answer nobody waits for
    await inspector.end.send({"params": {"no": "method"}})
    await inspector.end.send({"method": 42})
    await inspector.end.send({"method": "Debugger.resumed", "params": ["not", "an", "object"]})
    await asyncio.wait_for(arrived.wait(), DEADLINE_S)
    assert got == [("paused", {"reason": "other", "callFrames": []}), ("resumed", {})]
    assert not inspector.channel.is_closed


# -- a worker thread, through its process's connection -------------------------------------------------------


@dataclass
class Worker:
    process: Inspector  # the process's channel and the inspector's end of it
    stream: WorkerStream
    channel: CdpChannel  # the worker's own channel, on the stream


@pytest.fixture
async def worker(inspector: Inspector) -> AsyncIterator[Worker]:
    stream = WorkerStream(inspector.channel, "session-7", "node worker 1")
    channel = CdpChannel(stream, "node worker 1")
    channel.start()
    yield Worker(inspector, stream, channel)
    await channel.close()


async def forward(worker: Worker) -> dict[str, Any]:
    """The next message the worker's channel sent, unwrapped by the inspector (whose wrapper it answers)."""
    wrapper = await worker.process.request()
    assert wrapper["method"] == "NodeWorker.sendMessageToWorker"
    assert wrapper["params"]["sessionId"] == "session-7"
    await worker.process.end.send({"id": wrapper["id"], "result": {}})
    message = json.loads(wrapper["params"]["message"])
    assert isinstance(message, dict)
    return message


async def test_a_worker_request_goes_through_its_owner_and_its_answer_comes_back(worker: Worker) -> None:
    own = asyncio.ensure_future(worker.process.channel.request("Runtime.enable"))  # the process's id 1
    assert (await worker.process.request())["id"] == 1
    asking = asyncio.ensure_future(worker.channel.request("Runtime.evaluate", {"expression": "1 + 2"}))
    message = await forward(worker)
    assert message == {"id": 1, "method": "Runtime.evaluate", "params": {"expression": "1 + 2"}}  # its own ids
    worker.stream.deliver(json.dumps({"id": 1, "result": {"result": {"type": "number", "value": 3}}}))
    assert await asyncio.wait_for(asking, DEADLINE_S) == {"result": {"type": "number", "value": 3}}
    assert not own.done()  # the worker's answer did not resolve the process's request with the same id
    await worker.process.end.send({"id": 1, "result": {}})
    assert await asyncio.wait_for(own, DEADLINE_S) == {}


async def test_a_worker_event_reaches_the_worker_channel(worker: Worker) -> None:
    paused = asyncio.Event()
    worker.channel.on_event("Debugger.paused", lambda params: paused.set())
    worker.stream.deliver(json.dumps({"method": "Debugger.paused", "params": {"reason": "breakpoint"}}))
    await asyncio.wait_for(paused.wait(), DEADLINE_S)


async def test_a_message_that_is_not_json_is_ignored(worker: Worker, caplog: pytest.LogCaptureFixture) -> None:
    asking = asyncio.ensure_future(worker.channel.request("Debugger.enable"))
    message = await forward(worker)
    worker.stream.deliver("{not json")
    worker.stream.deliver("[1, 2]")  # JSON, but not a message
    worker.stream.deliver(json.dumps({"id": message["id"], "result": {"debuggerId": "w1"}}))
    assert await asyncio.wait_for(asking, DEADLINE_S) == {"debuggerId": "w1"}
    assert "not JSON" in caplog.text


async def test_a_detached_worker_ends_its_channel_and_fails_its_waiters(worker: Worker) -> None:
    asking = asyncio.ensure_future(worker.channel.request("Runtime.evaluate", {"expression": "x"}))
    await forward(worker)
    worker.stream.detached()
    with pytest.raises(AdapterGoneError, match="node worker 1 closed its connection"):
        await asyncio.wait_for(asking, DEADLINE_S)
    await asyncio.wait_for(worker.channel.closed.wait(), DEADLINE_S)
    assert not worker.process.channel.is_closed  # the process's connection goes on


async def test_closing_a_worker_detaches_it_through_its_owner(worker: Worker) -> None:
    await worker.channel.close()
    detach = await worker.process.request()
    assert detach["method"] == "NodeWorker.detach" and detach["params"] == {"sessionId": "session-7"}
    assert await asyncio.wait_for(worker.stream.receive(), DEADLINE_S) is None


async def test_a_worker_of_a_closed_process_closes_without_a_detach(worker: Worker) -> None:
    await worker.process.channel.close()
    await worker.stream.close()
    await asyncio.wait_for(worker.channel.closed.wait(), DEADLINE_S)  # the worker's channel read its end
    assert await asyncio.wait_for(worker.process.end.receive(), DEADLINE_S) is None  # the end, and no detach
    with pytest.raises(AdapterGoneError):  # and nothing more can be sent through the owner
        await worker.stream.send({"id": 5, "method": "Runtime.evaluate"})
