"""The part every debugger-protocol client shares: pending requests, event routing, close, deadlines.

DAP (sequence numbers), GDB/MI (tokens), CDP (message ids) and JDWP (packet ids) differ in their
envelope but not in this: a request goes out under a key, its future waits in one table until the
answer with that key arrives, events are routed to handlers by name, the reader's end fails every
waiter with the cause, and every wait has a deadline. A client reads and writes one
``MessageStream[M]`` (the transport seam: an in-memory pair in unit tests); its subclass supplies
``_dispatch`` (what a message means) and sends with ``_send``/``wait``.

A request that times out is *abandoned*, not forgotten: its entry stays until the answer arrives
late or the connection ends. While one is outstanding and nothing has been answered since, the
debugger counts as stalled, and later requests wait only ``STALLED_WAIT_S`` before failing with a
message that says the debugger is unresponsive — an agent pays a hung debugger's full deadline once,
not on every call. Any answer clears the stall; one request that runs on (an endless expression)
while the debugger answers others does not stall it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.transport.streams import MessageStream

log = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
R = TypeVar("R")
M = TypeVar("M")

REQUEST_TIMEOUT_S = 30.0  # a request's deadline when its caller names none
STALLED_WAIT_S = 1.0  # how long a request waits while an earlier one is still unanswered past its deadline

EventHandler = Callable[[dict[str, Any]], None]
AnyEventHandler = Callable[[str, dict[str, Any]], None]


@dataclass(eq=False)
class Pending(Generic[K, R]):
    """One request waiting for its answer."""

    key: K  # what its answer will carry (a sequence number, a token, a message or packet id)
    label: str  # what the request was, for messages ("evaluate", "-stack-list-frames")
    future: asyncio.Future[R]
    sent_at: float = field(default_factory=time.monotonic)
    abandoned_at: float | None = None  # monotonic time its deadline passed (kept to recognise a late answer)


class PendingTable(Generic[K, R]):
    """Request futures by key, in the order they were sent."""

    def __init__(self) -> None:
        self._entries: dict[K, Pending[K, R]] = {}
        self._abandoned: dict[K, Pending[K, R]] = {}  # the few past their deadline (a wait checks them, not all)

    def add(self, key: K, label: str) -> Pending[K, R]:
        entry: Pending[K, R] = Pending(key, label, asyncio.get_running_loop().create_future())
        self._entries[key] = entry
        entry.future.add_done_callback(lambda f: self._finished(key, entry))
        return entry

    def _finished(self, key: K, entry: Pending[K, R]) -> None:
        if self._entries.get(key) is entry:
            del self._entries[key]
        if self._abandoned.get(key) is entry:
            del self._abandoned[key]
        if not entry.future.cancelled():
            entry.future.exception()  # mark it retrieved: a pipelined or abandoned request may go unawaited

    def get(self, key: K) -> Pending[K, R] | None:
        return self._entries.get(key)

    def oldest(self) -> Pending[K, R] | None:
        """The earliest request still waiting (abandoned ones included: the debugger answers in order)."""
        for entry in self._entries.values():
            if not entry.future.done():
                return entry
        return None

    def abandon(self, entry: Pending[K, R]) -> None:
        """Its deadline passed: kept, unanswered, to recognise a late answer."""
        if entry.abandoned_at is None:
            entry.abandoned_at = time.monotonic()
            self._abandoned[entry.key] = entry

    def abandoned(self) -> list[Pending[K, R]]:
        """Requests whose deadline passed and that are still unanswered, oldest first."""
        return [e for e in self._abandoned.values() if not e.future.done()]

    def find(self, future: asyncio.Future[R]) -> Pending[K, R] | None:
        return next((e for e in self._entries.values() if e.future is future), None)

    def fail_all(self, reason: str) -> None:
        for entry in list(self._entries.values()):
            if not entry.future.done():
                entry.future.set_exception(AdapterGoneError(f"{reason} (while waiting for {entry.label!r})"))
        self._entries.clear()
        self._abandoned.clear()

    def __len__(self) -> int:
        return len(self._entries)


class EventRouter:
    """Handlers by event name, plus handlers of every event; a failing handler is logged, never fatal."""

    def __init__(self, owner: str) -> None:
        self._owner = owner
        self._handlers: dict[str, list[EventHandler]] = {}
        self._any: list[AnyEventHandler] = []

    def on(self, name: str, handler: EventHandler) -> None:
        self._handlers.setdefault(name, []).append(handler)

    def on_any(self, handler: AnyEventHandler) -> None:
        self._any.append(handler)

    def emit(self, name: str, body: dict[str, Any]) -> None:
        handlers = self._handlers.get(name, [])
        if not handlers and not self._any:
            log.debug("%s: unhandled event %s", self._owner, name)
        for handler in handlers:
            try:
                handler(body)
            except Exception:
                log.exception("%s: handler for event %r failed", self._owner, name)
        for any_handler in self._any:
            try:
                any_handler(name, body)
            except Exception:
                log.exception("%s: handler for event %r failed", self._owner, name)


class ProtocolClient(Generic[K, R, M]):
    """A reader task over one ``MessageStream[M]``, a ``PendingTable`` of requests, an ``EventRouter``.

    K is a request's key, R what its answer resolves to, M the protocol's message on the stream.
    """

    EOF_TEXT = "closed its connection"  # how the debugger's end reads in every waiter's error

    def __init__(self, stream: MessageStream[M], name: str) -> None:
        self.name = name
        self._stream = stream
        self._writes: set[asyncio.Task[None]] = set()  # messages being written, kept so they are not collected
        self._pending: PendingTable[K, R] = PendingTable()
        self._events = EventRouter(name)
        self._reader_task: asyncio.Task[None] | None = None
        self._closed_reason: str | None = None
        self._last_answer_at = 0.0
        self.closed = asyncio.Event()

    # -- what a protocol supplies ----------------------------------------------------------------

    def _dispatch(self, message: M) -> None:
        """Act on one message: resolve a pending request, emit an event, …"""
        raise NotImplementedError

    async def _close_transport(self) -> None:
        """Close the stream (a protocol with more to stop extends this)."""
        await self._stream.close()

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> None:
        if self._reader_task is None:
            self._reader_task = asyncio.get_running_loop().create_task(self._read_loop(), name=f"reader-{self.name}")

    async def close(self, reason: str = "closed by polydbg") -> None:
        self._fail_all(reason)
        await self._close_transport()
        if self._reader_task is not None and self._reader_task is not asyncio.current_task():
            self._reader_task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader_task

    @property
    def is_closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def closed_reason(self) -> str | None:
        return self._closed_reason

    # -- events ----------------------------------------------------------------------------------

    def on_event(self, name: str, handler: EventHandler) -> None:
        self._events.on(name, handler)

    def on_any_event(self, handler: AnyEventHandler) -> None:
        self._events.on_any(handler)

    # -- requests --------------------------------------------------------------------------------

    def _send(self, key: K, label: str, message: M) -> asyncio.Future[R]:
        """Send a request now; the future resolves to its answer (await it with ``wait``). Once the
        connection is closed, or when the message cannot be written, the future fails saying so."""
        if self._closed_reason is not None:
            failed: asyncio.Future[R] = asyncio.get_running_loop().create_future()
            failed.set_exception(AdapterGoneError(f"{self._closed_reason} (cannot send {label!r})"))
            return failed
        entry = self._pending.add(key, label)
        self._post(message, entry.future, label)
        return entry.future

    def _post(self, message: M, future: asyncio.Future[Any] | None = None, label: str = "") -> None:
        """Write a message in the background (in the order posted); a failed write fails ``future``."""
        task = asyncio.get_running_loop().create_task(self._write(message, future, label))
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)

    async def _write(self, message: M, future: asyncio.Future[Any] | None, label: str) -> None:
        try:
            await self._stream.send(message)
        except Exception as exc:  # a closed pipe or socket, a stream that refuses: the waiter learns why
            if future is not None and not future.done():
                future.set_exception(AdapterGoneError(f"{self.name}: cannot send {label!r}: {exc}"))
            else:
                log.debug("%s: cannot send %.200r: %s", self.name, message, exc)

    def unanswered_before(self, future: asyncio.Future[R]) -> Pending[K, R] | None:
        """The oldest request sent before ``future``'s that is still unanswered (None: there is none). A debugger
        that answers in order has not even begun on ``future``'s while it waits."""
        entry = self._pending.find(future)
        oldest = self._pending.oldest()
        return oldest if entry is not None and oldest is not None and oldest is not entry else None

    def stalled(self) -> Pending[K, R] | None:
        """The oldest request that passed its deadline, unanswered, with no answer to anything since."""
        for entry in self._pending.abandoned():
            if entry.abandoned_at is not None and entry.abandoned_at >= self._last_answer_at:
                return entry
        return None

    def _resolve(self, key: K, result: R) -> Pending[K, R] | None:
        """Answer the request ``key``; ``None`` when no request waits under it (late, unknown)."""
        return self._settle(key, lambda future: future.set_result(result))

    def _reject(self, key: K, error: BaseException) -> Pending[K, R] | None:
        return self._settle(key, lambda future: future.set_exception(error))

    def _settle(self, key: K, settle: Callable[[asyncio.Future[R]], None]) -> Pending[K, R] | None:
        entry = self._pending.get(key)
        if entry is not None and not entry.future.done():
            settle(entry.future)
        self._heard_answer()
        return entry

    async def wait(self, future: asyncio.Future[R], label: str, timeout: float) -> R:
        """Await a request's answer with a deadline (shortened while the debugger is stalled).

        A caller that gives up (cancellation) drops the request; a passed deadline abandons it.
        """
        stall = self.stalled()
        deadline = min(timeout, STALLED_WAIT_S) if stall is not None else timeout
        try:
            return await asyncio.wait_for(asyncio.shield(future), deadline)
        except asyncio.TimeoutError as exc:
            self._abandon(future)
            raise AdapterTimeoutError(self._timeout_text(label, timeout, deadline, stall)) from exc
        except asyncio.CancelledError:
            future.cancel()
            raise

    def _abandon(self, future: asyncio.Future[R]) -> None:
        entry = self._pending.find(future)
        if entry is None:
            future.cancel()  # not in the table (never registered): nothing to keep
        else:
            self._pending.abandon(entry)

    def _timeout_text(self, label: str, timeout: float, deadline: float, stall: Pending[K, R] | None) -> str:
        if stall is None or stall.abandoned_at is None:
            return f"{self.name} did not answer {label!r} within {timeout:g} s"
        age = time.monotonic() - stall.sent_at
        return (f"{self.name} is unresponsive: it has not answered {stall.label!r} for about {age:.0f} s "
                f"and did not answer {label!r} within {deadline:g} s either")

    def _heard_answer(self) -> None:
        """Any answer proves the debugger alive again: abandoned requests stop shortening deadlines
        (they stay in the table, so a late answer still reaches whoever kept their future)."""
        self._last_answer_at = time.monotonic()

    # -- reading ---------------------------------------------------------------------------------

    async def _read_loop(self) -> None:
        reason = f"{self.name} {self.EOF_TEXT}"
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

    def _fail_all(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
        self._pending.fail_all(reason)
        self.closed.set()
