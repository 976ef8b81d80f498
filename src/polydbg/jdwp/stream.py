"""JDWP's packets over a socket: the handshake, then ``Packet`` messages each way (a ``MessageStream``).

A packet is ``length:u4 id:u4 flags:u1`` then, for a command, ``command set:u1 command:u1`` and data, for a
reply (flags 0x80) ``error:u2`` and data; ``head`` carries either two-byte field. Nagle is off on the socket:
a step is one small command and one small event, and a delayed ACK would cost 40 ms.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import NamedTuple

from polydbg.errors import AdapterGoneError
from polydbg.jdwp.codec import HANDSHAKE, HEADER
from polydbg.transport.streams import no_delay


class Packet(NamedTuple):
    id: int
    flags: int
    head: int  # a reply's error code, or a command's (command set << 8 | command)
    data: bytes


def command(packet_id: int, command_set: int, command: int, data: bytes = b"") -> Packet:
    return Packet(packet_id, 0, command_set << 8 | command, data)


def encode(packet: Packet) -> bytes:
    return HEADER.pack(HEADER.size + 2 + len(packet.data), packet.id, packet.flags) + packet.head.to_bytes(2, "big") \
        + packet.data


class PacketStream:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        no_delay(writer)

    @classmethod
    async def handshake(cls, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                        timeout_s: float) -> PacketStream:
        """Exchange JDWP's greeting on an open connection (either side may have connected)."""
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
        return cls(reader, writer)

    async def receive(self) -> Packet | None:
        try:
            header = await self._reader.readexactly(HEADER.size)
            length, packet_id, flags = HEADER.unpack(header)
            rest = await self._reader.readexactly(length - HEADER.size)
        except (asyncio.IncompleteReadError, OSError):
            return None
        return Packet(packet_id, flags, int.from_bytes(rest[:2], "big"), rest[2:])

    async def send(self, message: Packet) -> None:
        self._writer.write(encode(message))
        await self._writer.drain()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)
