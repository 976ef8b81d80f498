"""pydevd's own messages, kept out of the program's stderr and put in polydbg's log.

pydevd (debugpy's debugger inside the debuggee) writes its warnings to the debuggee's stderr: "thread._ident
is None in _get_related_thread!", "Debugger warning: It seems that frozen modules are being used" (every
child process, which runs without ``-X frozen_modules=off``), tracebacks of its own failures. The agent read
them as the program's. pydevd writes them to a file instead when ``PYDEVD_DEBUG_FILE`` names one (one file
per process: ``pydevd.<pid>.log``; children inherit the variable); polydbg gives each launch a private
directory for them and logs their lines, named by process, when the session ends. The lines also explain a
debuggee that dies in pydevd (``tail``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import tempfile
from pathlib import Path

log = logging.getLogger(__name__)

ENV = "PYDEVD_DEBUG_FILE"
_PID = re.compile(r"\.(\d+)\.log$")
_TIME = re.compile(r"^\d+\.\d+s - ")  # pydevd's prefix: seconds since its previous message


class PydevdLog:
    """A private directory for pydevd's messages in one launch (the program and its children)."""

    def __init__(self) -> None:
        self._directory: str | None = None

    def env(self) -> dict[str, str]:
        """The variable that sends pydevd's messages here (made on first use)."""
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="polydbg-pydevd-")
        return {ENV: os.path.join(self._directory, "pydevd.log")}

    def messages(self) -> dict[int, list[str]]:
        """Each process's messages so far (pid → lines, pydevd's time prefix cut)."""
        found: dict[int, list[str]] = {}
        if self._directory is None:
            return found
        with contextlib.suppress(OSError):
            for path in sorted(Path(self._directory).iterdir()):
                pid = _PID.search(path.name)
                with contextlib.suppress(OSError):
                    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
                    found[int(pid[1]) if pid else 0] = [_TIME.sub("", line) for line in lines if line.strip()]
        return found

    def tail(self, pid: int | None = None, lines: int = 8) -> str:
        """The last messages (of one process, or of all), for an error that pydevd may explain."""
        messages = self.messages()
        chosen = [line for p, found in messages.items() if pid is None or p == pid for line in found]
        return "\n".join(chosen[-lines:])

    def close(self) -> None:
        """Log every message, then remove the directory."""
        for pid, lines in self.messages().items():
            for line in lines:
                log.info("pydevd (pid %s): %s", pid, line)
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None
