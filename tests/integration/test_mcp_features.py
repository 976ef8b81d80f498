"""MCP niceties: progress while an execution tool waits, the workflow prompt, output as a resource, errors
that say their kind, stops between calls shown by the next answer, paths that can be passed back."""

from __future__ import annotations

import shutil
from pathlib import Path

import anyio
from mcp_types import TextResourceContents

from tests.conftest import Tools, cancel_a_waiting_continue, line_of, program, text_of

TICKER = program("ticker.py")
CHATTY = program("chatty.py")


async def test_long_wait_sends_progress_notifications(tools: Tools) -> None:
    await tools("debug_launch", program=TICKER, stop_on_entry=True)
    reported: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reported.append((progress, message))

    result = await tools.client.call_tool("debug_continue", {"timeout_s": 2.5}, progress_callback=on_progress)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    assert result.structured_content["timed_out"] is True
    assert result.structured_content["state"] == "running"
    assert len(reported) >= 2  # about one a second while waiting
    assert [value for value, _ in reported] == sorted(value for value, _ in reported)
    assert all(message and "running" in message for _, message in reported)
    await tools("debug_pause")
    await tools("debug_terminate")


async def test_a_cancelled_continue_returns_at_once_and_the_program_keeps_running(tools: Tools) -> None:
    """The client gives up on a debug_continue that waits: the server is free at once, the session and its
    program are as they were (running), and a pause still stops it (test_http.py does the same over HTTP)."""
    await tools("debug_launch", program=TICKER, stop_on_entry=True)
    await cancel_a_waiting_continue(tools)
    assert (await tools("debug_pause"))["state"] == "stopped"
    assert int((await tools("debug_evaluate", expression="i", frame_id=0))["value"]) > 0
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
    whole = await tools("debug_output", max_bytes=30_000)
    resource = await tools.client.read_resource(f"polydbg://sessions/{report['session_id']}/output")
    [contents] = resource.contents
    assert isinstance(contents, TextResourceContents)
    assert contents.text == whole["text"]
    assert contents.text
    await tools("debug_terminate")


async def test_native_tools_on_python_say_what_to_use_instead(tools: Tools) -> None:
    await tools("debug_launch", program=program("basic.py"), stop_on_entry=True)
    for name, arguments in (("debug_memory", {"address": "0x1000"}), ("debug_disassemble", {}),
                            ("debug_variables", {"scope": "registers"}), ("debug_watch", {"expression": "x"}),
                            ("debug_command", {"command": "info registers"})):
        error = await tools.error(name, **arguments)
        what = "registers (debug_variables scope=registers)" if name == "debug_variables" else name
        assert f"{what} is not supported by debugpy" in error, error
        instead = "debug_trace" if name == "debug_watch" else "debug_evaluate"
        assert instead in error and "Go" not in error, error  # what works instead, and no debugger that lacks it
    assert (await tools("debug_breakpoints"))["breakpoints"] == []  # the refused watch left nothing behind
    await tools("debug_terminate")


async def test_errors_say_their_kind_and_never_echo_a_megabyte(tools: Tools) -> None:
    result = await tools.client.call_tool("debug_stack", {})
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["error"] == "unknown_session"
    assert "debug_launch" in result.structured_content["message"]
    huge = "/tmp/" + "x" * 1_000_000
    result = await tools.client.call_tool("debug_launch", {"program": huge})
    assert result.is_error and result.structured_content is not None
    assert result.structured_content["error"] == "usage"
    assert len(text_of(result)) < 2000, len(text_of(result))


async def test_a_stop_between_calls_comes_first_in_the_next_inspection(tools: Tools, tmp_path: Path) -> None:
    """The launch answered 'running' (the program went quiet); the breakpoint is hit before the agent's next
    call: that call's answer starts with the stop's report instead of silently skipping it."""
    path = program("waits_for_flag.py")
    flag = tmp_path / "flag"
    report = await tools("debug_launch", program=path, args=[str(flag)], timeout_s=60,
                         breakpoints=[{"file": path, "line": line_of("waits_for_flag.py", "# after the flag")}])
    assert report["state"] == "running", report
    flag.touch()
    with anyio.fail_after(30):
        while (await tools("debug_sessions"))["sessions"][0]["state"] != "stopped":
            pass  # debug_sessions shows the stop without reporting it
    result = await tools.client.call_tool("debug_stack", {})
    text = text_of(result)
    assert text.startswith("[s") and "stopped (breakpoint" in text and "waits_for_flag.py" in text, text
    assert result.structured_content is not None and result.structured_content["stop"]["reason"] == "breakpoint"
    again = await tools.text("debug_stack")  # shown once
    assert "stopped (breakpoint" not in again
    continued = await tools("debug_continue")
    assert continued["state"] == "exited"


async def test_paths_in_answers_are_relative_to_the_session_and_can_be_passed_back(tools: Tools,
                                                                                   tmp_path: Path) -> None:
    shutil.copy(program("basic.py"), tmp_path / "basic.py")
    line = line_of("basic.py", "total = a + b")
    text = await tools.text("debug_launch", program="basic.py", cwd=str(tmp_path),
                            breakpoints=[{"file": "basic.py", "line": line}])
    assert f" at basic.py:{line} in add" in text, text
    stack = await tools.text("debug_stack")
    assert f"at basic.py:{line}" in stack and str(tmp_path) not in stack
    added = await tools.text("debug_break", file="basic.py", line=line + 1)  # as the answer showed it
    assert f"basic.py:{line + 1}" in added
    await tools("debug_terminate")
