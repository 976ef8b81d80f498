"""The MCP ecosystem's own checks against polydbg: the official conformance suite and the MCP Inspector CLI.

Both are npm packages pinned in tests/ecosystem (``npm ci`` there; .ci/run does it). Both need Node >= 22,
which comes from the same lock file: npm's ``node`` package (its binary is fetched from the npm registry
too), so whichever node the machine has does not matter.

The conformance suite cannot send a token, so it runs against ``polydbg serve --http --no-auth``: every
server scenario, twice (each at its own wire version, then the scenarios of both revisions again at the
sessionless 2026-07-28 wire). tests/ecosystem/conformance-baseline.yml lists the checks that cannot apply
to polydbg, each with its reason (they need the SDKs' reference server's fixture tools, resources and
prompts, a capability polydbg does not declare, or the tasks extension); the suite fails the run on any
other failure, and on a listed check that passes.

The Inspector CLI lists the tools (``--strict``: their schemas must be portable across clients) and
launches a program to a breakpoint, over stdio (it spawns ``polydbg serve``) and over HTTP with the bearer
token; over HTTP a second CLI run ends the debug session again.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream

from tests.conftest import PROGRAMS, Tools, line_of, unavailable
from tests.integration.test_http import TOKEN, serving

ROOT = Path(__file__).parents[2]
ECOSYSTEM = ROOT / "tests" / "ecosystem"
MODULES = ECOSYSTEM / "node_modules"
NODE = MODULES / "node" / "bin" / "node"
BASELINE = ECOSYSTEM / "conformance-baseline.yml"
POLYDBG = Path(sys.executable).with_name("polydbg")  # the venv's entry point, as a client would configure it
BASIC = str(PROGRAMS / "basic.py")
WIRES = {"own": (), "2026-07-28": ("--spec-version", "2026-07-28")}  # --suite all: each scenario's own wire
_ANSI = re.compile(r"\x1b\[[0-9;]*m")

# Asked for by name, so anyio's plugin keeps the parametrized tests' parameters (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


def _bin(package: str, name: str) -> Path:
    """The script of one of ``package``'s commands, from its package.json (an empty path if not installed)."""
    manifest = MODULES / "@modelcontextprotocol" / package / "package.json"
    if not manifest.is_file():
        return Path()
    return manifest.parent / json.loads(manifest.read_text())["bin"][name]


def ecosystem() -> tuple[Path, Path]:
    """The conformance suite's and the Inspector's scripts, and the Node that runs them (installed by npm ci in
    tests/ecosystem; a must under CI)."""
    conformance, inspector = _bin("conformance", "conformance"), _bin("inspector", "mcp-inspector")
    if not (NODE.is_file() and conformance.is_file() and inspector.is_file()):
        unavailable("tests/ecosystem has no node_modules (node, conformance, inspector): run npm ci there "
                    "(.ci/run does)")
    return conformance, inspector


@pytest.fixture(autouse=True)
def _ecosystem() -> None:
    """Checked before any server or client starts, so a missing install says so plainly."""
    ecosystem()


@dataclass
class Ran:
    returncode: int
    stdout: str
    stderr: str

    def said(self) -> str:
        return f"exit status {self.returncode}\nstdout:\n{self.stdout[-6000:]}\nstderr:\n{self.stderr[-3000:]}"


async def run_node(script: Path, *args: str, home: Path, timeout_s: float) -> Ran:
    """``node script args...`` with the npm Node, in its own process group (a stdio server the Inspector spawns
    is in it too); past ``timeout_s`` the whole group is killed and the test fails with what it said so far."""
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1", "FORCE_COLOR": "0",
           "PATH": f"{MODULES / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.pop("POLYDBG_TOKEN", None)
    process = await anyio.open_process([str(NODE), str(script), *args], stdin=subprocess.DEVNULL, cwd=str(ROOT),
                                       env=env, start_new_session=True)
    out, err = bytearray(), bytearray()

    async def drain(stream: ByteReceiveStream | None, into: bytearray) -> None:
        assert stream is not None
        async for chunk in stream:
            into += chunk

    def ran() -> Ran:
        return Ran(process.returncode if process.returncode is not None else -1,
                   _ANSI.sub("", out.decode(errors="replace")), _ANSI.sub("", err.decode(errors="replace")))

    try:
        with anyio.fail_after(timeout_s):
            async with anyio.create_task_group() as group:
                group.start_soon(drain, process.stdout, out)
                group.start_soon(drain, process.stderr, err)
            await process.wait()
    except TimeoutError:
        pytest.fail(f"{script.name} {' '.join(args)} did not finish in {timeout_s:.0f}s; {ran().said()}")
    finally:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            with anyio.CancelScope(shield=True):
                await process.wait()
        await process.aclose()
    return ran()


# -- the conformance suite -------------------------------------------------------------------------------


def _scenarios(listing: str) -> list[str]:
    return re.findall(r"^\s+- (\S+) \[", listing, re.MULTILINE)


@pytest.mark.parametrize("wire", list(WIRES))
async def test_the_mcp_conformance_suite(wire: str, tmp_path: Path) -> None:
    conformance, _ = ecosystem()
    extra = WIRES[wire]
    listed = await run_node(conformance, "list", "--server", *extra, home=tmp_path, timeout_s=30)
    assert listed.returncode == 0, listed.said()
    scenarios = _scenarios(listed.stdout)
    assert len(scenarios) >= 40, listed.stdout
    if not extra:  # an entry for a scenario that does not exist would be ignored: catch typos
        baselined = set(re.findall(r"^\s*-\s+([\w-]+):", BASELINE.read_text(), re.MULTILINE))
        assert baselined <= set(scenarios), f"no such scenarios: {sorted(baselined - set(scenarios))}"
    async with serving("--no-auth") as server:
        ran = await run_node(conformance, "server", "--url", server.url, "--suite", "all", *extra,
                             "--expected-failures", str(BASELINE), "--output-dir", str(tmp_path / "results"),
                             home=tmp_path, timeout_s=120)
    # After the summary's total, the baseline's verdict: the expected failures (~), then any stale entry (a
    # listed check that passed) and any unexpected failure.
    verdict = "\n".join(line for line in ran.stdout[ran.stdout.find("Total:"):].splitlines()
                        if not line.lstrip().startswith("~"))
    assert ran.returncode == 0, f"{verdict or ran.said()}\n(each check's details: {tmp_path / 'results'})"
    assert "Baseline check passed" in verdict, ran.said()
    assert sorted(re.findall(r"=== Running scenario: (\S+) ===", ran.stdout)) == sorted(scenarios), ran.stdout


# -- the Inspector CLI -----------------------------------------------------------------------------------


async def _inspect(*args: str, home: Path) -> dict[str, Any]:
    """One Inspector CLI run (``--cli --format json``); its result."""
    _, inspector = ecosystem()
    ran = await run_node(inspector, "--cli", "--format", "json", *args, home=home, timeout_s=45)
    assert ran.returncode == 0, ran.said()
    answer = json.loads(ran.stdout)
    assert "result" in answer, ran.said()
    # --strict: an error-severity portability problem in a tool schema exits 6 (above); warnings are here
    assert not answer.get("schemaFindings"), answer["schemaFindings"]
    return dict(answer["result"])


async def _server_tools(tools: Tools) -> list[str]:
    """The tool names polydbg serves (in-process): what the Inspector must list."""
    names = sorted(tool.name for tool in (await tools.client.list_tools()).tools)
    assert len(names) >= 22 and all(name.startswith("debug_") for name in names), names
    return names


def _launch_args() -> tuple[str, int]:
    line = line_of("basic.py", "total = a + b")
    return json.dumps({"program": BASIC, "breakpoints": [{"file": BASIC, "line": line}]}), line


def _check_stop_report(result: dict[str, Any], line: int) -> str:
    """The launch stopped at the breakpoint in ``add``, said in the text and in the structured content."""
    assert result.get("isError") is not True, result
    report = result["structuredContent"]
    assert report["state"] == "stopped" and report["reason"] == "breakpoint", report
    assert report["location"] == {"file": BASIC, "line": line, "function": "add"}, report
    assert {v["name"]: v["value"] for v in report["locals"]} == {"a": "0", "b": "0"}, report
    text = "\n".join(block["text"] for block in result["content"] if block["type"] == "text")
    assert f"stopped (breakpoint) at basic.py:{line} in add" in text and "a (int) = 0" in text, text
    return str(report["session_id"])


async def test_the_inspector_cli_over_stdio(tools: Tools, tmp_path: Path) -> None:
    """The CLI spawns ``polydbg serve``; when it is done it closes the server, which ends the debug session
    (the autouse fixture checks that no debugger or program is left)."""
    expected = await _server_tools(tools)
    assert POLYDBG.is_file(), f"{POLYDBG} (pip install -e . makes it)"
    server = ["--cwd", str(ROOT), "--", str(POLYDBG), "serve"]
    listed = await _inspect("--method", "tools/list", "--strict", *server, home=tmp_path)
    assert sorted(tool["name"] for tool in listed["tools"]) == expected
    arguments, line = _launch_args()
    launched = await _inspect("--method", "tools/call", "--tool-name", "debug_launch", "--tool-args-json", arguments,
                              *server, home=tmp_path)
    _check_stop_report(launched, line)


async def test_the_inspector_cli_over_http_with_the_token(tools: Tools, tmp_path: Path) -> None:
    """The token goes in ``--header``. tools/list on the 2025-11-25 revision (the CLI's default for a URL); the
    launch on the sessionless 2026-07-28 revision, where every CLI run with the token is the same client, so a
    second run can end the session (on 2025-11-25 each run would be another MCP session, another client)."""
    expected = await _server_tools(tools)
    async with serving() as server:
        header = ["--header", f"Authorization: Bearer {TOKEN}"]
        listed = await _inspect("--method", "tools/list", "--strict", *header, "--", server.url, home=tmp_path)
        assert sorted(tool["name"] for tool in listed["tools"]) == expected
        sessionless = ["--protocol-era", "modern", *header, "--", server.url]
        arguments, line = _launch_args()
        launched = await _inspect("--method", "tools/call", "--tool-name", "debug_launch", "--tool-args-json",
                                  arguments, *sessionless, home=tmp_path)
        session_id = _check_stop_report(launched, line)
        below = server.descendants()
        assert below, "the debugger should be running"
        fds = {pid: os.pidfd_open(pid) for pid in below}
        try:
            ended = await _inspect("--method", "tools/call", "--tool-name", "debug_terminate", "--tool-args-json",
                                   json.dumps({"session_id": session_id}), *sessionless, home=tmp_path)
            assert ended.get("isError") is not True, ended
            with anyio.fail_after(15):  # the debugger and the program are gone, while the server still runs
                for fd in fds.values():
                    await anyio.wait_readable(fd)
        finally:
            for fd in fds.values():
                os.close(fd)
        assert server.process.returncode is None
