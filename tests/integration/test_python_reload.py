"""Edited Python put into the running program through ``debug_continue(reload=true)``, on real debugpy: a copy of
tests/programs/python/reload_loop.py (and the module it imports) is edited while stopped in its loop, and the lines it
prints after the reload show which code each iteration ran. A reload with a syntax error changes nothing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import PROGRAMS, Tools

pytestmark = pytest.mark.anyio

SOURCES = PROGRAMS / "python"


@pytest.fixture
def loop(tmp_path: Path) -> Path:
    """An editable copy of the looping program and the module it imports."""
    for name in ("reload_loop.py", "reload_scale.py"):
        shutil.copy(SOURCES / name, tmp_path / name)
    return tmp_path / "reload_loop.py"


def line(path: Path, marker: str) -> int:
    return next(n for n, text in enumerate(path.read_text().splitlines(), 1) if marker in text)


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (old, path)
    path.write_text(text.replace(old, new))


async def printed(tools: Tools) -> list[str]:
    return [row for row in (await tools("debug_output", stream="stdout", max_bytes=30_000))["text"].splitlines()
            if row.startswith("step(")]


async def run_out(tools: Tools) -> list[str]:
    """The program run to its end with no breakpoint left; the step lines it printed."""
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 0, done
    return await printed(tools)


async def test_a_function_fixed_while_stopped_in_the_loop_that_calls_it_runs_fixed_from_the_next_call(
        tools: Tools, loop: Path) -> None:
    stopped = await tools("debug_launch", program=str(loop),
                          breakpoints=[{"file": str(loop), "line": line(loop, "# the loop")}])
    assert stopped["state"] == "stopped", stopped
    edit(loop, "made = i * 2", "made = i * 3")
    again = await tools("debug_continue", reload=True)
    assert again["state"] == "stopped" and again["location"]["line"] == line(loop, "# the loop"), again
    assert "reloaded reload_loop.py: step" in again["note"], again
    # step(1) was called after the reload: the new code, as every call after it
    assert await run_out(tools) == [f"step({i}) = {i * 3}; scaled {i * 30}" for i in range(1, 6)]


async def test_a_function_fixed_while_stopped_inside_it_finishes_this_call_old_and_runs_new_from_the_next(
        tools: Tools, loop: Path) -> None:
    body = line(loop, "# step's body")
    stopped = await tools("debug_launch", program=str(loop), breakpoints=[{"file": str(loop), "line": body}])
    assert stopped["location"]["function"] == "step", stopped
    edit(loop, "made = i * 2", "made = i * 3")
    again = await tools("debug_continue", reload=True)
    note = again["note"]
    assert "reloaded reload_loop.py: step" in note, again
    assert f"step (reload_loop.py:{body}) is running: this call finishes with the old code" in note, note
    assert again["location"]["function"] == "step" and again["location"]["line"] == body, again
    assert await run_out(tools) == ["step(1) = 2; scaled 20"] + [f"step({i}) = {i * 3}; scaled {i * 30}"
                                                                 for i in range(2, 6)]


async def test_a_method_changed_in_an_imported_module_is_replaced_on_the_objects_made_already(
        tools: Tools, loop: Path) -> None:
    scale = loop.with_name("reload_scale.py")
    await tools("debug_launch", program=str(loop), breakpoints=[{"file": str(loop), "line": line(loop, "# the loop")}])
    edit(scale, "return value * self.factor", "return value * self.factor + 1")
    again = await tools("debug_continue", reload=True)
    assert "reloaded reload_scale.py: Scale.apply" in again["note"], again
    assert await run_out(tools) == [f"step({i}) = {i * 2}; scaled {i * 20 + 1}" for i in range(1, 6)]


async def test_a_syntax_error_reloads_nothing_and_says_where(tools: Tools, loop: Path) -> None:
    at = line(loop, "# the loop")
    await tools("debug_launch", program=str(loop), breakpoints=[{"file": str(loop), "line": at}])
    edit(loop, "made = i * 2", "made = i * 3")  # a good edit beside the broken file: not put in either
    scale = loop.with_name("reload_scale.py")
    edit(scale, "return value * self.factor", "return value * self.factor +")
    refused = await tools.error("debug_continue", reload=True)
    assert f"reload_scale.py:{line(scale, 'self.factor +')}: invalid syntax" in refused, refused
    assert "nothing was reloaded" in refused, refused
    sessions = (await tools("debug_sessions"))["sessions"]
    assert sessions[0]["state"] == "stopped", sessions  # not moved either
    assert await run_out(tools) == [f"step({i}) = {i * 2}; scaled {i * 20}" for i in range(1, 6)]


async def test_a_reload_with_nothing_edited_says_so(tools: Tools, loop: Path) -> None:
    await tools("debug_launch", program=str(loop), breakpoints=[{"file": str(loop), "line": line(loop, "# the loop")}])
    again = await tools("debug_continue", reload=True)
    assert "reload: no source file was edited" in again["note"], again
    await tools("debug_terminate")


async def test_a_reload_in_a_stopped_child_process_leaves_the_parent_with_the_old_code(
        tools: Tools, tmp_path: Path) -> None:
    child = tmp_path / "reload_child.py"
    shutil.copy(SOURCES / "reload_child.py", child)
    stopped = await tools("debug_launch", program=str(child),
                          breakpoints=[{"file": str(child), "line": line(child, "# in the child")}])
    assert stopped["thread_name"].startswith("child process "), stopped
    edit(child, "return n + 1", "return n + 100")
    await tools("debug_clear", all=True)
    done = await tools("debug_continue", reload=True)
    assert done["state"] == "exited", done
    assert "reloaded reload_child.py: part; the parent process keeps the old code" in done["note"], done
    out = (await tools("debug_output", stream="stdout"))["text"].splitlines()
    assert out == ["child 100", "child 101", "child 102", "parent 11"], out
