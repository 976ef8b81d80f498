"""C++ type names as a reader writes them: libstdc++'s default template arguments dropped and
``std::basic_string<char, …>`` read as ``std::string`` — for value types (gdb) and function
signatures in reports (lldb-dap prints ``pick(std::vector<std::map<std::__cxx11::basic_string<char,
std::char_traits<char>, …`` in full)."""

from __future__ import annotations

import re

_STRING_TYPES = re.compile(r"std::(?:__cxx11::)?basic_string<char, std::char_traits<char>, std::allocator<char> ?>")
_DEFAULT_ARGS = (", std::allocator<", ", std::less<", ", std::hash<", ", std::equal_to<", ", std::char_traits<",
                 ", std::default_delete<")


def short_type(type_: str) -> str:
    """A C++ type without libstdc++'s default template arguments: ``std::map<std::string, int>``."""
    if "std::" not in type_:
        return type_
    text = _STRING_TYPES.sub("std::string", type_)
    for marker in _DEFAULT_ARGS:
        while (at := text.find(marker)) >= 0:
            depth, end = 0, at + len(marker) - 1
            for end in range(at + len(marker) - 1, len(text)):
                depth += {"<": 1, ">": -1}.get(text[end], 0)
                if depth == 0:
                    break
            text = text[:at] + text[end + 1:]
    return re.sub(r" +>", ">", text)
