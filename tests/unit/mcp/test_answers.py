"""The net under every tool's own paging: no answer's text passes 64 KB, whatever the program or the input."""

from __future__ import annotations

from polydbg.mcp.tools import ANSWER_LIMIT, bounded


def test_no_answer_text_passes_the_limit() -> None:
    assert bounded("short") == "short"
    cut = bounded("é" * ANSWER_LIMIT)
    assert len(cut.encode()) <= ANSWER_LIMIT and "answer cut at 64 KB of 131,072 bytes" in cut
