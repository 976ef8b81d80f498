"""A tool call's raw arguments are checked before the SDK validates them: an unknown name (the SDK would drop
it silently) is refused naming the closest valid one, at every depth; strings holding a lone surrogate or a NUL
byte, or of a length no tool needs, are refused naming the argument; the SDK's validation errors read as one
line per argument with what was given, cut."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from mcp import Client

from polydbg.mcp import arguments
from polydbg.mcp.server import build_server
from tests.conftest import text_of


@pytest.fixture
async def client() -> AsyncIterator[Client]:
    async with Client(build_server()) as connected:
        yield connected


async def refusal(client: Client, tool: str, **args: Any) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, text_of(result)
    assert result.structured_content is not None and result.structured_content["error"] == "usage"
    return text_of(result)


async def test_an_unknown_argument_is_refused_with_the_closest_name_and_the_tool_s_arguments(client: Client) -> None:
    text = await refusal(client, "debug_launch", program="app.py", breakpoint=[{"file": "app.py", "line": 3}])
    assert "no argument 'breakpoint'; did you mean 'breakpoints'?" in text and "stop_on_entry" in text
    assert "'stop_on_entry'?" in await refusal(client, "debug_launch", program="app.py", stop_at_entry=True)
    restart = await refusal(client, "debug_restart", stop_on_entry=True)
    assert "no argument 'stop_on_entry'" in restart and "timeout_s, session_id" in restart
    assert "no argument 'thread_idx'" in await refusal(client, "debug_sessions", thread_idx=2)


async def test_an_unknown_field_of_a_breakpoint_or_a_point_is_refused_too(client: Client) -> None:
    text = await refusal(client, "debug_launch", program="app.py",
                         breakpoints=[{"file": "app.py", "line": 3}, {"file": "app.py", "line": 4, "conditon": "x"}])
    assert "breakpoints[1] has no field 'conditon'; did you mean 'condition'?" in text
    assert "hit_condition" in text
    trace = await refusal(client, "debug_trace", points=[{"file": "a.py", "lines": 3}], expressions=["x"])
    assert "points[0] has no field 'lines'; did you mean 'line'?" in trace
    # a map's keys are data, not names: env takes any variable
    env = await client.call_tool("debug_launch", {"program": "/no/such/app.py", "env": {"ANY_NAME": "1"}})
    assert "has no" not in text_of(env)


async def test_an_unknown_tool_names_the_closest_one(client: Client) -> None:
    assert "did you mean 'debug_evaluate'?" in await refusal(client, "debug_evaluat", expression="1")


async def test_strings_with_a_nul_byte_or_over_the_limit_are_refused_naming_the_argument(client: Client) -> None:
    nul = await refusal(client, "debug_launch", program="app.py", cwd="/tmp\0x")
    assert "argument 'cwd' contains a NUL byte" in nul
    nested = await refusal(client, "debug_launch", program="app.py", breakpoints=[{"file": "a\0.py", "line": 1}])
    assert "argument 'breakpoints[0].file' contains a NUL byte" in nested
    huge = await refusal(client, "debug_evaluate", expression="x" * 1_000_000)
    assert "'expression' is 1,000,000 characters; the limit is 100,000" in huge and len(huge) < 300
    session = await refusal(client, "debug_stack", session_id="s" * 1_000_000)
    assert len(session) < 300


async def test_a_lone_surrogate_is_named_not_dropped(client: Client) -> None:
    marked = json.loads(arguments.mark_lone_surrogates(json.dumps({"expression": "a\ud800b"})))
    text = await refusal(client, "debug_evaluate", **marked)
    assert "argument 'expression' holds a lone UTF-16 surrogate" in text and "at character 1" in text


def test_only_lone_surrogates_are_marked() -> None:
    paired = json.dumps({"x": "\U0001f600", "y": "\\ud800 in text"})  # a pair, and an escaped backslash
    assert arguments.mark_lone_surrogates(paired) == paired
    lone = arguments.mark_lone_surrogates('{"a": ["ok", {"b": "\\udc00z"}]}')
    assert json.loads(lone) == {"a": ["ok", {"b": arguments.SURROGATE_MARK + "z"}]}
    assert arguments.mark_lone_surrogates('{"broken": "\\ud800') == '{"broken": "\\ud800'  # not JSON: as it was


async def test_the_sdk_s_validation_errors_read_as_one_line_per_argument(client: Client) -> None:
    stream = await refusal(client, "debug_output", stream="logpointz")
    assert stream.startswith("debug_output: stream: Input should be") and "(got 'logpointz')" in stream
    assert "pydantic" not in stream and "\n" not in stream
    count = await refusal(client, "debug_step", count="x" * 5000)
    assert len(count) < 400 and "count:" in count



async def test_values_that_change_meaning_when_converted_are_refused(client: Client) -> None:
    """pydantic's lax conversions made detach="yes" a detach and line=true line 1."""
    assert "detach takes true or false (got 'yes')" in await refusal(client, "debug_terminate", detach="yes")
    assert "line takes a number or text (got True)" in await refusal(client, "debug_break", file="a.py", line=True)
    assert "count takes a number (got True)" in await refusal(client, "debug_step", count=True)
    # what JSON-in-a-string clients send still reads as meant
    said = text_of(await client.call_tool("debug_terminate", {"detach": "true"}))
    assert "no debug session" in said, said


async def test_names_agents_reach_for_point_to_the_argument_that_does_it(client: Client) -> None:
    assert "'expr'; pass expression." in await refusal(client, "debug_evaluate", expr="1")
    assert "pass line (it takes a number or text on the line)" in await refusal(client, "debug_break", file="a.py",
                                                                                 text="total += x")
    assert "has no argument 'verbose': it takes none" in await refusal(client, "debug_sessions", verbose=True)


async def test_a_union_s_members_are_one_argument_in_a_refusal(client: Client) -> None:
    said = await refusal(client, "debug_break", file="a.py", line=0)
    assert said.startswith("debug_break: line: ") and "constrained" not in said and "(got 0)" in said, said
    nested = await refusal(client, "debug_launch", program="a.py", breakpoints=[{"file": "a.py", "line": 0}])
    assert nested.startswith("debug_launch: breakpoints[0].line: "), nested


def test_a_lone_string_for_a_list_of_strings_is_that_list() -> None:
    schema = {"properties": {"filter": {"type": "array", "items": {"type": "string"}}, "name": {"type": "string"}}}
    assert arguments.listed(schema, {"filter": "req", "name": "x"}) == {"filter": ["req"], "name": "x"}
    assert arguments.listed(schema, {"filter": '["a", "b"]'}) == {"filter": '["a", "b"]'}  # JSON: the SDK reads it


def test_a_lone_surrogate_in_a_name_is_shown_as_one() -> None:
    said = arguments.problem("debug_launch", {"properties": {"program": {"type": "string"}}},
                             {"progr" + arguments.SURROGATE_MARK + "am": "x"})
    assert said is not None and "U0010ffff" not in said and "lone surrogate" in said, said
