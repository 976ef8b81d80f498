"""A thrown object of the program's own class, read from the debugger's print of it as its type (kit/cxx.py)."""

from __future__ import annotations

import pytest

from polydbg.backends.kit.cxx import fields_message


@pytest.mark.parametrize(("printed", "message"), [
    ('(AppError) 0x555555571510 = (std::exception = <incomplete type>, msg = "bad config value")',
     (False, "bad config value")),  # its own what() returns this member
    ("(ConfigError) 0x555555571510 = (std::runtime_error = <incomplete type>, code = 7)",
     (True, "")),  # the string is runtime_error's, after the vtable pointer
    ('(Plain) 0x55 = (code = 3, text = 0x00005555555560a4 "plain \\"struct\\"")', (False, 'plain "struct"')),
    ("(Point) 0x55 = (x = 3, y = 4)", (False, "x = 3, y = 4")),  # no string: its fields
    ("(int) 0x555555571510 = 42", (False, "42")),
])
def test_what_a_thrown_object_says(printed: str, message: tuple[bool, str]) -> None:
    assert fields_message(printed) == message
