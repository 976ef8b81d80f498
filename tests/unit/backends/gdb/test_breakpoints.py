"""Breakpoints under gdb (breakpoints.py): hit conditions as ignore counts or counters, each group diffed
against what gdb has, gdb's news about its breakpoints. gdb is a script of answers: no gdb runs."""

from __future__ import annotations

import pytest

from polydbg.backends.base import BreakpointResult, DataBreakpoint, FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.gdb.breakpoints import Breakpoints, counter, counting_condition, ignore_count
from polydbg.backends.gdb.frames import Frames
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.kit.bpdiff import Placed
from polydbg.backends.kit.hits import HitCondition
from polydbg.errors import AdapterRequestError
from polydbg.mi.client import MiResult, mi_quote
from tests.fakes import RecordingListener
from tests.workcount import Budget, reads_of

FILE = "/src/points.c"


class ScriptedGdb(GdbState):
    """Answers breakpoint commands with the next gdb number; records what was sent."""

    def __init__(self, refuse: str = "") -> None:
        super().__init__("cpp")
        self.sent: list[str] = []
        self.number = 0
        self.refuse = refuse
        self.python = True

    async def cmd(self, command: str) -> MiResult:
        self.sent.append(command)
        if self.refuse and self.refuse in command:
            raise AdapterRequestError("-break-insert", "No symbol table is loaded.")
        if command.startswith(("-break-insert", "-dprintf-insert", "-catch-")):
            self.number += 1
            return MiResult("done", {"bkpt": {"number": str(self.number), "line": "5", "addr": "0x401136"}})
        if command.startswith("-break-watch"):
            self.number += 1
            return MiResult("done", {"wpt": {"number": str(self.number), "exp": "total"}})
        return MiResult("done", {})


def parts(refuse: str = "") -> tuple[ScriptedGdb, Breakpoints, RecordingListener]:
    gdb = ScriptedGdb(refuse)
    listener = RecordingListener()
    return gdb, Breakpoints(gdb, Frames(gdb), listener, ("throw", "catch")), listener


@pytest.mark.parametrize(("text", "ignore"), [(">= 1", 0), (">= 3", 2), ("> 0", 0), ("> 2", 2),
                                              ("3", None), ("== 3", None), ("< 3", None), ("<= 3", None),
                                              ("% 2", None)])
def test_from_some_hit_on_is_an_ignore_count_else_a_counter(text: str, ignore: int | None) -> None:
    assert ignore_count(HitCondition.parse(text)) == ignore


@pytest.mark.parametrize(("text", "condition"), [("3", "(++$c) == 3"), ("< 3", "(++$c) < 3"),
                                                 ("<= 3", "(++$c) <= 3"), ("% 2", "(++$c) % 2 == 0")])
def test_a_counting_condition(text: str, condition: str) -> None:
    assert counting_condition(HitCondition.parse(text), "(++$c)") == condition


def test_the_counter_is_gdbs_python_function_where_gdb_has_python() -> None:
    assert counter(4, python=True) == "$_polydbg_hit(4)"
    assert counter(4, python=False) == "(++$_polydbg_h4)"


async def test_unchanged_breakpoints_keep_their_numbers() -> None:
    gdb, breakpoints, _ = parts()
    first = await breakpoints.set_breakpoints(FILE, [SourceBreakpoint(1, 5), SourceBreakpoint(2, 7)])
    assert first == [BreakpointResult(True, 5), BreakpointResult(True, 5)]
    assert gdb.sent == [f"-break-insert -f --source {mi_quote(FILE)} --line 5",
                        f"-break-insert -f --source {mi_quote(FILE)} --line 7"]
    gdb.sent.clear()
    await breakpoints.set_breakpoints(FILE, [SourceBreakpoint(1, 5), SourceBreakpoint(3, 9, condition="i > 2")])
    assert gdb.sent == ["-break-delete 2", f"-break-insert -f -c {mi_quote('(i > 2)')} --source {mi_quote(FILE)} "
                                           "--line 9"]
    assert breakpoints.ids_hit(1) == (1,) and breakpoints.ids_hit(3) == (3,) and breakpoints.kind_of(2) is None
    assert breakpoints.kind_of(3) == "line"


async def test_hit_conditions_become_ignore_counts_or_counters_in_the_condition() -> None:
    gdb, breakpoints, _ = parts()
    await breakpoints.set_function_breakpoints([FunctionBreakpoint(1, "add", hit_condition=">= 3"),
                                                FunctionBreakpoint(2, "sub", condition="x", hit_condition="% 2")])
    assert gdb.sent[0] == f"-break-insert -f -i 2 --function {mi_quote('add')}"
    assert gdb.sent[1] == f"-break-insert -f -c {mi_quote('(x) && $_polydbg_hit(1) % 2 == 0')} " \
                          f"--function {mi_quote('sub')}"
    assert breakpoints.kind_of(1) == "function"
    gdb.python = False  # a gdb without Python counts in a convenience variable
    await breakpoints.set_function_breakpoints([FunctionBreakpoint(3, "mul", hit_condition="2")])
    assert gdb.sent[-2] == f"-interpreter-exec console {mi_quote('set $_polydbg_h2 = 0')}"
    assert gdb.sent[-1] == f"-break-insert -f -c {mi_quote('(++$_polydbg_h2) == 2')} --function {mi_quote('mul')}"


async def test_what_gdb_or_polydbg_refuses_is_unverified_with_the_reason() -> None:
    gdb, breakpoints, _ = parts(refuse="nowhere")
    results = await breakpoints.set_function_breakpoints([FunctionBreakpoint(1, "add", hit_condition="often"),
                                                          FunctionBreakpoint(2, "nowhere")])
    assert not results[0].verified and "often" in (results[0].message or "")
    assert results[1] == BreakpointResult(False, message="No symbol table is loaded.")
    gdb.python = False
    [logpoint] = await breakpoints.set_breakpoints(FILE, [SourceBreakpoint(3, 5, log_message="x={x}")])
    assert logpoint == BreakpointResult(False, message="logpoints need gdb with Python")


async def test_a_logpoint_is_a_dprintf_calling_polydbg_formatter() -> None:
    gdb, breakpoints, _ = parts()
    [result] = await breakpoints.set_breakpoints(FILE, [SourceBreakpoint(1, 5, log_message="x={x}")])
    assert result.verified
    call = '$_polydbg_log("' + b"x={x}".hex() + '")'
    assert gdb.sent == [f"-dprintf-insert -f --source {mi_quote(FILE)} --line 5 \"%.0d\" {mi_quote(call)}"]


async def test_exception_filters_are_catchpoints() -> None:
    gdb, breakpoints, _ = parts()
    await breakpoints.set_exception_filters(["throw", "panic"])  # panic is not a C++ filter
    assert gdb.sent == ["-catch-throw"]
    assert breakpoints.kind_of(1) == "catch" and breakpoints.catch_of(1) == "throw"
    await breakpoints.set_exception_filters(["catch"])
    assert gdb.sent[1:] == ["-break-delete 1", "-catch-catch"]
    assert breakpoints.kind_of(1) is None and breakpoints.catch_of(2) == "catch"


async def test_a_watchpoint_gdb_deleted_is_unverified_and_inserted_again() -> None:
    gdb, breakpoints, listener = parts()
    spec = DataBreakpoint(7, "total", "readWrite")
    assert await breakpoints.set_data_breakpoints([spec], None) == [BreakpointResult(True)]
    assert gdb.sent == [f"-break-watch -a {mi_quote('total')}"]
    breakpoints.forget_watch(1, "out of scope")
    assert listener.events == [("breakpoint", (7, BreakpointResult(False, message="out of scope")))]
    await breakpoints.set_data_breakpoints([spec], None)
    assert gdb.sent[1:] == [f"-break-watch -a {mi_quote('total')}"]  # nothing to delete: gdb did
    assert breakpoints.ids_hit(2) == (7,)


async def test_a_pending_breakpoint_that_resolves_is_reported_once() -> None:
    gdb, breakpoints, listener = parts()
    await breakpoints.set_breakpoints(FILE, [SourceBreakpoint(4, 5)])
    resolved = {"bkpt": {"number": "1", "line": "6", "addr": "0x401140"}}
    breakpoints.on_modified(resolved)
    breakpoints.on_modified(resolved)
    breakpoints.on_modified({"bkpt": {"number": "99", "line": "1"}})  # not polydbg's
    assert listener.events == [("breakpoint", (4, BreakpointResult(True, 6)))]
    breakpoints.on_deleted({"id": "1"})  # a raw "delete": gdb no longer has it, nothing to delete
    assert await breakpoints.set_breakpoints(FILE, []) == []
    assert gdb.sent == [f"-break-insert -f --source {mi_quote(FILE)} --line 5"]


async def test_gdbs_news_about_one_of_thousands_of_breakpoints_is_found_without_a_scan() -> None:
    """gdb re-resolves every breakpoint when the program starts (one ``=breakpoint-modified`` each): with each
    record matched by a scan of every placed breakpoint, 10,000 breakpoints cost ~3 s of CPU at the start.
    Counted, not timed: a record reads its own breakpoint once; the scan read ~5,000 others'."""
    _, breakpoints, listener = parts()
    await breakpoints.set_breakpoints(FILE, [SourceBreakpoint(n, n) for n in range(1, 10001)])
    with reads_of(Placed, Budget("reads of placed breakpoints for 10,000 records", 4 * 10000)) as reads:
        for number in range(1, 10001):
            breakpoints.on_modified({"bkpt": {"number": str(number), "line": str(number + 1000), "addr": "0x401140"}})
    reads.check()
    assert len(listener.events) == 10000
    assert listener.events[-1] == ("breakpoint", (10000, BreakpointResult(True, 11000)))
