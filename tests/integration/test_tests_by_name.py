"""Python tests by name (``debug_launch(test=…)``) and test runners launched by hand, on a small project with its
own pytest configuration (tests/programs/pytests): the run stops at the failing assertion in the test's frame,
and its end is a verdict."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of

pytestmark = pytest.mark.anyio

PROJECT = PROGRAMS / "pytests"
TESTS = "pytests/tests/test_prices.py"


def names(report: dict[str, Any]) -> set[str]:
    return {v["name"] for v in report.get("locals") or []}


async def test_a_failing_pytest_test_stops_at_its_assertion_with_its_locals(tools: Tools) -> None:
    report = await tools("debug_launch", test="tests/test_prices.py::TestBulk::test_bulk_discount[10]",
                         cwd=str(PROJECT))
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["file"].endswith("tests/test_prices.py"), report
    assert report["location"]["line"] == line_of(TESTS, "# bulk check"), report
    assert report["location"]["function"] == "test_bulk_discount", report  # pydevd's "(Current frame)" left out
    assert "assert 10.0 == 9.0" in report["exception"]["message"], report
    values = {v["name"]: v["value"] for v in report["locals"]}
    assert values["got"] == "10.0" and values["expected"] == "9.0" and values["quantity"] == "10", values
    assert not [n for n in names(report) if n.startswith("@py_")], report  # pytest's rewriting temporaries
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1, done
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == "pytest", done
    assert "test_bulk_discount[10]" in done["test"]["summary"], done
    await tools("debug_terminate")


async def test_a_passing_test_answers_passed_with_the_runners_summary(tools: Tools) -> None:
    report = await tools("debug_launch", test="tests/test_prices.py::test_single_item", cwd=str(PROJECT))
    assert report["state"] == "exited" and report["exit_code"] == 0, report
    result = report["test"]
    assert result["outcome"] == "passed" and result["summary"].startswith("1 passed"), result
    assert result["seconds"] > 0, result
    text = await tools.text("debug_sessions")
    assert "tests/test_prices.py::test_single_item" in text, text  # the session is named by its test
    await tools("debug_terminate")


async def test_an_exception_a_with_block_expects_is_no_stop(tools: Tools) -> None:
    """pydevd's user-unhandled stop took pytest.raises' caught exception for a failure (Python 3.11's return
    event looks the same either way): the test stopped at its end although it passes."""
    report = await tools("debug_launch", test="tests/test_prices.py::test_empty_price_is_refused", cwd=str(PROJECT))
    assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
    await tools("debug_terminate")


async def test_a_runner_launched_by_hand_stops_where_the_users_code_fails(tools: Tools) -> None:
    """Not "exited with code 1": the default exception setting stops where an exception leaves the user's code
    into the runner's."""
    report = await tools("debug_launch", module="pytest", cwd=str(PROJECT),
                         args=["-q", "tests/test_prices.py::TestBulk::test_bulk_discount"])
    assert report["state"] == "stopped" and report["location"]["line"] == line_of(TESTS, "# bulk check"), report
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1 and "test" not in done, done
    await tools("debug_terminate")


async def test_an_unknown_test_answers_with_the_closest_names(tools: Tools) -> None:
    report = await tools("debug_launch", test="tests/test_prices.py::test_single_itme", cwd=str(PROJECT))
    assert report["state"] == "exited" and report["test"]["outcome"] == "not found", report
    assert report["test"]["closest"][0] == "tests/test_prices.py::test_single_item", report
    await tools("debug_terminate")
    refused = await tools.error("debug_launch", test="test_single", cwd=str(PROJECT))
    assert "no test named 'test_single'" in refused and "tests/test_prices.py::test_single_item" in refused, refused


async def test_a_unittest_id_and_a_bare_test_name_are_run_too(tools: Tools) -> None:
    report = await tools("debug_launch", test="tests.test_prices.PricesCase.test_bulk_again", cwd=str(PROJECT))
    assert report["state"] == "stopped" and report["location"]["line"] == line_of(TESTS, "# unittest check"), report
    assert "20.0 != 18.0" in report["exception"]["message"], report
    done = await tools("debug_continue")
    assert done["test"]["outcome"] == "failed" and done["test"]["runner"] == "unittest", done
    await tools("debug_terminate")
    bare = await tools("debug_launch", test="test_single_item", cwd=str(PROJECT))
    assert bare["test"]["name"] == "tests/test_prices.py::test_single_item", bare
    assert bare["test"]["outcome"] == "passed", bare
    await tools("debug_terminate")


async def test_breakpoints_set_with_a_test_are_honoured(tools: Tools) -> None:
    line = line_of("pytests/prices.py", "subtotal = sum")
    report = await tools("debug_launch", test="tests/test_prices.py::TestBulk::test_bulk_discount[10]",
                         cwd=str(PROJECT), breakpoints=[{"file": "prices.py", "line": line}])
    assert report["reason"] == "breakpoint" and report["location"]["line"] == line, report
    assert {v["name"]: v["value"] for v in report["locals"]}["quantity"] == "10", report
    stopped = await tools("debug_continue")
    assert stopped["reason"] == "exception", stopped
    await tools("debug_terminate")


async def test_a_bare_assert_in_a_helper_stops_there_without_a_made_up_message(tools: Tools) -> None:
    """pytest rewrites asserts in test modules only: one in a helper raises an AssertionError with no message,
    which pydevd called "exception: no description"."""
    text = await tools.text("debug_launch", test="tests/test_prices.py::test_total_through_a_helper",
                            cwd=str(PROJECT))
    assert f"at tests/helpers.py:{line_of('pytests/tests/helpers.py', '# helper check')} in same" in text, text
    assert "\nexception: AssertionError\n" in text and "no description" not in text, text
    stack = await tools("debug_stack")
    assert [f["function"] for f in stack["threads"][0]["frames"][:2]] == ["same", "test_total_through_a_helper"]
    await tools("debug_terminate")


@pytest.mark.parametrize("test", ["tests.test_prices.PricesCase.test_refuses_blank",
                                  "tests/test_prices.py::test_refused_through_the_callable_form"])
async def test_an_exception_the_runners_callable_form_expects_is_no_stop(tools: Tools, test: str) -> None:
    """assertRaises(E, func) and pytest.raises(E, func) call the user's function and catch E in the library: the
    exception leaves the user's code into the library, which pydevd's user-unhandled setting took for a failure."""
    report = await tools("debug_launch", test=test, cwd=str(PROJECT))
    assert report["state"] == "exited" and report["test"]["outcome"] == "passed", report
    await tools("debug_terminate")


async def test_dollar_exception_is_the_failing_assertion_at_a_tests_stop(tools: Tools) -> None:
    """A test's failure is pydevd's user-unhandled stop (the exception leaving the test into pytest), where pydevd
    put no ``__exception__`` in the frame: ``$exception`` answered that debugpy was not stopped at an exception."""
    report = await tools("debug_launch", test="tests/test_prices.py::TestBulk::test_bulk_discount[10]",
                         cwd=str(PROJECT))
    assert report["reason"] == "exception", report
    value = await tools("debug_evaluate", expression="$exception")
    assert value["type"] == "AssertionError" and "assert 10.0 == 9.0" in value["value"], value
    named = await tools("debug_evaluate", expression="type($exception).__name__")
    assert named["value"] == "'AssertionError'", named
    await tools("debug_terminate")


async def test_an_exception_type_set_during_a_test_run_keeps_its_failure_stop(tools: Tools) -> None:
    """debug_break(exception=[a type]) replaced the filters, the run's user-unhandled one with them: the failing
    assertion then ran past with no stop (found on humanize's suite)."""
    report = await tools("debug_launch", test="tests/test_prices.py::TestBulk::test_bulk_discount[10]",
                         cwd=str(PROJECT), stop_on_entry=True)
    assert report["state"] == "stopped", report
    listed = await tools("debug_break", exception=["KeyError"])
    assert "KeyError" in listed["exception_filters"] and "userUnhandled" in listed["exception_filters"], listed
    report = await tools("debug_continue")
    assert report["state"] == "stopped" and report["location"]["line"] == line_of(TESTS, "# bulk check"), report
    await tools("debug_terminate")


async def test_a_step_out_of_the_failing_test_ends_the_run_with_its_verdict(tools: Tools) -> None:
    """The runner's code past the test is not the user's: the step came back in the launch shim's frame, which
    stacks leave out, and answered "stopped (step)" with no frame ("frame 0 does not exist"), every step again."""
    report = await tools("debug_launch", test="tests/test_prices.py::TestBulk::test_bulk_discount[10]",
                         cwd=str(PROJECT))
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    done = await tools("debug_step", kind="out")
    assert done["state"] == "exited" and done["exit_code"] == 1, done
    assert done["test"]["outcome"] == "failed", done
    await tools("debug_terminate")


async def test_the_raised_log_names_the_catching_frame_by_its_path_in_the_project(tools: Tools) -> None:
    """Like the raising line, the handler is named by its path relative to the project, not its file's name alone:
    in a project with two ``__init__.py`` (cachetools: the package's and its tests') the handler read
    ``(__init__.py:200)`` beside ``at src/cachetools/__init__.py:379``."""
    report = await tools("debug_launch", test="tests/test_prices.py::test_empty_price_is_refused", cwd=str(PROJECT),
                         trace=["raised"])
    assert report["test"]["outcome"] == "passed", report
    handler = line_of(TESTS, "caught by pytest.raises")
    assert report["trace"]["raised_rows"][-1].endswith(
        f"→ caught in test_empty_price_is_refused (tests/test_prices.py:{handler}), if its with block's __exit__ "
        "swallows it"), report
    await tools("debug_terminate")
