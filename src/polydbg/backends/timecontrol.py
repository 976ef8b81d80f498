"""Time control: running backwards through a recording, checkpoints, and edited code put into the running program.

"Who wrote this, and when?" is the question behind most native bugs; without a recording an agent restarts with a
watchpoint and hopes the corruption repeats. And after it edits a fix, a restart loses the state it spent calls
reaching. Both are answered through the existing tools — ``debug_launch(record=…)``, ``debug_step(reverse=true)``,
``debug_continue(reverse=true)`` and ``debug_continue(reload=true)`` — plus ``debug_record`` for recording started
at a stop and checkpoints. Each backend offers what its runtime can; the defaults here refuse, saying what to do
instead (which debugger records, that a restart runs the edited program).

The contract:

- ``Backend.record(action, limit)``: ``"start"`` records from the current stop on (gdb's ``record full``, at most
  ``limit`` instructions kept: the oldest are dropped, or the program stops, as the backend says in its note),
  ``"stop"`` discards the recording (the program stays where it is, live). Returns a note for the answer: what it
  costs, what it cannot record. A launch with ``LaunchSpec.record`` (``"full"``, ``"rr"``) records from the
  program's first stop without being asked again.
- ``Backend.reverse(thread_id, kind)``: ``step``/``resume`` run backwards (``kind`` "over", "into", "out" or
  "continue": back to the previous breakpoint or watchpoint hit, or the start of the recording). The stop comes as
  an event like any other; at the start of the recording its reason is ``HISTORY_START``; a watchpoint hit while
  running backwards names the write (the line, the value before and after it). Going forward after going back
  replays the recording up to the present (a stop with reason ``HISTORY_END`` there), then runs live; a backend
  says which in ``StopEvent.text``.
- ``Backend.checkpoint()`` saves the program's state and returns its number; ``Backend.restore(number)`` returns
  the program to it and emits a stop event (reason ``"checkpoint"``) where it is then.
- ``Backend.reload(thread_id)`` puts the source files edited since the program loaded them (or since the last
  reload) into the running program, all or none: a file that does not compile, or a change the runtime refuses,
  raises ``ReloadRefused`` with what was refused and leaves everything as it was. When ``thread_id`` is stopped in
  a function that was replaced, the backend re-enters it so the new code runs at once, and leaves the program
  stopped there (its own internal stops are not reported). ``Reloaded.replaced`` is empty when nothing changed.
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from polydbg.errors import UsageError

RecordAction = Literal["start", "stop"]
ReverseKind = Literal["over", "into", "out", "continue"]
RecordMode = Literal["full", "rr"]

HISTORY_START = "history start"  # a reverse run reached the start of the recording
HISTORY_END = "history end"  # a forward replay reached the present (the end of the recording); on from there is live
DEFAULT_RECORD_LIMIT = 1_000_000  # instructions a recording keeps (gdb's default is 200,000; each costs ~30 bytes+)


class Reloaded(NamedTuple):
    replaced: tuple[str, ...] = ()  # what changed, a line per file: "app.py: total, parse" / "Counter (Counter.java)"
    reentered: str | None = None  # the function re-entered so the new code runs now: "total (app.py:12)"
    notes: tuple[str, ...] = ()  # what runs the old code still, and why (a frame not re-entered, a closure)


class ReloadRefused(UsageError):
    """A reload that changed nothing: the message says what was refused (a compile error, a schema change the
    runtime cannot apply) and what to do instead (fix the file, debug_restart)."""


class RestartNeeded(UsageError):
    """A runtime that cannot take new code while it runs (native code, Go): only a restart runs the edit. The
    session says how its restart gets the edit in: the launch's ``build`` again, or the debugger's own build
    (``rebuilds``: delve's ``go build``)."""

    def __init__(self, message: str, rebuilds: bool = False) -> None:
        super().__init__(message)
        self.rebuilds = rebuilds


def no_reverse(debugger: str, instead: str) -> UsageError:
    """What a backend that cannot record answers to ``record``, ``reverse`` and checkpoints."""
    return UsageError(f"{debugger} cannot run backwards or save checkpoints; {instead}")


RECORDING_DEBUGGER = ("relaunch under gdb, which records (C, C++, Rust): debug_launch(…, adapter=\"gdb\", "
                      "record=true), or debug_record(\"start\") at a stop")
