"""The program's output under rdbg: its own stdout and stderr pipes, with rdbg's lines and polydbg's taken out.

rdbg runs inside the program's process and sends no ``output`` events (1.4.0's ``UI_DAP#puts`` drops what the
debugger prints), so polydbg reads the process's pipes itself. On stderr three writers share the pipe:

- rdbg itself: lines starting ``DEBUGGER:`` (listening, connected, a pending breakpoint activated) — kept for
  error messages, never shown as the program's; ``wait for debugger connection...`` is the sign that the program
  stopped at its first line and the socket accepts (``waiting``);
- a logpoint's message, written by its condition between ``LOG_MARK`` and ``LOG_END`` — a line of the logpoint
  stream;
- a note of polydbg's (a breakpoint condition that raised), between ``NOTE_MARK`` and ``NOTE_END`` — the console.

Everything else is the program's. A mark split across two reads is held until its end arrives (64 KiB at most).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
from collections.abc import Callable

from polydbg import procs
from polydbg.backends.base import LOGPOINT, logpoint_line
from polydbg.backends.dap.wire import LOG_END, LOG_MARK
from polydbg.backends.rdbg.ruby import NOTE_END, NOTE_MARK
from polydbg.errors import EnvironmentProblem

log = logging.getLogger(__name__)

OWN = "DEBUGGER: "
WAITING = "wait for debugger connection"
_MARKED = re.compile(re.escape(LOG_MARK) + r"(.*?)" + re.escape(LOG_END) + r"\n?|" + re.escape(NOTE_MARK) + r"(.*?)"
                     + re.escape(NOTE_END) + r"\n?", re.DOTALL)
_HELD_MAX = 64 * 1024


def split_stderr(text: str) -> tuple[list[tuple[str, str]], str]:
    """``text`` read from stderr as (category, text) pieces — ``stderr``, ``LOGPOINT``, ``console`` — and the tail
    to hold for the next read (a mark whose end has not arrived)."""
    pieces: list[tuple[str, str]] = []
    at = 0
    for match in _MARKED.finditer(text):
        if match.start() > at:
            pieces.append(("stderr", text[at:match.start()]))
        if match[1] is not None:
            pieces.append((LOGPOINT, logpoint_line(match[1])))
        else:
            pieces.append(("console", match[2] + "\n"))
        at = match.end()
    rest = text[at:]
    opened = max(rest.rfind(LOG_MARK), rest.rfind(NOTE_MARK))
    partial = next((i for i in range(max(0, len(rest) - len(LOG_MARK)), len(rest))
                    if LOG_MARK.startswith(rest[i:]) or NOTE_MARK.startswith(rest[i:])), None)
    cut = opened if opened >= 0 else partial
    if cut is not None and len(rest) - cut < _HELD_MAX:
        if cut:
            pieces.append(("stderr", rest[:cut]))
        return pieces, rest[cut:]
    if rest:
        pieces.append(("stderr", rest))
    return pieces, ""


class RubyPipes:
    """The program's stdout and stderr, read until they close: rdbg's lines remembered, the rest sorted."""

    def __init__(self, name: str, proc: procs.DebuggerProcess, emit: Callable[[str, str], None]) -> None:
        self._name = name
        self._proc = proc
        self._emit = emit  # (category, text) → the session

    async def waiting(self, stderr: asyncio.StreamReader) -> None:
        """Read rdbg's first lines until it says the program waits for the debugger at its first line (what the
        program wrote before that is its own)."""
        while True:
            raw = await stderr.readline()
            if not raw:
                code = await procs.reap(self._proc.process, 1.0) if self._proc.process is not None else None
                raise EnvironmentProblem(f"ruby exited before rdbg listened (exit code {code})"
                                         f"{self._proc.stderr_hint()}")
            line = raw.decode("utf-8", "replace")
            self._proc.remember(line)
            if line.startswith(OWN):
                if WAITING in line:
                    return
            else:
                self._emit("stderr", line)

    async def pump(self, reader: asyncio.StreamReader, category: str) -> None:
        """Forward what arrives on one of the program's pipes, sorted (``split_stderr``), until it closes."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        held = ""
        at_line_start = True
        while True:
            try:
                chunk = await reader.read(64 * 1024)
            except (OSError, ValueError):
                chunk = b""
            text = decoder.decode(chunk, final=not chunk)
            if category == "stdout":
                if text:
                    self._emit("stdout", text)
            else:
                pieces, held = split_stderr(held + text)
                for kind, piece in pieces:
                    at_line_start = self._stderr(kind, piece, at_line_start)
            if not chunk:
                if held:
                    self._emit("stderr", held)
                return

    def _stderr(self, kind: str, text: str, at_line_start: bool) -> bool:
        """Emit one sorted piece of stderr, rdbg's own lines left out; whether it ends a line."""
        if kind != "stderr":
            self._emit(kind, text)
            return at_line_start
        kept = []
        for line in text.splitlines(keepends=True):
            if at_line_start and line.startswith(OWN):
                self._proc.remember(line)
                log.debug("%s: %s", self._name, line.rstrip())
            else:
                kept.append(line)
            at_line_start = line.endswith("\n")
        if kept:
            self._emit("stderr", "".join(kept))
        return at_line_start
