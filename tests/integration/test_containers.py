"""Programs in containers, attached by their host pid: each test makes its own container (``containers``:
pid, mount and network namespaces of its own and a root file system holding the program under /app) and
attaches to the program from the host with ``debug_attach(pid)`` alone. Breakpoints name the container's
paths (/app/…): polydbg reads the files through /proc/<pid>/root and maps the paths both ways; the debugger
gets in by itself (gdb by ptrace across the pid namespace; debugpy copied into the container and injected;
Node's inspector opened by SIGUSR1 and reached inside the container's network namespace). Needs root.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import Tools, require
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


async def test_a_c_program_in_a_container_attached_by_its_host_pid(tools: Tools, tmp_path: Path) -> None:
    cc = require("gdb", "cc")["cc"]
    root = _app(tmp_path, "counter.c", COUNTER_C)
    # built as it would be inside: its debug information names /app/counter.c
    built = await asyncio.create_subprocess_exec(cc, "-g", "-O0", f"-fdebug-prefix-map={root}=", "-o",
                                                 str(root / "app" / "counter"), str(root / "app" / "counter.c"))
    assert await built.wait() == 0
    line = _line(COUNTER_C, "container stop")
    async with container(root, ["/app/counter"], ready=b"ready") as pid:
        text = await tools.text("debug_attach", pid=pid, language="c",
                                breakpoints=[{"file": "/app/counter.c", "line": line}])
        assert f"counter.c:{line} in scale" in text, text
        frame = (await tools("debug_stack"))["threads"][0]["frames"][0]
        assert frame["file"] == f"/proc/{pid}/root/app/counter.c", frame
        product = await tools.text("debug_evaluate", expression="product == value * 7")
        assert "1" in product or "true" in product, product
        source = await tools.text("debug_source")
        assert "container stop" in source, source
        await tools("debug_terminate", detach=True)
