"""debug_trace: record expressions at points without stopping, through the MCP layer and real debugpy."""

from __future__ import annotations

from tests.conftest import Tools, line_of, program

LOOP = program("loop.py")
TICKER = program("ticker.py")

LOOP_START = line_of("loop.py", 'start = "begin"')
LOOP_BODY = line_of("loop.py", "total += square(i)")
LOOP_PRINT = line_of("loop.py", 'print("total:", total)')
TICK_START = line_of("ticker.py", "i = 0")
TICK_BODY = line_of("ticker.py", "square = i * i")

# Trace waits are bounded by the tool's own timeout; a correct trace ends long before it.
TRACE_TIMEOUT_S = 3


async def test_trace_collects_values_without_stopping_and_honours_max_hits(tools: Tools) -> None:
    await tools("debug_launch", program=TICKER, breakpoints=[{"file": TICKER, "line": TICK_START}])
    before = (await tools("debug_breakpoints"))["breakpoints"]
    result = await tools("debug_trace", points=[{"file": TICKER, "line": TICK_BODY}], expressions=["i", "i*i"],
                         max_hits=4, timeout_s=TRACE_TIMEOUT_S)
    assert result["stopped_because"] == "max_hits"
    assert [h["values"] for h in result["hits"]] == [{"i": str(n), "i*i": str(n * n)} for n in range(4)]
    assert all((h["file"], h["line"]) == (TICKER, TICK_BODY) for h in result["hits"])
    assert result["total_hits"] >= 4
    # The program never stopped: it keeps running after the trace.
    assert result["state"] == "running"
    sessions = await tools("debug_sessions")
    assert sessions["sessions"][0]["state"] == "running"

    # The tracepoints are gone: the user's breakpoints are as before, and the program prints nothing.
    assert (await tools("debug_breakpoints"))["breakpoints"] == before
    paused = await tools("debug_pause")
    assert paused["state"] == "stopped"
    moved_on = await tools("debug_continue", timeout_s=0.3)
    assert moved_on["state"] == "running"
    output = await tools("debug_output", max_bytes=100_000)
    assert "polydbg" not in output["text"]
    assert "\x1d" not in output["text"]
    assert "\x1f" not in output["text"]
    text = await tools.text("debug_trace", points=[{"file": TICKER, "line": TICK_BODY}], expressions=["i"],
                            max_hits=2, timeout_s=TRACE_TIMEOUT_S)
    assert "2 hits (max_hits)" in text
    await tools("debug_terminate")


async def test_trace_until_the_program_exits(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_START}])
    result = await tools("debug_trace", points=[{"file": LOOP, "line": LOOP_BODY}], expressions=["i", "i*i"],
                         max_hits=50, timeout_s=TRACE_TIMEOUT_S)
    assert result["stopped_because"] == "exited"
    assert result["state"] == "exited"
    assert result["total_hits"] == 10
    assert [h["values"] for h in result["hits"]] == [{"i": str(n), "i*i": str(n * n)} for n in range(10)]
    assert result["report"]["state"] == "exited"
    assert result["report"]["exit_code"] == 0

    listing = await tools("debug_breakpoints")
    assert [(b["file"], b["line"]) for b in listing["breakpoints"]] == [(LOOP, LOOP_START)]
    output = await tools("debug_output", max_bytes=100_000)
    assert "total: 285" in output["text"]
    assert "\x1d" not in output["text"]
    await tools("debug_terminate")


async def test_trace_ends_at_a_user_breakpoint(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_START},
                                                          {"file": LOOP, "line": LOOP_PRINT}])
    # A trace needs at least one point and one expression; a refused trace leaves the program as it was.
    message = await tools.error("debug_trace", points=[], expressions=["i"])
    assert "point" in message
    message = await tools.error("debug_trace", points=[{"file": LOOP, "line": LOOP_BODY}], expressions=[])
    assert "expression" in message
    assert (await tools("debug_evaluate", expression="total"))["value"] == "0"

    result = await tools("debug_trace", points=[{"file": LOOP, "line": LOOP_BODY}],
                         expressions=["i", "total"], max_hits=50, timeout_s=TRACE_TIMEOUT_S)
    assert result["stopped_because"] == "stopped"
    assert result["state"] == "stopped"
    assert [h["values"]["i"] for h in result["hits"]] == [str(n) for n in range(10)]
    assert result["hits"][3]["values"]["total"] == str(sum(n * n for n in range(3)))
    report = result["report"]
    assert report["location"] == {"file": LOOP, "line": LOOP_PRINT, "function": "main"}
    assert report["reason"] == "breakpoint"

    # No tracepoint is left: the user's two breakpoints only, and continuing ends the program.
    listing = await tools("debug_breakpoints")
    assert [b["line"] for b in listing["breakpoints"]] == [LOOP_START, LOOP_PRINT]
    end = await tools("debug_continue", timeout_s=15)
    assert end["state"] == "exited"
    await tools("debug_terminate")


async def test_trace_of_an_expression_that_fails_records_the_error(tools: Tools) -> None:
    await tools("debug_launch", program=LOOP, breakpoints=[{"file": LOOP, "line": LOOP_START}])
    result = await tools("debug_trace", points=[{"file": LOOP, "line": LOOP_BODY}],
                         expressions=["i", "undefined_name"], max_hits=2, timeout_s=TRACE_TIMEOUT_S)
    assert result["stopped_because"] in ("max_hits", "exited")
    assert len(result["hits"]) == 2
    assert [h["values"]["i"] for h in result["hits"]] == ["0", "1"]
    assert all("undefined_name" in h["values"] for h in result["hits"])
    await tools("debug_terminate")

