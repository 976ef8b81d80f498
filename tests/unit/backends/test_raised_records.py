"""The lines the debuggee's and the native debuggers' scripts write for the log of raised exceptions, read back."""

from __future__ import annotations

import json

from polydbg.backends.debugpy import python
from polydbg.backends.kit import cxx
from polydbg.backends.recording import RaisedRecord


def test_python_options_carry_filters_types_and_the_log_together() -> None:
    options = python.exception_options(["uncaught", "userUnhandled"], ["ParseError"], recording=True)
    assert [o["breakMode"] for o in options] == ["unhandled", "userUnhandled", "always", "always"]
    assert options[2]["path"][1] == {"names": ["ParseError"]}
    assert options[3]["path"][1] == {"names": [python.RAISED]}
    assert python.exception_options(["raised"], []) == [{"path": [{"names": ["Python Exceptions"]}],
                                                          "breakMode": "always"}]


def test_a_python_record_is_read_from_its_marked_line_only() -> None:
    record = RaisedRecord("ParseError", "bad", "/p/x.py", 3, "parse", "MainThread", "lenient (x.py:9)")
    row = record._asdict()
    assert python.raised_record(python.RAISED_MARK + json.dumps(row)) == record
    assert python.raised_record(json.dumps(row)) is None  # the program's own line
    assert python.raised_record(python.RAISED_MARK + "{broken") is None


def test_a_cpp_record_tells_the_message_as_an_exception_stop_does() -> None:
    derived = {"type": "ParseError", "printed": "(ParseError) 0x55 = (AppError = (std::runtime_error = <incomplete "
               "type>, code = 3))", "string": "not a number: x1", "file": "t.cpp", "line": 18, "function": "parse",
               "thread": 1}
    assert cxx.raised_record(json.dumps(derived)) == RaisedRecord(
        "ParseError", "not a number: x1", "t.cpp", 18, "parse", "1", None)
    standard = {"mangled": "St12out_of_range", "string": "no such index", "thread": 1, "caught": "main (t.cpp:34)"}
    record = cxx.raised_record(json.dumps(standard))
    assert record is not None and (record.type, record.message, record.caught) == (
        "std::out_of_range", "no such index", "main (t.cpp:34)")
    own = {"type": "Plain", "printed": "(Plain) 0x55 = (code = 7)", "thread": 1}
    assert cxx.raised_record(json.dumps(own)) == RaisedRecord("Plain", "code = 7", None, None, None, "1", None)
