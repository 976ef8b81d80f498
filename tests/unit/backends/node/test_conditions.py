"""The condition V8 evaluates for a condition and a logpoint."""

from __future__ import annotations

from polydbg.backends.node.conditions import NODE_CONSOLE, interpolated, logged_line, pieces, v8_condition

_LOG = NODE_CONSOLE + '.context("polydbg-log").log'
_GUARD = "(() => {{ try {{ return ({0}\n); }} catch (e) {{ return '<error: ' + (e && e.message) + '>'; }} }})()"


def test_a_condition_alone_is_passed_as_it_is() -> None:
    assert v8_condition("i > 2", None) == "i > 2"
    assert v8_condition("", None) is None
    assert v8_condition(None, None) is None


def test_a_logpoint_logs_each_expression_guarded_and_never_stops() -> None:
    text = v8_condition(None, "i={i} sum={a + b}")
    assert text == f'({_LOG}("i=%s sum=%s", {_GUARD.format("i")}, {_GUARD.format("a + b")}), false)'


def test_a_conditional_logpoint_logs_only_when_the_condition_holds() -> None:
    assert v8_condition("i % 2", "odd") == f'(i % 2\n) && ({_LOG}("odd"), false)'


def test_a_percent_in_the_message_is_not_a_format() -> None:
    assert v8_condition(None, "100% of {n}") == f'({_LOG}("100%% of %s", {_GUARD.format("n")}), false)'


def test_the_expressions_of_a_message() -> None:
    assert interpolated("a {x} b {y.z} {}") == ["x", "y.z"]


def test_an_expression_holds_braces_of_its_own_and_ends_at_the_brace_that_balances_it() -> None:
    assert interpolated("{`${i}-${total}`} and {{i, total}}") == ["`${i}-${total}`", "{i, total}"]
    assert interpolated('{"}" + a} {a /* } */ + b} {`}${"`"}`}') == ['"}" + a', "a /* } */ + b", '`}${"`"}`']
    # a brace no brace closes is text: the message's, as it was
    assert pieces("set { here {x}") == ["set { here ", "x"]
    assert interpolated("{`a} {'b}") == []


def test_a_comment_in_an_expression_ends_with_it() -> None:
    assert v8_condition("i > 2 // big", "{i // the index}") == (
        f'(i > 2 // big\n) && ({_LOG}("%s", {_GUARD.format("i // the index")}), false)')


def test_a_logpoints_line_is_read_back_from_its_console_call_as_console_log_would_print_it() -> None:
    def string(text: str) -> dict[str, str]:
        return {"type": "string", "value": text}
    args = [string("100%% of %s is %s; %s"), string("n"), {"type": "number", "value": 3, "description": "3"},
            {"type": "object", "className": "Object", "description": "Object",
             "preview": {"type": "object", "overflow": False, "properties": [
                 {"name": "a", "type": "number", "value": "1"}]}}]
    assert logged_line({"type": "log", "context": "polydbg-log#3", "args": args}) == "100% of n is 3; {a: 1}"
    # the program's own console.log, or another console context, is not a logpoint
    assert logged_line({"type": "log", "args": [string("hello")]}) is None
    assert logged_line({"type": "log", "context": "app#1", "args": [string("hello")]}) is None
