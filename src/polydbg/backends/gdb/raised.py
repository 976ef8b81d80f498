"""The log of raised C++ exceptions on gdb, armed and disarmed: ``_PolydbgRaised`` (shims/gdb_init.py) writes its
records to the console, read by ``kit.cxx.raised_record``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from polydbg.backends.gdb.commands import console
from polydbg.backends.gdb.state import GdbState
from polydbg.errors import AdapterError


class Log:
    def __init__(self, gdb: GdbState, armed: Callable[[], bool], forget: Callable[[], None]) -> None:
        self._gdb = gdb
        self._armed = armed
        self._forget = forget

    async def stop(self) -> list[str]:
        if self._armed():
            self._forget()
            with contextlib.suppress(AdapterError):
                await self._gdb.cmd(console("python _polydbg_raised.disarm()"))
        return []
