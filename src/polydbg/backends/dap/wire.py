"""DAP message bodies as polydbg's types and back: pure translations, no I/O, no adapter quirks.

Kept apart from the backend so every conversion (capabilities from ``initialize``, a breakpoint's
answer, a stack frame, a variable, an instruction) is written once, read by the breakpoint, value
and native parts alike, and tested without an adapter. Where an adapter spells a field differently
its backend shapes the result afterwards; nothing here knows which adapter answered.
"""

from __future__ import annotations

import base64
from collections.abc import Awaitable
from typing import Any, Protocol

from polydbg.backends.base import (
    BreakpointResult,
    Capabilities,
    ExceptionDetail,
    Frame,
    Instruction,
    MemoryBlock,
    Scope,
    StepKind,
    Variable,
    parse_address,
)

STEP_COMMANDS: dict[StepKind, str] = {"over": "next", "into": "stepIn", "out": "stepOut"}
# Around every logpoint message polydbg sends: adapters print a logpoint's line as the program's stdout (debugpy,
# delve) or as their own console (lldb-dap), so the marks are what tell it apart, and where it ends.
LOG_MARK = "<polydbg-log>"
LOG_END = "</polydbg-log>"
LOG_PARTS = 64  # output events one message may take before it is taken as ended


class Request(Protocol):
    """A request to the adapter answered with its body (the backend's ``_request``: ``timeout`` None is the
    inspection deadline, ``timeouts.INSPECT_S``, read when the request is sent)."""

    def __call__(self, command: str, arguments: dict[str, Any] | None = None,
                 timeout: float | None = None) -> Awaitable[dict[str, Any]]: ...


def initialize_arguments(adapter_id: str) -> dict[str, Any]:
    return {"clientID": "polydbg", "clientName": "polydbg", "adapterID": adapter_id,
            "pathFormat": "path", "linesStartAt1": True, "columnsStartAt1": True,
            "supportsVariableType": True, "supportsRunInTerminalRequest": False,
            "supportsProgressReporting": False, "supportsMemoryReferences": True}


def capabilities(body: dict[str, Any]) -> Capabilities:
    """What the adapter's ``initialize`` answer says it supports."""
    filters = tuple(str(f.get("filter")) for f in body.get("exceptionBreakpointFilters", []) or []
                    if isinstance(f, dict) and f.get("filter"))
    return Capabilities(
        conditional_breakpoints=bool(body.get("supportsConditionalBreakpoints")),
        hit_conditional_breakpoints=bool(body.get("supportsHitConditionalBreakpoints")),
        log_points=bool(body.get("supportsLogPoints")),
        function_breakpoints=bool(body.get("supportsFunctionBreakpoints")),
        set_variable=bool(body.get("supportsSetVariable")),
        exception_info=bool(body.get("supportsExceptionInfoRequest")),
        exception_filters=filters,
        memory=bool(body.get("supportsReadMemoryRequest")),
        disassemble=bool(body.get("supportsDisassembleRequest")),
        data_breakpoints=bool(body.get("supportsDataBreakpoints")),
    )


def options(condition: str | None, hit_condition: str | None, log_message: str | None) -> dict[str, str]:
    """The optional fields of a DAP breakpoint, only those that are set (a log message after ``LOG_MARK``)."""
    fields = {"condition": condition, "hitCondition": hit_condition,
              "logMessage": LOG_MARK + log_message + LOG_END if log_message else None}
    return {key: value for key, value in fields.items() if value}


class LogpointMessages:
    """Logpoint messages out of an adapter's output events: from ``LOG_MARK`` to ``LOG_END``, in one event or
    several of one category (lldb-dap sends each line of a message as an event: an expression's error notes)."""

    def __init__(self) -> None:
        self._category: str | None = None
        self._parts: list[str] = []

    def take(self, category: str, text: str) -> list[str] | None:
        """The messages ``text`` completes (none while one is still arriving), or None: not a logpoint's."""
        if self._category is None:
            if not text.startswith(LOG_MARK):
                return None
            self._category, text = category, text[len(LOG_MARK):]
        elif category != self._category:
            return None  # the program's output between the lines of a message
        self._parts.append(text)
        message, ended, _ = "".join(self._parts).partition(LOG_END)
        if not ended and len(self._parts) < LOG_PARTS:
            return []
        self._category, self._parts = None, []
        return [message]


def breakpoint_result(bp: dict[str, Any]) -> BreakpointResult:
    return BreakpointResult(verified=bool(bp.get("verified", False)), line=bp.get("line"), message=bp.get("message"))


def frame(raw: dict[str, Any]) -> Frame:
    """A DAP stack frame as a Frame, unshaped."""
    source = raw.get("source") or {}
    return Frame(name=str(raw.get("name", "?")), file=source.get("path") or source.get("name") or None,
                 line=raw.get("line") or None, column=raw.get("column") or None,
                 pc=parse_address(raw.get("instructionPointerReference")))


def scope(raw: dict[str, Any]) -> Scope:
    return Scope(name=str(raw.get("name", "")), ref=int(raw.get("variablesReference", 0)),
                 expensive=bool(raw.get("expensive", False)), hint=raw.get("presentationHint"))


def variable(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"),
                    memory_reference=v.get("memoryReference"))


def evaluated(expression: str, body: dict[str, Any]) -> Variable:
    """An ``evaluate`` answer as the Variable named by its expression."""
    return Variable(name=expression, value=str(body.get("result", "")), type=body.get("type"),
                    ref=int(body.get("variablesReference", 0)), evaluate_name=expression,
                    indexed_count=body.get("indexedVariables"), named_count=body.get("namedVariables"),
                    memory_reference=body.get("memoryReference"))


def assigned(name: str, body: dict[str, Any]) -> Variable:
    """A ``setVariable`` answer as the Variable's new value."""
    return Variable(name=name, value=str(body.get("value", "")), type=body.get("type"),
                    ref=int(body.get("variablesReference", 0)))


def exception_detail(body: dict[str, Any]) -> ExceptionDetail:
    return ExceptionDetail(type=str(body.get("exceptionId", "exception")), message=str(body.get("description") or ""))


def base64_text(data: bytes) -> str:
    """Bytes as ``writeMemory`` sends them."""
    return base64.b64encode(data).decode()


def memory_block(body: dict[str, Any], address: int) -> MemoryBlock:
    """A ``readMemory`` answer (base64 data from the address it names, else the one asked for)."""
    data = base64.b64decode(body.get("data") or "")
    start = parse_address(body.get("address"))
    return MemoryBlock(address=start if start is not None else address, data=data,
                       unreadable=int(body.get("unreadableBytes") or 0))


def instructions(body: dict[str, Any]) -> list[Instruction]:
    """A ``disassemble`` answer's instructions (those without an address left out)."""
    out = []
    for item in body.get("instructions", []):
        at = parse_address(item.get("address"))
        if at is None:
            continue
        location = item.get("location") or {}
        out.append(Instruction(address=at, text=str(item.get("instruction", "")), symbol=item.get("symbol"),
                               file=location.get("path"), line=item.get("line")))
    return out


def is_register_scope(found: Scope) -> bool:
    return "register" in found.name.lower() or (found.hint or "").lower() == "registers"
