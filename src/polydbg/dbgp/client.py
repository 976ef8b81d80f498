"""DBGp client: commands to one Xdebug connection and the packets it sends, on the shared protocol core.

The pending table is keyed by transaction id (``-i``): a ``response`` carries its command's id, and one with an
``<error code>`` fails the waiter with a ``DbgpError`` naming the command and the engine's message. The other
packets are events: ``init`` (the connection's first packet: the script's ``fileuri``, ``language``, ``appid``),
``stream`` (the program's output, base64: ``{"type": "stdout", "text"}``) and each ``notify`` under its own name
(``breakpoint_resolved``, …). A continuation command (``run``, ``step_into``, …) is answered only when the
program breaks or ends: its future stays pending while the program runs, and its answer is the stop.

Messages are parsed with ``xml.etree.ElementTree`` (expat ≥ 2.4.1 refuses entity expansion bombs); tags and
attributes lose their namespaces (``xdebug:message`` reads ``message``).
"""

from __future__ import annotations

import asyncio
import base64
import logging
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from polydbg.dbgp.stream import encode_command
from polydbg.errors import AdapterRequestError
from polydbg.protocol.core import REQUEST_TIMEOUT_S, ProtocolClient
from polydbg.transport.streams import MessageStream

log = logging.getLogger(__name__)

Element = ET.Element


class DbgpError(AdapterRequestError):
    """A command the engine refused, with DBGp's error code (``code``: 5 not available now, 206 eval failed, 300
    no such property, …)."""

    def __init__(self, command: str, code: int, message: str) -> None:
        super().__init__(command, message)
        self.code = code


def parse(text: str) -> Element:
    """A packet's element with the namespaces taken off its tags and attributes."""
    root = ET.fromstring(text)
    for element in root.iter():
        element.tag = _local(element.tag)
        if any(key.startswith("{") for key in element.attrib):
            element.attrib = {_local(key): value for key, value in element.attrib.items()}
    return root


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def text_of(element: Element) -> str:
    """An element's text, decoded when Xdebug sent it base64 (``encoding="base64"``)."""
    raw = element.text or ""
    if element.get("encoding") == "base64":
        try:
            return base64.b64decode(raw).decode("utf-8", "replace")
        except ValueError:
            return raw
    return raw


class DbgpClient(ProtocolClient[int, Element, str]):
    """Commands and packets of one engine connection (one script run, one web request)."""

    def __init__(self, stream: MessageStream[str], name: str = "xdebug") -> None:
        super().__init__(stream, name)
        self._next_id = 0

    def send(self, command: str, args: Sequence[tuple[str, str]] = (), data: str | None = None,
             label: str | None = None) -> asyncio.Future[Element]:
        """Send a command now; the future resolves to its ``response`` element (await it with ``wait``)."""
        self._next_id += 1
        return self._send(self._next_id, label or command, encode_command(command, self._next_id, args, data))

    async def request(self, command: str, args: Sequence[tuple[str, str]] = (), data: str | None = None,
                      timeout: float = REQUEST_TIMEOUT_S, label: str | None = None) -> Element:
        name = label or command
        return await self.wait(self.send(command, args, data, name), name, timeout)

    def _dispatch(self, message: str) -> None:
        try:
            element = parse(message)
        except ET.ParseError:
            log.warning("%s: ignoring a packet that is not XML: %.200r", self.name, message)
            return
        kind = element.tag
        if kind == "response":
            key = int(element.get("transaction_id") or 0)
            error = element.find("error")
            if error is not None:
                waiting = self._pending.get(key)
                label = waiting.label if waiting is not None else str(element.get("command") or "command")
                found = error.find("message")
                text = (found.text or "").strip() if found is not None else ""
                entry = self._reject(key, DbgpError(label, int(error.get("code") or 0), text or "refused"))
            else:
                entry = self._resolve(key, element)
            if entry is None:
                log.debug("%s: answer to unknown transaction %s", self.name, key)
        elif kind == "stream":
            self._events.emit("stream", {"type": element.get("type") or "stdout", "text": text_of(element)})
        elif kind == "notify":
            self._events.emit(element.get("name") or "notify", {"element": element, "value": text_of(element)})
        elif kind == "init":
            self._events.emit("init", {"element": element})
        else:
            log.debug("%s: ignoring a %s packet", self.name, kind)
