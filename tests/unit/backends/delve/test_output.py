"""dlv's pipes and output events: delve's own lines kept apart from the program's output."""

from __future__ import annotations

import asyncio

from polydbg import procs
from polydbg.backends.delve import output


def test_before_the_program_starts_every_line_is_delves() -> None:
    pieces, at_start = output.sorted_lines("DAP server listening at: 127.0.0.1:1\nhello", True, False)
    assert pieces == [("DAP server listening at: 127.0.0.1:1\n", True), ("hello", True)]
    assert not at_start


def test_after_it_only_lines_that_begin_like_delves_are() -> None:
    text = "hello\n2024-01-02T03:04:05Z error layer=debugger oops\nWarning: dap mode\n"
    pieces, at_start = output.sorted_lines(text, True, True)
    assert [own for _, own in pieces] == [False, True, True] and at_start
    pieces, _ = output.sorted_lines("Warning: dap mode\n", False, True)  # the tail of the program's line
    assert pieces == [("Warning: dap mode\n", False)]


def test_delves_console_events() -> None:
    assert output.exit_status("Process 4242 has exited with status 3\n") == 3
    assert output.exit_status("hello") is None
    assert output.is_housekeeping("Type 'dlv help' for list of commands.\n")
    assert output.is_housekeeping("Detaching and terminating target process\n")
    assert not output.is_housekeeping("Detaching from the crowd is fine\n")
    assert output.logpoint_text("> [Go 1]: x = 3\n") == "x = 3\n"
    assert output.logpoint_text("x = 3\n") is None


def test_a_trace_s_line_names_its_goroutine_and_reads_delves_evaluation_errors_as_the_others_do() -> None:
    line = "> [Go 18]: <<t>>main.go:27\x1f\x1a\x1fx={eval err: &{%!e(string=seen (type int) is not a struct)}}, y=2\n"
    assert output.logpoint_text(line) == \
        "<<t>>main.go:27\x1fgoroutine 18\x1fx=<error: seen (type int) is not a struct>, y=2\n"


async def test_a_pipe_is_forwarded_minus_delves_lines() -> None:
    sent: list[tuple[str, str]] = []
    proc = procs.DebuggerProcess("delve")
    pipes = output.DlvPipes("delve", proc, lambda category, text: sent.append((category, text)))
    reader = asyncio.StreamReader()
    reader.feed_data(b"DAP server listening at: 127.0.0.1:40000\n")
    assert await pipes.listening(reader) == ("127.0.0.1", 40000)
    pipes.program_started = True
    reader.feed_data("héllo\n2024-01-02T03:04:05Z info layer=dap x\n".encode() + "wörld".encode()[:2])
    reader.feed_data("wörld".encode()[2:] + b"\n")
    reader.feed_eof()
    await asyncio.wait_for(pipes.pump(reader, "stdout"), 2.0)
    assert "".join(text for _, text in sent) == "héllo\nwörld\n"
    assert "layer=dap" in proc.stderr_hint()
