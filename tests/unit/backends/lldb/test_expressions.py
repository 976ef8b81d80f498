"""lldb-dap's evaluation errors cut to the error, and Rust field paths dereferenced as their types need
(expressions.py): pure, and the step-by-step evaluation on a scripted evaluator."""

from __future__ import annotations

import pytest

from polydbg.backends.base import Variable
from polydbg.backends.lldb import expressions
from polydbg.errors import AdapterRequestError

_KEY_TYPE = ("const std::map<std::basic_string<char, std::char_traits<char>, std::allocator<char>>, "
             "std::vector<int, std::allocator<int>>, std::less<std::basic_string<char, std::char_traits<char>, "
             "std::allocator<char>>>>::key_type")
NO_MATCHING_AT = f"""Ran expression as 'C++14'.
error: <user expression 0>:1:7: no matching member function for call to 'at'
    1 | table.at(5)
      | ~~~~~~^~
note: candidate function not viable: no known conversion from 'int' to '{_KEY_TYPE}' (aka 'const std::basic_string<char>') for 1st argument
note: candidate function not viable: no known conversion from 'int' to '{_KEY_TYPE}' (aka 'const std::basic_string<char>') for 1st argument
"""  # noqa: E501


def test_clangs_diagnostics_are_cut_to_the_error_and_its_first_note() -> None:
    short = expressions.short_error(NO_MATCHING_AT)
    assert short == ("no matching member function for call to 'at'; note: candidate function not viable: no known "
                     "conversion from 'int' to 'const std::map<…>::key_type' (aka 'const std::basic_string<char>') "
                     "for 1st argument (1 more note)")
    assert len(NO_MATCHING_AT) > 3 * len(short)


def test_lldbs_fallback_to_cpp_for_rust_is_said_in_a_word() -> None:
    text = ("Expression evaluation in Rust not supported. Falling back to default language. Ran expression as "
            "'Objective C++'.\nerror: <user expression 7>:1:1: use of undeclared identifier 'nosuch'\n")
    assert expressions.short_error(text) == ("use of undeclared identifier 'nosuch' (lldb has no Rust parser: it "
                                             "read this as C++)")
    assert expressions.short_error("no value\n") == "no value"  # not clang's: as it is


@pytest.mark.parametrize(("expression", "parts"), [
    ("node.next", ["node", "next"]), ("self.pair.0", ["self", "pair", "0"]), (" a . b ", ["a", "b"]),
    ("node", None), ("node.next.is_some()", None), ("v[1].x", None), ("(*node).next", None),
])
def test_a_rust_field_path(expression: str, parts: list[str] | None) -> None:
    assert expressions.rust_path(expression) == parts


async def test_a_rust_field_path_is_dereferenced_as_each_type_needs() -> None:
    types = {"node": "rustdemo::Node **", "(**node).next": "Option<Box<rustdemo::Node>>",
             "self": "app::Pair *", "(*self).__0": "i32"}
    asked: list[str] = []

    async def evaluate(text: str) -> Variable:
        asked.append(text)
        if text not in types:
            raise AdapterRequestError("evaluate", f"error: <user expression 1>:1:1: no member named in '{text}'")
        return Variable(text, "v", types[text])

    assert (await expressions.rust_field_path(["node", "next"], evaluate))[0] == "(**node).next"
    assert (await expressions.rust_field_path(["self", "0"], evaluate))[0] == "(*self).__0"
    with pytest.raises(AdapterRequestError, match=r"no member named .* \(evaluated as \(\*\*node\)\.nope, each"):
        await expressions.rust_field_path(["node", "nope"], evaluate)
    assert asked[:2] == ["node", "(**node).next"]


def test_a_call_runs_with_polydbgs_deadline_not_the_apis_half_second() -> None:
    assert expressions.call_command("slow_call(1)", 10.0) == (
        "expression --timeout 10000000 --ignore-breakpoints true --unwind-on-error true -- slow_call(1)")


def test_the_result_of_a_call_is_its_persistent_variable() -> None:
    assert expressions.command_result("(unsigned int) $0 = 0\n", 1.0, 10.0) == "$0"
    assert expressions.command_result("(int (*)(int)) $12 = 0x0000555555555149 (calls`f at calls.c:3)\n", 0.1,
                                      10.0) == "$12"
    assert expressions.command_result("", 0.1, 10.0) is None  # a void call


INTERRUPTED = ("error: Expression execution was interrupted: breakpoint 1.1.\n"
               "The process has been returned to the state before expression evaluation.\n")


def test_a_call_lldb_interrupted_at_the_deadline_is_said_so_not_blamed_on_a_breakpoint() -> None:
    with pytest.raises(AdapterRequestError) as raised:
        expressions.command_result(INTERRUPTED, 10.1, 10.0)
    assert raised.value.message.startswith("the call did not return within 10 s (polydbg's evaluation deadline), "
                                           "so lldb interrupted it; the program is back as it was before")
    assert "breakpoint" not in raised.value.message
    with pytest.raises(AdapterRequestError) as early:  # before the deadline: interrupted by something else
        expressions.command_result(INTERRUPTED, 0.2, 10.0)
    assert "breakpoint 1.1" in early.value.message
    with pytest.raises(AdapterRequestError) as failed:
        expressions.command_result("note: Expression evaluation in pure C not supported. Ran expression as 'ISO "
                                   "C++'.\nerror: <user expression 1>:1:1: use of undeclared identifier 'x'\n", 0.1,
                                   10.0)
    assert expressions.short_error(failed.value.message) == "use of undeclared identifier 'x'"
