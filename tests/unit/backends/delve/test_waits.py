"""What a goroutine's source says it holds (held.py) and how waits read (waits.py's pure parts): a Go mutex
keeps no owner, so a holder is inferred from the Lock() statements every path to the frame's line went
through, never from one a branch may have undone."""

from __future__ import annotations

from polydbg.backends.base import Lock, ThreadLocks
from polydbg.backends.delve import waits
from polydbg.backends.delve.held import GoSource

SOURCE = """package main

func transfer(from, to *Account) {
	from.mu.Lock() // "to.mu.Lock()" in a string is no call
	defer from.mu.Unlock()
	to.mu.Lock()
	to.balance++
}

func early(a *Account) {
	a.mu.Lock()
	if a.balance < 0 {
		a.mu.Unlock()
		return
	}
	work(a)
}

func spawned(a *Account) {
	a.mu.Lock()
	go func() {
		work(a)
	}()
	a.mu.Unlock()
}

func chosen(a, b *Account, c chan int) {
	select {
	case <-c:
		a.mu.Lock()
	default:
		work(b)
	}
	b.mu.RLock()
	c <- <-results
}
"""


def line(text: str, occurrence: int = 1) -> int:
    numbers = [number for number, content in enumerate(SOURCE.splitlines(), 1) if text in content]
    return numbers[occurrence - 1]


def test_a_lock_holds_below_it_not_on_its_own_line_and_not_where_it_is_deferred_or_a_string() -> None:
    source = GoSource(SOURCE)
    assert [(held.operand, held.method) for held in source.held_at(line("to.mu.Lock()", 2))] == [("from.mu", "Lock")]
    assert [held.operand for held in source.held_at(line("to.balance++"))] == ["from.mu", "to.mu"]


def test_an_unlock_anywhere_between_or_a_closure_or_another_case_holds_nothing() -> None:
    source = GoSource(SOURCE)
    assert source.held_at(line("work(a)", 1)) == []  # a branch unlocked it before returning
    assert source.held_at(line("work(a)", 2)) == []  # the goroutine's closure holds nothing of its creator's
    assert source.held_at(line("work(b)")) == []  # the lock was taken in another case of the select
    assert [(held.operand, held.method) for held in source.held_at(line("c <- <-results"))] == [("b.mu", "RLock")]


def test_the_operands_of_a_lines_lock_and_channel_operations() -> None:
    source = GoSource(SOURCE)
    assert source.lock_operands(line("to.mu.Lock()", 2)) == [("to.mu", "Lock")]
    assert source.lock_operands(line("defer from.mu.Unlock()")) == []
    assert source.channel_operands(line("c <- <-results")) == ["c", "results"]
    assert GoSource("package main\n\tresults <- i * i\n").channel_operands(2) == ["results"]


def test_a_wait_reasons_constant_reads_as_gos_traceback_says_it() -> None:
    assert waits._words("ChanReceive") == "chan receive"
    assert waits._words("GCAssistMarking") == "GC assist marking"
    assert waits._words("IOWait") == "IO wait"


def test_a_fatal_errors_summary_groups_goroutines_alike_and_says_the_inferred_owner() -> None:
    mutex = Lock("0x10", "sync.Mutex to.mu at 0x10", owner=7, kind="sync.Mutex")
    goroutines = [waits.Goroutine(1, "semacquire", "main.go:9 (main.main)"),
                  *(waits.Goroutine(i, "chan receive", "main.go:20 (main.worker)") for i in range(10, 16)),
                  waits.Goroutine(6, "semacquire", "main.go:31 (main.transfer)")]
    found = {1: ThreadLocks(state="semacquire in sync.(*WaitGroup).Wait"),
             6: ThreadLocks(waits_for=mutex, state="semacquire in sync.(*Mutex).Lock"),
             **{i: ThreadLocks(state="chan receive") for i in range(10, 16)}}
    assert waits.summary(goroutines, found, 12) == [
        "goroutine 1 at main.go:9 (main.main) [semacquire in sync.(*WaitGroup).Wait]",
        "goroutines 10, 11, 12, 13 and 2 more at main.go:20 (main.worker) [chan receive]",
        "goroutine 6 at main.go:31 (main.transfer) [semacquire]: waits for sync.Mutex to.mu at 0x10 "
        "(held by goroutine 7)"]
    assert waits.summary(goroutines, found, 2)[-1] == "… 7 more goroutines: debug_stack(all_threads=true) lists them"


def test_a_closure_on_one_line_holds_what_it_locked_itself_not_what_its_creator_holds() -> None:
    source = GoSource("""package main

func main() {
	busy.Lock()
	go func() { <-never }()
	go func() { work() }()
}
""")
    assert [held.operand for held in source.held_at(5)] == ["busy"]  # main's frame at the go statement
    assert source.held_at(5, in_closure=True) == []  # the goroutine running the literal holds nothing
