"""Per-session program output: a bounded buffer addressed by absolute byte cursors.

A program printing 100 MB must neither stall the adapter nor grow memory: chunks are appended as
they arrive and the oldest are dropped past ``capacity``; a reader whose cursor points into dropped
data is told how many bytes it missed.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass

DEFAULT_CAPACITY = 4 * 1024 * 1024


@dataclass
class _Chunk:
    start: int  # absolute cursor of the first byte
    stream: str
    data: bytes

    @property
    def end(self) -> int:
        return self.start + len(self.data)


@dataclass(frozen=True)
class OutputSlice:
    text: str
    next_cursor: int
    dropped: int
    more: bool


class OutputBuffer:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._chunks: collections.deque[_Chunk] = collections.deque()
        self._capacity = capacity
        self._size = 0
        self.total = 0  # bytes ever written == the cursor just past the newest byte

    @property
    def first_cursor(self) -> int:
        return self._chunks[0].start if self._chunks else self.total

    def append(self, stream: str, text: str) -> None:
        data = text.encode("utf-8", "replace")
        if not data:
            return
        last = self._chunks[-1] if self._chunks else None
        if last is not None and last.stream == stream and len(last.data) < 64 * 1024:
            last.data += data
        else:
            self._chunks.append(_Chunk(self.total, stream, data))
        self.total += len(data)
        self._size += len(data)
        while self._size > self._capacity and len(self._chunks) > 1:
            self._size -= len(self._chunks.popleft().data)
        if self._size > self._capacity:  # a single chunk larger than the capacity: keep its tail
            chunk = self._chunks[0]
            cut = self._size - self._capacity
            while cut < len(chunk.data) and chunk.data[cut] & 0xC0 == 0x80:  # not into a character
                cut += 1
            chunk.data = chunk.data[cut:]
            chunk.start += cut
            self._size -= cut

    def read(self, cursor: int | None, max_bytes: int, streams: frozenset[str] | None = None) -> OutputSlice:
        """Up to ``max_bytes`` from ``cursor`` (None: the oldest retained byte), optionally of some streams.

        A budget smaller than the next character returns that one character, so paging always progresses.
        """
        start = self.first_cursor if cursor is None else max(0, min(cursor, self.total))
        dropped = max(0, self.first_cursor - start)
        start = max(start, self.first_cursor)
        parts: list[bytes] = []
        budget = max_bytes
        position = start
        for chunk in self._chunks:
            if chunk.end <= position:
                continue
            offset = position - chunk.start if position > chunk.start else 0
            if streams is not None and chunk.stream not in streams:
                position = chunk.end
                continue
            piece = chunk.data[offset:offset + budget]
            parts.append(piece)
            budget -= len(piece)
            position = chunk.start + offset + len(piece)
            if budget <= 0:
                break
        data = b"".join(parts)
        # never split a UTF-8 sequence: back off to a character boundary
        trimmed = _utf8_safe(data)
        if data and not trimmed and max_bytes < 4:
            return self.read(cursor, max_bytes + 1, streams)
        position -= len(data) - len(trimmed)
        return OutputSlice(text=trimmed.decode("utf-8", "replace"), next_cursor=position, dropped=dropped,
                           more=position < self.total)


def _utf8_safe(data: bytes) -> bytes:
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a leading or ASCII byte
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return data if need <= back else data[:-back]
    return data
