"""Native operations: memory, disassembly, registers, watchpoints and raw debugger commands.

Each is offered only where the backend declares the capability; elsewhere the answer says what
to use instead. Reads go through the stop scope like every inspection.
"""

from __future__ import annotations

import re

from polydbg.backends import registry
from polydbg.backends.base import Backend, BackendInfo, FrameRef, NativeCapability, parse_address
from polydbg.errors import UsageError, echo, refused
from polydbg.session.bpsync import BreakpointSync
from polydbg.session.breakpoints import Breakpoint
from polydbg.session.core import SessionCore
from polydbg.session.inspection import EVALUATE_CHARS, Inspector, clip
from polydbg.session.model import (
    CommandResult,
    DisassemblyResult,
    InstructionInfo,
    MemoryResult,
    State,
    VariablesResult,
)
from polydbg.session.scope import StopScope

_HEX = re.compile(r"0x[0-9a-fA-F]+")


def hexdump(address: int, data: bytes, width: int = 16) -> str:
    """Classic hex dump: address, hex bytes, printable ASCII."""
    lines = []
    for offset in range(0, len(data), width):
        row = data[offset:offset + width]
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in row)
        lines.append(f"{address + offset:#014x}  {row.hex(' '):<{width * 3 - 1}}  |{text}|")
    return "\n".join(lines)


class Native:
    def __init__(self, core: SessionCore, inspector: Inspector, bpsync: BreakpointSync) -> None:
        self.core = core
        self.inspector = inspector
        self.bpsync = bpsync

    def _facts(self) -> BackendInfo:
        return registry.BACKENDS.get(self.core.adapter) or registry.UNKNOWN

    def _backend(self, capability: NativeCapability, tool: str) -> Backend:
        backend = self.core.backend
        if not getattr(backend.capabilities, capability):
            facts = self._facts()
            raise UsageError(f"{tool} is not supported by {self.core.adapter}: "
                             f"{facts.refusals.get(capability, facts.native_refusal)}")
        return backend

    async def resolve_address(self, scope: StopScope, address: str, frame_index: int | None,
                              thread_id: int | None = None) -> int:
        """A number (0x… or decimal) as is; anything else is evaluated and must give an address."""
        text = address.strip()
        try:
            return int(text, 0)
        except ValueError:
            pass
        frame, _ = await self.inspector.frame(scope, frame_index, thread_id)
        with refused(f"cannot evaluate {echo(text)}"):
            value = await self.core.read(scope, self.core.backend.evaluate(text, frame, "watch"))
        if value.memory_reference:
            parsed = parse_address(value.memory_reference)
            if parsed is not None:
                return parsed
        found = _HEX.search(value.value)
        if found is None:
            raise UsageError(f"{echo(text)} = {clip(value.value, 80)[0]} is not an address; pass a pointer, "
                             "&variable, or a number such as 0x7ffd1234")
        return int(found.group(0), 16)

    async def memory(self, address: str, count: int, write: str | None, frame_index: int | None,
                     thread_id: int | None = None) -> MemoryResult:
        scope = self.core.life.stopped_scope()
        backend = self._backend("memory", "debug_memory")
        at = await self.resolve_address(scope, address, frame_index, thread_id)
        written = None
        if write is not None:
            try:
                data = bytes.fromhex(write.replace(" ", "").removeprefix("0x"))
            except ValueError as exc:
                raise UsageError(f"write must be hex bytes such as '48 65 6c 6c 6f', not {echo(write)}") from exc
            written = await self.core.read(scope, backend.write_memory(at, data))
            scope.forget_values()
            count = max(count, len(data))
        with refused(f"cannot read memory at {hex(at)}"):
            block = await self.core.read(scope, backend.read_memory(at, count))
        return MemoryResult(session_id=self.core.id, address=hex(block.address), count=len(block.data),
                            hex=block.data.hex(), dump=hexdump(block.address, block.data),
                            unreadable=block.unreadable, written=written)

    async def disassemble(self, address: str | None, count: int, frame_index: int | None,
                          thread_id: int | None = None) -> DisassemblyResult:
        scope = self.core.life.stopped_scope()
        backend = self._backend("disassemble", "debug_disassemble")
        _ref, frame = await self.inspector.frame(scope, frame_index, thread_id)
        if address is not None:
            at, offset = await self.resolve_address(scope, address, frame_index, thread_id), 0
        elif frame.pc is not None:
            at, offset = frame.pc, -min(count // 3, 8)  # a few instructions before the pc for context
        else:
            raise UsageError("this frame has no instruction pointer; pass address")
        with refused(f"cannot disassemble at {hex(at)}"):
            instructions = await self.core.read(scope, backend.disassemble(at, count, offset))
        return DisassemblyResult(
            session_id=self.core.id, pc=hex(frame.pc) if frame.pc is not None else None,
            instructions=[InstructionInfo(address=hex(i.address), text=i.text, symbol=i.symbol, line=i.line,
                                          current=i.address == frame.pc) for i in instructions])

    async def registers(self, frame_index: int | None, thread_id: int | None = None) -> VariablesResult:
        scope = self.core.life.stopped_scope()
        backend = self._backend("registers", "registers (debug_variables scope=registers)")
        frame, _ = await self.inspector.frame(scope, frame_index, thread_id)
        found = await self.core.read(scope, backend.registers(frame))
        return VariablesResult(session_id=self.core.id, scope="Registers", total=len(found),
                               variables=[self.inspector.var(scope, v, frame) for v in found])

    async def watch(self, expression: str, access: str) -> Breakpoint:
        live = self.core.live_backend()
        if self.core.backend_slot is not None and not self.core.life.ended:
            self._backend("data_breakpoints", "debug_watch")
        bp = self.core.breakpoints.add(watch=expression, access=access)
        if live is None:
            return bp
        frame = self.bpsync.stopped_frame()
        what = f"cannot watch {echo(expression)}"
        try:
            with refused(what):
                await self.core.call(self.bpsync.send_watches(frame))
        except UsageError:
            self.core.breakpoints.remove(bp.id)
            raise
        if not bp.verified:
            self.core.breakpoints.remove(bp.id)
            await self.core.call(self.bpsync.send_watches(frame))
            hint = self._facts().watch_hint
            raise UsageError(f"{what}: {bp.message or 'the debugger refused'}" + (f"; {hint}" if hint else ""))
        return bp

    async def command(self, text: str, frame_index: int | None, thread_id: int | None = None) -> CommandResult:
        backend = self._backend("raw_command", "debug_command")
        life = self.core.life
        frame: FrameRef | None = None
        if life.state == State.stopped and life.scope is not None:
            frame, _ = await self.inspector.frame(life.scope, frame_index, thread_id)
        with refused(f"{self.core.adapter} refused {echo(text)}"):
            output = await self.core.call(backend.command(text, frame))
        if life.scope is not None:
            life.scope.forget_reads()  # a raw command may change anything
        clipped, cut = clip(output, EVALUATE_CHARS)
        return CommandResult(session_id=self.core.id, command=text, output=clipped, truncated=cut)
