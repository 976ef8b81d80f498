"""A Rust panic's message is read from the hook's output, in the forms old and new Rust print."""

from __future__ import annotations

from polydbg.backends.kit.panics import panic_message


def test_the_last_panic_of_current_rust_is_read() -> None:
    output = ("starting\nthread 'main' panicked at src/main.rs:12:5:\nattempt to divide by zero\n"
              "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    assert panic_message(output) == "panicked at src/main.rs:12:5: attempt to divide by zero"


def test_a_worker_thread_is_named_and_old_rust_is_read() -> None:
    assert panic_message("thread 'worker' panicked at 'boom', src/lib.rs:3:9\n") == \
        "panicked at src/lib.rs:3:9: boom (thread 'worker')"


def test_output_without_a_panic_gives_none() -> None:
    assert panic_message("all fine\n") is None
