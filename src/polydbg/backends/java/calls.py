"""Methods an evaluation called on a stopped thread, and the ones still running past their deadline.

An invoke (``ObjectReference.InvokeMethod`` and its kin, single-threaded) resumes only the stopped
thread; its reply comes when the method returns, and the thread is suspended again where it stopped.
A method that does not return within ``INVOKE_TIMEOUT_S`` (an endless loop, a ``toString()`` that
sleeps, a lock another, suspended, thread holds) cannot be taken back: JDWP has no way to cancel an
invoke, and ``ThreadReference.Stop``/``Interrupt`` would change the program (an exception, an
interrupt flag it never had). So the call is left running and kept here until its reply arrives:

- the evaluation answers at once that the call still runs, on which thread, and what to do;
- the thread's frames read as they were when the call was made (for stacks; their ids died when it
  resumed, so its values cannot be read) and each read of its values says what runs, instead of
  "no frame 0; the stack has 0 frames";
- events of the thread are still the call's (not stops), and every other thread stays suspended and
  readable;
- when the reply comes, the thread is suspended at its stop again: the stop is whole again. If the
  program was resumed meanwhile (``debug_continue``), the call's end suspends the thread again while
  the others run; it is resumed to go on with them.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from polydbg.backends.java.terms import EvaluationError
from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Location

INVOKE_TIMEOUT_S = 5.0  # one method run in the program (and the requests that prepare or wrap it)

Frames = list[tuple[int, Location]]


@dataclass
class RunningCall:
    label: str  # ``Probe.forever()``
    where: str  # ``thread 1 (main)``
    since: float  # monotonic time the call was made
    run: int  # which run of the program it was made in (Calls.run): another means it was resumed since
    frames: Frames  # the thread's frames when it was made (their locations still tell where it stopped)

    def still_running(self, head: str | None = None) -> str:
        head = head or (f"{self.label}, called by an evaluation, is still running in {self.where} (for "
                        f"{time.monotonic() - self.since:.0f} s)")
        return (f"{head}: this thread's values cannot be read until it returns, "
                "and then the stop is as it was (ask again later). The other threads stay stopped and readable "
                "(debug_stack(all_threads=true)); debug_continue lets the call and the program run on; "
                "debug_terminate ends the program")


    def cannot_step(self) -> str:
        """Why its thread cannot step now, and what can be done instead."""
        return (f"{self.where} is running {self.label}, called by an evaluation (for "
                f"{time.monotonic() - self.since:.0f} s), and JDWP cannot interrupt it: a step there would wait "
                "until it returns. Ask again once it has (debug_evaluate says when: it stops saying the call runs); "
                "debug_continue lets the call and the program run on; debug_terminate ends the program")


class Calls:
    """The calls in flight, by JDWP thread; ``run`` counts the program's resumes."""

    def __init__(self, client: Callable[[], JdwpClient], ended: Callable[[int], None]) -> None:
        self._client = client
        self._ended = ended  # a thread's call returned (its frames are to be read again)
        self._running: dict[int, RunningCall] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self.run = 0

    def running(self, thread: int) -> RunningCall | None:
        return self._running.get(thread)

    async def call(self, thread: int, reply: asyncio.Future[bytes], label: str, where: str, frames: Frames,
                   after: Callable[[], Awaitable[None]]) -> bytes:
        """The reply of the invoke ``reply`` waits for, within the deadline; ``after`` runs once the call
        has returned (later, for one left running: the error says so)."""
        try:
            return await self._client().wait(reply, label, INVOKE_TIMEOUT_S)
        except AdapterTimeoutError:
            if reply.done():
                raise
            call = self._running[thread] = RunningCall(label, where, time.monotonic() - INVOKE_TIMEOUT_S, self.run,
                                                       frames)
            task = asyncio.get_running_loop().create_task(self._returned(thread, call, reply, after))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            raise EvaluationError(call.still_running(f"{label} did not return within {INVOKE_TIMEOUT_S:g} s and is "
                                                     f"still running in {where} (JDWP cannot interrupt a call)")
                                  ) from None
        finally:
            if thread not in self._running:
                await after()

    async def _returned(self, thread: int, call: RunningCall, reply: asyncio.Future[bytes],
                        after: Callable[[], Awaitable[None]]) -> None:
        with contextlib.suppress(Exception):
            await reply
        with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
            await after()
            if call.run != self.run:  # the program runs on: so does this thread
                client = self._client()
                await client.request(CommandSet.THREAD_REFERENCE, 3, client.writer().object_id(thread).bytes(),
                                     "ThreadReference.Resume", INVOKE_TIMEOUT_S)
        del self._running[thread]
        self._ended(thread)
