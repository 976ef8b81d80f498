"""MCP niceties: progress while an execution tool waits, the workflow prompt, output as a resource."""

from __future__ import annotations

from mcp_types import TextResourceContents

from tests.conftest import Tools, program, text_of

TICKER = program("ticker.py")
CHATTY = program("chatty.py")


async def test_long_wait_sends_progress_notifications(tools: Tools) -> None:
    await tools("debug_launch", program=TICKER, stop_on_entry=True)
    progress: list[tuple[float, str | None]] = []

    async def on_progress(value: float, _total: float | None, message: str | None) -> None:
        progress.append((value, message))

    result = await tools.client.call_tool("debug_continue", {"timeout_s": 2.5}, progress_callback=on_progress)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["timed_out"] is True
    assert result.structured_content["state"] == "running"
    assert len(progress) >= 2  # about one a second while waiting
    assert [value for value, _ in progress] == sorted(value for value, _ in progress)
    assert all(message and "running" in message for _, message in progress)
    await tools("debug_pause")
    await tools("debug_terminate")


async def test_workflow_prompt(tools: Tools) -> None:
    prompts = await tools.client.list_prompts()
    assert "debug_workflow" in [p.name for p in prompts.prompts]
    prompt = await tools.client.get_prompt("debug_workflow")
    text = " ".join(getattr(m.content, "text", "") for m in prompt.messages)
    assert "debug_launch" in text and "debug_step" in text and "debug_terminate" in text


async def test_session_output_resource(tools: Tools) -> None:
    report = await tools("debug_launch", program=CHATTY)
    assert report["state"] == "exited", report
    whole = await tools("debug_output", max_bytes=1_000_000)
    resource = await tools.client.read_resource(f"polydbg://sessions/{report['session_id']}/output")
    [contents] = resource.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == whole["text"]
    assert contents.text
    await tools("debug_terminate")


async def test_native_tools_on_python_say_what_to_use_instead(tools: Tools) -> None:
    await tools("debug_launch", program=program("basic.py"), stop_on_entry=True)
    for name, arguments in (("debug_memory", {"address": "0x1000"}), ("debug_disassemble", {}),
                            ("debug_registers", {}), ("debug_watch", {"expression": "x"}),
                            ("debug_command", {"command": "info registers"})):
        error = await tools.error(name, **arguments)
        assert f"{name} is not supported by debugpy" in error, error
    assert (await tools("debug_breakpoints"))["breakpoints"] == []  # the refused watch left nothing behind
    await tools("debug_terminate")
