"""Every thread's stack, bounded whatever the program: each thread when all fit, else threads with the
same stack once, fewer frames each, then pages from a thread; one thread's stack cut to fit too."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from polydbg.backends.base import Frame, Thread
from polydbg.errors import UsageError
from polydbg.mcp import render
from polydbg.session import stacks
from polydbg.session.model import AsyncFrame, StackResult
from tests.unit.session.rig import Rig, write_program


def parked(depth: int = 8) -> list[Frame]:
    names = ["Unsafe.park", "LockSupport.park", "AbstractQueuedSynchronizer.acquire", "CountDownLatch.await",
             "Pool.park", "Pool.lambda$main$0", "Thread.run", "Thread.start0"]
    return [Frame(names[i % len(names)], f"java/util/concurrent/File{i}.java", 100 + i) for i in range(depth)]


def program(threads: int, distinct: int = 1, depth: int = 8) -> dict[Thread, list[Frame]]:
    """``threads`` threads; thread 1 stopped in main, the others in ``distinct`` different stacks."""
    found = {Thread(1, "main (stopped here)"): [Frame("Pool.main", "Pool.java", 17)]}
    for n in range(2, threads + 1):
        frames = parked(depth)
        frames[0] = frames[0]._replace(line=n % distinct)  # where they differ: the innermost frame
        found[Thread(n, f"w{n - 2} (waiting)")] = frames
    return found


def page_of(found: dict[Thread, list[Frame]], levels: int = 20, first: int | None = None) -> stacks.Page:
    threads = list(found)
    return stacks.paged(threads, [(found[t][:levels], len(found[t])) for t in threads], 1, levels, first)


def text_of(page: stacks.Page, levels: int = 20) -> str:
    result = StackResult(session_id="s1", threads=[stacks.thread_stack(e, 0, page.depth) for e in page.entries],
                         more=stacks.more(page, 0, levels))
    return render.stack(result)


def test_a_few_threads_are_listed_each_with_their_frames() -> None:
    page = page_of(program(3))
    assert [e.thread.id for e in page.entries] == [1, 2, 3] and not page.grouped and page.depth == 20
    assert page.next_thread is None and stacks.more(page, 0, 20) is None


def test_five_thousand_threads_with_one_stack_are_one_entry_that_says_how_many() -> None:
    page = page_of(program(5000), levels=2)
    assert [(e.thread.id, len(e.same)) for e in page.entries] == [(1, 0), (2, 4998)]
    text = text_of(page, 2)
    assert "thread 2 w0 (waiting) and 4,998 more with these frames (3, 4, 5, 6, 7, 8, 9, 10, …):" in text, text
    assert len(text) <= stacks.PAGE_BYTES, len(text)


def test_many_different_stacks_keep_their_innermost_frames_then_page_until_every_thread_is_shown() -> None:
    found = program(2000, distinct=60, depth=30)
    seen: set[int] = set()
    first = None
    pages = 0
    while True:
        page = page_of(found, levels=30, first=first)
        text = text_of(page, 30)
        assert len(text) <= stacks.PAGE_BYTES and page.depth == stacks.FEWEST_FRAMES, (len(text), page.depth)
        assert page.entries[0].thread.id == (first or 1)
        for entry in page.entries:
            seen.update([entry.thread.id, *entry.same])
        pages += 1
        if page.next_thread is None:
            break
        assert f"debug_stack(all_threads=true, thread_id={page.next_thread}, levels=30)" in text, text
        assert "threads listed by their innermost 3 frames" in text, text
        first = page.next_thread
    assert seen == set(range(1, 2001)) and 5 < pages < 61, pages
    middle = page_of(found, levels=30, first=1234)  # a page may start at any thread: the one its stack is listed with
    assert 1234 in (middle.entries[0].thread.id, *middle.entries[0].same)


def test_a_deep_stack_is_cut_to_its_bound_and_says_where_to_go_on() -> None:
    thread = Thread(1, "main")
    frames = [Frame("std::vector<std::map<std::string, int>>::operator[]" * 3, "/usr/include/c++/12/bits/x.h", n)
              for n in range(1000)]
    fits = stacks.fitting(thread, frames)
    assert 0 < fits < 1000 and stacks.Entry(thread, frames, None).size(fits) <= stacks.STACK_BYTES
    assert stacks.fitting(thread, frames[:3]) == 3


@pytest.fixture
async def rig(tmp_path: Path) -> Rig:
    rig = Rig(write_program(tmp_path))
    await rig.start()
    return rig


async def test_the_session_answers_every_thread_bounded_and_pages_by_thread(rig: Rig) -> None:
    rig.backend.stacks = program(3000, distinct=300, depth=25)
    result = await rig.session.stack(None, 0, 20, True)
    text = render.stack(result)
    assert len(text) <= stacks.PAGE_BYTES and result.threads[0].thread_id == 1, text
    assert len(json.dumps(result.model_dump(exclude_none=True))) < 2 * stacks.PAGE_BYTES
    assert result.more is not None and "debug_stack(all_threads=true, thread_id=" in result.more, result.more
    following = int(result.more.rpartition("thread_id=")[2].partition(",")[0])
    after = await rig.session.stack(following, 0, 20, True)
    assert after.threads[0].thread_id == following
    whole = await rig.session.stack(2, 0, 1000, False)
    assert [f.line for f in whole.threads[0].frames][:2] == [2, 101] and whole.more is None
    with pytest.raises(UsageError) as refused:
        await rig.session.stack(99_999, 0, 20, True)
    assert "no thread 99999" in str(refused.value) and len(str(refused.value)) < 400, str(refused.value)


async def test_a_debugger_slow_to_answer_stacks_is_asked_no_more_than_the_budget_allows_and_the_next_call_reads_on(
        rig: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    """debugpy answers one request after another: asked for every stack at once, it was busy for minutes and the
    session with it. A listing lists what its budget read, leaves one batch at most in flight, and reads on later."""
    monkeypatch.setattr(stacks, "READ_BUDGET_S", 2.0)
    rig.backend.stacks = program(500, distinct=1)
    answers = asyncio.Event()  # threads past 100 are answered only once this is set
    asked: list[int] = []
    read = rig.backend.stack_trace

    async def slow(thread_id: int, start: int, levels: int) -> tuple[list[Frame], int | None]:
        asked.append(thread_id)
        if thread_id > 100:
            await answers.wait()
        return await read(thread_id, start, levels)

    rig.backend.stack_trace = slow  # type: ignore[method-assign]
    first = await asyncio.wait_for(rig.session.stack(None, 0, 20, True), 30)
    listed = sum(1 + (t.same or 0) for t in first.threads)
    assert listed == 100 and first.more is not None and "400 of 500 threads not listed" in first.more, first.more
    assert len(asked) - 100 <= stacks.IN_FLIGHT, len(asked)  # what was left unanswered: one batch at most
    assert (await rig.session.evaluate("line_2", None)).value  # the session is not held up
    answers.set()
    second = await asyncio.wait_for(rig.session.stack(None, 0, 20, True), 30)
    assert second.more is None and [(t.thread_id, t.same) for t in second.threads] == [(1, None), (2, 498)]
    assert asked.count(50) == 1, asked.count(50)  # stacks read at this stop are not read again


async def test_a_thread_that_lists_no_frames_is_said_why_when_the_debugger_knows(rig: Rig) -> None:
    """debugpy leaves library code out of stacks: a server's thread running only library code listed a bare
    "thread 2 serving:" line. The debugger's reason is the single thread's answer; a listing points to it."""
    rig.backend.stacks = {Thread(1, "main"): [Frame("main", rig.program, 3)], Thread(2, "serving"): [],
                          Thread(3, "polling"): []}
    said = await rig.session.stack(None, 0, 20, True)
    assert said.more is None  # a debugger that does not know why says nothing
    rig.backend.frameless_hint = "thread {id} runs library code only"
    listing = await rig.session.stack(None, 0, 20, True)
    assert [t.frames for t in listing.threads[1:]] == [[], []]
    assert listing.more == "thread 2 and 1 more list no frames: debug_stack(thread_id=2) says why"
    alone = await rig.session.stack(3, 0, 20, False)
    assert alone.more == "thread 3 runs library code only" and alone.threads[0].frames == []
    assert (await rig.session.stack(1, 0, 20, False)).more is None


def test_a_threads_answer_is_about_2_kb_at_the_default_levels_and_grows_with_levels() -> None:
    """A vitest test's stack (long runner paths, 24 async callers) answered 3.8 KB at the default 20 levels."""
    assert stacks.budget_for(20) == stacks.DEFAULT_STACK_BYTES == 2000
    assert stacks.budget_for(100) == 10_000 and stacks.budget_for(1000) == stacks.STACK_BYTES
    long_path = "/proj/node_modules/@vitest/runner/dist/chunks/index.DhVVvlAw.js"
    callers = [AsyncFrame(function=f"runTest{i}", file=long_path, line=i, via="await" if i % 3 == 0 else None)
               for i in range(24)]
    kept = stacks.fitting_callers(callers, 1000)
    assert stacks.MIN_CALLERS <= kept < 24
    assert stacks.fitting_callers(callers, 0) == stacks.MIN_CALLERS  # a few whatever is left
