"""Breakpoints over a fake V8: a group is diffed against what is set (unchanged ones keep their V8 ids
and hit counts), refused ones are tried again, a mapped file says why it is not bound."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from polydbg.backends.base import FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.node.breakpoints import function_key, line_key, needs_map
from polydbg.backends.node.conditions import NODE_CONSOLE
from polydbg.backends.node.failures import FILTER, workers_run_tests
from tests.unit.backends.node.fakev8 import Session
from tests.workcount import Budget, counted_ids

APP = "/tmp/app/main.js"


@pytest.fixture
async def session() -> AsyncIterator[Session]:
    made = Session()
    yield made
    await made.close()


def _v8_sets(session: Session) -> list[dict[str, Any]]:
    """The line breakpoints set by URL (not the entry breakpoint's ``urlRegex``)."""
    return [params for method, params in session.v8.calls if method == "Debugger.setBreakpointByUrl"
            and "url" in params]


async def test_an_unchanged_breakpoint_stays_set_and_a_changed_one_is_set_again(session: Session) -> None:
    first = await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3), SourceBreakpoint(2, 5)])
    assert [(r.verified, r.line) for r in first] == [(True, 3), (True, 5)]
    session.v8.calls.clear()
    again = await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3),
                                                            SourceBreakpoint(2, 5, condition="i > 1"),
                                                            SourceBreakpoint(3, 9)])
    assert [r.line for r in again] == [3, 5, 9]
    assert session.v8.calls[0] == ("Debugger.removeBreakpoint", {"breakpointId": "bp2"})
    assert [(p["lineNumber"], p.get("condition")) for p in _v8_sets(session)] == [(4, "i > 1"), (8, None)]
    assert session.main.by_native == {"bp1": 1, "bp4": 2, "bp5": 3}  # bp3: the entry breakpoint


async def test_a_kept_breakpoint_keeps_its_hit_count(session: Session) -> None:
    spec = SourceBreakpoint(1, 3, hit_condition="2")
    await session.breakpoints.set_breakpoints(APP, [spec])
    assert not session.breakpoints.counts(1)  # the first hit
    await session.breakpoints.set_breakpoints(APP, [spec, SourceBreakpoint(2, 7)])
    assert session.breakpoints.counts(1)  # the second: counted on, not from zero


async def test_removed_breakpoints_are_removed_from_v8(session: Session) -> None:
    await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3), SourceBreakpoint(2, 5)])
    session.v8.calls.clear()
    assert await session.breakpoints.set_breakpoints(APP, []) == []
    assert sorted(params["breakpointId"] for _, params in session.v8.calls) == [
        "8:beforeScriptWithSourceMapExecution", "bp1", "bp2", "bp3"]  # no file to watch the loading of either
    assert session.main.by_native == {}
    assert not session.breakpoints.counts(1)


async def test_breakpoints_that_trade_ids_keep_their_places(session: Session) -> None:
    await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3), SourceBreakpoint(2, 5)])
    session.v8.calls.clear()
    results = await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(2, 3), SourceBreakpoint(1, 5)])
    assert session.v8.calls == []
    assert [r.line for r in results] == [3, 5]
    assert session.main.by_native == {"bp1": 2, "bp2": 1}


async def test_a_refused_condition_is_checked_again_when_sent_again(session: Session) -> None:
    session.main.context_id = 1
    session.v8.answers["Runtime.compileScript"] = {"exceptionDetails": {"exception": {
        "description": "SyntaxError: Unexpected token ')'\n    at x"}}}
    spec = SourceBreakpoint(1, 3, condition="i >")
    [refused] = await session.breakpoints.set_breakpoints(APP, [spec])
    assert not refused.verified
    assert refused.message == ("condition 'i >' is not a JavaScript expression (SyntaxError: Unexpected token ')'); "
                               "the breakpoint was not set")
    del session.v8.answers["Runtime.compileScript"]
    [placed] = await session.breakpoints.set_breakpoints(APP, [spec])
    assert placed.verified and [p["condition"] for p in _v8_sets(session)] == ["i >"]


async def test_a_hit_condition_that_is_not_one_is_refused(session: Session) -> None:
    [result] = await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3, hit_condition="often")])
    assert not result.verified and "hit_condition 'often' is not understood" in (result.message or "")
    assert _v8_sets(session) == []


async def test_a_refused_breakpoint_is_not_set_in_a_target_that_arrives_later(session: Session) -> None:
    await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3, hit_condition="often"),
                                                    SourceBreakpoint(2, 5)])
    session.v8.calls.clear()
    await session.breakpoints.configure(session.main)  # as for a worker or child process that starts now
    assert [p["lineNumber"] for p in _v8_sets(session)] == [4]  # line 5 only: line 3 would stop on every hit
    [changed] = [r for kind, r in session.listener.events if kind == "breakpoint" and r[0] == 1] or [None]
    assert changed is None  # and the refused one is never reported verified


async def test_a_logpoint_is_a_condition_that_logs(session: Session) -> None:
    await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3, log_message="i={i}")])
    [params] = _v8_sets(session)
    assert params["condition"].startswith(f'({NODE_CONSOLE}.context("polydbg-log").log("i=%s", ')
    assert params["condition"].endswith(", false)")


async def test_a_mapped_file_without_a_loaded_map_says_which_map_could_not_be_read(session: Session) -> None:
    session.main.scripts.parsed({"scriptId": "9", "url": "file:///nonexistent/dist/a.js", "sourceMapURL": "a.js.map"})
    [result] = await session.breakpoints.set_breakpoints("/nonexistent/src/a.ts", [SourceBreakpoint(1, 2)])
    assert not result.verified
    assert result.message == (
        "not bound yet: no loaded script maps to this file; it binds when the module that does loads (the source "
        "map of /nonexistent/dist/a.js could not be read: cannot read source map /nonexistent/dist/a.js.map: "
        "No such file or directory)")
    entry = [p for method, p in session.v8.calls if "urlRegex" in p]
    assert len(entry) == 1 and session.main.entry_bp == "bp1"


async def test_an_unchanged_function_breakpoint_is_not_looked_up_again(session: Session) -> None:
    session.v8.answers["Runtime.evaluate"] = {"result": {"type": "function", "objectId": "f1"}}
    session.v8.answers["Runtime.getProperties"] = {"internalProperties": [
        {"name": "[[FunctionLocation]]", "value": {"value": {"scriptId": "7", "lineNumber": 10}}}]}
    [result] = await session.breakpoints.set_function_breakpoints([FunctionBreakpoint(4, "add")])
    assert result.verified and result.line == 11
    session.v8.calls.clear()
    [again] = await session.breakpoints.set_function_breakpoints([FunctionBreakpoint(4, "add")])
    assert again == result and session.v8.calls == []
    await session.breakpoints.set_function_breakpoints([])
    assert session.v8.calls == [("Debugger.removeBreakpoint", {"breakpointId": "bp1"})]


def test_keys_are_everything_but_the_id() -> None:
    assert line_key(SourceBreakpoint(1, 3, "c", "2", "m")) == line_key(SourceBreakpoint(9, 3, "c", "2", "m"))
    assert line_key(SourceBreakpoint(1, 3)) != line_key(SourceBreakpoint(1, 3, log_message="m"))
    assert function_key(FunctionBreakpoint(1, "f")) != function_key(FunctionBreakpoint(1, "f", hit_condition="2"))


@pytest.mark.parametrize(("path", "mapped"), [("a.js", False), ("A.MJS", False), ("b.cjs", False), ("c.jsx", False),
                                              ("d.ts", True), ("e.tsx", True), ("f.coffee", True),
                                              ("bin/www", False), ("/usr/lib/node_modules/npm/bin/npm", False)])
def test_files_other_than_javascript_need_a_source_map(path: str, mapped: bool) -> None:
    assert needs_map(path) is mapped


async def test_the_scripts_with_breakpoints_are_paused_as_they_load(session: Session) -> None:
    """A JavaScript file may be transformed as it loads (jest, babel): the entry breakpoint pauses the files with
    breakpoints, and V8's pause before a script with a map, so each is bound through its map if it has one."""
    await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 3)])
    await session.breakpoints.set_breakpoints("/tmp/app/a b.js", [SourceBreakpoint(2, 4)])
    entries = [params for method, params in session.v8.calls if "urlRegex" in params]
    assert entries[-1]["urlRegex"] == r"^(?:file:///tmp/app/a%20b\.js|file:///tmp/app/main\.js)$"
    assert ("Debugger.setInstrumentationBreakpoint",
            {"instrumentation": "beforeScriptWithSourceMapExecution"}) in session.v8.calls
    await session.breakpoints.set_breakpoints("/tmp/app/b.ts", [SourceBreakpoint(3, 1)])
    assert session.main.entry_regex == r"^file://(?!.*/node_modules/)"  # a mapped file's script is not named


async def test_one_more_breakpoint_in_a_file_with_thousands_costs_no_scan_per_breakpoint(session: Session) -> None:
    """Each wanted breakpoint was looked for in the list of kept ones: adding one to a file with 2,000 cost
    ~50 ms of CPU, to 20,000 2 s. Counted, not timed: setting 2,000 and adding one compares no two ids (a
    set's lookups find each by identity; a few per breakpoint are allowed), where the list compared each with
    every one kept before it (4,000,000 comparisons)."""
    comparisons = Budget("comparisons of breakpoint ids to set 2,000 breakpoints and add one", 4 * 4001)
    ids = counted_ids(comparisons)
    specs = [SourceBreakpoint(ids(n), n) for n in range(1, 2001)]
    await session.breakpoints.set_breakpoints(APP, specs)
    session.v8.calls.clear()
    results = await session.breakpoints.set_breakpoints(APP, [*specs, SourceBreakpoint(ids(2001), 2001)])
    comparisons.check()
    assert len(results) == 2001 and len(_v8_sets(session)) == 1  # only the new one reaches V8


async def test_v8_is_given_a_files_breakpoints_from_its_first_line_and_takes_them_back_from_its_last(
        session: Session) -> None:
    """V8 patches a function again for every breakpoint it keeps there at each one set or removed, walking to
    each one's position: in that order the ones kept are the early ones (1,000 in one function: 3-5 s to
    remove from the last line back, 9 s from the first)."""
    results = await session.breakpoints.set_breakpoints(APP, [SourceBreakpoint(1, 30), SourceBreakpoint(2, 10),
                                                              SourceBreakpoint(3, 20)])
    assert [r.line for r in results] == [30, 10, 20]  # answered in the order asked
    assert [p["lineNumber"] for p in _v8_sets(session)] == [9, 19, 29]
    placed = {line: native for native, (_, line, _) in session.main.native_at.items()}
    session.v8.calls.clear()
    await session.breakpoints.set_breakpoints(APP, [])
    removed = [p["breakpointId"] for method, p in session.v8.calls if method == "Debugger.removeBreakpoint"]
    assert removed[:3] == [placed[29], placed[19], placed[9]], (removed, placed)


async def test_vitests_main_process_judges_no_caught_exception(session: Session) -> None:
    """vitest runs its tests in a worker: its main process pauses on uncaught exceptions only under the failures
    filter (vite's ~260 caught ``new URL`` tries in Node's internals paused it as it started, ~0.7 s), and on every
    one again when the agent asks for raised exceptions; a runner that runs tests in its main process (jest
    --runInBand) pauses on caught ones there."""
    assert workers_run_tests("/p/node_modules/vitest/vitest.mjs")
    assert workers_run_tests("/p/node_modules/.pnpm/vitest@3.2.4/node_modules/vitest/vitest.mjs")
    assert not workers_run_tests("/p/node_modules/jest/bin/jest.js") and not workers_run_tests(None)

    def states() -> list[Any]:
        return [params["state"] for method, params in session.v8.calls if method == "Debugger.setPauseOnExceptions"]
    session.breakpoints.workers_run_tests = True
    await session.breakpoints.set_exception_filters([FILTER])
    await session.breakpoints.set_exception_filters([FILTER, "raised"])
    session.breakpoints.workers_run_tests = False
    await session.breakpoints.set_exception_filters([FILTER])
    assert states() == ["uncaught", "all", "all"]
