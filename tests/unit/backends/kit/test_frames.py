"""Frame handles of one stop by (thread, index), the runtime frames hidden at the top (never all of them), and
which sources belong to a language's runtime."""

from __future__ import annotations

from polydbg.backends.base import FrameRef
from polydbg.backends.kit.frames import FrameHandles, is_runtime_source, leading


def test_handles_are_remembered_per_thread_from_their_start_index() -> None:
    frames: FrameHandles[str] = FrameHandles()
    frames.remember(1, 0, ["a0", "a1"])
    frames.remember(1, 2, ["a2"])  # the next page of the same stack
    frames.remember(2, 0, ["b0"])
    assert [frames.get(FrameRef(1, i)) for i in range(4)] == ["a0", "a1", "a2", None]
    assert frames.get(FrameRef(2, 0)) == "b0" and frames.get(FrameRef(3, 0)) is None


def test_hidden_counts_are_undecided_until_set_and_everything_goes_at_clear() -> None:
    frames: FrameHandles[int] = FrameHandles()
    assert frames.hidden(1) is None
    frames.hide(1, 0)
    frames.hide(2, 3)
    assert (frames.hidden(1), frames.hidden(2)) == (0, 3)  # 0 is decided: nothing to hide
    frames.remember(1, 0, [10])
    frames.clear()
    assert frames.hidden(1) is None and frames.get(FrameRef(1, 0)) is None


def test_leading_counts_the_runtime_frames_at_the_top_but_never_all() -> None:
    cases = {
        "RRu": 2,
        "Ruu": 1,
        "uRR": 0,  # only frames at the top are hidden
        "RRR": 0,  # all the runtime's: nothing of the user's would be left, so nothing is hidden
        "R": 0,
        "": 0,
    }
    assert {stack: leading(list(stack), lambda frame: frame == "R") for stack in cases} == cases


def test_runtime_sources_are_the_language_runtimes_not_the_program() -> None:
    runtime = [
        "/usr/include/c++/12/bits/stl_vector.h",
        "/usr/lib/gcc/x86_64-linux-gnu/12/include/stddef.h",
        "/rustc/90b35a6239c3d8bdabc530a6a0816f7ff89a0aaf/library/core/src/panicking.rs",
        "/home/me/.rustup/toolchains/stable-x86_64-unknown-linux-gnu/lib/rustlib/src/rust/library/std/src/rt.rs",
    ]
    programs = [
        "/home/me/project/src/main.rs",
        "/home/me/usr/include/mine.h",  # the prefix must start the path
        "main.c",
    ]
    assert [path for path in runtime if not is_runtime_source(path)] == []
    assert [path for path in programs if is_runtime_source(path)] == []
