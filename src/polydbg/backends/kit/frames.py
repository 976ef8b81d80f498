"""Frames of one stop by (thread, index), and the runtime frames hidden above the user's code.

The session addresses frames as ``FrameRef(thread, index)``; a backend resolves that to its
protocol's frame handle. ``FrameHandles`` remembers the handles a stack listing returned (index
counted from the innermost *shown* frame) until the program moves; ``leading`` counts the frames
to hide at the top of a stack (a panic's or abort's machinery, Go's runtime) — never all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Generic, TypeVar

from polydbg.backends.base import FrameRef

H = TypeVar("H")
F = TypeVar("F")


class FrameHandles(Generic[H]):
    def __init__(self) -> None:
        self._handles: dict[int, dict[int, H]] = {}
        self._hidden: dict[int, int] = {}

    def remember(self, thread_id: int, start: int, handles: Sequence[H]) -> None:
        known = self._handles.setdefault(thread_id, {})
        for offset, handle in enumerate(handles):
            known[start + offset] = handle

    def get(self, frame: FrameRef) -> H | None:
        return self._handles.get(frame.thread_id, {}).get(frame.index)

    def hidden(self, thread_id: int) -> int | None:
        """How many frames are hidden at the top of the thread's stack (None: not decided yet)."""
        return self._hidden.get(thread_id)

    def hide(self, thread_id: int, count: int) -> None:
        self._hidden[thread_id] = count

    def clear(self) -> None:
        self._handles.clear()
        self._hidden.clear()


def leading(frames: Sequence[F], hidden: Callable[[F], bool]) -> int:
    """How many frames at the top satisfy ``hidden``; 0 when they all do (nothing of the user's left)."""
    count = 0
    while count < len(frames) and hidden(frames[count]):
        count += 1
    return count if count < len(frames) else 0


_RUNTIME_SOURCES = ("/usr/include/", "/usr/lib/gcc/", "/rustc/")


def is_runtime_source(path: str) -> bool:
    """A source file of the language runtime (libstdc++'s headers, Rust's std), not the program's: at a
    throw, panic or abort the frames there are hidden, so the stop is reported where the user's code
    called into it (a std::out_of_range from vector::at stops at the .at() call, not in stl_vector.h)."""
    return path.startswith(_RUNTIME_SOURCES) or "/lib/rustlib/src/rust/library/" in path


def library_call(function: str) -> str:
    """What a stop adds when it happened inside library code and is reported at the user's call (a watched
    variable written by memcpy): the frames hidden above frame 0 are still listed by the stack."""
    return f"inside {function} (library code called from here)"
