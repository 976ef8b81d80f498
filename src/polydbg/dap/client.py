"""DAP protocol client: sequence numbers, one table of pending request futures, event routing.

Sits on a ``MessageStream`` and knows the DAP envelope (request/response/event) but nothing about
any particular adapter. Responses are matched by ``request_seq``; events go to handlers registered
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

from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.transport.streams import MessageStream

log = logging.getLogger(__name__)

EventHandler = Callable[[dict[str, Any]], None]
AnyEventHandler = Callable[[str, dict[str, Any]], None]
ReverseHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]

DEFAULT_TIMEOUT_S = 30.0


class DapClient:
    """Talks DAP to one adapter over one stream."""

    def __init__(self, stream: MessageStream, name: str = "adapter") -> None:
        self._stream = stream
        self.name = name
        self._seq = 0
        self._pending: dict[int, tuple[str, asyncio.Future[dict[str, Any]]]] = {}
        self._event_handlers: dict[str, list[EventHandler]] = {}
        self._any_event_handlers: list[AnyEventHandler] = []
        self._reverse_handlers: dict[str, ReverseHandler] = {}
        self._reader: asyncio.Task[None] | None = None
        self._writes: set[asyncio.Task[None]] = set()  # in-flight writes, kept so they are not collected
        self._reverse: set[asyncio.Task[None]] = set()  # reverse requests being handled, cancelled on close
        self._closed_reason: str | None = None
        self.closed = asyncio.Event()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._reader is None:
            self._reader = asyncio.get_running_loop().create_task(self._read_loop(), name=f"dap-{self.name}")

    async def close(self, reason: str = "closed by polydbg") -> None:
        self._fail_all(reason)
        await self._stream.close()
        for task in list(self._reverse):
            task.cancel()
        if self._reader is not None and self._reader is not asyncio.current_task():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    @property
    def is_closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def closed_reason(self) -> str | None:
        return self._closed_reason

    # -- handlers ---------------------------------------------------------------------------------

    def on_event(self, event: str, handler: EventHandler) -> None:
        self._event_handlers.setdefault(event, []).append(handler)

    def on_any_event(self, handler: AnyEventHandler) -> None:
        self._any_event_handlers.append(handler)

    def on_reverse_request(self, command: str, handler: ReverseHandler) -> None:
        self._reverse_handlers[command] = handler

    # -- requests ---------------------------------------------------------------------------------

    def send_request(self, command: str, arguments: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        """Send a request now; the returned future resolves to the response's body.

        Used where the answer must not be awaited before something else is sent (lldb-dap answers
        ``launch`` only after ``configurationDone``). Prefer ``request``.
        """
        loop = asyncio.get_running_loop()
        future: asyncio.Future[dict[str, Any]] = loop.create_future()
        if self._closed_reason is not None:
            future.set_exception(AdapterGoneError(self._closed_reason))
            return future
        self._seq += 1
        seq = self._seq
        message: dict[str, Any] = {"seq": seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        self._pending[seq] = (command, future)
        future.add_done_callback(lambda _f: self._pending.pop(seq, None))
        task = loop.create_task(self._write(message, future))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        return future

    async def request(self, command: str, arguments: dict[str, Any] | None = None,
                      timeout: float = DEFAULT_TIMEOUT_S) -> dict[str, Any]:
        """Send a request and wait for its response body (``{}`` when the adapter sent none)."""
        future = self.send_request(command, arguments)
        return await wait_response(future, command, timeout, self.name)

    async def _write(self, message: dict[str, Any], future: asyncio.Future[dict[str, Any]]) -> None:
        try:
            await self._stream.send(message)
        except (ConnectionError, OSError, RuntimeError) as exc:
            if not future.done():
                future.set_exception(AdapterGoneError(f"{self.name}: cannot send {message['command']!r}: {exc}"))

    # -- reading ----------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = f"{self.name} closed its connection"
        try:
            while True:
                message = await self._stream.receive()
                if message is None:
                    break
                try:
                    self._dispatch(message)
                except (TypeError, ValueError, KeyError, AttributeError):
                    log.warning("%s: ignoring malformed message %.200r", self.name, message, exc_info=True)
        except asyncio.CancelledError:
            reason = f"{self.name} connection closed by polydbg"
            raise
        except Exception as exc:  # a bug in a handler must not leave waiters hanging
            log.exception("%s: reader failed", self.name)
            reason = f"{self.name} reader failed: {exc}"
        finally:
            self._fail_all(reason)

    def _dispatch(self, message: dict[str, Any]) -> None:
        kind = message.get("type")
        if kind == "response":
            self._on_response(message)
        elif kind == "event":
            self._on_event(message)
        elif kind == "request":
            task = asyncio.get_running_loop().create_task(self._on_reverse_request(message))
            self._reverse.add(task)
            task.add_done_callback(self._reverse.discard)
        else:
            log.warning("%s: ignoring message of unknown type %r", self.name, kind)

    def _on_response(self, message: dict[str, Any]) -> None:
        entry = self._pending.get(message.get("request_seq", -1))
        if entry is None:
            log.warning("%s: response to unknown request %s", self.name, message.get("request_seq"))
            return
        command, future = entry
        if future.done():
            return
        if message.get("success", False):
            body = message.get("body")
            future.set_result(body if isinstance(body, dict) else {})
        else:
            future.set_exception(AdapterRequestError(command, _error_text(message)))

    def _on_event(self, message: dict[str, Any]) -> None:
        name = message.get("event", "")
        body = message.get("body")
        body = body if isinstance(body, dict) else {}
        handlers = self._event_handlers.get(name, [])
        if not handlers and not self._any_event_handlers:
            log.debug("%s: unhandled event %s", self.name, name)
        for handler in handlers:
            try:
                handler(body)
            except Exception:
                log.exception("%s: handler for event %r failed", self.name, name)
        for any_handler in self._any_event_handlers:
            try:
                any_handler(name, body)
            except Exception:
                log.exception("%s: handler for event %r failed", self.name, name)

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

    def _fail_all(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
        for command, future in list(self._pending.values()):
            if not future.done():
                future.set_exception(AdapterGoneError(f"{reason} (while waiting for {command!r})"))
        self._pending.clear()
        self.closed.set()


async def wait_response(future: asyncio.Future[dict[str, Any]], command: str, timeout: float,
                        name: str = "adapter") -> dict[str, Any]:
    """Await a request future with a deadline; a timed-out request is abandoned, not retried."""
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except asyncio.TimeoutError:
        future.cancel()
        raise AdapterTimeoutError(f"{name} did not answer {command!r} within {timeout:g} s") from None
    except asyncio.CancelledError:
        future.cancel()  # the caller gave up: drop the pending entry too
        raise


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
