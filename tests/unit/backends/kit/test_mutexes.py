"""kit.mutexes: which mutex a stack waits on, how it is named, and the owners and holders that follow."""

from __future__ import annotations

from polydbg.backends.base import Frame
from polydbg.backends.kit import mutexes

LIBC = [Frame("futex_wait", "../sysdeps/nptl/futex-internal.h", 146), Frame("__GI___lll_lock_wait", None, None),
        Frame("___pthread_mutex_lock", "./nptl/pthread_mutex_lock.c", 93)]


def test_a_thread_in_pthread_mutex_lock_is_blocked_and_its_caller_is_the_programs_frame() -> None:
    user = Frame("left", "/src/deadlock.c", 28)
    found = mutexes.blocked([*LIBC, user])
    assert found == mutexes.Blocked(mutexes.PTHREAD_MUTEX, user)
    stripped = [Frame("??", None, None), Frame("pthread_mutex_lock", None, None), user]  # no libc symbols
    assert mutexes.blocked(stripped) == mutexes.Blocked(mutexes.PTHREAD_MUTEX, user)
    header = Frame("__gthread_mutex_lock", "/usr/include/x86_64-linux-gnu/c++/12/bits/gthr-default.h", 749)
    assert mutexes.blocked([*LIBC, header, Frame("post", "/src/d.cpp", 23)]) == mutexes.Blocked(
        mutexes.PTHREAD_MUTEX, Frame("post", "/src/d.cpp", 23))


def test_a_rust_mutex_waits_in_lock_contended_and_a_breakpoint_at_the_lock_is_no_wait() -> None:
    rust = [Frame("syscall", None, None), Frame("std::sys::pal::unix::futex::futex_wait", "/rustc/x/futex.rs", 73),
            Frame("<std::sys::sync::mutex::futex::Mutex>::lock_contended", "/rustc/x/futex.rs", 61)]
    assert mutexes.blocked(rust).kind == mutexes.RUST_MUTEX  # type: ignore[union-attr]
    assert mutexes.blocked([Frame("pthread_mutex_lock", None, None), Frame("main", "/src/m.c", 3)]) is None
    assert mutexes.blocked([Frame("work", "/src/w.c", 5)]) is None


def test_names_from_gdb_and_lldb() -> None:
    assert mutexes.symbol_of("0x555555558100 <beta>") == "beta"
    assert mutexes.symbol_of("0x555555558100 <table+40>") == "table+40"
    assert mutexes.symbol_of("0x5555555592a8") is None
    assert mutexes.symbol_of("      Address: d[0x40c0] (d.PT_LOAD[3]..bss + 32)\n      Summary: d`alpha\n") == "alpha"
    assert mutexes.symbol_of("Summary: deadlock::SAVINGS::h8c17e32121549549\n") == "deadlock::SAVINGS"
    assert mutexes.lwp_of("Thread 0x7ffff7d8a6c0 (LWP 25506)") == 25506
    assert mutexes.lwp_of("process 12") is None


def test_owners_hold_what_their_waiters_wait_for_and_a_released_word_is_no_wait() -> None:
    blocked = mutexes.Blocked(mutexes.PTHREAD_MUTEX, None)
    tids = {100: 1, 101: 2, 102: 3}
    waiting = [mutexes.Waiting(2, blocked, 0x10, 2, 102, "beta"), mutexes.Waiting(3, blocked, 0x20, 2, 101, "alpha"),
               mutexes.Waiting(1, blocked, 0x30, 0, 101, None),  # released since: not a wait
               mutexes.Waiting(1, mutexes.Blocked(mutexes.RUST_MUTEX, None), 0x40, 1, 555, None)]
    locks = mutexes.thread_locks(waiting, tids)
    assert locks[2].waits_for is not None and locks[2].waits_for.owner == 3
    assert locks[2].waits_for.name == "mutex beta at 0x10"
    assert [lock.name for lock in locks[3].holds] == ["mutex beta at 0x10"]
    assert [lock.name for lock in locks[2].holds] == ["mutex alpha at 0x20"]
    assert locks[1].waits_for is not None and locks[1].waits_for.owner is None  # Rust records no owner
    assert locks[1].waits_for.name == "Mutex at 0x40"
    assert mutexes.from_memory(bytes([2, 0, 0, 0, 0, 0, 0, 0, 0x66, 0, 0, 0])) == (2, 0x66)
