"""A program a debugger could not let go of cleanly: its code put back as its files have it.

A debugger sets a software breakpoint by writing ``int3`` (0xCC) over the first byte of an instruction in
the traced program's memory, and removes it when it detaches. A debugger that does not answer the detach
(its process stopped by a signal, or hung) is ended by polydbg; the kernel then releases the program with
those bytes still in its code, and the program dies of SIGTRAP the next time it runs one (an lldb session
"detached" that way exited with 251, i.e. -5: SIGTRAP, once it reached its breakpoint again). So before
such a debugger is ended, every 0xCC byte of the program's executable file mappings that its file does not
have is written back from the file, through ``/proc/PID/mem`` (the kernel allows that to whoever may trace
it). Text is never relocated, so a byte that differs from the file and is 0xCC is a breakpoint (x86-64:
other architectures' breakpoint instructions are not looked for).
"""

from __future__ import annotations

import contextlib
import io
import os
import platform

from polydbg.procs import thread_states

INT3 = 0xCC
_X86 = platform.machine() in ("x86_64", "AMD64", "i386", "i686")


def tracer_of(pid: int) -> int:
    """The pid tracing ``pid`` (0: none, or it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("TracerPid:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def released(pid: int) -> bool:
    """The program lives and none of its threads is traced any more (a debugger has let go of all of them)."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    return bool(tasks) and all(tracer_of(int(task)) == 0 for task in tasks) and os.path.exists(f"/proc/{pid}")


def _code_mappings(pid: int) -> list[tuple[int, int, int, str]]:
    """(start, end, file offset, path) of each executable mapping of a file."""
    found = []
    with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            fields = line.split(maxsplit=5)
            if len(fields) < 6 or "x" not in fields[1] or not fields[5].startswith("/"):
                continue
            start, end = (int(part, 16) for part in fields[0].split("-"))
            found.append((start, end, int(fields[2], 16), fields[5].rstrip("\n").removesuffix(" (deleted)")))
    return found


def restore_code(pid: int) -> int:
    """Write back, from the program's files, the 0xCC bytes a debugger left in its code; how many (0 when
    there were none, off x86, or when /proc refuses)."""
    if not _X86:
        return 0
    restored = 0
    with contextlib.suppress(OSError):
        mappings = _code_mappings(pid)
        with open(f"/proc/{pid}/mem", "r+b", buffering=0) as memory:
            for start, end, offset, path in mappings:
                with contextlib.suppress(OSError):
                    with open(path, "rb") as file:
                        file.seek(offset)
                        original = file.read(end - start)
                    memory.seek(start)
                    current = memory.read(len(original))
                    restored += _put_back(memory, start, current, original)
    return restored


def _put_back(memory: io.FileIO, start: int, current: bytes, original: bytes) -> int:
    count = 0
    at = current.find(INT3)
    while at != -1:
        if at < len(original) and original[at] != INT3:
            memory.seek(start + at)
            memory.write(original[at:at + 1])
            count += 1
        at = current.find(INT3, at + 1)
    return count


def detach_failed(debugger: str, why: str, pid: int | None, expression: str | None = None) -> str:
    """What became of the program when ``debugger`` did not answer its detach (``why``), once its code is put back
    (see the module docstring); ``expression``: one the debugger was evaluating in it and had not answered."""
    text = f"{debugger} did not answer the detach ({why}), so polydbg ended it"
    if pid is None:
        return text
    if not os.path.exists(f"/proc/{pid}"):
        return text + f"; the program (pid {pid}) has ended"
    held = thread_states(pid) == {"t"}  # every thread stopped by the tracer: no expression was running in it
    if tracer_of(pid):
        restored = restore_code(pid)
        text += (f"; polydbg put back {restored} breakpoint byte{'s' if restored != 1 else ''} {debugger} had left "
                 f"in the program's code (pid {pid}), so it keeps running" if restored else
                 f"; {debugger} had left no breakpoint in the program's code (pid {pid}): it keeps running")
    else:
        text += f"; {debugger} had already let go of the program (pid {pid}): it keeps running"
    if expression and not held:
        text += (f"; {expression!r}, an expression {debugger} was running in the program, had not finished: the rest "
                 "of that call runs as if the program had made it, and it returns to no code of the program's own: "
                 "the program may crash")
    return text

