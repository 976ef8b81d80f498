"""Threads and stacks under gdb, and the frame selection every other part uses.

The session addresses a frame as ``FrameRef(thread, index)``; gdb takes ``--thread T --frame L`` on
each command (no ``-thread-select``/``-stack-select-frame`` round trip, and no selection left behind).
L is the index plus the runtime's frames hidden on the stopped thread at a C++ throw/catch, a Rust
panic or a SIGABRT (``__cxa_throw``, ``rust_panic``, ``abort``/``raise``): the frames above the first
one whose source file is here and not the runtime's, so frame 0 is the code that threw or called
``abort()``/``assert()``. How many are hidden is read once per stop (``-stack-list-frames 0 15``) and
only on the thread the stop is about.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

from polydbg.backends.base import Frame, FrameRef, Thread
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.stops import machinery
from polydbg.backends.gdb.values import to_int
from polydbg.backends.kit import mutexes, timeouts
from polydbg.backends.kit.frames import FrameHandles, leading
from polydbg.errors import AdapterError, AdapterRequestError

MACHINERY_DEPTH = 15  # frames read to find the first of the user's at a throw, panic or abort


class Frames:
    def __init__(self, gdb: GdbState) -> None:
        self._gdb = gdb
        self._handles: FrameHandles[None] = FrameHandles()  # machinery frames hidden at this stop
        self._above: list[Frame] = []  # the hidden frames, where the stop lists them (a watchpoint in memcpy)
        self._tops: dict[int, list[Frame]] = {}  # the innermost frames listed at this stop, nothing hidden

    def forget(self) -> None:
        """The program moved: the hidden frames are counted again at the next stop."""
        self._handles.clear()
        self._above = []
        self._tops.clear()

    async def threads(self) -> list[Thread]:
        result = await self._gdb.cmd("-thread-info")
        return threads_of(result.payload)

    async def kernel_ids(self) -> dict[int, int]:
        """The kernel's thread id (LWP) → gdb's thread id, of every thread."""
        threads = (await self._gdb.cmd("-thread-info")).payload.get("threads") or []
        return {lwp: to_int(t["id"]) for t in threads if isinstance(t, dict) and t.get("id")
                and (lwp := mutexes.lwp_of(str(t.get("target-id") or ""))) is not None}

    async def tops(self, thread_ids: list[int], depth: int) -> dict[int, list[Frame]]:
        """The innermost ``depth`` frames of each thread, nothing hidden: as a listing at this stop read them, the
        rest asked in one round trip."""
        asked = [t for t in thread_ids if t not in self._tops]
        sent = [(t, self._gdb.client.send(f"-stack-list-frames --thread {t} 0 {depth - 1}")) for t in asked]
        for thread, future in sent:
            with contextlib.suppress(AdapterError):
                [result] = await self._gdb.client.gather([("-stack-list-frames", future)], timeouts.INSPECT_S)
                stack = result.payload.get("stack") or []
                self._tops[thread] = [frame_of(f) for f in stack if isinstance(f, dict)]
        return {t: self._tops.get(t, []) for t in thread_ids}

    async def where(self, frame: FrameRef | None) -> str:
        """The ``--thread T --frame L`` options selecting a frame (L counts the hidden frames too)."""
        if frame is None or not frame.thread_id:
            return ""
        level = frame.index + await self.hidden(frame.thread_id)
        return f"--thread {frame.thread_id} --frame {level} "

    async def hidden(self, thread_id: int) -> int:
        """How many runtime frames are hidden at the top of the thread's stack (0 but at a throw, catch,
        panic or abort, on the thread that stopped)."""
        if thread_id != self._gdb.stop.machinery_thread:
            return 0
        hidden = self._handles.hidden(thread_id)
        if hidden is None:
            hidden = 0
            with contextlib.suppress(AdapterRequestError):
                top = await self._gdb.cmd(f"-stack-list-frames --thread {thread_id} 0 {MACHINERY_DEPTH}")
                listed = [f for f in top.payload.get("stack") or [] if isinstance(f, dict)]
                hidden = leading(listed, machinery)
                if self._gdb.stop.listed_above:
                    self._above = [frame_of(f) for f in listed[:hidden]]
            self._handles.hide(thread_id, hidden)
        return hidden

    async def above(self, thread_id: int) -> list[Frame]:
        """The hidden library frames a stack lists above frame 0 (a watchpoint that fired inside memcpy)."""
        await self.hidden(thread_id)
        return self._above if thread_id == self._gdb.stop.machinery_thread else []

    async def stack_trace(self, thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        thread = f"--thread {thread_id} " if thread_id else ""
        skip = await self.hidden(thread_id)
        frames, total = await self._frames(thread, start + skip, levels)
        if start + skip == 0 and (len(frames) >= mutexes.TOP_FRAMES or total == len(frames)):
            self._tops[thread_id] = frames
        return frames, (total - skip if total is not None else None)

    async def _frames(self, thread: str, start: int, levels: int) -> tuple[list[Frame], int | None]:
        """Frames ``start..start+levels`` (one more is asked: if it comes, the depth is asked too)."""
        result = await self._gdb.cmd(f"-stack-list-frames {thread}{start} {start + levels}")
        stack = result.payload.get("stack") or []
        frames = [frame_of(f) for f in (stack if isinstance(stack, list) else []) if isinstance(f, dict)]
        if len(frames) <= levels:
            return frames, start + len(frames)
        depth = await self._gdb.cmd(f"-stack-info-depth {thread}".rstrip())
        return frames[:levels], to_int(depth.payload.get("depth")) or None


def threads_of(payload: dict[str, Any]) -> list[Thread]:
    """The threads of a ``-thread-info`` answer, named by gdb's name or target id."""
    threads = payload.get("threads") or []
    out = []
    for t in threads if isinstance(threads, list) else []:
        if isinstance(t, dict) and t.get("id"):
            out.append(Thread(to_int(t["id"]), str(t.get("name") or t.get("target-id") or f"thread {t['id']}")))
    return out


def frame_of(frame: dict[str, Any]) -> Frame:
    """A frame of a ``-stack-list-frames`` answer: gdb's absolute ``fullname`` when it has one, else ``file``."""
    fullname = frame.get("fullname")
    path = fullname if isinstance(fullname, str) and os.path.isabs(fullname) else frame.get("file")
    return Frame(name=str(frame.get("func") or "??"), file=str(path) if path else None,
                 line=to_int(frame.get("line")) or None, pc=to_int(frame.get("addr"), 0, 16) or None)

