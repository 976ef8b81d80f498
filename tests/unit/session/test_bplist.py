"""The breakpoint list stays small however many breakpoints there are: paged, summarised by file, each long
condition or message cut, and every page says where the next one starts."""

from __future__ import annotations

import json
from pathlib import Path

from polydbg.mcp.render import REPORT_BUDGET, breakpoint_list
from polydbg.session.bplist import removed_text
from polydbg.session.model import BreakpointList
from tests.unit.session.rig import Rig, write_program

MANY = 2000
ANSWER_MAX = 64 * 1024


async def test_two_thousand_breakpoints_are_paged_and_summarised(tmp_path: Path) -> None:
    program = write_program(tmp_path)
    other = write_program(tmp_path, "other.py")
    rig = Rig(program)
    await rig.start()
    for n in range(MANY):  # straight into the store: sending them is the debugger's part
        rig.session.breakpoints.add(file=program if n % 100 else other, line=1 + n % 19, verified=True,
                                    condition=f"line_1 == {n}" + " " * (n % 3) * 200)
    ids: list[int] = []
    start = 0
    pages = 0
    while True:
        page = rig.session.breakpoint_list(start)
        text = breakpoint_list(page, rig.session.cwd)
        assert len(text.encode()) <= REPORT_BUDGET, text
        assert len(json.dumps(page.model_dump(mode="json", exclude_none=True))) <= ANSWER_MAX
        assert page.total == MANY and page.by_file == "prog.py 1980 (1980 bound), other.py 20 (20 bound)"
        assert text.startswith(f"{MANY} breakpoints, #{page.breakpoints[0].id}–#{page.breakpoints[-1].id} shown "
                               f"(from {start}): prog.py 1980 (1980 bound), other.py 20 (20 bound)\n"), text
        assert all(len(b.condition or "") <= 120 for b in page.breakpoints)
        ids += [b.id for b in page.breakpoints]
        pages += 1
        if page.more is None:
            break
        assert text.splitlines()[-2] == f"… {MANY - len(ids)} more: debug_breakpoints(start={len(ids)})"
        start = len(ids)
    assert ids == [info.id for info in rig.session.breakpoint_infos()] and pages < MANY // 5
    assert removed_text(ids) == f"removed {MANY} breakpoints: #{ids[0]}, #{ids[1]}, … #{ids[-1]}"
    assert removed_text(ids[:3]) == f"removed breakpoints {ids[:3]}"


async def test_a_short_list_is_whole_and_says_nothing_more(tmp_path: Path) -> None:
    program = write_program(tmp_path)
    rig = Rig(program)
    await rig.start()
    await rig.session.add_line_breakpoint(program, 4)
    page = rig.session.breakpoint_list(0)
    assert (page.total, page.by_file, page.more, page.start) == (None, None, None, None)
    assert breakpoint_list(page, rig.session.cwd) == "#1 prog.py:4 — verified, 0 hits\nexceptions: none"
    empty = BreakpointList(session_id="s1", breakpoints=[], exception_filters=["uncaught"])
    assert breakpoint_list(empty) == "no breakpoints\nexceptions: uncaught"
