"""The real ``polydbg serve`` subprocess over stdio: clean stdout, and no process outlives the server.

Each test starts the server through the SDK's stdio client, stops a debuggee at a breakpoint, records
every process below the server (adapter, launcher, debuggee), ends the server one way or another and
then waits (pidfd + select, never sleep) for each recorded process to go. The test process is a child
subreaper (see conftest), so orphans are reparented to it and the autouse fixture reaps them.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.conftest import PROGRAMS, Tools, descendants, line_of, process_table, program, require

BASIC = program("basic.py")
SPIN = program("spin.py")
# The SDK's stdio client waits this long after closing stdin before it SIGTERMs the server's group.
SDK_GRACE_S = 2.0


def _server(env: dict[str, str] | None = None) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=["-m", "polydbg", "serve"], env=env,
                                 cwd=str(Path(__file__).parents[2]))




def _server_pid() -> int:
    me = os.getpid()
    (pid,) = [pid for pid, (ppid, cmd) in process_table().items() if ppid == me and "polydbg serve" in cmd]
    return pid


def _role(cmdline: str) -> str:
    if "polydbg-guard" in cmdline:  # the guard every debugger runs under (polydbg.guard)
        return "guard"
    if "debugpy.adapter" in cmdline:
        return "adapter"
    if " --connect " in cmdline:  # debugpy's launcher runs the debuggee under debugpy --connect <adapter>
        return "debuggee"
    if "debugpy/launcher" in cmdline:
        return "launcher"
    return "other"


class _Watch:
    """pidfds of processes that must end; opened while they are alive so pid reuse cannot fool us."""

    def __init__(self, pids: dict[int, str]) -> None:
        self.fds = {}
        for pid, cmd in pids.items():
            try:
                self.fds[pid] = (os.pidfd_open(pid), cmd)
            except ProcessLookupError:
                continue

    def survivors(self, timeout_s: float) -> dict[int, str]:
        """The processes still alive after waiting up to ``timeout_s`` for all of them."""
        deadline = time.monotonic() + timeout_s
        pending = dict(self.fds)
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            ready, _, _ = select.select([fd for fd, _ in pending.values()], [], [], remaining)
            pending = {pid: (fd, cmd) for pid, (fd, cmd) in pending.items() if fd not in ready}
        return {pid: f"{_role(cmd)}: {cmd[:200]}" for pid, (_, cmd) in pending.items()}

    def close(self) -> None:
        for fd, _ in self.fds.values():
            os.close(fd)


def _survivors_of_sigkill(server: int, below: dict[int, str]) -> dict[int, str]:
    """SIGKILL the server; the processes that were below it and are still alive 5 s later."""
    watch = _Watch(below)
    try:
        os.kill(server, signal.SIGKILL)
        return watch.survivors(5.0)
    finally:
        watch.close()


@asynccontextmanager
async def _stopped_session(prog: str, marker: str, env: dict[str, str] | None = None
                           ) -> AsyncIterator[tuple[Client, int, dict[int, str]]]:
    """A real server with a debuggee stopped at the line containing ``marker``."""
    async with Client(_server(env)) as client:
        tools = Tools(client)
        name = os.path.basename(prog)
        report = await tools("debug_launch", program=prog, breakpoints=[{"file": prog, "line": line_of(name, marker)}])
        assert report["state"] == "stopped", report
        server = _server_pid()
        below = descendants(server, idle_guards=True)
        table = process_table()
        idle = {pid for pid in below if _role(below[pid]) == "guard"  # a warm guard (polydbg.warm): it must die too
                and not any(ppid == pid for ppid, _ in table.values())}
        roles = sorted(_role(cmd) for pid, cmd in below.items() if pid not in idle)
        assert roles == ["adapter", "debuggee", "guard", "launcher"] and len(idle) <= 1, below
        yield client, server, below


async def test_closing_stdin_ends_the_server_and_every_debug_process() -> None:
    async with _stopped_session(BASIC, "total = a + b") as (_client, server, below):
        watch = _Watch({server: "polydbg serve", **below})
        closing = time.monotonic()
    took = time.monotonic() - closing
    try:
        assert not watch.survivors(5.0)
    finally:
        watch.close()
    # it went on its own at stdin EOF, not because the SDK escalated to SIGTERM after its grace period
    assert took < SDK_GRACE_S, f"the server needed {took:.1f} s to exit after stdin closed"


async def test_sigterm_ends_the_server_and_every_debug_process() -> None:
    async with _stopped_session(BASIC, "total = a + b") as (_client, server, below):
        watch = _Watch(below)
        server_fd = os.pidfd_open(server)
        try:
            os.kill(server, signal.SIGTERM)
            survivors = watch.survivors(5.0)
            assert not survivors, f"alive 5 s after SIGTERM to the server: {survivors}"
            # the server itself must exit too, although its client still holds stdin open
            assert select.select([server_fd], [], [], 5.0)[0], "the server is still running 5 s after SIGTERM"
        finally:
            os.close(server_fd)
            watch.close()


async def test_sigkill_of_the_server_takes_the_debug_processes_along() -> None:
    # spin.py never ends by itself, so a debuggee that outlives the server stays visible
    async with _stopped_session(SPIN, "# spin here") as (_client, server, below):
        survivors = _survivors_of_sigkill(server, below)
        assert not survivors, f"alive 5 s after the server was SIGKILLed: {survivors}"


async def test_stdout_carries_only_json_rpc_with_debug_logging(tmp_path: Path) -> None:
    problems: list[Exception] = []

    async def on_message(message: object) -> None:
        if isinstance(message, Exception):  # e.g. a stdout line that is not JSON-RPC
            problems.append(message)

    stderr_file = tmp_path / "server-stderr.txt"
    with stderr_file.open("w") as errlog:
        transport = stdio_client(_server({"POLYDBG_LOG_LEVEL": "DEBUG"}), errlog=errlog)
        async with Client(transport, message_handler=on_message) as client:
            tools = Tools(client)
            line = line_of("basic.py", "total = a + b")
            report = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
            assert report["location"]["line"] == line
            assert (await tools("debug_step"))["location"]["line"] == line + 1
            assert (await tools("debug_evaluate", expression="total"))["value"] == "0"
            await tools("debug_clear", all=True)
            done = await tools("debug_continue")
            assert done["state"] == "exited"
            assert "numbers:" in done.get("output", {}).get("text", ""), done
            await tools("debug_terminate")
            assert (await client.list_tools()).tools
    assert problems == []
    # the debug log (DAP traffic included) went to stderr instead
    log = stderr_file.read_text()
    assert "DEBUG polydbg" in log
    assert "'command': 'launch'" in log


@pytest.fixture(scope="module")
def runners(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[str, list[str]]]:
    """Programs that run until killed, per adapter: (program, args)."""
    out = tmp_path_factory.mktemp("runners")
    require("lldb-dap-22|lldb-dap|lldb-vscode", "gcc", "dlv", "go")
    looper = out / "looper"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(looper), str(PROGRAMS / "native" / "c" / "looper.c")], check=True,
                   capture_output=True, timeout=120)
    goprog = out / "goprog"
    subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", str(goprog), "."], cwd=PROGRAMS / "go", check=True,
                   capture_output=True, timeout=300)
    return {"lldb-dap": (str(looper), []), "delve": (str(goprog), ["spin"])}


@pytest.mark.parametrize("adapter", ["lldb-dap", "delve"])
async def test_sigkill_of_the_server_takes_a_running_native_program_along(
        runners: dict[str, tuple[str, list[str]]], adapter: str, anyio_backend: str) -> None:
    # a running program is only detached when its tracer dies (lldb-server and delve's target are in
    # groups of their own): the guard polydbg runs each debugger under must kill it
    prog, args = runners[adapter]
    async with Client(_server()) as client:
        report = await Tools(client)("debug_launch", program=prog, args=args, adapter=adapter, timeout_s=2)
        assert report["state"] == "running", report
        server = _server_pid()
        below = descendants(server, idle_guards=True)
        assert any(cmd.startswith(prog) for cmd in below.values()), below
        survivors = _survivors_of_sigkill(server, below)
        assert not survivors, f"alive 5 s after the server was SIGKILLed: {survivors}"


async def test_a_lone_surrogate_in_an_argument_is_answered_naming_the_argument() -> None:
    """The SDK's JSON parser refuses a message with a lone surrogate escape outright (no id, so no answer: the
    client waited out its own timeout); the server answers it as a tool error naming the argument."""
    import anyio

    def message(id_: int, method: str, params: dict[str, object]) -> bytes:
        return (json.dumps({"jsonrpc": "2.0", "id": id_, "method": method, "params": params}) + "\n").encode()

    process = await anyio.open_process([sys.executable, "-m", "polydbg", "serve"], stderr=subprocess.DEVNULL)
    assert process.stdin is not None and process.stdout is not None
    try:
        await process.stdin.send(message(1, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                                           "clientInfo": {"name": "t", "version": "1"}}))
        await process.stdin.send(message(2, "tools/call", {"name": "debug_evaluate",
                                                           "arguments": {"expression": "1 + \ud800"}}))
        assert b"\\ud800" in message(2, "x", {"e": "\ud800"})  # json.dumps writes the escape the SDK chokes on
        answers: dict[int, dict[str, object]] = {}
        buffer = b""
        with anyio.fail_after(20):
            while 2 not in answers:
                buffer += await process.stdout.receive()
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    parsed = json.loads(line)
                    answers[parsed.get("id")] = parsed
        result = answers[2]["result"]
        assert isinstance(result, dict) and result["isError"]
        assert "argument 'expression' holds a lone UTF-16 surrogate" in result["content"][0]["text"]
    finally:
        await process.stdin.aclose()
        with anyio.fail_after(10):
            await process.wait()
