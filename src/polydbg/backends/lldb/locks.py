"""The mutexes lldb-dap's threads are blocked on and their owners (``Backend.locks``), read once a stop.

Each thread's innermost frames (as a listing read them, the rest asked at once), then, for the threads blocked
in a mutex lock (``kit.mutexes``), frame 0's ``rdi`` (a register read as a variable: no expression is compiled)
and 12 bytes of memory there (``readMemory``: the lock word and glibc's owner tid), and the symbol at each
mutex's address (``image lookup``, an lldb command that depends on no selected thread or frame), all requests
sent together. lldb-dap's thread id is the kernel's: an owner tid is a thread id as it is. Nothing of the
program's runs.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Sequence

from polydbg.backends.base import Frame, ThreadLocks, parse_address
from polydbg.backends.dap import wire
from polydbg.backends.kit import mutexes
from polydbg.backends.lldb.launch import COMMAND_PREFIX
from polydbg.errors import AdapterError

# a thread's innermost frames with lldb-dap's id of frame 0 (None: frames are hidden there, or none listed)
Tops = Callable[[Sequence[int]], Awaitable[dict[int, tuple[list[Frame], int | None]]]]


class LldbMutexes(mutexes.StopLocks):
    def __init__(self, request: wire.Request, tops: Tops) -> None:
        super().__init__()
        self._request = request
        self._tops = tops

    async def _read(self) -> dict[int, ThreadLocks]:
        """Every thread's mutex waits and holds, at this stop."""
        threads = [int(t["id"]) for t in (await self._request("threads")).get("threads", [])]
        tops = await self._tops(threads)
        blocked = {thread: (found, frame) for thread, (frames, frame) in tops.items()
                   if frame is not None and (found := mutexes.blocked(frames))}
        read = await asyncio.gather(*(self._waiting(thread, found, frame)
                                      for thread, (found, frame) in blocked.items()))
        waiting = [w for w in read if w is not None]
        symbols = await asyncio.gather(*(self._symbol(address) for address in {w.address for w in waiting}))
        named = dict(symbols)
        return mutexes.thread_locks([w._replace(symbol=named.get(w.address)) for w in waiting],
                                    {thread: thread for thread in threads})

    async def _waiting(self, thread: int, found: mutexes.Blocked, frame: int) -> mutexes.Waiting | None:
        with contextlib.suppress(AdapterError, ValueError):
            register = await self._request("evaluate", {"expression": "$rdi", "context": "variables",
                                                        "frameId": frame})
            address = parse_address(str(register.get("result", "")))
            if not address:
                return None
            body = await self._request("readMemory", {"memoryReference": hex(address), "count": mutexes.WORD_BYTES})
            word, owner = mutexes.from_memory(wire.memory_block(body, address).data)
            return mutexes.Waiting(thread, found, address, word, owner)
        return None

    async def _symbol(self, address: int) -> tuple[int, str | None]:
        with contextlib.suppress(AdapterError):
            said = await self._request("evaluate", {"expression": f"{COMMAND_PREFIX}image lookup -a {address:#x}",
                                                    "context": "repl"})
            return address, mutexes.symbol_of(str(said.get("result", "")))
        return address, None
