"""What a call returned, as backends list it among the caller's locals and the report reads it."""

from __future__ import annotations

from polydbg.backends.kit.returns import bare, outcome, returned_by, returned_name


def test_a_listed_return_value_reads_as_the_calls_outcome() -> None:
    assert returned_by(returned_name("add")) == "add() returned"
    assert returned_by(returned_name("parse", raised=True)) == "parse() raised"
    assert returned_by("total") is None and returned_by("(returned)") is None


def test_a_native_frames_parameter_list_is_left_out_of_the_name() -> None:
    assert bare("factorial(int)") == "factorial"
    assert bare("Shape::area(std::pair<int, int>) const") == "Shape::area"
    assert bare("std::function<void (int)>::operator()(int) const") == "std::function<void (int)>::operator()"
    assert bare("main.add") == "main.add" and bare("(anonymous namespace)::f()") == "(anonymous namespace)::f"
    assert outcome(None) == "the call returned" and outcome("Main.run()", raised=True) == "Main.run() raised"
