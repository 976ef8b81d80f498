"""Message streams over byte streams: gdb's MI lines (``LineStream``), DAP's Content-Length frames
(``FramedStream``) over a loopback socket pair, and the in-memory pair the protocol tests use."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest

from polydbg.transport.framing import encode_message
from polydbg.transport.streams import FramedStream, LineStream, memory_pair

DEADLINE_S = 2.0


class Written:
    """A writer that keeps what it is given (the debugger's stdin)."""

    def __init__(self) -> None:
        self.data = b""
        self.drains = 0

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        self.drains += 1


def lines_of(*chunks: bytes, limit: int = 64 * 1024, eof: bool = True) -> LineStream:
    reader = asyncio.StreamReader(limit=limit)
    for chunk in chunks:
        reader.feed_data(chunk)
    if eof:
        reader.feed_eof()
    return LineStream(reader, Written(), "gdb")


async def receive_all(stream: LineStream) -> list[str | None]:
    got: list[str | None] = []
    while (line := await asyncio.wait_for(stream.receive(), DEADLINE_S)) is not None:
        got.append(line)
    return [*got, None]


# -- LineStream ------------------------------------------------------------------------------------------------


async def test_lines_come_without_their_line_breaks_crlf_included() -> None:
    stream = lines_of(b'^done,value="1"\r\n', b"(gdb) \n", b"\n", b'~"text"\n')
    assert await receive_all(stream) == ['^done,value="1"', "(gdb) ", "", '~"text"', None]


async def test_a_line_longer_than_the_readers_limit_comes_whole() -> None:
    long = b"x" * 1000
    stream = lines_of(long + b"\n", b"next\n", limit=16)
    assert await receive_all(stream) == [long.decode(), "next", None]


async def test_a_long_line_arriving_in_pieces_comes_whole() -> None:
    reader = asyncio.StreamReader(limit=16)
    stream = LineStream(reader, Written(), "gdb")
    receiving = asyncio.ensure_future(stream.receive())
    for _ in range(10):
        reader.feed_data(b"y" * 25)
        await asyncio.sleep(0)
        assert not receiving.done()
    reader.feed_data(b"z\nafter\n")
    assert await asyncio.wait_for(receiving, DEADLINE_S) == "y" * 250 + "z"
    assert await asyncio.wait_for(stream.receive(), DEADLINE_S) == "after"


async def test_the_last_line_cut_by_eof_is_still_a_line() -> None:
    stream = lines_of(b"first\n", b"^exit without newline")
    assert await receive_all(stream) == ["first", "^exit without newline", None]
    assert await stream.receive() is None  # and the end stays the end


async def test_bytes_that_are_not_utf8_are_replaced_not_fatal() -> None:
    stream = lines_of(b"caf\xe9\n")
    assert await receive_all(stream) == ["caf\ufffd", None]


async def test_send_writes_one_line_and_drains() -> None:
    writer = Written()
    stream = LineStream(asyncio.StreamReader(), writer, "gdb")
    await stream.send("-exec-continue")
    await stream.send("-data-evaluate-expression \"é\"")
    assert writer.data == '-exec-continue\n-data-evaluate-expression "é"\n'.encode()
    assert writer.drains == 2


# -- FramedStream ----------------------------------------------------------------------------------------------


@pytest.fixture
async def framed() -> AsyncIterator[tuple[FramedStream, asyncio.StreamWriter]]:
    """polydbg's FramedStream on one end of a socket pair; the other end's writer plays the adapter."""
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    _their_reader, their_writer = await asyncio.open_connection(sock=theirs)
    stream = FramedStream(reader, writer, "fake-adapter")
    yield stream, their_writer
    await stream.close()
    their_writer.close()
    await their_writer.wait_closed()


async def test_several_messages_in_one_chunk_come_one_by_one(
        framed: tuple[FramedStream, asyncio.StreamWriter]) -> None:
    stream, adapter = framed
    adapter.write(b"".join(encode_message({"seq": n, "type": "event"}) for n in (1, 2, 3)))
    await adapter.drain()
    got = [await asyncio.wait_for(stream.receive(), DEADLINE_S) for _ in range(3)]
    assert [m and m["seq"] for m in got] == [1, 2, 3]


async def test_a_message_split_across_writes_comes_whole(framed: tuple[FramedStream, asyncio.StreamWriter]) -> None:
    stream, adapter = framed
    data = encode_message({"seq": 1, "body": {"text": "ü" * 100}})
    receiving = asyncio.ensure_future(stream.receive())
    adapter.write(data[:10])
    await adapter.drain()
    adapter.write(data[10:])
    await adapter.drain()
    assert await asyncio.wait_for(receiving, DEADLINE_S) == {"seq": 1, "body": {"text": "ü" * 100}}


async def test_a_bad_frame_ends_the_stream_after_the_good_messages_before_it(
        framed: tuple[FramedStream, asyncio.StreamWriter], caplog: pytest.LogCaptureFixture) -> None:
    stream, adapter = framed
    adapter.write(encode_message({"seq": 1}) + b"Content-Length: many\r\n\r\n{}")
    await adapter.drain()
    assert await asyncio.wait_for(stream.receive(), DEADLINE_S) == {"seq": 1}
    assert await asyncio.wait_for(stream.receive(), DEADLINE_S) is None
    adapter.write(encode_message({"seq": 2}))  # nothing after a bad frame is read: the stream cannot resync
    await adapter.drain()
    assert await asyncio.wait_for(stream.receive(), DEADLINE_S) is None
    assert "bad frame" in caplog.text


async def test_the_peer_closing_is_the_end_of_the_stream(framed: tuple[FramedStream, asyncio.StreamWriter]) -> None:
    stream, adapter = framed
    adapter.write(encode_message({"seq": 1}))
    adapter.close()
    assert await asyncio.wait_for(stream.receive(), DEADLINE_S) == {"seq": 1}
    assert await asyncio.wait_for(stream.receive(), DEADLINE_S) is None


async def test_send_frames_the_message() -> None:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours)
    their_reader, their_writer = await asyncio.open_connection(sock=theirs)
    stream = FramedStream(reader, writer, "fake-adapter")
    try:
        await stream.send({"seq": 1, "command": "threads"})
        expected = encode_message({"seq": 1, "command": "threads"})
        assert await asyncio.wait_for(their_reader.readexactly(len(expected)), DEADLINE_S) == expected
    finally:
        await stream.close()
        await stream.close()  # closing twice is harmless
        their_writer.close()
        await their_writer.wait_closed()


# -- memory_pair -----------------------------------------------------------------------------------------------


async def test_a_memory_pair_carries_messages_both_ways_in_order() -> None:
    left, right = memory_pair()
    await left.send({"n": 1})
    await left.send({"n": 2})
    await right.send("back")
    assert [await right.receive(), await right.receive(), await left.receive()] == [{"n": 1}, {"n": 2}, "back"]


async def test_closing_one_end_ends_both() -> None:
    left, right = memory_pair()
    await left.send("last")
    await left.close()
    assert await right.receive() == "last"
    assert await right.receive() is None
    assert await right.receive() is None  # the end stays the end
    assert await left.receive() is None
    with pytest.raises(ConnectionError):
        await left.send("after the close")
    await left.close()  # idempotent
