"""The exception tree of polydbg, and the one place lower errors are mapped to what an agent reads.

Every error that can reach an agent says what went wrong and what to do next; the MCP layer turns
any ``PolydbgError`` into an ``isError`` tool result carrying ``str(error)`` verbatim and, in its
structured content, the error's ``kind`` (so a client can tell a bad argument from a dead adapter).

    PolydbgError                    base; never raised bare                      kind
    ├── UsageError                  the caller's arguments are wrong             usage
    ├── SessionError                the session cannot do that now               session
    │   ├── UnknownSessionError     no such session id / no session at all       unknown_session
    │   ├── NotStoppedError         inspection needs a stopped program           not_stopped
    │   ├── ProgramMovedError       the program moved while it was being read    program_moved
    │   └── SessionEndedError       the program or its adapter is gone           session_ended
    ├── AdapterError                the debug adapter refused or failed a request  adapter
    │   ├── AdapterRequestError     a request answered with success=false        adapter_refused
    │   ├── AdapterTimeoutError     no answer within the deadline                adapter_timeout
    │   └── AdapterGoneError        the adapter's stream ended (EOF, crash)      adapter_gone
    ├── FramingError                bytes on the wire are not a valid message    framing
    ├── PolicyError                 the security policy refuses it               policy
    └── EnvironmentProblem          an interpreter or adapter is missing         environment

Adapter errors are protocol facts; the session maps them (``refused``) to the usage or session
error the agent should see, always chaining the cause (``raise … from exc``) so logs keep it.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Iterable, Iterator
from typing import ClassVar

ECHO_LIMIT = 200  # characters of a caller's input repeated in an error message


class PolydbgError(Exception):
    """Base of every error polydbg raises on purpose."""

    kind: ClassVar[str] = "error"


class UsageError(PolydbgError):
    """The arguments are wrong; the message says how to call it instead."""

    kind = "usage"


class SessionError(PolydbgError):
    """The session is not in a state that allows the operation."""

    kind = "session"


class UnknownSessionError(SessionError):
    """No session has this id (or there is no session at all)."""

    kind = "unknown_session"


class NotStoppedError(SessionError):
    """Inspection was asked of a program that is not stopped."""

    kind = "not_stopped"


class ProgramMovedError(SessionError):
    """The program resumed, stopped again or ended while an inspection was reading it.

    ``report`` is the stop report of the state it moved to (set by the session facade), so the
    answer shows where the program is now instead of data mixed from two stops.
    """

    kind = "program_moved"

    def __init__(self, message: str, report: object | None = None) -> None:
        super().__init__(message)
        self.report = report


class SessionEndedError(SessionError):
    """The debuggee or its adapter has ended."""

    kind = "session_ended"


class AdapterError(PolydbgError):
    """The debug adapter failed a request."""

    kind = "adapter"


class AdapterRequestError(AdapterError):
    """The adapter answered a request with ``success: false``."""

    kind = "adapter_refused"

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command
        self.message = message


class AdapterTimeoutError(AdapterError):
    """The adapter did not answer within the deadline."""

    kind = "adapter_timeout"


class AdapterGoneError(AdapterError):
    """The adapter's message stream ended; every pending request fails with this."""

    kind = "adapter_gone"


class FramingError(PolydbgError):
    """A malformed Content-Length frame (bad header, oversized body, invalid JSON)."""

    kind = "framing"


class PolicyError(PolydbgError):
    """The security policy refuses the request; the message names the setting and how to change it."""

    kind = "policy"


class EnvironmentProblem(PolydbgError):
    """A required interpreter or adapter is missing or broken."""

    kind = "environment"


def echo(value: object, limit: int = ECHO_LIMIT) -> str:
    """``repr(value)`` for an error message, clipped: an error never repeats a megabyte of input."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit - 1]}… ({len(text)} characters)"


def closest(word: str, choices: Iterable[str]) -> str | None:
    """The choice ``word`` most likely meant: a close spelling (``pyhton``, ``breakpoint``), or the one it
    begins or is the beginning of (``expr`` for ``expression``, ``lldb`` for ``lldb-dap``); None."""
    options = list(choices)
    lowered = word.lower()
    close = difflib.get_close_matches(lowered, options, n=1, cutoff=0.6)
    if close:
        return close[0]
    starts = [c for c in options if len(lowered) >= 3 and (c.startswith(lowered) or lowered.startswith(c))]
    return min(starts, key=len) if starts else None


def did_you_mean(word: str, choices: Iterable[str], otherwise: str = ";") -> str:
    """"; did you mean 'x'?" for the closest choice, or ``otherwise``."""
    found = closest(word, choices)
    return f"; did you mean {found!r}?" if found is not None else otherwise


@contextlib.contextmanager
def refused(what: str) -> Iterator[None]:
    """Map a debugger's refusal to the agent's error: ``UsageError("<what>: <the debugger's reason>")``.

    Only ``AdapterRequestError`` is mapped: a timeout or a vanished adapter is not the caller's
    mistake and keeps its own type (the session turns a vanished adapter into ``SessionEndedError``).
    """
    try:
        yield
    except AdapterRequestError as exc:
        raise UsageError(f"{what}: {exc.message}") from exc
