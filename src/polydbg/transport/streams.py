"""Message streams: each protocol's messages over asyncio byte streams, and one in-memory twin for all.

Every protocol client depends only on ``MessageStream[M]`` (M is the protocol's message: a DAP or CDP
JSON object, an MI line, a JDWP packet), so unit tests swap in ``memory_pair()`` and the real debuggers
use ``FramedStream`` (DAP's Content-Length framing over a pipe or a socket), ``LineStream`` (gdb's MI
lines over its stdin and stdout), ``jdwp.stream.PacketStream`` or ``cdp.stream.WebSocketStream``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import Any, Generic, Protocol, TypeVar

from polydbg.errors import FramingError
from polydbg.transport.framing import ContentLengthDecoder, encode_message

log = logging.getLogger(__name__)

_READ_CHUNK = 256 * 1024


M = TypeVar("M")


class MessageStream(Protocol[M]):
    """A bidirectional stream of one protocol's messages."""

    async def receive(self) -> M | None:
        """The next message, or None once the peer has closed the stream."""
        ...

    async def send(self, message: M) -> None:
        """Write one message; its bytes leave in the order ``send`` was first called."""
        ...

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
                if self._ready:  # a bad frame after these messages ends the stream now, not at a next chunk
                    self._decoder.feed(b"")  # that may never come
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


def no_delay(writer: asyncio.StreamWriter) -> None:
    """Nagle off on a stream's socket: a protocol of small requests and small answers would wait for a delayed
    ACK (40 ms) on each."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class Writer(Protocol):
    """Where a stream's bytes go: an ``asyncio.StreamWriter`` (a pipe, a socket) or a test double."""

    def write(self, data: bytes) -> None: ...

    async def drain(self) -> None: ...


class LineStream:
    """Text lines over an asyncio reader/writer pair (gdb's MI): a line without its line break each way."""

    def __init__(self, reader: asyncio.StreamReader, writer: Writer, name: str) -> None:
        self._reader = reader
        self._writer = writer
        self.name = name

    async def receive(self) -> str | None:
        parts: list[bytes] = []
        while True:
            try:
                parts.append(await self._reader.readuntil(b"\n"))
                break
            except asyncio.LimitOverrunError as exc:  # a line longer than the reader's buffer
                parts.append(await self._reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                parts.append(exc.partial)
                if not b"".join(parts):
                    return None
                break
            except (ConnectionError, OSError):
                return None
        return b"".join(parts).decode("utf-8", "replace").rstrip("\r\n")

    async def send(self, message: str) -> None:
        self._writer.write(message.encode() + b"\n")
        await self._writer.drain()

    async def close(self) -> None:
        """Nothing to close: the pipes belong to the debugger's process, which closes them when it ends."""


class MemoryStream(Generic[M]):
    """One end of an in-memory message pipe (see ``memory_pair``), for unit tests."""

    def __init__(self, inbox: asyncio.Queue[M | None], outbox: asyncio.Queue[M | None]) -> None:
        self._inbox = inbox
        self._outbox = outbox
        self._closed = False

    async def receive(self) -> M | None:
        if self._closed:
            return None
        message = await self._inbox.get()
        if message is None:
            self._closed = True
        return message

    async def send(self, message: M) -> None:
        if self._closed:
            raise ConnectionError("stream closed")
        await self._outbox.put(message)

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await self._outbox.put(None)
            await self._inbox.put(None)


def memory_pair() -> tuple[MemoryStream[Any], MemoryStream[Any]]:
    """Two connected in-memory streams: what one sends, the other receives (annotate the ends' message type)."""
    a_to_b: asyncio.Queue[Any] = asyncio.Queue()
    b_to_a: asyncio.Queue[Any] = asyncio.Queue()
    return MemoryStream(b_to_a, a_to_b), MemoryStream(a_to_b, b_to_a)
