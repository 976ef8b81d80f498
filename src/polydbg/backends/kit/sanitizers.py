"""AddressSanitizer, UndefinedBehaviorSanitizer and ThreadSanitizer reports as stops: the options a sanitized
program is started with, and its report read back as the stop's exception.

A program built with ``-fsanitize=address|undefined|thread`` (its binary carries the runtime's entry points) is
started with options that make each report end in ``abort()`` on the thread that made the faulting access
(``abort_on_error=1``; UBSan and TSan only halt with ``halt_on_error=1``): the debugger stops at that SIGABRT, its
abort and runtime frames hidden, so frame 0 is the user's faulting line, the report already printed. LeakSanitizer
cannot run under ptrace (it aborts every exit): ``detect_leaks=0``. ``color=never``: the debuggers give the
program a terminal. Options the user set come after polydbg's, so theirs win.

The report is read from the program's output, the last one printed: the kind ("AddressSanitizer:
heap-buffer-overflow"), the access and where the memory is ("WRITE of size 1 at 0x… thread T0; 0x… is located 0
bytes after 10-byte region"), and the stacks (the access's, the allocation's and the free's, a race's other
access) as details, a line each. Nothing is called in the program: gdb cannot call functions here, and lldb-dap
hangs on the runtime's report API.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from polydbg.backends.base import ExceptionDetail

OPTIONS = (("ASAN_OPTIONS", "abort_on_error=1:detect_leaks=0:color=never"),
           ("UBSAN_OPTIONS", "halt_on_error=1:abort_on_error=1:print_stacktrace=1:color=never"),
           ("TSAN_OPTIONS", "halt_on_error=1:abort_on_error=1:color=never"))
_RUNTIME_MARKS = (b"__asan_init", b"__ubsan_handle_", b"__tsan_init")
SCAN_BYTES = 64 << 20  # of a binary, looked through for a sanitizer's entry points
MAX_DETAILS = 40
_HEADLINE = re.compile(r"^==\d+==ERROR: (\w+Sanitizer): ([\w-]+)|^WARNING: (ThreadSanitizer): ([\w ]+?) \(pid=\d+\)"
                       r"|^(.+?:\d+(?::\d+)?): runtime error: (.+)$", re.MULTILINE)
_FRAME = re.compile(r"^\s*#(\d+) (?:0x[0-9a-f]+ in )?(.*?)(?: \([^()]*\+0x[0-9a-f]+\))?$")
_LOCATED = re.compile(r"^\s*(0x[0-9a-f]+ is located .*|Location is .*)$")


def sanitized(program: str | None) -> bool:
    """Whether the executable carries a sanitizer runtime (linked in, or its entry points called from it)."""
    if not program:
        return False
    try:
        with open(program, "rb") as binary:
            data = binary.read(SCAN_BYTES)
    except OSError:
        return False
    return any(mark in data for mark in _RUNTIME_MARKS)


def environment(program: str | None, env: Sequence[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    """``env`` with the sanitizer options first in each variable, for a sanitized program (as it is otherwise)."""
    if not sanitized(program):
        return tuple(env)
    given = dict(env)
    ours = tuple((name, f"{value}:{given[name]}" if given.get(name) else value) for name, value in OPTIONS)
    return ours + tuple((name, value) for name, value in env if name not in dict(OPTIONS))


def report(output: str) -> ExceptionDetail | None:
    """The last sanitizer report in the program's output, as the stop's exception (None: there is none)."""
    found = list(_HEADLINE.finditer(output))
    if not found:
        return None
    head = found[-1]
    lines = output[head.end():].splitlines()[1:]  # after the headline's line
    body = lines[: next((i for i, line in enumerate(lines) if line.startswith(("SUMMARY:", "Shadow bytes"))),
                        len(lines))]
    if head.group(5):  # UBSan: "file:line:col: runtime error: signed integer overflow: …"
        kind, _, what = head.group(6).partition(": ")
        return ExceptionDetail(type=f"UndefinedBehaviorSanitizer: {kind}",
                               message=f"{what or kind} at {head.group(5)}", details=_details(body))
    tool, kind = (head.group(1), head.group(2)) if head.group(1) else (head.group(3), head.group(4))
    access = next((line.strip() for line in body if line.strip() and not _FRAME.match(line)), "")
    located = next((m.group(1) for line in body if (m := _LOCATED.match(line))), "")
    message = "; ".join(part.rstrip(":") for part in (access, located) if part) or kind
    return ExceptionDetail(type=f"{tool}: {kind}", message=message, details=_details(body))


def _details(body: list[str]) -> tuple[str, ...]:
    """The report's stacks and their headings, a line each, frames without their addresses."""
    out = []
    for line in body:
        if not line.strip():
            continue
        frame = _FRAME.match(line)
        out.append(f"  #{frame.group(1)} {frame.group(2)}" if frame else line.strip())
    return tuple(out[:MAX_DETAILS])
