"""Program output: cursor paging, stream filters, output in stop reports, and a 100 MB flood."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from tests.conftest import Tools, line_of, program

CHATTY = program("chatty.py")
FLOOD = program("flood.py")

STDOUT_LINES = "".join(f"out-{i:03d}\n" for i in range(40))
STDERR_LINES = "".join(f"err-{i:03d}\n" for i in range(40))
FLOOD_BYTES = 100 * 1024 * 1024 + len("THE-END-OF-THE-FLOOD\n")


def _rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS in /proc/self/status")


async def _read_all(tools: Tools, cursor: int, max_bytes: int, **arguments: object) -> tuple[str, int]:
    """Page through debug_output from ``cursor``; checks each page's size and continuity."""
    pages = []
    for _ in range(10_000):
        page = await tools("debug_output", cursor=cursor, max_bytes=max_bytes, **arguments)
        assert len(page["text"].encode()) <= max_bytes
        assert page["next_cursor"] >= cursor
        pages.append(page["text"])
        cursor = page["next_cursor"]
        if not page["more"]:
            return "".join(pages), cursor
    raise AssertionError("debug_output never ran out of pages")


async def test_output_paging_streams_and_reports(tools: Tools) -> None:
    first_line = line_of("chatty.py", "# first stop")
    second_line = line_of("chatty.py", "# second stop")
    report = await tools("debug_launch", program=CHATTY, breakpoints=[{"file": CHATTY, "line": first_line},
                                                                       {"file": CHATTY, "line": second_line}])
    assert report["location"]["line"] == first_line

    # everything written before the first stop, in one read
    whole = await tools("debug_output", cursor=0, max_bytes=30_000)
    assert whole["more"] is False and whole["dropped"] == 0
    total = whole["next_cursor"]
    assert total == len(whole["text"].encode())
    # stdout and stderr come through separate pipes, so "all" interleaves them at write granularity
    assert total == len(STDOUT_LINES) + len(STDERR_LINES)
    assert sorted(whole["text"]) == sorted(STDOUT_LINES + STDERR_LINES)

    # the report carried the tail of it (nearest the stop), capped, and says where the earlier part is
    out = report["output"]
    assert whole["text"].endswith(out["text"])
    assert 0 < len(out["text"].encode()) < total
    assert out["next_cursor"] == total
    assert out["truncated"] == total - len(out["text"].encode())
    assert out["earlier_cursor"] == 0
    earlier = await tools("debug_output", cursor=out["earlier_cursor"], max_bytes=out["truncated"])
    assert earlier["text"] + out["text"] == whole["text"]

    # small pages, each continuing exactly where the last one ended
    for size in (7, 100):
        text, end = await _read_all(tools, 0, size)
        assert text == whole["text"]
        assert end == total
    cursor = 0
    for _ in range(20):
        page = await tools("debug_output", cursor=cursor, max_bytes=1)
        assert page["text"] == whole["text"][cursor] and page["next_cursor"] == cursor + 1
        cursor = page["next_cursor"]

    # stream filters
    stdout = await tools("debug_output", cursor=0, stream="stdout", max_bytes=30_000)
    assert stdout["text"] == STDOUT_LINES
    stderr = await tools("debug_output", cursor=0, stream="stderr", max_bytes=30_000)
    assert stderr["text"] == STDERR_LINES
    assert (await _read_all(tools, 0, 9, stream="stdout"))[0] == STDOUT_LINES
    assert (await _read_all(tools, 0, 13, stream="stderr"))[0] == STDERR_LINES

    # a cursor at the end: nothing new
    empty = await tools("debug_output", cursor=total)
    assert empty["text"] == "" and empty["next_cursor"] == total and empty["more"] is False

    # the next report carries exactly the output since the last one
    second = await tools("debug_continue")
    assert second["location"]["line"] == second_line
    assert second["output"]["text"] == "between stops\n"
    assert second["output"]["next_cursor"] == total + len("between stops\n")
    assert second["output"]["truncated"] == 0
    # a step that prints nothing reports no output
    quiet = await tools("debug_step")
    assert "output" not in quiet

    done = await tools("debug_continue")
    assert done["state"] == "exited"
    assert done["output"]["text"] == "done\n"
    after = await tools("debug_output", cursor=total)
    assert after["text"] == "between stops\ndone\n"
    assert after["state"] == "exited"
    await tools("debug_terminate")


async def test_a_100_mb_flood_neither_stalls_nor_grows_memory(tools: Tools) -> None:
    rss_before = _rss_bytes()
    started = time.monotonic()
    report = await tools("debug_launch", program=FLOOD, timeout_s=120)
    elapsed = time.monotonic() - started
    rss_after = _rss_bytes()
    print(f"100 MB flood: exited after {elapsed:.1f} s; RSS {rss_before >> 20} MB -> {rss_after >> 20} MB")
    assert report["state"] == "exited", report.get("note")
    assert report["exit_code"] == 0
    assert rss_after - rss_before < 200 * 1024 * 1024

    # the report shows the tail and says where the earlier retained output starts
    out = report["output"]
    assert out["next_cursor"] == FLOOD_BYTES
    assert out["truncated"] > 0
    assert out["earlier_cursor"] > 90 * 1024 * 1024  # older bytes were dropped by the retention limit

    # cursor 0 points into dropped data: the answer says how much was lost
    oldest = await tools("debug_output", cursor=0, max_bytes=100)
    assert oldest["dropped"] > 90 * 1024 * 1024
    assert oldest["next_cursor"] == oldest["dropped"] + len(oldest["text"].encode())
    assert oldest["more"] is True
    text = await tools.text("debug_output", cursor=0, max_bytes=100)
    assert f"({oldest['dropped']} older bytes were dropped" in text

    # the tail is readable
    tail = await tools("debug_output", cursor=FLOOD_BYTES - 200, max_bytes=1000)
    assert tail["dropped"] == 0
    assert tail["text"].endswith("x\nTHE-END-OF-THE-FLOOD\n")
    assert len(tail["text"]) == 200
    assert tail["next_cursor"] == FLOOD_BYTES and tail["more"] is False
    await tools("debug_terminate")


async def all_of(tools: Tools, stream: str, expected: str, deadline_s: float = 30.0) -> dict[str, Any]:
    """A stream of the program's once all of it came: debugpy's launcher reads stdout and stderr from pipes and sends
    them apart from the stop (which comes from pydevd), so under load the last lines may be on their way still."""
    loop = asyncio.get_running_loop()
    ends = loop.time() + deadline_s
    while True:
        read = await tools("debug_output", stream=stream, max_bytes=30_000)
        if read["text"] == expected or loop.time() > ends:
            return read
        await asyncio.sleep(0.05)


async def test_logpoint_lines_are_a_stream_of_their_own_that_reports_keep(tools: Tools) -> None:
    """A logpoint's lines are neither the program's stdout nor the debugger's console: debug_output reads them as
    ``logpoints``, and a report shows them apart, so the program's chatter never cuts them away."""
    loop = line_of("chatty.py", 'print(f"out-{i:03d}")')
    report = await tools("debug_launch", program=CHATTY, breakpoints=[
        {"file": CHATTY, "line": loop, "log_message": "i={i}"},
        {"file": CHATTY, "line": line_of("chatty.py", "# first stop")}])
    assert report["output"]["logpoints"] == "".join(f"i={i}\n" for i in range(40))[-len(report["output"]["logpoints"]):]
    assert report["output"]["logpoints"].endswith("i=39\n")
    assert "i=" not in report["output"]["text"]
    logged = await tools("debug_output", stream="logpoints", max_bytes=30_000)
    assert logged["text"] == "".join(f"i={i}\n" for i in range(40))
    stdout = await all_of(tools, "stdout", STDOUT_LINES)
    assert stdout["text"] == STDOUT_LINES
    assert (await all_of(tools, "stderr", STDERR_LINES))["text"] == STDERR_LINES
    assert "i=" not in (await tools("debug_output", stream="console", max_bytes=30_000))["text"]
    everything = (await tools("debug_output", max_bytes=30_000))["text"]
    assert sorted(everything) == sorted(STDOUT_LINES + STDERR_LINES + logged["text"])  # interleaved by writes
    text = await tools.text("debug_continue")
    assert "logpoints:" not in text  # none since the last report
    await tools("debug_terminate")
