"""A Rust panic's message is read from the hook's output, in the forms old and new Rust print; a panic a
``#[should_panic]`` test expects is told from its stack."""

from __future__ import annotations

from pathlib import Path

from polydbg.backends.base import Frame
from polydbg.backends.kit.panics import expected_by_test, panic_message


def test_the_last_panic_of_current_rust_is_read() -> None:
    output = ("starting\nthread 'main' panicked at src/main.rs:12:5:\nattempt to divide by zero\n"
              "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n")
    assert panic_message(output) == "panicked at src/main.rs:12:5: attempt to divide by zero"


def test_a_worker_thread_is_named_and_old_rust_is_read() -> None:
    assert panic_message("thread 'worker' panicked at 'boom', src/lib.rs:3:9\n") == \
        "panicked at src/lib.rs:3:9: boom (thread 'worker')"


def test_output_without_a_panic_gives_none() -> None:
    assert panic_message("all fine\n") is None


TESTS = """fn last(xs: &[u8]) -> u8 { xs[xs.len() - 1] }

#[test]
#[should_panic(expected = "overflow")]
// the empty list
fn last_of_nothing() {
    last(&[]);
}

#[test]
fn last_of_one() {
    assert_eq!(last(&[1]), 2);
}
"""


def test_a_should_panic_test_on_the_stack_expects_the_panic(tmp_path: Path) -> None:
    lib = tmp_path / "lib.rs"
    lib.write_text(TESTS)
    panic = Frame(name="std::panicking::rust_panic", file="/rustc/abc/library/std/src/panicking.rs", line=800)
    code = Frame(name="crate::last", file=str(lib), line=1)
    expecting = Frame(name="crate::tests::last_of_nothing", file=str(lib), line=7)
    assert expected_by_test([panic, code, expecting, Frame(name="crate::tests::last_of_nothing::{{closure}}",
                                                           file=str(lib), line=6)])
    assert not expected_by_test([panic, code, Frame(name="crate::tests::last_of_one", file=str(lib), line=12)])
    assert not expected_by_test([panic, Frame(name="crate::gone", file=str(tmp_path / "gone.rs"), line=3)])
