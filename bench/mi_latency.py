"""Benchmark: GDB/MI inspection latency — bare pipe echo vs polydbg's MI client vs the gdb backend.

A C program (tests/programs/native/gdb/points.c, gcc -g -O0) is stopped at a breakpoint in ``add``
(two frames deep); then, interleaved, ``--iters`` times each (100 by default):

  a. bare: the MI command written to gdb's stdin by a minimal asyncio subprocess loop that reads
     stdout lines until ``<token>^`` (no parsing at all) — the floor gdb itself sets;
  b. client: the same command through ``polydbg.mi.client.MiClient`` (token table, pygdbmi parser);
  c. backend: ``GdbMiBackend`` calls — ``stack_trace`` (``-stack-list-frames``), ``scopes`` +
     ``variables`` of Locals (two pipelined ``-stack-list-variables``), ``evaluate`` (pipelined
     ``-data-evaluate-expression`` + ``whatis``);
  d. session: the same through the session layer in-process (``Session.stack``/``variables``/
     ``evaluate``, caches cleared each time so every call reaches gdb).

Target: every inspection call ≤ 5 ms median (gdb answers the raw command in < 1 ms).

Run: .venv/bin/python bench/mi_latency.py [--iters N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from _util import ROOT, become_subreaper, median, ms, report_leftovers, table
from polydbg.backends.base import BreakpointResult, FrameRef, LaunchSpec, SourceBreakpoint, StopEvent
from polydbg.backends.gdb.backend import GdbMiBackend
from polydbg.mi.client import MiClient
from polydbg.session.manager import SessionManager
from polydbg.session.session import Session
from polydbg.transport.streams import LineStream

SOURCE = ROOT / "tests" / "programs" / "native" / "gdb" / "points.c"
LINE = next(n for n, text in enumerate(SOURCE.read_text().splitlines(), 1) if "marker: add body" in text)
RAW_COMMANDS = {
    "stack": "-stack-list-frames --thread 1 0 20",
    "locals": "-stack-list-variables --thread 1 --frame 0 --all-values",
    "evaluate": '-data-evaluate-expression --thread 1 --frame 0 "a + b * 2"',
}


class Listener:
    def __init__(self) -> None:
        self.stopped = asyncio.Event()

    def on_stopped(self, event: StopEvent) -> None:
        self.stopped.set()

    def on_continued(self, thread_id: int | None, all_threads: bool) -> None:
        self.stopped.clear()

    def on_output(self, category: str, text: str) -> None:
        pass

    def on_exited(self, exit_code: int | None) -> None:
        pass

    def on_terminated(self, cause: str | None) -> None:
        pass

    def on_breakpoint_changed(self, bp_id: int, result: BreakpointResult) -> None:
        pass


async def timed(call: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await call()
    return time.perf_counter() - start


async def stopped_gdb(program: str) -> asyncio.subprocess.Process:
    """A bare gdb stopped at the breakpoint (setup through plain lines, no MI client)."""
    process = await asyncio.create_subprocess_exec(
        "gdb", "--interpreter=mi3", "-q", "-nx", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL, start_new_session=True, limit=1 << 24)
    assert process.stdin is not None and process.stdout is not None
    for command in ("-gdb-set mi-async on", f"-file-exec-and-symbols {program}",
                    f"-break-insert {SOURCE}:{LINE}", "-inferior-tty-set /dev/null", "-exec-run"):
        process.stdin.write(f"{command}\n".encode())
    while b"*stopped" not in await process.stdout.readline():
        pass
    return process


async def bare_echo(process: asyncio.subprocess.Process, token: int, command: str) -> None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(f"{token}{command}\n".encode())
    prefix = f"{token}^".encode()
    while not (await process.stdout.readline()).startswith(prefix):
        pass


def build() -> tuple[Path, str]:
    workdir = Path(tempfile.mkdtemp(prefix="polydbg-mi-bench-"))
    program = str(workdir / "points")
    subprocess.run(["gcc", "-g", "-O0", "-o", program, str(SOURCE)], check=True)
    return workdir, program


async def run(iters: int, workdir: Path, program: str) -> None:
    print(f"target: {SOURCE.relative_to(ROOT)} (gcc -g -O0) stopped at line {LINE} in add(), 2 frames deep; "
          f"{iters} iterations each, interleaved; load average {os.getloadavg()[0]:.2f}")

    bare = await stopped_gdb(program)
    client_gdb = await stopped_gdb(program)
    assert client_gdb.stdout is not None and client_gdb.stdin is not None
    client = MiClient(LineStream(client_gdb.stdout, client_gdb.stdin, "gdb"))
    client.start()

    listener = Listener()
    backend = GdbMiBackend(listener, "c")

    async def configure() -> None:
        await backend.set_breakpoints(str(SOURCE), [SourceBreakpoint(id=1, line=LINE)])
    await backend.launch(LaunchSpec(program=program, cwd=str(workdir)), configure, 30)
    await asyncio.wait_for(listener.stopped.wait(), 30)
    frame = FrameRef(1, 0)

    manager = SessionManager()
    session = manager.create("c", "gdb", "points", str(workdir))
    await session.add_line_breakpoint(str(SOURCE), LINE)
    await manager.start(session, LaunchSpec(program=program, cwd=str(workdir)), 30, None)

    def forget_reads(session: Session) -> None:
        """The session's caches of this stop, emptied: the call reads threads, frames and values again."""
        assert session.core.life.scope is not None
        session.core.life.scope.forget_reads()

    async def backend_locals() -> None:
        [scope, _registers] = await backend.scopes(frame)
        await backend.variables(scope.ref)

    async def session_stack() -> None:
        forget_reads(session)
        await session.stack(None, 0, 20, False)

    async def session_locals() -> None:
        forget_reads(session)
        await session.variables(0, None, None, 0, 50, None)

    async def session_evaluate() -> None:
        forget_reads(session)
        await session.evaluate("a + b * 2", 0)

    calls: dict[str, Callable[[], Awaitable[object]]] = {}
    token = 1000
    for name, command in RAW_COMMANDS.items():
        def echo(command: str = command) -> Awaitable[None]:
            nonlocal token
            token += 1
            return bare_echo(bare, token, command)
        calls[f"bare  {name}"] = echo
        calls[f"client {name}"] = lambda command=command: client.command(command, 10)  # type: ignore[misc]
    calls["backend stack_trace"] = lambda: backend.stack_trace(1, 0, 20)
    calls["backend scopes+variables"] = backend_locals
    calls["backend evaluate"] = lambda: backend.evaluate("a + b * 2", frame, "watch")
    calls["session stack"] = session_stack
    calls["session variables"] = session_locals
    calls["session evaluate"] = session_evaluate

    samples: dict[str, list[float]] = {name: [] for name in calls}
    for call in calls.values():  # warm-up
        await call()
    for _ in range(iters):
        for name, call in calls.items():
            samples[name].append(await timed(call))

    rows = []
    for name, values in samples.items():
        ordered = sorted(values)
        rows.append([name, ms(median(values)), ms(ordered[int(len(ordered) * 0.9) - 1]), ms(min(values))])
    table(f"MI inspection latency (ms, {iters} iterations)", ["call", "median", "p90", "min"], rows)
    print("\ncommands: stack = -stack-list-frames --thread 1 0 20; locals = -stack-list-variables --all-values "
          "(the backend sends it twice, pipelined: --simple-values for types, --all-values for values); "
          "evaluate = -data-evaluate-expression (the backend pipelines a whatis for the type)")
    print(f"target: every backend/session inspection call <= 5 ms median; load average now "
          f"{os.getloadavg()[0]:.2f}")

    await manager.close_all()
    await backend.terminate()
    await client.close()
    for process in (bare, client_gdb):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, 9)
        await process.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iters", type=int, default=100)
    args = parser.parse_args()
    if shutil.which("gdb") is None or shutil.which("gcc") is None:
        sys.exit("needs gdb and gcc")
    become_subreaper()
    workdir, program = build()
    try:
        asyncio.run(run(args.iters, workdir, program))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    report_leftovers()


if __name__ == "__main__":
    main()
