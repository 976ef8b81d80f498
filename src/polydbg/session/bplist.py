"""The agent's breakpoints as an answer of bounded size, however many there are.

A program with 2,000 breakpoints answered ``debug_breakpoints`` with 386 KB. The list is paged (``start``)
in pages of about ``PAGE_BYTES``; a list longer than its page also says how many breakpoints each file holds
and how many of them are bound, and where the next page starts. Conditions and log messages are shown cut
(``debug_break`` echoes one breakpoint whole).
"""

from __future__ import annotations

import collections
import os

from polydbg.session.breakpoints import Breakpoint
from polydbg.session.inspection import clip
from polydbg.session.model import BreakpointInfo, BreakpointList

PAGE_BYTES = 1400  # of a page's breakpoints, as an estimate of their lines
SHOWN_CHARS = 120  # a condition, hit condition or log message in a list
SUMMARY_FILES = 5
SHOWN_IDS = 20


def listing(session_id: str, every: list[Breakpoint], filters: list[str], start: int) -> BreakpointList:
    """The page of ``every`` from ``start``, with a summary when there is more than one page."""
    page: list[BreakpointInfo] = []
    size = 0
    for bp in every[start:]:
        shown = _shown(bp.info())
        size += _size(shown)
        if page and size > PAGE_BYTES:
            break
        page.append(shown)
    after = start + len(page)
    whole = start == 0 and after == len(every)
    return BreakpointList(session_id=session_id, breakpoints=page, exception_filters=filters,
                          total=None if whole else len(every), start=start or None,
                          by_file=None if whole else _by_file(every),
                          more=f"debug_breakpoints(start={after})" if after < len(every) else None)


def _shown(info: BreakpointInfo) -> BreakpointInfo:
    cut = {name: clip(value, SHOWN_CHARS)[0] for name in ("condition", "hit_condition", "log_message", "message")
           if isinstance(value := getattr(info, name), str) and len(value) > SHOWN_CHARS}
    return info.model_copy(update=cut) if cut else info


def _size(info: BreakpointInfo) -> int:
    return 40 + sum(len(str(value)) for value in (info.file, info.function, info.watch, info.condition,
                                                   info.hit_condition, info.log_message, info.message) if value)


def _by_file(every: list[Breakpoint]) -> str:
    """How many breakpoints each file (or kind) holds and how many are bound, the largest first."""
    counts: collections.Counter[str] = collections.Counter()
    bound: collections.Counter[str] = collections.Counter()
    for bp in every:
        where = os.path.basename(bp.file) if bp.file else "functions" if bp.function else "watches"
        counts[where] += 1
        bound[where] += bp.verified
    parts = [f"{where} {count} ({bound[where]} bound)" for where, count in counts.most_common(SUMMARY_FILES)]
    others = len(counts) - SUMMARY_FILES
    return ", ".join(parts) + (f", and {others} more files" if others > 0 else "")


def removed_text(ids: list[int]) -> str:
    """What ``debug_clear`` says it removed: the ids, or the first and last of many."""
    if not ids:
        return "no breakpoints to remove"
    if len(ids) <= SHOWN_IDS:
        return f"removed breakpoints {ids}"
    return f"removed {len(ids)} breakpoints: #{ids[0]}, #{ids[1]}, … #{ids[-1]}"
