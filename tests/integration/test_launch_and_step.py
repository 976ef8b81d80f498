"""The stop report's text form, through the MCP layer against real debugpy.

Launch, breakpoints, stepping and the structured stop report are checked for every backend by
test_conformance.py.
"""

from __future__ import annotations

import re
import time

import anyio
import pytest

from polydbg.backends.debugpy import children
from tests.conftest import Tools, line_of, program

BASIC = program("basic.py")


async def test_text_rendering_is_compact(tools: Tools) -> None:
    line = line_of("basic.py", "total = a + b")
    text = await tools.text("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    assert re.match(r"\[s-[0-9a-f]{12}\] stopped \(breakpoint\) at ", text), text  # a random session id
    assert "in add" in text
    assert "a (int) = 0" in text
    assert len(text.encode()) < 2048
    await tools("debug_terminate")


async def test_a_step_over_the_programs_last_line_runs_it_to_its_exit(tools: Tools) -> None:
    """Past the program's last line is the launch shim's frame, which stacks leave out: the step stopped there and
    answered "stopped (step)" with no frame at all ("frame 0 does not exist"), every step again."""
    line = line_of("basic.py", 'print("result:", result)')
    await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
    done = await tools("debug_step", kind="over")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert "result: 20" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_the_launch_shims_frame_is_left_out_between_the_program_and_a_chained_exception(tools: Tools) -> None:
    """pydevd lists a chained exception's frames after the launch shim's: the shim's frame was listed among them
    (``#3 <module> at <string>:276``); the chained frames are numbered on from the program's, and read as such."""
    path = program("raises_chained.py")
    report = await tools("debug_launch", program=path)
    assert report["reason"] == "exception" and report["location"]["line"] == line_of("raises_chained.py",
                                                                                     "# stops here"), report
    stack = await tools.text("debug_stack")
    assert "<string>" not in stack, stack
    assert f"#2 <module> at raises_chained.py:{line_of('raises_chained.py', '# the program runs')}" in stack, stack
    chained_line = line_of("raises_chained.py", "# the chained KeyError")
    assert f"#3 [Chained Exc: 'port'] load at raises_chained.py:{chained_line}" in stack, stack
    page = await tools.text("debug_stack", start=3)
    assert page.count(" at ") == 1 and "#3 [Chained Exc: 'port'] load" in page, page
    chained = await tools("debug_evaluate", expression="settings", frame_id=3)
    assert chained["value"] == "{}", chained
    await tools("debug_terminate")


async def test_a_launched_server_that_went_quiet_is_reported_running_without_the_full_wait(tools: Tools) -> None:
    """timeout_s is the longest wait for a stop; a program that printed and then went quiet is up and waiting,
    so the launch answers well before it (and a later stop is reported by the next call)."""
    path = program("server_like.py")
    started = time.monotonic()
    report = await tools("debug_launch", program=path, timeout_s=60,
                         breakpoints=[{"file": path, "line": line_of("server_like.py", "# handler breakpoint")}])
    assert report["state"] == "running" and not report.get("timed_out"), report
    assert "printed nothing" in report["note"] and "serving on port 0" in report["output"]["text"]
    assert time.monotonic() - started < 30
    await tools("debug_terminate")


async def test_sys_exit_is_an_exit_not_an_exception_stop(tools: Tools) -> None:
    exits_with = program("exits_with.py")
    for mode in ("uncaught", "raised"):
        report = await tools("debug_launch", program=exits_with, args=["3"], break_on_exception=mode)
        assert report["state"] == "exited" and report["exit_code"] == 3, (mode, report)
        assert not report.get("exception"), report
        await tools("debug_terminate")
    report = await tools("debug_launch", program=exits_with, args=["message"])
    assert report["state"] == "exited" and report["exit_code"] == 1, report
    assert "usage: exits_with.py CODE" in (await tools("debug_output"))["text"]
    await tools("debug_terminate")


async def test_stdin_feeds_input_to_a_python_program(tools: Tools) -> None:
    done = await tools("debug_launch", program=program("reads_input.py"), stdin="Ada\nx\ny\n")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert "hello Ada and 2 more lines" in (await tools("debug_output"))["text"]
    await tools("debug_terminate")


async def test_a_breakpoint_in_a_pool_worker_stops_there_and_the_pool_finishes(tools: Tools) -> None:
    workers = program("pool_workers.py")
    line = line_of("pool_workers.py", "# in worker")
    report = await tools("debug_launch", program=workers, breakpoints=[{"file": workers, "line": line}])
    assert report["state"] == "stopped" and report["location"]["function"] == "work", report
    assert report["thread_name"].startswith("child process "), report  # which process stopped
    stack = await tools.text("debug_stack")
    assert "(pid " in stack, stack  # a worker's thread, named with its process
    n = int({v["name"]: v["value"] for v in report["locals"]}["n"])
    assert (await tools("debug_evaluate", expression="n * n"))["value"] == str(n * n)
    with anyio.fail_after(20):  # the other worker takes a task too and stops there (its stop is held: unsaid)
        while True:
            threads = (await tools("debug_stack", all_threads=True))["threads"]
            if sum(1 for t in threads if t["frames"] and t["frames"][0]["function"] == "work") == 2:
                break
            await anyio.sleep(0.05)
    await tools("debug_clear", all=True)
    held = await tools("debug_continue", timeout_s=20)  # the other worker's stop, made before the clear
    assert held["state"] == "stopped" and held["location"]["line"] == line, held
    assert held["thread_name"] != report["thread_name"], held
    assert "before it was removed" in held["note"] and held["thread_name"] in held["note"], held
    done = await tools("debug_continue", timeout_s=20)
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    assert "squares [0, 1, 4, 9]" in (await tools("debug_output"))["text"]
    await tools("debug_terminate")


async def test_a_child_processs_output_is_shown_once_without_the_debuggers_messages(tools: Tools) -> None:
    """The child inherits the program's stdout and stderr, which the debugger already reads; pydevd's warnings
    (a child runs without -X frozen_modules=off, and pydevd says so on stderr) are the debugger's, not the
    program's."""
    parent = program("runs_a_child.py")
    done = await tools("debug_launch", program=parent, args=["1", "2"])
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    output = (await tools("debug_output"))["text"]
    for child in ("1", "2"):
        assert output.count(f"child {child} says hello") == 1 and output.count(f"child {child} done") == 1, output
        assert output.count(f"child {child} warns") == 1, output  # stderr too
    assert "Debugger warning" not in output and "frozen" not in output, output
    assert output.count("parent saw 0") == 2, output
    # in the order it happened: each child's start is said before it prints (was: after its first lines)
    started = [found.start() for found in re.finditer(r"\[child process \d+ started: [^\]]*\]", output)]
    assert [output.index(f"child {child} says hello") > at for child, at in zip("12", started, strict=True)] == \
        [True, True], output  # (a child's stdout and stderr may share a line: they are read as they come)
    await tools("debug_terminate")


async def test_a_child_that_ends_before_it_is_attached_is_said_so_not_called_a_failure(tools: Tools) -> None:
    done = await tools("debug_launch", program=program("runs_a_child.py"), args=["quick"])
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    output = (await tools("debug_output"))["text"]
    assert "parent ran them" in output, output
    assert "could not be debugged" not in output, output  # was: "…: Server[3] disconnected unexpectedly", or ": "
    for note in re.findall(r"\[child process \d+ [^\]]*\]", output):
        assert "started: debugged in this session" in note or "ended before the debugger attached" in note, note
    await tools("debug_terminate")


async def test_a_child_that_cannot_be_attached_in_time_is_ended_and_said_so(
        tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    """A child waits until a debugger attaches to it; one that cannot be attached (here: in 50 ms) is ended, so
    its parent goes on, and the output says so (its parent sees it killed, not an exit code of its own)."""
    monkeypatch.setattr(children, "ATTACH_S", 0.05)
    done = await tools("debug_launch", program=program("runs_a_child.py"), args=["exits3"], timeout_s=60)
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    output = (await tools("debug_output"))["text"]
    assert re.search(r"\[child process \d+ could not be debugged, and was ended: ", output), output
    await tools("debug_terminate")


async def test_a_child_keeps_its_exit_code(tools: Tools) -> None:
    done = await tools("debug_launch", program=program("runs_a_child.py"), args=["exits3"], timeout_s=60)
    assert done["state"] == "exited" and "parent saw 3" in (await tools("debug_output"))["text"], done
    await tools("debug_terminate")
