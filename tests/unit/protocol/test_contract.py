"""The contract every protocol client keeps, checked once per protocol (DAP, GDB/MI, CDP, JDWP, DBGp).

Each harness plays the debugger's end by hand at the transport seam (an in-memory ``MessageStream`` pair).
The contract: answers are matched to their requests in any order, a refusal names the request, events reach
handlers by name (a failing handler does not stop the reader), the end of the stream fails every waiter and every
later send with the cause, a cancelled waiter leaves no entry, a passed deadline is an
``AdapterTimeoutError`` — and while that request stays unanswered later requests fail fast saying the
debugger is unresponsive, until any answer shows it is alive again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any, ClassVar, Generic, Protocol, TypeVar

import pytest

from polydbg.cdp.client import CdpChannel
from polydbg.dap.client import DapClient
from polydbg.dbgp.client import DbgpClient
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import REPLY_FLAG, CommandSet, EventKind, IdSizes, Suspend, Writer
from polydbg.jdwp.stream import Packet
from polydbg.mi.client import MiClient
from polydbg.protocol import core
from polydbg.protocol.core import ProtocolClient
from polydbg.transport.streams import MemoryStream, memory_pair

DEADLINE_S = 2.0
M = TypeVar("M")

# Asked for by name, so anyio's plugin keeps each test's protocol parameter (see test_conformance).
pytestmark = pytest.mark.usefixtures("anyio_backend")


class Harness(Protocol):
    @property
    def client(self) -> ProtocolClient[Any, Any, Any]: ...

    def send(self, label: str) -> asyncio.Future[Any]: ...
    async def wait(self, future: asyncio.Future[Any], label: str, timeout: float) -> Any: ...
    async def answer(self, index: int, ok: bool = True, text: str = "") -> None: ...
    async def event(self, name: str, value: str) -> None: ...
    def subscribe(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None: ...
    async def eof(self) -> None: ...
    def value(self, answer: Any) -> str: ...
    def wire_name(self, name: str) -> str: ...  # what an event named ``name`` is called on the wire
    def refusal(self, text: str) -> str: ...  # what a refusal answered with ``text`` reads as


class DebuggerEnd(Generic[M]):
    """What every harness shares: the client on one end of an in-memory pair, the debugger's end (``far``)
    in the test's hands, and the requests that arrived there so far."""

    def __init__(self, client: ProtocolClient[Any, Any, M], far: MemoryStream[M]) -> None:
        self._client = client
        self.far = far
        self.received: list[M] = []
        client.start()

    @property
    def client(self) -> ProtocolClient[Any, Any, M]:
        return self._client

    async def wait(self, future: asyncio.Future[Any], label: str, timeout: float) -> Any:
        return await self._client.wait(future, label, timeout)

    async def request(self, index: int) -> M:
        """The ``index``-th request the client sent (waiting for it to arrive)."""
        while len(self.received) <= index:
            message = await asyncio.wait_for(self.far.receive(), DEADLINE_S)
            assert message is not None
            self.received.append(message)
        return self.received[index]

    def subscribe(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        self._client.on_event(name, handler)

    async def eof(self) -> None:
        await self.far.close()

    def refusal(self, text: str) -> str:
        return text

    def wire_name(self, name: str) -> str:
        return name


class DapHarness(DebuggerEnd[dict[str, Any]]):
    """The adapter's end of an in-memory DAP stream."""

    def __init__(self) -> None:
        near, far = memory_pair()
        self.dap = DapClient(near, "fake-dap")
        super().__init__(self.dap, far)

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.dap.send_request(label, {})

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        request = await self.request(index)
        response: dict[str, Any] = {"seq": 9000 + index, "type": "response", "request_seq": request["seq"],
                                    "command": request["command"], "success": ok}
        if ok:
            response["body"] = {"value": text}
        else:
            response["message"] = text
        await self.far.send(response)

    async def event(self, name: str, value: str) -> None:
        await self.far.send({"seq": 1, "type": "event", "event": name, "body": {"value": value}})

    def value(self, answer: Any) -> str:
        return str(answer["value"])


class MiHarness(DebuggerEnd[str]):
    """gdb's end: MI lines each way."""

    def __init__(self) -> None:
        near, far = memory_pair()
        self.mi = MiClient(near, "fake-gdb")
        super().__init__(self.mi, far)

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.mi.send(f"-{label}")

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        line = await self.request(index)
        token = line[: len(line) - len(line.lstrip("0123456789"))]
        await self.far.send(f'{token}^done,value="{text}"' if ok else f'{token}^error,msg="{text}"')
        await self.far.send("(gdb) ")

    async def event(self, name: str, value: str) -> None:
        await self.far.send(f'*{name},value="{value}"')

    def value(self, answer: Any) -> str:
        return str(answer.payload["value"])


class CdpHarness(DebuggerEnd[dict[str, Any]]):
    """The V8 inspector's end: JSON messages with ids, results, errors and method events."""

    def __init__(self) -> None:
        near, far = memory_pair()
        self.cdp = CdpChannel(near, "fake-cdp")
        super().__init__(self.cdp, far)

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.cdp.send(label, {})

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        key = (await self.request(index))["id"]
        await self.far.send({"id": key, "result": {"value": text}} if ok
                            else {"id": key, "error": {"code": -32000, "message": text}})

    async def event(self, name: str, value: str) -> None:
        await self.far.send({"method": name, "params": {"value": value}})

    def value(self, answer: Any) -> str:
        return str(answer["value"])


class JdwpHarness(DebuggerEnd[Packet]):
    """The JVM's end: packets; a reply carries its command's id and an error code, an event is a composite
    command (its one event of kind ``name`` carrying a thread id: the value)."""

    KINDS: ClassVar[dict[str, int]] = {"stopped": EventKind.THREAD_START, "unknown": EventKind.THREAD_DEATH}

    def __init__(self) -> None:
        near, far = memory_pair()
        self.jdwp = JdwpClient(near, "fake-jvm")
        super().__init__(self.jdwp, far)

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.jdwp.send(1, 1, label.encode(), label=label)

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        key = (await self.request(index)).id
        await self.far.send(Packet(key, REPLY_FLAG, 0, text.encode()) if ok
                            else Packet(key, REPLY_FLAG, 41, b""))  # JDWP refuses with a code only

    async def event(self, name: str, value: str) -> None:
        data = Writer(IdSizes()).u1(Suspend.NONE).i4(1).u1(self.KINDS[name]).i4(0).object_id(int(value, 36))
        await self.far.send(Packet(1, 0, CommandSet.EVENT << 8 | 100, data.bytes()))

    def subscribe(self, name: str, handler: Callable[[dict[str, Any]], None]) -> None:
        def of_kind(body: dict[str, Any]) -> None:  # the composite's events of one kind, as the java backend reads them
            for event in body["events"]:
                if event.kind == self.KINDS[name]:
                    handler({"value": _base36(event.thread)})
        self.jdwp.on_event("events", of_kind)

    def refusal(self, text: str) -> str:
        return "absent information"  # what error 41 reads as

    def wire_name(self, name: str) -> str:
        return "events"

    def value(self, answer: Any) -> str:
        return bytes(answer).decode()


class DbgpHarness(DebuggerEnd[str]):
    """Xdebug's end: command lines in (``name -i TID …``), XML packets out; a ``response`` names its transaction,
    a refusal is an ``<error>`` with a code and a message, an event a ``notify`` packet."""

    def __init__(self) -> None:
        near, far = memory_pair()
        self.dbgp = DbgpClient(near, "fake-xdebug")
        super().__init__(self.dbgp, far)

    def send(self, label: str) -> asyncio.Future[Any]:
        return self.dbgp.send(label)

    async def answer(self, index: int, ok: bool = True, text: str = "") -> None:
        words = (await self.request(index)).split()
        command, key = words[0], words[words.index("-i") + 1]
        inner = (f"<![CDATA[{text}]]>" if ok
                 else f'<error code="300"><message><![CDATA[{text}]]></message></error>')
        await self.far.send(f'<response xmlns="urn:debugger_protocol_v1" command="{command}" '
                            f'transaction_id="{key}">{inner}</response>')

    async def event(self, name: str, value: str) -> None:
        await self.far.send(f'<notify xmlns="urn:debugger_protocol_v1" name="{name}"><![CDATA[{value}]]></notify>')

    def value(self, answer: Any) -> str:
        return str(answer.text or "")


def _base36(number: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while number:
        number, rest = divmod(number, 36)
        out = digits[rest] + out
    return out or "0"


HARNESSES: dict[str, Callable[[], Harness]] = {"dap": DapHarness, "gdb-mi": MiHarness, "cdp": CdpHarness,
                                                "jdwp": JdwpHarness, "dbgp": DbgpHarness}


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
    with pytest.raises(AdapterRequestError, match=harness.refusal("no such variable")) as refused:
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
    assert everything == [harness.wire_name("stopped"), harness.wire_name("unknown")]


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

