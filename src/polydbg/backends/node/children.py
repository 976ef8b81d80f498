"""Child Node processes of a launched program: how they announce themselves to polydbg.

Each Node process the program starts (``fork``, ``spawn(process.execPath)``, a test runner's worker
processes, ``npm test``'s children) loads ``boot.cjs`` through ``NODE_OPTIONS``: it opens its
inspector on a free loopback port, writes one JSON line ``{pid, ppid, url, argv}`` to a named pipe
polydbg reads, and waits for the debugger. ``--inspect-publish-uid=http`` there keeps the inspector's
"Debugger listening on ws://…" and "For help, see: …" out of the child's stderr (the program's output,
or its parent's: ``node --test`` put them in its TAP stream), and tells Node's test runner a debugger is
there, so it passes its files' other inspector lines ("Debugger attached.", which Node 20-22 print
whatever the options) to its own stderr rather than into the TAP stream (``launcher.StderrFilter`` drops
them). A child whose parent reads its stderr still sees those two lines.

The pipe lives in a private (0700) directory: only the user's processes can announce, and a child whose
polydbg is gone finds no reader and runs on undebugged instead of waiting for ever. A child's ``exit`` is
announced the same way, with its code.

A named pipe, not a socket: the child must announce *synchronously* (``waitForDebugger`` blocks its
event loop right after), and Node has no synchronous socket API; a pipe write below ``PIPE_BUF`` is
atomic, so lines from many children never interleave.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from typing import Any

from polydbg.backends.kit import shims

log = logging.getLogger(__name__)

BOOT = shims.path(__file__, "boot.cjs")
REPORT_VARIABLE = "POLYDBG_NODE_REPORT"
QUIET = "--inspect-publish-uid=http"  # a child's inspector URL is read from inspector.url(), never printed


class ChildReports:
    """The pipe children announce themselves on, read on the event loop."""

    def __init__(self, on_report: Callable[[dict[str, Any]], None]) -> None:
        self._on_report = on_report
        self._directory: str | None = None
        self._fd: int | None = None
        self._pending = b""

    def open(self) -> str:
        """Create the pipe and start reading it; its path."""
        self._directory = tempfile.mkdtemp(prefix="polydbg-node-")
        path = os.path.join(self._directory, "children")
        os.mkfifo(path, 0o600)
        # Read and write: the pipe never reads EOF between one child's announcement and the next.
        self._fd = os.open(path, os.O_RDWR | os.O_NONBLOCK)
        asyncio.get_running_loop().add_reader(self._fd, self._readable)
        return path

    def environment(self, env: Mapping[str, str], path: str) -> dict[str, str]:
        """``env`` with the bootstrap added to ``NODE_OPTIONS`` (after what the user has there), and the
        inspector's banner kept out of the children's stderr."""
        quoted = '"' + str(BOOT).replace("\\", "\\\\").replace('"', '\\"') + '"'
        options = " ".join(filter(None, [env.get("NODE_OPTIONS", "").strip(), f"--require {quoted}", QUIET]))
        return {**env, "NODE_OPTIONS": options, REPORT_VARIABLE: path}

    def _readable(self) -> None:
        assert self._fd is not None
        try:
            chunk = os.read(self._fd, 65536)
        except BlockingIOError:
            return
        except OSError as exc:
            log.warning("node: the child report pipe failed: %s", exc)
            self.close()
            return
        self._pending += chunk
        *lines, self._pending = self._pending.split(b"\n")
        for line in lines:
            try:
                report = json.loads(line)
            except ValueError:
                log.info("node: ignoring a child report that is not JSON: %.200r", line)
                continue
            if isinstance(report, dict):
                self._on_report(report)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._fd)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
            self._directory = None

