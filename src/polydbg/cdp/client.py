"""CDP protocol client: the V8 inspector's requests, answers and events, on the shared core.

A request is ``{"id", "method", "params"}``; its answer carries the same id with ``result`` or
``error``; everything else is an event ``{"method", "params"}``. The pending table, event routing,
deadlines and close are the shared ``ProtocolClient`` core; events are emitted under their method
name. Messages travel on a ``MessageStream`` of JSON objects: ``cdp.stream.WebSocketStream`` for an
inspector endpoint (its TCP and proxy quirks are there).

A worker thread is reached through its process's connection (the ``NodeWorker`` domain: each message
wrapped in ``sendMessageToWorker`` / ``receivedMessageFromWorker``). ``WorkerStream`` unwraps that into
a stream of its own, so a ``CdpChannel`` on it has its own message ids and pending table, and code that
debugs one JavaScript thread does not care how it is reached.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from polydbg.cdp.stream import WebSocketStream
from polydbg.errors import AdapterRequestError
from polydbg.protocol.core import REQUEST_TIMEOUT_S, ProtocolClient
from polydbg.transport.streams import MessageStream

log = logging.getLogger(__name__)



class CdpChannel(ProtocolClient[int, dict[str, Any], dict[str, Any]]):
    """Requests and events of one CDP target over a stream of JSON messages."""

    def __init__(self, stream: MessageStream[dict[str, Any]], name: str) -> None:
        super().__init__(stream, name)
        self._next_id = 0

    @classmethod
    async def connect(cls, url: str, name: str = "node", timeout_s: float = 10.0) -> CdpChannel:
        """A channel on an inspector's ``ws://`` URL, reading."""
        channel = cls(await WebSocketStream.connect(url, timeout_s), name)
        channel.start()
        return channel

    def send(self, method: str, params: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        """Send a request now; the future resolves to its ``result``. Await it with ``wait``."""
        self._next_id += 1
        return self._send(self._next_id, method, {"id": self._next_id, "method": method, "params": params or {}})

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        return await self.wait(self.send(method, params), method, timeout)

    def _dispatch(self, message: dict[str, Any]) -> None:
        key = message.get("id")
        if key is not None:
            if "error" in message:
                waiting = self._pending.get(key)
                label = waiting.label if waiting is not None else "request"
                entry = self._reject(key, AdapterRequestError(label, error_text(message["error"])))
            else:
                result = message.get("result")
                entry = self._resolve(key, result if isinstance(result, dict) else {})
            if entry is None:
                log.debug("%s: answer to unknown request %s", self.name, key)
            return
        method = message.get("method")
        if not isinstance(method, str):
            return
        params = message.get("params")
        self._events.emit(method, params if isinstance(params, dict) else {})


class WorkerStream:
    """A worker thread's messages, through the ``NodeWorker`` domain of the channel that owns it."""

    def __init__(self, owner: CdpChannel, session_id: str, name: str) -> None:
        self.owner = owner
        self.session_id = session_id
        self.name = name
        self._inbox: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    def deliver(self, text: str) -> None:
        """A ``receivedMessageFromWorker`` for this worker."""
        try:
            message = json.loads(text)
        except ValueError:
            log.warning("%s: ignoring a message that is not JSON: %.200r", self.name, text)
            return
        self._inbox.put_nowait(message if isinstance(message, dict) else {})

    def detached(self) -> None:
        """The worker ended (``detachedFromWorker``): its channel reads EOF."""
        self._inbox.put_nowait(None)

    async def receive(self) -> dict[str, Any] | None:
        return await self._inbox.get()

    async def send(self, message: dict[str, Any]) -> None:
        await self.owner.request("NodeWorker.sendMessageToWorker",
                                 {"message": json.dumps(message, separators=(",", ":")), "sessionId": self.session_id})

    async def close(self) -> None:
        self._inbox.put_nowait(None)
        if not self.owner.is_closed:
            self.owner.send("NodeWorker.detach", {"sessionId": self.session_id})


def error_text(error: Any) -> str:
    """CDP's error object as one line: its message, and its data when that says more."""
    if not isinstance(error, dict):
        return str(error)
    text = str(error.get("message") or "request failed")
    data = error.get("data")
    return f"{text}: {data}" if data else text
