"""Go tests read by name and by their ends: the ``-test.run`` pattern of a name, ``-test.v``'s lines as verdicts,
and the names refused before anything is built."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg import testing
from polydbg.errors import UsageError
from polydbg.testing import go

FAILED_RUN = """=== RUN   TestTable
=== RUN   TestTable/ten_items
    prices_test.go:34: got 10, want 9
--- FAIL: TestTable (0.00s)
    --- FAIL: TestTable/ten_items (0.00s)
FAIL
"""
PANICKED_RUN = """=== RUN   TestAverage
--- FAIL: TestAverage (0.00s)
panic: runtime error: index out of range [-1] [recovered]
	panic: runtime error: index out of range [-1]

goroutine 6 [running]:
"""


def test_a_name_becomes_an_anchored_pattern_per_level() -> None:
    assert go.run_pattern("TestParse") == "^TestParse$"
    assert go.run_pattern("TestParse/empty_input") == "^TestParse$/^empty_input$"
    assert go.run_pattern("TestX/a.b(c)+[d]") == r"^TestX$/^a\.b\(c\)\+\[d\]$"  # Go's QuoteMeta: RE2 has no "\ "


def test_runs_read_as_verdicts_by_the_named_tests_own_line() -> None:
    assert go.verdict("TestTable/ten_items", 1, FAILED_RUN) == testing.Verdict(
        "failed", "--- FAIL: TestTable/ten_items (0.00s)")
    passed = go.verdict("TestA", 0, "=== RUN   TestA\n--- PASS: TestA (0.01s)\nPASS\n")
    assert passed == testing.Verdict("passed", "--- PASS: TestA (0.01s)")
    assert go.verdict("TestA", 0, "=== RUN   TestA\n--- SKIP: TestA (0.00s)\nPASS\n").outcome == "passed"
    panicked = go.verdict("TestAverage", 2, PANICKED_RUN)
    assert panicked.outcome == "failed" and "panic: runtime error" in (panicked.summary or ""), panicked
    nothing = go.verdict("TestNope", 0, "testing: warning: no tests to run\nPASS\n")
    assert nothing == testing.Verdict("not found", "testing: warning: no tests to run")
    # a subtest that matched nothing: its parent ran and passed
    parent_only = go.verdict("TestTable/nope", 0, "=== RUN   TestTable\n--- PASS: TestTable (0.00s)\nPASS\n")
    assert parent_only.outcome == "not found", parent_only
    assert go.verdict("TestA", None, "signal: killed").outcome == "error"


def test_a_plan_runs_the_package_in_delves_test_mode(tmp_path: Path) -> None:
    (tmp_path / "parse").mkdir()
    (tmp_path / "parse" / "parse_test.go").write_text("package parse\n")
    plan = go.plan("./parse::TestParse/empty input", str(tmp_path))
    assert plan.program == plan.cwd == str(tmp_path / "parse") and plan.language == "go"
    assert plan.args == ("-test.run", "^TestParse$/^empty_input$", "-test.v")
    assert testing.language_of("./parse::TestParse", str(tmp_path), None) == "go"
    assert testing.language_of("TestParse", str(tmp_path / "parse"), None) == "go"


def test_names_refused_before_anything_is_built(tmp_path: Path) -> None:
    (tmp_path / "a" / "b").mkdir(parents=True)
    (tmp_path / "a" / "b" / "b_test.go").write_text("package b\n")
    with pytest.raises(UsageError, match=r"no Go test files .* packages with tests here: \./a/b"):
        go.plan("TestB", str(tmp_path))
    with pytest.raises(UsageError, match="is not a Go test name"):
        go.plan("./a/b::Test B(", str(tmp_path))  # a space in a top-level name


@pytest.mark.anyio
async def test_the_closest_names_are_the_packages_test_functions(tmp_path: Path) -> None:
    (tmp_path / "a_test.go").write_text("package a\n\nfunc TestParse(t *testing.T) {}\nfunc helper() {}\n"
                                        "func BenchmarkParse(b *testing.B) {}\n// func TestCommented(t *testing.T)\n")
    (tmp_path / "a.go").write_text("package a\n\nfunc TestNotInATestFile() {}\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b_test.go").write_text("package sub\n\nfunc TestDeep(t *testing.T) {}\n")
    (tmp_path / "testdata").mkdir()
    (tmp_path / "testdata" / "c_test.go").write_text("package c\n\nfunc TestData(t *testing.T) {}\n")
    names = await go.listed_tests(str(tmp_path))
    assert names == ["TestParse", "BenchmarkParse", "./sub::TestDeep"]
    assert testing.closest("TestDeep", names)[0] == "./sub::TestDeep"  # a name run in the wrong package
