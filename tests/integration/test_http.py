"""``polydbg serve --http``: the real server in a subprocess, the SDK's client over Streamable HTTP.

Both protocol revisions the SDK serves are exercised: 2025-11-25 (``mode="legacy"``: ``initialize`` and an
``Mcp-Session-Id``) and 2026-07-28 (sessionless). The refusals (no or wrong token, bad Host, bad Origin,
an oversized body) are raw HTTP requests, so the status codes are what any client would see.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import stat
import subprocess
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import Process
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import Tools, cancel_a_waiting_continue, descendants, line_of, program

ROOT = Path(__file__).parents[2]
BASIC = program("basic.py")
TICKER = program("ticker.py")
TOKEN = "test-token-" + "x" * 24
REVISIONS = ["legacy", "2026-07-28"]  # Client(mode=...): the initialize handshake, or the sessionless revision
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
SESSION_ID = re.compile(r"s-[0-9a-f]{12}")

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameters (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


@dataclass
class Server:
    url: str
    port: int
    process: Process
    stderr: list[str]

    def client(self, token: str | None = TOKEN, mode: str = "legacy") -> _Connected:
        return _Connected(self.url, token, mode)

    def descendants(self) -> dict[int, str]:
        return descendants(self.process.pid)


class _Connected:
    """``async with server.client() as tools``: an SDK client (with the bearer token) wrapped in ``Tools``."""

    def __init__(self, url: str, token: str | None, mode: str) -> None:
        self._stack = contextlib.AsyncExitStack()
        self._url, self._token, self._mode = url, token, mode

    async def __aenter__(self) -> Tools:
        headers = {"Authorization": f"Bearer {self._token}"} if self._token else {}
        try:
            http = await self._stack.enter_async_context(
                httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)))
            client = await self._stack.enter_async_context(
                Client(streamable_http_client(self._url, http_client=http), mode=self._mode))
        except BaseException:
            await self._stack.aclose()
            raise
        return Tools(client)

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "POLYDBG_TOKEN"}
    env.update(extra)
    return env


@contextlib.asynccontextmanager
async def serving(*args: str, env: dict[str, str] | None = None) -> AsyncIterator[Server]:
    """A ``polydbg serve --http --port 0`` subprocess, up and listening; stopped (SIGTERM) and waited for."""
    command = [sys.executable, "-m", "polydbg", "serve", "--http", "--port", "0", *args]
    process = await anyio.open_process(command, env=env or _env(POLYDBG_TOKEN=TOKEN), cwd=str(ROOT),
                                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    lines: list[str] = []
    ready = anyio.Event()

    async def drain() -> None:  # read stderr to the end, so the server never blocks on it
        assert process.stderr is not None
        buffer = b""
        async for chunk in process.stderr:
            buffer += chunk
            *complete, buffer = buffer.split(b"\n")
            lines.extend(line.decode(errors="replace") for line in complete)
            if any("serving MCP over Streamable HTTP at" in line for line in lines):
                ready.set()
        ready.set()

    async with anyio.create_task_group() as group:
        group.start_soon(drain)
        try:
            with anyio.fail_after(30):
                await ready.wait()
            banner = next((line for line in lines if "serving MCP" in line), None)
            assert banner is not None, f"the server did not start: {lines}"
            url = banner.rsplit(" ", 1)[1]
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            yield Server(url, port, process, lines)
        finally:
            if process.returncode is None:
                process.send_signal(signal.SIGTERM)
            with anyio.move_on_after(15) as waited:
                await process.wait()
            if waited.cancelled_caught:
                process.kill()
                await process.wait()
            await process.aclose()
            group.cancel_scope.cancel()


async def _post(server: Server, body: Any, **headers: str) -> httpx2.Response:
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(server.url, json=body, headers={**JSON_HEADERS, **headers})


# -- a debug session over HTTP, both revisions ------------------------------------------------------------


@pytest.mark.parametrize("mode", REVISIONS)
async def test_a_debug_session_over_http(mode: str) -> None:
    line = line_of("basic.py", "total = a + b")
    async with serving() as server, server.client(mode=mode) as tools:
        assert tools.client.protocol_version == ("2025-11-25" if mode == "legacy" else mode)
        names = [t.name for t in (await tools.client.list_tools()).tools]
        assert "debug_launch" in names and "debug_evaluate" in names
        report = await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
        assert report["state"] == "stopped" and report["location"]["line"] == line
        assert SESSION_ID.fullmatch(report["session_id"]), report["session_id"]  # random, not s1
        assert (await tools("debug_evaluate", expression="a + b + 7"))["value"] == "7"
        listed = await tools("debug_sessions")
        assert [s["session_id"] for s in listed["sessions"]] == [report["session_id"]]
        await tools("debug_clear", all=True)
        done = await tools("debug_continue")
        assert done["state"] == "exited" and done["exit_code"] == 0
        await tools("debug_terminate")


@pytest.mark.parametrize("mode", REVISIONS)
async def test_progress_and_cancellation_over_http(mode: str) -> None:
    """Progress arrives while debug_continue waits; a cancelled debug_continue returns at once and the
    program keeps running, still debuggable."""
    async with serving() as server, server.client(mode=mode) as tools:
        await tools("debug_launch", program=TICKER, stop_on_entry=True)
        reported: list[tuple[float, str | None]] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            reported.append((progress, message))

        result = await tools.client.call_tool("debug_continue", {"timeout_s": 2.5}, progress_callback=on_progress)
        assert not result.is_error and result.structured_content is not None
        assert result.structured_content["timed_out"] is True
        assert len(reported) >= 2 and all(message and "running" in message for _, message in reported)
        await tools("debug_pause")

        await cancel_a_waiting_continue(tools)
        paused = await tools("debug_pause")
        assert paused["state"] == "stopped"
        assert int((await tools("debug_evaluate", expression="i", frame_id=0))["value"]) > 0
        await tools("debug_terminate")


# -- refusals ---------------------------------------------------------------------------------------------


async def test_requests_without_the_right_token_host_or_origin_are_refused() -> None:
    async with serving() as server:
        bearer = f"Bearer {TOKEN}"
        missing = await _post(server, INIT)
        assert missing.status_code == 401 and "Bearer" in missing.headers["www-authenticate"]
        assert (await _post(server, INIT, Authorization="Bearer wrong-token-but-long-enough")).status_code == 401
        assert (await _post(server, INIT, Authorization=TOKEN)).status_code == 401  # no "Bearer "
        assert (await _post(server, INIT, Authorization=bearer, Host="evil.example")).status_code == 421
        spoofed = f"localhost.evil:{server.port}"
        assert (await _post(server, INIT, Authorization=bearer, Host=spoofed)).status_code == 421
        assert (await _post(server, INIT, Authorization=bearer, Origin="http://evil.example")).status_code == 403
        # a page on another local port is another origin
        assert (await _post(server, INIT, Authorization=bearer, Origin="http://localhost:1")).status_code == 403
        ok = await _post(server, INIT, Authorization=bearer, Origin=f"http://localhost:{server.port}")
        assert ok.status_code == 200 and ok.headers.get("mcp-session-id")
        big = {**INIT, "params": {**INIT["params"], "padding": "x" * (5 * 1024 * 1024)}}  # type: ignore[dict-item]
        assert (await _post(server, big, Authorization=bearer)).status_code == 413


async def test_a_client_with_a_wrong_token_cannot_connect() -> None:
    async with serving() as server:
        for mode in REVISIONS:
            # the SDK reports a 401 as a generic error (MCPError, or a group of them)
            with pytest.raises(Exception):  # noqa: B017
                async with server.client(token="wrong-token-but-long-enough", mode=mode) as tools:
                    await tools.client.list_tools()  # a pinned 2026-07-28 client sends nothing before this


# -- ownership --------------------------------------------------------------------------------------------


async def test_a_client_cannot_see_or_drive_another_client_s_session() -> None:
    line = line_of("basic.py", "total = a + b")
    async with serving() as server, server.client() as alice:
        mine = await alice("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
        session_id = mine["session_id"]
        for mode in REVISIONS:  # another MCP session with the same token, and a sessionless client
            async with server.client(mode=mode) as bob:
                assert (await bob("debug_sessions"))["sessions"] == []
                for tool, args in (("debug_evaluate", {"expression": "a"}), ("debug_continue", {}),
                                   ("debug_stack", {}), ("debug_terminate", {}), ("debug_output", {})):
                    said = await bob.error(tool, session_id=session_id, **args)
                    assert said.startswith(f"no session {session_id!r} (sessions: none)"), said
                said = await bob.error("debug_evaluate", expression="a")  # no default session either
                assert "no debug session" in said, said
        # alice's session is untouched
        assert (await alice("debug_evaluate", expression="a + 1"))["value"] == "1"
        assert (await alice("debug_sessions"))["sessions"][0]["state"] == "stopped"
        await alice("debug_terminate")


async def test_sessionless_agents_with_their_own_named_tokens_are_kept_apart(tmp_path: Path) -> None:
    """On 2026-07-28 a client is its token: two agents holding one token share their sessions; with named
    tokens (``polydbg token new``) each has its own, and a token revoked while the server runs stops working."""
    env = _env(XDG_STATE_HOME=str(tmp_path), POLYDBG_TOKEN=TOKEN)

    def token_command(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "polydbg", "token", *args], env=env, capture_output=True,
                              text=True, timeout=60, check=True)
        return done.stdout.strip()

    codex = token_command("new", "codex")
    async with serving(env=env) as server:
        claude = token_command("new", "claude")  # added while the server runs
        assert "codex" in "\n".join(server.stderr)  # start-up names the clients
        async with server.client(token=codex, mode="2026-07-28") as first, \
                server.client(token=claude, mode="2026-07-28") as second, \
                server.client(token=codex, mode="2026-07-28") as codex_again:
            mine = await first("debug_launch", program=BASIC, stop_on_entry=True)
            assert (await second("debug_sessions"))["sessions"] == []
            said = await second.error("debug_stack", session_id=mine["session_id"])
            assert said.startswith(f"no session {mine['session_id']!r}"), said
            # the same token is the same client: it sees (and can drive) the session
            assert [s["session_id"] for s in (await codex_again("debug_sessions"))["sessions"]] == [mine["session_id"]]
            await first("debug_terminate")
        assert token_command("list").split() == ["claude", "codex"]
        token_command("revoke", "claude")
        assert (await _post(server, INIT, Authorization=f"Bearer {claude}")).status_code == 401
        assert (await _post(server, INIT, Authorization=f"Bearer {codex}")).status_code == 200


async def test_the_output_resource_of_another_client_s_session_is_not_readable() -> None:
    async with serving() as server, server.client() as alice, server.client() as bob:
        mine = await alice("debug_launch", program=program("chatty.py"))
        uri = f"polydbg://sessions/{mine['session_id']}/output"
        assert (await alice.client.read_resource(uri)).contents
        with pytest.raises(Exception, match=r"no session .* \(sessions: none\)"):
            await bob.client.read_resource(uri)
        await alice("debug_terminate")


async def test_a_client_that_leaves_takes_its_programs_with_it() -> None:
    """Closing an MCP session (the client's DELETE) ends the debug sessions it owned, and their processes."""
    line = line_of("basic.py", "total = a + b")
    async with serving() as server:
        async with server.client() as alice:
            await alice("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
            below = server.descendants()
            assert below, "the debugger should be running"
            fds = {pid: os.pidfd_open(pid) for pid in below}
        try:
            with anyio.fail_after(15):
                for fd in fds.values():
                    await anyio.wait_readable(fd)
        finally:
            for fd in fds.values():
                os.close(fd)


# -- start-up ---------------------------------------------------------------------------------------------


def _refused(*args: str) -> str:
    done = subprocess.run([sys.executable, "-m", "polydbg", "serve", "--http", "--port", "0", *args],
                          capture_output=True, text=True, timeout=60, env=_env(POLYDBG_TOKEN=TOKEN), cwd=str(ROOT))
    assert done.returncode == 2, done.stdout + done.stderr
    return done.stderr


def test_a_non_loopback_host_needs_allow_remote() -> None:
    said = _refused("--host", "0.0.0.0")
    assert "--allow-remote" in said and "not a loopback address" in said, said


def test_no_auth_is_refused_beyond_loopback() -> None:
    said = _refused("--host", "0.0.0.0", "--no-auth")
    assert "--no-auth" in said and "only allowed on loopback" in said, said
    said = _refused("--host", "0.0.0.0", "--no-auth", "--allow-remote")
    assert "--no-auth" in said, said


async def test_allow_remote_serves_beyond_loopback_with_the_token() -> None:
    async with serving("--host", "0.0.0.0", "--allow-remote") as server:
        assert any("TLS reverse proxy" in line for line in server.stderr), server.stderr
        local = f"http://127.0.0.1:{server.port}/mcp"
        async with httpx2.AsyncClient(timeout=30) as http:
            refused = await http.post(local, json=INIT, headers=JSON_HEADERS)
            assert refused.status_code == 401
            ok = await http.post(local, json=INIT, headers={**JSON_HEADERS, "Authorization": f"Bearer {TOKEN}"})
            assert ok.status_code == 200


async def test_no_auth_serves_loopback_without_a_token_and_says_so_loudly() -> None:
    async with serving("--no-auth") as server, server.client(token=None) as tools:
        assert any("WARNING: --no-auth" in line for line in server.stderr), server.stderr
        assert (await tools("debug_sessions"))["sessions"] == []
        assert (await _post(server, INIT, Host="evil.example")).status_code == 421  # Host/Origin still checked


async def test_the_generated_token_is_kept_private_and_reused(tmp_path: Path) -> None:
    env = _env(XDG_STATE_HOME=str(tmp_path))
    async with serving(env=env) as server:
        token_file = tmp_path / "polydbg" / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        token = token_file.read_text().strip()
        said = "\n".join(server.stderr)
        assert str(token_file) in said and f"Bearer $(cat {token_file})" in said
        assert token not in said  # the secret itself is never printed
        async with server.client(token=token) as tools:
            assert (await tools("debug_sessions"))["sessions"] == []
    async with serving(env=env) as again, again.client(token=token) as tools:  # the same token next time
        assert (await tools("debug_sessions"))["sessions"] == []
    token_file.chmod(0o644)
    with anyio.fail_after(60):
        done = await anyio.run_process([sys.executable, "-m", "polydbg", "serve", "--http", "--port", "0"],
                                       env=env, cwd=str(ROOT), check=False, stdin=subprocess.DEVNULL)
    said = done.stderr.decode()
    assert done.returncode == 2 and "can be read by others" in said, said


async def test_sigterm_ends_the_server_and_every_program() -> None:
    line = line_of("basic.py", "total = a + b")
    async with serving() as server:
        async with server.client(mode="2026-07-28") as tools:  # sessionless: leaving does not end the session
            await tools("debug_launch", program=BASIC, breakpoints=[{"file": BASIC, "line": line}])
        below = server.descendants()
        assert below, "the debugger should still be running"
        fds = {pid: os.pidfd_open(pid) for pid in below}
        server.process.send_signal(signal.SIGTERM)
        try:
            with anyio.fail_after(15):
                await server.process.wait()
                for fd in fds.values():
                    await anyio.wait_readable(fd)
        finally:
            for fd in fds.values():
                os.close(fd)


async def test_a_lone_surrogate_in_an_argument_is_answered_naming_the_argument() -> None:
    """The SDK answers a body with a lone surrogate escape "Parse error" with no id; polydbg answers the call."""
    async with serving() as server:
        bearer = f"Bearer {TOKEN}"
        session = (await _post(server, INIT, Authorization=bearer)).headers["mcp-session-id"]
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                "params": {"name": "debug_evaluate", "arguments": {"expression": "1 + \ud800"}}}
        async with httpx2.AsyncClient(timeout=30) as http:  # json.dumps writes the escape the SDK chokes on
            answer = await http.post(server.url, content=json.dumps(call), headers={
                **JSON_HEADERS, "Authorization": bearer, "Mcp-Session-Id": session,
                "MCP-Protocol-Version": "2025-11-25"})
        assert answer.status_code == 200, answer.text
        assert "argument 'expression' holds a lone UTF-16 surrogate" in answer.text
