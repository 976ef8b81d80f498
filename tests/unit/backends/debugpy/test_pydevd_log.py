"""pydevd's messages: one file per process in a private directory, read back by pid and logged at the end."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from polydbg.backends.debugpy.pydevd_log import ENV, PydevdLog


def test_messages_are_read_per_process_without_pydevds_time_prefix(caplog: pytest.LogCaptureFixture) -> None:
    messages = PydevdLog()
    assert messages.messages() == {} and messages.tail() == ""  # nothing made before it is asked for
    target = Path(messages.env()[ENV])
    directory = target.parent
    assert oct(directory.stat().st_mode & 0o777) == "0o700"
    (directory / "pydevd.4242.log").write_text("0.00s - thread._ident is None in _get_related_thread!\n\n")
    (directory / "pydevd.4243.log").write_text("0.01s - Debugger warning: frozen modules\n1.20s - second\n")
    assert messages.messages() == {4242: ["thread._ident is None in _get_related_thread!"],
                                   4243: ["Debugger warning: frozen modules", "second"]}
    assert messages.tail(4243, lines=1) == "second"
    with caplog.at_level(logging.INFO, logger="polydbg.backends.debugpy.pydevd_log"):
        messages.close()
    assert "pydevd (pid 4242): thread._ident is None" in caplog.text
    assert not os.path.exists(directory)
    messages.close()  # idempotent
