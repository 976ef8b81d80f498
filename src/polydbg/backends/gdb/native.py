"""Native operations under gdb: memory, disassembly, registers and raw gdb commands.

- Memory: ``-data-read-memory-bytes`` answers in blocks, leaving out what cannot be read; the bytes up
  to the first gap are returned and the rest counted as unreadable. Writes are
  ``-data-write-memory-bytes``.
- Disassembly backwards from an address (a negative offset) starts at the enclosing function's start
  when gdb knows it within 1 KiB, so the instruction boundaries are sure (x86's are not, read from an
  arbitrary address); ``-data-disassemble`` mode 4 gives the source line of each instruction.
- Registers are the ones ``info registers`` prints (gdb's "general" group), less the AVX-512 mask
  registers k0–k7; which numbers those are is read once per session, their values in hex at each call.
- A raw command runs through ``-interpreter-exec console`` in the selected frame; its console output
  (or, failing that, its log output) is the answer. It may call a function in the program (``call f()``), so
  it is bounded as an evaluation is (``calls``).
"""

from __future__ import annotations

import re
from typing import Any

from polydbg.backends.base import FrameRef, Instruction, MemoryBlock, Variable
from polydbg.backends.gdb.calls import Calls
from polydbg.backends.gdb.commands import REGISTER_LINE, flatten_disassembly
from polydbg.backends.gdb.frames import Frames
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.values import to_int
from polydbg.errors import UsageError
from polydbg.mi.client import mi_quote

FUNCTION_START_REACH = 1024  # how far back a function's start is trusted as the disassembly's start
MAX_INSTRUCTION = 16  # bytes of the longest x86 instruction: the range asked covers count of them


class Native:
    def __init__(self, gdb: GdbState, frames: Frames, calls: Calls) -> None:
        self._gdb = gdb
        self._frames = frames
        self._calls = calls
        self._general: list[int] | None = None  # numbers of the general registers, once read
        self._names: dict[int, str] = {}

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        result = await self._gdb.cmd(f"-data-read-memory-bytes {address:#x} {count}")
        data = contiguous(result.payload.get("memory") or [], address)
        return MemoryBlock(address=address, data=data[:count], unreadable=max(0, count - len(data)))

    async def write_memory(self, address: int, data: bytes) -> int:
        await self._gdb.cmd(f"-data-write-memory-bytes {address:#x} {data.hex()}")
        return len(data)

    async def disassemble(self, address: int, count: int, offset: int) -> list[Instruction]:
        start = address
        if offset < 0:
            probe = await self._gdb.cmd(f"-data-disassemble -s {address:#x} -e {address + 1:#x} -- 0")
            insns = probe.payload.get("asm_insns") or []
            first = insns[0] if insns and isinstance(insns[0], dict) else {}
            into = to_int(first.get("offset"), -1)
            if first.get("func-name") and 0 <= into <= FUNCTION_START_REACH:
                start = address - into  # from the function's start: instruction boundaries are sure
        end = address + (count + max(0, offset)) * MAX_INSTRUCTION + MAX_INSTRUCTION
        result = await self._gdb.cmd(f"-data-disassemble -s {start:#x} -e {end:#x} -- 4")
        instructions = flatten_disassembly(result.payload.get("asm_insns") or [])
        index = next((i for i, ins in enumerate(instructions) if ins.address >= address), len(instructions))
        lo = max(0, index + offset)
        return instructions[lo:lo + count]

    async def registers(self, frame: FrameRef) -> list[Variable]:
        where = await self._frames.where(frame)
        if self._general is None:
            names, general = await self._gdb.cmds(["-data-list-register-names",
                                                   f"-interpreter-exec {where}console \"info registers\""])
            self._general, self._names = general_registers(names.payload.get("register-names") or [],
                                                           general.console)
        numbers = " ".join(str(n) for n in self._general)
        result = await self._gdb.cmd(f"-data-list-register-values {where}--skip-unavailable x {numbers}")
        out = []
        for item in result.payload.get("register-values") or []:
            if isinstance(item, dict):
                name = self._names.get(to_int(item.get("number"), -1), str(item.get("number")))
                out.append(Variable(name=name, value=str(item.get("value", "")), type=None))
        return out

    async def command(self, text: str, frame: FrameRef | None) -> str:
        if not text.strip():
            raise UsageError("the command is empty; send a gdb command as you would type it at gdb's prompt, "
                             "e.g. 'bt', 'info locals', 'info registers', 'x/8xb &x' ('help' lists them)")
        result = await self._calls.run(f"-interpreter-exec {await self._frames.where(frame)}console {mi_quote(text)}",
                                       frame.thread_id if frame is not None else None, raw=True)
        return result.console or result.log


def contiguous(blocks: list[Any], address: int) -> bytes:
    """The bytes of ``-data-read-memory-bytes`` blocks from ``address`` up to the first gap."""
    data = b""
    for block in sorted((b for b in blocks if isinstance(b, dict)), key=lambda b: to_int(b.get("begin"), 0, 16)):
        begin = to_int(block.get("begin"), 0, 16) + to_int(block.get("offset"), 0, 16)
        if begin != address + len(data):
            break
        data += bytes.fromhex(str(block.get("contents", "")))
    return data


def general_registers(names: list[Any], info_registers: str) -> tuple[list[int], dict[int, str]]:
    """The numbers of the registers ``info registers`` lists (the general group), and every register's name
    by number, from ``-data-list-register-names``."""
    numbers = {str(n): i for i, n in enumerate(names) if n}
    wanted = [m.group(1) for m in map(REGISTER_LINE.match, info_registers.splitlines())
              if m and not re.fullmatch(r"k[0-7]", m.group(1))]  # AVX-512 masks are not general
    return [numbers[n] for n in wanted if n in numbers], {i: n for n, i in numbers.items()}
