"""A native debugger's finished call as its shim writes it (``kit.nativecalls``), and names as linespecs."""

from __future__ import annotations

import json

from polydbg.backends.kit.nativecalls import linespec, record_of


def test_a_call_line_becomes_a_record_with_its_c_plus_plus_signatures_left_out() -> None:
    line = json.dumps({"n": "Parser::parse(std::string const&)", "a": [["this", "0x1"], ["text", '""']],
                       "x": "std::invalid_argument", "c": "parse_all(Parser&, char const* const*, int) (calls.cpp:24)",
                       "t": "thread 1", "file": "/p/calls.cpp", "line": 14})
    record = record_of(line)
    assert record is not None
    assert (record.function, record.args, record.raised, record.returned, record.caller, record.ended) == (
        "Parser::parse", (("this", "0x1"), ("text", '""')), "std::invalid_argument", None,
        "parse_all (calls.cpp:24)", True)
    unended = record_of(json.dumps({"f": "fib", "a": [["n", "3"]], "began": 1.5}))
    assert unended is not None and not unended.ended and unended.duration_us is None
    assert record_of('{"error": "entry: boom"}') is None and record_of("not json") is None
    rust = record_of(json.dumps({"f": "rusttests::total::hfc9190ddb4bdb5f7", "a": [], "r": "10"}))
    assert rust is not None and rust.function == "rusttests::total"


def test_names_as_linespecs() -> None:
    assert linespec("Parser.parse") == "Parser::parse"
    assert linespec("calls.cpp:fib") == "calls.cpp:fib"
    assert linespec("ns::Parser::parse") == "ns::Parser::parse"
    assert linespec("fib") == "fib"
