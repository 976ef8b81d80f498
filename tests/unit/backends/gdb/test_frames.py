"""Threads, frames and frame selection under gdb (frames.py): the runtime's frames hidden at a throw or
abort, counted once per stop. gdb is a script of answers: no gdb runs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from polydbg.backends.base import Frame, FrameRef, Thread
from polydbg.backends.gdb.frames import Frames, frame_of, threads_of
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.stops import StopFacts, machinery
from polydbg.mi.client import MiResult


class StackGdb(GdbState):
    def __init__(self, stack: list[dict[str, Any]]) -> None:
        super().__init__("cpp")
        self.stack = stack
        self.sent: list[str] = []

    async def cmd(self, command: str) -> MiResult:
        self.sent.append(command)
        return MiResult("done", {"stack": self.stack, "depth": "9"})


def test_threads_are_named_by_gdb_or_their_target_id() -> None:
    payload = {"threads": [{"id": "1", "name": "points", "target-id": "Thread 0x7f (LWP 5)"},
                           {"id": "2", "target-id": "Thread 0x7e (LWP 6)"}, {"id": "3"}, {"name": "no id"}]}
    assert threads_of(payload) == [Thread(1, "points"), Thread(2, "Thread 0x7e (LWP 6)"), Thread(3, "thread 3")]
    assert threads_of({}) == []


def test_a_frame_has_gdbs_absolute_path_else_its_file() -> None:
    assert frame_of({"func": "add", "fullname": "/src/points.c", "file": "points.c", "line": "5",
                     "addr": "0x401136"}) == Frame("add", "/src/points.c", 5, pc=0x401136)
    assert frame_of({"fullname": "points.c", "file": "points.c"}) == Frame("??", "points.c", None)
    assert frame_of({"addr": "0x0"}) == Frame("??", None, None)


def test_machinery_is_a_frame_without_source_here_or_in_the_runtime(tmp_path: Path) -> None:
    source = tmp_path / "main.cpp"
    source.write_text("int main() {}\n")
    assert not machinery({"fullname": str(source), "line": "1"})
    assert machinery({"fullname": str(source)})  # no line
    assert machinery({"fullname": str(tmp_path / "gone.cpp"), "line": "1"})
    assert machinery({"func": "__cxa_throw"})
    assert machinery({"fullname": "/usr/include/c++/12/bits/stl_vector.h", "line": "1"})


async def test_frames_are_hidden_only_on_the_thread_that_threw_and_counted_once(tmp_path: Path) -> None:
    source = tmp_path / "main.cpp"
    source.write_text("int main() {}\n")
    gdb = StackGdb([{"func": "__cxa_throw"}, {"func": "raise"}, {"func": "main", "fullname": str(source),
                                                                "line": "1"}])
    frames = Frames(gdb)
    assert await frames.where(FrameRef(1, 0)) == "--thread 1 --frame 0 " and gdb.sent == []
    assert await frames.where(None) == "" and await frames.where(FrameRef(0, 3)) == ""
    gdb.stop = StopFacts(catch="throw", machinery_thread=1)
    assert await frames.where(FrameRef(1, 1)) == "--thread 1 --frame 3 "
    assert await frames.hidden(1) == 2 and await frames.hidden(2) == 0
    assert gdb.sent == ["-stack-list-frames --thread 1 0 15"]
    frames.forget()
    await frames.hidden(1)
    assert len(gdb.sent) == 2


async def test_a_stack_counts_from_the_first_shown_frame() -> None:
    gdb = StackGdb([{"func": f"f{i}"} for i in range(3)])
    frames, total = await Frames(gdb).stack_trace(1, 0, 2)  # one more came: the depth is asked
    assert [f.name for f in frames] == ["f0", "f1"] and total == 9
    assert gdb.sent == ["-stack-list-frames --thread 1 0 2", "-stack-info-depth --thread 1"]
    gdb.sent.clear()
    assert (await Frames(gdb).stack_trace(0, 0, 5))[1] == 3
    assert gdb.sent == ["-stack-list-frames 0 5"]
