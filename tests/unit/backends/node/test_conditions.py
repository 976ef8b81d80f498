"""The condition V8 evaluates for a condition and a logpoint."""

from __future__ import annotations

from polydbg.backends.node.conditions import interpolated, v8_condition

_GUARD = "(() => {{ try {{ return ({0}); }} catch (e) {{ return '<error: ' + (e && e.message) + '>'; }} }})()"


def test_a_condition_alone_is_passed_as_it_is() -> None:
    assert v8_condition("i > 2", None) == "i > 2"
    assert v8_condition("", None) is None
    assert v8_condition(None, None) is None


def test_a_logpoint_logs_each_expression_guarded_and_never_stops() -> None:
    text = v8_condition(None, "i={i} sum={a + b}")
    assert text == f'(console.log("i=%s sum=%s", {_GUARD.format("i")}, {_GUARD.format("a + b")}), false)'


def test_a_conditional_logpoint_logs_only_when_the_condition_holds() -> None:
    assert v8_condition("i % 2", "odd") == '(i % 2) && (console.log("odd"), false)'


def test_a_percent_in_the_message_is_not_a_format() -> None:
    assert v8_condition(None, "100% of {n}") == f'(console.log("100%% of %s", {_GUARD.format("n")}), false)'


def test_the_expressions_of_a_message() -> None:
    assert interpolated("a {x} b {y.z} {}") == ["x", "y.z"]
