"""Faults around a stopped program, on real debuggers: thousands of threads whose stacks debugpy answers one at a
time."""

from __future__ import annotations

from tests.conftest import Tools, line_of, program

WAITING = program("waiting_threads.py")


async def test_the_stacks_of_python_threads_blocked_in_c_code_are_all_read_in_one_listing(tools: Tools) -> None:
    """pydevd waited 0.5 s for each thread that is not stopped (blocked in a lock, a sleep, a read) before it
    answered its stack, and debugpy answers one request after another: 2,000 such threads made a listing of
    21 minutes, which wedged the session. Each answers at once now, and the listing is bounded anyway."""
    report = await tools("debug_launch", program=WAITING, args=["80"],
                         breakpoints=[{"file": WAITING, "line": line_of("waiting_threads.py", "# all started")}])
    assert report["state"] == "stopped", report
    listing = await tools("debug_stack", all_threads=True, levels=2)
    assert "not listed" not in (listing.get("more") or ""), listing.get("more")  # all read within the budget
    threads = listing["threads"]
    assert sum(1 + t.get("same", 0) for t in threads) == 81, threads  # the workers and the main thread
    workers = [t for t in threads if t["name"].startswith("w")]
    assert all(t["frames"][0]["function"] == "worker" for t in workers), workers
    assert sum(1 + t.get("same", 0) for t in workers) == 80, workers
    assert (await tools("debug_evaluate", expression="len(workers)"))["value"] == "80"  # not held up
    await tools("debug_terminate")
