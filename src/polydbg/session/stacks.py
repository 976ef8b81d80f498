"""Every thread's stack in one bounded answer (``debug_stack(all_threads=true)``), for any backend.

A program may have thousands of threads (a JVM with 5,000 parked workers answered 2.16 MB in 4.5–8 s),
so the listing is built to fit ``PAGE_BYTES`` of text, in this order:

1. every thread with its own frames, when they all fit;
2. else threads whose shown frames are the same (same functions, files and lines) as one entry: the
   first such thread, with how many others share its stack and the first of their ids — with as many
   of the innermost frames as fit (at least ``FEWEST_FRAMES``; threads alike in those are one entry);
3. else a page of entries, and the call for the next page: ``thread_id`` with ``all_threads`` names
   the thread the listing starts at.

Threads are in the debugger's order; once grouped, the stopped thread's entry comes first. Sizes are the
rendered text's, estimated here (the session does not render).

Reading is bounded too: one stack per thread, and a debugger may answer them one at a time (debugpy's
adapter handles one request after another; 2,000 stack requests sent at once kept it busy for minutes, and
every later request of the session waited behind them). So a listing reads for ``READ_BUDGET_S`` at most,
the stopped thread (and the one a page starts at) first, in batches no bigger than the rest of the budget
can answer at the rate the debugger has shown (at most ``IN_FLIGHT``): what is still in flight when the
budget is spent is a batch at most, dropped. Stacks read are kept for the stop (``StopScope.stacks``): the
answer lists them and says how many threads are not read yet, and the next call reads on from there.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

from polydbg.backends.base import Frame, Thread
from polydbg.errors import AdapterRequestError, AdapterTimeoutError
from polydbg.session.model import AsyncFrame, FrameInfo, ThreadStack

PAGE_BYTES = 2000  # the text of one all-threads answer, at most (the structured copy is about as big)
MORE_BYTES = 320  # of it, the closing lines that say what is left out and how to see it
STACK_BYTES = 24_000  # the text of one thread's stack, at most, whatever ``levels`` (with its copy < 64 KB)
DEFAULT_STACK_BYTES = 2000  # and at the default levels (20): the rest is paged
MIN_CALLERS = 4  # async callers listed whatever the budget left
FEWEST_FRAMES = 3  # frames an entry keeps before the listing pages instead
LOCKS_BYTES = 90  # a thread's locks line, estimated
SAME_IDS = 8  # ids of the threads that share an entry's stack, listed with it
IN_FLIGHT = 256  # stacks read at once, at most
READ_BUDGET_S = 5.0  # one listing reads stacks this long at most (the next call reads on)

Stack = tuple[list[Frame], int | None]  # (frames from ``start``, the thread's total, when known)


@dataclass
class Entry:
    """One thread's stack, or the stack several threads share (the first of them named)."""

    thread: Thread
    frames: list[Frame]
    total: int | None
    same: list[int] = field(default_factory=list)  # the other threads with this stack
    base: str | None = None  # the directory paths are shown relative to
    extra: int = 0  # bytes its listing takes beyond the frames (its locks' line)

    def size(self, depth: int) -> int:
        """The length of its text with ``depth`` frames (``render.stack``'s lines, estimated)."""
        head = len(self.thread.name) + 16 + self.extra + (32 + 8 * min(len(self.same), SAME_IDS) if self.same else 0)
        return head + sum(len(f.name) + len(shown_path(f.file, self.base)) + 18 for f in self.frames[:depth])


def shown_path(file: str | None, base: str | None) -> str:
    """A frame's file as an answer shows it: relative to ``base`` when under it."""
    if not file:
        return "(no source)"
    return file[len(base) + 1:] if base and file.startswith(base.rstrip(os.sep) + os.sep) else file


@dataclass
class Page:
    entries: list[Entry]
    depth: int  # frames shown per entry
    grouped: bool  # threads with the same stack are one entry
    next_thread: int | None  # the thread the next page starts at; None on the last page
    threads: int  # threads in the program
    stacks: int  # entries in the whole listing
    unread: int = 0  # threads whose stacks are not read yet (the listing leaves them out)


async def read_all(threads: list[Thread], read: Callable[[int], Awaitable[Stack]], known: dict[int, Stack],
                   first: Sequence[int | None] = (), budget_s: float | None = None) -> None:
    """Read into ``known`` the stacks of ``threads`` it lacks, the ``first`` ones before the rest, until all are
    read or ``budget_s`` (``READ_BUDGET_S``) is spent. A thread the debugger cannot answer for (it ended
    meanwhile) has no frames. A debugger that answers nothing fails the listing (its own deadline's error);
    one that answered something stops being asked when the budget is spent, its late answers dropped."""
    async def one(thread_id: int) -> Stack:
        try:
            return await read(thread_id)
        except AdapterRequestError:
            return [], None

    loop = asyncio.get_running_loop()
    deadline = loop.time() + (READ_BUDGET_S if budget_s is None else budget_s)
    wanted = {t.id for t in threads if t.id not in known}
    todo = [t for t in dict.fromkeys(first) if t is not None and t in wanted]
    rest = wanted.difference(todo)
    todo += [t.id for t in threads if t.id in rest]
    window = 1  # the first thread alone, however long it takes: the debugger's pace is not known yet
    while todo:
        batch, todo = todo[:window], todo[window:]
        began = loop.time()
        tasks = {asyncio.ensure_future(one(thread_id)): thread_id for thread_id in batch}
        try:
            done, late = await asyncio.wait(tasks, timeout=max(0.0, deadline - began) if known else None)
        finally:
            for task in tasks:
                task.cancel()  # those still waiting (none once all are done)
        failures = [failure for task in done if (failure := task.exception()) is not None]
        known.update((tasks[task], task.result()) for task in done if task.exception() is None)
        if failures and not (isinstance(failures[0], AdapterTimeoutError) and known):
            raise failures[0]
        left = deadline - loop.time()
        if late or failures or left <= 0:
            return
        # as many as the rest of the budget can answer at this pace, halved: what is in flight at the end stays small
        window = max(1, min(IN_FLIGHT, int(len(batch) * left / max(loop.time() - began, 1e-3) / 2)))


def budget_for(levels: int) -> int:
    """One thread's answer: ~2 KB for the default 20 levels, more as the agent asks for more (up to STACK_BYTES)."""
    return min(STACK_BYTES, max(DEFAULT_STACK_BYTES, levels * 100))


def fitting_callers(callers: list[AsyncFrame], budget: int) -> int:
    """How many async callers (innermost first) fit what is left of a thread's answer; at least a few."""
    count, used = 0, 0
    for caller in callers:
        used += len(caller.function) + len(caller.file or "") + 16 + (len(caller.via) + 40 if caller.via else 0)
        if used > budget and count >= MIN_CALLERS:
            break
        count += 1
    return count


def fitting(thread: Thread, frames: list[Frame], base: str | None = None, budget: int = STACK_BYTES) -> int:
    """How many of one thread's frames fit its answer."""
    entry = Entry(thread, frames, None, base=base)
    count = len(frames)
    while count > 1 and entry.size(count) > budget:
        count = count * budget // entry.size(count) if entry.size(count) > 2 * budget else count - 1
    return count


def entries(threads: list[Thread], stacks: list[Stack], current: int | None, depth: int | None,
            base: str | None = None, keys: Mapping[int, Hashable] | None = None) -> list[Entry]:
    """One entry per thread in the debugger's order (``depth`` None), or one per distinct run of the
    innermost ``depth`` frames (and ``keys``' value: threads holding other locks are not alike), the current
    thread's first."""
    ordered = list(zip(threads, stacks, strict=True))
    if depth is not None:
        ordered.sort(key=lambda pair: pair[0].id != current)
    found: list[Entry] = []
    by_stack: dict[object, Entry] = {}
    for thread, (frames, total) in ordered:
        key = (tuple((f.name, f.file, f.line) for f in frames[:depth]), (keys or {}).get(thread.id))
        known = by_stack.get(key) if depth is not None else None
        if known is not None:
            known.same.append(thread.id)
            continue
        entry = by_stack[key] = Entry(thread, frames, total, base=base,
                                      extra=LOCKS_BYTES if keys and thread.id in keys else 0)
        found.append(entry)
    return found


def paged(threads: list[Thread], stacks: list[Stack], current: int | None, levels: int, first: int | None,
          base: str | None = None, budget: int = PAGE_BYTES - MORE_BYTES, unread: int = 0,
          keys: Mapping[int, Hashable] | None = None) -> Page:
    """The page of the listing of ``threads`` (those whose stacks were read: ``unread`` more are not) that starts
    at thread ``first`` (None, or one not read: the beginning) and fits ``budget`` (paths relative to ``base``);
    threads alike in their frames and in ``keys`` (their locks) are one entry when the listing is grouped."""
    listing = entries(threads, stacks, current, None, base, keys)
    depth, grouped = levels, sum(entry.size(levels) for entry in listing) > budget
    if grouped:  # the most frames for which the threads alike in them fit as one entry each
        low, depth = min(levels, FEWEST_FRAMES), levels
        while low < depth:
            middle = (low + depth + 1) // 2
            if sum(entry.size(middle) for entry in entries(threads, stacks, current, middle, base, keys)) <= budget:
                low = middle
            else:
                depth = middle - 1
        listing = entries(threads, stacks, current, depth, base, keys)
    start = 0
    if first is not None:
        start = next((at for at, entry in enumerate(listing) if first == entry.thread.id or first in entry.same), 0)
    shown: list[Entry] = []
    used = 0
    for entry in listing[start:]:
        used += entry.size(depth)
        if shown and used > budget:
            break
        shown.append(entry)
    after = start + len(shown)
    return Page(shown, depth, grouped, listing[after].thread.id if after < len(listing) else None,
                len(threads) + unread, len(listing), unread)


def thread_stack(entry: Entry, start: int, depth: int, above: Sequence[Frame] = ()) -> ThreadStack:
    """The answer's form of ``entry``, its first ``depth`` frames, after the library frames ``above`` frame 0
    (indexed -1, -2, … outward from it: listed, not addressable)."""
    return ThreadStack(thread_id=entry.thread.id, name=entry.thread.name, total=entry.total,
                       frames=[FrameInfo(index=i - len(above), function=f.name, file=f.file, line=f.line)
                               for i, f in enumerate(above)]
                       + [FrameInfo(index=start + i, function=f.name, file=f.file, line=f.line)
                          for i, f in enumerate(entry.frames[:depth])],
                       same=len(entry.same) or None, same_ids=entry.same[:SAME_IDS] or None)


def frameless(threads: Sequence[Thread]) -> str:
    """Names the threads of a listing that list no frames."""
    first = f"thread {threads[0].id}"
    return f"{first} lists no frames" if len(threads) == 1 else \
        f"{first} and {len(threads) - 1} more list no frames"


def more(page: Page, start: int, levels: int) -> str | None:
    """What the page leaves out, and the calls that show it."""
    said = []
    if page.depth < levels and any(len(entry.frames) > page.depth for entry in page.entries):
        said.append(f"threads listed by their innermost {page.depth} frames, those alike in them once: "
                    "debug_stack(thread_id=N) shows one whole")
    if page.next_thread is not None:
        said.append(f"{page.threads:,} threads in {page.stacks:,} stacks, more from thread {page.next_thread}: "
                    f"debug_stack(all_threads=true, thread_id={page.next_thread}"
                    + (f", start={start}" if start else "") + f", levels={levels})")
    if page.unread:
        said.append(f"{page.unread:,} of {page.threads:,} threads not listed: their stacks were not read within "
                    f"{READ_BUDGET_S:g} s; debug_stack(all_threads=true" + (f", start={start}" if start else "")
                    + f", levels={levels}) again reads on")
    return "; ".join(said) or None
