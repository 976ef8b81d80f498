"""The JDWP client's commands sent together (``request_all``): one deadline for all, each answer in its place,
a refusal as the error it is, a deadline that passes abandons the rest and says so."""

from __future__ import annotations

import asyncio

import pytest

from polydbg.errors import AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import REPLY_FLAG, IdSizes, Writer
from polydbg.jdwp.stream import Packet
from polydbg.transport.streams import memory_pair

DEADLINE_S = 2.0


async def test_commands_sent_together_come_back_each_in_its_place() -> None:
    near, far = memory_pair()
    client = JdwpClient(near, "fake-jvm")
    client.start()
    asking = asyncio.ensure_future(client.request_all([(11, 1, Writer(IdSizes()).object_id(n).bytes())
                                                       for n in range(3)], "ThreadReference.Name", DEADLINE_S))
    received = [await asyncio.wait_for(far.receive(), DEADLINE_S) for _ in range(3)]
    assert all(packet is not None and packet.head == 11 << 8 | 1 for packet in received)
    for packet in reversed(received):  # answered out of order
        assert packet is not None
        if packet.data[-1] == 1:
            await far.send(Packet(packet.id, REPLY_FLAG, 15, b""))  # INVALID_OBJECT
        else:
            await far.send(Packet(packet.id, REPLY_FLAG, 0, Writer(IdSizes()).string(f"t{packet.data[-1]}").bytes()))
    first, refused, third = await asyncio.wait_for(asking, DEADLINE_S)
    assert not isinstance(first, JdwpRequestError) and first.string() == "t0"
    assert isinstance(refused, JdwpRequestError) and refused.code == 15
    assert not isinstance(third, JdwpRequestError) and third.string() == "t2"
    assert await client.request_all([], "nothing") == []
    await client.close()


async def test_a_deadline_that_passes_abandons_what_is_unanswered() -> None:
    near, far = memory_pair()
    client = JdwpClient(near, "fake-jvm")
    client.start()
    asking = asyncio.ensure_future(client.request_all([(11, 1, b"a"), (11, 1, b"b")], "ThreadReference.Name", 0.05))
    answered = await asyncio.wait_for(far.receive(), DEADLINE_S)
    assert answered is not None
    await far.send(Packet(answered.id, REPLY_FLAG, 0, b""))
    with pytest.raises(AdapterTimeoutError, match=r"did not answer 'ThreadReference\.Name' within 0\.05 s"):
        await asyncio.wait_for(asking, DEADLINE_S)
    assert client.stalled() is not None  # the one never answered is kept, abandoned
    await client.close()
