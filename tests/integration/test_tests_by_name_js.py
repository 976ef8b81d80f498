"""JavaScript and TypeScript tests by name (``debug_launch(test=…)``) on one small project per runner
(tests/programs/node/runners: node:test, jest, vitest with a TypeScript file, mocha with an ES module and chai):
the run stops at the failing assertion in the test's frame with expected and actual, or where the code under test
throws; a test that passes (throws caught on purpose in it) answers passed; an unknown name the closest names."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

pytestmark = pytest.mark.anyio

RUNNERS = PROGRAMS / "node" / "runners"
CART = "node/runners/cart.js"


@pytest.fixture(autouse=True)
def _node() -> None:
    require("node")


def project(runner: str) -> str:
    """A runner's project; its runners are in tests/programs/node/runners/node_modules (npm ci, as .ci/run does)."""
    if runner != "nodetest" and not (RUNNERS / "node_modules" / runner).is_dir():
        reason = "tests/programs/node/runners has no node_modules: run npm ci there (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return str(RUNNERS / runner)


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


def at_assertion(report: dict[str, Any], test_file: Path, marker: str) -> None:
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["file"].endswith(test_file.name), report
    assert report["location"]["line"] == line_of(str(test_file.relative_to(PROGRAMS)), marker), report
    assert {"expected: 54", "actual: 53"} <= set(report["exception"].get("details") or []), report
    assert values(report)["got"] == "53" and values(report)["expected"] == "54", report


async def test_node_test_stops_at_the_failing_assertion_in_a_describe_block(tools: Tools) -> None:
    cwd = project("nodetest")
    report = await tools("debug_launch", test="test/cart.test.js::cart > totals > takes the discount", cwd=cwd)
    at_assertion(report, RUNNERS / "nodetest/test/cart.test.js", "// discount check")
    assert "53 !== 54" in report["exception"]["message"], report  # node:assert's whole message
    assert report["exception"]["type"] == "AssertionError", report
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["test"]["outcome"] == "failed", done
    assert done["test"]["runner"] == "node:test" and "fail 1" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_node_test_stops_where_the_code_under_test_throws_and_after_an_await(tools: Tools) -> None:
    cwd = project("nodetest")
    report = await tools("debug_launch", test="test/cart.test.js::cart > parses an item", cwd=cwd)
    assert report["reason"] == "exception" and report["exception"]["type"] == "TypeError", report
    assert report["location"]["file"].endswith("cart.js"), report
    assert report["location"]["line"] == line_of(CART, "throws when price is missing"), report
    await tools("debug_terminate")
    awaited = await tools("debug_launch", test="test/cart.test.js::waits for the total", cwd=cwd)
    assert awaited["location"]["line"] == line_of("node/runners/nodetest/test/cart.test.js", "// async check"), awaited
    await tools("debug_terminate")


async def test_a_passing_test_that_catches_throws_answers_passed_and_an_unknown_one_the_closest(tools: Tools) -> None:
    """assert.throws and a try/catch in the test throw and catch on purpose: no stop."""
    cwd = project("nodetest")
    report = await tools("debug_launch", test="test/cart.test.js::expects a refusal", cwd=cwd)
    assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
    assert "pass 1" in report["test"]["summary"], report
    await tools("debug_terminate")
    unknown = await tools("debug_launch", test="test/cart.test.js::adds the price", cwd=cwd)
    assert unknown["test"]["outcome"] == "not found", unknown
    assert unknown["test"]["closest"][0] == "test/cart.test.js::cart > totals > adds the prices", unknown
    await tools("debug_terminate")
    # a name without its file: the project's test files are listed for it, and it runs from the one that holds it
    bare = await tools("debug_launch", test="totals adds the prices", cwd=cwd)
    assert bare["test"]["outcome"] == "passed" and "pass 1" in bare["test"]["summary"], bare
    await tools("debug_terminate")
    refused = await tools.error("debug_launch", test="takes the discont", cwd=cwd)
    assert "no test named 'takes the discont'" in refused, refused
    assert "closest: test/cart.test.js::cart > totals > takes the discount" in refused, refused


async def test_breakpoints_given_with_a_test_are_honoured_and_restart_runs_it_again(tools: Tools) -> None:
    cwd = project("nodetest")
    line = line_of(CART, "the bug: one too many")
    report = await tools("debug_launch", test="test/cart.test.js::cart > totals > takes the discount", cwd=cwd,
                         breakpoints=[{"file": str(RUNNERS / "cart.js"), "line": line}])
    assert report["reason"] == "breakpoint" and report["location"]["line"] == line, report
    stopped = await tools("debug_continue")
    at_assertion(stopped, RUNNERS / "nodetest/test/cart.test.js", "// discount check")
    again = await tools("debug_restart")
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line, again
    await tools("debug_terminate")


async def test_jest_stops_once_at_the_failing_expect_also_in_each_and_passes_rejects(tools: Tools) -> None:
    """jest's expect throws its error again from its own catch: the failure is shown once."""
    cwd = project("jest")
    report = await tools("debug_launch", test="test/cart.test.js::cart > totals > takes the discount", cwd=cwd)
    at_assertion(report, RUNNERS / "jest/test/cart.test.js", "// discount check")
    assert report["exception"]["type"] == "JestAssertionError", report
    stack = await tools.text("debug_stack", levels=2)  # expect's frames are listed above the test's, not selectable
    assert "(above #0) throwingMatcher at " in stack and "node_modules/expect/" in stack, stack
    assert stack.index("throwingMatcher") < stack.index("#0 (anonymous) at test/cart.test.js:14"), stack
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["test"]["outcome"] == "failed", done
    assert done["test"]["summary"].startswith("1 failed"), done
    await tools("debug_terminate")
    each = await tools("debug_launch", test="test/cart.test.js::cart > sums [2,2] to 5", cwd=cwd)
    assert each["location"]["line"] == line_of("node/runners/jest/test/cart.test.js", "// each check"), each
    assert values(each)["sum"] == "5", each
    await tools("debug_terminate")
    passing = await tools("debug_launch", test="test/cart.test.js::expects a refusal", cwd=cwd)
    assert passing["state"] == "exited" and passing["test"]["outcome"] == "passed", passing
    await tools("debug_terminate")


@pytest.mark.parametrize(("runner", "test", "summary"), [
    # a TypeScript file, run in vitest's worker thread
    ("vitest", "test/cart.test.ts::cart > totals > takes the discount", "1 failed | 3 skipped (4)"),
    # an ES module asserting with chai, named as mocha's -g joins names
    ("mocha", "test/cart.test.mjs::cart totals takes the discount", "0 passing, 1 failing")])
async def test_vitest_and_mocha_stop_at_the_failing_assertion(tools: Tools, runner: str, test: str,
                                                               summary: str) -> None:
    report = await tools("debug_launch", test=test, cwd=project(runner))
    at_assertion(report, RUNNERS / runner / test.split("::")[0], "// discount check")
    done = await tools("debug_continue")
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == runner, done
    assert done["test"]["summary"] == summary, done
    await tools("debug_terminate")
    passing = await tools("debug_launch", test=f"{test.split('::')[0]}::expects a refusal", cwd=project(runner))
    assert passing["test"]["outcome"] == "passed", passing
    await tools("debug_terminate")


async def test_pausing_on_the_exceptions_a_test_catches_is_bounded(tools: Tools) -> None:
    """300 exceptions thrown and caught in the user's code: past 200 pauses, caught exceptions no longer pause, and
    the console says so."""
    report = await tools("debug_launch", test="test/cart.test.js::tries many texts", cwd=project("nodetest"))
    assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
    console = await tools.text("debug_output", stream="console")
    assert "threw 200 exceptions that failed no test; caught exceptions no longer pause" in console, console
    await tools("debug_terminate")


async def test_a_test_quiet_for_seconds_before_it_fails_is_waited_for(tools: Tools) -> None:
    """A program that printed and went quiet for 3 s is answered as running (a server waiting); a test run ends, so
    its launch waits for the stop (vitest transforming a large project prints nothing for seconds)."""
    report = await tools("debug_launch", test="test/cart.test.js::waits for a slow total", cwd=project("nodetest"))
    assert report["state"] == "stopped", report
    assert report["location"]["line"] == line_of("node/runners/nodetest/test/cart.test.js", "// slow check"), report
    await tools("debug_terminate")


async def test_a_throw_that_reaches_the_runner_through_a_library_stops_where_it_was_thrown(tools: Tools) -> None:
    """The comparator a test gives jsdiff throws inside diff's loop: no frame between it and the runner catches it
    (a library's try/catch would: chai's expect(fn).to.throw in the passing test does)."""
    report = await tools("debug_launch", test="test/cart.test.mjs::compares through a library", cwd=project("mocha"))
    assert report["reason"] == "exception" and report["exception"]["type"] == "TypeError", report
    line = line_of("node/runners/mocha/test/cart.test.mjs", "// compared in diff's loop")
    assert report["location"]["line"] == line and report["location"]["function"] == "comparator", report
    assert values(report) == {"left": "20", "right": "null"}, report
    await tools("debug_terminate")


async def test_a_vitest_run_that_ends_in_an_error_is_summed_up_by_the_errors_line(tools: Tools) -> None:
    """The test file imports a module that is not there: vitest runs no test, and the verdict says why (its summary
    was vitest's timings, the last lines it printed)."""
    project("vitest")
    cwd = str(RUNNERS / "vitest-broken")
    report = await tools("debug_launch", test="test/imports.test.ts::adds the prices", cwd=cwd)
    assert report["state"] == "exited" and report["test"]["outcome"] == "error", report
    assert report["test"]["summary"].startswith("Error: Cannot find module '../src/missing.js' imported from "), report
    await tools("debug_terminate")


@pytest.mark.parametrize(("runner", "test", "marker"), [
    ("mocha", "test/cart.test.mjs::cart totals takes the discount", "// discount check"),
    ("nodetest", "test/cart.test.js::waits for the total", "// async check")])  # past an await: the runner awaits it
async def test_the_raised_log_calls_a_failing_tests_assertion_uncaught(tools: Tools, runner: str, test: str,
                                                                     marker: str) -> None:
    """The runner's catch fails the test, so the raised log says "uncaught" as Python's does, not "caught in
    Runnable.run"; a library that expects the throw (node:assert's throws, in a passing test) still catches it."""
    report = await tools("debug_launch", test=test, cwd=project(runner), trace=["raised"])
    line = line_of(f"node/runners/{runner}/{test.split('::')[0]}", marker)
    rows = report["trace"]["raised_rows"]
    assert len(rows) == 1 and rows[0].endswith(f"{test.split('::')[0]}:{line} in (anonymous) → uncaught"), rows
    await tools("debug_terminate")
    passing = await tools("debug_launch", test="test/cart.test.js::expects a refusal", cwd=project("nodetest"),
                          trace=["raised"])
    assert [row.rsplit(" → ", 1)[1].rsplit(" (", 1)[0] for row in passing["trace"]["raised_rows"]] == [
        "caught in getActual", "caught in (anonymous)"], passing["trace"]
    await tools("debug_terminate")


async def test_an_assertion_library_of_any_name_stops_at_the_failing_check_and_its_own_throws_do_not(
        tools: Tools) -> None:
    """cartcheck, an assertion library in the project's node_modules (as assume is): its failure, a plain object made
    from Error.prototype, was thrown in blackboxed code and never paused (the run exited with code 1); the throws it
    catches itself (feature probes as it loads, showing a cycle) neither stop the run nor are the user's raised."""
    project("mocha")
    cwd = str(RUNNERS / "mocha-own")
    report = await tools("debug_launch", test="test/cart.test.js::cart > takes the discount", cwd=cwd,
                         trace=["raised"])
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["line"] == line_of("node/runners/mocha-own/test/cart.test.js", "// discount check")
    assert report["exception"]["message"] == "expected 53 to equal 54", report
    assert values(report)["got"] == "53", report
    rows = report["trace"]["raised_rows"]
    line = line_of("node/runners/mocha-own/test/cart.test.js", "// discount check")
    assert rows == [f"Error: expected 53 to equal 54 at test/cart.test.js:{line} in (anonymous) → uncaught"], rows
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["test"]["outcome"] == "failed", done
    await tools("debug_terminate")
    passing = await tools("debug_launch", test="test/cart.test.js::cart > adds the prices", cwd=cwd, trace=["raised"])
    assert passing["state"] == "exited" and passing["test"]["outcome"] == "passed", passing
    assert not passing["trace"].get("raised_rows"), passing["trace"]
    await tools("debug_terminate")
    # nor do they stop where their type is asked for: the probes' ReferenceError is thrown in a new Function's
    # script, which no blackbox hides, and caught in cartcheck's frame
    entry = await tools("debug_launch", test="test/cart.test.js::cart > adds the prices", cwd=cwd, stop_on_entry=True)
    assert entry["reason"] == "entry", entry
    await tools("debug_break", exception=["ReferenceError"])
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["test"]["outcome"] == "passed", done
    await tools("debug_terminate")


async def test_an_imported_packages_own_throws_pause_a_bounded_number_of_times(tools: Tools) -> None:
    """cartcheck throws and catches showing each of 120 carts: past 100 such pauses the imported packages are hidden
    again (each costs a pause), the console says so, and the failing check after them is not stopped at."""
    project("mocha")
    report = await tools("debug_launch", test="test/cart.test.js::cart > checks many carts",
                         cwd=str(RUNNERS / "mocha-own"))
    assert report["state"] == "exited" and report["test"]["outcome"] == "failed", report
    console = await tools.text("debug_output", stream="console")
    assert "the packages the tests import threw 100 exceptions that failed no test" in console, console
    await tools("debug_terminate")
