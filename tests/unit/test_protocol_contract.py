"""The contract every protocol client keeps, checked once per protocol (DAP, GDB/MI; next CDP, JDWP).

Each harness plays the debugger's end by hand at the transport seam. The contract: answers are
matched to their requests in any order, a refusal names the request, events reach handlers by name
(a failing handler does not stop the reader), the end of the stream fails every waiter and every
later send with the cause, a cancelled waiter leaves no entry, a passed deadline is an
``AdapterTimeoutError`` — and while that request stays unanswered later requests fail fast saying the
debugger is unresponsive, until any answer shows it is alive again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

import pytest

from polydbg.dap.client import DapClient
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.mi.client import MiClient
from polydbg.protocol import core
from polydbg.protocol.core import ProtocolClient
from polydbg.transport.streams import memory_pair

DEADLINE_S = 2.0

# Asked for by name, so anyio's plugin keeps each test's protocol parameter (see test_conformance).
pytestmark = pytest.mark.usefixtures("anyio_backend")


class Harness(Protocol):
    client: ProtocolClient[Any, Any]

    def send(self, label: str) -> asyncio.Future[Any]: ...
    async def wait(self, future: asyncio.Future[Any], label: str, timeout: float) -> Any: ...
    async def answer(self, index: int, ok: bool = True, text: str = "") -> None: ...
    async def event(self, name: str, value: str) -> None: ...
    def subscribe(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None: ...
    async def eof(self) -> None: ...
    def value(self, answer: Any) -> str: ...


class DapHarness:
    """The adapter's end of an in-memory DAP stream."""

    def __init__(self) -> None:
        client_end, self.adapter = memory_pair()
        self.client: DapClient = DapClient(client_end, "fake-dap")
        self.client.start()
        self.requests: list[dict[str, Any]] = []

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.client.send_request(label, {})

    async def wait(self, future: asyncio.Future[Any], label: str, timeout: float) -> Any:
        return await self.client.wait(future, label, timeout)

    async def _requests_until(self, index: int) -> dict[str, Any]:
        while len(self.requests) <= index:
            message = await asyncio.wait_for(self.adapter.receive(), DEADLINE_S)
            assert message is not None
            self.requests.append(message)
        return self.requests[index]

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        request = await self._requests_until(index)
        response: dict[str, Any] = {"seq": 9000 + index, "type": "response", "request_seq": request["seq"],
                                    "command": request["command"], "success": ok}
        if ok:
            response["body"] = {"value": text}
        else:
            response["message"] = text
        await self.adapter.send(response)

    async def event(self, name: str, value: str) -> None:
        await self.adapter.send({"seq": 1, "type": "event", "event": name, "body": {"value": value}})

    def subscribe(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self.client.on_event(name, handler)

    async def eof(self) -> None:
        await self.adapter.close()

    def value(self, answer: Any) -> str:
        return str(answer["value"])


class MiHarness:
    """gdb's end: lines fed to the reader, command lines collected from the writer."""

    def __init__(self) -> None:
        self.reader = asyncio.StreamReader()
        self.written: list[str] = []
        self.client: MiClient = MiClient(self.reader, self, "fake-gdb")
        self.client.start()

    def write(self, data: bytes) -> None:
        self.written.extend(data.decode().splitlines())

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.client.send(f"-{label}")

    async def wait(self, future: asyncio.Future[Any], label: str, timeout: float) -> Any:
        return await self.client.wait(future, label, timeout)

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        line = self.written[index]
        token = line[: len(line) - len(line.lstrip("0123456789"))]
        record = f'{token}^done,value="{text}"' if ok else f'{token}^error,msg="{text}"'
        self.reader.feed_data(record.encode() + b"\n(gdb) \n")

    async def event(self, name: str, value: str) -> None:
        self.reader.feed_data(f'*{name},value="{value}"\n'.encode())

    def subscribe(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self.client.on_async(name, handler)

    async def eof(self) -> None:
        self.reader.feed_eof()

    def value(self, answer: Any) -> str:
        return str(answer.payload["value"])


HARNESSES: dict[str, Callable[[], Harness]] = {"dap": DapHarness, "gdb-mi": MiHarness}


@pytest.fixture(params=sorted(HARNESSES))
def protocol(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def harness(protocol: str) -> AsyncIterator[Harness]:
    made = HARNESSES[protocol]()
    yield made
    await made.client.close()


async def test_answers_match_their_requests_in_any_order(harness: Harness) -> None:
    first, second = harness.send("first"), harness.send("second")
    await harness.answer(1, text="two")
    await harness.answer(0, text="one")
    assert harness.value(await harness.wait(second, "second", DEADLINE_S)) == "two"
    assert harness.value(await harness.wait(first, "first", DEADLINE_S)) == "one"
    assert len(harness.client._pending) == 0


async def test_a_refusal_names_the_request(harness: Harness) -> None:
    future = harness.send("evaluate")
    await harness.answer(0, ok=False, text="no such variable")
    with pytest.raises(AdapterRequestError, match="no such variable") as refused:
        await harness.wait(future, "evaluate", DEADLINE_S)
    assert "evaluate" in refused.value.command


async def test_events_reach_handlers_by_name_and_a_failing_handler_is_survived(harness: Harness) -> None:
    seen: list[str] = []
    everything: list[str] = []

    def broken(body: dict[str, Any]) -> None:
        raise RuntimeError("handler bug")

    harness.subscribe("stopped", broken)
    harness.subscribe("stopped", lambda body: seen.append(str(body["value"])))
    harness.client.on_any_event(lambda name, body: everything.append(name))
    await harness.event("stopped", "a")
    await harness.event("unknown", "b")
    future = harness.send("after")
    await harness.answer(0, text="ok")
    assert harness.value(await harness.wait(future, "after", DEADLINE_S)) == "ok"
    assert seen == ["a"]
    assert everything == ["stopped", "unknown"]


async def test_the_end_of_the_stream_fails_every_waiter_and_every_later_send(harness: Harness) -> None:
    waiting = [harness.send("one"), harness.send("two")]
    await harness.eof()
    for future in waiting:
        with pytest.raises(AdapterGoneError, match="while waiting for"):
            await asyncio.wait_for(future, DEADLINE_S)
    await asyncio.wait_for(harness.client.closed.wait(), DEADLINE_S)
    assert harness.client.is_closed and harness.client.closed_reason
    with pytest.raises(AdapterGoneError, match="cannot send"):
        await harness.send("later")


async def test_close_fails_waiters_with_its_reason_and_is_idempotent(harness: Harness) -> None:
    future = harness.send("pending")
    await harness.client.close("the session ended")
    await harness.client.close("again")
    with pytest.raises(AdapterGoneError, match="the session ended"):
        await future
    assert harness.client.closed_reason == "the session ended"


async def test_a_cancelled_waiter_leaves_no_entry(harness: Harness) -> None:
    future = harness.send("slow")
    waiter = asyncio.ensure_future(harness.wait(future, "slow", DEADLINE_S))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    assert len(harness.client._pending) == 0


async def test_a_stalled_debugger_costs_one_deadline_then_answers_fast_until_it_speaks(
        harness: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(core, "STALLED_WAIT_S", 0.05)
    hung = harness.send("hung")
    with pytest.raises(AdapterTimeoutError, match=r"did not answer '-?hung' within 0\.2 s"):
        await harness.wait(hung, "hung", 0.2)
    assert harness.client.stalled() is not None
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(AdapterTimeoutError, match=r"unresponsive: it has not answered '-?hung'"):
        await harness.wait(harness.send("next"), "next", 30.0)
    assert loop.time() - started < 5.0  # the shortened deadline, not 30 s
    await harness.answer(0, text="late")  # the hung request finally answers: the debugger is back
    recovered = harness.send("recovered")
    await harness.answer(2, text="fine")
    assert harness.value(await harness.wait(recovered, "recovered", DEADLINE_S)) == "fine"
    assert harness.client.stalled() is None  # answers arrive in order: the late one cleared the stall

