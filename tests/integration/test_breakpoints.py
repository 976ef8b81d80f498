"""Breakpoints of every kind, through the MCP layer against real debugpy.

Conditions, hit counts, logpoints, function breakpoints, moved breakpoints, breakpoints set before
any session, clearing, hit counting, restart, run-to-location, and exception breakpoints.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import Tools, line_of, program

LOOP = program("loop.py")
USES_LOOP = program("uses_loop.py")
RAISES = program("raises.py")
USES_LIBRARY = program("uses_library.py")

LOOP_BODY = line_of("loop.py", "total += square(i)")
LOOP_COMMENT = line_of("loop.py", "# a comment line in the loop")
LOOP_START = line_of("loop.py", 'start = "begin"')
LOOP_AFTER_COMMENT = line_of("loop.py", "total -= 0")
LOOP_PRINT = line_of("loop.py", 'print("total:", total)')
SQUARE_BODY = line_of("loop.py", "result = n * n")
RAISE_LINE = line_of("raises.py", "raise ValueError")


def local_values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def listed(tools: Tools) -> list[dict[str, Any]]:
    return list((await tools("debug_breakpoints"))["breakpoints"])


async def test_conditional_breakpoint_stops_only_when_condition_holds(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP,
                         breakpoints=[{"file": LOOP, "line": LOOP_BODY, "condition": "i == 7"}])
    assert report["state"] == "stopped"
    assert report["reason"] == "breakpoint"
    assert report["location"]["line"] == LOOP_BODY
    assert local_values(report)["i"] == "7"
    # The condition never holds again: the program runs to its end.
    end = await tools("debug_continue", timeout_s=15)
    assert end["state"] == "exited"
    assert end["exit_code"] == 0
    await tools("debug_terminate")


async def test_hit_count_breakpoint_stops_on_the_third_hit(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP,
                         breakpoints=[{"file": LOOP, "line": LOOP_BODY, "hit_condition": "3"}])
    assert report["state"] == "stopped"
    assert report["location"]["line"] == LOOP_BODY
    assert local_values(report)["i"] == "2"  # the 3rd pass through the loop
    [bp] = await listed(tools)
    assert bp["hit_condition"] == "3"
    assert bp["hits"] == 1  # hits count stops, and it stopped once
    end = await tools("debug_continue", timeout_s=15)
    assert end["state"] == "exited"
    await tools("debug_terminate")


async def test_logpoint_prints_without_stopping(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP,
                         breakpoints=[{"file": LOOP, "line": LOOP_BODY, "log_message": "i={i}"}])
    assert report["state"] == "exited"
    assert report["exit_code"] == 0
    # logpoint messages come from the debugger, not through the program's stdout pipe, so the two may
    # interleave anywhere (even inside one print call's writes)
    text = (await tools("debug_output", max_bytes=30_000))["text"]
    for i in range(10):
        assert f"i={i}\n" in text, text
        text = text.replace(f"i={i}\n", "", 1)
    assert "total: 285" in text
    assert "{i}" not in text
    [bp] = await listed(tools)
    assert bp["log_message"] == "i={i}"
    await tools("debug_terminate")


async def test_function_breakpoint_stops_in_the_function(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_START}])
    added = await tools("debug_break", function="square")
    [bp] = added["breakpoints"]
    assert bp["kind"] == "function"
    assert bp["function"] == "square"
    report = await tools("debug_continue", timeout_s=15)
    assert report["state"] == "stopped"
    assert report["location"]["function"] == "square"
    assert report["location"]["file"] == LOOP
    assert local_values(report) == {"n": "0"}
    # Every call stops: the second one has n == 1.
    again = await tools("debug_continue", timeout_s=15)
    assert again["location"]["function"] == "square"
    assert local_values(again)["n"] == "1"
    function_bp = next(b for b in await listed(tools) if b["kind"] == "function")
    assert function_bp["verified"] is True
    assert function_bp["hits"] == 2
    await tools("debug_terminate")


async def test_breakpoint_on_a_comment_line_reports_where_it_landed(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_COMMENT}])
    assert report["state"] == "stopped"
    assert report["reason"] == "breakpoint"
    [bp] = await listed(tools)
    assert bp["line"] == LOOP_COMMENT
    assert bp["verified"] is True
    assert bp["actual_line"] is not None
    assert bp["actual_line"] != LOOP_COMMENT
    assert report["location"]["line"] == bp["actual_line"]
    landed = Path(LOOP).read_text().splitlines()[bp["actual_line"] - 1].strip()
    assert landed and not landed.startswith("#"), f"landed on a non-code line: {landed!r}"
    # The source excerpt marks the line where the breakpoint really is.
    assert f"{bp['actual_line']}>*" in report["source"]
    await tools("debug_terminate")


async def test_breakpoints_given_to_debug_launch_are_set_before_the_program_runs(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP,
                         breakpoints=[{"file": LOOP, "line": LOOP_START}, {"file": LOOP, "line": SQUARE_BODY}])
    assert report["state"] == "stopped"
    assert report["location"] == {"file": LOOP, "line": LOOP_START, "function": "main"}
    bps = await listed(tools)
    assert [(b["line"], b["verified"]) for b in bps] == [(LOOP_START, True), (SQUARE_BODY, True)]
    nxt = await tools("debug_continue", timeout_s=15)
    assert nxt["location"] == {"file": LOOP, "line": SQUARE_BODY, "function": "square"}
    await tools("debug_terminate")


async def test_debug_break_without_a_session_waits_for_the_next_launch(tools: Tools) -> None:
    text = await tools.text("debug_break", file=LOOP, line=SQUARE_BODY)
    assert "next debug_launch" in text
    report = await tools("debug_launch", program=LOOP)
    assert report["state"] == "stopped"
    assert report["reason"] == "breakpoint"
    assert report["location"] == {"file": LOOP, "line": SQUARE_BODY, "function": "square"}
    [bp] = await listed(tools)
    assert bp["file"] == LOOP
    assert bp["line"] == SQUARE_BODY
    assert bp["verified"] is True
    assert bp["hits"] == 1
    await tools("debug_terminate")


async def test_clear_by_id_by_file_and_all(tools: Tools) -> None:
    first = line_of("uses_loop.py", "first = loop.square(2)")
    second = line_of("uses_loop.py", "second = loop.square(3)")
    last = line_of("uses_loop.py", 'print("sum"')
    report = await tools("debug_launch", program=USES_LOOP, breakpoints=[
        {"file": USES_LOOP, "line": first}, {"file": LOOP, "line": SQUARE_BODY},
        {"file": USES_LOOP, "line": second}, {"file": USES_LOOP, "line": last}])
    assert report["location"]["line"] == first
    ids = {(b["file"], b["line"]): b["id"] for b in await listed(tools)}
    assert len(ids) == 4

    # By id: the breakpoint in square goes, so the next stop is the next line of uses_loop.py.
    cleared = await tools("debug_clear", id=ids[(LOOP, SQUARE_BODY)])
    assert str(ids[(LOOP, SQUARE_BODY)]) in cleared["message"]
    assert {b["id"] for b in await listed(tools)} == {ids[(USES_LOOP, first)], ids[(USES_LOOP, second)],
                                                       ids[(USES_LOOP, last)]}
    report = await tools("debug_continue", timeout_s=15)
    assert report["location"] == {"file": USES_LOOP, "line": second, "function": "<module>"}

    # By file: only the (new) breakpoint in loop.py remains, so the next stop is inside square.
    await tools("debug_break", file=LOOP, line=SQUARE_BODY)
    await tools("debug_clear", file=USES_LOOP)
    remaining = await listed(tools)
    assert [(b["file"], b["line"]) for b in remaining] == [(LOOP, SQUARE_BODY)]
    report = await tools("debug_continue", timeout_s=15)
    assert report["location"]["function"] == "square"
    assert local_values(report) == {"n": "3"}

    # All: nothing stops the program any more.
    await tools("debug_clear", all=True)
    assert await listed(tools) == []
    end = await tools("debug_continue", timeout_s=15)
    assert end["state"] == "exited"
    assert end["exit_code"] == 0

    # Clearing an id that does not exist is an error that names the existing ones.
    message = await tools.error("debug_clear", id=999)
    assert "999" in message
    await tools("debug_terminate")


async def test_breakpoint_list_shows_verified_state_and_counts_hits(tools: Tools) -> None:
    report = await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_BODY},
                                                                   {"file": LOOP, "line": LOOP_PRINT}])
    assert local_values(report)["i"] == "0"
    body, after = await listed(tools)
    assert (body["line"], body["verified"], body["hits"]) == (LOOP_BODY, True, 1)
    assert (after["line"], after["verified"], after["hits"]) == (LOOP_PRINT, True, 0)
    for expected in (2, 3):
        report = await tools("debug_continue", timeout_s=15)
        assert local_values(report)["i"] == str(expected - 1)
        body, after = await listed(tools)
        assert body["hits"] == expected
        assert after["hits"] == 0
    text = await tools.text("debug_breakpoints")
    assert "verified, 3 hits" in text
    await tools("debug_terminate")


async def test_breakpoints_survive_restart(tools: Tools) -> None:
    first = await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_BODY}])
    session_id = first["session_id"]
    await tools("debug_continue", timeout_s=15)
    moved = await tools("debug_continue", timeout_s=15)
    assert local_values(moved)["i"] == "2"
    before = await listed(tools)

    again = await tools("debug_restart", timeout_s=30)
    assert again["session_id"] == session_id
    assert again["state"] == "stopped"
    assert again["reason"] == "breakpoint"
    assert again["location"] == {"file": LOOP, "line": LOOP_BODY, "function": "main"}
    assert local_values(again)["i"] == "0"  # a fresh run, not the old process
    after = await listed(tools)
    assert [(b["id"], b["line"]) for b in after] == [(b["id"], b["line"]) for b in before]
    assert all(b["verified"] for b in after)
    sessions = await tools("debug_sessions")
    assert [s["session_id"] for s in sessions["sessions"]] == [session_id]
    # The breakpoint keeps working in the new run.
    nxt = await tools("debug_continue", timeout_s=15)
    assert local_values(nxt)["i"] == "1"
    await tools("debug_terminate")


async def test_run_to_location_stops_there_and_leaves_no_breakpoint(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_START}])
    before = await listed(tools)
    report = await tools("debug_continue", to={"file": LOOP, "line": LOOP_AFTER_COMMENT}, timeout_s=15)
    assert report["state"] == "stopped"
    assert report["location"] == {"file": LOOP, "line": LOOP_AFTER_COMMENT, "function": "main"}
    assert local_values(report)["i"] == "0"
    assert await listed(tools) == before
    # The temporary breakpoint is really gone: the loop runs to the end without stopping there again.
    end = await tools("debug_continue", timeout_s=15)
    assert end["state"] == "exited"
    assert end["exit_code"] == 0
    await tools("debug_terminate")


async def test_uncaught_exception_stops_in_the_raising_function(tools: Tools) -> None:
    report = await tools("debug_launch", program=RAISES)
    assert report["state"] == "stopped"
    assert report["reason"] == "exception"
    assert report["location"] == {"file": RAISES, "line": RAISE_LINE, "function": "fail"}
    assert local_values(report)["value"] == "2"  # not the caught first exception
    assert report["exception"]["type"] == "ValueError"
    assert report["exception"]["message"] == "bad value 2"
    await tools("debug_terminate")


async def test_break_on_raised_exceptions_stops_on_a_caught_one(tools: Tools) -> None:
    report = await tools("debug_launch", program=RAISES, break_on_exception="raised")
    assert report["state"] == "stopped"
    assert report["reason"] == "exception"
    assert report["location"] == {"file": RAISES, "line": RAISE_LINE, "function": "fail"}
    assert local_values(report)["value"] == "1"
    assert report["exception"]["type"] == "ValueError"
    assert "bad value 1" in report["exception"]["message"]
    listing = await tools("debug_breakpoints")
    assert "raised" in listing["exception_filters"]
    await tools("debug_terminate")


async def test_break_on_exception_none_lets_the_program_die(tools: Tools) -> None:
    report = await tools("debug_launch", program=RAISES, break_on_exception="none")
    assert report["state"] == "exited"
    assert report["exit_code"] not in (None, 0)
    output = await tools("debug_output", max_bytes=30_000)
    assert "handled the first one" in output["text"]
    assert "Traceback (most recent call last)" in output["text"]
    assert "ValueError: bad value 2" in output["text"]
    assert output["state"] == "exited"
    await tools("debug_terminate")


def _json_dumps_line() -> tuple[str, int]:
    """The library line json.dumps runs for a plain dict (the debuggee's interpreter shares this stdlib)."""
    import json

    lines = Path(json.__file__).read_text().splitlines()
    return json.__file__, next(i for i, text in enumerate(lines, 1) if "return _default_encoder.encode(obj)" in text)


async def test_a_breakpoint_in_library_code_is_honoured(tools: Tools) -> None:
    library, line = _json_dumps_line()
    report = await tools("debug_launch", program=USES_LIBRARY, breakpoints=[{"file": library, "line": line}])
    assert report["state"] == "stopped", report
    assert report["location"]["function"] == "dumps" and report["location"]["line"] == line
    await tools("debug_terminate")


async def test_a_library_breakpoint_added_later_says_why_it_is_not_hit_and_restart_honours_it(tools: Tools) -> None:
    library, line = _json_dumps_line()
    user_line = line_of("uses_library.py", "text = json.dumps(data)")
    await tools("debug_launch", program=USES_LIBRARY, breakpoints=[{"file": USES_LIBRARY, "line": user_line}])
    text = await tools.text("debug_break", file=library, line=line)
    assert "library code" in text and "debug_restart" in text, text
    first = await tools("debug_restart")
    assert first["location"]["line"] == user_line
    second = await tools("debug_continue")
    assert second["location"]["function"] == "dumps", second
    await tools("debug_terminate")


async def test_a_step_into_library_code_says_how_to_step_through_it(tools: Tools) -> None:
    """debugpy skips library code on a step into and advises a launch.json setting the agent does not have:
    the report says what polydbg offers instead."""
    user_line = line_of("uses_library.py", "text = json.dumps(data)")
    await tools("debug_launch", program=USES_LIBRARY, breakpoints=[{"file": USES_LIBRARY, "line": user_line}])
    stepped = await tools("debug_step", kind="into")
    said = stepped["output"]["text"]
    assert "library code" in said and "debug_restart" in said and "launch.json" not in said, stepped
    await tools("debug_terminate")


async def test_a_python_condition_that_does_not_parse_is_refused_when_set(tools: Tools) -> None:
    text = await tools.error("debug_launch", program=LOOP,
                             breakpoints=[{"file": LOOP, "line": LOOP_BODY, "condition": "i = 3"}])
    assert "not a Python expression" in text and "write ==" in text, text
    report = await tools("debug_launch", program=LOOP, stop_on_entry=True)
    assert report["state"] == "stopped"
    text = await tools.error("debug_break", file=LOOP, line=LOOP_BODY, log_message="i is {i +* 2}")
    assert "{i +* 2}" in text and "not a Python expression" in text, text
    listed = await tools("debug_breakpoints")
    assert listed["breakpoints"] == []
    await tools("debug_terminate")


async def test_tools_marked_idempotent_change_nothing_the_second_time(tools: Tools) -> None:
    """tools/list calls debug_break, debug_clear, debug_pause and debug_set_variable idempotent: a retry
    (after a timeout, a dropped connection) must not set a second breakpoint that counts the hit twice."""
    await tools("debug_break", file=LOOP, line=LOOP_BODY)
    await tools("debug_break", file=LOOP, line=LOOP_BODY)  # before any session: kept once
    report = await tools("debug_launch", program=LOOP)
    assert report["location"]["line"] == LOOP_BODY
    first = (await tools("debug_break", file=LOOP, line=SQUARE_BODY, condition="n == 3"))["breakpoints"][0]
    again = (await tools("debug_break", file=LOOP, line=SQUARE_BODY, condition="n == 3"))["breakpoints"][0]
    assert again["id"] == first["id"]
    other = (await tools("debug_break", file=LOOP, line=SQUARE_BODY, condition="n == 4"))["breakpoints"][0]
    assert other["id"] != first["id"]  # a different condition is a different breakpoint
    function = (await tools("debug_break", function="square"))["breakpoints"][0]
    assert (await tools("debug_break", function="square"))["breakpoints"][0]["id"] == function["id"]
    assert len(await listed(tools)) == 4

    await tools("debug_set_variable", name="total", value="100")
    assert (await tools("debug_set_variable", name="total", value="100"))["value"] == "100"
    paused = await tools("debug_pause")  # already stopped: stays where it is
    assert paused["location"]["line"] == LOOP_BODY

    await tools("debug_clear", id=other["id"])
    # gone already: nothing more happens (and the agent hears which ids exist, in case it mistyped one)
    assert "no breakpoint with id" in await tools.error("debug_clear", id=other["id"])
    assert len(await listed(tools)) == 3
    await tools("debug_terminate")


# the program counts each time its own file is read to be compiled: pydevd reads a file with tokenize.open
COUNTS_ITS_COMPILES = """import tokenize
read, compiled = tokenize.open, []
tokenize.open = lambda path: (compiled.append(path), read(path))[1]
x = 0
"""


async def test_one_more_breakpoint_in_a_file_with_a_thousand_compiles_the_file_at_most_once(tools: Tools,
                                                                                          tmp_path: Path) -> None:
    """debugpy replaces a file's breakpoints wholesale, and pydevd compiled the whole file again for each one
    (8 ms each here: 8 s of the program's CPU to add one breakpoint to a file with 1,000). Counted, not timed:
    how many times the program's file is read to be compiled while one breakpoint is added."""
    big = tmp_path / "big.py"
    big.write_text(COUNTS_ITS_COMPILES + "x += 1\n" * 1000 + "print(x)\n")
    first = len(COUNTS_ITS_COMPILES.splitlines()) + 1
    report = await tools("debug_launch", program=str(big),
                         breakpoints=[{"file": str(big), "line": n} for n in range(first, first + 1000)])
    assert report["location"]["line"] == first
    added = await tools("debug_break", file=str(big), line=first + 1000)
    assert added["breakpoints"][0]["verified"]
    compiled = (await tools("debug_evaluate", expression="len(compiled)"))["value"]
    assert int(compiled) <= 1, f"pydevd read the file {compiled} times to add one breakpoint"
    assert (await tools("debug_continue"))["location"]["line"] == first + 1
    await tools("debug_terminate")
