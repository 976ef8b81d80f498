"""The program's output under delve: dlv's stdout and stderr, and delve's own ``output`` events.

delve does not send the debuggee's stdout/stderr as DAP output events; the debuggee inherits dlv's
own stdout/stderr. Both pipes are read here (``DlvPipes``) and forwarded as program output, except
delve's own lines: everything before the debuggee exists (the listening line, start-up warnings)
and delve's log lines, which are kept for error messages instead. The first stdout line, ``DAP
server listening at: host:port``, is the readiness signal the backend waits for (``listening``).

Of delve's ``output`` events, console lines about itself ("Type 'dlv help' …", "Detaching") are
dropped, the exit status line ("Process N has exited with status S") is an exit, and the
``> [Go N]: `` prefix delve puts on a logpoint's message is removed (its goroutine takes the place of a trace's
mark of the thread), and an {expression} delve could not evaluate reads ``<error: …>`` as on the other debuggers
(a trace's `where` that fails is then no hit where it held).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import re
from collections.abc import Callable

from polydbg import procs
from polydbg.backends.base import TRACE_THREAD
from polydbg.errors import EnvironmentProblem

log = logging.getLogger(__name__)

_LISTENING = re.compile(r"(?:DAP|API) server listening at: *(\S+):(\d+)")
# Lines delve itself writes on the stdout/stderr it shares with the debuggee.
_OWN_LINE = re.compile(
    r"(?:(?:DAP|API) server listening at:"
    r"|\d{4}-\d\d-\d\dT\S+ (?:debug|info|warning|error|fatal|panic) layer="
    r"|could not create config directory"
    r"|Warning: (?:dap mode|accept-multiclient|init file|continue ignored|backend ignored|build flags ignored"
    r"|working directory ignored|debug arguments ignored|program flags ignored))")
_HOUSEKEEPING = re.compile(r"Type 'dlv help'|Detaching(?: and terminating target process)?\n?$")
_LOGPOINT_PREFIX = re.compile(r"> \[Go (-?\d+)\]: ")
# delve writes an {expression} it cannot evaluate with a Go format meant for an error value (1.20):
# {eval err: &{%!e(string=could not find symbol value for x)}}
_EVAL_ERROR = re.compile(r"\{eval err: &\{%!e\(string=(.*?)\)\}\}")
_EXIT_STATUS = re.compile(r"Process (\d+) has exited with status (-?\d+)")
_LINES = re.compile(r"[^\n]*\n|[^\n]+")


def sorted_lines(text: str, at_line_start: bool, program_started: bool) -> tuple[list[tuple[str, bool]], bool]:
    """``text`` read from a pipe, in lines, each marked whether delve wrote it (everything before the
    program started; after, lines that begin like delve's own); and whether the text ends a line."""
    pieces = []
    for piece in _LINES.findall(text):
        own = not program_started or (at_line_start and _OWN_LINE.match(piece) is not None)
        pieces.append((piece, own))
        at_line_start = piece.endswith("\n")
    return pieces, at_line_start


def exit_status(text: str) -> int | None:
    """The exit status in delve's console line "Process N has exited with status S", if it is one."""
    exited = _EXIT_STATUS.search(text)
    return int(exited[2]) if exited else None


def is_housekeeping(text: str) -> bool:
    """A console line delve writes about itself."""
    return _HOUSEKEEPING.match(text) is not None


def logpoint_text(text: str) -> str | None:
    """A logpoint's message without delve's ``> [Go N]: `` prefix, a trace's mark of the thread (``TRACE_THREAD``)
    replaced by that goroutine, its evaluation errors as ``<error: …>``; None if it has none."""
    prefix = _LOGPOINT_PREFIX.match(text)
    if prefix is None:
        return None
    message = _EVAL_ERROR.sub(lambda error: f"<error: {error[1]}>", text[prefix.end():])
    return message.replace(TRACE_THREAD, f"goroutine {prefix[1]}", 1)


class DlvPipes:
    """dlv's stdout and stderr, read until they close: delve's lines remembered, the program's forwarded."""

    def __init__(self, name: str, proc: procs.DebuggerProcess, emit: Callable[[str, str], None]) -> None:
        self._name = name
        self._proc = proc
        self._emit = emit  # (category, text) → the session, as program output
        self.program_started = False  # from here on, dlv's stdout/stderr carry the program's output

    async def listening(self, stdout: asyncio.StreamReader) -> tuple[str, int]:
        """The host and port dlv dap listens at, from its first lines (delve's own, remembered)."""
        while True:
            raw = await stdout.readline()
            if not raw:
                code = await procs.reap(self._proc.process, 1.0) if self._proc.process is not None else None
                raise EnvironmentProblem(f"dlv dap exited before listening (exit code {code})"
                                         f"{self._proc.stderr_hint()}")
            line = raw.decode("utf-8", "replace")
            match = _LISTENING.search(line)
            if match:
                return match[1], int(match[2])
            self._proc.remember(line)

    async def pump(self, reader: asyncio.StreamReader, category: str) -> None:
        """Forward what arrives on one of dlv's pipes as program output, minus delve's own lines."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        at_line_start = True
        while True:
            try:
                chunk = await reader.read(64 * 1024)
            except (OSError, ValueError):
                chunk = b""
            text = decoder.decode(chunk, final=not chunk)
            pieces, at_line_start = sorted_lines(text, at_line_start, self.program_started)
            kept = []
            for piece, own in pieces:
                if own or category == "stderr":
                    self._proc.remember(piece)
                if own:
                    log.debug("%s %s: %s", self._name, category, piece.rstrip())
                else:
                    kept.append(piece)
            if kept:
                self._emit(category, "".join(kept))
            if not chunk:
                return
