"""DBGp's framing: packets from the engine (``<length>\\0<xml>\\0``), one command line to it (``...\\0``).

``DbgpStream`` is a ``MessageStream[str]`` over one connection: ``receive`` gives a packet's XML text
(decoded as UTF-8: Xdebug declares iso-8859-1 but writes file names and messages as the bytes PHP has, which
are UTF-8 in practice; string values come base64-encoded anyway), ``send`` writes a command line as made by
``encode_command``. A packet longer than ``MAX_PACKET`` or a length that is not a number ends the stream (the
bytes are logged), as a bad Content-Length frame does for DAP. Nagle is off: a step is one small command and
one small answer, and a delayed ACK would cost 40 ms.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
from collections.abc import Sequence

from polydbg.transport.streams import no_delay

log = logging.getLogger(__name__)

MAX_PACKET = 64 * 1024 * 1024  # Xdebug's largest answers are pages of a property (max_data bounds strings)
_MAX_LENGTH_DIGITS = 12


def encode_command(name: str, transaction_id: int, args: Sequence[tuple[str, str]] = (),
                   data: str | bytes | None = None) -> str:
    """One command line (without its NUL): ``name -i TID -x value … -- base64(data)``. A value with a space, a
    quote or a backslash is quoted, the quote and backslash escaped, as Xdebug's parser reads them."""
    parts = [name, "-i", str(transaction_id)]
    for flag, value in args:
        parts += [f"-{flag}", _quoted(value)]
    if data is not None:
        raw = data.encode() if isinstance(data, str) else data
        parts += ["--", base64.b64encode(raw).decode("ascii")]
    return " ".join(parts)


def _quoted(value: str) -> str:
    if value and not any(c in value for c in ' "\\\0'):
        return value
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def decode_packet(body: bytes) -> str:
    """A packet's XML as text, its ``<?xml …?>`` declaration dropped (its encoding is not the bytes')."""
    text = body.decode("utf-8", "replace")
    if text.startswith("<?xml"):
        end = text.find("?>")
        text = text[end + 2:] if end >= 0 else text
    return text.lstrip()


class DbgpStream:
    """The packets of one Xdebug connection (the engine connected to polydbg's listening socket)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, name: str = "xdebug") -> None:
        self._reader = reader
        self._writer = writer
        self.name = name
        no_delay(writer)

    async def receive(self) -> str | None:
        try:
            length = await self._reader.readuntil(b"\0")
            digits = length[:-1]
            if not digits.isdigit() or len(digits) > _MAX_LENGTH_DIGITS or int(digits) > MAX_PACKET:
                log.error("%s: bad packet length %.80r, closing the connection", self.name, digits)
                return None
            body = await self._reader.readexactly(int(digits) + 1)
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, OSError):
            return None
        if body[-1:] != b"\0":
            log.error("%s: a packet does not end in NUL (%.80r…), closing the connection", self.name, body[:80])
            return None
        return decode_packet(body[:-1])

    async def send(self, message: str) -> None:
        self._writer.write(message.encode() + b"\0")
        await self._writer.drain()

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            if not self._writer.is_closing():
                self._writer.close()
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)
