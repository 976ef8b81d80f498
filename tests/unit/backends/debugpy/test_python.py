"""debugpy's pure helpers beyond tests/unit/backends/debugpy/test_helpers.py: pydevd's decorations and slices of
containers (pydevd ignores start/count)."""

from __future__ import annotations

import pytest

from polydbg.backends.base import Variable
from polydbg.backends.debugpy import python
from polydbg.errors import UsageError


def test_pydevds_note_is_cut() -> None:
    text = "ValueError: bad (note: full exception trace is shown but execution is paused at: <module>)"
    assert python.without_note(text) == "ValueError: bad"
    assert python.without_note("  plain  ") == "plain"


def test_modules_functions_classes_and_dunders_are_noise() -> None:
    assert python.is_noise(Variable("os", "<module 'os'>", "module"))
    assert python.is_noise(Variable("__name__", "'__main__'", "str"))
    assert not python.is_noise(Variable("items", "[]", "list"))


def test_a_slice_for_each_kind_of_container() -> None:
    assert python.slice_expression("d", "dict", 2, 4) == "dict(list((d).items())[2:4])"
    assert python.slice_expression("s", "frozenset", 0, 3) == "list(s)[0:3]"
    assert python.slice_expression("xs", "list", 100, 200) == "(xs)[100:200]"
    assert python.slice_expression("df", "DataFrame".lower(), 100, 150) == "(df).iloc[100:150]"  # by position
    assert python.slice_expression("a", "ndarray", 5, 7) == "(a)[5:7]"


def test_a_slices_children_are_named_by_their_index_in_the_whole() -> None:
    children = [Variable("0", "10", "int"), Variable("1", "11", "int", evaluate_name="tmp[1]")]
    assert python.renumbered(children, "xs", "list", 100) == [
        Variable("100", "10", "int", evaluate_name="(xs)[100]"),
        Variable("101", "11", "int", evaluate_name="(xs)[101]")]
    keys = [Variable("'a'", "1", "int", evaluate_name="d['a']")]
    assert python.renumbered(keys, "d", "dict", 5) == keys
    # a pandas row or value is named by its index label, which a slice by position keeps
    labels = [Variable("500", "Series 500 (1 int64) {n: 500}", "Series", evaluate_name="(df).iloc[500:502].iloc[0]")]
    assert python.renumbered(labels, "df", "dataframe", 500) == labels


def test_the_expression_a_frameless_thread_is_said_with_lists_its_frames() -> None:
    """The hint's expression, run here on a thread that waits in library code only (threading's Event.wait)."""
    import re
    import threading

    release = threading.Event()
    waiting = threading.Thread(target=release.wait, name="it's waiting", daemon=True)
    waiting.start()
    try:
        said = python.frameless(7, "it's waiting", None)
        assert said.startswith("thread 7 lists no frames: it runs only library code, which this session leaves out")
        found = re.search(r'debug_evaluate\(expression="(.*)"\)$', said)
        assert found is not None, said
        frames = eval(found.group(1))  # the hint's own expression
        assert frames[-1].endswith(" wait") and "threading.py:" in frames[-1], frames
        assert python.frameless(7, "w", 4242).endswith("while a thread of its process (pid 4242) is stopped")
    finally:
        release.set()


def test_python_refuses_a_slip_of_a_built_in_exception_class_s_name_with_the_closest() -> None:
    with pytest.raises(UsageError, match="'KeyErorr' is no exception class Python has built in; the closest: KeyError"):
        python.check_exception_types(["KeyErorr"])
    with pytest.raises(UsageError, match="the closest: ValueError"):
        python.check_exception_types(["AppError", "ValueEror"])
    with pytest.raises(UsageError, match=r"is neither an exception filter .* nor a Python class's name"):
        python.check_exception_types(["Key'Error\")]; import os"])  # (evaluated in the program by its repr)
    # a built-in class, a dotted name (its module imported later), one like none (the program's own) bind by name
    python.check_exception_types(["KeyError", "pkg.errors.KeyErorr", "AppError", "ParseError", "ProcessError"])


def test_python_at_a_stop_the_program_s_classes_decide() -> None:
    like = python.classes_answer(repr('{"KeyErrors": true, "PraseError": ["ParseError"], "Zzz": []}'))
    python.check_exception_types(["KeyErrors", "Zzz"], like)  # a class the program has, like a built-in's or not
    with pytest.raises(UsageError, match="'PraseError' is no exception class the program has; the closest: ParseError"):
        python.check_exception_types(["PraseError"], like)
    python.check_exception_types(["Unasked"], like)  # not in its answer: compared with the built-in classes


def test_the_program_s_answer_comes_from_its_own_classes() -> None:
    class ParseError(Exception):
        pass
    value = repr(eval(python.classes_like(["PraseError", "ParseError", "Zzz"])))  # as the program evaluates it
    assert python.classes_answer(value) == {"PraseError": ["ParseError"], "ParseError": True, "Zzz": []}
