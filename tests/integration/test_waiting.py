"""debug_continue waits for what can stop the program, and only for that: with no breakpoint that stops, no
exception filter and no pause pending, a quiet program is answered "running" instead of waiting out the deadline;
anything that can stop it (a breakpoint, an uncaught-exception filter) makes it wait as before."""

from __future__ import annotations

from tests.conftest import Tools, line_of, program, require

SERVER = program("server_like.py")
NODE_BUSY = str(program("node") + "/busy.js")


async def test_a_continue_nothing_can_stop_answers_running_without_waiting_out_its_deadline(tools: Tools) -> None:
    started = await tools("debug_launch", program=SERVER, break_on_exception="none")
    assert started["state"] == "running", started
    waited = await tools("debug_continue", timeout_s=600)  # a deadline no test run reaches
    assert waited["state"] == "running" and not waited.get("timed_out"), waited
    assert waited["note"].startswith("nothing can stop the program (no breakpoint, no exception filter, no pause "
                                     "pending)"), waited
    # a logpoint does not stop it either
    handler = line_of("server_like.py", "# handler breakpoint")
    await tools("debug_break", file=SERVER, line=handler, log_message="request {request}")
    assert (await tools("debug_continue", timeout_s=600))["note"].startswith("nothing can stop")
    # a breakpoint can: the continue waits for it (here, until its deadline)
    await tools("debug_break", file=SERVER, line=handler)
    deadline = await tools("debug_continue", timeout_s=1)
    assert deadline["state"] == "running" and deadline["timed_out"] and "note" not in deadline, deadline
    await tools("debug_clear", all=True)
    await tools("debug_break", exception=["uncaught"])
    assert (await tools("debug_continue", timeout_s=1))["timed_out"]
    await tools("debug_terminate")


async def test_a_node_program_nothing_can_stop(tools: Tools) -> None:
    require("node")
    started = await tools("debug_launch", program=NODE_BUSY, break_on_exception="none", timeout_s=600)
    assert started["state"] == "running", started
    waited = await tools("debug_continue", timeout_s=600)
    assert waited["state"] == "running" and waited["note"].startswith("nothing can stop the program"), waited
    await tools("debug_terminate")
