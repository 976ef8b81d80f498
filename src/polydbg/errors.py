"""The exception tree of polydbg.

Every error that can reach an agent says what went wrong and what to do next; the MCP layer
turns any ``PolydbgError`` into an ``isError`` tool result carrying ``str(error)`` verbatim.

    PolydbgError                    base; never raised bare
    ├── UsageError                  the caller's arguments are wrong (bad path, line past the end, …)
    ├── SessionError                the session cannot do that now
    │   ├── UnknownSessionError     no such session id / no session at all
    │   ├── NotStoppedError         inspection needs a stopped program
    │   └── SessionEndedError       the program or its adapter is gone
    ├── AdapterError                the debug adapter refused or failed a request
    │   ├── AdapterRequestError     a request answered with success=false
    │   ├── AdapterTimeoutError     no answer within the deadline
    │   └── AdapterGoneError        the adapter's stream ended (EOF, crash)
    ├── FramingError                bytes on the wire are not a valid message
    └── EnvironmentProblem          an interpreter or adapter is missing / unusable
"""

from __future__ import annotations


class PolydbgError(Exception):
    """Base of every error polydbg raises on purpose."""


class UsageError(PolydbgError):
    """The arguments are wrong; the message says how to call it instead."""


class SessionError(PolydbgError):
    """The session is not in a state that allows the operation."""


class UnknownSessionError(SessionError):
    """No session has this id (or there is no session at all)."""


class NotStoppedError(SessionError):
    """Inspection was asked of a program that is not stopped."""


class SessionEndedError(SessionError):
    """The debuggee or its adapter has ended."""


class AdapterError(PolydbgError):
    """The debug adapter failed a request."""


class AdapterRequestError(AdapterError):
    """The adapter answered a request with ``success: false``."""

    def __init__(self, command: str, message: str) -> None:
        super().__init__(message)
        self.command = command
        self.message = message


class AdapterTimeoutError(AdapterError):
    """The adapter did not answer within the deadline."""


class AdapterGoneError(AdapterError):
    """The adapter's message stream ended; every pending request fails with this."""


class FramingError(PolydbgError):
    """A malformed Content-Length frame (bad header, oversized body, invalid JSON)."""


class EnvironmentProblem(PolydbgError):
    """A required interpreter or adapter is missing or broken."""
