"""The V8 inspector's JSON messages over one WebSocket (a ``MessageStream``).

Node's inspector closes the socket on any ping frame (``src/inspector_socket.cc``), so the
connection is opened with ``ping_interval=None``: the library's 20 s keepalive would end every
session that stays stopped for a while. Messages can be large (a 100,000-element array's
properties): no size limit, no compression.

Node's end of the socket keeps Nagle's algorithm on, and an evaluation answers in two writes (the
``scriptParsed`` of the evaluated code, then the result): the second waits for our ACK of the first,
which Linux delays ≈ 40 ms. So every evaluate took 44 ms. ``TCP_QUICKACK`` after each send and
receive makes the ACK immediate (0.7 ms per evaluate); the option is not sticky, hence each time.

The inspector is always reached directly: websockets 15 and later would otherwise route the
connection through an ``http_proxy``/``all_proxy`` set in polydbg's environment (and fail, or hand
the session to the proxy), so the proxy is switched off where the library has the option.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import socket
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from polydbg.errors import AdapterGoneError

_DIRECT: dict[str, Any] = {"proxy": None} if "proxy" in inspect.signature(connect).parameters else {}
_QUICKACK: int | None = getattr(socket, "TCP_QUICKACK", None)  # Linux only


class WebSocketStream:
    def __init__(self, connection: ClientConnection) -> None:
        self._ws = connection
        self._sock = connection.transport.get_extra_info("socket")

    @classmethod
    async def connect(cls, url: str, timeout_s: float) -> WebSocketStream:
        """Connect to an inspector's ``ws://`` URL."""
        try:
            connection = await asyncio.wait_for(
                connect(url, ping_interval=None, max_size=None, compression=None, open_timeout=timeout_s,
                        close_timeout=1.0, **_DIRECT),
                timeout_s)
        except (OSError, WebSocketException, asyncio.TimeoutError) as exc:
            raise AdapterGoneError(f"cannot connect to the inspector at {url}: {exc}") from exc
        return cls(connection)

    async def receive(self) -> dict[str, Any] | None:
        try:
            raw = await self._ws.recv()
        except ConnectionClosed:
            return None
        self._quick_ack()
        message = json.loads(raw)
        return message if isinstance(message, dict) else {}

    async def send(self, message: dict[str, Any]) -> None:
        await self._ws.send(json.dumps(message, separators=(",", ":")))
        self._quick_ack()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._ws.close(), 1.0)

    def _quick_ack(self) -> None:
        if _QUICKACK is not None and self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.setsockopt(socket.IPPROTO_TCP, _QUICKACK, 1)
