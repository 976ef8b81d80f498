"""Where a Python breakpoint binds (``lines``): its own line when it has code, else the next line with code (pydevd
alone binds such a line to the code before it); a line inside a statement over several lines binds to that
statement; what cannot be read or compiled here is sent as asked."""

from __future__ import annotations

import os
from pathlib import Path

from polydbg.backends.debugpy import lines

SAMPLE = '''"""Module docstring
over lines."""
import os


def f(items):
    """Function docstring
    over lines."""
    # a comment at the top of the body
    total = 0
    values = [
        1,
        2,
    ]
    for item in items:
        total += item
        # a comment in the loop
    result = os.path.join(
        "a",
        str(total),
    )
    return result, values  # the end
# a comment after the last code
'''


def _at(source: str, marker: str) -> int:
    return next(n for n, text in enumerate(source.splitlines(), 1) if marker in text)


def test_a_line_without_code_binds_to_the_next_line_with_code(tmp_path: Path) -> None:
    path = tmp_path / "sample.py"
    path.write_text(SAMPLE)
    placed = {n: lines.placed(str(path), n) for n in range(1, len(SAMPLE.splitlines()) + 1)}
    assert placed[_at(SAMPLE, "total = 0")] == _at(SAMPLE, "total = 0")  # a line with code stays
    assert placed[_at(SAMPLE, "# a comment in the loop")] == _at(SAMPLE, "result = os.path.join(")  # not the loop
    assert placed[_at(SAMPLE, "# a comment at the top")] == _at(SAMPLE, "total = 0")  # not the def line
    assert placed[_at(SAMPLE, '"""Function docstring')] == _at(SAMPLE, "total = 0")
    assert placed[_at(SAMPLE, "    ]")] == _at(SAMPLE, "values = [")  # inside a statement: the statement
    assert placed[_at(SAMPLE, "    )")] == _at(SAMPLE, "result = os.path.join(")
    assert placed[2] == 1  # the module's docstring is code (it is stored in __doc__)
    after = _at(SAMPLE, "# a comment after the last code")
    assert placed[after] == after  # nothing after it: sent as asked (pydevd binds it to the code before)


def test_what_cannot_be_read_or_compiled_here_is_sent_as_asked(tmp_path: Path) -> None:
    assert lines.placed(str(tmp_path / "missing.py"), 3) == 3
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n    # comment\n    return 1\n")
    assert lines.placed(str(broken), 2) == 2


def test_a_file_is_read_again_when_it_changes(tmp_path: Path) -> None:
    path = tmp_path / "edited.py"
    path.write_text("x = 1\n# comment\ny = 2\n")
    assert lines.placed(str(path), 2) == 3
    path.write_text("x = 1\n# comment\n\n\ny = 2\n")
    os.utime(path, ns=(1, 1))  # a new modification time even within the clock's resolution
    assert lines.placed(str(path), 2) == 5
