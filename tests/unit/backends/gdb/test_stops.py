"""gdb's stop and exit records read as polydbg's reports (stops.py). No gdb runs."""

from __future__ import annotations

from typing import Any

import pytest

from polydbg.backends.base import StopEvent
from polydbg.backends.gdb.stops import Returned, StopFacts, classify, core_stop, exit_status, watch_text

PANIC_OUTPUT = "\nthread 'main' panicked at src/main.rs:5:9:\nindex out of bounds\nnote: run with RUST_BACKTRACE=1\n"


class Book:
    """The breakpoints as a stop asks about them: gdb number → (kind, polydbg id, filter)."""

    def __init__(self, known: dict[int, tuple[str, int | None, str]]) -> None:
        self.known = known

    def kind_of(self, number: int) -> str | None:
        return self.known[number][0] if number in self.known else None

    def catch_of(self, number: int) -> str:
        return self.known[number][2] if number in self.known else "throw"

    def ids_hit(self, number: int) -> tuple[int, ...]:
        bp_id = self.known[number][1] if number in self.known else None
        return (bp_id,) if bp_id is not None else ()


BOOK = Book({1: ("line", 11, ""), 2: ("function", 12, ""), 3: ("watch", 13, ""), 4: ("catch", None, "throw"),
             5: ("catch", None, "catch"), 6: ("catch", None, "panic")})


def stop(reason: str, fields: dict[str, Any] | None = None, *, interrupting: bool = False, output: str = "",
         finishing: str | None = None, **payload: Any) -> Any:
    """A classified *stopped record; ``fields`` for payload names that are not Python names (return-value)."""
    return classify(reason, {"reason": reason, "thread-id": "1", **(fields or {}), **payload},
                    interrupting=interrupting, breakpoints=BOOK, output=output, finishing=finishing)


def test_a_breakpoint_hit_names_the_breakpoint_and_polydbg_id() -> None:
    assert stop("breakpoint-hit", bkptno="1").event == StopEvent("breakpoint", 1, "breakpoint 1",
                                                                 hit_breakpoint_ids=(11,))
    assert stop("breakpoint-hit", bkptno="2").event.reason == "function breakpoint"
    assert stop("breakpoint-hit", bkptno="99").event == StopEvent("breakpoint", 1, "breakpoint 99")


def test_the_temporary_breakpoint_of_a_start_is_the_entry() -> None:
    assert stop("breakpoint-hit", bkptno="9", disp="del").event == \
        StopEvent("entry", 1, "stopped at the program's entry (main)")
    assert stop("breakpoint-hit", bkptno="1", disp="del").event.reason == "breakpoint"  # a polydbg breakpoint


@pytest.mark.parametrize(("number", "text"), [(4, "C++ exception thrown"), (5, "C++ exception caught")])
def test_a_catchpoint_is_an_exception_whose_runtime_frames_are_hidden(number: int, text: str) -> None:
    caught = stop("breakpoint-hit", bkptno=str(number))
    assert caught.event == StopEvent("exception", 1, text, text)
    assert caught.facts == StopFacts(catch="throw" if number == 4 else "catch", machinery_thread=1)
    assert stop("exception-thrown", bkptno=str(number)).event == caught.event


def test_a_panic_is_reported_with_the_message_its_hook_printed() -> None:
    panic = stop("breakpoint-hit", bkptno="6", output=PANIC_OUTPUT)
    message = "panicked at src/main.rs:5:9: index out of bounds"
    assert panic.event == StopEvent("exception", 1, message, message)
    assert panic.facts.catch == "panic"
    assert stop("breakpoint-hit", bkptno="6").event.description == "Rust panic"


def test_steps_and_finishes() -> None:
    assert stop("end-stepping-range").event == StopEvent("step", 1)
    assert stop("location-reached").event == StopEvent("step", 1)
    finished = stop("function-finished", {"return-value": "7", "gdb-result-var": "$2"}, finishing="add")
    assert finished.event == StopEvent("step", 1)
    assert finished.facts.returned == Returned(1, "add", "7", "$2")  # listed as the caller's "(return) add"
    void = stop("function-finished")
    assert void.event == StopEvent("step", 1) and void.facts.returned is None


def test_a_signal_is_an_exception_but_after_an_interrupt_a_pause() -> None:
    segv = stop("signal-received", {"signal-name": "SIGSEGV", "signal-meaning": "Segmentation fault"})
    assert segv.event == StopEvent("exception", 1, "SIGSEGV", "SIGSEGV (Segmentation fault)")
    assert segv.facts == StopFacts(signal=("SIGSEGV", "Segmentation fault"))
    interrupted = stop("signal-received", {"signal-name": "SIGINT"}, interrupting=True)
    assert interrupted.event == StopEvent("pause", 1, "paused") and interrupted.facts == StopFacts()
    assert stop("signal-received", {"signal-name": "SIGINT"}).event.reason == "exception"  # not ours


def test_an_abort_hides_the_runtime_frames_above_the_caller() -> None:
    abort = stop("signal-received", {"signal-name": "SIGABRT", "signal-meaning": "Aborted"})
    assert abort.facts == StopFacts(signal=("SIGABRT", "Aborted"), machinery_thread=1)


def test_a_watchpoint_says_what_changed() -> None:
    write = stop("watchpoint-trigger", wpt={"number": "3", "exp": "total"}, value={"old": "1", "new": "2"})
    assert write.event == StopEvent("data breakpoint", 1, "watchpoint #13", "#13 total: 1 → 2",
                                    hit_breakpoint_ids=(13,))  # polydbg's id, not gdb's number
    read = stop("read-watchpoint-trigger", {"hw-rwpt": {"number": "3", "exp": "total"}}, value={"value": "2"})
    assert read.event.text == "#13 total = 2"



def test_a_watchpoint_that_fired_in_library_code_is_the_users_call_with_the_library_listed(tmp_path: Any) -> None:
    source = tmp_path / "copies.c"
    source.write_text("int main(void) { return 0; }\n")
    mine = stop("watchpoint-trigger", wpt={"number": "3", "exp": "buf[2]"}, value={"old": "0", "new": "7"},
                frame={"func": "fill", "fullname": str(source), "line": "1"})
    assert mine.facts == StopFacts() and mine.event.text == "#13 buf[2]: 0 → 7"
    libc = stop("watchpoint-trigger", wpt={"number": "3", "exp": "buf[2]"}, value={"old": "0", "new": "7"},
                frame={"func": "__memcpy_avx_unaligned", "file": "../sysdeps/x86_64/memmove.S", "line": "280"})
    assert libc.facts == StopFacts(machinery_thread=1, listed_above=True)
    assert libc.event.text == "#13 buf[2]: 0 → 7 inside __memcpy_avx_unaligned (library code called from here)"


def test_a_watchpoint_out_of_scope_is_reported_and_forgotten() -> None:
    gone = stop("watchpoint-scope", wpnum="3")
    assert gone.event == StopEvent("data breakpoint", 1, "watchpoint #13 deleted",
                                   "the watched expression went out of scope; its frame returned",
                                   hit_breakpoint_ids=(13,))
    assert gone.watch_gone == 3


def test_other_stops() -> None:
    assert stop("").event == StopEvent("pause", 1, "paused")
    assert stop("solib-event", interrupting=True).event == StopEvent("pause", 1, "paused")
    assert stop("solib-event").event == StopEvent("solib event", 1)
    assert classify("end-stepping-range", {}, interrupting=False, breakpoints=BOOK, output="").event.thread_id is None


def test_watch_text_without_values_is_the_expression() -> None:
    assert watch_text({"exp": "x"}, {}) == "x"
    assert watch_text({"exp": "x"}, {"value": {"new": "3"}}) == "x = 3"


@pytest.mark.parametrize(("reason", "payload", "status"), [
    ("exited-normally", {}, (0, None)),
    ("exited", {"exit-code": "012"}, (10, None)),  # gdb prints it in octal
    ("exited-signalled", {"signal-name": "SIGKILL", "signal-meaning": "Killed"},
     (137, "program terminated by SIGKILL (Killed)\n")),
    ("exited-signalled", {"signal-name": "SIGNOPE"}, (None, "program terminated by SIGNOPE\n")),
])
def test_exit_status(reason: str, payload: dict[str, Any], status: tuple[int | None, str | None]) -> None:
    assert exit_status(reason, payload) == status


def test_a_core_file_is_one_post_mortem_stop() -> None:
    console = "Core was generated by `./crash'.\nProgram terminated with signal SIGSEGV, Segmentation fault.\n#0 …"
    crashed = core_stop(console, 1, "/tmp/cores/core.123")
    assert crashed.event == StopEvent("exception", 1, "post-mortem: core file core.123 (SIGSEGV)",
                                      "SIGSEGV (Segmentation fault)")
    assert crashed.facts == StopFacts(signal=("SIGSEGV", "Segmentation fault"))
    assert core_stop("", None, None) == core_stop("nothing about a signal", None, "core")
    assert core_stop("", 2, None).event == StopEvent("core", 2, "post-mortem: core file core")
