"""debug_trace: record expressions at points without stopping, through the MCP layer: on real debugpy, and on
every debugger that traces (debugpy, Node, gdb, lldb-dap, delve, the JVM) the counting of every hit of a long
loop up to the exit, ``max_hits`` ending a trace exactly, and a point the debugger cannot bind named at once."""

from __future__ import annotations

import asyncio
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, program, require

LOOP = program("loop.py")
TICKER = program("ticker.py")

LOOP_START = line_of("loop.py", 'start = "begin"')
LOOP_BODY = line_of("loop.py", "total += square(i)")
LOOP_PRINT = line_of("loop.py", 'print("total:", total)')
TICK_START = line_of("ticker.py", "i = 0")
TICK_BODY = line_of("ticker.py", "square = i * i")

# Trace waits are bounded by the tool's own timeout; a correct trace ends long before it.
TRACE_TIMEOUT_S = 3

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameter (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


async def test_trace_collects_values_without_stopping_and_honours_max_hits(tools: Tools) -> None:
    await tools("debug_launch", program=TICKER, breakpoints=[{"file": TICKER, "line": TICK_START}])
    before = (await tools("debug_breakpoints"))["breakpoints"]
    result = await tools("debug_trace", points=[{"file": TICKER, "line": TICK_BODY}], expressions=["i", "i*i"],
                         max_hits=4, timeout_s=TRACE_TIMEOUT_S)
    assert result["stopped_because"] == "max_hits"
    assert [h["values"] for h in result["hits"]] == [{"i": str(n), "i*i": str(n * n)} for n in range(4)]
    assert all((h["file"], h["line"]) == (TICKER, TICK_BODY) for h in result["hits"])
    assert result["total_hits"] == 4  # max_hits ends the trace exactly: the hits in transit are not counted
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
    output = await tools("debug_output", max_bytes=30_000)
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
    output = await tools("debug_output", max_bytes=30_000)
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
    assert result["note"] == f"ended by breakpoint #2 (loop.py:{LOOP_PRINT})"

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



async def test_a_traced_value_reads_as_it_does_in_a_listing(tools: Tools) -> None:
    """A trace's values use the same formatters as debug_variables (it read <sqlite3.Row object at 0x…>)."""
    rows = program("rows.py")
    await tools("debug_launch", program=rows, stop_on_entry=True)
    result = await tools("debug_trace", points=[{"file": rows, "line": line_of("rows.py", "# read the row")}],
                         expressions=["row", "rows", "row['name']"], timeout_s=TRACE_TIMEOUT_S)
    assert result["hits"][0]["values"] == {
        "row": "Row(id=1, name='pear', price=1.5)", "rows": "[Row(id=1, name='pear', price=1.5), Row(id=2, "
        "name='fig', price=2.25)]", "row['name']": "'pear'"}, result
    await tools("debug_terminate")

async def test_a_node_trace_shows_strings_quoted_and_other_values_as_they_are(tools: Tools) -> None:
    """An empty string read as nothing (`s=`) and a space as `s= ` in a Node trace (its logpoint logged strings as
    console.log does, and an array as its items joined: "0"); as in debug_evaluate, a string reads as one, an array
    as one, and a space is a `where` that holds."""
    require("node")
    hits = program("trace/hits.js")
    await tools("debug_launch", program=hits, args=["4"], stop_on_entry=True)
    result = await tools("debug_trace", points=[{"file": hits, "line": line_of("trace/hits.js", "// loop body")}],
                         expressions=['" ".repeat(i)', "i", "void i", "[i]"], where='" ".repeat(i % 2)',
                         timeout_s=TRACE_TIMEOUT_S)
    assert [h["values"] for h in result["hits"]] == [
        {'" ".repeat(i)': '""', "i": "0", "void i": "undefined", "[i]": "Array(1) [0]"},
        {'" ".repeat(i)': '" "', "i": "1", "void i": "undefined", "[i]": "Array(1) [1]"},
        {'" ".repeat(i)': '"  "', "i": "2", "void i": "undefined", "[i]": "Array(1) [2]"},
        {'" ".repeat(i)': '"   "', "i": "3", "void i": "undefined", "[i]": "Array(1) [3]"}], result
    assert "held at 2 of 4 hits" in str(result["where"]), result
    await tools("debug_terminate")


SLOW_EXIT = program("slow_exit.py")


async def _shutting_down(tools: Tools, run: int, deadline_s: float = 30.0) -> None:
    """Wait until the program's ``run``-th run has printed that its exit is under way (debugpy has let go of it by
    then): the output of every run of the session is kept."""
    for _ in range(int(deadline_s * 20)):
        if (await tools("debug_output", cursor=0, max_bytes=30_000))["text"].count("shutting down") >= run:
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the program never began its exit")


async def test_a_trace_or_breakpoint_sent_as_the_program_ends_reads_as_the_exit(tools: Tools) -> None:
    """debugpy answers a breakpoint sent during the interpreter's exit "Server[1] disconnected unexpectedly" and
    reports the exit after: the answer is the exit (was: "the debugger rejected the breakpoint")."""
    before = line_of("slow_exit.py", "before the loop")
    after = line_of("slow_exit.py", "after the loop")
    await tools("debug_launch", program=SLOW_EXIT, breakpoints=[{"file": SLOW_EXIT, "line": before}])
    await tools("debug_continue", timeout_s=0.1)  # it runs on into its exit
    await _shutting_down(tools, 1)
    result = await tools("debug_trace", points=[{"file": SLOW_EXIT, "line": after}], expressions=["total"])
    assert (result["stopped_because"], result["state"], result["total_hits"]) == ("exited", "exited", 0), result
    assert result["note"] == "the program ended as the trace points were being set", result
    assert result["report"]["exit_code"] == 0

    await tools("debug_restart")
    await tools("debug_continue", timeout_s=0.1)
    await _shutting_down(tools, 2)
    added = await tools.text("debug_break", file=SLOW_EXIT, line=after)
    assert added.split(" ", 1)[1] == (f"slow_exit.py:{after} — pending: the program has exited (code 0) before it "
                                      "was set; debug_restart runs the program again with it, 0 hits"), added
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "exited"
    await tools("debug_terminate")


# -- every debugger that traces -----------------------------------------------------------------------------

TRACE = PROGRAMS / "trace"
LLDB = "lldb-dap-22|lldb-dap|lldb-vscode"
ANSWER_BYTES = 2000  # a trace's answer by default, however many hits


@dataclass(frozen=True)
class Tracing:
    """A debugger tracing tests/programs/trace's program (the same loop in each language)."""

    name: str
    source: str  # relative to tests/programs/trace
    needs: tuple[str, ...]
    adapter: str | None = None
    hits: int = 3000  # the loop's turns: a fast debugger is tried on more

    @property
    def path(self) -> str:
        return str(TRACE / self.source)

    def line(self, marker: str) -> int:
        return line_of(f"trace/{self.source}", marker)


TRACINGS = [
    Tracing("python", "hits.py", (), hits=20_000),
    Tracing("node", "hits.js", ("node",), hits=20_000),
    Tracing("gdb", "hits.c", ("gdb", "gcc"), adapter="gdb"),
    Tracing("lldb-dap", "hits.c", (LLDB, "gcc"), adapter="lldb-dap"),
    Tracing("delve", "go/main.go", ("dlv", "go")),
    Tracing("java", "Hits.java", ("java", "javac")),
]


@pytest.fixture(scope="session")
def _trace_built(build_dir: Path) -> dict[str, str]:
    return {}


def _program(tracing: Tracing, build_dir: Path, built: dict[str, str]) -> str:
    """What debug_launch runs: the source, or the binary built from it once per run."""
    if tracing.source.endswith(".c"):
        if "c" not in built:
            built["c"] = str(build_dir / "trace-hits")
            subprocess.run(["gcc", "-g", "-O0", "-o", built["c"], tracing.path], check=True, capture_output=True,
                           timeout=120)
        return built["c"]
    if tracing.source.endswith(".go"):
        if "go" not in built:
            built["go"] = str(build_dir / "trace-hits-go")
            subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", built["go"], "."], cwd=TRACE / "go",
                           check=True, capture_output=True, timeout=300)
        return built["go"]
    return tracing.path


@pytest.fixture(params=TRACINGS, ids=[t.name for t in TRACINGS])
def tracing(request: pytest.FixtureRequest) -> Tracing:
    chosen: Tracing = request.param
    require(*chosen.needs)
    return chosen


async def launched(tools: Tools, tracing: Tracing, build_dir: Path, built: dict[str, str], turns: int) -> None:
    """The program launched with ``turns`` turns of its loop, stopped before the loop."""
    arguments = {"program": _program(tracing, build_dir, built), "args": [str(turns)],
                 "breakpoints": [{"file": tracing.path, "line": tracing.line("before the loop")}]}
    if tracing.adapter:
        arguments["adapter"] = tracing.adapter
    first = await tools("debug_launch", **arguments)
    assert first["state"] == "stopped", first


async def test_a_trace_counts_every_hit_up_to_the_exit(tools: Tools, tracing: Tracing, build_dir: Path,
                                                       _trace_built: dict[str, str]) -> None:
    await launched(tools, tracing, build_dir, _trace_built, tracing.hits)
    body = tracing.line("total += i")
    answer = await tools.client.call_tool("debug_trace", {
        "points": [{"file": tracing.path, "line": body}], "expressions": ["i"], "max_hits": 1_000_000,
        "timeout_s": 300})
    result = answer.structured_content
    assert result is not None and not answer.is_error, answer
    assert (result["stopped_because"], result["state"], result["total_hits"]) == ("exited", "exited", tracing.hits)
    assert result["hits"][0] == {"file": tracing.path, "line": body, "values": {"i": "0"}}
    assert result["last_hits"][-1]["values"] == {"i": str(tracing.hits - 1)}
    text = "\n".join(block.text for block in answer.content if block.type == "text")
    assert len(text.encode()) <= ANSWER_BYTES, text
    assert f"more rows: debug_output(stream=\"trace\", cursor={result['more_cursor']})" in text, text
    distinct = "10000+" if tracing.hits > 10_000 else str(tracing.hits)  # distinct values are counted to 10,000
    last = tracing.hits - 1
    repeats = "" if tracing.hits > 10_000 else " (each once)"
    assert result["values"] == {"i": f"{tracing.hits} hits, {distinct} distinct{repeats}, 0..{last}, first 0, "
                                     f"last {last}"}
    assert text.splitlines()[1] == f"i: {result['values']['i']}", text  # the summary leads
    rows = await tools("debug_output", stream="trace", cursor=result["more_cursor"], max_bytes=200)
    assert rows["text"].splitlines()[0].endswith(f"  i={len(result['hits'])}"), rows
    # no tracepoint line is the program's output, nor a logpoint's
    output = await tools("debug_output", max_bytes=30_000)
    assert "polydbg" not in output["text"] and "\x1f" not in output["text"], output
    assert output["text"].startswith("total "), output
    await tools("debug_terminate")


async def test_max_hits_ends_a_trace_exactly(tools: Tools, build_dir: Path, _trace_built: dict[str, str]) -> None:
    for tracing in TRACINGS[:2]:
        require(*tracing.needs)
        await launched(tools, tracing, build_dir, _trace_built, 20_000)
        result = await tools("debug_trace", points=[{"file": tracing.path, "line": tracing.line("total += i")}],
                             expressions=["i"], max_hits=100)
        # the program goes on without its points: it may have finished its 20,000 rounds by the answer
        assert (result["stopped_because"], result["total_hits"]) == ("max_hits", 100), result
        assert result["state"] in ("running", "exited"), result
        assert result["last_hits"][-1]["values"] == {"i": "99"}
        if result["state"] == "running":
            end = await tools("debug_continue", timeout_s=60)  # the hits still in transit arrive meanwhile
            assert end["state"] == "exited", end
        output = await tools("debug_output", max_bytes=30_000)
        assert "polydbg" not in output["text"] and output["text"].startswith("total "), output
        assert (await tools("debug_output", stream="logpoints"))["text"] == ""
        await tools("debug_terminate")


async def test_a_point_the_debugger_cannot_bind_is_named_at_once(tools: Tools, build_dir: Path,
                                                                 _trace_built: dict[str, str]) -> None:
    """delve binds no line without a statement (the others move such a point to the next line with code)."""
    tracing = TRACINGS[4]
    require(*tracing.needs)
    await launched(tools, tracing, build_dir, _trace_built, 5)
    comment = tracing.line("a comment in the loop")
    said = await tools.error("debug_trace", points=[{"file": tracing.path, "line": comment}], expressions=["i"],
                             timeout_s=60)
    assert said.startswith(f"no trace point can be bound, so nothing ran: main.go:{comment}: could not find "
                           "statement"), said
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"
    both = await tools("debug_trace", points=[{"file": tracing.path, "line": comment},
                                              {"file": tracing.path, "line": tracing.line("total += i")}],
                       expressions=["i"], timeout_s=60)
    assert both["total_hits"] == 5 and both["stopped_because"] == "exited", both
    assert both["note"].startswith(f"never bound (no hits there): main.go:{comment}: could not find statement")
    await tools("debug_terminate")


async def test_a_point_on_a_line_without_code_binds_to_the_next_line_with_code(
        tools: Tools, tracing: Tracing, build_dir: Path, _trace_built: dict[str, str]) -> None:
    """The same direction on every debugger that moves such a point (delve binds none: see above). debugpy alone
    bound a comment after a loop's last line to that line, and so traced every turn of the loop."""
    if tracing.name == "delve":
        pytest.skip("delve binds no line without a statement")
    await launched(tools, tracing, build_dir, _trace_built, 5)
    comment, after = tracing.line("a comment in the loop"), tracing.line("after the loop")
    result = await tools("debug_trace", points=[{"file": tracing.path, "line": comment}], expressions=["total"],
                         timeout_s=60)
    assert result["note"] == f"bound on another line: {Path(tracing.path).name}:{comment} at line {after}", result
    assert (result["total_hits"], result["hits"][0]["line"]) == (1, after), result
    assert result["hits"][0]["values"]["total"] == "10", result
    await tools("debug_restart")
    said = await tools.text("debug_break", file=tracing.path, line=comment)
    assert f":{comment} (moved to line {after}) — verified" in said, said
    await tools("debug_terminate")
