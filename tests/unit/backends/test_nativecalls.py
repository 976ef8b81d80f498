"""A native debugger's finished call as its shim writes it (``kit.nativecalls``), and names as linespecs."""

from __future__ import annotations

import json

from polydbg.backends.kit.nativecalls import callee_notes, linespec, record_of


def test_a_call_line_becomes_a_record_with_its_c_plus_plus_signatures_left_out() -> None:
    line = json.dumps({"n": "Parser::parse(std::string const&)", "a": [["this", "0x1"], ["text", '""']],
                       "x": "std::invalid_argument", "c": "parse_all(Parser&, char const* const*, int) (calls.cpp:24)",
                       "t": "thread 1", "file": "/p/calls.cpp", "line": 14})
    record = record_of(line, [])
    assert record is not None
    assert (record.function, record.args, record.raised, record.returned, record.caller, record.ended) == (
        "Parser::parse", (("this", "0x1"), ("text", '""')), "std::invalid_argument", None,
        "parse_all (calls.cpp:24)", True)
    unended = record_of(json.dumps({"f": "fib", "a": [["n", "3"]], "began": 1.5}), [])
    assert unended is not None and not unended.ended and unended.duration_us is None
    assert record_of('{"error": "entry: boom"}', []) is None and record_of("not json", []) is None
    rust = record_of(json.dumps({"f": "rusttests::total::hfc9190ddb4bdb5f7", "a": [], "r": "10"}), [])
    assert rust is not None and rust.function == "rusttests::total"


def test_a_callee_line_has_its_level_and_a_template_its_arguments_kept() -> None:
    callee = record_of(json.dumps({"n": "twice<int>(int)", "a": [["x", "2"]], "r": "4", "depth": 2}), [])
    assert callee is not None and (callee.function, callee.depth) == ("twice<int>", 2)
    named = record_of(json.dumps({"f": "fib", "a": [], "r": "1"}), [])
    assert named is not None and named.depth == 0


def test_functions_calling_through_pointers_are_named_once_in_a_note() -> None:
    pointers: list[str] = []
    for name in ("apply", "stock(Inventory&)", "apply"):
        assert record_of(json.dumps({"pointers": name}), pointers) is None
    assert callee_notes(pointers) == ["calls through pointers (virtual calls, callbacks) in apply, stock are followed "
                                      "only to functions traced otherwise: name their targets"]
    many = callee_notes([f"f{i}" for i in range(7)])[0]
    assert "in f0, f1, f2, f3, f4 and 2 more are" in many, many
    assert callee_notes([]) == []


def test_functions_inlined_into_followed_ones_are_named_in_their_own_note() -> None:
    told: list[str] = []
    assert record_of(json.dumps({"inlined": ["weight", "twice<int>(int)"]}), told) is None
    assert record_of(json.dumps({"pointers": "apply"}), told) is None
    assert callee_notes(told) == [
        "calls through pointers (virtual calls, callbacks) in apply are followed only to functions traced "
        "otherwise: name their targets",
        "twice<int>, weight inlined by the compiler into the functions followed: no calls to record (build without "
        "optimisation, -O0, to see them)"]


def test_names_as_linespecs() -> None:
    assert linespec("Parser.parse") == "Parser::parse"
    assert linespec("calls.cpp:fib") == "calls.cpp:fib"
    assert linespec("ns::Parser::parse") == "ns::Parser::parse"
    assert linespec("fib") == "fib"
