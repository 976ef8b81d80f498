"""Deadlock cycles from what each thread holds and waits for: owners recorded on the lock or inferred from
the holders, every cycle once, said in one sentence with each thread's place."""

from __future__ import annotations

from polydbg.backends.base import Lock, ThreadLocks
from polydbg.session import locks

A = Lock("0xa", "mutex A")
B = Lock("0xb", "mutex B")
C = Lock("0xc", "mutex C")


def test_two_threads_each_holding_what_the_other_waits_for() -> None:
    state = {1: ThreadLocks(holds=(A,), waits_for=B), 2: ThreadLocks(holds=(B,), waits_for=A), 3: ThreadLocks()}
    assert locks.cycles(state) == [[1, 2]]
    said = locks.describe([1, 2], state, {1: "thread 1 (t1) at dl.c:5", 2: "thread 2 (t2) at dl.c:12"})
    assert said == ("deadlock: thread 1 (t1) at dl.c:5 holds mutex A and waits for mutex B, held by thread 2 (t2) "
                    "at dl.c:12, which waits for mutex A, held by thread 1")


def test_owners_recorded_on_the_lock_close_a_cycle_no_thread_reports_holding() -> None:
    """A pthread mutex records its owner's tid; what the owner holds is not listed anywhere."""
    state = {7: ThreadLocks(waits_for=Lock("0xb", "mutex B", owner=8)), 8: ThreadLocks(waits_for=Lock("0xa", "mutex A",
                                                                                                       owner=7))}
    assert locks.cycles(state) == [[7, 8]]


def test_three_threads_in_a_ring_and_a_bystander_waiting_on_it() -> None:
    state = {5: ThreadLocks(holds=(C,), waits_for=A), 3: ThreadLocks(holds=(A,), waits_for=B),
             4: ThreadLocks(holds=(B,), waits_for=C), 9: ThreadLocks(waits_for=A)}
    assert locks.cycles(state) == [[3, 4, 5]]  # once, from its lowest thread; 9 waits on it but is not in it


def test_a_thread_waiting_on_what_it_holds() -> None:
    state = {1: ThreadLocks(holds=(A,), waits_for=A)}
    assert locks.cycles(state) == [[1]]
    assert locks.describe([1], state, {}).endswith("which it holds itself")


def test_no_cycle_when_the_owner_is_unknown_or_running() -> None:
    state = {1: ThreadLocks(waits_for=A), 2: ThreadLocks(holds=(B,), waits_for=None)}
    assert locks.cycles(state) == []


def test_a_thread_s_state_names_the_owner_of_what_it_waits_for() -> None:
    state = {1: ThreadLocks(holds=(A,), waits_for=B), 2: ThreadLocks(holds=(B,))}
    shown = locks.state_of(state[1], locks.owners(state))
    assert (shown.holds, shown.waits_for, shown.owner) == (["mutex A"], "mutex B", 2)
