"""A thrown object of the program's own class, read from the debugger's print of it as its type (kit/cxx.py)."""

from __future__ import annotations

import pytest

from polydbg.backends.kit.cxx import fields_message, whatis_type


@pytest.mark.parametrize(("printed", "message"), [
    ('(AppError) 0x555555571510 = (std::exception = <incomplete type>, msg = "bad config value")',
     (False, "bad config value")),  # its own what() returns this member
    ("(ConfigError) 0x555555571510 = (std::runtime_error = <incomplete type>, code = 7)",
     (True, "")),  # the string is runtime_error's, after the vtable pointer
    ('(Plain) 0x55 = (code = 3, text = 0x00005555555560a4 "plain \\"struct\\"")', (False, 'plain "struct"')),
    ("(Point) 0x55 = (x = 3, y = 4)", (False, "x = 3, y = 4")),  # no string: its fields
    ("(int) 0x555555571510 = 42", (False, "42")),
    ("(ParseError) 0x55 = (AppError = (std::runtime_error = <incomplete type>, code = 3))",
     (True, "")),  # derived from runtime_error through a class of the program's
])
def test_what_a_thrown_object_says(printed: str, message: tuple[bool, str]) -> None:
    assert fields_message(printed) == message


@pytest.mark.parametrize(("printed", "message"), [  # gdb prints $_exception, a base class in angle brackets
    ('{<std::exception> = {<No data fields>}, msg = "no price for kiwi"}', (False, "no price for kiwi")),
    ("{<std::runtime_error> = {<No data fields>}, code = 7}", (True, "")),
    ("{<std::exception> = {<No data fields>}, code = 7}", (False, "code = 7")),
    ("{code = 7}", (False, "code = 7")),
    ("{<AppError> = {<std::runtime_error> = {<No data fields>}, code = 3}, <No data fields>}", (True, "")),
    ("42", (False, "42")),
])
def test_what_a_thrown_object_says_as_gdb_prints_it(printed: str, message: tuple[bool, str]) -> None:
    assert fields_message(printed) == message


def test_the_type_gdbs_whatis_names_is_the_dynamic_one() -> None:
    assert whatis_type("type = /* real type = ConfigError */\nstd::exception\n") == "ConfigError"
    assert whatis_type("type = Plain\n") == "Plain"
    assert whatis_type("") is None
