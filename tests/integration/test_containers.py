"""Programs in containers, attached by their host pid: each test makes its own container (``containers``:
pid, mount and network namespaces of its own and a root file system holding the program under /app) and
attaches to the program from the host with ``debug_attach(pid)`` alone. Breakpoints name the container's
paths (/app/…): polydbg reads the files through /proc/<pid>/root and maps the paths both ways; the debugger
gets in by itself (gdb by ptrace across the pid namespace; debugpy copied into the container and injected;
Node's inspector opened by SIGUSR1 and reached inside the container's network namespace). Needs root.
"""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import debugpy
import pytest

from tests.conftest import Tools, require, text_of
from tests.integration.containers import container

COUNTER_C = """\
#include <stdio.h>
#include <unistd.h>

static int scale(int value, int factor) {
    int product = value * factor;
    return product; /* container stop */
}

int main(void) {
    printf("ready\\n");
    fflush(stdout);
    for (int round = 1; ; round++) {
        printf("%d\\n", scale(round, 7));
        fflush(stdout);
        usleep(20000);
    }
}
"""


def _line(text: str, marker: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), 1) if marker in line)


def _app(tmp_path: Path, name: str, text: str) -> Path:
    root = tmp_path / "rootfs"
    (root / "app").mkdir(parents=True)
    (root / "app" / name).write_text(text)
    return root


async def _c_app(tmp_path: Path) -> Path:
    cc = require("gdb", "cc")["cc"]
    root = _app(tmp_path, "counter.c", COUNTER_C)
    # built as it would be inside: its debug information names /app/counter.c
    built = await asyncio.create_subprocess_exec(cc, "-g", "-O0", f"-fdebug-prefix-map={root}=", "-o",
                                                 str(root / "app" / "counter"), str(root / "app" / "counter.c"))
    assert await built.wait() == 0
    return root


async def test_a_c_program_in_a_container_attached_by_its_host_pid(tools: Tools, tmp_path: Path) -> None:
    root = await _c_app(tmp_path)
    line = _line(COUNTER_C, "container stop")
    async with container(root, ["/app/counter"], ready=b"ready") as pid:
        text = await tools.text("debug_attach", pid=pid, language="c",
                                breakpoints=[{"file": "/app/counter.c", "line": line}])
        assert f"counter.c:{line} in scale" in text, text
        await _stopped_in_scale(tools, pid, "counter.c", line)
        source = await tools.text("debug_source")
        assert "container stop" in source, source
        await tools("debug_terminate", detach=True)
        assert Path(f"/proc/{pid}").exists()


async def test_a_container_named_through_its_engine(tools: Tools, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """program="docker://name" asks the engine's CLI for the container's main pid (docker inspect); here a
    docker command on PATH answers for the test's own container, as docker would. Without one, the answer says
    how to find the pid by hand."""
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/sbin:/usr/bin:/sbin:/bin")
    assert "docker is not installed here" in await tools.error("debug_attach", program="docker://web")
    root = await _c_app(tmp_path)
    line = _line(COUNTER_C, "container stop")
    async with container(root, ["/app/counter"], ready=b"ready") as pid:
        docker = tmp_path / "docker"
        docker.write_text('#!/bin/sh\n[ "$2 $3 $4 $5 $6 $7" = "--type container -f {{.State.Pid}} -- web" ] '
                          f"&& echo {pid} && exit 0\necho \"Error: No such container: $7\"; exit 1\n")
        docker.chmod(0o755)
        assert "No such container: db" in await tools.error("debug_attach", program="docker://db")
        assert "not a container name" in await tools.error("debug_attach", program="docker://-rf")
        text = await tools.text("debug_attach", program="docker://web", language="c",
                                breakpoints=[{"file": "/app/counter.c", "line": line}])
        assert f"/proc/{pid}/root/app/counter.c:{line} in scale" in text, text
        await tools("debug_terminate")
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


COUNTER_PY = """\
import time


def scale(value, factor):
    product = value * factor
    return product  # container stop


print("ready", flush=True)
round = 0
while True:
    round += 1
    print(scale(round, 7), flush=True)
    time.sleep(0.02)
"""


async def test_a_python_program_in_a_container_attached_by_its_host_pid(tools: Tools, tmp_path: Path) -> None:
    """debugpy is copied into the container and injected (through gdb); on a host whose gdb cannot call functions
    in another process the attach is refused at once, saying what works instead, and the program runs on."""
    require("gdb")
    root = _app(tmp_path, "counter.py", COUNTER_PY)
    line = _line(COUNTER_PY, "container stop")
    async with container(root, ["/usr/bin/python3", "/app/counter.py"], ready=b"ready") as pid:
        result = await tools.client.call_tool("debug_attach", {
            "pid": pid, "timeout_s": 60, "breakpoints": [{"file": "/app/counter.py", "line": line}]})
        if result.is_error:
            text = text_of(result)
            assert "was not touched" in text and f"debug_attach(pid={pid}, port=5678)" in text, text
            assert (await tools("debug_sessions"))["sessions"] == []
        else:
            await _stopped_in_scale(tools, pid, "counter.py", line)
            copies = list((root / "tmp").iterdir())
            assert [c.name[:16] for c in copies] == ["polydbg-debugpy-"], copies
            await tools("debug_terminate", detach=True)
            assert not list((root / "tmp").iterdir()) and not any(Path("/tmp").glob(copies[0].name))
        assert Path(f"/proc/{pid}").exists()


async def test_a_debug_server_in_a_container_reached_by_pid_and_port(tools: Tools, tmp_path: Path) -> None:
    """debugpy listening on the container's own 127.0.0.1 (no port published): pid with port reaches it inside
    the container's network namespace; the container's paths are mapped as for an attach by pid."""
    root = _app(tmp_path, "counter.py", COUNTER_PY)
    shutil.copytree(Path(debugpy.__file__).parent, root / "opt" / "py" / "debugpy",
                    ignore=shutil.ignore_patterns("__pycache__"))
    line = _line(COUNTER_PY, "container stop")
    argv = ["/usr/bin/env", "PYTHONPATH=/opt/py", "/usr/bin/python3", "-m", "debugpy", "--listen", "127.0.0.1:5678",
            "/app/counter.py"]
    async with container(root, argv, ready=b"ready") as pid:
        assert "127.0.0.1:5678" in await tools.error("debug_attach", port=5678)  # not on the host's loopback
        text = await tools.text("debug_attach", pid=pid, port=5678,
                                breakpoints=[{"file": "/app/counter.py", "line": line}])
        assert f"counter.py:{line} in scale" in text, text
        await _stopped_in_scale(tools, pid, "counter.py", line)
        await tools("debug_terminate", detach=True)
        assert Path(f"/proc/{pid}").exists()


COUNTER_JS = """\
function scale(value, factor) {
    const product = value * factor;
    return product; // container stop
}

console.log("ready");
let round = 0;
setInterval(() => { round += 1; console.log(scale(round, 7)); }, 20);
"""


async def test_a_node_program_in_a_container_attached_by_its_host_pid(tools: Tools, tmp_path: Path) -> None:
    """SIGUSR1 opens Node's inspector on the container's own 127.0.0.1:9229: reached inside its network
    namespace, with no port published."""
    node = require("node")["node"]
    root = _app(tmp_path, "counter.js", COUNTER_JS)
    line = _line(COUNTER_JS, "container stop")
    async with container(root, [node, "/app/counter.js"], ready=b"ready") as pid:
        text = await tools.text("debug_attach", pid=pid, breakpoints=[{"file": "/app/counter.js", "line": line}])
        assert f"counter.js:{line} in scale" in text, text
        await _stopped_in_scale(tools, pid, "counter.js", line)
        await tools("debug_terminate")
        assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


async def _stopped_in_scale(tools: Tools, pid: int, name: str, line: int) -> None:
    frame = (await tools("debug_stack"))["threads"][0]["frames"][0]
    assert (frame["file"], frame["line"]) == (f"/proc/{pid}/root/app/{name}", line), frame
    assert (await tools("debug_evaluate", expression="product == value * 7"))["value"] in ("True", "1", "true")
