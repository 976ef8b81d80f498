"""Memory and registers under gdb (native.py): the pure parts. No gdb runs."""

from __future__ import annotations

from polydbg.backends.gdb.native import contiguous, general_registers

INFO_REGISTERS = """rax            0x1c                28
rbx            0x7fffffffe0e8      140737488347368
rip            0x401136            0x401136 <add+4>
eflags         0x246               [ IF ZF PF ]
k0             0x0                 0
k7             0x0                 0
"""


def test_memory_is_read_up_to_the_first_gap() -> None:
    blocks = [{"begin": "0x1004", "offset": "0x0", "contents": "0506"},
              {"begin": "0x1000", "offset": "0x0", "contents": "01020304"},
              {"begin": "0x1010", "offset": "0x0", "contents": "ff"}, "junk"]
    assert contiguous(blocks, 0x1000) == bytes([1, 2, 3, 4, 5, 6])
    assert contiguous(blocks, 0x0fff) == b""  # the first byte is unreadable
    assert contiguous([{"begin": "0x1000", "offset": "0x2", "contents": "0304"}], 0x1002) == b"\x03\x04"


def test_general_registers_are_those_info_registers_lists_less_the_avx512_masks() -> None:
    names = ["rax", "rbx", "rcx", "", "rip", "eflags", "k0", "k7"]
    numbers, by_number = general_registers(names, INFO_REGISTERS)
    assert numbers == [0, 1, 4, 5]
    assert by_number[4] == "rip" and by_number[2] == "rcx" and 3 not in by_number
