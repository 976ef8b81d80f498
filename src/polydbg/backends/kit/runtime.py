"""For backends whose debugger is the program's own runtime (Node's inspector, the JVM's jdwp agent):
polydbg owns the program's process, so it reads its output pipes and reports its end itself."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import signal
from collections.abc import Callable

from polydbg.backends.kit.lifecycle import Lifecycle

OUTPUT_GRACE_S = 0.5  # after the exit, time for the last output (a child may still hold the pipes)


async def pump(reader: asyncio.StreamReader, emit: Callable[[str], None]) -> None:
    """A pipe's text, decoded as it comes (a character split across reads is kept whole)."""
    decoder = codecs.getincrementaldecoder("utf-8")("replace")
    while chunk := await reader.read(65536):
        if text := decoder.decode(chunk):
            emit(text)
    if tail := decoder.decode(b"", final=True):
        emit(tail)


async def exit_code(process: asyncio.subprocess.Process, readers: list[asyncio.Task[None]]) -> int:
    """The process's exit status, once its output has been read (or the grace has passed)."""
    code = await process.wait()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(asyncio.shield(asyncio.gather(*readers)), OUTPUT_GRACE_S)
    return code


def killed_by(code: int | None, runtime: str, hint: str = "") -> str | None:
    """What ended the program when its exit status is a signal (``node was killed by SIGKILL``); None
    for an exit (code ≥ 0, or unknown)."""
    if code is None or code >= 0:
        return None
    try:
        name = signal.Signals(-code).name
    except ValueError:
        name = f"signal {-code}"
    return f"{runtime} was killed by {name}{hint}"


def report_end(life: Lifecycle, code: int | None, runtime: str, hint: str = "") -> None:
    """The program's exit status as its end, once: an exit with its code, or, killed by a signal, an exit without
    one (the session reads the signal from the kernel) and an end that names the signal."""
    cause = killed_by(code, runtime, hint)
    life.report_exited(code if cause is None else None)
    life.report_terminated(cause)
