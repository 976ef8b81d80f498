"""The mutexes gdb's threads are blocked on and their owners (``Backend.locks``), read once a stop: each
thread's innermost frames (as a listing read them, the rest in one round trip), then, for the threads blocked in
a mutex lock (``kit.mutexes``), frame 0's ``rdi`` as a pointer (gdb names the symbol there: ``0x55… <beta>``), the
lock word and glibc's owner tid, three expressions a thread in one more round trip. Registers and memory only:
gdb 13 cannot call functions in the program on some machines, and nothing of the program's should run here.
"""

from __future__ import annotations

import contextlib

from polydbg.backends.base import ThreadLocks
from polydbg.backends.gdb.frames import Frames
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.values import to_int
from polydbg.backends.kit import mutexes, timeouts
from polydbg.errors import AdapterError

_READ = ("(void *) $rdi", "*(unsigned int *) $rdi", f"*(int *) ($rdi + {mutexes.OWNER_OFFSET})")


class Mutexes(mutexes.StopLocks):
    def __init__(self, gdb: GdbState, frames: Frames) -> None:
        super().__init__()
        self._gdb = gdb
        self._frames = frames

    async def _read(self) -> dict[int, ThreadLocks]:
        """Every thread's mutex waits and holds, at this stop."""
        kernel_ids = await self._frames.kernel_ids()
        tops = await self._frames.tops(sorted(kernel_ids.values()), mutexes.TOP_FRAMES)
        blocked = {thread: found for thread, frames in tops.items() if (found := mutexes.blocked(frames))}
        client = self._gdb.client
        sent = {thread: [client.send(f"-data-evaluate-expression --thread {thread} --frame 0 \"{expression}\"")
                         for expression in _READ] for thread in blocked}
        waiting = []
        for thread, futures in sent.items():
            values: list[str | None] = []
            for future in futures:
                value = None
                with contextlib.suppress(AdapterError):
                    [result] = await client.gather([("-data-evaluate-expression", future)], timeouts.INSPECT_S)
                    value = str(result.payload.get("value", ""))
                values.append(value)
            pointer, word, owner = values
            address = to_int((pointer or "").split(" ", 1)[0], 0, 16)
            if address and word is not None:
                waiting.append(mutexes.Waiting(thread, blocked[thread], address, to_int(word, 0),
                                               to_int(owner) if owner else None, mutexes.symbol_of(pointer or "")))
        return mutexes.thread_locks(waiting, {lwp: thread for lwp, thread in kernel_ids.items()})
