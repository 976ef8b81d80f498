"""Memory through [N]uint8 arrays and delve's few raw commands."""

from __future__ import annotations

from typing import Any

import pytest

from polydbg.backends.base import MemoryBlock, Variable
from polydbg.backends.delve import native
from polydbg.errors import AdapterRequestError, UsageError
from tests.unit.backends.dap.fake_adapter import FakeRequests


class FakeEvaluate:
    def __init__(self, ref: int = 7) -> None:
        self.ref = ref
        self.expressions: list[str] = []

    async def __call__(self, expression: str) -> Variable:
        self.expressions.append(expression)
        return Variable(expression, "[...]", ref=self.ref)


async def test_memory_is_read_as_a_byte_array() -> None:
    evaluate = FakeEvaluate()
    requests = FakeRequests(variables={"variables": [{"value": "102 = 0x66"}, {"value": "0 = 0x0"},
                                                     {"value": "unreadable"}]})
    assert await native.read_memory(evaluate, requests, 0x1000, 4) == MemoryBlock(0x1000, b"\x66\x00", 2)
    assert evaluate.expressions == ["*(*[4]uint8)(0x1000)"]
    assert requests.sent[0][1] == {"variablesReference": 7, "filter": "indexed", "start": 0, "count": 4}
    assert await native.read_memory(FakeEvaluate(ref=0), requests, 0x1000, 4) == MemoryBlock(0x1000, b"", 4)
    assert await native.read_memory(evaluate, requests, 0x1000, 0) == MemoryBlock(0x1000, b"")


async def test_memory_is_written_one_element_at_a_time_in_chunks() -> None:
    evaluate = FakeEvaluate()
    writes: list[dict[str, Any]] = []

    def set_variable(arguments: dict[str, Any]) -> dict[str, Any]:
        writes.append(arguments)
        return {}

    data = bytes(range(70))
    assert await native.write_memory(evaluate, FakeRequests(setVariable=set_variable), 0x2000, data) == 70
    assert evaluate.expressions == ["*(*[64]uint8)(0x2000)", "*(*[6]uint8)(0x2040)"]
    assert writes[65] == {"variablesReference": 7, "name": "[1]", "value": "65"}
    refused = FakeRequests(setVariable=[{}, AdapterRequestError("setVariable", "read-only")])
    assert await native.write_memory(FakeEvaluate(), refused, 0x2000, b"ab") == 1


def test_a_delve_command_with_or_without_its_prefix() -> None:
    assert native.dlv_command("  dlv config -list ") == "config -list"
    assert native.dlv_command("sources main") == "sources main"
    with pytest.raises(UsageError, match="help, config, sources"):
        native.dlv_command("   ")


def test_a_command_delve_does_not_have_is_named() -> None:
    refusal = native.unavailable("goroutines -t", AdapterRequestError("evaluate", "command not available"))
    assert refusal is not None and "no command 'goroutines'" in str(refusal)
    assert native.unavailable("config x", AdapterRequestError("evaluate", "bad value")) is None
    assert native.number(" 42 = 0x2a") == 42 and native.number("x") is None
