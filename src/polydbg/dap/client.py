"""DAP protocol client: sequence numbers, one table of pending request futures, event routing.

Sits on a ``MessageStream`` and knows the DAP envelope (request/response/event) but nothing about
any particular adapter; the pending table, event routing, deadlines and close are the shared
``ProtocolClient`` core. Responses are matched by ``request_seq``; events go to handlers registered
by name (unknown events are logged, never fatal); reverse requests (``runInTerminal``,
``startDebugging``) go to their own handler table and are refused when unhandled. When the stream
ends, every waiter fails with ``AdapterGoneError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.errors import AdapterRequestError
from polydbg.protocol.core import REQUEST_TIMEOUT_S, AnyEventHandler, EventHandler, ProtocolClient
from polydbg.transport.streams import MessageStream

log = logging.getLogger(__name__)

__all__ = ["AnyEventHandler", "DapClient", "EventHandler", "ReverseHandler"]

ReverseHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]



class DapClient(ProtocolClient[int, dict[str, Any], dict[str, Any]]):
    """Talks DAP to one adapter over one stream."""

    def __init__(self, stream: MessageStream[dict[str, Any]], name: str = "adapter") -> None:
        super().__init__(stream, name)
        self._seq = 0
        self._reverse_handlers: dict[str, ReverseHandler] = {}
        self._reverse: set[asyncio.Task[None]] = set()  # reverse requests being handled, cancelled on close

    async def _close_transport(self) -> None:
        await super()._close_transport()
        for task in list(self._reverse):
            task.cancel()

    def on_reverse_request(self, command: str, handler: ReverseHandler) -> None:
        self._reverse_handlers[command] = handler

    # -- requests ---------------------------------------------------------------------------------

    def send_request(self, command: str, arguments: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        """Send a request now; the returned future resolves to the response's body.

        Used where the answer must not be awaited before something else is sent (lldb-dap answers
        ``launch`` only after ``configurationDone``); await it with ``wait``. Prefer ``request``.
        """
        self._seq += 1
        message: dict[str, Any] = {"seq": self._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        return self._send(self._seq, command, message)

    async def request(self, command: str, arguments: dict[str, Any] | None = None,
                      timeout: float = REQUEST_TIMEOUT_S) -> dict[str, Any]:
        """Send a request and wait for its response body (``{}`` when the adapter sent none)."""
        return await self.wait(self.send_request(command, arguments), command, timeout)

    # -- reading ----------------------------------------------------------------------------------

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "response":
            self._on_response(message)
        elif kind == "event":
            body = message.get("body")
            self._events.emit(str(message.get("event", "")), body if isinstance(body, dict) else {})
        elif kind == "request":
            task = asyncio.get_running_loop().create_task(self._on_reverse_request(message))
            self._reverse.add(task)
            task.add_done_callback(self._reverse.discard)
        else:
            log.warning("%s: ignoring message of unknown type %r", self.name, kind)

    def _on_response(self, message: dict[str, Any]) -> None:
        seq = message.get("request_seq", -1)
        if message.get("success", False):
            body = message.get("body")
            entry = self._resolve(seq, body if isinstance(body, dict) else {})
        else:
            waiting = self._pending.get(seq)
            command = waiting.label if waiting is not None else str(message.get("command", ""))
            entry = self._reject(seq, AdapterRequestError(command, _error_text(message)))
        if entry is None:
            log.warning("%s: response to unknown request %s", self.name, seq)

    async def _on_reverse_request(self, message: dict[str, Any]) -> None:
        command = message.get("command", "")
        handler = self._reverse_handlers.get(command)
        response: dict[str, Any] = {"type": "response", "request_seq": message.get("seq"), "command": command}
        if handler is None:
            response.update(success=False, message=f"polydbg does not support reverse request {command!r}")
        else:
            try:
                response.update(success=True, body=await handler(message.get("arguments") or {}))
            except Exception as exc:
                response.update(success=False, message=str(exc))
        self._seq += 1
        response["seq"] = self._seq
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            await self._stream.send(response)


_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _error_text(message: dict[str, Any]) -> str:
    """The most specific human text of a failed response (DAP puts it in body.error.format)."""
    body = message.get("body")
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and isinstance(error.get("format"), str):
        text: str = error["format"]
        variables = error.get("variables")
        if isinstance(variables, dict):  # one pass, so a value containing "{name}" stays as it is
            text = _PLACEHOLDER.sub(lambda m: str(variables.get(m[1], m[0])), text)
        return text
    return str(message.get("message") or "request failed")
