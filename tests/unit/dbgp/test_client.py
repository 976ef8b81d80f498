"""The DBGp client on its in-memory twin: what the protocol contract test does not cover (tests/unit/protocol) —
the init packet, output streams decoded from base64, a notification by name, a refusal's code, namespaces off
tags and attributes, a packet that is not XML skipped, and a continuation command answered only at the stop."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator
from typing import Any

import pytest

from polydbg.dbgp.client import DbgpClient, DbgpError, parse, text_of
from polydbg.transport.streams import MemoryStream, memory_pair

DEADLINE_S = 2.0
NS = 'xmlns="urn:debugger_protocol_v1" xmlns:xdebug="https://xdebug.org/dbgp/xdebug"'


@pytest.fixture
async def pair() -> AsyncIterator[tuple[DbgpClient, MemoryStream[str]]]:
    near, far = memory_pair()
    client = DbgpClient(near, "fake-xdebug")
    client.start()
    yield client, far
    await client.close()


async def command(far: MemoryStream[str]) -> tuple[str, str]:
    line = await asyncio.wait_for(far.receive(), DEADLINE_S)
    assert line is not None
    words = line.split()
    return words[0], words[words.index("-i") + 1]


async def test_init_stream_and_notify_are_events(pair: tuple[DbgpClient, MemoryStream[str]]) -> None:
    client, far = pair
    seen: list[tuple[str, Any]] = []
    client.on_event("init", lambda body: seen.append(("init", body["element"].get("fileuri"))))
    client.on_event("stream", lambda body: seen.append(("stream", (body["type"], body["text"]))))
    client.on_event("breakpoint_resolved", lambda body: seen.append(("notify", body["element"].tag)))
    await far.send(f'<init {NS} fileuri="file:///a.php" language="PHP"><engine>Xdebug</engine></init>')
    encoded = base64.b64encode("caf\u00e9".encode()).decode()
    await far.send(f'<stream {NS} type="stdout" encoding="base64">{encoded}</stream>')
    await far.send(f'<notify {NS} name="breakpoint_resolved"><breakpoint id="1"/></notify>')
    await far.send("not xml <")  # skipped, the reader goes on
    future = client.send("status")
    _, key = await command(far)
    await far.send(f'<response {NS} command="status" transaction_id="{key}" status="starting"/>')
    assert (await client.wait(future, "status", DEADLINE_S)).get("status") == "starting"
    assert seen == [("init", "file:///a.php"), ("stream", ("stdout", "caf\u00e9")), ("notify", "notify")]


async def test_a_refusal_carries_the_engine_s_code(pair: tuple[DbgpClient, MemoryStream[str]]) -> None:
    client, far = pair
    future = client.send("property_get", [("n", "$nope")])
    _, key = await command(far)
    await far.send(f'<response {NS} command="property_get" transaction_id="{key}"><error code="300">'
                   '<message><![CDATA[can not get property]]></message></error></response>')
    with pytest.raises(DbgpError, match="can not get property") as refused:
        await client.wait(future, "property_get", DEADLINE_S)
    assert refused.value.code == 300 and refused.value.command == "property_get"


async def test_run_is_answered_at_the_stop(pair: tuple[DbgpClient, MemoryStream[str]]) -> None:
    client, far = pair
    running = client.send("run")
    name, key = await command(far)
    assert name == "run"
    inspecting = client.send("stack_get")  # Xdebug 3.2 reads nothing while PHP runs: it waits behind the run
    await asyncio.sleep(0)
    assert not running.done()
    await far.send(f'<response {NS} command="run" transaction_id="{key}" status="break" reason="ok">'
                   '<xdebug:message filename="file:///a.php" lineno="3" exception="Warning" code="2">'
                   '<![CDATA[Undefined variable $x]]></xdebug:message></response>')
    stop = await client.wait(running, "run", DEADLINE_S)
    message = stop.find("message")
    assert message is not None
    assert (message.get("filename"), message.get("lineno"), message.get("exception")) == (
        "file:///a.php", "3", "Warning")
    assert text_of(message) == "Undefined variable $x"
    assert not inspecting.done()


def test_namespaces_are_taken_off_tags_and_attributes() -> None:
    element = parse(f'<response {NS} xdebug:extra="1"><xdebug:message lineno="2"/></response>')
    assert element.tag == "response" and element.get("extra") == "1"
    assert [child.tag for child in element] == ["message"]
