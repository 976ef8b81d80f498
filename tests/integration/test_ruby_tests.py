"""Ruby tests by name (``debug_launch(test=…)``) on a small project (tests/programs/rubytests) with minitest,
test-unit and RSpec tests: the run stops at the failing assertion in the test's own frame (the framework's frames
listed above it) with the assertion's message, and its end is a verdict."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

pytestmark = pytest.mark.anyio

PROJECT = str(PROGRAMS / "rubytests")


@pytest.fixture(autouse=True)
def _ruby() -> None:
    require("ruby", "rspec")


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def test_a_failing_minitest_test_stops_at_its_assertion_in_its_own_frame(tools: Tools) -> None:
    report = await tools("debug_launch", test="test/test_prices.rb::TestPrices#test_bulk_discount", cwd=PROJECT)
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["file"].endswith("test/test_prices.rb"), report
    assert report["location"]["line"] == line_of("rubytests/test/test_prices.rb", "# minitest bulk check"), report
    assert report["exception"]["type"] == "Minitest::Assertion", report
    assert report["exception"]["message"] == "Expected: 9\n  Actual: 10", report
    assert values(report)["got"] == "10" and values(report)["quantity"] == "10", report
    stack = await tools.text("debug_stack")
    assert "(above #0) Minitest::Assertions#assert_equal" in stack, stack  # the machinery, listed above the test
    assert (await tools("debug_evaluate", expression="got * 2"))["value"] == "20"
    assert (await tools("debug_evaluate", expression="$exception.class"))["value"] == "Minitest::Assertion"
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1, done
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == "minitest", done
    assert "Expected: 9 Actual: 10" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_a_test_unit_failure_stops_once_though_it_is_raised_again(tools: Tools) -> None:
    report = await tools("debug_launch", test="TestLabels#test_shouted", cwd=PROJECT)
    assert "test/test_labels.rb::TestLabels#test_shouted" in await tools.text("debug_sessions")  # its full name
    assert report["location"]["line"] == line_of("rubytests/test/test_labels.rb", "# test-unit check"), report
    assert report["exception"]["type"] == "Test::Unit::AssertionFailedError", report
    assert '<"PLUM"> expected but was\n<"Plum">' in report["exception"]["message"], report
    assert values(report)["label"] == '"Plum"', report
    done = await tools("debug_continue")  # test-unit's _wrap_assertion raises the same error again: no stop
    assert done["state"] == "exited" and done["test"]["outcome"] == "failed", done
    assert done["test"]["runner"] == "test-unit", done
    await tools("debug_terminate")


@pytest.mark.parametrize("test", ["spec/prices_spec.rb:11", "Prices.total takes a tenth off ten items"])
async def test_an_rspec_example_by_its_line_or_description_stops_at_its_expectation(tools: Tools, test: str) -> None:
    report = await tools("debug_launch", test=test, cwd=PROJECT)
    assert report["reason"] == "exception", report
    assert report["location"]["line"] == line_of("rubytests/spec/prices_spec.rb", "# rspec bulk check"), report
    assert report["exception"]["type"] == "RSpec::Expectations::ExpectationNotMetError", report
    assert report["exception"]["message"].startswith("expected: 18\n     got: 20"), report
    assert values(report)["got"] == "20", report
    done = await tools("debug_continue")
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == "rspec", done
    assert "1 example, 1 failure" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_passing_skipped_and_expected_raises_answer_passed(tools: Tools) -> None:
    for test in ("test/test_prices.rb::test_single_item", "test/test_prices.rb::test_blank_label_is_refused",
                 "TestPrices#test_not_yet", "spec/prices_spec.rb::charges one item"):
        report = await tools("debug_launch", test=test, cwd=PROJECT)
        assert report["state"] == "exited" and report["exit_code"] == 0, report
        assert report["test"]["outcome"] == "passed" and report["test"]["seconds"] > 0, report
        assert "1 runs," in report["test"]["summary"] or "1 example," in report["test"]["summary"], report
        await tools("debug_terminate")


async def test_an_unknown_test_answers_with_the_closest_names(tools: Tools) -> None:
    report = await tools("debug_launch", test="test/test_prices.rb::test_singel_item", cwd=PROJECT)
    assert report["test"]["outcome"] == "not found", report
    assert report["test"]["closest"][0] == "test/test_prices.rb::TestPrices#test_single_item", report
    await tools("debug_terminate")
    refused = await tools.error("debug_launch", test="test_shoutd", cwd=PROJECT)
    assert "no test named 'test_shoutd'" in refused and "test/test_labels.rb::TestLabels#test_shouted" in refused


async def test_breakpoints_are_honoured_and_a_restart_runs_the_test_again(tools: Tools) -> None:
    line = line_of("rubytests/lib/prices.rb", "# subtotal line")
    report = await tools("debug_launch", test="test/test_prices.rb::TestPrices#test_bulk_discount", cwd=PROJECT,
                         breakpoints=[{"file": "lib/prices.rb", "line": line}])
    assert report["reason"] == "breakpoint" and report["location"]["line"] == line, report
    assert values(report)["quantity"] == "10", report
    assert (await tools("debug_continue"))["reason"] == "exception"
    again = await tools("debug_restart")
    assert again["reason"] == "breakpoint" and again["location"]["line"] == line, again
    await tools("debug_terminate")
