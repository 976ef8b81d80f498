"""Source excerpts: numbered lines around a line, the current one marked ``>`` and breakpoints ``*``, bounded by
the file and by a line length; the names near a stop; files read afresh when they change; and the policy's
roots, which a file must lie in unless the program is stopped in it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polydbg.errors import PolicyError, UsageError
from polydbg.policy import Policy
from polydbg.session import source
from polydbg.session.model import SourceResult
from tests.unit.session.rig import Rig, write_program


@pytest.fixture
def twelve(tmp_path: Path) -> str:
    path = tmp_path / "twelve.py"
    path.write_text("".join(f"row{n}\n" for n in range(1, 13)))
    return str(path)


def test_an_excerpt_numbers_and_marks_its_lines(twelve: str) -> None:
    text, first, last, total = source.excerpt(twelve, 10, 2, current=10, breakpoints={9, 12, 30})
    assert (first, last, total) == (8, 12, 12)
    assert text.splitlines() == [" 8  row8", " 9 *row9", "10> row10", "11  row11", "12 *row12"]  # numbers aligned
    both, *_ = source.excerpt(twelve, 3, 0, current=3, breakpoints={3})
    assert both == "3>*row3"


def test_an_excerpt_stops_at_the_ends_of_the_file(twelve: str, tmp_path: Path) -> None:
    assert source.excerpt(twelve, 1, 3)[1:] == (1, 4, 12)
    assert source.excerpt(twelve, 12, 3)[1:] == (9, 12, 12)
    empty = tmp_path / "empty.py"
    empty.write_text("")
    assert source.excerpt(str(empty), 1, 3) == ("", 0, 0, 0)


def test_long_lines_are_cut_at_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "wide.py"
    path.write_text("x" * 50 + "\n")
    assert source.excerpt(str(path), 1, 0, max_chars=10)[0] == "1  " + "x" * 10 + "…"
    assert source.excerpt(str(path), 1, 0)[0] == "1  " + "x" * 50  # within the default limit


def test_view_shows_a_file_around_a_line_and_refuses_lines_past_its_end(twelve: str) -> None:
    assert source.view(twelve, 5, 1, current=5, breakpoints={6}) == SourceResult(
        file=twelve, start=4, end=6, total_lines=12, text="4  row4\n5> row5\n6 *row6")
    assert source.view(twelve, None, 1).start == 1  # no line: from the top
    with pytest.raises(UsageError, match=r"line 13 is past the end of .*twelve.py' \(12 lines\)"):
        source.view(twelve, 13, 1)


def test_a_missing_file_a_directory_and_a_nul_byte_are_usage_errors(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist or cannot be read; pass an existing path"):
        source.read_lines(str(tmp_path / "missing.py"))
    with pytest.raises(UsageError, match="is not a file; pass the path of a source file"):
        source.read_lines(str(tmp_path))
    with pytest.raises(UsageError, match="contains a NUL byte"):
        source.view_file("a\0b.py", 1, 1)
    with pytest.raises(UsageError, match="no file given"):
        source.view_file(None, 1, 1)


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    path = tmp_path / "edited.py"
    path.write_text("old = 1\n")
    assert source.read_lines(str(path)) == ("old = 1",)
    path.write_text("new = 2\nmore = 3\n")
    assert source.read_lines(str(path)) == ("new = 2", "more = 3")


def test_names_near_are_the_identifiers_on_the_line_and_the_one_above(tmp_path: Path) -> None:
    path = tmp_path / "names.py"
    path.write_text("total = 0\nfor item in items:\n    total += price(item) * 2\nprint(done)\n")
    assert source.names_near(str(path), 3) == {"for", "item", "in", "items", "total", "price"}
    assert source.names_near(str(path), 1) == {"total"}
    assert source.names_near(str(path), 4, before=0) == {"print", "done"}


def test_view_file_resolves_against_the_cwd_and_applies_the_policy(twelve: str, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    inside = Policy(roots=(os.path.realpath(tmp_path),))
    assert source.view_file("twelve.py", 2, 0, inside).file == twelve
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    confined = Policy(roots=(str(elsewhere),))
    with pytest.raises(PolicyError, match=r"refused by the policy: source file .*twelve.py' is outside the roots"):
        source.view_file("twelve.py", 2, 0, confined)


async def test_a_session_shows_the_file_it_is_stopped_in_even_outside_the_roots(tmp_path: Path) -> None:
    (tmp_path / "prog").mkdir()
    (tmp_path / "roots").mkdir()
    program = write_program(tmp_path / "prog")
    other = write_program(tmp_path / "prog", "other.py")
    rig = Rig(program, policy=Policy(roots=(str(tmp_path / "roots"),)))
    await rig.start()
    shown = await rig.session.source(None, None, 1)  # where it is stopped
    assert shown.file == program and shown.text.splitlines()[1] == "2> line_2 = 2"
    assert (await rig.session.source(program, 10, 0)).text == "10  line_10 = 10"  # stopped in it: allowed
    with pytest.raises(PolicyError, match="is outside the roots"):
        await rig.session.source(other, 1, 1)


async def test_a_session_marks_its_own_breakpoints_where_the_debugger_bound_them(tmp_path: Path) -> None:
    program = write_program(tmp_path)
    rig = Rig(program, prepare=lambda backend: backend.moved_lines.update({4: 5}))
    await rig.session.add_line_breakpoint(program, 4)
    await rig.session.add_line_breakpoint(program, 8, internal=True)
    await rig.start()
    shown = await rig.session.source(program, 6, 2)
    assert shown.text.splitlines() == ["4  line_4 = 4", "5 *line_5 = 5", "6  line_6 = 6", "7  line_7 = 7",
                                       "8  line_8 = 8"]
    rig.backend.listener.on_continued(1, True)
    with pytest.raises(UsageError, match="not stopped at a source line; pass file"):
        await rig.session.source(None, None, 1)
