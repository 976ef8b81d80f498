"""A program's exit status as its end: an exit, or a termination naming the signal."""

from __future__ import annotations

import signal

from polydbg.backends.kit.runtime import killed_by, report_end
from tests.fakes import RecordingListener


def test_an_exit_is_not_a_kill() -> None:
    assert killed_by(0, "node") is None
    assert killed_by(3, "node") is None
    assert killed_by(None, "node") is None


def test_a_signal_is_named() -> None:
    assert killed_by(-signal.SIGKILL, "node", "; node stderr: x") == "node was killed by SIGKILL; node stderr: x"
    assert killed_by(-200, "the JVM") == "the JVM was killed by signal 200"


def test_report_end_reports_an_exit_then_the_end_or_the_kill() -> None:
    listener = RecordingListener()
    report_end(listener, 2, "node")
    report_end(listener, -signal.SIGTERM, "node")
    assert listener.events == [("exited", 2), ("terminated", None), ("terminated", "node was killed by SIGTERM")]
