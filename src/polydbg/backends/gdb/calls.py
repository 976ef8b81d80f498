"""Commands that may call a function in the program (an expression, an assignment, a raw command), bounded by
the evaluation deadline, the stop kept.

gdb reads no command while a function it called in the program runs (gdb 13.1: an ``-exec-interrupt`` waits
behind the call), so an endless call left gdb answering nothing: every later request failed as
"unresponsive", and the detach that followed ended gdb, and with it the program gdb had started (the kernel
kills it with its tracer, PTRACE_O_EXITKILL). So a command still unanswered at the deadline gets gdb
interrupted (SIGINT to gdb, as a terminal's Ctrl-C: gdb stops the program inside the call), and with
``unwindonsignal on`` gdb unwinds the call and answers. Where gdb cannot write the registers back (gdb 13.1 on
some hosts fails every call so: "Couldn't write extended state status: Bad address."), it has written the
general registers back but still lists the call's frames: its register cache is flushed, and a program still
inside the call, under gdb's dummy frame (``<function called from gdb>``), is returned from the frame above that
one, which pops both, back to the stop. gdb's stop record for the interrupted call is not a stop of the
program's own: ``unwinding`` is set while it may arrive, and the backend does not report it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from polydbg.backends.gdb.state import GdbState
from polydbg.backends.kit import timeouts
from polydbg.errors import AdapterError, AdapterRequestError, AdapterTimeoutError
from polydbg.mi.client import MiResult, command_name

log = logging.getLogger(__name__)

CALL_GRACE_S = 5.0  # after the interrupt, for gdb to stop the call, unwind it and answer
DUMMY_FRAME = "<function called from gdb>"
DUMMY_DEPTH = 256  # frames looked through for gdb's dummy frame under an interrupted call
FLUSH = '-interpreter-exec console "maintenance flush register-cache"'
NO_CALLS = "Couldn't write extended state status"  # gdb 13.1 on hosts where it cannot restore the registers


class Calls:
    def __init__(self, gdb: GdbState) -> None:
        self._gdb = gdb
        self.unwinding = False  # a call polydbg interrupted is being unwound: its stop is not the program's

    async def run(self, command: str, thread_id: int | None, raw: bool = False) -> MiResult:
        """``command``'s result; past the deadline its call is interrupted and the stop restored (the error says
        so). ``thread_id``: the thread the command runs on (None: gdb's selected one); ``raw``: a command of the
        agent's own, which may be slow for another reason than a call (the error says it was interrupted)."""
        client = self._gdb.client
        future = client.send(command)
        deadline = timeouts.INSPECT_S
        try:
            return await client.wait(future, command_name(command), deadline)
        except AdapterRequestError as exc:
            if NO_CALLS in exc.message:  # gdb may still list the call's frames
                await self._back_to_stop(thread_id)
            raise _explained(exc) from exc
        except AdapterTimeoutError as exc:
            why = self._gdb.process.not_answering() if self._gdb.process is not None else None
            if why is not None or future.done() or not self._gdb.interrupt():
                raise self._gdb.unanswered(exc, why) from exc  # gdb stopped, or the program runs nothing
            timeout = exc
        self.unwinding = True
        try:
            try:
                return await asyncio.wait_for(asyncio.shield(future), CALL_GRACE_S)  # it returned meanwhile
            except AdapterRequestError as exc:
                log.debug("gdb's answer to the interrupted call: %s", exc.message)
            except asyncio.TimeoutError:
                raise timeout from None
            problem = await self._back_to_stop(thread_id)
        finally:
            self.unwinding = False
        where = ("the program is back as it was before, still stopped here" if problem is None else
                 f"polydbg could not put the program back ({problem}): it is stopped inside a function gdb called "
                 "(debug_stack shows where)")
        if raw:
            raise AdapterRequestError(command_name(command), f"the command did not finish within {deadline:g} s "
                                      f"(polydbg's deadline), so polydbg interrupted gdb, as Ctrl-C does; {where}")
        raise AdapterRequestError(command_name(command), f"the call did not return within {deadline:g} s "
                                  f"(polydbg's evaluation deadline), so polydbg interrupted it; {where}; a call "
                                  "that never returns (an endless loop, a wait) cannot be evaluated")

    async def settle(self) -> None:
        """Before gdb lets the program go: a request gdb has not answered past its deadline (a call it runs in the
        program that was not interrupted) is interrupted, and the program put back, so the detach that follows is
        read and finds the program at its stop."""
        stalled = self._gdb.client.stalled()
        if stalled is None or not self._gdb.interrupt():
            return
        self.unwinding = True
        try:
            with contextlib.suppress(AdapterError, asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(stalled.future), CALL_GRACE_S)
            await self._back_to_stop(None)
        finally:
            self.unwinding = False

    async def _back_to_stop(self, thread_id: int | None) -> str | None:
        """Pop what is left of an interrupted call above gdb's dummy frame; what went wrong, or None."""
        thread = f"--thread {thread_id} " if thread_id else ""
        try:
            await self._gdb.cmd(FLUSH)  # gdb may have restored the registers but still show the call's frames
            listed = await self._gdb.cmd(f"-stack-list-frames {thread}0 {DUMMY_DEPTH}")
            stack = [f for f in listed.payload.get("stack") or [] if isinstance(f, dict)]
            level = next((i for i, f in enumerate(stack) if f.get("func") == DUMMY_FRAME), None)
            if level is None:
                return None  # gdb unwound the call itself
            if level == 0:
                return "the call's frame is gone, gdb's dummy frame is on top"
            await self._gdb.cmd(f"-exec-return {thread}--frame {level - 1}")
        except AdapterError as exc:
            return str(exc)
        return None


def _explained(error: AdapterRequestError) -> AdapterRequestError:
    """gdb's error for a call, with what it means where gdb cannot call functions on this host."""
    if NO_CALLS not in error.message:
        return error
    return AdapterRequestError(error.command, f"{error.message.strip()} (gdb could not write the program's registers "
                               "back after the call: this gdb cannot call functions in the program on this system; "
                               "evaluate without calls, or debug_launch with adapter='lldb-dap')")
