"""What a backend records while the program runs without stopping: calls of named functions, exceptions raised.

A call trace (``debug_trace(functions=…)``) and the log of raised exceptions are answers no single stop gives:
every call of ``parse_date`` over a whole test run with its arguments and what it returned, or every exception
the user's code raised and where an ``except`` swallowed it. Each backend records them its own cheapest way (a
profile hook in the debuggee, non-suspending JDWP method events, a gdb Python breakpoint that never stops,
conditional breakpoints that only record) and hands the session finished records through a sink, in the order
the calls ended. The session counts, bounds and summarises them; backends never render.

The contract:

- ``Backend.record_calls(spec, sink)`` resolves ``spec.functions`` first: a name that matches nothing the
  program has loaded (and cannot match code loaded later) raises ``UsageError`` naming the closest names the
  program has; names that may bind later are returned as notes by ``Recorder.stop``. Then it arms the recording
  and returns a ``Recorder``; the program's state (stopped or running) is left as it was — the session resumes.
  It is called at three moments: while the program is stopped or running (``debug_trace(functions=…)``), and
  while the debugger is configured, inside the ``configure`` callback ``launch`` is given, before the program's
  first line (``debug_launch(trace=…)``: a test run recorded whole): then nothing is loaded yet, so every name
  may bind later, and the recording must catch the first calls.
- ``Backend.record_raised(sink)`` arms the log of exceptions raised in the user's code (not the runtime's or a
  library's own internal ones), caught or not; at the same three moments.
- ``sink`` is called on the event loop, once per finished record, possibly many thousands of times: keep it cheap,
  never block it. A backend may batch records and deliver them late, but every record ended before
  ``Recorder.stop`` returned is delivered by then.
- ``Recorder.stop()`` disarms (idempotent, never raises once the program has ended), delivers what is pending —
  calls still running as records with ``ended=False`` — and returns notes for the answer (a function never
  reached because its module never loaded, records dropped by the backend's own bound).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, Protocol


class CallSpec(NamedTuple):
    # as the agent named them: ``module.func``, ``Class.method``, ``pkg.Func``, ``file:function``, ``func``
    functions: tuple[str, ...]
    depth: int = 0  # also record the callees of a recorded call, to this many levels below it (0: only these)
    max_calls: int = 1000  # the backend may stop recording after this many records (the session ends the trace)
    value_chars: int = 200  # each argument, return value and exception message at most this long


class CallRecord(NamedTuple):
    function: str  # the qualified name as the language shows it (``Parser.parse``, ``main.fib``)
    args: tuple[tuple[str, str], ...]  # (name, value) at entry, in declaration order
    returned: str | None = None  # the value it returned; None when it raised, returned nothing, or had not ended
    raised: str | None = None  # ``Type: message`` when the call ended by an exception
    caller: str | None = None  # ``function (file:line)`` of the call site
    thread: str | None = None  # the thread's (goroutine's, worker's) name or id as the debugger shows it
    duration_us: float | None = None  # wall time from entry to exit, in microseconds
    depth: int = 0  # 0 for a function the agent named, n for a callee n levels below a recorded call
    file: str | None = None  # where the function is defined
    line: int | None = None
    ended: bool = True  # False: still running when the recording stopped
    # when it began, on any clock of the backend's (the same for all its records; a sequence number will do):
    # a call's record comes after its callees' (it ends last), and the rows list them in the order they began
    started: float | None = None


class RaisedRecord(NamedTuple):
    type: str  # the exception's type as the language names it (``ValueError``, ``java.io.IOException``)
    message: str
    file: str | None  # where it was raised (the user's innermost frame when a library raised it for the user's call)
    line: int | None
    function: str | None
    thread: str | None = None
    caught: str | None = None  # ``function (file:line)`` of the handler that caught it; None: it left the user's code


CallSink = Callable[[CallRecord], None]
RaisedSink = Callable[[RaisedRecord], None]


class Recorder(Protocol):
    async def stop(self) -> list[str]:
        """Disarm, deliver what is pending, and return notes for the answer."""
        ...
