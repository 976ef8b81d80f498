"""Which mutex a native thread is blocked acquiring and who holds it, from its stack, one register and the
mutex's memory: the part gdb and lldb-dap share (each reads the registers and memory its own way).

- A thread blocked in ``pthread_mutex_lock`` (glibc names it ``___pthread_mutex_lock``, ``__pthread_mutex_lock``;
  also the timed and clock variants; ``std::mutex::lock`` goes through it) sleeps in the futex system call: frame
  0's ``rdi`` is the futex word, the mutex's first field, so the mutex's address. glibc keeps the owner's kernel
  thread id at offset 8 (``__data.__owner``, x86-64): read as raw memory, without the ``pthread_mutex_t`` type
  (the program's DWARF may lack it) and without calling anything (gdb cannot call functions here). The owner is
  mapped to the debugger's thread id (gdb: the LWP of its target id; lldb-dap: the thread id is the tid); one
  that is no thread of the process, or a lock word of 0 (released meanwhile), is not trusted.
- Rust's ``std::sync::Mutex`` (futex-based) waits in ``Mutex::lock_contended`` inside libc's ``syscall``: frame
  0's ``rdi`` is its futex word too (1 locked, 2 locked with waiters), but it records no owner: "owner not
  recorded". A ``MutexGuard`` local elsewhere is no proof (a guard dropped with ``drop(guard)`` still reads
  as one), so no owner is guessed from one.
- Which mutexes a thread holds is known from the waiters' side only (glibc keeps no list per thread).
- A mutex is named by the symbol at its address (``mutex beta``), else by the expression the waiting frame
  passed to ``pthread_mutex_lock`` in its source line (``mutex account->guard``), and always by its address.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from polydbg.backends.base import Frame, Lock, ThreadLocks
from polydbg.backends.kit.frames import is_runtime_source

PTHREAD_MUTEX, RUST_MUTEX = "pthread mutex", "std::sync::Mutex"
TOP_FRAMES = 10  # the frames read to find a mutex lock below the futex wait (with libc's inlined frames: ~5)
WORD_BYTES = 12  # the lock word (offset 0) and glibc's owner tid (offset 8)
OWNER_OFFSET = 8
_PTHREAD_LOCK = re.compile(r"(?:^|[^A-Za-z0-9])_*pthread_mutex_(?:timed|clock)?lock(?![A-Za-z0-9_])")
_RUST_CONTENDED = re.compile(r"\bMutex\b.*::lock_contended\b")
_LOCK_CALL = re.compile(r"\bpthread_mutex_(?:timed|clock)?lock\s*\(\s*&\s*([A-Za-z_][\w.\[\]>-]*(?:->[\w.]+)*)\s*[,)]")
_RUST_HASH = re.compile(r"::h[0-9a-f]{16}\b")  # a Rust symbol's legacy-mangling hash
_LWP = re.compile(r"\bLWP (\d+)\b")


class Blocked(NamedTuple):
    """A thread blocked acquiring a mutex: which kind, and the frame below the lock function (the caller's)."""

    kind: str
    caller: Frame | None


class Waiting(NamedTuple):
    """What a debugger read of a blocked thread: the mutex's address, its lock word and owner tid (glibc's), and
    the symbol at the address."""

    thread: int
    blocked: Blocked
    address: int
    word: int  # 0: not held
    owner_tid: int | None = None
    symbol: str | None = None


def from_memory(memory: bytes) -> tuple[int, int | None]:
    """The lock word and glibc's owner tid in ``WORD_BYTES`` read at a mutex's address (0 when unreadable)."""
    word = int.from_bytes(memory[:4], "little") if len(memory) >= 4 else 0
    owner = int.from_bytes(memory[OWNER_OFFSET:OWNER_OFFSET + 4], "little", signed=True) \
        if len(memory) >= OWNER_OFFSET + 4 else None
    return word, owner


def blocked(frames: Sequence[Frame]) -> Blocked | None:
    """Whether the innermost frames are a mutex lock waiting (never frame 0: the thread sleeps below it)."""
    for index, frame in enumerate(frames[:TOP_FRAMES]):
        kind = PTHREAD_MUTEX if _PTHREAD_LOCK.search(frame.name) else \
            RUST_MUTEX if _RUST_CONTENDED.search(frame.name) else None
        if kind is not None:
            if index == 0:
                return None  # stopped at the lock function itself (a breakpoint): not waiting
            caller = next((f for f in frames[index + 1:] if f.file and os.path.isabs(f.file)
                           and not is_runtime_source(f.file)), None)
            return Blocked(kind, caller)
    return None


def lwp_of(target_id: str) -> int | None:
    """The kernel thread id in gdb's target id ("Thread 0x7f… (LWP 2442)")."""
    found = _LWP.search(target_id)
    return int(found.group(1)) if found else None


def symbol_of(printed: str) -> str | None:
    """The symbol gdb prints after a pointer ("0x55… <beta>" → beta; "<table+40>" → table+40), or lldb's
    ``image lookup`` summary ("Summary: deadlock`beta" → beta), a Rust symbol without its hash."""
    found = re.search(r"<([^<>]+)>\s*$", printed.strip()) or re.search(r"Summary: (?:[^`\n]*`)?([^\n]+)", printed)
    return _RUST_HASH.sub("", found.group(1).strip()) if found else None


def passed_in(frame: Frame | None) -> str | None:
    """The mutex expression the caller's source line passes to pthread_mutex_lock (``&account->guard``)."""
    if frame is None or not frame.file or not frame.line:
        return None
    try:
        with open(frame.file, encoding="utf-8", errors="replace") as source:
            for number, text in enumerate(source, 1):
                if number == frame.line:
                    found = _LOCK_CALL.search(text)
                    return found.group(1) if found else None
    except OSError:
        return None
    return None


def lock_of(waiting: Waiting, thread_of_tid: Mapping[int, int]) -> Lock | None:
    """The lock a blocked thread waits for, its owner mapped to a thread id; None when the memory says it is no
    held lock (its word 0: released since, or a register that was not the mutex)."""
    if waiting.word == 0:
        return None
    kind = waiting.blocked.kind
    owner = thread_of_tid.get(waiting.owner_tid) if kind == PTHREAD_MUTEX and waiting.owner_tid else None
    what = "mutex" if kind == PTHREAD_MUTEX else "Mutex"
    named = waiting.symbol or (passed_in(waiting.blocked.caller) if kind == PTHREAD_MUTEX else None)
    name = f"{what} {named} at {waiting.address:#x}" if named else f"{what} at {waiting.address:#x}"
    return Lock(id=f"{waiting.address:#x}", name=name, owner=owner, kind=kind)


def thread_locks(waiting: Sequence[Waiting], thread_of_tid: Mapping[int, int]) -> dict[int, ThreadLocks]:
    """Each blocked thread's lock, and the locks each owner holds (known from their waiters)."""
    waits: dict[int, Lock] = {}
    holds: dict[int, dict[str, Lock]] = {}
    for seen in waiting:
        lock = lock_of(seen, thread_of_tid)
        if lock is None:
            continue
        waits[seen.thread] = lock
        if lock.owner is not None:
            holds.setdefault(lock.owner, {}).setdefault(lock.id, lock)
    return {thread: ThreadLocks(holds=tuple(holds.get(thread, {}).values()), waits_for=waits.get(thread))
            for thread in sorted({*waits, *holds})}


class StopLocks:
    """Every thread's locks, read once a stop (``_read``: all threads, since a thread holds what its waiters say
    it does) and answered for the threads asked; ``forget`` when the program moves."""

    def __init__(self) -> None:
        self._known: dict[int, ThreadLocks] | None = None

    def forget(self) -> None:
        self._known = None

    async def locks(self, thread_ids: Sequence[int]) -> dict[int, ThreadLocks]:
        if self._known is None:
            self._known = await self._read()
        wanted = set(thread_ids)
        return {thread: state for thread, state in self._known.items() if thread in wanted}

    async def _read(self) -> dict[int, ThreadLocks]:
        raise NotImplementedError
