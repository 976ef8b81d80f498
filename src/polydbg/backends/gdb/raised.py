"""The log of raised C++ exceptions on gdb: the records ``_PolydbgRaised`` (shims/gdb_init.py) writes to the
console, read as ``RaisedRecord``s, their type and message told as an exception stop tells them (kit.cxx)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable

from polydbg.backends.gdb.commands import console
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.kit import cxx
from polydbg.backends.recording import RaisedRecord
from polydbg.errors import AdapterError


def record(text: str) -> RaisedRecord | None:
    """One JSON line of the log; None for one it cannot read."""
    try:
        row = json.loads(text)
        kind = str(row.get("type") or "") or cxx.demangle_type(str(row.get("mangled") or "")) or "C++ exception"
        printed = str(row.get("printed") or "")
        std_base, message = cxx.fields_message(printed) if printed else (False, "")
        if kind in cxx.STRING_MESSAGE_TYPES or std_base:
            message = str(row.get("string") or "")
        elif not printed:
            message = cxx.NO_FIELDS
        return RaisedRecord(type=kind, message=message, file=row.get("file"), line=row.get("line"),
                            function=row.get("function"), thread=str(row.get("thread")), caught=row.get("caught"))
    except (ValueError, TypeError, AttributeError):
        return None


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
