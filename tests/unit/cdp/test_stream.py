"""The inspector's WebSocket as a stream of JSON objects, against a loopback WebSocket server standing in for
Node's inspector: messages each way, a closed socket is the end, an unreachable inspector a clear error, and the
connection is direct even with a proxy in the environment."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from websockets.asyncio.server import Server, ServerConnection, serve

from polydbg.cdp.stream import WebSocketStream
from polydbg.errors import AdapterGoneError

DEADLINE_S = 2.0


@dataclass
class FakeInspector:
    """Says each of ``say`` when a client connects, records what it receives, then waits for ``hang_up``."""

    say: list[str] = field(default_factory=list)
    heard: asyncio.Queue[str] = field(default_factory=asyncio.Queue)
    hang_up: asyncio.Event = field(default_factory=asyncio.Event)

    async def handler(self, connection: ServerConnection) -> None:
        for text in self.say:
            await connection.send(text)
        listening = asyncio.ensure_future(self._listen(connection))
        await self.hang_up.wait()
        listening.cancel()

    async def _listen(self, connection: ServerConnection) -> None:
        async for message in connection:
            await self.heard.put(str(message))


@dataclass
class Served:
    inspector: FakeInspector
    url: str


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    inspector = FakeInspector()
    server: Server = await serve(inspector.handler, "127.0.0.1", 0, ping_interval=None)
    port = next(iter(server.sockets)).getsockname()[1]
    yield Served(inspector, f"ws://127.0.0.1:{port}/inspector-id")
    inspector.hang_up.set()
    server.close()
    await server.wait_closed()


async def test_messages_travel_as_json_objects_both_ways(served: Served) -> None:
    served.inspector.say = [json.dumps({"method": "Debugger.paused", "params": {"reason": "other"}}), "[1, 2]"]
    stream = await WebSocketStream.connect(served.url, DEADLINE_S)
    try:
        assert await asyncio.wait_for(stream.receive(), DEADLINE_S) == {"method": "Debugger.paused",
                                                                         "params": {"reason": "other"}}
        assert await asyncio.wait_for(stream.receive(), DEADLINE_S) == {}  # JSON, but not an object
        await stream.send({"id": 1, "method": "Runtime.evaluate", "params": {"expression": "1 + 2"}})
        sent = await asyncio.wait_for(served.inspector.heard.get(), DEADLINE_S)
        assert sent == '{"id":1,"method":"Runtime.evaluate","params":{"expression":"1 + 2"}}'  # compact
    finally:
        await stream.close()


async def test_the_inspector_closing_the_socket_is_the_end(served: Served) -> None:
    stream = await WebSocketStream.connect(served.url, DEADLINE_S)
    try:
        served.inspector.hang_up.set()
        assert await asyncio.wait_for(stream.receive(), DEADLINE_S) is None
    finally:
        await stream.close()
        await stream.close()  # closing twice is harmless


async def test_an_inspector_that_is_not_there_is_a_clear_error() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"ws://127.0.0.1:{port}/gone"
    with pytest.raises(AdapterGoneError, match=f"cannot connect to the inspector at {url}"):
        await WebSocketStream.connect(url, DEADLINE_S)


async def test_the_connection_ignores_a_proxy_in_the_environment(served: Served,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # the discard port: a proxy that is not there
    monkeypatch.delenv("no_proxy", raising=False)
    monkeypatch.delenv("NO_PROXY", raising=False)
    served.inspector.say = ['{"method": "Runtime.executionContextCreated", "params": {}}']
    stream = await WebSocketStream.connect(served.url, DEADLINE_S)
    try:
        assert await asyncio.wait_for(stream.receive(), DEADLINE_S) == {"method": "Runtime.executionContextCreated",
                                                                         "params": {}}
    finally:
        await stream.close()
