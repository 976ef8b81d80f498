"""The rdbg backend's pure parts: the Ruby it sends (conditions, hit counts, logpoints), reading rdbg's answers,
sorting the program's stderr, values' paths, the debug gem a project uses."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg.backends.base import LOGPOINT, FrameRef, Variable
from polydbg.backends.dap.wire import LOG_END, LOG_MARK
from polydbg.backends.rdbg import gems, output, ruby, values


def test_inspected_strings_are_read_back() -> None:
    assert ruby.unquote(r'"a\"b\n\u00e9\#{x}\\"') == 'a"b\né#{x}\\'
    assert ruby.unquote("42") == "42"
    assert ruby.decoded(r'"[\"x\",null]"') == ["x", None]


def test_a_guarded_failure_is_an_error_and_a_value_is_not() -> None:
    assert ruby.failure(f'"{ruby.ERROR_MARK}NameError: undefined x"', "String") == "NameError: undefined x"
    assert ruby.failure('"plain"', "String") is None
    said = ruby.failure("#<SyntaxError: (eval):1: syntax error>", "SyntaxError")
    assert said == "SyntaxError: (eval):1: syntax error"
    assert "rescue ::Exception => __polydbg_e" in ruby.guarded("s = 1")


def test_conditions_combine_the_user_s_the_hit_count_and_the_logpoint() -> None:
    assert ruby.condition(1, None, None, None) is None
    both = ruby.condition(3, "i > 1", "% 2", None)
    assert both is not None and "(i > 1)" in both and "$__polydbg_hits[3] % 2 == 0" in both
    logged = ruby.condition(4, None, None, 'n={n} "q" #x')
    assert logged is not None and logged.endswith("; false)") and LOG_MARK in logged
    assert '\\"q\\" \\#x' in logged and "(n).to_s" in logged
    with pytest.raises(ValueError):
        ruby.condition(5, None, "every 2", None)


def test_method_names_read_as_class_op_method() -> None:
    assert ruby.method_spec("Box#total") == ("Box", "#", "total")
    assert ruby.method_spec("Mod::Box.create") == ("Mod::Box", ".", "create")
    assert ruby.method_spec("helper?") == ("Object", "#", "helper?")
    with pytest.raises(ValueError):
        ruby.method_spec("not a name")


def test_stderr_is_sorted_into_the_program_s_logpoints_and_notes() -> None:
    text = f"warn\n{LOG_MARK}i=1{LOG_END}\nmore{ruby.NOTE_MARK}bad{ruby.NOTE_END}\n{LOG_MARK}i="
    pieces, held = output.split_stderr(text)
    assert pieces == [("stderr", "warn\n"), (LOGPOINT, "i=1\n"), ("stderr", "more"), ("console", "bad\n")]
    assert held == f"{LOG_MARK}i="
    pieces, held = output.split_stderr(held + f"2{LOG_END}\n")
    assert (pieces, held) == ([(LOGPOINT, "i=2\n")], "")
    assert output.split_stderr("<polydbg")[1] == "<polydbg"  # a mark's start waits for the rest


def test_values_remember_their_paths_and_set_by_them() -> None:
    known = values.Values()
    frame = FrameRef(1, 0)
    known.scope(10, frame)
    children = known.children(10, [Variable("%self", "main", "Object", 11),
                                    Variable("n", "3", "Integer", 12, named_count=1),
                                    Variable("list", "[1, 2]", "Array", 13, indexed_count=2),
                                    Variable("pt", "#<struct P x=1>", "P", 14)])
    assert [(c.name, c.ref) for c in children] == [("self", 11), ("n", 0), ("list", 13), ("pt", 14)]
    assert known.request(13, 1, None) == {"variablesReference": 13, "filter": "indexed", "start": 1, "count": 1}
    known.children(13, [Variable("0", "1", "Integer"), Variable("1", "2", "Integer")])
    assert known.assignment(13, "1", "5") == (frame, "list[1] = (5)")
    assert known.assignment(14, "x", "2") == (frame, "pt[:x] = (2)")
    assert known.assignment(11, "@v", "1") == (frame, "self.instance_variable_set(:@v, (1))")
    assert known.assignment(10, "n", "4") == (frame, "n = (4)")
    with pytest.raises(Exception, match="not a variable to set"):
        known.assignment(10, "self", "1")


def test_the_exception_is_read_from_raised() -> None:
    found = values.exception(Variable("_raised", "#<KeyError: key not found: \"x\">", "KeyError"))
    assert (found.type, found.message) == ("KeyError", 'key not found: "x"')


def test_a_project_s_gemfile_lock_naming_debug_picks_bundler(tmp_path: Path) -> None:
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    debug (1.9.2)\n      irb (>= 1.5)\n")
    (tmp_path / "app").mkdir()
    locked = gems.locked(str(tmp_path / "app"))
    assert locked is not None and locked.version == "1.9.2" and locked.bundler == str(tmp_path / "Gemfile.lock")
    assert "Bundler" in locked.describe()
    (tmp_path / "Gemfile.lock").write_text("GEM\n  specs:\n    rack (3.0)\n")
    assert gems.locked(str(tmp_path)) is None
