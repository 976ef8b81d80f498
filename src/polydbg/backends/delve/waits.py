"""What each goroutine waits for, as the Go runtime and delve can tell (``Backend.locks`` for delve).

delve's DAP server names a goroutine by its topmost user function and nothing more (its ``goroutines``
command is not offered over DAP), so everything here is read with expressions (costs measured with delve 1.20
on 200 goroutines: bench/go_locks.py):

- **state**: the goroutine's status (a plain uint32 up to Go 1.19, an ``atomic.Uint32`` after) and, while it
  waits, its wait reason in the words of Go's own traceback ("semacquire", "chan receive", "sleep",
  "select"; ``runtime.waitReasonStrings``, read once per reason, else the constant's name in words). Where
  many goroutines are asked for, all are read from ``runtime.allgs``, 64 a request (≈13 ms); else through
  delve's ``runtime.curg`` in the goroutine's own frame (≈2.5 ms each).
- **sync.Mutex / RWMutex waits**: the ``sync.(*Mutex).Lock`` (``RWMutex.Lock``/``RLock``) frame's receiver
  is the mutex (≈1 ms); it is named as the user's line wrote it: the one ``.Lock()`` there when the user's
  frame calls it itself, else the operand that evaluates to the same address (``to.mu``). No owner is
  recorded in a Go mutex: the holder is inferred from the source (``held``), and said only when exactly
  one goroutine is inside a ``Lock()`` of that locked mutex; the lock's name says where it was taken
  ("locked at transfer.go:24").
- **channels**: a goroutine in ``runtime.chanrecv``/``chansend`` waits on its ``c``; named by the user's
  line (``<-done``, ``results <- v``): its one channel operand (the address is not read: ≈3 ms), or the
  operand that holds ``c``. Channels have no owner: it is said in the state ("chan receive on done").

Everything is read once per stop (the session asks for the listing and again for a report's deadlocks).
"""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from polydbg.backends.base import Lock, ThreadLocks, Variable
from polydbg.backends.delve import native
from polydbg.backends.delve.held import GoSource
from polydbg.backends.delve.stops import in_library, in_runtime, unquote

# an expression in a delve frame id (None: the current goroutine's topmost), whole or cut; None: it failed
Evaluate = Callable[[str, int | None, bool], Awaitable[Variable | None]]
TopFrames = Callable[[int], Awaitable[list[dict[str, Any]]]]

IN_FLIGHT = 16  # goroutines read at once
SCAN_FROM = 8  # goroutines asked for at once from which all are read from runtime.allgs
SCAN_PAGE = 64  # goroutines read from runtime.allgs in one request (delve loads 64 elements of a slice)
# a g's fields as delve writes them whole: its status (a uint32, or an atomic.Uint32 {…, value: 4}), its id,
# and its wait reason (waitReasonSemacquire (18)), in the struct's order
_G_FIELDS = re.compile(r"atomicstatus: (?:(?P<status>\d+)|[^{,]*\{[^}]*value: (?P<inner>\d+)\}), "
                       r".*?goid: (?P<goid>\d+), .*?waitreason: \w+(?: \((?P<code>\d+)\))?")
WAITING, SCAN = 4, 0x1000
_STATUS = {1: "runnable", 3: "syscall", 6: "dead", 8: "copystack", 9: "preempted"}  # running (2): no state
# the sync methods a goroutine waits in, with their receiver's name and what the lock is
_LOCKING = {"sync.(*Mutex).Lock": ("m", "sync.Mutex", "Lock"), "sync.(*RWMutex).Lock": ("rw", "sync.RWMutex", "Lock"),
            "sync.(*RWMutex).RLock": ("rw", "sync.RWMutex", "RLock")}
_CHANNEL_OPS = {"runtime.chanrecv": "receive", "runtime.chansend": "send"}
_MUTEX_TYPES = ("sync.Mutex", "sync.RWMutex")
_STATE_WORD = re.compile(r"state: (-?\d+)")
_REASON_NAME = re.compile(r"waitReason(\w+)")
_CLOSURE = re.compile(r"\.func\d+(?:\.\d+)*$")  # main.main.func1, main.worker.func2.1: a function literal
_STATUS_FORMS = ("runtime.curg.atomicstatus", "runtime.curg.atomicstatus.value")  # Go ≤ 1.19, ≥ 1.20


@dataclass
class _Claim:
    """A lock a goroutine's source says it holds, as evaluated in its frame."""

    address: int
    lock: Lock
    locked: bool


@dataclass
class Goroutine:
    """One goroutine at this stop, as far as it was read."""

    id: int
    state: str | None = None
    place: str | None = None  # its innermost user frame: "transfer.go:28 (main.transfer)"
    waits_for: Lock | None = None
    claims: list[_Claim] = field(default_factory=list)


class Waits:
    """The goroutines' waits and locks at the current stop, read on demand and kept until the program moves."""

    def __init__(self, evaluate: Evaluate, top_frames: TopFrames, goroot: Callable[[], str | None],
                 stop: Callable[[], int]) -> None:
        self._evaluate = evaluate
        self._top_frames = top_frames
        self._goroot = goroot
        self._stop = stop  # which stop this is (it changes whenever the program moves or stops again)
        self._generation = -1
        self._read: dict[int, Goroutine] = {}
        self._sources: dict[str, tuple[float, GoSource | None]] = {}
        self._all_read = False
        self._reasons: dict[int, str] = {}  # a wait reason → its words (the same all run long)
        self._status_form: str | None = None  # how the status reads in this Go version (_STATUS_FORMS)
        self._table: dict[int, tuple[int, int, int | None]] = {}  # goroutine → (index in runtime.allgs, status, reason)
        self._scanned = False  # runtime.allgs was read at this stop

    async def locks(self, thread_ids: Sequence[int], all_ids: Callable[[], Awaitable[list[int]]]
                    ) -> dict[int, ThreadLocks]:
        """``Backend.locks``. A mutex's owner is inferred among every goroutine, so all are read once one of
        those asked for waits for a mutex or holds one."""
        if self._generation != self._stop():
            self._read.clear()
            self._table.clear()
            self._all_read, self._scanned, self._generation = False, False, self._stop()
        await self._read_each(thread_ids)
        if not self._all_read:
            everyone = await all_ids()
            if any(self._read[tid].waits_for or self._read[tid].claims for tid in thread_ids if tid in self._read):
                await self._read_each(everyone)
            self._all_read = set(everyone) <= set(self._read)
        owners = self._owners() if self._all_read else {}
        found: dict[int, ThreadLocks] = {}
        for tid in thread_ids:
            goroutine = self._read.get(tid)
            if goroutine is None:
                continue
            holds = tuple(claim.lock for claim in goroutine.claims if owners.get(claim.address) == tid)
            waits = goroutine.waits_for
            if waits is not None:
                owner = owners.get(int(waits.id, 16))
                waits = waits._replace(owner=owner if owner != tid else None)
            if goroutine.state or holds or waits:
                found[tid] = ThreadLocks(holds=holds, waits_for=waits, state=goroutine.state)
        return found

    def goroutines(self) -> list[Goroutine]:
        """The goroutines read at this stop, by id."""
        return [self._read[tid] for tid in sorted(self._read)]

    def _owners(self) -> dict[int, int]:
        """Mutex address → the one goroutine inside its Lock(), where exactly one is and the mutex is locked."""
        claimed: dict[int, set[int]] = {}
        for goroutine in self._read.values():
            for claim in goroutine.claims:
                claimed.setdefault(claim.address, set()).add(goroutine.id if claim.locked else -1)
        return {address: next(iter(who)) for address, who in claimed.items() if len(who) == 1 and -1 not in who}

    async def _read_each(self, thread_ids: Sequence[int]) -> None:
        wanted = [tid for tid in thread_ids if tid not in self._read]
        gate = asyncio.Semaphore(IN_FLIGHT)
        if len(wanted) >= SCAN_FROM and not self._scanned:
            await self._scan(gate)

        async def read(tid: int) -> None:
            async with gate:
                self._read[tid] = await self._goroutine(tid)
        await asyncio.gather(*(read(tid) for tid in wanted))

    async def _scan(self, gate: asyncio.Semaphore) -> None:
        """Every goroutine's status and wait reason from the runtime's list of them, ``runtime.allgs``, read whole
        ``SCAN_PAGE`` at a time (≈13 ms for 64 with delve 1.20, where ``runtime.curg`` in each goroutine's own
        frame costs ≈2.5 ms, and a conversion in an expression ≈0.5 ms)."""
        self._scanned = True
        count = await self._number("len(runtime.allgs)", None)

        async def read(start: int) -> None:
            end = min(start + SCAN_PAGE, count or 0)
            async with gate:
                page = await self._evaluate(f"runtime.allgs[{start}:{end}]", None, True)
            found = list(_G_FIELDS.finditer(page.value)) if page is not None else []
            for offset, g in enumerate(found):
                index = start + offset if len(found) == end - start else -1  # each g matched, in order
                status = int(g["status"] or g["inner"])
                self._table[int(g["goid"])] = (index, status, int(g["code"]) if g["code"] else None)
        await asyncio.gather(*(read(start) for start in range(0, count or 0, SCAN_PAGE)))

    # -- one goroutine --------------------------------------------------------------------------------

    async def _goroutine(self, tid: int) -> Goroutine:
        goroutine = Goroutine(tid)
        frames = await self._top_frames(tid)
        if not frames:
            return goroutine
        goroot = self._goroot()
        user = next((i for i, f in enumerate(frames) if not in_runtime(f) and not in_library(f, goroot)), None)
        if user is not None:
            goroutine.place = f"{_where(frames[user])} ({frames[user].get('name')})"
        goroutine.state = await self._state(tid, int(frames[0]["id"]), frames[:user], user is not None)
        if user is None:
            return goroutine
        locking = next((i for i in range(user - 1, -1, -1) if frames[i].get("name") in _LOCKING), None)
        if locking is not None:
            goroutine.waits_for = await self._mutex(frames[locking], frames[user], called_by_user=locking == user - 1)
        channel = next((i for i in range(user) if frames[i].get("name") in _CHANNEL_OPS), None)
        if channel is not None and goroutine.state is not None:
            goroutine.state += await self._channel(frames[channel], frames[user])
        for frame in frames[user:]:
            if in_runtime(frame) or in_library(frame, goroot):
                continue
            goroutine.claims += await self._claims(frame)
        return goroutine

    async def _state(self, tid: int, frame_id: int, library: list[dict[str, Any]], in_user_code: bool
                     ) -> str | None:
        """Go's traceback word for the goroutine ("semacquire", "chan receive", "runnable"), and the library
        call the user's code is blocked in ("in sync.(*WaitGroup).Wait"); None while it runs."""
        _, status, reason = self._table.get(tid) or (None, *await self._status(frame_id))
        if status is None:
            return None
        status &= ~SCAN
        if status != WAITING:
            return _STATUS.get(status)
        words = await self._reason(reason, frame_id)
        called = next((f.get("name") for f in reversed(library) if not in_runtime(f)), None)
        return f"{words} in {called}" if called and in_user_code else words

    async def _status(self, frame_id: int) -> tuple[int | None, int | None]:
        """The goroutine's status and wait reason, in one request where the form of the status is known (a
        uint32 up to Go 1.19, an atomic.Uint32 after): the expression that worked is kept for the run."""
        forms = [self._status_form] if self._status_form else list(_STATUS_FORMS)
        for form in forms:
            both = await self._number(f"uint32(runtime.curg.waitreason)*65536 + {form}", frame_id)
            if both is not None:
                self._status_form = form
                return both & 0xFFFF, both >> 16
        return await self._number("runtime.curg.atomicstatus", frame_id), None

    async def _reason(self, reason: int | None, frame_id: int) -> str:
        """A wait reason in words, as the runtime's table says it (read once per reason: it is constant)."""
        known = self._reasons.get(reason) if reason is not None else None
        if known is not None:
            return known
        table = await self._evaluate("runtime.waitReasonStrings[runtime.curg.waitreason]", frame_id, False)
        if table is not None and table.value.startswith('"'):
            words = unquote(table.value) or "waiting"
        else:
            constant = await self._evaluate("runtime.curg.waitreason", frame_id, False)
            named = _REASON_NAME.search(constant.value) if constant is not None else None
            words = _words(named[1]) if named is not None else "waiting"
        if reason is not None:
            self._reasons[reason] = words
        return words

    async def _number(self, expression: str, frame_id: int | None) -> int | None:
        value = await self._evaluate(expression, frame_id, False)
        if value is None:
            return None
        inner = re.search(r"value: (-?\d+)", value.value)  # an atomic.Uint32 {…, value: 4}
        return int(inner[1]) if inner else native.number(value.value)

    async def _mutex(self, locking: dict[str, Any], user: dict[str, Any], called_by_user: bool) -> Lock | None:
        """The mutex a goroutine waits in Lock() for: the receiver of its Lock frame, named by the user's line
        (the one Lock() there when the user's frame calls it itself, else the operand at that address)."""
        receiver, kind, method = _LOCKING[str(locking.get("name"))]
        address = await self._number(f"uintptr({receiver})", int(locking["id"]))
        operands = [operand for operand, called in self._source_of(user, "lock_operands") if called == method]
        if address is not None and called_by_user and len(operands) == 1:
            return Lock(id=hex(address), name=_lock_name(kind, operands[0], address), kind=kind)
        named: str | None = None
        for operand in operands:
            at = await self._address(operand, int(user["id"]))
            if at is not None and ((address is None and len(operands) == 1) or at[0] == address):
                address, named = at[0], operand
                break
        if address is None:
            return None
        return Lock(id=hex(address), name=_lock_name(kind, named, address), kind=kind)

    async def _channel(self, op: dict[str, Any], user: dict[str, Any]) -> str:
        """" on done": the channel a goroutine blocks on, as its line names it: the one channel operation there
        (its address is not read: ≈3 ms a goroutine with delve 1.20), or the operand holding the channel the
        runtime's frame has (" on results (channel at 0x…)")."""
        operands = self._source_of(user, "channel_operands")
        if len(operands) == 1:
            return f" on {operands[0]}"
        address = await self._number("uintptr(c)", int(op["id"]))
        if address is None:
            return ""
        for operand in operands:
            pointer = await self._number(f"*(*uintptr)(uintptr(&({operand})))", int(user["id"]))
            if pointer is not None and pointer == address:
                return f" on {operand} (channel at {address:#x})"
        return f" on a channel at {address:#x}"

    async def _claims(self, frame: dict[str, Any]) -> list[_Claim]:
        """The mutexes the frame's source holds at its line, as evaluated there (RLock's shared holds left out)."""
        path, line = _path(frame), frame.get("line")
        source = self._source(path) if path else None
        if source is None or not isinstance(line, int):
            return []
        claims = []
        for statement in source.held_at(line, in_closure=_CLOSURE.search(str(frame.get("name", ""))) is not None):
            if statement.method != "Lock":
                continue
            at = await self._address(statement.operand, int(frame["id"]))
            if at is None:
                continue
            address, kind, locked = at
            where = f"{os.path.basename(path or '')}:{statement.line}"
            claims.append(_Claim(address, Lock(id=hex(address), name=_lock_name(kind, statement.operand, address)
                                               + f" (locked at {where})", kind=kind), locked))
        return claims

    async def _address(self, operand: str, frame_id: int) -> tuple[int, str, bool] | None:
        """(address, kind, locked) of the mutex ``operand`` is in the frame: a sync.Mutex or RWMutex, a pointer
        to one, or a struct that embeds one."""
        value = await self._evaluate(operand, frame_id, False)
        if value is None:
            return None
        kind = (value.type or "").lstrip("*")
        if kind in _MUTEX_TYPES:
            expression = f"uintptr({operand})" if (value.type or "").startswith("*") else f"uintptr(&({operand}))"
            address = await self._number(expression, frame_id)
            return None if address is None else (address, kind, _locked(value.value))
        for embedded in ("Mutex", "RWMutex"):
            if f"{embedded}: sync.{embedded} {{" in value.value:
                return await self._address(f"({operand}).{embedded}", frame_id)
        return None

    def _source_of(self, frame: dict[str, Any], question: str) -> list[Any]:
        path, line = _path(frame), frame.get("line")
        source = self._source(path) if path else None
        if source is None or not isinstance(line, int):
            return []
        answer: list[Any] = getattr(source, question)(line)
        return answer

    def _source(self, path: str) -> GoSource | None:
        """The file's blocks, parsed once per version of it; None when it cannot be read."""
        try:
            stamp = os.stat(path).st_mtime
        except OSError:
            return None
        known = self._sources.get(path)
        if known is None or known[0] != stamp:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    known = (stamp, GoSource(handle.read()))
            except OSError:
                known = (stamp, None)
            self._sources[path] = known
        return known[1]


def _path(frame: dict[str, Any]) -> str | None:
    path = (frame.get("source") or {}).get("path")
    return str(path) if path else None


def _where(frame: dict[str, Any]) -> str:
    return f"{os.path.basename(_path(frame) or '?')}:{frame.get('line')}"


def _lock_name(kind: str, operand: str | None, address: int) -> str:
    return f"{kind} {operand} at {address:#x}" if operand else f"{kind} at {address:#x}"


def _locked(value: str) -> bool:
    """Whether a mutex's value shows it locked (an RWMutex: its writer's mutex)."""
    state = _STATE_WORD.search(value)
    return state is not None and int(state[1]) & 1 == 1


def _words(constant: str) -> str:
    """A wait reason's constant name in words, as the runtime's table says them ("ChanReceive" → "chan receive")."""
    return " ".join(part if part.isupper() else part.lower()
                    for part in re.findall(r"[A-Z]{2,}(?=[A-Z][a-z]|$)|[A-Z][a-z]*|\d+", constant))


def summary(goroutines: Sequence[Goroutine], locks: dict[int, ThreadLocks], lines: int) -> list[str]:
    """Each goroutine's place and wait in a line (goroutines alike in both, one line), at most ``lines``: what
    Go itself prints after "all goroutines are asleep", read while the program is still there to inspect."""
    grouped: dict[str, list[int]] = {}
    for goroutine in goroutines:
        state = locks.get(goroutine.id)
        said = []
        if state and state.holds:
            said.append("holds " + ", ".join(lock.name for lock in state.holds))
        if state and state.waits_for:
            owner = state.waits_for.owner
            said.append(f"waits for {state.waits_for.name}"
                        + (f" (held by goroutine {owner})" if owner is not None else " (owner not recorded)"))
        word = (state.state or "") if state else ""
        if state and state.waits_for and " in " in word:
            word = word.split(" in ")[0]  # "semacquire in sync.(*Mutex).Lock": the wait says which
        text = f"{goroutine.place or '(no user code)'} [{word or 'running'}]" + (f": {'; '.join(said)}" if said else "")
        grouped.setdefault(text, []).append(goroutine.id)
    shown = []
    for text, ids in grouped.items():
        who = f"goroutine {ids[0]}" if len(ids) == 1 else f"goroutines {', '.join(map(str, ids[:4]))}" + (
            f" and {len(ids) - 4} more" if len(ids) > 4 else "")
        shown.append(f"{who} at {text}")
    if len(shown) > lines:
        rest = sum(len(ids) for ids in list(grouped.values())[lines - 1:])
        shown = [*shown[:lines - 1], f"… {rest} more goroutines: debug_stack(all_threads=true) lists them"]
    return shown
