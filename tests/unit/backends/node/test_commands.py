"""debug_command's text: a CDP method and JSON params, or a refusal that shows the form; V8's refusals
of an unknown method or bad params answered with what would be right, from the protocol Node serves."""

from __future__ import annotations

from typing import Any

import pytest

from polydbg.backends.node.commands import Protocol, help_topic, parse
from polydbg.errors import AdapterRequestError

SCHEMA: dict[str, dict[str, Any]] = {
    "Debugger": {"domain": "Debugger", "commands": [
        {"name": "setBreakpointByUrl", "parameters": [{"name": "lineNumber", "type": "integer"},
                                                      {"name": "url", "type": "string", "optional": True}]},
        {"name": "setBreakpoint"}, {"name": "resume"}]},
    "Runtime": {"domain": "Runtime", "commands": [{"name": "evaluate", "parameters": [
        {"name": "expression", "type": "string"}, {"name": "contextId", "$ref": "ExecutionContextId",
                                                   "optional": True}]}]}}


def test_a_method_with_and_without_params() -> None:
    assert parse('Debugger.getScriptSource {"scriptId": "42"}') == ("Debugger.getScriptSource", {"scriptId": "42"})
    assert parse("  Runtime.getHeapUsage  ") == ("Runtime.getHeapUsage", {})


@pytest.mark.parametrize(("text", "says"), [
    ("evaluate 1+1", "is not a CDP method; pass Domain.method followed by JSON params"),
    ("Runtime.evaluate {expression: 1}", "the params are not JSON"),
    ("Runtime.evaluate [1]", "the params must be a JSON object")])
def test_what_is_not_a_command_is_refused(text: str, says: str) -> None:
    with pytest.raises(AdapterRequestError, match=says):
        parse(text)


async def test_an_unknown_method_is_answered_with_its_domains_methods_the_closest_first() -> None:
    said = await Protocol(SCHEMA).refusal(None, "Debugger.setBreakpointByURL",
                                          "'Debugger.setBreakpointByURL' wasn't found")
    assert said.startswith("Node's Debugger domain has no method 'setBreakpointByURL' (did you mean "
                           "Debugger.setBreakpointByUrl"), said
    assert "its methods: setBreakpointByUrl, setBreakpoint, resume" in said
    assert "help Debugger.method lists a method's parameters" in said


async def test_an_unknown_domain_is_answered_with_the_domains() -> None:
    said = await Protocol(SCHEMA).refusal(None, "runtime.evaluate", "'runtime.evaluate' wasn't found")
    assert said.startswith("Node has no CDP domain 'runtime' (did you mean Runtime?); its domains: Debugger, "
                           "Runtime"), said


async def test_bad_params_are_answered_with_the_methods_parameters() -> None:
    said = await Protocol(SCHEMA).refusal(None, "Runtime.evaluate", "Invalid parameters: params.expression missing")
    assert said == ("Invalid parameters: params.expression missing; Runtime.evaluate takes expression (string), "
                    "contextId (ExecutionContextId, optional)")


async def test_without_the_protocol_an_unknown_method_names_where_the_methods_are_listed() -> None:
    said = await Protocol().refusal(None, "Debugger.foo", "'Debugger.foo' wasn't found")
    assert "Schema.getDomains lists its domains" in said and "devtools-protocol" in said


async def test_help_lists_domains_methods_and_parameters() -> None:
    protocol = Protocol(SCHEMA)
    assert help_topic("help") == (True, None) and help_topic("HELP debugger") == (True, "debugger")
    assert help_topic("Runtime.evaluate") == (False, None)
    assert (await protocol.help(None, None)).startswith("domains: Debugger, Runtime\n")
    assert await protocol.help(None, "debugger") == "Debugger: setBreakpointByUrl, setBreakpoint, resume"
    assert await protocol.help(None, "Debugger.setBreakpointByUrl") == (
        "Debugger.setBreakpointByUrl takes lineNumber (integer), url (string, optional)")
    assert "no method 'nope'" in await protocol.help(None, "Runtime.nope")
