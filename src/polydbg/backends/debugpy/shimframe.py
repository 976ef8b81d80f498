"""The launch shim's frame, left out of every stack wherever pydevd lists it.

pydevd lists a thread's frames innermost first down to the launch shim's ``<module>`` (file ``<string>``: the shim
runs as ``python -c``), and at an exception stop whose exception chains another (``raise … from error``, or one
raised while handling another) it lists after it the pseudo-frames of each chained exception (``[Chained Exc: 'k']
load``). The shim's frame is polydbg's, not the program's: it was left out only when it ended a stack, so after
a chained exception it was listed between the program's frames and the chained ones (``#3 <module> at
<string>:276``). It is left out wherever it is; the frames after it are shown one index up (their handles moved
with them), and a later page of the stack is read one frame further down.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from polydbg.backends.base import Frame, FrameRef
from polydbg.backends.kit.frames import FrameHandles

CHAINED = "[Chained Exc:"  # how pydevd names a chained exception's frames
Read = Callable[[int, int, int], Awaitable[tuple[list[Frame], int | None]]]


def is_shim(frame: Frame) -> bool:
    return frame.file == "<string>" and frame.name == "<module>"


class ShimFrame:
    def __init__(self) -> None:
        self._at: dict[int, int] = {}  # a thread's shown index where the shim's frame was: frames from it on, one up

    def forget(self) -> None:
        """A new stop: its stacks are read anew."""
        self._at.clear()

    async def stack_trace(self, read: Read, handles: FrameHandles[int], thread_id: int, start: int,
                          levels: int) -> tuple[list[Frame], int | None]:
        """``levels`` frames from ``start`` as ``read`` lists them (pydevd's), without the shim's frame."""
        at = self._at.get(thread_id)
        if at is not None and start >= at:  # past the shim's frame: read one further down, shown one up
            frames, total = await read(thread_id, start + 1, levels)
            _move(handles, thread_id, start + 1, len(frames))
            return frames, (total - 1 if total is not None else None)
        frames, total = await read(thread_id, start, levels + 1)  # one more: is a shim's frame at the end the shim's
        ends = total is None or start + len(frames) >= total
        found = next((n for n, frame in enumerate(frames) if is_shim(frame) and (n + 1 < len(frames) or ends)
                      and all(after.name.startswith(CHAINED) for after in frames[n + 1:])), None)
        if found is None:
            if total is not None and start + len(frames) < total:
                total -= 1  # the shim frame is further down
            return frames[:levels], total
        self._at[thread_id] = start + found
        _move(handles, thread_id, start + found + 1, len(frames) - found - 1)
        return (frames[:found] + frames[found + 1:])[:levels], (total - 1 if total is not None else None)


def _move(handles: FrameHandles[int], thread_id: int, first: int, count: int) -> None:
    """The handles of ``count`` frames from index ``first`` on, each one index up."""
    for index in range(first, first + count):
        handle = handles.get(FrameRef(thread_id, index))
        if handle is not None:
            handles.remember(thread_id, index - 1, [handle])
