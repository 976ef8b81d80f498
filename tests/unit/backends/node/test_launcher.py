"""Node's own inspector lines are not the program's stderr; a line is passed on whole, or early when huge."""

from __future__ import annotations

from polydbg.backends.node.launcher import StderrFilter


def test_inspector_lines_are_dropped_and_the_program_s_kept() -> None:
    program = StderrFilter()
    text = program.feed(b"Debugger listening on ws://127.0.0.1:9229/abc\nFor help, see: "
                        b"https://nodejs.org/en/docs/inspector\nboom\nDebugger attached.\n")
    assert text == "boom\n"
    assert program.feed(b"Waiting for the debugger to disconnect...\n") == ""
    assert program.feed(b"") == ""


def test_a_line_waits_for_its_end() -> None:
    program = StderrFilter()
    assert program.feed(b"half a ") == ""
    assert program.feed(b"line\nand more") == "half a line\n"
    assert program.feed(b"") == "and more"


def test_a_character_split_across_chunks_is_kept_whole() -> None:
    program = StderrFilter()
    encoded = "é\n".encode()
    assert program.feed(encoded[:1]) == ""
    assert program.feed(encoded[1:]) == "é\n"


def test_a_huge_line_is_passed_on_before_its_end() -> None:
    program = StderrFilter()
    assert program.feed(b"x" * 10) == ""
    assert program.feed(b"x" * StderrFilter.HOLD) == "x" * (StderrFilter.HOLD + 10)
    assert program.feed(b"y\n") == "y\n"


def test_the_test_runners_warning_about_the_debugger_is_dropped_with_its_hint_and_the_programs_kept() -> None:
    """node --test sees the inspector polydbg's children are told of and warns, with a hint after the first
    warning: the debugger's doing, not the program's; the same hint after the program's own warning is kept."""
    hint = b"(Use `node --trace-warnings ...` to show where the warning was created)\n"
    program = StderrFilter()
    assert program.feed(b"(node:4242) Warning: Using the inspector with --test forces running at a concurrency of "
                        b"1. Use the inspectPort option to run with concurrency\n" + hint) == ""
    mine = b"(node:4242) Warning: my own\n" + hint
    assert program.feed(mine) == mine.decode()
