"""A trace's answer leads with a summary, through the MCP layer on every debugger that traces: a lost update (two
threads read the same count, each writes it plus one; tests/programs/trace/race.*, made the same every run by a
barrier) reads in one answer: every value seen twice, once by each thread, each thread's hits, and where a
condition first and last held; rows name their thread; the whole answer within 2 KB. lldb-dap's logpoints cannot
name their thread: its rows name none and its answer says nothing of threads."""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Tools, require
from tests.integration.test_trace import LLDB, TRACE, Tracing

ROUNDS = 300  # each thread's increments
ANSWER_BYTES = 2000

pytestmark = pytest.mark.usefixtures("anyio_backend")


@dataclass(frozen=True)
class Race(Tracing):
    # how the rows name the two threads (a pattern each); None: no thread named
    threads: tuple[str, ...] | None = None


RACES = [
    Race("python", "race.py", (), threads=("adder-1", "adder-2")),
    Race("gdb", "race.c", ("gdb", "gcc"), adapter="gdb", threads=(r"thread \d+", r"thread \d+")),
    Race("delve", "go/race/main.go", ("dlv", "go"), threads=(r"goroutine \d+", r"goroutine \d+")),
    Race("java", "Race.java", ("java", "javac"), threads=("adder-1", "adder-2")),
    Race("node", "race.js", ("node",), threads=(r"worker 1 \(race\.js\)", r"worker 2 \(race\.js\)")),
    Race("lldb-dap", "race.c", (LLDB, "gcc"), adapter="lldb-dap"),
]


@pytest.fixture(params=RACES, ids=[r.name for r in RACES])
def race(request: pytest.FixtureRequest) -> Race:
    chosen: Race = request.param
    require(*chosen.needs)
    return chosen


def _built(race: Race, build_dir: Path) -> str:
    """What debug_launch runs: the source, or the binary built from it."""
    if race.source.endswith(".c"):
        binary = build_dir / "trace-race"
        if not binary.exists():
            subprocess.run(["gcc", "-g", "-O0", "-pthread", "-o", str(binary), race.path], check=True,
                           capture_output=True, timeout=120)
        return str(binary)
    if race.source.endswith(".go"):
        binary = build_dir / "trace-race-go"
        subprocess.run(["go", "build", "-gcflags=all=-N -l", "-o", str(binary), "./race"], cwd=TRACE / "go",
                       check=True, capture_output=True, timeout=300)
        return str(binary)
    return race.path


async def test_a_lost_update_reads_in_the_summary_of_one_answer(tools: Tools, race: Race, build_dir: Path) -> None:
    before = race.line("before the")
    launch = {"program": _built(race, build_dir), "args": [str(ROUNDS)],
              "breakpoints": [{"file": race.path, "line": before}]}
    if race.adapter:
        launch["adapter"] = race.adapter
    assert (await tools("debug_launch", **launch))["state"] == "stopped"
    write = race.line("the write")
    refused = await tools.error("debug_trace", functions=["work"], where="seen >= 250")
    assert refused.startswith("where is for points and expressions"), refused
    answer = await tools.client.call_tool("debug_trace", {
        "points": [{"file": race.path, "line": write}], "expressions": ["seen"], "where": "seen >= 250",
        "max_hits": 100_000, "timeout_s": 120})
    result = answer.structured_content
    assert result is not None and not answer.is_error, answer
    text = "\n".join(block.text for block in answer.content if block.type == "text")
    assert len(text.encode()) <= ANSWER_BYTES, text
    hits = 2 * ROUNDS
    assert (result["stopped_because"], result["total_hits"]) == ("exited", hits), text
    # every value read twice: each increment of one thread lost to the other's
    summary = f"{hits} hits, {ROUNDS} distinct (each twice), 0..{ROUNDS - 1}, first 0, last {ROUNDS - 1}"
    assert result["values"] == {"seen": summary}
    lines = text.splitlines()
    assert lines[1] == f"seen: {summary}", text  # the summary leads
    name = Path(race.source).name
    held = ROUNDS - 250
    if race.threads is None:
        assert "threads" not in result and all("thread" not in row for row in result["hits"]), result
        assert result["where"].startswith(f"where seen >= 250: held at {2 * held} of {hits} hits; first at hit "
                                          f"{hits - 2 * held + 1} ({name}:{write}  seen=250), "), result["where"]
    else:
        first, second = race.threads
        threads = result["threads"]
        assert re.fullmatch(rf"threads: 2, hits: ({first}|{second}) {ROUNDS}, ({first}|{second}) {ROUNDS}",
                            threads[0]) and len(threads) == 4, threads
        each = f": {ROUNDS} hits; seen {ROUNDS} distinct (each once), 0..{ROUNDS - 1}"
        assert sorted(re.sub(r"^  (.*?)(?=: )", "T", line) for line in threads[1:3]) == [f"T{each}"] * 2, threads
        assert re.fullmatch(rf"  ({first}|{second}){re.escape(each)}", threads[1]), threads
        assert threads[3] == f"  seen: {ROUNDS} values seen in more than one thread"
        assert all(re.fullmatch(f"{first}|{second}", row["thread"]) for row in result["hits"]), result["hits"]
        assert re.search(rf"^  {name}:{write} \[({first}|{second})\]  seen=0$", text, re.MULTILINE), text
        # the workers' lines may arrive in another order than they ran (Node's workers post theirs on their own)
        assert re.match(rf"where seen >= 250: held at {2 * held} of {hits} hits; first at hit \d+ \({name}:{write} "
                        rf"\[({first}|{second})\]  seen=25[01]\), last at hit \d+ \({name}:{write} \[({first}|"
                        rf"{second})\]  seen=(299|298)\); rows from the first: debug_output\(stream=\"trace\", "
                        rf"cursor=\d+\)$", result["where"]), result["where"]
    cursor = int(re.findall(r"cursor=(\d+)", result["where"])[0])
    rows = await tools("debug_output", stream="trace", cursor=cursor, max_bytes=200)
    assert re.match(rf"{name}:{write}( \[[^]]+\])?  seen=25[01]  ← where\n", rows["text"]), rows  # marked in the log
    output = await tools("debug_output", max_bytes=30_000)
    assert f"counter {ROUNDS} of {hits}" in output["text"], output
    await tools("debug_terminate")
