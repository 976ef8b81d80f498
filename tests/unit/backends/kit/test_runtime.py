"""A runtime debugger's own process: its pipes decoded as they come, its exit code once its output is read (or
the grace has passed), and its end reported as an exit or as a termination that names the signal."""

from __future__ import annotations

import asyncio
import signal
from typing import cast

import pytest

from polydbg.backends.kit import runtime
from polydbg.backends.kit.lifecycle import Lifecycle
from tests.fakes import RecordingListener

DEADLINE_S = 2.0


class Exited:
    """A process that has exited with ``code`` (``exit_code`` only awaits ``wait``)."""

    def __init__(self, code: int) -> None:
        self.code = code
        self.waited = asyncio.Event()

    async def wait(self) -> int:
        self.waited.set()
        return self.code


def as_process(fake: Exited) -> asyncio.subprocess.Process:
    return cast("asyncio.subprocess.Process", fake)


async def test_pump_keeps_a_character_split_across_reads_whole() -> None:
    reader = asyncio.StreamReader()
    texts: list[str] = []
    got = asyncio.Event()

    def emit(text: str) -> None:
        texts.append(text)
        got.set()

    reader.feed_data("café ".encode() + b"\xe2\x82")  # the euro sign's first two bytes
    pumping = asyncio.ensure_future(runtime.pump(reader, emit))
    await asyncio.wait_for(got.wait(), DEADLINE_S)
    assert texts == ["café "]  # the partial character is held back, not replaced
    reader.feed_data(b"\xac!\n")
    reader.feed_eof()
    await asyncio.wait_for(pumping, DEADLINE_S)
    assert "".join(texts) == "café €!\n" and "\ufffd" not in "".join(texts)


async def test_pump_replaces_a_character_cut_by_the_end_of_the_pipe() -> None:
    reader = asyncio.StreamReader()
    texts: list[str] = []
    reader.feed_data(b"ok \xe2\x82")
    reader.feed_eof()
    await asyncio.wait_for(runtime.pump(reader, texts.append), DEADLINE_S)
    assert "".join(texts) == "ok \ufffd"


async def test_exit_code_waits_for_the_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "OUTPUT_GRACE_S", 60.0)  # the readers finish first: the grace is not what ends it
    process = Exited(3)
    last_output = asyncio.Event()
    reader = asyncio.ensure_future(last_output.wait())
    waiting = asyncio.ensure_future(runtime.exit_code(as_process(process), [cast("asyncio.Task[None]", reader)]))
    await asyncio.wait_for(process.waited.wait(), DEADLINE_S)
    for _ in range(5):
        await asyncio.sleep(0)
    assert not waiting.done()  # exited, but its output is still being read
    last_output.set()
    assert await asyncio.wait_for(waiting, DEADLINE_S) == 3


async def test_exit_code_waits_no_longer_than_the_grace(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "OUTPUT_GRACE_S", 0.01)
    held = asyncio.ensure_future(asyncio.Event().wait())  # a child that keeps the pipe open
    try:
        code = await asyncio.wait_for(runtime.exit_code(as_process(Exited(0)), [cast("asyncio.Task[None]", held)]),
                                      DEADLINE_S)
        assert code == 0
        assert not held.done()  # the reader is left to finish on its own, not cancelled
    finally:
        held.cancel()


def test_report_end_is_an_exit_with_its_code_or_without_one_and_an_end_naming_the_signal() -> None:
    """A signal is an exit too (the session reads which from the kernel); the end names it for when it cannot."""
    cases: dict[int | None, list[tuple[str, object]]] = {
        0: [("exited", 0), ("terminated", None)],
        3: [("exited", 3), ("terminated", None)],
        None: [("exited", None), ("terminated", None)],
        -9: [("exited", None), ("terminated", "node was killed by SIGKILL; look at dmesg")],
        -11: [("exited", None), ("terminated", "node was killed by SIGSEGV; look at dmesg")],
        -200: [("exited", None), ("terminated", "node was killed by signal 200; look at dmesg")],  # no such signal
    }
    for code, events in cases.items():
        listener = RecordingListener()
        life = Lifecycle("node", listener)
        runtime.report_end(life, code, "node", "; look at dmesg")
        runtime.report_end(life, 1, "node")  # the end is reported once, whoever reports it next
        assert listener.events == events, code


def test_an_exit_is_not_a_kill() -> None:
    assert runtime.killed_by(0, "node") is None
    assert runtime.killed_by(3, "node") is None
    assert runtime.killed_by(None, "node") is None


def test_a_signal_is_named() -> None:
    killed = runtime.killed_by(-signal.SIGKILL, "node", "; node stderr: x")
    assert killed == "node was killed by SIGKILL; node stderr: x"
    assert runtime.killed_by(-200, "the JVM") == "the JVM was killed by signal 200"


