"""DBGp's framing over a loopback socket pair: packets from the engine (``<length>\\0<xml>\\0``, several in one
read or one split over reads, the XML declaration dropped), command lines to it (NUL-terminated, values quoted,
data base64), and a bad length or a missing NUL ending the stream instead of misreading what follows."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import socket
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest

from polydbg.dbgp.stream import DbgpStream, decode_packet, encode_command

DEADLINE_S = 2.0
pytestmark = pytest.mark.usefixtures("anyio_backend")  # keeps the parametrized test's parameter (test_contract)
INIT = ('<?xml version="1.0" encoding="iso-8859-1"?>\n<init xmlns="urn:debugger_protocol_v1" '
        'fileuri="file:///srv/app/index.php" language="PHP" appid="42"></init>')


def packet(xml: str) -> bytes:
    body = xml.encode()
    return str(len(body)).encode() + b"\0" + body + b"\0"


@dataclass
class Ends:
    stream: DbgpStream  # polydbg's end
    engine_reader: asyncio.StreamReader  # Xdebug's end
    engine_writer: asyncio.StreamWriter


@pytest.fixture
async def ends() -> AsyncIterator[Ends]:
    """polydbg's stream and the engine's reader and writer, on the two ends of a socket pair."""
    sockets = socket.socketpair()
    made = [await asyncio.open_connection(sock=end) for end in sockets]
    pair = Ends(DbgpStream(*made[0], "test"), *made[1])
    yield pair
    await pair.stream.close()
    pair.engine_writer.close()
    with contextlib.suppress(OSError):
        await pair.engine_writer.wait_closed()


async def test_packets_in_one_read_and_split_over_reads(ends: Ends) -> None:
    second = '<response xmlns="urn:debugger_protocol_v1" command="run" transaction_id="1" status="break"/>'
    both = packet(INIT) + packet(second)
    ends.engine_writer.write(both[:7])
    await ends.engine_writer.drain()
    receiving = asyncio.ensure_future(ends.stream.receive())
    await asyncio.sleep(0)
    assert not receiving.done()  # half a length is not a packet
    ends.engine_writer.write(both[7:])
    await ends.engine_writer.drain()
    first = await asyncio.wait_for(receiving, DEADLINE_S)
    assert first is not None
    assert first.startswith("<init ") and 'appid="42"' in first  # the declaration is gone
    assert await asyncio.wait_for(ends.stream.receive(), DEADLINE_S) == second


async def test_a_command_line_goes_out_nul_terminated(ends: Ends) -> None:
    await ends.stream.send(encode_command("eval", 7, data="$a + 1"))
    line = await asyncio.wait_for(ends.engine_reader.readuntil(b"\0"), DEADLINE_S)
    assert line == b"eval -i 7 -- " + base64.b64encode(b"$a + 1") + b"\0"


@pytest.mark.parametrize("bad", [b"12x\0<init/>\0", b"5\0<init/>\0", b"99999999999999\0"])
async def test_a_bad_length_or_a_missing_nul_ends_the_stream(ends: Ends, bad: bytes) -> None:
    ends.engine_writer.write(bad + packet(INIT))
    await ends.engine_writer.drain()
    assert await asyncio.wait_for(ends.stream.receive(), DEADLINE_S) is None


async def test_the_engine_closing_ends_the_stream(ends: Ends) -> None:
    ends.engine_writer.close()
    assert await asyncio.wait_for(ends.stream.receive(), DEADLINE_S) is None


def test_values_are_quoted_as_xdebug_reads_them() -> None:
    line = encode_command("breakpoint_set", 3, [("t", "exception"), ("x", "Fatal error")])
    assert line == 'breakpoint_set -i 3 -t exception -x "Fatal error"'
    assert encode_command("property_get", 4, [("n", '$a["x y"]'), ("d", "0")]) == \
        'property_get -i 4 -n "$a[\\"x y\\"]" -d 0'
    assert encode_command("x", 1, [("n", "back\\slash")]) == 'x -i 1 -n "back\\\\slash"'
    assert encode_command("x", 1, [("n", "")]) == 'x -i 1 -n ""'


def test_a_packet_s_text_is_utf8_whatever_its_declaration_says() -> None:
    body = '<?xml version="1.0" encoding="iso-8859-1"?>\n<init fileuri="file:///tmp/caf\u00e9.php"/>'.encode()
    assert decode_packet(body) == '<init fileuri="file:///tmp/caf\u00e9.php"/>'
