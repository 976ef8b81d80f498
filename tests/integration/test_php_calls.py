"""PHP call traces, raised exceptions and return values through the MCP tools on real php + Xdebug: a launch
recording a whole run (recursion, a method, a throwing function whose exception a caller swallows), a trace begun
at a breakpoint with callees to depth and names that match nothing, a PHPUnit test traced by name, and a step
out's return value."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.recorded_calls import launched_with_trace
from tests.integration.test_php import _php  # noqa: F401  (the fixture: php with Xdebug, or skipped)

CALLS = str(PROGRAMS / "php" / "calls.php")
PHPUNIT = PROGRAMS / "php" / "phpunit"


def at(marker: str) -> dict[str, Any]:
    return {"file": CALLS, "line": line_of("php/calls.php", marker)}


def plain(rows: list[str]) -> list[str]:
    """Rows without their durations and thread (the script's name)."""
    return [re.sub(r"( \[calls\.php\])?(  [\d.]+ m?s)?$", "", row) for row in rows]


async def test_a_launch_records_recursion_a_method_and_an_exception_a_caller_swallowed(tools: Tools) -> None:
    trace, rows = await launched_with_trace(tools, ["fact", "Shop\\Pricing->total", "parse_qty", "raised"],
                                            program=CALLS)
    assert trace["calls"] == 9 and trace["raised"] == 1, trace
    summary = "\n".join(trace["summary"])
    assert "Shop\\fact: 5 calls" in summary and "Shop\\parse_qty: 3 calls" in summary, summary
    rows = plain(rows)
    start = line_of("php/calls.php", "// start")
    assert f"Shop\\fact(n=5) → 120  ← {{main}} (calls.php:{start})" in rows, rows
    assert "Shop\\fact(n=1) → 1  ← Shop\\fact (calls.php:25)" in rows, rows
    assert any(row.startswith("Shop\\parse_qty(text='x') → raised InvalidArgumentException: not a quantity: x")
               for row in rows), rows
    assert any(row.startswith("Shop\\Pricing->total(prices=[0 => 10, 1 => 20], rate=0.1) → 33") for row in rows)
    swallowed = line_of("php/calls.php", "swallowed here")
    assert any(f"InvalidArgumentException: not a quantity: x at calls.php:{line_of('php/calls.php', 'throws')} in "
               f"Shop\\parse_qty → caught in Shop\\quantities (calls.php:{swallowed})" in row for row in rows), rows


async def test_a_trace_from_a_breakpoint_follows_callees_and_names_the_closest_to_a_slip(tools: Tools) -> None:
    report = await tools("debug_launch", program=CALLS, breakpoints=[at("// start")])
    assert report["reason"] == "breakpoint", report
    result = await tools("debug_trace", functions=["quantities", "Pricing.total", "fac", "doubled"], depth=1)
    assert result["stopped_because"] == "exited", result
    calls = result["calls"]
    assert "fac was never called (closest names called: Shop\\fact" in calls["note"], calls
    rows = plain((await tools("debug_output", stream="trace", max_bytes=30_000))["text"].splitlines())[1:]
    assert rows[1:4] == ["  Shop\\parse_qty(text='3') → 3",
                         "  Shop\\parse_qty(text='x') → raised InvalidArgumentException: not a quantity: x",
                         "  Shop\\parse_qty(text='7') → 7"], rows
    assert "  Shop\\Pricing->taxed(price=20, rate=0.1) → 22" in rows, rows
    assert rows[-3:] == ["Shop\\doubled(xs=[0 => 1, 1 => 2]) → [0 => 2, 1 => 4]  ← {main} (calls.php:52)",
                         "  Shop\\twice(x=1) → 2", "  Shop\\twice(x=2) → 4"], rows  # array_map is no level
    assert not any("fact" in row for row in rows), rows
    await tools("debug_terminate")


async def test_a_step_out_reports_what_the_call_returned(tools: Tools) -> None:
    taxed = line_of("php/calls.php", "return round(")
    report = await tools("debug_launch", program=CALLS, breakpoints=[{"file": CALLS, "line": taxed}])
    assert report["location"]["line"] == taxed, report
    out = await tools("debug_step", kind="out")
    assert out["returned"] == ["Shop\\Pricing->taxed() returned 11"], out
    assert out["location"]["function"] == "Shop\\Pricing->total", out
    over = await tools("debug_step", kind="over")
    assert not over.get("returned"), over
    await tools("debug_terminate")


async def test_a_phpunit_test_traced_by_name(tools: Tools) -> None:
    require("phpunit")
    report = await tools("debug_launch", test="CartTest::testEmptyCartIsFree", cwd=str(PHPUNIT),
                         trace=["Shop\\Cart->total"])
    assert report["test"]["outcome"] == "passed", report
    trace = report["trace"]
    assert trace["calls"] == 1 and "Shop\\Cart->total: 1 call" in "\n".join(trace["summary"]), trace
    await tools("debug_terminate")
    failing = await tools("debug_launch", test="CartTest::testTotalCountsQuantities", cwd=str(PHPUNIT),
                          trace=["Cart->total", "Cart.add", "raised"])
    assert failing["reason"] == "exception", failing  # the assertion's stop, with what was recorded up to it
    trace = failing["trace"]
    summary = "\n".join(trace["summary"])
    assert trace["calls"] == 3 and "Shop\\Cart->total: 1 call; returned 13 ×1" in summary, summary
    # the comparator's own exception, caught inside PHPUnit, is not the user's: only the assertion's
    assert trace["raised"] == 1 and "raised PHPUnit\\Framework\\ExpectationFailedException ×1" in summary, summary
    await tools("debug_terminate")


async def test_a_method_a_loaded_class_lacks_is_refused_with_the_closest(tools: Tools) -> None:
    await tools("debug_launch", program=CALLS, breakpoints=[at("echo ")])
    error = await tools.error("debug_trace", functions=["Pricing->taxd", "Shop\\Pricing::total"])
    assert error.startswith("Shop\\Pricing has no method taxd; the closest: taxed"), error
    await tools("debug_terminate")


async def test_a_trace_ended_at_a_stop_leaves_no_throw_breakpoint_behind(tools: Tools) -> None:
    await tools("debug_launch", program=CALLS, breakpoints=[at("// start"), at("$q = quantities")])
    result = await tools("debug_trace", functions=["fact"])
    assert result["stopped_because"] == "stopped" and result["calls"]["calls"] == 5, result
    assert result["report"]["location"]["line"] == line_of("php/calls.php", "$q = quantities")
    done = await tools("debug_continue")  # parse_qty's throw (caught) no longer stops
    assert done["state"] == "exited", done
    await tools("debug_terminate")


async def test_a_trace_from_a_breakpoint_names_the_arguments_after_many_included_files(tools: Tools,
                                                                                          tmp_path: Path) -> None:
    """A PHPUnit run has included 200 files by its first stop: their list, one DBGp eval, came cut at Xdebug's
    max_data (4 KB), its JSON did not parse, and every argument of a trace begun there was named #1, #2."""
    for index in range(120):
        (tmp_path / f"a_rather_long_included_file_name_for_the_list_{index:03}.php").write_text("<?php\n")
    (tmp_path / "lib.php").write_text("<?php\nfunction half(int $number): int { return intdiv($number, 2); }\n")
    script = tmp_path / "many.php"
    script.write_text("<?php\nforeach (glob(__DIR__ . '/a_rather_long_*.php') as $f) { require_once $f; }\n"
                      "require_once __DIR__ . '/lib.php';\n"
                      "$x = 1; // start\necho half(10), \"\\n\";\n")
    await tools("debug_launch", program=str(script), breakpoints=[{"file": str(script), "line": 4}])
    result = await tools("debug_trace", functions=["half"])
    assert [row.split("  ←")[0] for row in result["calls"]["rows"]] == ["half(number=10) → 5"], result["calls"]
