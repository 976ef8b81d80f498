"""CDP protocol client: the V8 inspector's JSON messages over one WebSocket.

A request is ``{"id", "method", "params"}``; its
answer carries the same id with ``result`` or ``error``; everything else is an event
``{"method", "params"}``. The pending table, event routing, deadlines and close are the shared
``ProtocolClient`` core; events are emitted under their method name.

Node's inspector closes the socket on any ping frame (``src/inspector_socket.cc``), so the
connection is opened with ``ping_interval=None``: the library's 20 s keepalive would end every
session that stays stopped for a while. Messages can be large (a 100,000-element array's
properties): no size limit, no compression.

Node's end of the socket keeps Nagle's algorithm on, and an evaluation answers in two writes (the
``scriptParsed`` of the evaluated code, then the result): the second waits for our ACK of the first,
which Linux delays ≈ 40 ms. So every evaluate took 44 ms. ``TCP_QUICKACK`` after each send and
receive makes the ACK immediate (0.7 ms per evaluate); the option is not sticky, hence each time.

A worker thread is reached through its process's connection (the ``NodeWorker`` domain: each message
wrapped in ``sendMessageToWorker`` / ``receivedMessageFromWorker``). ``WorkerChannel`` unwraps that
into the same client API, with its own message ids and pending table, so code that debugs one
JavaScript thread does not care how it is reached.

The inspector is always reached directly: websockets 15 and later would otherwise route the
connection through an ``http_proxy``/``all_proxy`` set in polydbg's environment (and fail, or hand
the session to the proxy), so the proxy is switched off where the library has the option.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import socket
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from polydbg.errors import AdapterGoneError, AdapterRequestError
from polydbg.protocol.core import ProtocolClient

_DIRECT: dict[str, Any] = {"proxy": None} if "proxy" in inspect.signature(connect).parameters else {}

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class CdpChannel(ProtocolClient[int, dict[str, Any]]):
    """Requests and events of one CDP target; a subclass supplies how a message is posted."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._next_id = 0
        self._writes: set[asyncio.Task[None]] = set()

    def send(self, method: str, params: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        """Send a request now; the future resolves to its ``result``. Await it with ``wait``."""
        self._next_id += 1
        key = self._next_id
        entry = self._open(key, method)
        if isinstance(entry, asyncio.Future):
            return entry
        message: dict[str, Any] = {"id": key, "method": method, "params": params or {}}
        task = asyncio.get_running_loop().create_task(self._write(message, entry.future))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return entry.future

    async def request(self, method: str, params: dict[str, Any] | None = None,
                      timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
        return await self.wait(self.send(method, params), method, timeout)

    async def _write(self, message: dict[str, Any], future: asyncio.Future[dict[str, Any]]) -> None:
        try:
            await self._post(json.dumps(message, separators=(",", ":")))
        except (ConnectionClosed, OSError, RuntimeError, AdapterGoneError, AdapterRequestError) as exc:
            if not future.done():
                future.set_exception(AdapterGoneError(f"{self.name}: cannot send {message['method']!r}: {exc}"))

    async def _post(self, text: str) -> None:
        raise NotImplementedError

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


class CdpClient(CdpChannel):
    """Talks CDP to one inspector endpoint over its WebSocket."""

    def __init__(self, connection: ClientConnection, name: str = "node") -> None:
        super().__init__(name)
        self._ws = connection
        self._sock = connection.transport.get_extra_info("socket")

    @classmethod
    async def open(cls, url: str, name: str = "node", timeout_s: float = 10.0) -> CdpClient:
        """Connect to an inspector's ``ws://`` URL and start reading."""
        try:
            connection = await asyncio.wait_for(
                connect(url, ping_interval=None, max_size=None, compression=None, open_timeout=timeout_s,
                        close_timeout=1.0, **_DIRECT),
                timeout_s)
        except (OSError, WebSocketException, asyncio.TimeoutError) as exc:
            raise AdapterGoneError(f"cannot connect to the inspector at {url}: {exc}") from exc
        client = cls(connection, name)
        client.start()
        return client

    async def _close_transport(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(), 1.0)

    async def _post(self, text: str) -> None:
        await self._ws.send(text)
        self._quick_ack()

    async def _receive(self) -> dict[str, Any] | None:
        try:
            raw = await self._ws.recv()
        except ConnectionClosed:
            return None
        self._quick_ack()
        message = json.loads(raw)
        return message if isinstance(message, dict) else {}

    def _quick_ack(self) -> None:
        if _QUICKACK is not None and self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)


class WorkerChannel(CdpChannel):
    """A worker thread's target, through the ``NodeWorker`` domain of the channel that owns it."""

    def __init__(self, owner: CdpChannel, session_id: str, name: str) -> None:
        super().__init__(name)
        self.owner = owner
        self.session_id = session_id
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

    async def _post(self, text: str) -> None:
        await self.owner.request("NodeWorker.sendMessageToWorker", {"message": text, "sessionId": self.session_id})

    async def _receive(self) -> dict[str, Any] | None:
        return await self._inbox.get()

    async def _close_transport(self) -> None:
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
