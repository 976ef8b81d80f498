"""What a Go step out of (or over the return of) a function returned, on delve (``delve/returns.py``), through the
MCP tools: one result, several as a tuple (named or not), a recursion's own call, a panic a deferred recover caught."""

from __future__ import annotations

from typing import Any

from tests.conftest import PROGRAMS, Tools, line_of, require

SOURCE = "calls/chain.go"
PROGRAM = str(PROGRAMS / SOURCE)


async def stopped_at(tools: Tools, marker: str) -> dict[str, Any]:
    require("dlv", "go")
    report = await tools("debug_launch", program=PROGRAM, breakpoints=[{"file": PROGRAM,
                                                                         "line": line_of(SOURCE, marker)}])
    assert report["reason"] == "breakpoint", report
    await tools("debug_clear", all=True)
    return report


async def test_a_step_out_reports_what_the_function_returned_and_a_recursion_its_own_call(tools: Tools) -> None:
    await stopped_at(tools, "// clamp")
    out = await tools("debug_step", kind="out")
    assert out["location"]["function"] == "main.weigh" and out["returned"] == ["main.clamp() returned 9"], out
    assert [v["name"] for v in out["locals"]] == ["word"], out  # listed apart from the caller's locals
    over = await tools("debug_step", kind="over")  # a line that returns, its call already made
    assert over["location"]["function"] == "main.total" and over["returned"] == ["main.weigh() returned 18"], over
    inside = await tools("debug_step", kind="over")  # a line that does not leave the function: nothing returned
    assert inside["location"]["function"] == "main.total" and "returned" not in inside, inside
    await tools("debug_terminate")
    await stopped_at(tools, "// bottom")
    first = await tools("debug_step", kind="out")  # depth(0) returns to depth(1), not past the other calls' RETs
    assert first["returned"] == ["main.depth() returned 0"] and first["locals"][0]["value"] == "1", first
    second = await tools("debug_step", kind="out")
    assert second["returned"] == ["main.depth() returned 1"] and second["locals"][0]["value"] == "2", second
    await tools("debug_terminate")


async def test_several_results_read_as_a_tuple_and_a_panic_as_raised(tools: Tools) -> None:
    await stopped_at(tools, "// split")
    over = await tools("debug_step", kind="over")
    assert over["location"]["function"] == "main.main", over
    assert over["returned"] == ['main.split() returned ("a", "b", error nil)'], over
    await tools("debug_terminate")
    await stopped_at(tools, "// measure")
    assert "returned" not in await tools("debug_step", kind="over")  # onto its bare return
    named = await tools("debug_step", kind="over")
    assert named["location"]["function"] == "main.main" and named["returned"] == ["main.measure() returned (4, 2)"]
    await tools("debug_terminate")
    await stopped_at(tools, "// panics")
    out = await tools("debug_step", kind="out")  # delve stops in the deferred function that recovers it
    assert out["location"]["function"] == "main.safe.func1", out
    assert out["returned"] == ['main.mustPositive() raised panic: "negative: -3"'], out
    await tools("debug_terminate")


async def test_a_step_out_shows_every_result_of_a_wide_tuple(tools: Tools) -> None:
    """(Version, error): the struct filled the 80 characters of a stop report's value, and the error was cut off."""
    require("dlv", "go")
    wide = str(PROGRAMS / "calls" / "wide.go")
    parsed = line_of("calls/wide.go", "// parsed")
    await tools("debug_launch", program=wide, breakpoints=[{"file": wide, "line": parsed}])
    out = await tools("debug_step", kind="out")
    [returned] = out["returned"]
    assert returned.startswith("main.parse() returned (main.Version {Major: 1, Minor: 2, Patch: 3") \
        and returned.endswith(", error nil)"), returned
    await tools("debug_terminate")
