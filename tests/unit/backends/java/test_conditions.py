"""Conditions and logpoints that cannot be evaluated are refused when set, in words that say why."""

from __future__ import annotations

import pytest

from polydbg.backends.java.checks import check
from polydbg.backends.java.checks import problem as expression_problem
from polydbg.backends.java.conditions import reason
from polydbg.errors import AdapterRequestError, AdapterTimeoutError, UsageError


def test_evaluable_expressions_pass() -> None:
    assert expression_problem("i > 2 && name.equals(\"x\")", "i={i}, sum={a + b}") is None
    assert expression_problem(None, None) is None
    assert expression_problem(None, "no braces") is None


def test_a_condition_or_an_interpolation_that_does_not_parse_is_named() -> None:
    problem = expression_problem("i >", None)
    assert problem is not None and problem.startswith("condition 'i >' is not evaluable Java (")
    assert problem.endswith("); the breakpoint was not set")
    problem = expression_problem(None, "value {a +}")
    assert problem is not None and problem.startswith("{a +} in log_message 'a +' is not evaluable Java")


def test_the_sessions_check_raises_the_same_words() -> None:
    check("i > 2", "i={i}")
    with pytest.raises(UsageError, match=r"^condition 'i >' is not evaluable Java \(.*\); the breakpoint was not set$"):
        check("i >", None)


def test_a_failure_reads_as_its_message() -> None:
    assert reason(AdapterRequestError("evaluate", "no such field")) == "no such field"
    assert reason(AdapterTimeoutError("took too long")) == "took too long"
