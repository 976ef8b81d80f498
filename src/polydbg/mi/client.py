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

The pending table, event routing, deadlines (shortened while gdb is stalled) and close are the
shared ``ProtocolClient`` core, over a ``MessageStream`` of lines (``transport.streams.LineStream`` on gdb's
stdin and stdout): when gdb's output ends every pending command fails with ``AdapterGoneError``.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from pygdbmi.gdbmiparser import parse_response

from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.protocol.core import REQUEST_TIMEOUT_S, ProtocolClient
from polydbg.transport.streams import MessageStream

log = logging.getLogger(__name__)


AsyncHandler = Callable[[dict[str, Any]], None]
AnyAsyncHandler = Callable[[str, dict[str, Any]], None]
StreamHandler = Callable[[str, str], None]  # (kind: "console" | "log" | "target" | "output", text)

# gdb prints breakpoint command lists as a tuple of bare strings (script={"cmd","cmd"}), which is not
# valid MI for a parser (a tuple holds name=value pairs); rewrite it to a list before parsing.
_SCRIPT_TUPLE = re.compile(r'script=\{((?:"(?:[^"\\]|\\.)*",?)*)\}')
_RESULT_TOKEN = re.compile(r"^(\d+)\^")


class MiResult(NamedTuple):
    """A command's result record and the stream text gdb printed while running it."""

    cls: str  # "done", "running", "connected" or "exit"
    payload: dict[str, Any]
    console: str = ""
    log: str = ""


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


class MiClient(ProtocolClient[int, MiResult, str]):
    """Talks GDB/MI to one gdb over a line stream."""

    EOF_TEXT = "closed its output"

    def __init__(self, stream: MessageStream[str], name: str = "gdb",
                 claim_console: Callable[[str], bool] | None = None) -> None:
        super().__init__(stream, name)
        self._claim_console = claim_console
        self._token = 0
        self._stream_handlers: list[StreamHandler] = []
        self._printed: dict[int, tuple[list[str], list[str]]] = {}  # token → (console, log) text while it ran

    # -- handlers ---------------------------------------------------------------------------------

    def on_async(self, name: str, handler: AsyncHandler) -> None:
        """Call ``handler(payload)`` for each ``*name`` / ``=name`` record (e.g. "stopped")."""
        self.on_event(name, handler)

    def on_any_async(self, handler: AnyAsyncHandler) -> None:
        self.on_any_event(handler)

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
        self._token += 1
        token = self._token
        self._printed[token] = ([], [])
        future = self._send(token, command_name(command), f"{token}{command}")
        future.add_done_callback(lambda _f: self._printed.pop(token, None))
        log.debug("%s <- %d%s", self.name, token, command)
        return future

    async def command(self, command: str, timeout: float = REQUEST_TIMEOUT_S) -> MiResult:
        """Send one command and wait for its result (``AdapterRequestError`` on ``^error``)."""
        return await self.wait(self.send(command), command_name(command), timeout)

    async def commands(self, commands: Iterable[str], timeout: float = REQUEST_TIMEOUT_S) -> list[MiResult]:
        """Pipeline several commands; their results in order, or the first failure (all are awaited)."""
        sent = [(c, self.send(c)) for c in commands]
        return await self.gather(sent, timeout)

    async def gather(self, sent: list[tuple[str, asyncio.Future[MiResult]]], timeout: float) -> list[MiResult]:
        """Wait for pipelined commands; every future is awaited (no unretrieved errors), the first error raised."""
        results: list[MiResult] = []
        first: BaseException | None = None
        for command, future in sent:
            try:
                results.append(await self.wait(future, command_name(command), timeout))
            except (AdapterRequestError, AdapterTimeoutError, AdapterGoneError) as exc:
                if first is None:
                    first = exc
        if first is not None:
            raise first
        return results

    # -- reading ----------------------------------------------------------------------------------

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
            payload = record.get("payload")
            self._events.emit(str(record.get("message")), payload if isinstance(payload, dict) else {})
        elif kind in ("console", "log", "target"):
            self._on_stream(str(kind), str(record.get("payload") or ""))
        elif kind == "output":  # not MI at all (gdb printed something raw)
            self._emit_stream("output", str(record.get("payload") or "") + "\n")

    def _fail_unparsed(self, line: str) -> None:
        match = _RESULT_TOKEN.match(line)
        if match:
            token = int(match.group(1))
            entry = self._pending.get(token)
            if entry is not None:
                unreadable = f"unreadable answer from {self.name}: {line[:200]}"
                self._reject(token, AdapterRequestError(entry.label, unreadable))

    def _on_result(self, token: int | None, cls: str, payload: Any) -> None:
        entry = self._pending.get(token) if token is not None else None
        if token is None or entry is None:
            log.debug("%s: result for unknown token %s: %s", self.name, token, cls)
            self._heard_answer()
            return
        body = payload if isinstance(payload, dict) else {}
        if cls == "error":
            self._reject(token, AdapterRequestError(entry.label, str(body.get("msg") or "command failed")))
        else:
            console, printed_log = self._printed.get(token, ([], []))
            self._resolve(token, MiResult(cls, body, "".join(console), "".join(printed_log)))

    def _on_stream(self, kind: str, text: str) -> None:
        if kind != "target" and not (kind == "console" and self._claim_console is not None
                                     and self._claim_console(text)):
            entry = self._pending.oldest()
            printed = self._printed.get(entry.key) if entry is not None else None
            if printed is not None:
                printed[0 if kind == "console" else 1].append(text)
                return
        self._emit_stream(kind, text)

    def _emit_stream(self, kind: str, text: str) -> None:
        for handler in self._stream_handlers:
            try:
                handler(kind, text)
            except Exception:
                log.exception("%s: stream handler failed", self.name)


