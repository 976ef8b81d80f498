"""Message streams: a JSON-object channel over asyncio byte streams, plus an in-memory twin.

The DAP client depends only on the ``MessageStream`` protocol, so unit tests swap in
``MemoryStream`` and the real adapters use ``FramedStream`` over a pipe or a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any, Protocol

from polydbg.errors import FramingError
from polydbg.transport.framing import ContentLengthDecoder, encode_message

log = logging.getLogger(__name__)

_READ_CHUNK = 256 * 1024


class MessageStream(Protocol):
    """A bidirectional stream of JSON objects."""

    async def receive(self) -> dict[str, Any] | None:
        """The next message, or None once the peer has closed the stream."""
        ...

    async def send(self, message: dict[str, Any]) -> None: ...

    async def close(self) -> None: ...


class FramedStream:
    """Content-Length framed messages over an asyncio reader/writer pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str) -> None:
        self._reader = reader
        self._writer = writer
        self._decoder = ContentLengthDecoder()
        self._ready: list[dict[str, Any]] = []
        self._eof = False
        self.name = name

    @classmethod
    async def connect_tcp(cls, host: str, port: int, name: str) -> FramedStream:
        reader, writer = await asyncio.open_connection(host, port, limit=_READ_CHUNK)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return cls(reader, writer, name)

    async def receive(self) -> dict[str, Any] | None:
        while not self._ready:
            if self._eof:
                return None
            try:
                chunk = await self._reader.read(_READ_CHUNK)
            except (ConnectionError, OSError):
                chunk = b""
            if not chunk:
                self._eof = True
                return None
            try:
                self._ready.extend(self._decoder.feed(chunk))
            except FramingError:
                log.error("%s: bad frame from adapter, closing stream", self.name, exc_info=True)
                self._eof = True
        return self._ready.pop(0)

    async def send(self, message: dict[str, Any]) -> None:
        if log.isEnabledFor(logging.DEBUG):
            log.debug("%s <- %s", self.name, message)
        self._writer.write(encode_message(message))
        await self._writer.drain()

    async def close(self) -> None:
        if not self._writer.is_closing():
            self._writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError, ConnectionError):
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)


class MemoryStream:
    """One end of an in-memory message pipe (see ``memory_pair``), for unit tests."""

    def __init__(self, inbox: asyncio.Queue[dict[str, Any] | None],
                 outbox: asyncio.Queue[dict[str, Any] | None]) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False

    async def receive(self) -> dict[str, Any] | None:
        if self._closed:
            return None
        message = await self._inbox.get()
        if message is None:
            self._closed = True
        return message

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("stream closed")
        await self._outbox.put(message)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._outbox.put(None)
            await self._inbox.put(None)


def memory_pair() -> tuple[MemoryStream, MemoryStream]:
    """Two connected in-memory streams: what one sends, the other receives."""
    a_to_b: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    b_to_a: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
    return MemoryStream(b_to_a, a_to_b), MemoryStream(a_to_b, b_to_a)
