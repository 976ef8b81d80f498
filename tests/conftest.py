"""Shared fixtures: an MCP client on a fresh polydbg server, and a check that no process is left behind.

The test process makes itself a child subreaper, so every process polydbg starts — adapters,
launchers, debuggees, even ones whose parent died — stays a descendant we can see and wait on.
"""

from __future__ import annotations

import contextlib
import ctypes
import inspect
import os
import select
import shutil
import signal
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any, NoReturn

import anyio
import pytest
from mcp import Client
from mcp_types import CallToolResult, TextContent

from polydbg.guard import MARKER
from polydbg.mcp.server import build_server

PROGRAMS = Path(__file__).parent / "programs"
_PR_SET_CHILD_SUBREAPER = 36


def unavailable(reason: str) -> NoReturn:
    """Skip the test locally, with the reason; under CI (CI=true) fail it: CI must install everything the
    tests need, so a missing piece is a broken CI, never a silent skip."""
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


def require(*commands: str) -> dict[str, str]:
    """The paths of debugger/toolchain commands a test needs (the first found of each ``a|b`` choice).

    Missing ones skip the test locally, with the reason; under CI (CI=true) they fail it: CI must
    install every debugger, so a missing one is a broken CI, never a silent skip.
    """
    found: dict[str, str] = {}
    for spec in commands:
        names = spec.split("|")
        path = next((p for n in names if (p := shutil.which(n))), None)
        if path is None:
            unavailable(f"{' or '.join(names)} not installed (.ci/run installs it)")
        found[names[0]] = path
    return found


@pytest.fixture(scope="session")
def build_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory for test programs built during this run (native binaries, Go builds)."""
    return tmp_path_factory.mktemp("built")


def program(name: str) -> str:
    return str(PROGRAMS / name)


def line_of(name: str, marker: str) -> int:
    """The 1-based line of ``name`` that contains ``marker`` (tests name lines by content, not number)."""
    for number, text in enumerate((PROGRAMS / name).read_text().splitlines(), 1):
        if marker in text:
            return number
    raise AssertionError(f"{marker!r} not in {name}")


def text_of(result: CallToolResult) -> str:
    return "\n".join(block.text for block in result.content if isinstance(block, TextContent))


class Tools:
    """Calls tools on a connected client and fails the test on unexpected errors."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def __call__(self, name: str, /, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, f"{name}({arguments}) failed: {text_of(result)}"
        assert result.structured_content is not None
        return dict(result.structured_content)

    async def text(self, name: str, /, **arguments: Any) -> str:
        result = await self.client.call_tool(name, arguments)
        assert not result.is_error, f"{name}({arguments}) failed: {text_of(result)}"
        return text_of(result)

    async def session_once(self, holds: Callable[[dict[str, Any]], bool], within_s: float) -> dict[str, Any]:
        """The first session as debug_sessions lists it, read until ``holds`` is true of it (no event tells a
        client that a state changed), within a deadline."""
        with anyio.fail_after(within_s):
            while True:
                session: dict[str, Any] = (await self("debug_sessions"))["sessions"][0]
                if holds(session):
                    return session
                await anyio.sleep(0.05)

    async def printed(self, text: str, within_s: float) -> None:
        """Wait until the program's output holds ``text`` (no event tells a client of output), within a deadline."""
        with anyio.fail_after(within_s):
            while True:
                if text in (await self("debug_output", max_bytes=30_000))["text"]:
                    return
                await anyio.sleep(0.05)

    async def error(self, name: str, /, **arguments: Any) -> str:
        """Call a tool that must fail; returns the error text the agent sees."""
        result = await self.client.call_tool(name, arguments)
        assert result.is_error, f"{name}({arguments}) should have failed but returned: {text_of(result)}"
        return text_of(result)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every coroutine test runs on asyncio through anyio's plugin (fixtures share the test's task)."""
    for item in items:
        if isinstance(item, pytest.Function) and inspect.iscoroutinefunction(item.obj):
            item.add_marker(pytest.mark.anyio)


@pytest.fixture
async def tools() -> AsyncIterator[Tools]:
    async with Client(build_server()) as client:
        yield Tools(client)


def process_table() -> dict[int, tuple[int, str]]:
    """pid -> (ppid, cmdline) for every live, non-zombie process."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            status = Path(f"/proc/{entry}/status").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = dict(line.split(":\t", 1) for line in status.splitlines() if ":\t" in line)
        if not fields.get("State", "").startswith("Z"):
            table[int(entry)] = (int(fields.get("PPid", "0").strip()), cmdline.strip())
    return table


def descendants(root: int, idle_guards: bool = False) -> dict[int, str]:
    """pid -> cmdline of every live process under ``root``; without ``idle_guards``, not the server's warm guards
    waiting to be taken (polydbg.warm: a guard with no child yet belongs to no session, and lives until the server
    ends)."""
    table = process_table()
    found: dict[int, str] = {}
    parents = {root}
    while parents:
        children = {pid for pid, (ppid, _) in table.items() if ppid in parents and pid not in found}
        found.update({pid: table[pid][1] for pid in children})
        parents = children
    if not idle_guards:
        busy = {ppid for ppid, _ in table.values()}
        found = {pid: cmd for pid, cmd in found.items() if MARKER not in cmd or pid in busy}
    return found


def _children() -> dict[int, str]:
    """This process's live children (orphans re-parented to it as subreaper too), read from each thread's
    ``children`` file: a few small reads where scanning /proc costs ~25 ms per test."""
    pids: set[int] = set()
    try:
        for tasks in Path("/proc/self/task").iterdir():
            pids.update(int(pid) for pid in (tasks / "children").read_text().split())
    except OSError:  # a kernel without CONFIG_PROC_CHILDREN
        me = os.getpid()
        return {pid: cmd for pid, (ppid, cmd) in process_table().items() if ppid == me}
    found = {}
    for pid in pids:
        try:
            if Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] == "Z":
                continue
            found[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
    return found


def _reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def _wait_gone(pid: int, timeout_s: float) -> bool:
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], timeout_s)
        return bool(ready)
    finally:
        os.close(fd)


@pytest.fixture(scope="session", autouse=True)
def _subreaper() -> None:
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)


@pytest.fixture(autouse=True)
def no_leftover_processes(_subreaper: None) -> Iterator[None]:
    """Every test must leave no adapter, launcher or debuggee running."""
    before = set(_children())
    yield
    _reap_zombies()
    leftovers = {pid: cmd for pid, cmd in _children().items() if pid not in before}
    survivors = {pid: cmd for pid, cmd in leftovers.items() if not _wait_gone(pid, 5.0)}
    _reap_zombies()
    for pid in survivors:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    assert not survivors, f"processes left behind: {survivors}"


async def cancel_a_waiting_continue(tools: Tools) -> None:
    """Start a debug_continue that waits, give up on it once it reports progress, and check the server
    answers at once with the session still running (stdio and HTTP tests share this)."""
    waiting = anyio.Event()

    async def progressed(progress: float, total: float | None, message: str | None) -> None:
        waiting.set()

    async def wait_long() -> None:
        await tools.client.call_tool("debug_continue", {"timeout_s": 600}, progress_callback=progressed)

    async with anyio.create_task_group() as group:
        group.start_soon(wait_long)
        with anyio.fail_after(30):
            await waiting.wait()
        group.cancel_scope.cancel()
    with anyio.fail_after(5):  # the server is free at once, and the program kept its state: running
        listed = await tools("debug_sessions")
    assert [s["state"] for s in listed["sessions"]] == ["running"]
