"""The pure parts of a Go step's return value (delve/returns.py): the RETs of the function around a PC in delve's
disassembly, the lines a step over leaves the function from, a function's declaration line, several results."""

from __future__ import annotations

from pathlib import Path

from polydbg.backends.base import Variable
from polydbg.backends.delve import returns


def _listing(*texts: str) -> list[dict[str, str]]:
    return [{"address": hex(0x100 + index), "instruction": text} for index, text in enumerate(texts)]


def test_the_rets_around_the_pc_are_its_function_s_own() -> None:
    listing = _listing("RET", "CALL $runtime.morestack_noctxt(SB)", "JMP $main.prev(SB)",  # the function before
                       "MOVQ AX, BX", "RET", "CALL $main.clamp(SB)", "RET", "CALL $runtime.morestack_noctxt(SB)",
                       "JMP $main.f(SB)", "INT $0x3", "RET")
    assert returns.bounds(listing, 0x105) == [0x104, 0x106]
    assert returns.bounds(_listing("INT $0x3", "RET", "NOPL", "RET"), 0x102) == [0x101, 0x103]
    assert returns.bounds(listing, 0x999) == []  # the PC not in the listing: nothing armed


def test_a_step_over_leaves_the_function_from_a_return_or_a_panic(tmp_path: Path) -> None:
    source = tmp_path / "x.go"
    source.write_text("func f(n int) (r int) {\n\tx := n\n\treturn x // r\n\tpanic(\"no\")\n\treturned := 1\n}\n"
                      "func g(x int) int { return x * x }\n")
    assert [returns.returns_here(str(source), line) for line in range(1, 8)] == [
        False, False, True, True, False, False, True]
    assert not returns.returns_here(str(tmp_path / "gone.go"), 1) and not returns.returns_here(str(source), 99)


def test_the_declaration_a_line_is_in(tmp_path: Path) -> None:
    source = tmp_path / "x.go"
    source.write_text("package main\n\nfunc f() (n int) {\n\tg := func(x int) int {\n\t\treturn x\n\t}\n"
                      "\treturn g(1)\n}\n")
    assert returns.function_start(str(source), 5) == 4 and returns.function_start(str(source), 3) == 3
    assert returns.function_start(str(source), 7) == 3  # after the literal's body: f's own line
    assert returns.function_start(str(source), 1) is None and returns.function_start(str(source), 99) is None


def test_one_result_as_it_is_several_as_a_tuple() -> None:
    one = Variable("~r0", "9", "int")
    assert returns.shown([one]) == one and returns.shown([]) is None
    assert returns.shown([Variable("~r0", '"a"'), Variable("~r1", "error nil")]) == Variable("", '("a", error nil)')
