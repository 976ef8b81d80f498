"""Shared helpers of the benchmark scripts: tables, process-tree inspection, leftover cleanup."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import json
import os
import re
import signal
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from mcp import Client

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
PROGRAM = str(BENCH / "programs" / "flow_target.py")
POLYDBG = str(Path(sys.executable).parent / "polydbg")
_PR_SET_CHILD_SUBREAPER = 36


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error and result.structured_content is not None, (tool, arguments, result)
    return dict(result.structured_content)


async def timed(client: Client, tool: str, **arguments: Any) -> tuple[float, dict[str, Any]]:
    began = time.perf_counter()
    answer = await call(client, tool, **arguments)
    return time.perf_counter() - began, answer


def line_of(marker: str, path: str = PROGRAM) -> int:
    for number, text in enumerate(Path(path).read_text().splitlines(), 1):
        if marker in text:
            return number
    raise ValueError(f"{marker!r} not in {path}")


def median(values: Iterable[float]) -> float:
    data = list(values)
    return statistics.median(data) if data else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def table(title: str, headers: Sequence[str], rows: Sequence[Sequence[object]]) -> None:
    """Print a plain-text table (first column left-aligned, the others right-aligned)."""
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def fmt(row: list[str]) -> str:
        return "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row))

    print(f"\n## {title}")
    print(fmt(cells[0]))
    print("  ".join("-" * w for w in widths))
    for row in cells[1:]:
        print(fmt(row))
    sys.stdout.flush()


def with_and_without(label: str, times: dict[bool, list[float]], requests: dict[bool, list[int]] | None
                     ) -> list[object]:
    """A row of a benchmark timed with a feature (True) and without it (False): the medians in ms, their
    ratio, and the requests each made when counted (issue 20's lock information)."""
    with_s, without_s = median(times[True]), median(times[False])
    return [label, f"{with_s * 1000:.0f}", f"{without_s * 1000:.0f}", f"{with_s / without_s:.2f}×",
            f"{median(requests[True]):,.0f}" if requests else "", f"{median(requests[False]):,.0f}" if requests else ""]


def locks_table(reps: int, load_before: float, rows: Sequence[Sequence[object]]) -> None:
    table(f"the first call at a stop, medians of {reps}, load average {load_before:.1f} → "
          f"{os.getloadavg()[0]:.1f}", ["", "with locks (ms)", "without (ms)", "ratio", "requests with",
                                        "requests without"], rows)


def become_subreaper() -> None:
    """Orphaned descendants (debuggees whose launcher died) are re-parented to us, so we can see them."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1)


def _status(pid: int) -> dict[str, str]:
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return {}
    return {k: v.strip() for k, _, v in (line.partition(":") for line in text.splitlines())}


def cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return "?"
    return raw.replace(b"\0", b" ").decode(errors="replace").strip()


def descendants(root: int) -> list[int]:
    """Every live (non-zombie) descendant of ``root``, found through /proc PPid links."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        status = _status(int(entry))
        if not status or status.get("State", "").startswith("Z"):
            continue
        with contextlib.suppress(ValueError):
            children.setdefault(int(status.get("PPid", "0")), []).append(int(entry))
    found: list[int] = []
    stack = [root]
    while stack:
        for child in children.get(stack.pop(), []):
            found.append(child)
            stack.append(child)
    return found


def rss_kb(pid: int) -> int:
    value = _status(pid).get("VmRSS", "0 kB").split()[0]
    return int(value) if value.isdigit() else 0


def pss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def reap_zombies() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def cleanup_leftovers(grace_s: float = 3.0) -> list[str]:
    """After the event loop is gone: report and kill any descendant still running."""
    deadline = time.monotonic() + grace_s
    left = descendants(os.getpid())
    while left and time.monotonic() < deadline:
        reap_zombies()
        time.sleep(0.05)
        left = descendants(os.getpid())
    described = [f"{pid}: {cmdline(pid)[:120]}" for pid in left]
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    reap_zombies()
    return described


def report_leftovers(grace_s: float = 3.0) -> None:
    left = cleanup_leftovers(grace_s)
    if left:
        print(f"\nLEFTOVER processes after the run ({len(left)}), killed now:")
        for line in left:
            print(f"  {line}")
    else:
        print("\nleftover processes after the run: none")


# A raw DAP client for the baselines: deliberately not polydbg's own client, so the comparison is fair.
Sink = dict[str, list[float]]
RAW_TIMEOUT_S = 30.0


class RawDap:
    """Content-Length framed DAP over any stream pair (an adapter's stdio, or a TCP socket)."""

    WATCHED = ("initialized", "stopped", "exited", "terminated")

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self.reader = reader
        self.writer = writer
        self.seq = 0
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: dict[str, asyncio.Queue[dict[str, Any]]] = {name: asyncio.Queue() for name in self.WATCHED}
        self.task = asyncio.get_running_loop().create_task(self._read())

    async def _read(self) -> None:
        try:
            while True:
                header = await self.reader.readuntil(b"\r\n\r\n")
                found = re.search(rb"Content-Length:\s*(\d+)", header)
                assert found is not None, header
                message = json.loads(await self.reader.readexactly(int(found.group(1))))
                if message["type"] == "response":
                    future = self.pending.pop(message["request_seq"], None)
                    if future is not None and not future.done():
                        if message.get("success"):
                            future.set_result(message.get("body") or {})
                        else:
                            future.set_exception(RuntimeError(f"{message['command']}: {message.get('message')}"))
                elif message["type"] == "event" and message["event"] in self.events:
                    self.events[message["event"]].put_nowait(message.get("body") or {})
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            for future in self.pending.values():
                if not future.done():
                    future.set_exception(ConnectionError("the adapter closed the connection"))

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> asyncio.Future[dict[str, Any]]:
        self.seq += 1
        message: dict[str, Any] = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self.pending[self.seq] = future
        body = json.dumps(message, separators=(",", ":")).encode()
        self.writer.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        return future

    async def request(self, command: str, arguments: dict[str, Any] | None = None, sink: Sink | None = None,
                      timeout: float = RAW_TIMEOUT_S) -> dict[str, Any]:
        started = time.perf_counter()
        body = await asyncio.wait_for(self.send(command, arguments), timeout)
        if sink is not None:
            sink[command].append(time.perf_counter() - started)
        return body

    async def event(self, name: str, timeout: float = RAW_TIMEOUT_S) -> dict[str, Any]:
        return await asyncio.wait_for(self.events[name].get(), timeout)

    async def ended(self, timeout: float) -> None:
        """The first of ``exited`` / ``terminated`` (lldb-dap sends both, delve only ``terminated``)."""
        waits = [asyncio.ensure_future(self.events[name].get()) for name in ("exited", "terminated")]
        try:
            done, _ = await asyncio.wait(waits, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not done:
                raise asyncio.TimeoutError("the program did not exit")
        finally:
            for wait in waits:
                wait.cancel()

    async def stop_reading(self) -> None:
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task


Measured = list[tuple[str, dict[bool, list[float]], dict[bool, list[int]] | None]]


async def measure_locks(client: Any, reps: int, switch: Callable[[bool], None], deadlocks: int,
                           requests: Callable[[], int] | None = None) -> Measured:
    """The lock benchmarks' two measures, the modes taking turns (``switch(True)``: the lock information on): the
    first ``debug_stack(all_threads=true)`` of a stop, the program stopping afresh at a breakpoint at each
    ``debug_continue``; then, the breakpoints cleared, a ``debug_pause`` of the running program. ``requests()`` counts
    the debugger requests a stack call made (reset before it); ``deadlocks``: how many the program has."""
    took: dict[bool, list[float]] = {True: [], False: []}
    sent: dict[bool, list[int]] = {True: [], False: []}
    found: dict[bool, int] = {}
    for _ in range(reps):
        for with_locks in (True, False):
            switch(with_locks)
            before = requests() if requests else 0
            began = time.perf_counter()
            answer = await client.call_tool("debug_stack", {"all_threads": True})
            took[with_locks].append(time.perf_counter() - began)
            sent[with_locks].append((requests() if requests else 0) - before)
            assert not answer.is_error, answer
            found[with_locks] = len((answer.structured_content or {}).get("deadlocks") or [])
            again = await client.call_tool("debug_continue", {"timeout_s": 30})
            assert (again.structured_content or {}).get("reason") == "breakpoint", again
    await client.call_tool("debug_clear", {"all": True})
    paused: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(reps):  # a pause's report: the threads ranked, the stop's locals, every thread's locks
        for with_locks in (True, False):
            switch(with_locks)
            running = await client.call_tool("debug_continue", {"timeout_s": 0.2})
            assert (running.structured_content or {}).get("state") == "running", running
            began = time.perf_counter()
            report = await client.call_tool("debug_pause", {})
            paused[with_locks].append(time.perf_counter() - began)
            said = len((report.structured_content or {}).get("deadlocks") or [])
            assert said == (deadlocks if with_locks else 0), report
    switch(True)
    await client.call_tool("debug_terminate", {})
    assert found == {True: deadlocks, False: 0}, found
    return [("debug_stack(all_threads=true)", took, sent if requests else None), ("debug_pause", paused, None)]
