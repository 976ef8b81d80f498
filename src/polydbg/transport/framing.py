"""Content-Length framing (DAP base protocol): bytes ↔ JSON objects, incremental and bounded.

Written by hand because it is ~80 lines and every DAP library bundles it with its own I/O model;
we need only the codec, decoupled from how bytes arrive.
"""

from __future__ import annotations

import json
from typing import Any

from polydbg.errors import FramingError

MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_HEADER_BYTES = 8 * 1024
_HEADER_END = b"\r\n\r\n"


def encode_message(message: dict[str, Any]) -> bytes:
    """Serialise one message with its Content-Length header."""
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class ContentLengthDecoder:
    """Accumulates chunks and yields every complete message they contain.

    A chunk may hold part of a message or several messages. A bad header or an oversized body
    raises ``FramingError`` (the stream cannot be resynchronised after that).
    """

    def __init__(self, max_body: int = MAX_BODY_BYTES) -> None:
        self._buffer = bytearray()
        self._body_length: int | None = None
        self._max_body = max_body
        self._error: FramingError | None = None

    def feed(self, chunk: bytes) -> list[dict[str, Any]]:
        """Complete messages in the data so far; a framing error is raised after the good messages
        before it have been handed out (on this call if there are none, else on the next)."""
        if self._error is not None:
            raise self._error
        messages: list[dict[str, Any]] = []
        try:
            self._decode(chunk, messages)
        except FramingError as exc:
            if not messages:
                raise
            self._error = exc
        return messages

    def _decode(self, chunk: bytes, messages: list[dict[str, Any]]) -> None:
        self._buffer += chunk
        while True:
            if self._body_length is None:
                end = self._buffer.find(_HEADER_END)
                if end < 0:
                    if len(self._buffer) > MAX_HEADER_BYTES:
                        raise FramingError(f"no header terminator in {len(self._buffer)} bytes: "
                                           f"{bytes(self._buffer[:80])!r}")
                    return
                self._body_length = self._parse_header(bytes(self._buffer[:end]))
                del self._buffer[: end + len(_HEADER_END)]
            if len(self._buffer) < self._body_length:
                return
            body = bytes(self._buffer[: self._body_length])
            del self._buffer[: self._body_length]
            self._body_length = None
            messages.append(self._parse_body(body))

    def _parse_header(self, header: bytes) -> int:
        length: int | None = None
        for line in header.split(b"\r\n"):
            name, sep, value = line.partition(b":")
            if not sep:
                raise FramingError(f"malformed header line {line[:80]!r}")
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError as exc:
                    raise FramingError(f"Content-Length is not a number: {value[:40]!r}") from exc
        if length is None:
            raise FramingError(f"header without Content-Length: {header[:80]!r}")
        if length < 0 or length > self._max_body:
            raise FramingError(f"Content-Length {length} outside 0..{self._max_body}")
        return length

    @staticmethod
    def _parse_body(body: bytes) -> dict[str, Any]:
        try:
            message = json.loads(body)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise FramingError(f"body is not JSON ({exc}): {body[:80]!r}") from exc
        if not isinstance(message, dict):
            raise FramingError(f"body is not a JSON object: {body[:80]!r}")
        return message
