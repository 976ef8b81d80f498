"""The stop scope: everything that is valid for one stop, and nothing else.

Threads, frames, the children read of values, and the refs handed to the agent all belong to the
stop they were read at. A ``StopScope`` holds them; the lifecycle replaces it on every stop,
continue, exit or termination, so data of two stops can never meet: an inspection that awaited the
debugger checks afterwards that its scope is still the current one (``Lifecycle.check``), and a ref
from an earlier stop is recognized as such because ref numbers are never reused.
"""

from __future__ import annotations

from typing import NamedTuple

from polydbg.backends.base import Frame, FrameRef, StopEvent, Thread, Variable
from polydbg.backends.kit.handles import HandleTable


class RefTarget(NamedTuple):
    """What a ref handed to the agent stands for: a backend value (or scope) and the frame it was read in."""

    variable: Variable
    frame: FrameRef | None
    is_scope: bool = False


class StopScope:
    def __init__(self, stop: StopEvent, first_ref: int) -> None:
        self.stop = stop
        self.refs: HandleTable[RefTarget] = HandleTable(first_ref)
        self.threads: list[Thread] | None = None
        self.frames: dict[int, list[Frame]] = {}  # thread → shown frames from the innermost
        # (start, levels) → thread → its stack as an all-threads listing read it (the next call reads on)
        self.stacks: dict[tuple[int, int], dict[int, tuple[list[Frame], int | None]]] = {}
        self.children: dict[int, list[Variable]] = {}  # backend ref → its children
        self.current_thread: int | None = None  # chosen with debug_stack/debug_pause(thread_id); None: the stopped one
        self.reported = False  # a report of this stop has been returned to the agent
        self.hits_counted = False  # breakpoint hits of this stop are counted

    @property
    def thread(self) -> int | None:
        """The thread inspections default to: the one the agent chose at this stop, else the one that stopped."""
        return self.current_thread if self.current_thread is not None else self.stop.thread_id

    def remember(self, variable: Variable, frame: FrameRef | None, is_scope: bool = False) -> int | None:
        """The agent's ref for an expandable value (None when it has no children)."""
        if not variable.ref:
            return None
        return self.refs.add(RefTarget(variable, frame, is_scope), key=(variable.ref, frame, is_scope))

    def forget_values(self) -> None:
        """Values may have changed (an assignment, an evaluation with side effects, a raw command)."""
        self.children.clear()

    def forget_reads(self) -> None:
        """Anything read may be out of date (a raw debugger command can change values and frames)."""
        self.children.clear()
        self.frames.clear()
        self.stacks.clear()
        self.threads = None
