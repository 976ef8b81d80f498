"""DapClient over an in-memory stream, with the test playing the adapter by hand."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from typing import Any

import pytest

from polydbg.dap.client import DapClient
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.transport.streams import MemoryStream, memory_pair

DEADLINE_S = 2.0  # generous upper bound for things that happen within a few loop iterations


class FakeAdapter:
    """The adapter's end of the pipe: read what the client sent, answer by hand."""

    def __init__(self, stream: MemoryStream) -> None:
        self.stream = stream
        self._seq = 1000

    async def receive(self) -> dict[str, Any]:
        message = await asyncio.wait_for(self.stream.receive(), DEADLINE_S)
        assert message is not None, "client closed the stream"
        return message

    async def send(self, message: dict[str, Any]) -> None:
        self._seq += 1
        await self.stream.send({"seq": self._seq, **message})

    async def respond(self, request: dict[str, Any], body: Any = None, **fields: Any) -> None:
        response: dict[str, Any] = {"type": "response", "request_seq": request["seq"],
                                    "command": request["command"], "success": True, **fields}
        if body is not None:
            response["body"] = body
        await self.send(response)

    async def event(self, name: str, body: Any = None) -> None:
        message: dict[str, Any] = {"type": "event", "event": name}
        if body is not None:
            message["body"] = body
        await self.send(message)

    async def serve_one(self, body: Any = None) -> dict[str, Any]:
        """Receive one request and answer it successfully."""
        request = await self.receive()
        await self.respond(request, body)
        return request


@pytest.fixture
async def pair() -> AsyncIterator[tuple[DapClient, FakeAdapter]]:
    client_end, adapter_end = memory_pair()
    client = DapClient(client_end, "fake")
    client.start()
    yield client, FakeAdapter(adapter_end)
    await client.close()


async def round_trip(client: DapClient, adapter: FakeAdapter, command: str = "threads") -> dict[str, Any]:
    """One full request/response: everything the adapter sent before it has been dispatched after it."""
    task = asyncio.create_task(client.request(command, timeout=DEADLINE_S))
    request = await adapter.receive()
    assert request["command"] == command
    await adapter.respond(request, {"echo": command})
    return await task


# -- requests and responses ------------------------------------------------------------------------


async def test_request_envelope_and_body(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    task = asyncio.create_task(client.request("evaluate", {"expression": "x"}, timeout=DEADLINE_S))
    request = await adapter.receive()
    assert request["type"] == "request"
    assert request["command"] == "evaluate"
    assert request["arguments"] == {"expression": "x"}
    assert isinstance(request["seq"], int)
    await adapter.respond(request, {"result": "42"})
    assert await task == {"result": "42"}


async def test_request_without_arguments_omits_them(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    task = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    request = await adapter.receive()
    assert "arguments" not in request
    await adapter.respond(request)
    assert await task == {}  # no body → empty dict


async def test_non_object_body_becomes_empty_dict(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    task = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    await adapter.respond(await adapter.receive(), ["not", "an", "object"])
    assert await task == {}


async def test_concurrent_requests_correlated_when_answered_out_of_order(
        pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    commands = ["stackTrace", "scopes", "variables", "evaluate", "threads"]
    tasks = [asyncio.create_task(client.request(c, {"tag": c}, timeout=DEADLINE_S)) for c in commands]
    requests = [await adapter.receive() for _ in commands]
    seqs = [r["seq"] for r in requests]
    assert len(set(seqs)) == len(seqs), "sequence numbers must be unique"
    assert seqs == sorted(seqs)
    # answer in a scrambled order; each body names the request it answers
    for request in [requests[i] for i in (3, 0, 4, 2, 1)]:
        await adapter.respond(request, {"answer_to": request["arguments"]["tag"]})
    results = await asyncio.gather(*tasks)
    assert [r["answer_to"] for r in results] == commands
    assert len(client._pending) == 0


async def test_send_request_future_resolves_later(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    launch = client.send_request("launch", {"program": "p"})
    config = client.send_request("configurationDone")
    launch_request = await adapter.receive()
    config_request = await adapter.receive()
    await adapter.respond(config_request)  # answered first, as lldb-dap does
    assert await asyncio.wait_for(config, DEADLINE_S) == {}
    assert not launch.done()
    await adapter.respond(launch_request, {"ok": 1})
    assert await asyncio.wait_for(launch, DEADLINE_S) == {"ok": 1}


async def test_unknown_and_duplicate_responses_are_ignored(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    await adapter.send({"type": "response", "request_seq": 999_999, "command": "x", "success": True})
    await adapter.send({"type": "response", "command": "x", "success": True})  # no request_seq at all
    await adapter.send({"type": "weird"})  # unknown message type
    task = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    request = await adapter.receive()
    await adapter.respond(request, {"first": True})
    await adapter.respond(request, {"second": True})
    assert await task == {"first": True}
    assert await round_trip(client, adapter) == {"echo": "threads"}
    assert not client.is_closed


# -- failed requests --------------------------------------------------------------------------------


async def failing_request(client: DapClient, adapter: FakeAdapter, **fields: Any) -> AdapterRequestError:
    task = asyncio.create_task(client.request("evaluate", timeout=DEADLINE_S))
    await adapter.respond(await adapter.receive(), success=False, **fields)
    with pytest.raises(AdapterRequestError) as info:
        await task
    assert info.value.command == "evaluate"
    return info.value


async def test_failure_uses_error_format_with_variables(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    error = await failing_request(client, adapter, message="raw", body={"error": {
        "id": 1, "format": "Unable to evaluate {expr}: {reason} ({expr})",
        "variables": {"expr": "a.b", "reason": "no attribute 'b'"}}})
    assert error.message == "Unable to evaluate a.b: no attribute 'b' (a.b)"
    assert str(error) == error.message


async def test_failure_format_without_variables_is_verbatim(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    error = await failing_request(client, adapter, message="raw", body={"error": {"format": "Keep {this} as is"}})
    assert error.message == "Keep {this} as is"


async def test_failure_variable_values_are_not_substituted_again(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    error = await failing_request(client, adapter, body={"error": {
        "format": "cannot evaluate {expr}; unknown {missing}",
        "variables": {"expr": "d['{name}']", "name": "WRONG"}}})
    assert error.message == "cannot evaluate d['{name}']; unknown {missing}"


async def test_failure_falls_back_to_message(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    error = await failing_request(client, adapter, message="notStopped", body={"error": {"id": 3}})
    assert error.message == "notStopped"
    error = await failing_request(client, adapter, message="cancelled", body="garbage")
    assert error.message == "cancelled"


async def test_failure_without_any_text(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    error = await failing_request(client, adapter)
    assert error.message == "request failed"


async def test_missing_success_counts_as_failure(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    task = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    request = await adapter.receive()
    await adapter.send({"type": "response", "request_seq": request["seq"], "command": "threads",
                        "message": "no success field"})
    with pytest.raises(AdapterRequestError, match="no success field"):
        await task


# -- timeouts ---------------------------------------------------------------------------------------


async def test_timeout_raises_and_forgets_the_request(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    with pytest.raises(AdapterTimeoutError, match=r"fake did not answer 'slow' within 0\.05 s"):
        await client.request("slow", timeout=0.05)
    slow = await adapter.receive()
    assert slow["command"] == "slow"
    # a late answer to the abandoned request is dropped; the client keeps working
    await adapter.respond(slow, {"late": True})
    assert await round_trip(client, adapter) == {"echo": "threads"}
    assert len(client._pending) == 0
    assert not client.is_closed


# -- end of stream ----------------------------------------------------------------------------------


async def test_eof_fails_every_waiter_and_later_requests(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    waiters = [asyncio.create_task(client.request(c, timeout=DEADLINE_S)) for c in ("a", "b", "c")]
    futures = [client.send_request("d"), client.send_request("e")]
    for _ in range(5):
        await adapter.receive()
    assert len(client._pending) == 5
    await adapter.stream.close()  # the adapter goes away without answering

    await asyncio.wait_for(client.closed.wait(), DEADLINE_S)
    for waiter in waiters:
        with pytest.raises(AdapterGoneError, match="fake closed its connection"):
            await waiter
    for future in futures:
        with pytest.raises(AdapterGoneError, match="fake closed its connection"):
            await future
    assert len(client._pending) == 0
    assert client.is_closed
    assert client.closed_reason == "fake closed its connection"

    late = client.send_request("f")
    assert late.done(), "a request after EOF must fail at once, not wait for a timeout"
    with pytest.raises(AdapterGoneError):
        late.result()
    with pytest.raises(AdapterGoneError):
        await client.request("g", timeout=DEADLINE_S)


async def test_eof_before_requests_are_read(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    waiter = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    await adapter.stream.close()
    with pytest.raises(AdapterGoneError):
        await asyncio.wait_for(waiter, DEADLINE_S)
    assert client.closed.is_set()


async def test_close_fails_waiters_and_tells_the_peer() -> None:
    client_end, adapter_end = memory_pair()
    client = DapClient(client_end, "fake")
    client.start()
    adapter = FakeAdapter(adapter_end)
    waiter = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    await adapter.receive()
    await client.close("session ended")
    with pytest.raises(AdapterGoneError, match="session ended"):
        await waiter
    assert client.closed.is_set()
    assert client.closed_reason == "session ended"
    assert await asyncio.wait_for(adapter_end.receive(), DEADLINE_S) is None
    with pytest.raises(AdapterGoneError):
        await client.request("threads", timeout=DEADLINE_S)


async def test_reader_crash_fails_waiters() -> None:
    class ExplodingStream(MemoryStream):
        async def receive(self) -> dict[str, Any] | None:
            message = await super().receive()
            if message is not None and message.get("event") == "boom":
                raise RuntimeError("decoder exploded")
            return message

    client_end, adapter_end = memory_pair()
    exploding = ExplodingStream(client_end._inbox, client_end._outbox)
    client = DapClient(exploding, "fake")
    client.start()
    adapter = FakeAdapter(adapter_end)
    try:
        waiter = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
        await adapter.receive()
        await adapter.event("boom")
        with pytest.raises(AdapterGoneError, match="reader failed: decoder exploded"):
            await waiter
        assert client.closed.is_set()
    finally:
        await client.close()


# -- events -----------------------------------------------------------------------------------------


async def test_events_routed_by_name(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    stopped: list[dict[str, Any]] = []
    stopped_again: list[dict[str, Any]] = []
    output: list[dict[str, Any]] = []
    everything: list[tuple[str, dict[str, Any]]] = []
    client.on_event("stopped", stopped.append)
    client.on_event("stopped", stopped_again.append)
    client.on_event("output", output.append)
    client.on_any_event(lambda name, body: everything.append((name, body)))

    await adapter.event("stopped", {"reason": "breakpoint", "threadId": 1})
    await adapter.event("output", {"output": "hi\n"})
    await adapter.event("neverHeardOf", {"x": 1})
    await adapter.event("stopped", "not an object")
    await adapter.event("initialized")
    await round_trip(client, adapter)  # every event above has been dispatched by now

    assert stopped == [{"reason": "breakpoint", "threadId": 1}, {}]
    assert stopped_again == stopped
    assert output == [{"output": "hi\n"}]
    assert [name for name, _ in everything] == ["stopped", "output", "neverHeardOf", "stopped", "initialized"]
    assert everything[2] == ("neverHeardOf", {"x": 1})


async def test_unknown_event_without_any_handler(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    await adapter.event("mystery", {"a": 1})
    await adapter.send({"type": "event"})  # no event name at all
    assert await round_trip(client, adapter) == {"echo": "threads"}
    assert not client.is_closed


async def test_raising_handler_does_not_kill_the_reader(pair: tuple[DapClient, FakeAdapter],
                                                        caplog: pytest.LogCaptureFixture) -> None:
    client, adapter = pair
    seen: list[str] = []
    any_seen: list[str] = []

    def explode(_body: dict[str, Any]) -> None:
        raise ValueError("handler bug")

    def explode_any(_name: str, _body: dict[str, Any]) -> None:
        raise ValueError("any-handler bug")

    client.on_event("output", explode)
    client.on_event("output", lambda body: seen.append(body["output"]))
    client.on_any_event(explode_any)
    client.on_any_event(lambda name, _body: any_seen.append(name))

    with caplog.at_level(logging.ERROR, logger="polydbg.dap.client"):
        await adapter.event("output", {"output": "one"})
        await adapter.event("output", {"output": "two"})
        assert await round_trip(client, adapter) == {"echo": "threads"}

    assert seen == ["one", "two"], "the handler after the failing one still runs"
    assert any_seen == ["output", "output"]
    assert not client.is_closed
    assert sum("handler for event 'output' failed" in r.getMessage() for r in caplog.records) == 4


# -- reverse requests -------------------------------------------------------------------------------


async def test_unhandled_reverse_request_is_refused(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    await adapter.send({"type": "request", "command": "runInTerminal", "arguments": {"args": ["x"]}})
    reverse_seq = adapter._seq
    response = await adapter.receive()
    assert response["type"] == "response"
    assert response["request_seq"] == reverse_seq
    assert response["command"] == "runInTerminal"
    assert response["success"] is False
    assert "runInTerminal" in response["message"]
    assert isinstance(response["seq"], int)
    assert await round_trip(client, adapter) == {"echo": "threads"}


async def test_reverse_request_answered_by_handler(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    received: list[dict[str, Any]] = []

    async def run_in_terminal(arguments: dict[str, Any]) -> dict[str, Any]:
        received.append(arguments)
        return {"processId": 4242}

    client.on_reverse_request("runInTerminal", run_in_terminal)
    await adapter.send({"type": "request", "command": "runInTerminal",
                        "arguments": {"kind": "integrated", "args": ["python", "x.py"]}})
    reverse_seq = adapter._seq
    response = await adapter.receive()
    assert response["request_seq"] == reverse_seq
    assert response["success"] is True
    assert response["body"] == {"processId": 4242}
    assert received == [{"kind": "integrated", "args": ["python", "x.py"]}]

    # the reverse response's seq does not collide with the client's own request seqs
    task = asyncio.create_task(client.request("threads", timeout=DEADLINE_S))
    request = await adapter.receive()
    assert request["seq"] != response["seq"]
    await adapter.respond(request)
    await task


async def test_reverse_request_handler_failure_is_reported(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair

    async def start_debugging(_arguments: dict[str, Any]) -> dict[str, Any]:
        raise RuntimeError("cannot start child session")

    client.on_reverse_request("startDebugging", start_debugging)
    await adapter.send({"type": "request", "command": "startDebugging"})
    response = await adapter.receive()
    assert response["success"] is False
    assert response["message"] == "cannot start child session"
    assert await round_trip(client, adapter) == {"echo": "threads"}


async def test_slow_reverse_handler_does_not_block_responses(pair: tuple[DapClient, FakeAdapter]) -> None:
    client, adapter = pair
    gate = asyncio.Event()

    async def slow(_arguments: dict[str, Any]) -> dict[str, Any]:
        await gate.wait()
        return {"done": True}

    client.on_reverse_request("runInTerminal", slow)
    await adapter.send({"type": "request", "command": "runInTerminal"})
    assert await round_trip(client, adapter) == {"echo": "threads"}
    gate.set()
    response = await adapter.receive()
    assert response["command"] == "runInTerminal"
    assert response["body"] == {"done": True}


async def test_close_cancels_pending_reverse_handlers() -> None:
    client_end, adapter_end = memory_pair()
    client = DapClient(client_end, "fake")
    client.start()
    adapter = FakeAdapter(adapter_end)
    entered = asyncio.Event()
    cancelled = asyncio.Event()

    async def hang(_arguments: dict[str, Any]) -> dict[str, Any]:
        entered.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return {}

    client.on_reverse_request("runInTerminal", hang)
    await adapter.send({"type": "request", "command": "runInTerminal"})
    await asyncio.wait_for(entered.wait(), DEADLINE_S)
    await client.close()
    await asyncio.wait_for(cancelled.wait(), DEADLINE_S)
