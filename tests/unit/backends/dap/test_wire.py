"""DAP bodies as polydbg's types: capabilities, breakpoint answers, frames, values, memory, instructions."""

from __future__ import annotations

import base64

from polydbg.backends.base import (
    BreakpointResult,
    Capabilities,
    ExceptionDetail,
    Frame,
    Instruction,
    MemoryBlock,
    Scope,
    Variable,
)
from polydbg.backends.dap import wire


def test_capabilities_say_what_initialize_answered() -> None:
    caps = wire.capabilities({
        "supportsConditionalBreakpoints": True, "supportsLogPoints": True, "supportsReadMemoryRequest": True,
        "exceptionBreakpointFilters": [{"filter": "raised"}, {"label": "no filter"}, "junk", {"filter": "uncaught"}],
    })
    assert caps == Capabilities(conditional_breakpoints=True, log_points=True, memory=True,
                                exception_filters=("raised", "uncaught"))
    assert wire.capabilities({}) == Capabilities()


def test_only_the_options_that_are_set_are_sent() -> None:
    assert wire.options("x > 1", None, "") == {"condition": "x > 1"}
    assert wire.options(None, ">= 3", "x={x}") == {"hitCondition": ">= 3",
                                                    "logMessage": wire.LOG_MARK + "x={x}" + wire.LOG_END}


def test_a_logpoints_message_is_told_apart_by_its_marks_also_across_events() -> None:
    sent = wire.options(None, None, "x={x}")["logMessage"]
    messages = wire.LogpointMessages()
    assert messages.take("stdout", sent.replace("{x}", "1") + "\n") == ["x=1"]
    assert messages.take("stdout", "x=1\n") is None  # the program's own line, the adapter's console
    # lldb-dap sends a message with line breaks (an expression's error notes) as one event per line
    assert messages.take("console", wire.LOG_MARK + "x=<error: bad\n") == []
    assert messages.take("stdout", "the program's\n") is None
    assert messages.take("console", "  note: here\n") == []
    assert messages.take("console", ">" + wire.LOG_END + "\n") == ["x=<error: bad\n  note: here\n>"]
    # a message whose end never comes is taken as ended after LOG_PARTS events
    assert messages.take("console", wire.LOG_MARK + "cut\n") == []
    taken = [messages.take("console", "more\n") for _ in range(wire.LOG_PARTS - 1)]
    assert taken[:-1] == [[]] * (wire.LOG_PARTS - 2) and taken[-1] == ["cut\n" + "more\n" * (wire.LOG_PARTS - 1)]


def test_a_breakpoint_answer() -> None:
    assert wire.breakpoint_result({"verified": True, "line": 7}) == BreakpointResult(True, line=7)
    assert wire.breakpoint_result({"message": "no code"}) == BreakpointResult(False, message="no code")


def test_a_frame_reads_its_source_and_address() -> None:
    raw = {"id": 1, "name": "main", "line": 3, "column": 5, "source": {"path": "/src/a.c"},
           "instructionPointerReference": "0x401000"}
    assert wire.frame(raw) == Frame("main", "/src/a.c", 3, 5, 0x401000)
    assert wire.frame({"source": {"name": "<string>"}, "line": 0}) == Frame("?", "<string>", None)


def test_scopes_and_variables() -> None:
    assert wire.scope({"name": "Locals", "variablesReference": 4, "presentationHint": "locals"}) == \
        Scope("Locals", 4, hint="locals")
    assert wire.variable({"name": "xs", "value": "[1, 2]", "type": "list", "variablesReference": 9,
                          "evaluateName": "xs", "indexedVariables": 2}) == \
        Variable("xs", "[1, 2]", "list", 9, "xs", indexed_count=2)
    assert wire.variable({"name": "n", "value": "1", "type": ""}).type is None


def test_an_evaluation_is_named_by_its_expression() -> None:
    value = wire.evaluated("a + b", {"result": "3", "type": "int", "memoryReference": "0x10"})
    assert value == Variable("a + b", "3", "int", 0, "a + b", memory_reference="0x10")
    assert wire.assigned("n", {"value": "5"}) == Variable("n", "5")


def test_exception_info() -> None:
    assert wire.exception_detail({"exceptionId": "ValueError", "description": "bad"}) == \
        ExceptionDetail("ValueError", "bad")
    assert wire.exception_detail({}) == ExceptionDetail("exception", "")


def test_memory_is_read_from_the_address_the_answer_names() -> None:
    data = base64.b64encode(b"\x01\x02").decode()
    assert wire.memory_block({"address": "0x2000", "data": data, "unreadableBytes": 6}, 0x1000) == \
        MemoryBlock(0x2000, b"\x01\x02", 6)
    assert wire.memory_block({}, 0x1000) == MemoryBlock(0x1000, b"")
    assert base64.b64decode(wire.base64_text(b"\xff\x00")) == b"\xff\x00"


def test_instructions_without_an_address_are_left_out() -> None:
    body = {"instructions": [
        {"address": "0x10", "instruction": "nop", "symbol": "main", "location": {"path": "/a.c"}, "line": 2},
        {"address": "bogus", "instruction": "??"},
    ]}
    assert wire.instructions(body) == [Instruction(0x10, "nop", "main", "/a.c", 2)]


def test_register_scopes_by_name_or_hint() -> None:
    assert wire.is_register_scope(Scope("Registers", 1))
    assert wire.is_register_scope(Scope("CPU", 1, hint="registers"))
    assert not wire.is_register_scope(Scope("Locals", 1, hint="locals"))


def test_initialize_names_the_adapter() -> None:
    args = wire.initialize_arguments("go")
    assert args["adapterID"] == "go" and args["pathFormat"] == "path" and args["supportsMemoryReferences"]
