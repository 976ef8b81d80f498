"""JDWP client: commands to the JVM's ``jdwp`` agent and its composite events, on the shared core.

The pending table is keyed by packet id; a reply carries the id of its command and an error code
(non-zero fails the waiter with a ``JdwpError`` that names it). Commands the VM sends are composite
events (command set 64, command 100), emitted as ``"events"`` with the decoded list. Nagle is off on
the socket: a step is one small command and one small event, and a delayed ACK would cost 40 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from typing import NamedTuple

from polydbg.errors import AdapterGoneError, AdapterRequestError
from polydbg.jdwp.codec import (
    HANDSHAKE,
    HEADER,
    REPLY_FLAG,
    CommandSet,
    IdSizes,
    JdwpError,
    Reader,
    Writer,
    decode_composite,
    encode_packet,
)
from polydbg.protocol.core import ProtocolClient

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0
COMPOSITE = 100


class Packet(NamedTuple):
    id: int
    flags: int
    head: int  # a reply's error code, or a command's (command set << 8 | command)
    data: bytes


class JdwpRequestError(AdapterRequestError):
    """A command the VM refused, with JDWP's error code (``code``) for callers that handle some."""

    def __init__(self, label: str, error: JdwpError) -> None:
        super().__init__(label, str(error))
        self.code = error.code


class JdwpClient(ProtocolClient[int, bytes]):
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str = "jvm") -> None:
        super().__init__(name)
        self._reader = reader
        self._writer = writer
        self._next_id = 0
        self.sizes = IdSizes()
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @classmethod
    async def connect(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, timeout_s: float,
                      name: str = "jvm") -> JdwpClient:
        """Handshake on an open connection (either side may have connected), learn the id sizes, read."""
        try:
            writer.write(HANDSHAKE)
            await writer.drain()
            answer = await asyncio.wait_for(reader.readexactly(len(HANDSHAKE)), timeout_s)
        except (OSError, asyncio.IncompleteReadError, asyncio.TimeoutError) as exc:
            writer.close()
            raise AdapterGoneError(f"the JVM did not complete the JDWP handshake: {exc!r}") from exc
        if answer != HANDSHAKE:
            writer.close()
            raise AdapterGoneError(f"not a JDWP agent (it answered {answer!r} to the handshake; a JVM that already "
                                   "has a debugger answers nothing)")
        client = cls(reader, writer, name)
        client.start()
        sizes = await client.request(CommandSet.VM, 7, label="IDSizes", timeout=timeout_s)
        client.sizes = IdSizes(field=sizes.i4(), method=sizes.i4(), object=sizes.i4(), reference_type=sizes.i4(),
                               frame=sizes.i4())
        return client

    def writer(self) -> Writer:
        return Writer(self.sizes)

    # -- commands ---------------------------------------------------------------------------------

    def send(self, command_set: int, command: int, data: bytes = b"", label: str | None = None
             ) -> asyncio.Future[bytes]:
        self._next_id += 1
        key = self._next_id
        entry = self._open(key, label or f"command {command_set}/{command}")
        if isinstance(entry, asyncio.Future):
            return entry
        try:
            self._writer.write(encode_packet(key, command_set, command, data))
        except (OSError, RuntimeError) as exc:
            entry.future.set_exception(AdapterGoneError(f"{self.name}: cannot send {entry.label!r}: {exc}"))
        return entry.future

    async def request(self, command_set: int, command: int, data: bytes = b"", label: str | None = None,
                      timeout: float = DEFAULT_TIMEOUT_S) -> Reader:
        name = label or f"command {command_set}/{command}"
        reply = await self.wait(self.send(command_set, command, data, name), name, timeout)
        return Reader(reply, self.sizes)

    # -- reading ----------------------------------------------------------------------------------

    async def _receive(self) -> Packet | None:
        try:
            header = await self._reader.readexactly(HEADER.size)
            length, packet_id, flags = HEADER.unpack(header)
            rest = await self._reader.readexactly(length - HEADER.size)
        except (asyncio.IncompleteReadError, OSError):
            return None
        head = int.from_bytes(rest[:2], "big")
        return Packet(packet_id, flags, head, rest[2:])

    def _dispatch(self, message: Packet) -> None:
        if message.flags & REPLY_FLAG:
            if message.head:
                waiting = self._pending.get(message.id)
                label = waiting.label if waiting is not None else "command"
                self._reject(message.id, JdwpRequestError(label, JdwpError(message.head, label)))
            else:
                self._resolve(message.id, message.data)
            return
        if message.head == (CommandSet.EVENT << 8 | COMPOSITE):
            self._events.emit("events", {"events": decode_composite(message.data, self.sizes)})
        else:
            log.debug("%s: ignoring VM command %s", self.name, message.head)

    async def _close_transport(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)
