"""Python breakpoint conditions and logpoint expressions are checked when set (a log message split as pydevd splits
it); other languages' are left to their debugger."""

from __future__ import annotations

import pytest

from polydbg.errors import UsageError
from polydbg.session.conditions import check


@pytest.mark.parametrize("condition", ["i == 3", "name == 'p2'", "x is not None and len(x) > 2", "(a := 1)"])
def test_python_expressions_pass(condition: str) -> None:
    check("python", condition, None)


@pytest.mark.parametrize(("condition", "says"), [
    ("i = 3", "to compare, write =="),
    ('name = "p2"', "to compare, write =="),
    ("items +* )", "not a Python expression"),
    ("   ", "it is empty"),
    ("import os", "not a Python expression"),
])
def test_python_conditions_that_do_not_parse_are_refused(condition: str, says: str) -> None:
    with pytest.raises(UsageError, match="not a Python expression") as refused:
        check("python", condition, None)
    assert says in str(refused.value)


def test_each_logpoint_interpolation_is_checked() -> None:
    check("python", None, "i={i}, total={sum(items)}")
    with pytest.raises(UsageError, match=r"\{i \+\* 2\} in log_message"):
        check("python", None, "ok {i} broken {i +* 2}")


def test_other_languages_are_left_to_their_debugger() -> None:
    check("c", "l2 = = 9", "{x +* }")
    check("go", "i = 3", None)

@pytest.mark.parametrize("message", [
    "d={ {'a': i} }",  # a dict display
    "s={ {i, 2} } f={f'{i}-{total}'}",  # a set display and an f-string with its own braces
    "squares={[n * n for n in range(3)]} {}",  # an empty {} prints nothing, as in pydevd
    "text only }",  # a lone } is text
])
def test_nested_braces_are_one_expression(message: str) -> None:
    check("python", None, message)


def test_an_expression_with_a_syntax_error_is_refused() -> None:
    with pytest.raises(UsageError, match=r"\{i \+\} in log_message is not a Python expression"):
        check("python", None, "v={i +}")


def test_an_unclosed_brace_is_refused() -> None:
    with pytest.raises(UsageError, match=r"has a \{ that no \} closes"):
        check("python", None, "v={ {'a': i}")
