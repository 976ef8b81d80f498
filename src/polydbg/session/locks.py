"""Who holds which lock, and the deadlocks that follows from it: computed, not left to the agent.

Each backend says, per thread, what the runtime tells (``Backend.locks``: the locks a thread holds, the one
it is blocked acquiring, and that lock's owner where the runtime records it). Here the threads are joined
into a wait-for graph — a thread waits for the owner of the lock it waits for — and every cycle in it is a
deadlock, said in one sentence with each thread's place in the program: "thread 12 (sync-1) at Dl.java:12
holds Object@34 and waits for Object@35, held by thread 13 (sync-2) at Dl.java:20, which waits for
Object@34". Pure: no debugger is asked anything here.
"""

from __future__ import annotations

from collections.abc import Mapping

from polydbg.backends.base import Lock, ThreadLocks
from polydbg.session.model import LockState

MAX_HELD = 8  # locks listed per thread; the rest are counted


def owners(locks: Mapping[int, ThreadLocks]) -> dict[str, int]:
    """Lock id → the thread holding it: as the runtime records it on the lock, or as a thread says it holds it."""
    found: dict[str, int] = {}
    for thread, state in locks.items():
        for lock in state.holds:
            found.setdefault(lock.id, thread)
    for state in locks.values():
        for lock in (*state.holds, *([state.waits_for] if state.waits_for else [])):
            if lock.owner is not None:
                found[lock.id] = lock.owner
    return found


def cycles(locks: Mapping[int, ThreadLocks]) -> list[list[int]]:
    """Every cycle of threads each waiting for a lock the next one holds, once each, from its lowest thread id."""
    held_by = owners(locks)
    waits_on = {thread: held_by.get(state.waits_for.id) for thread, state in locks.items() if state.waits_for}
    found: list[list[int]] = []
    seen: set[int] = set()
    for start in sorted(waits_on):
        path: list[int] = []
        thread: int | None = start
        while thread is not None and thread not in seen and thread not in path:
            path.append(thread)
            thread = waits_on.get(thread)
        if thread is not None and thread in path:
            cycle = path[path.index(thread):]
            turn = cycle.index(min(cycle))
            found.append(cycle[turn:] + cycle[:turn])
        seen.update(path)
    return found


def describe(cycle: list[int], locks: Mapping[int, ThreadLocks], label: Mapping[int, str]) -> str:
    """One deadlock in a sentence; ``label`` names a thread with its place ("thread 12 (sync-1) at Dl.java:12")."""
    def waited(thread: int) -> Lock:
        lock = locks[thread].waits_for
        assert lock is not None
        return lock

    first = cycle[0]
    held = next((lock for lock in locks[first].holds if lock.id == waited(cycle[-1]).id), waited(cycle[-1]))
    parts = [f"deadlock: {label.get(first, f'thread {first}')} holds {held.name} and waits for {waited(first).name}"]
    for thread in cycle[1:]:
        parts.append(f"held by {label.get(thread, f'thread {thread}')}, which waits for {waited(thread).name}")
    parts.append(f"held by thread {first}" if len(cycle) > 1 else "which it holds itself")
    return ", ".join(parts)


def state_of(state: ThreadLocks, held_by: Mapping[str, int]) -> LockState:
    """A thread's locks as an answer shows them."""
    waits = state.waits_for
    owner = (waits.owner if waits.owner is not None else held_by.get(waits.id)) if waits else None
    return LockState(holds=[lock.name for lock in state.holds[:MAX_HELD]] or None,
                     holds_more=max(0, len(state.holds) - MAX_HELD),
                     waits_for=waits.name if waits else None, owner=owner, state=state.state)
