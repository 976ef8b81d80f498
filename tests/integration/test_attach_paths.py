"""One path convention for attached sessions, whatever the debugger: paths in answers are relative to the
directory polydbg runs in (where relative tool arguments are taken from, as a launched session's are relative
to its ``cwd``), so what a report shows can be passed back as it is. Checked on debugpy and Node."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def in_programs(monkeypatch: pytest.MonkeyPatch) -> Path:
    """polydbg (in this process) runs in tests/programs: the attached programs' files lie below it."""
    monkeypatch.chdir(PROGRAMS)
    return PROGRAMS


@contextlib.asynccontextmanager
async def _program(*argv: str, ready: bytes) -> AsyncIterator[asyncio.subprocess.Process]:
    """A program started outside polydbg, once it printed ``ready`` (on stdout or stderr)."""
    process = await asyncio.create_subprocess_exec(*argv, stdin=asyncio.subprocess.PIPE,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                   start_new_session=True)
    assert process.stdout is not None
    try:
        while ready not in (line := await asyncio.wait_for(process.stdout.readline(), 30)):
            assert line, f"{argv} ended before printing {ready!r}"
        yield process
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):  # ended by the session, and reaped meanwhile
                os.killpg(process.pid, signal.SIGKILL)  # the program and any adapter it spawned
        await process.communicate()


async def _check_relative(tools: Tools, file: str, line: int, function: str) -> None:
    """The attached session's report, stack and breakpoint list show ``file`` (relative) and never its absolute path."""
    absolute = str(PROGRAMS / file)
    for tool in ("debug_stack", "debug_breakpoints"):
        text = await tools.text(tool)
        assert f"{file}:{line}" in text and absolute not in text, text
    source = await tools.text("debug_source", file=file, line=line)
    assert source.startswith(f"{file} lines "), source
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert (frames[0]["file"], frames[0]["function"]) == (absolute, function), frames  # structured: absolute


async def test_a_python_program_attached_over_its_debug_server(tools: Tools, in_programs: Path) -> None:
    port = _free_port()
    line = line_of("attach_target.py", "# attach stop")
    python = str(Path(sys.prefix) / "bin" / "python")
    async with _program(python, "-X", "frozen_modules=off", "listen_then_run.py", f"127.0.0.1:{port}",
                            "attach_target.py", ready=b"listening"):
        text = await tools.text("debug_attach", port=port, timeout_s=30,
                                breakpoints=[{"file": "attach_target.py", "line": line}])
        assert f"at attach_target.py:{line} in work" in text, text
        await _check_relative(tools, "attach_target.py", line, "work")
        await tools("debug_terminate")


async def test_a_node_program_attached_over_its_inspector(tools: Tools, in_programs: Path) -> None:
    require("node")
    port = _free_port()
    line = line_of("node/busy.js", "busy loop")
    async with _program("node", f"--inspect=127.0.0.1:{port}", "node/busy.js", ready=b"Debugger listening"):
        text = await tools.text("debug_attach", port=port, language="javascript",
                                breakpoints=[{"file": "node/busy.js", "line": line}])
        assert f"at node/busy.js:{line} in " in text, text
        function = (await tools("debug_stack"))["threads"][0]["frames"][0]["function"]
        await _check_relative(tools, "node/busy.js", line, function)
        await tools("debug_terminate")
