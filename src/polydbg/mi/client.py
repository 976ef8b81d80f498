"""GDB/MI client: numeric tokens, one table of pending command futures, async-record routing.

Hand-written on asyncio over pygdbmi's *parser* only (``parse_response``), not pygdbmi's
``GdbController``: the controller polls gdb's output for a fixed time after every command
(``timeout_sec``, 1 s by default, or guesses when a response is complete), so every inspection
would pay that wait. Here each command goes out with an increasing numeric token and resolves the
moment its result record (``123^done`` / ``^running`` / ``^connected`` / ``^exit`` / ``^error``)
arrives, commands can be pipelined (sent before earlier ones are answered), and nothing waits a
fixed time.

Routing of what gdb prints:

* result records resolve the future of their token; ``^error`` becomes ``AdapterRequestError``;
* async records (``*stopped``, ``*running``, ``=thread-group-started``, ``=breakpoint-modified`` …)
  go to handlers registered by name; unknown ones are logged at debug level, never fatal;
* console (``~``) and log (``&``) stream text printed while a command is pending belongs to the
  oldest pending command (gdb runs commands one at a time, and prints a command's text before its
  result record), so ``-interpreter-exec console "…"`` returns what the CLI command printed;
  text printed while no command is pending (the inferior is running) goes to the stream handler,
  as does console text the ``claim_console`` predicate claims (logpoint output);
* target (``@``) text always goes to the stream handler.

Every wait has a deadline; when gdb's output ends every pending command fails with
``AdapterGoneError``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple, Protocol

from pygdbmi.gdbmiparser import parse_response

from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 30.0

AsyncHandler = Callable[[dict[str, Any]], None]
AnyAsyncHandler = Callable[[str, dict[str, Any]], None]
StreamHandler = Callable[[str, str], None]  # (kind: "console" | "log" | "target" | "output", text)

# gdb prints breakpoint command lists as a tuple of bare strings (script={"cmd","cmd"}), which is not
# valid MI for a parser (a tuple holds name=value pairs); rewrite it to a list before parsing.
_SCRIPT_TUPLE = re.compile(r'script=\{((?:"(?:[^"\\]|\\.)*",?)*)\}')
_RESULT_TOKEN = re.compile(r"^(\d+)\^")


class MiWriter(Protocol):
    """Where commands go: ``asyncio.StreamWriter`` (gdb's stdin) or a test double."""

    def write(self, data: bytes) -> None: ...


class MiResult(NamedTuple):
    """A command's result record and the stream text gdb printed while running it."""

    cls: str  # "done", "running", "connected" or "exit"
    payload: dict[str, Any]
    console: str = ""
    log: str = ""


class _Pending:
    __slots__ = ("command", "console", "future", "log")

    def __init__(self, command: str, future: asyncio.Future[MiResult]) -> None:
        self.command = command
        self.future = future
        self.console: list[str] = []
        self.log: list[str] = []


def mi_quote(text: str) -> str:
    """``text`` as an MI C-string argument (always quoted, so spaces and leading dashes are safe)."""
    out = ['"']
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif char == "\t":
            out.append("\\t")
        elif char == "\r":
            out.append("\\r")
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def command_name(command: str) -> str:
    return command.split(None, 1)[0] if command.strip() else command


class MiClient:
    """Talks GDB/MI to one gdb over a line stream."""

    def __init__(self, reader: asyncio.StreamReader, writer: MiWriter, name: str = "gdb",
                 claim_console: Callable[[str], bool] | None = None) -> None:
        self._reader = reader
        self._writer = writer
        self.name = name
        self._claim_console = claim_console
        self._token = 0
        self._pending: dict[int, _Pending] = {}
        self._handlers: dict[str, list[AsyncHandler]] = {}
        self._any_handlers: list[AnyAsyncHandler] = []
        self._stream_handlers: list[StreamHandler] = []
        self._task: asyncio.Task[None] | None = None
        self._closed_reason: str | None = None
        self.closed = asyncio.Event()

    # -- lifecycle --------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._read_loop(), name=f"mi-{self.name}")

    async def close(self, reason: str = "closed by polydbg") -> None:
        self._fail_all(reason)
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task

    @property
    def is_closed(self) -> bool:
        return self._closed_reason is not None

    @property
    def closed_reason(self) -> str | None:
        return self._closed_reason

    # -- handlers ---------------------------------------------------------------------------------

    def on_async(self, name: str, handler: AsyncHandler) -> None:
        """Call ``handler(payload)`` for each ``*name`` / ``=name`` record (e.g. "stopped")."""
        self._handlers.setdefault(name, []).append(handler)

    def on_any_async(self, handler: AnyAsyncHandler) -> None:
        self._any_handlers.append(handler)

    def on_stream(self, handler: StreamHandler) -> None:
        """Stream text no command claims: console/log while nothing is pending, target output."""
        self._stream_handlers.append(handler)

    # -- commands ---------------------------------------------------------------------------------

    def send(self, command: str) -> asyncio.Future[MiResult]:
        """Send ``command`` (an MI command without token) now; the future resolves to its result.

        Several commands may be sent before awaiting any: gdb answers them in order.
        """
        if "\n" in command or "\r" in command:
            raise ValueError(f"an MI command is one line: {command!r}")
        future: asyncio.Future[MiResult] = asyncio.get_running_loop().create_future()
        if self._closed_reason is not None:
            future.set_exception(AdapterGoneError(f"{self._closed_reason} (cannot send {command_name(command)!r})"))
            return future
        self._token += 1
        token = self._token
        self._pending[token] = _Pending(command, future)
        future.add_done_callback(lambda f: self._done(token, f))
        try:
            self._writer.write(f"{token}{command}\n".encode())
        except (ConnectionError, OSError, RuntimeError) as exc:
            if not future.done():
                future.set_exception(AdapterGoneError(f"{self.name}: cannot send {command_name(command)!r}: {exc}"))
        log.debug("%s <- %d%s", self.name, token, command)
        return future

    def _done(self, token: int, future: asyncio.Future[MiResult]) -> None:
        self._pending.pop(token, None)
        if not future.cancelled():
            future.exception()  # mark it retrieved: a pipelined command's failure may go unawaited

    async def command(self, command: str, timeout: float = DEFAULT_TIMEOUT_S) -> MiResult:
        """Send one command and wait for its result (``AdapterRequestError`` on ``^error``)."""
        return await wait_result(self.send(command), command, timeout, self.name)

    async def commands(self, commands: Iterable[str], timeout: float = DEFAULT_TIMEOUT_S) -> list[MiResult]:
        """Pipeline several commands; their results in order, or the first failure (all are awaited)."""
        sent = [(c, self.send(c)) for c in commands]
        return await gather_results(sent, timeout, self.name)

    # -- reading ----------------------------------------------------------------------------------

    async def _next_line(self) -> bytes | None:
        parts: list[bytes] = []
        while True:
            try:
                parts.append(await self._reader.readuntil(b"\n"))
                return b"".join(parts)
            except asyncio.LimitOverrunError as exc:  # a line longer than the reader's buffer
                parts.append(await self._reader.readexactly(exc.consumed))
            except asyncio.IncompleteReadError as exc:
                parts.append(exc.partial)
                line = b"".join(parts)
                return line if line else None

    async def _read_loop(self) -> None:
        reason = f"{self.name} closed its output"
        try:
            while True:
                raw = await self._next_line()
                if raw is None:
                    break
                self._dispatch(raw.decode("utf-8", "replace").rstrip("\r\n"))
        except asyncio.CancelledError:
            reason = f"{self.name} connection closed by polydbg"
            raise
        except Exception as exc:  # a bug in a handler must not leave waiters hanging
            log.exception("%s: MI reader failed", self.name)
            reason = f"{self.name} reader failed: {exc}"
        finally:
            self._fail_all(reason)

    def _dispatch(self, line: str) -> None:
        if not line or line.startswith("(gdb)"):
            return
        log.debug("%s -> %.300s", self.name, line)
        if "script={" in line:
            line = _SCRIPT_TUPLE.sub(r"script=[\1]", line)
        try:
            record = parse_response(line)
        except Exception:  # pygdbmi raises (or warns) on records it cannot read
            log.warning("%s: cannot parse MI record %.200r", self.name, line, exc_info=True)
            self._fail_unparsed(line)
            return
        kind = record.get("type")
        if kind == "result":
            self._on_result(record.get("token"), str(record.get("message")), record.get("payload"))
        elif kind == "notify":
            self._on_async(str(record.get("message")), record.get("payload"))
        elif kind in ("console", "log", "target"):
            self._on_stream(str(kind), str(record.get("payload") or ""))
        elif kind == "output":  # not MI at all (gdb printed something raw)
            self._emit_stream("output", str(record.get("payload") or "") + "\n")

    def _fail_unparsed(self, line: str) -> None:
        match = _RESULT_TOKEN.match(line)
        entry = self._pending.get(int(match.group(1))) if match else None
        if entry is not None and not entry.future.done():
            entry.future.set_exception(AdapterRequestError(command_name(entry.command),
                                                           f"unreadable answer from {self.name}: {line[:200]}"))

    def _on_result(self, token: int | None, cls: str, payload: Any) -> None:
        entry = self._pending.get(token) if token is not None else None
        if entry is None:
            log.debug("%s: result for unknown token %s: %s", self.name, token, cls)
            return
        if entry.future.done():
            return
        body = payload if isinstance(payload, dict) else {}
        if cls == "error":
            message = str(body.get("msg") or "command failed")
            entry.future.set_exception(AdapterRequestError(command_name(entry.command), message))
        else:
            entry.future.set_result(MiResult(cls, body, "".join(entry.console), "".join(entry.log)))

    def _on_async(self, name: str, payload: Any) -> None:
        body = payload if isinstance(payload, dict) else {}
        handlers = self._handlers.get(name, [])
        if not handlers and not self._any_handlers:
            log.debug("%s: unhandled async record %s", self.name, name)
        for handler in handlers:
            try:
                handler(body)
            except Exception:
                log.exception("%s: handler for %r failed", self.name, name)
        for any_handler in self._any_handlers:
            try:
                any_handler(name, body)
            except Exception:
                log.exception("%s: handler for %r failed", self.name, name)

    def _oldest_pending(self) -> _Pending | None:
        for entry in self._pending.values():
            if not entry.future.done():
                return entry
        return None

    def _on_stream(self, kind: str, text: str) -> None:
        if kind != "target" and not (kind == "console" and self._claim_console is not None
                                     and self._claim_console(text)):
            entry = self._oldest_pending()
            if entry is not None:
                (entry.console if kind == "console" else entry.log).append(text)
                return
        self._emit_stream(kind, text)

    def _emit_stream(self, kind: str, text: str) -> None:
        for handler in self._stream_handlers:
            try:
                handler(kind, text)
            except Exception:
                log.exception("%s: stream handler failed", self.name)

    def _fail_all(self, reason: str) -> None:
        if self._closed_reason is None:
            self._closed_reason = reason
        for entry in list(self._pending.values()):
            if not entry.future.done():
                entry.future.set_exception(
                    AdapterGoneError(f"{reason} (while waiting for {command_name(entry.command)!r})"))
        self._pending.clear()
        self.closed.set()


async def wait_result(future: asyncio.Future[MiResult], command: str, timeout: float,
                      name: str = "gdb") -> MiResult:
    """Await a command's future with a deadline; a timed-out command is abandoned, not retried."""
    try:
        return await asyncio.wait_for(asyncio.shield(future), timeout)
    except asyncio.TimeoutError:
        future.cancel()
        raise AdapterTimeoutError(f"{name} did not answer {command_name(command)!r} within {timeout:g} s") from None
    except asyncio.CancelledError:
        future.cancel()
        raise


async def gather_results(sent: list[tuple[str, asyncio.Future[MiResult]]], timeout: float,
                         name: str = "gdb") -> list[MiResult]:
    """Wait for pipelined commands; every future is awaited (no unretrieved errors), the first error raised."""
    results: list[MiResult] = []
    first: BaseException | None = None
    for command, future in sent:
        try:
            results.append(await wait_result(future, command, timeout, name))
        except (AdapterRequestError, AdapterTimeoutError, AdapterGoneError) as exc:
            if first is None:
                first = exc
    if first is not None:
        raise first
    return results
