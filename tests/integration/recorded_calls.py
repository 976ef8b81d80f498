"""What the call-trace tests of every backend share: a session launched at the program's entry, and a run of it
to its end while a backend records calls into a list (the sink the session's call trace gives)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from polydbg.backends.base import LaunchSpec
from polydbg.backends.recording import CallRecord, CallSpec
from polydbg.backends.registry import make_factory
from polydbg.session.model import State
from polydbg.session.session import Session
from tests.conftest import PROGRAMS, Tools

CALLS = PROGRAMS / "calls"


@asynccontextmanager
async def at_entry(language: str, adapter: str, program: str, timeout_s: float) -> AsyncIterator[Session]:
    session = Session("calls", language, adapter, make_factory(adapter, language), program, str(CALLS))
    try:
        report = await session.start(LaunchSpec(program=program, cwd=str(CALLS), stop_on_entry=True), timeout_s, None)
        assert report.reason == "entry", report
        yield session
    finally:
        await session.terminate(False)


async def run_recording(session: Session, *names: str, max_calls: int = 1000,
                        timeout_s: float = 60) -> tuple[list[CallRecord], list[str]]:
    """Record calls of ``names`` while the program runs from its entry to its end: the records, the notes."""
    records: list[CallRecord] = []
    recorder = await session.core.backend.record_calls(CallSpec(names, max_calls=max_calls), records.append)
    report = await session.resume(None, None, timeout_s, None)
    assert report.state == State.exited and report.exit_code == 0, report
    return records, await recorder.stop()


async def launched_with_trace(tools: Tools, functions: list[str], **launch: Any) -> tuple[dict[str, Any], list[str]]:
    """A launch recording ``functions`` from the program's first line to its end, through the MCP tools: the
    trace its answer carries, and every row of the trace log."""
    report = await tools("debug_launch", trace=functions, **launch)
    assert report["state"] == "exited" and report["exit_code"] == 0, report
    trace: dict[str, Any] = report["trace"]
    rows = (await tools("debug_output", stream="trace", max_bytes=30_000))["text"].splitlines()
    return trace, rows
