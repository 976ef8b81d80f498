"""Attaching to a program on "another host": its own debug server runs inside a network namespace and
polydbg reaches it over a veth pair, by address — the way a program in a container or on another
machine is debugged (``debug_attach`` with ``host`` and ``port``).

Each case starts the debugger's own server inside the namespace, listening only on the namespace's
address (``python -m debugpy --listen``, ``gdbserver``, ``dlv --headless``, ``node --inspect-brk``,
``java -agentlib:jdwp=…,server=y``), so nothing on the host's loopback can answer for it. The
"remote" copy of each program lives in another directory than the "local" copy polydbg is given, and
``path_mappings`` ({local: remote}) bridge the two: breakpoints name the local files and stops and
stacks report them (without the mappings every case fails).

Needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN for ``ip netns``) and ``ip`` (Debian: iproute2). Locally a
missing capability skips; under CI (CI=true) it fails, like a missing debugger.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Tools, require, unavailable

PYTHON = str(Path(sys.prefix) / "bin" / "python")  # the venv's, which has debugpy
FIRST_PORT = 4711  # the namespace has its own ports: nothing else listens there; one port per case (no
# case waits for another's socket to leave TIME_WAIT)
READY_TIMEOUT_S = 60.0  # a debug server's start (a JVM, a Go program under dlv) on a busy 2-core machine

SCALE_PY = """\
def scale(value, factor):
    product = value * factor
    return product  # remote stop


print("scaled:", scale(6, 7), flush=True)  # remote call
"""

SCALE_C = """\
#include <stdio.h>

static int scale(int value, int factor) {
    int product = value * factor;
    return product; /* remote stop */
}

int main(void) {
    printf("scaled: %d\\n", scale(6, 7)); /* remote call */
    return 0;
}
"""

SCALE_GO = """\
package main

import "fmt"

func scale(value, factor int) int {
	product := value * factor
	return product // remote stop
}

func main() {
	fmt.Println("scaled:", scale(6, 7)) // remote call
}
"""

SCALE_JS = """\
function scale(value, factor) {
  const product = value * factor;
  return product; // remote stop
}

console.log("scaled:", scale(6, 7)); // remote call
"""

SCALE_JAVA = """\
package remote;

class Scale {
    static int scale(int value, int factor) {
        int product = value * factor;
        return product; // remote stop
    }
}
"""

MAIN_JAVA = """\
package remote;

public class Main {
    public static void main(String[] args) {
        System.out.println("scaled: " + Scale.scale(6, 7)); // remote call
    }
}
"""


def line_with(marker: str, source: str) -> int:
    return next(n for n, text in enumerate(source.splitlines(), 1) if marker in text)


# -- the namespace -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Netns:
    name: str
    host_address: str  # the host's end of the veth pair
    address: str  # the namespace's end, where the debug servers listen
    address6: str  # the same over IPv6
    ipv6_problem: str | None  # why the IPv6 addresses could not be set, if they could not


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


def _free_subnet() -> int:
    """A third octet X whose 10.231.X.0/30 no interface uses (two runs at once must not share one)."""
    used = _ip("-o", "-4", "addr", "show").stdout
    for _ in range(100):
        octet = secrets.randbelow(256)
        if f"10.231.{octet}." not in used:
            return octet
    raise AssertionError("no free 10.231.X.0/30 subnet")


@pytest.fixture(scope="module")
def netns() -> Iterator[Netns]:
    """A network namespace joined to the host by a veth pair: 10.231.X.1 here, 10.231.X.2 inside (and
    fd31:231:X::1, fd31:231:X::2 over IPv6)."""
    require("ip")
    tag = secrets.token_hex(4)
    name, outside, inside = f"polydbg-{tag}", f"pd{tag}h", f"pd{tag}n"  # link names: at most 15 characters
    octet = _free_subnet()
    space = Netns(name, f"10.231.{octet}.1", f"10.231.{octet}.2", f"fd31:231:{octet}::2", None)
    created = _ip("netns", "add", name)
    if created.returncode != 0:
        unavailable(f"cannot create a network namespace (needs root: CAP_SYS_ADMIN, CAP_NET_ADMIN): "
                    f"{created.stderr.strip()}")
    try:
        step: tuple[str, ...]
        for step in (("link", "add", outside, "type", "veth", "peer", "name", inside, "netns", name),
                     ("addr", "add", f"{space.host_address}/30", "dev", outside),
                     ("link", "set", outside, "up"),
                     ("-n", name, "addr", "add", f"{space.address}/30", "dev", inside),
                     ("-n", name, "link", "set", inside, "up"),
                     ("-n", name, "link", "set", "lo", "up")):  # debugpy's adapter talks to its debuggee on lo
            done = _ip(*step)
            if done.returncode != 0:
                unavailable(f"ip {' '.join(step)} failed: {done.stderr.strip()}")
        for step in (("addr", "add", f"fd31:231:{octet}::1/64", "dev", outside, "nodad"),  # usable at once
                     ("-n", name, "addr", "add", f"{space.address6}/64", "dev", inside, "nodad")):
            done = _ip(*step)
            if done.returncode != 0:  # IPv6 switched off (a container's sysctl): only the IPv6 cases are off
                space = replace(space, ipv6_problem=f"ip {' '.join(step)} failed: {done.stderr.strip()}")
                break
        yield space
    finally:
        kill_everything_in(space)
        _ip("link", "del", outside)  # takes the namespace's end with it
        _ip("netns", "del", name)
        assert name not in _ip("netns", "list").stdout, f"namespace {name} was not deleted"


# -- a debug server inside it ----------------------------------------------------------------------------


@dataclass
class Remote:
    process: asyncio.subprocess.Process
    output: str = ""  # its stdout and stderr so far

    async def exit_code(self, timeout_s: float = 30.0) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout_s)

    def said(self, text: str) -> bool:
        return text in self.output


def kill_everything_in(space: Netns) -> None:
    """SIGKILL every process in the namespace: a debug server, its program, debugpy's adapter (dlv puts its
    program in a process group of its own, so killing a group would not do)."""
    listed = _ip("netns", "pids", space.name)
    for pid in map(int, listed.stdout.split()):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@asynccontextmanager
async def in_namespace(space: Netns, argv: list[str], ready: str, cwd: Path) -> AsyncIterator[Remote]:
    """Run ``argv`` inside ``space`` until its output matches ``ready`` (its server listens); kill it and
    everything it started at the end, whatever happened."""
    process = await asyncio.create_subprocess_exec(
        "ip", "netns", "exec", space.name, *argv, cwd=cwd, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)
    remote = Remote(process)
    listening = asyncio.Event()
    pattern = re.compile(ready)

    async def pump() -> None:  # read to the end: a full pipe would stall the program
        assert process.stdout is not None
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        while chunk := await process.stdout.read(65536):
            remote.output += decoder.decode(chunk)
            if pattern.search(remote.output):
                listening.set()

    reader = asyncio.ensure_future(pump())
    try:
        waiter = asyncio.ensure_future(listening.wait())
        done, _ = await asyncio.wait({waiter, reader}, timeout=READY_TIMEOUT_S, return_when=asyncio.FIRST_COMPLETED)
        waiter.cancel()
        assert listening.is_set(), (f"{argv[0]} did not report /{ready}/ within {READY_TIMEOUT_S:g} s "
                                    f"({'it ended' if reader in done else 'still running'}):\n"
                                    + remote.output[-3000:])
        yield remote
    finally:
        kill_everything_in(space)
        await process.wait()
        try:
            await asyncio.wait_for(reader, 10)
        except asyncio.TimeoutError:
            reader.cancel()


# -- the cases -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    function: str
    file: str  # as polydbg reports it: the local copy
    line: int


@dataclass(frozen=True)
class Case:
    argv: list[str]  # the remote side's command, run in the remote directory
    ready: str  # what it prints once its server listens
    stop: Place  # the breakpoint: the stop report must say this
    caller: Place  # the frame below it (for java, in a file no breakpoint names)
    attach: dict[str, Any]  # debug_attach's arguments besides host, port and breakpoints
    detach: bool  # end with debug_terminate(detach=True): the program runs on to its end


def _write(text: str, *paths: Path) -> None:
    for path in paths:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _run(argv: list[str], cwd: Path) -> None:
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(argv)} failed:\n{done.stdout}{done.stderr}"


def _mapped(local: Path, remote: Path) -> dict[str, Any]:
    return {"path_mappings": {str(local): str(remote)}}


def debugpy_case(local: Path, remote: Path, server: str) -> Case:
    _write(SCALE_PY, local / "app.py", remote / "app.py")
    source = str(local / "app.py")
    # debugpy prints nothing when it listens; its log says so ("Adapter is accepting incoming client connections")
    return Case([PYTHON, "-X", "frozen_modules=off", "-m", "debugpy", "--log-to-stderr", "--listen",
                 server, "--wait-for-client", "app.py"],
                r"Adapter is accepting incoming client connections",
                Place("scale", source, line_with("remote stop", SCALE_PY)),
                Place("<module>", source, line_with("remote call", SCALE_PY)),
                {"language": "python", **_mapped(local, remote)}, detach=True)


def _gdbserver(local: Path, remote: Path, server: str, adapter: str) -> Case:
    require("gdbserver", "gcc")
    _write(SCALE_C, local / "scale.c", remote / "scale.c")
    _run(["gcc", "-g", "-O0", "-o", "scale", "scale.c"], remote)  # its debug info names the remote directory
    shutil.copy(remote / "scale", local / "scale")  # the same binary on the local side, for the symbols
    source = str(local / "scale.c")
    return Case(["gdbserver", server, "./scale"], r"Listening on port \d+",
                Place("scale", source, line_with("remote stop", SCALE_C)),
                Place("main", source, line_with("remote call", SCALE_C)),
                {"adapter": adapter, "language": "c", "program": str(local / "scale"), **_mapped(local, remote)},
                detach=False)


def gdbserver_case(local: Path, remote: Path, server: str) -> Case:
    require("gdb")
    return _gdbserver(local, remote, server, "gdb")


def lldb_gdbserver_case(local: Path, remote: Path, server: str) -> Case:
    require("lldb-dap-22|lldb-dap|lldb-vscode")
    return _gdbserver(local, remote, server, "lldb-dap")


def delve_case(local: Path, remote: Path, server: str) -> Case:
    require("dlv", "go")
    _write(SCALE_GO, local / "main.go", remote / "main.go")
    _write("module remote\n\ngo 1.19\n", local / "go.mod", remote / "go.mod")
    _run(["go", "build", "-gcflags=all=-N -l", "-o", "scale", "."], remote)
    source = str(local / "main.go")
    return Case(["dlv", "--headless", f"--listen={server}", "--accept-multiclient", "--api-version=2",
                 "exec", "./scale"], r"API server listening at: ",
                Place("main.scale", source, line_with("remote stop", SCALE_GO)),
                Place("main.main", source, line_with("remote call", SCALE_GO)),
                {"language": "go", **_mapped(local, remote)}, detach=False)


def node_case(local: Path, remote: Path, server: str) -> Case:
    require("node")
    _write(SCALE_JS, local / "app.js", remote / "app.js")
    source = str(local / "app.js")
    return Case(["node", f"--inspect-brk={server}", "app.js"], r"Debugger listening on ws://",
                Place("scale", source, line_with("remote stop", SCALE_JS)),
                Place("(anonymous)", source, line_with("remote call", SCALE_JS)),
                {"language": "javascript", **_mapped(local, remote)}, detach=True)


def jdwp_case(local: Path, remote: Path, server: str) -> Case:
    require("java", "javac")
    # two source roots, as in a project of two modules; JDWP names classes, not files: a breakpoint's class
    # comes from its file's package (and its root becomes a source root), and a frame's file is looked for
    # in the source roots — core's from the breakpoint, cli's (Main.java) only through its mapping
    sources = {"core": ("Scale.java", SCALE_JAVA), "cli": ("Main.java", MAIN_JAVA)}
    for module, (name, text) in sources.items():
        _write(text, local / module / "remote" / name, remote / module / "remote" / name)
    _run(["javac", "-g", "-d", "classes", "core/remote/Scale.java", "cli/remote/Main.java"], remote)
    scale, main = local / "core" / "remote" / "Scale.java", local / "cli" / "remote" / "Main.java"
    return Case(["java", f"-agentlib:jdwp=transport=dt_socket,server=y,suspend=y,address={server}",
                 "-cp", "classes", "remote.Main"], r"Listening for transport dt_socket at address",
                Place("Scale.scale", str(scale), line_with("remote stop", SCALE_JAVA)),
                Place("Main.main", str(main), line_with("remote call", MAIN_JAVA)),
                {"language": "java", "path_mappings": {str(local / m): str(remote / m) for m in sources}},
                detach=False)


# (local, remote, address:port for the server) → what to start there and what polydbg must report
CASES: dict[str, Callable[[Path, Path, str], Case]] = {
    "debugpy": debugpy_case, "gdbserver": gdbserver_case, "gdbserver-lldb": lldb_gdbserver_case,
    "delve": delve_case, "node": node_case, "jdwp": jdwp_case,
}

# Asked for by name, so anyio's plugin keeps the parametrized test's parameter (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


def place(frame: dict[str, Any]) -> Place:
    return Place(frame["function"], frame["file"], frame["line"])


def no_way_through_a_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    """An HTTP proxy in polydbg's environment, as on many company networks, that answers nothing: a debug
    server must be reached directly all the same (node's inspector discovery and WebSocket once went
    through it)."""
    for name in ("http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")
        monkeypatch.setenv(name.upper(), "http://127.0.0.1:9")
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("family", ["ipv4", "ipv6"])
@pytest.mark.parametrize("debugger", list(CASES))
async def test_attach_to_a_debug_server_in_another_network_namespace(
        tools: Tools, netns: Netns, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, debugger: str,
        family: str) -> None:
    """Over IPv6 the debug servers are told ``[address]:port`` and polydbg the bare address, as
    debug_attach's own hint spells it (``::1``); every backend takes it with or without brackets."""
    if family == "ipv6" and netns.ipv6_problem:
        unavailable(netns.ipv6_problem)
    host = netns.address6 if family == "ipv6" else netns.address
    port = FIRST_PORT + list(CASES).index(debugger) + (len(CASES) if family == "ipv6" else 0)
    local, remote = tmp_path / "local" / "checkout", tmp_path / "remote" / "srv" / "app"
    case = CASES[debugger](local, remote, f"[{host}]:{port}" if family == "ipv6" else f"{host}:{port}")
    no_way_through_a_proxy(monkeypatch)
    async with in_namespace(netns, case.argv, case.ready, cwd=remote) as program:
        report = await tools("debug_attach", host=host, port=port, timeout_s=30,
                             breakpoints=[{"file": case.stop.file, "line": case.stop.line}], **case.attach)
        assert report["state"] == "stopped" and report["reason"] == "breakpoint", report
        assert place(report["location"]) == case.stop, report
        assert values(report)["product"] == "42", report
        assert (await tools("debug_evaluate", expression="product"))["value"] == "42"
        frames = (await tools("debug_stack"))["threads"][0]["frames"]
        assert [place(frame) for frame in frames[:2]] == [case.stop, case.caller], frames
        (info,) = (await tools("debug_sessions"))["sessions"]
        assert info["target"] == (f"[{host}]:{port}" if ":" in host else f"{host}:{port}")
        if debugger == "debugpy":  # its call recorder could not reach polydbg's socket: refused, nothing run
            refused = await tools.error("debug_trace", functions=["scale"])
            assert f"a program at {host} cannot reach" in refused and "debug_trace(points=…)" in refused, refused

        await tools("debug_terminate", detach=case.detach)
        code = await program.exit_code()
        if case.detach:  # it ran on to its end, untouched
            assert code == 0 and program.said("scaled: 42"), program.output[-1000:]
        else:  # terminate ends the remote program (and its server) where it stood
            assert not program.said("scaled: 42"), program.output[-1000:]
