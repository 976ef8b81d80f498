"""Java and Kotlin tests by name (``debug_launch(test="Class#method")``) on small projects with sources only
(tests/programs/java/junit4, junit5: polydbg compiles them) and one built by kotlinc (tests/programs/kotlin/junit):
JUnit catches every failure, yet the run stops at the failing assertion in the test's frame (or where the code
under test threw) with getMessage()'s expected and actual, and its end is a verdict. JUnit's jars are Debian's
junit4 and junit5 (.ci/run installs them)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require, unavailable

pytestmark = pytest.mark.anyio

JUNIT5 = PROGRAMS / "java" / "junit5"
JUNIT4 = PROGRAMS / "java" / "junit4"
CALC_TEST = "java/junit5/src/test/java/calc/CalcTest.java"
CALC = "java/junit5/src/main/java/calc/Calc.java"
CART_TEST = "java/junit4/src/test/java/shop/CartTest.java"
KOTLIN = PROGRAMS / "kotlin" / "junit"
COMPILER = PROGRAMS / "kotlin" / "node_modules" / "kotlin-compiler"


@pytest.fixture(autouse=True)
def _junit() -> None:
    require("java", "javac")
    for jar in ("junit4.jar", "junit-platform-console-standalone.jar"):
        if not os.path.isfile(f"/usr/share/java/{jar}"):
            unavailable(f"/usr/share/java/{jar} is missing: apt-get install junit4 junit5 (.ci/run does)")


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def test_a_failing_junit5_test_stops_at_its_assertion_with_the_expected_and_actual(tools: Tools) -> None:
    report = await tools("debug_launch", test="CalcTest#meanRounds", cwd=str(JUNIT5))
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"] == {"file": str(PROGRAMS / CALC_TEST), "line": line_of(CALC_TEST, "// mean check"),
                                  "function": "CalcTest.meanRounds"}, report
    assert report["exception"]["type"] == "org.opentest4j.AssertionFailedError", report
    assert report["exception"]["message"] == "the mean of 1 and 2 rounds up ==> expected: <2> but was: <1>", report
    assert values(report)["got"] == "1" and values(report)["values"] == "int[2] {1, 2}", report
    stack = (await tools("debug_stack"))["threads"][0]["frames"]
    above = [f["function"] for f in stack if f["index"] < 0]
    assert "Assertions.assertEquals" in above and stack[len(above)]["function"] == "CalcTest.meanRounds", stack
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1, done
    result = done["test"]
    assert result["outcome"] == "failed" and result["runner"] == "junit5", result
    assert "expected: <2> but was: <1>" in result["summary"] and "1 failed" in result["summary"], result
    await tools("debug_terminate")


async def test_an_exception_of_the_code_under_test_stops_where_it_was_thrown(tools: Tools) -> None:
    report = await tools("debug_launch", test="calc.CalcTest#parsesHex", cwd=str(JUNIT5))
    assert report["location"]["file"] == str(PROGRAMS / CALC), report  # not in Integer.parseInt
    assert report["location"]["line"] == line_of(CALC, "Integer.parseInt"), report
    assert report["exception"] == {"type": "java.lang.NumberFormatException",
                                   "message": 'For input string: "0x1F"'}, report
    assert values(report)["text"] == '"0x1F"', report
    await tools("debug_terminate")


async def test_a_passing_test_and_an_expected_exception_answer_passed(tools: Tools) -> None:
    report = await tools("debug_launch", test="CalcTest#refusesWords", cwd=str(JUNIT5))  # assertThrows: no stop
    assert report["state"] == "exited" and report["exit_code"] == 0, report
    assert report["test"]["outcome"] == "passed" and report["test"]["summary"].startswith("1 successful"), report
    assert "calc.CalcTest#refusesWords" not in (await tools.text("debug_sessions")), "named as given"
    await tools("debug_terminate")


async def test_each_failing_run_of_a_parameterized_test_stops(tools: Tools) -> None:
    report = await tools("debug_launch", test="CalcTest#meanOfOne", cwd=str(JUNIT5))
    assert report["location"]["line"] == line_of(CALC_TEST, '"divisible by three"'), report
    assert values(report)["value"] == "2", report
    again = await tools("debug_continue")
    assert again["reason"] == "exception" and values(again)["value"] == "4", again
    done = await tools("debug_continue")
    assert done["test"]["outcome"] == "failed" and "1 successful, 2 failed" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_a_nested_class_test_by_its_bare_name_and_an_unknown_name(tools: Tools) -> None:
    report = await tools("debug_launch", test="meanOfNothing", cwd=str(JUNIT5))  # in CalcTest.Empty
    assert report["exception"]["type"] == "java.lang.ArithmeticException", report
    assert report["location"]["line"] == line_of(CALC, "sum / values.length"), report
    await tools("debug_terminate")
    unknown = await tools("debug_launch", test="CalcTest#meanRound", cwd=str(JUNIT5))
    assert unknown["state"] == "exited" and unknown["test"]["outcome"] == "not found", unknown
    assert unknown["test"]["closest"][0] == "calc.CalcTest#meanRounds", unknown
    await tools("debug_terminate")


async def test_breakpoints_given_with_a_test_are_honoured_and_a_restart_runs_it_again(tools: Tools) -> None:
    line = line_of(CALC, "sum += value")
    report = await tools("debug_launch", test="CalcTest#meanRounds", cwd=str(JUNIT5),
                         breakpoints=[{"file": str(PROGRAMS / CALC), "line": line}])
    assert report["reason"] == "breakpoint" and report["location"]["line"] == line, report
    again = await tools("debug_restart")
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line, again
    await tools("debug_clear", all=True)
    failed = await tools("debug_continue")
    assert failed["reason"] == "exception", failed
    await tools("debug_terminate")


async def test_junit4_stops_with_comparison_failures_message_from_get_message(tools: Tools) -> None:
    report = await tools("debug_launch", test="CartTest#label", cwd=str(JUNIT4))
    assert report["location"]["line"] == line_of(CART_TEST, "// label check"), report
    assert report["exception"] == {"type": "org.junit.ComparisonFailure",  # the detailMessage field is null
                                   "message": "expected:<3 item[]> but was:<3 item[s]>"}, report
    assert values(report)["shown"] == '"3 items"', report
    done = await tools("debug_continue")
    assert done["test"]["runner"] == "junit4" and done["test"]["outcome"] == "failed", done
    assert done["test"]["summary"].endswith("Tests run: 1,  Failures: 1"), done
    await tools("debug_terminate")
    bulk = await tools("debug_launch", test="shop.CartTest#bulkDiscount", cwd=str(JUNIT4))
    assert bulk["exception"]["message"] == "ten items are discounted expected:<900> but was:<1000>", bulk
    await tools("debug_terminate")


async def test_junit4_expected_exceptions_pass_and_the_code_under_tests_throw_stops(tools: Tools) -> None:
    """A failure inside a finally stops at its re-throw, saying where it was first thrown."""
    for name in ("CartTest#negativeQuantityIsRefused", "CartTest#refusalIsAsserted"):  # @Test(expected), assertThrows
        report = await tools("debug_launch", test=name, cwd=str(JUNIT4))
        assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
        assert report["test"]["summary"] == "OK (1 test)", report
        await tools("debug_terminate")
    cleanup = await tools("debug_launch", test="CartTest#totalAfterCleanup", cwd=str(JUNIT4))
    first = line_of(CART_TEST, "// cleanup check")
    assert cleanup["location"]["line"] == first + 3, cleanup  # the finally's re-throw
    assert cleanup["exception"]["details"] == [
        f"first thrown at CartTest.java:{first} in CartTest.totalAfterCleanup, caught by the program's code there (a "
        "finally, try-with-resources, a catch) and thrown on"], cleanup
    await tools("debug_terminate")
    thrown = await tools("debug_launch", test="CartTest#zeroQuantity", cwd=str(JUNIT4))
    assert thrown["location"]["line"] == line_of("java/junit4/src/main/java/shop/Cart.java", "// the throw"), thrown
    assert thrown["exception"]["message"] == "quantity must be positive, was 0", thrown
    await tools("debug_terminate")


async def test_junit4_parameterized_runs_the_methods_every_run(tools: Tools) -> None:
    report = await tools("debug_launch", test="PricesTest#total", cwd=str(JUNIT4))
    assert report["exception"]["message"] == "expected:<900> but was:<1000>", report
    assert (await tools("debug_evaluate", expression="quantity"))["value"] == "10", report
    done = await tools("debug_continue")
    assert "Tests run: 3,  Failures: 1" in done["test"]["summary"], done
    await tools("debug_terminate")
    unknown = await tools("debug_launch", test="CartTest#labels", cwd=str(JUNIT4))
    assert unknown["test"]["outcome"] == "not found" and unknown["test"]["closest"][0] == "shop.CartTest#label", unknown
    await tools("debug_terminate")


async def test_a_restart_after_an_edit_runs_the_edited_test(tools: Tools, tmp_path: Path) -> None:
    """Sources polydbg compiled are compiled anew at debug_restart: the fixed test passes."""
    project = tmp_path / "junit4"
    shutil.copytree(JUNIT4, project)
    report = await tools("debug_launch", test="CartTest#label", cwd=str(project))
    assert report["reason"] == "exception", report
    test_file = project / "src" / "test" / "java" / "shop" / "CartTest.java"
    test_file.write_text(test_file.read_text().replace('"3 item", shown', '"3 items", shown'))
    again = await tools("debug_restart")
    assert again["state"] == "exited" and again["test"]["outcome"] == "passed", again
    test_file.write_text(test_file.read_text().replace('assertEquals("3 items", shown)', 'assertEquals(3 items)'))
    broken = await tools.error("debug_restart")
    assert "javac could not compile" in broken and "CartTest.java" in broken, broken
    await tools("debug_terminate")


def kotlin_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    """kotlinc of tests/programs/kotlin's node_modules (``npm ci`` there; .ci/run does it), as KOTLIN_HOME."""
    if not (COMPILER / "bin" / "kotlinc").is_file():
        unavailable("tests/programs/kotlin has no node_modules/kotlin-compiler: run npm ci there (.ci/run does)")
    monkeypatch.setenv("KOTLIN_HOME", str(COMPILER))  # kotlin-stdlib.jar beside its kotlinc


async def test_a_kotlin_projects_sources_are_compiled_and_its_test_run_by_name(tools: Tools,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """kotlinc compiles main and test sources together (~15 s, once: kept while they do not change)."""
    kotlin_compiler(monkeypatch)
    project = KOTLIN
    report = await tools("debug_launch", test="TotalsTest#bulkIsDiscounted", cwd=str(project))
    test_file = "kotlin/junit/src/test/kotlin/shop/TotalsTest.kt"
    assert report["location"] == {"file": str(PROGRAMS / test_file), "line": line_of(test_file, "// kotlin check"),
                                  "function": "TotalsTest.bulkIsDiscounted"}, report
    assert report["exception"]["message"] == "ten items are discounted ==> expected: <900> but was: <1000>", report
    assert values(report)["got"] == "1000", report
    await tools("debug_terminate")
