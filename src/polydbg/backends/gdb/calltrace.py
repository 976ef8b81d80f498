"""A call trace under gdb: every call of the named functions, recorded by gdb's Python while the program runs.

``shims/gdb_calls.py`` is loaded into gdb the first time: a named function gets an internal breakpoint whose
``stop`` reads the arguments, the caller and the thread and sets a ``FinishBreakpoint`` on the call's frame,
whose own ``stop`` reads the return value; both answer False, so gdb resumes at once and MI reports no stop.
Each finished call comes back as one console line (``CALL_MARK`` and JSON), handed to the sink as it arrives.

Names are gdb's linespecs: ``func``, ``file.c:func``, ``Class::method`` (``Class.method`` is read as it), a
Rust ``module::func``; one that binds nowhere (after the program's libraries loaded) is refused with the
closest names of the program's functions.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import re
from typing import Any

from polydbg.backends.gdb.commands import console, python_exec
from polydbg.backends.kit import shims
from polydbg.backends.recording import CallRecord, CallSink, CallSpec
from polydbg.errors import AdapterError, UsageError
from polydbg.mi.client import MiClient

NM_TIMEOUT_S = 5.0
CALL_MARK = "<polydbg-call>"  # prefixes every finished call's line gdb prints
_PARAMETERS = re.compile(r"(?<=\w)\((?:[^()]|\([^()]*\))*\)(?: const)?$")  # C++'s signature after a name
_SHIM = shims.source(__file__, "gdb_calls.py").replace("MARK", CALL_MARK)


def linespec(name: str) -> str:
    """An agent's name as gdb's linespec: ``Class.method`` → ``Class::method`` (a file's ``a.c:f`` kept)."""
    where, colon, function = name.rpartition(":") if re.search(r"\.\w+:\w", name) else ("", "", name)
    if "::" not in function and "." in function:
        function = function.replace(".", "::")
    return f"{where}{colon}{function}"


class GdbCallTrace:
    """The ``Recorder`` of a call trace under gdb."""

    def __init__(self, client: MiClient, spec: CallSpec, sink: CallSink) -> None:
        self._client = client
        self.spec = spec
        self._sink = sink
        self._delivered = 0
        self.stopped = False

    async def arm(self) -> None:
        await self._client.command(console(python_exec(_SHIM.replace("POLYDBG_CHARS", str(self.spec.value_chars)))))
        names = [linespec(name) for name in self.spec.functions]
        result = await self._client.command(console(f"python _polydbg_calls.arm({json.dumps(names)})"))
        answer = json.loads(result.console.strip().splitlines()[-1])
        found = answer.get("found") or {}
        missing = [given for given, name in zip(self.spec.functions, names, strict=True) if not found.get(name)]
        if missing:
            await self._disarm()
            known = await _functions(answer.get("program"))
            near = difflib.get_close_matches(linespec(missing[0]).rpartition(":")[2], known, n=5, cutoff=0.6)
            raise UsageError(f"no function {missing[0]} in the program" + (
                f"; the closest: {', '.join(near)}" if near else "") +
                " (name it as func, file.c:func, Class::method or module::func)")

    def on_line(self, text: str) -> None:
        """One finished call as gdb printed it."""
        if self.stopped or self._delivered >= self.spec.max_calls:
            return
        try:
            call: dict[str, Any] = json.loads(text)
        except ValueError:
            return
        if "error" in call:
            return
        raised = call.get("x")
        self._sink(CallRecord(
            function=_PARAMETERS.sub("", str(call.get("n") or call.get("f"))),
            args=tuple((str(n), str(v)) for n, v in call.get("a") or []),
            returned=None if raised else call.get("r"), raised=raised, caller=call.get("c"), thread=call.get("t"),
            duration_us=round(float(call["d"]), 1) if "d" in call else None, file=call.get("file"),
            line=call.get("line"), ended="began" not in call))
        self._delivered += 1

    async def _disarm(self) -> None:
        await self._client.command(console("python _polydbg_calls.disarm()"))

    async def stop(self) -> list[str]:
        if self.stopped:
            return []
        self.stopped = True
        with contextlib.suppress(AdapterError):  # gdb has gone with the program
            await self._disarm()
        return ["callees are not recorded under gdb: name them too"] if self.spec.depth else []


async def _functions(program: str | None) -> list[str]:
    """The functions the program's executable defines (``nm``: its own symbols, not its libraries'), without
    their C++ parameter lists."""
    if not program:
        return []
    try:
        process = await asyncio.create_subprocess_exec("nm", "-C", "--defined-only", program,
                                                       stdout=asyncio.subprocess.PIPE,
                                                       stderr=asyncio.subprocess.DEVNULL)
        out, _ = await asyncio.wait_for(process.communicate(), NM_TIMEOUT_S)
    except (OSError, asyncio.TimeoutError):
        return []
    names = set()
    for line in out.decode(errors="replace").splitlines():
        parts = line.split(" ", 2)
        if len(parts) == 3 and parts[1] in ("T", "t") and not parts[2].startswith(("_", ".")):
            names.add(_PARAMETERS.sub("", parts[2]))
    return sorted(names)
