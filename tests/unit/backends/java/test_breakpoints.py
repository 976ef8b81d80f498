"""Line breakpoints on the JVM: a file's breakpoints diffed against those set (kit.bpdiff), binding in
loaded classes and in classes loaded later, and what a hit decides."""

from __future__ import annotations

from pathlib import Path

from polydbg.backends.base import BreakpointResult, SourceBreakpoint
from polydbg.backends.java.breakpoints import NOT_BOUND, LineBreakpoints, line_key
from polydbg.backends.java.conditions import Conditions
from polydbg.backends.java.sources import Sources
from polydbg.backends.java.threads import Threads
from polydbg.jdwp.codec import EventKind
from tests.unit.backends.java.fakevm import FakeVm

LINES = {1: [(0, 10), (4, 11), (8, 12)]}  # one method spanning lines 10-12


def _parts(tmp_path: Path, output: list[str] | None = None
           ) -> tuple[FakeVm, LineBreakpoints, str, list[tuple[int, BreakpointResult]]]:
    source = tmp_path / "demo" / "Main.java"
    source.parent.mkdir()
    source.write_text("package demo;\nclass Main {}\n")
    vm = FakeVm()
    logged = output if output is not None else []
    changed: list[tuple[int, BreakpointResult]] = []
    sources = Sources(vm, lambda: [])
    threads = Threads(vm, sources)
    lines = LineBreakpoints(vm, sources, Conditions(vm, threads, lambda _c, text: logged.append(text)),
                            lambda bp_id, result: changed.append((bp_id, result)), lambda: False)
    return vm, lines, str(source), changed


def _breakpoints(vm: FakeVm) -> list[int]:
    return [request for kind, request in vm.set if kind == EventKind.BREAKPOINT]


async def test_an_unchanged_breakpoint_keeps_its_request_and_its_hit_count(tmp_path: Path) -> None:
    vm, lines, path, _ = _parts(tmp_path)
    vm.load(7, "Ldemo/Main;", "Main.java", LINES)
    first = await lines.replace(path, [SourceBreakpoint(1, 10, hit_condition="3"), SourceBreakpoint(2, 11)])
    assert first == [BreakpointResult(True, line=10), BreakpointResult(True, line=11)]
    kept, dropped = _breakpoints(vm)
    assert await lines.hit(kept, 1) is None and await lines.hit(kept, 1) is None  # hits 1 and 2 of "== 3"

    again = await lines.replace(path, [SourceBreakpoint(5, 10, hit_condition="3"), SourceBreakpoint(6, 12)])

    assert again == [BreakpointResult(True, line=10), BreakpointResult(True, line=12)]
    assert vm.cleared == [(EventKind.BREAKPOINT, dropped)]  # the changed one only
    assert _breakpoints(vm)[:2] == [kept, dropped] and len(_breakpoints(vm)) == 3
    assert await lines.hit(kept, 1) == (5, "")  # the third hit, reported with the breakpoint's new id
    assert await lines.hit(dropped, 1) is None  # its request is no one's now


async def test_a_breakpoint_binds_when_its_class_loads(tmp_path: Path) -> None:
    vm, lines, path, changed = _parts(tmp_path)
    results = await lines.replace(path, [SourceBreakpoint(1, 11)])
    assert results == [BreakpointResult(False, message=NOT_BOUND)]
    assert [kind for kind, _ in vm.set] == [EventKind.CLASS_PREPARE]
    assert lines.files() == [path]

    await lines.class_prepared(vm.load(9, "Ldemo/Main$Inner;", "Main.java", LINES))

    assert changed == [(1, BreakpointResult(True, line=11))]
    await lines.replace(path, [SourceBreakpoint(1, 11)])
    assert [kind for kind, _ in vm.set] == [EventKind.CLASS_PREPARE, EventKind.BREAKPOINT]  # one prepare per file


async def test_a_class_of_another_package_is_not_the_file_s(tmp_path: Path) -> None:
    vm, lines, path, _ = _parts(tmp_path)
    vm.load(7, "Lother/Main;", "Main.java", LINES)
    assert await lines.replace(path, [SourceBreakpoint(1, 10)]) == [BreakpointResult(False, message=NOT_BOUND)]


async def test_refused_breakpoints_set_nothing(tmp_path: Path) -> None:
    vm, lines, path, _ = _parts(tmp_path)
    vm.load(7, "Ldemo/Main;", "Main.java", LINES)
    results = await lines.replace(path, [SourceBreakpoint(1, 10, hit_condition="often"),
                                         SourceBreakpoint(2, 10, condition="x >")])
    assert not any(r.verified for r in results)
    assert "hit_condition 'often' is not understood" in (results[0].message or "")
    assert "condition 'x >' is not evaluable Java" in (results[1].message or "")
    assert _breakpoints(vm) == [] and lines.files() == []


async def test_a_logpoint_and_a_false_hit_count_do_not_stop(tmp_path: Path) -> None:
    logged: list[str] = []
    vm, lines, path, _ = _parts(tmp_path, logged)
    vm.load(7, "Ldemo/Main;", "Main.java", LINES)
    await lines.replace(path, [SourceBreakpoint(1, 10, hit_condition="% 2"), SourceBreakpoint(2, 11, log_message="hi")])
    every_other, logpoint = _breakpoints(vm)
    assert [await lines.hit(every_other, 1) for _ in range(4)] == [None, (1, ""), None, (1, "")]
    assert await lines.hit(logpoint, 1) is None
    assert logged == ["hi\n"]


async def test_removing_every_breakpoint_clears_the_file(tmp_path: Path) -> None:
    vm, lines, path, _ = _parts(tmp_path)
    vm.load(7, "Ldemo/Main;", "Main.java", LINES)
    await lines.replace(path, [SourceBreakpoint(1, 10)])
    assert await lines.replace(path, []) == []
    assert vm.cleared == [(EventKind.BREAKPOINT, _breakpoints(vm)[0])] and lines.files() == []


def test_the_key_leaves_out_the_id() -> None:
    assert line_key(SourceBreakpoint(1, 10, "x > 1")) == line_key(SourceBreakpoint(2, 10, "x > 1"))
    assert line_key(SourceBreakpoint(1, 10)) != line_key(SourceBreakpoint(1, 10, log_message="m"))
