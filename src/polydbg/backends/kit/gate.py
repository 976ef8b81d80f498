"""One stop shown at a time, for backends that debug several processes or threads that stop on their own.

debugpy's child processes and Node's workers and child processes each stop independently (two pool
workers reach a breakpoint together); the session shows one stop. A stop of another process while one
is shown waits here — its process stays stopped — and is shown when the agent resumes the current one,
as the answer to that resume. Where the agent acts on a thread whose stop waits (pauses it, steps it,
resumes it), that thread's stop is the shown one from then on, and the one shown before waits again, first
in line.
"""

from __future__ import annotations

import collections
from collections.abc import Callable

from polydbg.backends.base import BackendListener, BreakpointResult, StopEvent


class StopGate:
    def __init__(self, listener: BackendListener, process_of: Callable[[int], int]) -> None:
        self.listener = listener
        self._process_of = process_of  # thread id → the process (or target) that owns it; 0 for the program
        self._shown: int | None = None  # the process whose stop is shown
        self._shown_stop: StopEvent | None = None  # and that stop, to show again when it waits once more
        self._waiting: collections.deque[StopEvent] = collections.deque()

    def _process(self, thread_id: int | None) -> int:
        return self._process_of(thread_id) if thread_id is not None else 0

    @property
    def shown(self) -> int | None:
        return self._shown

    def stopped(self, event: StopEvent) -> None:
        process = self._process(event.thread_id)
        if self._shown is not None and self._shown != process:
            self._waiting.append(event._replace(held=True))
            return
        self._shown, self._shown_stop = process, event
        self.listener.on_stopped(event)

    def waiting(self, process: int) -> StopEvent | None:
        """The first stop of ``process`` waiting to be shown, if any."""
        return next((e for e in self._waiting if self._process(e.thread_id) == process), None)

    def take(self, process: int) -> None:
        """Make ``process`` the shown one, without news for the session: the agent resumes or steps a thread
        whose stop waits. Its waiting stops are dropped (it runs); the stop shown before waits again, first in
        line, so that resuming ``process`` shows it next."""
        if process == self._shown:
            return
        mine = self.waiting(process)
        self._waiting = collections.deque(e for e in self._waiting if self._process(e.thread_id) != process)
        if self._shown is not None and self._shown_stop is not None:
            self._waiting.appendleft(self._shown_stop._replace(held=True))
        self._shown, self._shown_stop = process, mine

    def switch(self, event: StopEvent) -> None:
        """Show ``event`` now, ahead of the stop shown, which waits again, first in line: the stop of a thread
        the agent paused while another's was shown."""
        self.take(self._process(event.thread_id))
        self._shown_stop = event
        self.listener.on_stopped(event)

    def continued(self, thread_id: int | None, all_threads: bool) -> None:
        """A process runs again: news for the session only if it is the one whose stop is shown."""
        process = self._process(thread_id)
        if self._shown is None or self._shown == process:
            self.listener.on_continued(thread_id, all_threads)

    def resumed(self, process: int | None) -> None:
        """The shown process (or, with None, every process) runs again: show the next waiting stop."""
        if process is None or process == self._shown:
            self._shown = self._shown_stop = None
        if self._shown is None and self._waiting:
            self.stopped(self._waiting.popleft())

    def ended(self, process: int) -> None:
        self._waiting = collections.deque(e for e in self._waiting if self._process(e.thread_id) != process)
        self.resumed(process)


class GatedListener:
    """A backend's own events, its stops through the gate it shares with the others."""

    def __init__(self, gate: StopGate) -> None:
        self._gate = gate

    def on_stopped(self, event: StopEvent) -> None:
        self._gate.stopped(event)

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        self._gate.continued(thread_id, all_threads)

    def on_output(self, category: str, text: str) -> None:
        self._gate.listener.on_output(category, text)

    def on_exited(self, exit_code: int | None) -> None:
        self._gate.listener.on_exited(exit_code)

    def on_terminated(self, cause: str | None) -> None:
        self._gate.listener.on_terminated(cause)

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        self._gate.listener.on_breakpoint_changed(bp_id, result)
