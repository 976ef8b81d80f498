"""tools/list is what every agent conversation pays for: a snapshot catches accidental changes.

Rewrite the snapshot after an intended change with ``UPDATE_SNAPSHOT=1 pytest tests/unit/mcp/test_tools_list.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from polydbg.mcp.server import build_server

SNAPSHOT = Path(__file__).with_name("tools_list.snapshot.json")
# The whole list (every language's tools) must stay within 10 KB (8 KB before every tool stated its hints,
# 0.65 KB); new languages add arguments, not tools.
SIZE_TARGET = 10240
# The order tools/list gives: start, breakpoints, run, inspect, change, then the low-level tools.
ORDER = ("debug_launch", "debug_attach", "debug_sessions", "debug_terminate", "debug_break", "debug_clear",
         "debug_breakpoints", "debug_continue", "debug_step", "debug_record", "debug_pause", "debug_restart",
         "debug_stack",
         "debug_variables", "debug_evaluate", "debug_set_variable", "debug_source", "debug_output", "debug_trace",
         "debug_memory", "debug_disassemble", "debug_watch", "debug_command")
# What each tool does, in the spec's words: read-only, or (destructive, idempotent).
READ_ONLY = {"debug_sessions", "debug_breakpoints", "debug_stack", "debug_variables", "debug_source",
             "debug_output", "debug_disassemble"}
DESTRUCTIVE = {"debug_terminate", "debug_clear", "debug_continue", "debug_step", "debug_record", "debug_restart",
               "debug_evaluate",
               "debug_set_variable", "debug_trace", "debug_memory", "debug_command"}
IDEMPOTENT = {"debug_terminate", "debug_break", "debug_clear", "debug_pause", "debug_set_variable", "debug_memory"}


async def _tools() -> list[dict[str, Any]]:
    async with Client(build_server()) as client:
        listed = await client.list_tools()
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools]


def _stable(tools: list[dict[str, Any]]) -> str:
    return json.dumps(tools, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


async def test_tools_list_matches_the_snapshot() -> None:
    current = _stable(await _tools())
    if os.environ.get("UPDATE_SNAPSHOT") == "1":
        SNAPSHOT.write_text(current, encoding="utf-8")
    assert SNAPSHOT.exists(), "no snapshot yet: run with UPDATE_SNAPSHOT=1"
    assert current == SNAPSHOT.read_text(encoding="utf-8"), \
        "tools/list changed; if intended, rerun with UPDATE_SNAPSHOT=1 and review the diff"


async def test_tools_list_fits_the_size_target() -> None:
    tools = await _tools()
    # what goes over the wire: compact JSON
    size = len(json.dumps(tools, separators=(",", ":"), ensure_ascii=False).encode())
    per_tool = sorted(((len(json.dumps(t, separators=(",", ":")).encode()), t["name"]) for t in tools), reverse=True)
    assert size <= SIZE_TARGET, f"tools/list is {size} bytes (target {SIZE_TARGET}); largest: {per_tool[:5]}"
    assert all("outputSchema" not in t for t in tools), "output schemas cost 0.8 KB and no client needs them"


async def test_tools_come_in_a_fixed_order() -> None:
    first = [tool["name"] for tool in await _tools()]
    again = [tool["name"] for tool in await _tools()]
    assert first == again == list(ORDER)


async def test_every_tool_says_what_it_does() -> None:
    """Read the hints as a client does (absent = the spec's default: not read-only, destructive, not
    idempotent), and every tool must state at least one of them itself."""
    async with Client(build_server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None, f"{name} has no annotations"
        stated = hints.model_dump(exclude_none=True)
        assert stated, f"{name} states no hint"
        read_only = hints.read_only_hint is True
        assert read_only == (name in READ_ONLY), name
        if read_only:
            continue
        assert (hints.destructive_hint is not False) == (name in DESTRUCTIVE), name
        assert (hints.idempotent_hint is True) == (name in IDEMPOTENT), name


async def test_prompt_and_output_resource() -> None:
    async with Client(build_server()) as client:
        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert "debug_workflow" in prompts
        workflow = await client.get_prompt("debug_workflow")
        text = "".join(getattr(m.content, "text", "") for m in workflow.messages)
        assert "debug_launch" in text
        with pytest.raises(MCPError) as unknown:  # the client's mistake, said as such
            await client.get_prompt("debug_everything")
        assert unknown.value.error.code == INVALID_PARAMS and "debug_workflow" in unknown.value.error.message

        templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
        output = templates.get("polydbg://sessions/{session_id}/output")
        assert output is not None, sorted(templates)
        assert output.mime_type == "text/plain"
