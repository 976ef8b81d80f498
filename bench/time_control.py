"""Benchmark: what time control costs — recording a native loop, running back to a write, reloading an edit.

Through an in-process MCP client, against gdb driven directly (its own Python timing the same commands) in the
same run:

- recording: ``bench/programs/record_target.c`` (gcc -g -O0) runs a loop of ``--iterations`` iterations from a
  breakpoint before it to one after it, without and with ``record`` (recording starts at the first stop);
- reverse: from a stop after a value was written and a short loop ran (``--after`` iterations, ~10⁴
  instructions), ``debug_watch`` the value and ``debug_continue(reverse=true)`` back to the write (gdb alone with
  a software watchpoint: a hardware one does not fire backwards here);
- reload: per language (Python, Node, Java), a program stopped in a loop calling a function; the function is
  edited and ``debug_continue(reload=true)`` runs to the next hit with the new code, against a plain
  ``debug_continue`` to the next hit (the difference is the reload).

Printed: medians in ms of ``--repeats`` runs, and the load average at the start and end.
Targets (issue 22): none stated; the table says what each costs.

Run: .venv/bin/python bench/time_control.py [--iterations 100000] [--after 1250] [--repeats 5] [--record-repeats 1]
     [--parts record reverse reload] [--languages python node java]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from mcp import Client

from _util import BENCH, call, line_of, median, ms, table, timed
from polydbg.mcp.server import build_server
from polydbg.policy import Policy

NATIVE = str(BENCH / "programs" / "record_target.c")
RELOAD = BENCH / "programs" / "reload"
BEFORE_LOOP = line_of("/* before the loop */", NATIVE)
AFTER_LOOP = line_of("/* after the loop */", NATIVE)
THE_WRITE = line_of("/* the write */", NATIVE)
THE_END = line_of("/* the end */", NATIVE)
RECORD_LIMIT = 4_000_000  # instructions: the loop's whole record fits (gdb's default keeps 200,000)


def build_native(directory: str) -> str:
    exe = os.path.join(directory, "record_target")
    subprocess.run(["gcc", "-g", "-O0", "-o", exe, NATIVE], check=True)
    return exe


def raw_gdb(exe: str, args: list[str], script: list[str]) -> dict[str, float]:
    """gdb in batch mode running ``script``; each ``TOOK name`` line its Python printed, in seconds."""
    commands = ["set pagination off", "set confirm off", f"set args {' '.join(args)}", "python import time",
                *script]
    done = subprocess.run(["gdb", "-nx", "-batch", *[a for c in commands for a in ("-ex", c)], exe],
                          capture_output=True, text=True, timeout=600)
    took = {m.group(1): float(m.group(2)) for m in re.finditer(r"TOOK (\S+) ([\d.]+)", done.stdout)}
    if not took:
        raise RuntimeError(f"gdb printed no timing:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    for match in re.finditer(r"Log contains (\d+) instructions", done.stdout):
        took["instructions"] = float(match.group(1))
    return took


def timing(name: str, command: str) -> str:
    return f'python t = time.perf_counter(); gdb.execute("{command}", to_string=True); ' \
           f'print("TOOK {name}", time.perf_counter() - t)'


RECORDING = [f"set record full insn-number-max {RECORD_LIMIT}", "record full"]


async def recording(client: Client, exe: str, iterations: int, repeats: int) -> list[list[object]]:
    args = [str(iterations), "10"]
    rows: list[list[object]] = []
    for record in (False, True):
        mcp_times, raw_times = [], []
        for _ in range(repeats):
            report = await call(client, "debug_launch", program=exe, args=args, adapter="gdb", record=record,
                                breakpoints=[{"file": NATIVE, "line": BEFORE_LOOP}], timeout_s=120)
            assert report.get("reason") == "breakpoint", report
            took, moved = await timed(client, "debug_continue", to={"file": NATIVE, "line": AFTER_LOOP},
                                      timeout_s=600)
            assert moved.get("location", {}).get("line") == AFTER_LOOP, moved
            mcp_times.append(took)
            await call(client, "debug_terminate")
            raw = raw_gdb(exe, args, [f"break record_target.c:{BEFORE_LOOP}", "run", *(RECORDING if record else []),
                                      f"tbreak record_target.c:{AFTER_LOOP}", timing("loop", "continue")])
            raw_times.append(raw["loop"])
        rows.append([f"{iterations:,}-iteration loop, {'recorded' if record else 'not recorded'}",
                     ms(median(mcp_times)), ms(median(raw_times)), f"{median(mcp_times) / median(raw_times):.2f}"])
    return rows


async def reverse(client: Client, exe: str, after: int, repeats: int) -> list[list[object]]:
    args = ["10", str(after)]
    mcp_times, raw_times, instructions = [], [], 0.0
    for _ in range(repeats):
        report = await call(client, "debug_launch", program=exe, args=args, adapter="gdb", record=True,
                            breakpoints=[{"file": NATIVE, "line": THE_WRITE}, {"file": NATIVE, "line": THE_END}],
                            timeout_s=120)
        assert report.get("location", {}).get("line") == THE_WRITE, report
        assert (await call(client, "debug_continue")).get("location", {}).get("line") == THE_END
        await call(client, "debug_watch", expression="target")
        took, back = await timed(client, "debug_continue", reverse=True, timeout_s=600)
        assert back.get("location", {}).get("line") == THE_WRITE, back
        mcp_times.append(took)
        await call(client, "debug_terminate")
        # a software watchpoint, as polydbg sets while recording: a hardware one never fires running backwards on
        # this kind of machine (gdb runs back to the start of the recording instead, in a quarter of the time)
        raw = raw_gdb(exe, args, ["set can-use-hw-watchpoints 0", f"break record_target.c:{THE_WRITE}", "run",
                                  *RECORDING,
                                  f"tbreak record_target.c:{THE_END}", "continue", "info record", "watch target",
                                  timing("back", "reverse-continue")])
        raw_times.append(raw["back"])
        instructions = raw.get("instructions", 0.0)
    return [[f"reverse continue to a watchpoint {int(instructions):,} instructions back", ms(median(mcp_times)),
             ms(median(raw_times)), f"{median(mcp_times) / median(raw_times):.2f}"]]


LANGUAGES = {"python": "reload_target.py", "node": "reload_target.js", "java": "ReloadTarget.java"}


async def reload(client: Client, language: str, directory: str, repeats: int) -> list[object]:
    source = Path(directory) / LANGUAGES[language]
    shutil.copy(RELOAD / LANGUAGES[language], source)
    original = source.read_text()
    body = line_of("the loop body", str(source))
    report = await call(client, "debug_launch", program=str(source), args=["100000"],
                        breakpoints=[{"file": str(source), "line": body}], timeout_s=120)
    assert report.get("reason") == "breakpoint", report
    plain, reloading = [], []
    for k in range(repeats):
        took, _ = await timed(client, "debug_continue")
        plain.append(took)
        source.write_text(original.replace("i * 2", f"i * {3 + k}"))
        took, moved = await timed(client, "debug_continue", reload=True)
        assert "reloaded" in (moved.get("note") or ""), moved
        reloading.append(took)
    await call(client, "debug_terminate")
    return [language, ms(median(plain)), ms(median(reloading)), ms(median(reloading) - median(plain))]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=100_000)
    parser.add_argument("--after", type=int, default=1250)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--record-repeats", type=int, default=1, help="a recorded 10⁵ loop takes ~45 s")
    parser.add_argument("--parts", nargs="+", default=["record", "reverse", "reload"])
    parser.add_argument("--languages", nargs="+", default=list(LANGUAGES))
    options = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory(prefix="polydbg-bench-") as directory:
        async with Client(build_server(policy=Policy(record_limit=RECORD_LIMIT))) as client:
            native_rows: list[list[object]] = []
            if {"record", "reverse"} & set(options.parts):
                exe = build_native(directory)
                if "record" in options.parts:
                    native_rows += await recording(client, exe, options.iterations, options.record_repeats)
                if "reverse" in options.parts:
                    native_rows += await reverse(client, exe, options.after, options.repeats)
                table("Recording and running back (gdb record full), median ms",
                      ["what", "polydbg (MCP)", "gdb alone", "ratio"], native_rows)
            if "reload" in options.parts:
                rows = [await reload(client, language, directory, options.repeats) for language in options.languages]
                table("Reload of a one-function change, median ms", ["language", "debug_continue to the next hit",
                      "debug_continue(reload=true)", "the reload"], rows)
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
