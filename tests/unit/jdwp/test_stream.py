"""JDWP's packets over a socket: the greeting (accepted, refused, unanswered), and packets each way — a command
carries its command set and command, a reply its error code — over a loopback socket pair."""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from polydbg.errors import AdapterGoneError
from polydbg.jdwp.codec import HANDSHAKE, HEADER, REPLY_FLAG, CommandSet
from polydbg.jdwp.stream import Packet, PacketStream, command, encode

DEADLINE_S = 2.0


@dataclass
class Ends:
    reader: asyncio.StreamReader  # polydbg's end
    writer: asyncio.StreamWriter
    jvm_reader: asyncio.StreamReader  # the JVM's end
    jvm_writer: asyncio.StreamWriter


@pytest.fixture
async def ends() -> AsyncIterator[Ends]:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    jvm_reader, jvm_writer = await asyncio.open_connection(sock=theirs)
    yield Ends(reader, writer, jvm_reader, jvm_writer)
    for end in (writer, jvm_writer):
        end.close()
        with contextlib.suppress(OSError):
            await end.wait_closed()


def test_a_command_and_a_reply_encode_their_header_and_head() -> None:
    packet = command(7, CommandSet.VM, 1, b"\x01\x02")
    assert packet == Packet(7, 0, CommandSet.VM << 8 | 1, b"\x01\x02")
    data = encode(packet)
    assert HEADER.unpack(data[:HEADER.size]) == (HEADER.size + 2 + 2, 7, 0)
    assert data[HEADER.size:] == bytes([CommandSet.VM, 1, 1, 2])
    reply = encode(Packet(7, REPLY_FLAG, 20, b""))  # error 20: INVALID_OBJECT
    assert reply == HEADER.pack(HEADER.size + 2, 7, REPLY_FLAG) + (20).to_bytes(2, "big")


async def test_the_handshake_is_accepted_when_the_jvm_greets_back(ends: Ends) -> None:
    shaking = asyncio.ensure_future(PacketStream.handshake(ends.reader, ends.writer, DEADLINE_S))
    assert await asyncio.wait_for(ends.jvm_reader.readexactly(len(HANDSHAKE)), DEADLINE_S) == HANDSHAKE
    ends.jvm_writer.write(HANDSHAKE)
    stream = await asyncio.wait_for(shaking, DEADLINE_S)
    assert isinstance(stream, PacketStream)


async def test_a_wrong_greeting_is_refused_as_no_jdwp_agent(ends: Ends) -> None:
    ends.jvm_writer.write(b"HTTP/1.1 400 B")  # as long as the greeting: something else listens on the port
    with pytest.raises(AdapterGoneError, match=r"not a JDWP agent \(it answered b.HTTP/1\.1 400 B."):
        await asyncio.wait_for(PacketStream.handshake(ends.reader, ends.writer, DEADLINE_S), DEADLINE_S)
    assert ends.writer.is_closing()


async def test_a_jvm_that_stays_silent_fails_the_handshake_at_its_deadline(ends: Ends) -> None:
    with pytest.raises(AdapterGoneError, match="did not complete the JDWP handshake"):
        await asyncio.wait_for(PacketStream.handshake(ends.reader, ends.writer, 0.05), DEADLINE_S)
    assert ends.writer.is_closing()


async def test_a_jvm_that_hangs_up_mid_greeting_fails_the_handshake(ends: Ends) -> None:
    shaking = asyncio.ensure_future(PacketStream.handshake(ends.reader, ends.writer, DEADLINE_S))
    await asyncio.wait_for(ends.jvm_reader.readexactly(len(HANDSHAKE)), DEADLINE_S)
    ends.jvm_writer.write(HANDSHAKE[:5])
    ends.jvm_writer.close()
    with pytest.raises(AdapterGoneError, match="did not complete the JDWP handshake: IncompleteReadError"):
        await asyncio.wait_for(shaking, DEADLINE_S)


async def test_packets_round_trip_both_ways(ends: Ends) -> None:
    ours = PacketStream(ends.reader, ends.writer)
    jvm = PacketStream(ends.jvm_reader, ends.jvm_writer)
    sent = command(1, CommandSet.THREAD_REFERENCE, 6, b"\x00" * 8 + b"\x00\x00\x00\x00\xff\xff\xff\xff")
    await ours.send(sent)
    assert await asyncio.wait_for(jvm.receive(), DEADLINE_S) == sent
    reply = Packet(1, REPLY_FLAG, 0, b"\x00\x00\x00\x02")
    event = command(5, CommandSet.EVENT, 100, b"\x02")  # the JVM's own command: a composite event
    await jvm.send(reply)
    await jvm.send(event)
    got = [await asyncio.wait_for(ours.receive(), DEADLINE_S) for _ in range(2)]
    assert got == [reply, event]
    assert got[0] is not None and got[0].flags & REPLY_FLAG and got[0].head == 0  # a reply: its head is the error
    assert got[1] is not None and not got[1].flags & REPLY_FLAG and divmod(got[1].head, 256) == (CommandSet.EVENT, 100)


async def test_a_packet_cut_by_the_end_of_the_connection_is_the_end(ends: Ends) -> None:
    ours = PacketStream(ends.reader, ends.writer)
    whole = encode(command(3, CommandSet.VM, 1))
    ends.jvm_writer.write(whole + encode(command(4, CommandSet.VM, 1, b"abcdef"))[:-2])
    ends.jvm_writer.close()
    assert await asyncio.wait_for(ours.receive(), DEADLINE_S) == command(3, CommandSet.VM, 1)
    assert await asyncio.wait_for(ours.receive(), DEADLINE_S) is None


async def test_close_ends_the_connection_and_is_idempotent(ends: Ends) -> None:
    ours = PacketStream(ends.reader, ends.writer)
    await ours.close()
    await ours.close()
    assert await asyncio.wait_for(ends.jvm_reader.read(), DEADLINE_S) == b""  # the JVM sees the end
