"""Memory and raw commands through what delve's DAP server has: it answers ``disassemble`` (the generic
DAP request is used) but not ``readMemory``/``writeMemory``, and its repl runs only a few commands.

Memory is read and written as a ``[N]uint8`` array cast from the address (``*(*[N]uint8)(0x…)``):
its elements are the bytes (delve shows each as "102 = 0x66"), and setting an element writes one.
Raw commands go through delve's repl prefix ``dlv <command>``; in DAP mode delve offers only
``help``, ``config`` and ``sources``, and says "command not available" for the rest.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable

from polydbg.backends.base import MemoryBlock, Variable
from polydbg.backends.dap import wire
from polydbg.errors import AdapterRequestError, UsageError

DLV_COMMANDS = "help, config, sources"
WRITE_CHUNK = 64  # bytes written through one array value
_NUMBER = re.compile(r"\s*(\d+)")  # delve shows integers as "102 = 0x66"

Evaluate = Callable[[str], Awaitable[Variable]]  # an expression evaluated in no frame, unshaped


def number(value: str) -> int | None:
    """The integer delve shows as "102 = 0x66"."""
    match = _NUMBER.match(value)
    return int(match[1]) if match is not None else None


def byte_array(address: int, count: int) -> str:
    """The expression for ``count`` bytes at ``address``."""
    return f"*(*[{count}]uint8)({address:#x})"


async def read_memory(evaluate: Evaluate, request: wire.Request, address: int, count: int) -> MemoryBlock:
    if count <= 0:
        return MemoryBlock(address=address, data=b"")
    array = await evaluate(byte_array(address, count))
    if not array.ref:
        return MemoryBlock(address=address, data=b"", unreadable=count)
    body = await request("variables", {"variablesReference": array.ref, "filter": "indexed",
                                       "start": 0, "count": count})
    data = bytearray()
    for child in body.get("variables", []):
        value = number(str(child.get("value", "")))
        if value is None:
            break
        data.append(value & 0xFF)
    return MemoryBlock(address=address, data=bytes(data), unreadable=count - len(data))


async def write_memory(evaluate: Evaluate, request: wire.Request, address: int, data: bytes) -> int:
    written = 0
    for offset in range(0, len(data), WRITE_CHUNK):
        chunk = data[offset:offset + WRITE_CHUNK]
        array = await evaluate(byte_array(address + offset, len(chunk)))
        if not array.ref:
            break
        for index, value in enumerate(chunk):
            try:
                await request("setVariable", {"variablesReference": array.ref, "name": f"[{index}]",
                                              "value": str(value)})
            except AdapterRequestError:
                return written
            written += 1
    return written


def dlv_command(text: str) -> str:
    """The delve command in ``text`` (with or without its ``dlv`` prefix)."""
    command = text.strip()
    if command.startswith("dlv "):
        command = command[4:].strip()
    if not command:
        raise UsageError(f"pass a delve command; delve's DAP server offers: {DLV_COMMANDS}")
    return command


def unavailable(command: str, exc: AdapterRequestError) -> UsageError | None:
    """What to tell the agent when delve's DAP server has no such command (None: another error)."""
    if "command not available" not in exc.message:
        return None
    return UsageError(f"delve's DAP server has no command {command.split()[0]!r}; it offers "
                      f"{DLV_COMMANDS} (e.g. 'config -list', 'sources main'). Goroutines: "
                      "debug_stack(all_threads=true); memory, registers and disassembly have "
                      "their own tools")
