"""tools/list is what every agent conversation pays for: a snapshot catches accidental changes.

Rewrite the snapshot after an intended change with ``UPDATE_SNAPSHOT=1 pytest tests/integration/test_tools_list.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mcp import Client

from polydbg.mcp.server import build_server

SNAPSHOT = Path(__file__).with_name("tools_list.snapshot.json")
# The whole list (every language's tools) must stay within 8 KB; new languages add arguments, not tools.
SIZE_TARGET = 8192
INSPECTION_TOOLS = ("debug_sessions", "debug_breakpoints", "debug_stack", "debug_variables", "debug_source",
                    "debug_output")


async def _tools() -> list[dict[str, Any]]:
    async with Client(build_server()) as client:
        listed = await client.list_tools()
    return [tool.model_dump(mode="json", by_alias=True, exclude_none=True)
            for tool in sorted(listed.tools, key=lambda t: t.name)]


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


async def test_annotations_prompt_and_output_resource() -> None:
    async with Client(build_server()) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        for name in INSPECTION_TOOLS:
            annotations = tools[name].annotations
            assert annotations is not None and annotations.read_only_hint is True, name
        for name in ("debug_launch", "debug_step", "debug_continue", "debug_terminate", "debug_set_variable"):
            annotations = tools[name].annotations  # absent means readOnlyHint false
            assert annotations is None or annotations.read_only_hint is not True, name

        prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
        assert "debug_workflow" in prompts
        workflow = await client.get_prompt("debug_workflow")
        text = "".join(getattr(m.content, "text", "") for m in workflow.messages)
        assert "debug_launch" in text

        templates = {t.uri_template: t for t in (await client.list_resource_templates()).resource_templates}
        output = templates.get("polydbg://sessions/{session_id}/output")
        assert output is not None, sorted(templates)
        assert output.mime_type == "text/plain"
