"""Per-session program output: a bounded buffer addressed by absolute byte cursors, and the split of the
logpoints' stream between the agent's logpoints and polydbg's own tracepoints.

A program printing 100 MB must neither stall the adapter nor grow memory: chunks are appended as
they arrive and the oldest bytes are dropped past ``capacity``; a reader whose cursor points into
dropped data is told how many bytes it missed. Terminal escape sequences (colours, cursor moves) are
taken out on the way in: an agent reads text, and they only cost it tokens.

A tracepoint is a logpoint whose line starts with ``TRACE_PREFIX`` and its trace's token. Such a line
is never output: the running trace takes it, and one that arrives after its trace ended (a hit in
transit when ``max_hits`` was reached, the logpoint still being removed) is dropped.
"""

from __future__ import annotations

import collections
import re
import time
from collections.abc import Callable
from dataclasses import dataclass

DEFAULT_CAPACITY = 4 * 1024 * 1024
CHUNK_BYTES = 64 * 1024  # appends to the same stream merge into one chunk up to this size
# CSI (ESC [ … final), OSC (ESC ] … BEL or ESC \), and two-character escapes (ESC c, ESC 7 …)
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_0-9=>c])")
_PARTIAL_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*)?$")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
TRACE_PREFIX = "<<polydbg-trace-"


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


@dataclass(frozen=True)
class OutputTail:
    text: str
    skipped: int  # bytes of the same streams before ``text`` (after the cursor asked for), left out
    first: int  # the cursor of the first of them: debug_output(cursor=first, stream=…) reads from there


class OutputBuffer:
    def __init__(self, capacity: int = DEFAULT_CAPACITY) -> None:
        self._chunks: collections.deque[_Chunk] = collections.deque()
        self._capacity = capacity
        self._size = 0
        self._held: dict[str, str] = {}  # per stream: an escape sequence cut by the end of a write
        self.total = 0  # bytes ever written == the cursor just past the newest byte
        self.program_total = 0  # of those, the program's own (stdout, stderr): not the debugger's notes
        self.program_wrote_at = 0.0  # when the program last wrote (time.monotonic())

    @property
    def first_cursor(self) -> int:
        return self._chunks[0].start if self._chunks else self.total

    def append(self, stream: str, text: str) -> None:
        data = self._plain(stream, text).encode("utf-8", "replace")
        if not data:
            return
        last = self._chunks[-1] if self._chunks else None
        if last is not None and last.stream == stream and len(last.data) < CHUNK_BYTES:
            last.data += data
        else:
            self._chunks.append(_Chunk(self.total, stream, data))
        self.total += len(data)
        if stream in ("stdout", "stderr"):
            self.program_total += len(data)
            self.program_wrote_at = time.monotonic()
        self._size += len(data)
        while self._size > self._capacity:  # drop the oldest bytes, only as many as needed
            first = self._chunks[0]
            excess = self._size - self._capacity
            if len(first.data) <= excess:
                self._size -= len(self._chunks.popleft().data)
                continue
            cut = excess
            while cut < len(first.data) and first.data[cut] & 0xC0 == 0x80:  # not into a character
                cut += 1
            first.data = first.data[cut:]
            first.start += cut
            self._size -= cut

    def _plain(self, stream: str, text: str) -> str:
        """``text`` without terminal escapes; an escape cut by the end of the write waits for the rest."""
        text = self._held.pop(stream, "") + text
        partial = _PARTIAL_ESCAPE.search(text[-64:]) if "\x1b" in text[-64:] else None
        if partial is not None:
            self._held[stream] = partial.group(0)
            text = text[:len(text) - len(partial.group(0))]
        return _ESCAPE.sub("", text) if "\x1b" in text else text

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


    def tail(self, since: int, max_bytes: int, streams: frozenset[str]) -> OutputTail | None:
        """The last ``max_bytes`` that ``streams`` wrote after cursor ``since`` (from a line's start when cut), with
        how many of their bytes before that were left out; None when they wrote nothing since."""
        parts: list[bytes] = []  # newest first
        size = skipped = 0
        first: int | None = None
        for chunk in reversed(self._chunks):
            if chunk.end <= since:
                break
            if chunk.stream not in streams:
                continue
            data = chunk.data[max(0, since - chunk.start):]
            first = chunk.end - len(data)
            room = max(0, max_bytes - size)
            parts.append(data[len(data) - room:] if room < len(data) else data)
            size += len(parts[-1])
            skipped += len(data) - len(parts[-1])
        if first is None:
            return None
        data = b"".join(reversed(parts))
        if skipped:  # begin at a line's start, else at a character's
            newline = data.find(b"\n")
            cut = newline + 1 if 0 <= newline < len(data) - 1 else next(
                (i for i, byte in enumerate(data) if byte & 0xC0 != 0x80), len(data))
            data, skipped = data[cut:], skipped + cut
        return OutputTail(text=data.decode("utf-8", "replace"), skipped=skipped, first=first)


def whole_lines(page: OutputSlice) -> OutputSlice:
    """``page`` up to its last line's end when it has one and more follows (a table's rows are not cut)."""
    end = page.text.rfind("\n") + 1
    if not page.more or end in (0, len(page.text)):
        return page
    return OutputSlice(text=page.text[:end], next_cursor=page.next_cursor - len(page.text[end:].encode()),
                       dropped=page.dropped, more=True)


def _utf8_safe(data: bytes) -> bytes:
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 != 0x80:  # a leading or ASCII byte
            need = 1 if byte < 0x80 else 2 if byte >> 5 == 0b110 else 3 if byte >> 4 == 0b1110 else 4
            return data if need <= back else data[:-back]
    return data


class TraceLines:
    """Takes the tracepoints' lines out of the logpoints' stream: those of the running trace (the one whose
    token is ``claimed``) go to its sink, any other is dropped. A line cut by the end of a chunk is held until
    its end arrives when it may be a tracepoint's, so a hit split across two reads is still one hit."""

    def __init__(self) -> None:
        self._held = ""
        self._token: str | None = None
        self._sink: Callable[[str], None] | None = None

    def claim(self, token: str, sink: Callable[[str], None]) -> None:
        self._token, self._sink = token, sink

    def release(self) -> None:
        self._token = self._sink = None

    def split(self, text: str) -> str:
        """What remains of a chunk of the logpoints' stream for the agent."""
        text, self._held = self._held + text, ""
        if "<" not in text:
            return text
        kept = []
        for piece in _LINES.findall(text):
            if not piece.endswith("\n") and (piece.startswith(TRACE_PREFIX) or TRACE_PREFIX.startswith(piece)):
                self._held = piece  # the last piece: its end is in the next chunk
            elif not piece.startswith(TRACE_PREFIX):
                kept.append(piece)
            elif self._sink is not None and self._token is not None and piece.startswith(self._token):
                self._sink(piece[len(self._token):].rstrip("\r\n"))
        return "".join(kept)
