"""Python's test runners read by name and by their ends: pytest's and unittest's output as verdicts, the closest
names to one that matched none, and the names refused before anything runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg import testing
from polydbg.errors import UsageError
from polydbg.testing import python
from polydbg.testing.plan import closest

pytestmark = pytest.mark.anyio

FAILED_RUN = """
tests/test_prices.py:22: AssertionError
=========================== short test summary info ============================
FAILED tests/test_prices.py::TestBulk::test_bulk_discount[10] - assert 10.0 == 9.0
1 failed in 0.31s
"""


def test_pytest_runs_read_as_verdicts() -> None:
    passed = python.pytest_verdict(0, "tests/t.py .\n\n1 passed in 0.12s\n")
    assert passed == testing.Verdict("passed", "1 passed in 0.12s")
    assert python.pytest_verdict(0, "== 2 passed, 1 warning in 0.50s ==").summary == "2 passed, 1 warning in 0.50s"
    failed = python.pytest_verdict(1, FAILED_RUN)
    assert failed.outcome == "failed" and failed.summary is not None and "test_bulk_discount[10]" in failed.summary
    missing = python.pytest_verdict(4, "no tests ran in 0.01s\nERROR: not found: /p/t.py::nope\n(no match)")
    assert missing.outcome == "not found" and missing.summary == "ERROR: not found: /p/t.py::nope"
    assert python.pytest_verdict(5, "no tests ran in 0.01s").outcome == "not found"
    no_pytest = python.pytest_verdict(1, "/usr/bin/python3: No module named pytest\n")
    assert no_pytest.outcome == "error" and "pip install pytest" in (no_pytest.summary or "")
    assert python.pytest_verdict(None, "Killed").outcome == "error"


def test_unittest_runs_read_as_verdicts() -> None:
    assert python._unittest_verdict(0, ".\nRan 1 test in 0.001s\n\nOK\n").outcome == "passed"
    failed = python._unittest_verdict(1, "F\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n")
    assert failed == testing.Verdict("failed", "Ran 1 test in 0.001s: FAILED (failures=1)")
    missing = python._unittest_verdict(1, "AttributeError: type object 'A' has no attribute 'test_x'\nRan 1 test\n"
                                          "FAILED (errors=1)")
    assert missing.outcome == "not found" and "test_x" in (missing.summary or "")


def test_the_closest_names_put_the_same_test_elsewhere_first() -> None:
    names = ["tests/a.py::test_total", "tests/a.py::test_totals", "tests/b.py::Cart::test_total[1]",
             "tests/b.py::test_other"]
    assert closest("tests/a.py::test_totl", names)[0] == "tests/a.py::test_total"
    assert closest("tests/c.py::test_total", names)[:2] == ["tests/a.py::test_total", "tests/b.py::Cart::test_total[1]"]
    assert closest("zzz", names) == []


def test_a_bare_name_s_closest_are_the_tests_whose_own_names_are_most_like_it() -> None:
    """cachetools' tests, a test's name mistyped alone: the test so named comes first, not a shorter name whose
    whole id happens to be closer."""
    names = ["tests/test_lru.py::LRUCacheTest::test_clear", "tests/test_tlru.py::TLRUCacheTest::test_clear",
             "tests/test_lru.py::LRUCacheTest::test_lru_clear", "tests/test_lfu.py::LFUCacheTest::test_clear",
             "tests/test_lru.py::LRUCacheTest::test_clear_empty"]
    assert closest("test_lru_clearr", names)[0] == "tests/test_lru.py::LRUCacheTest::test_lru_clear"


async def test_names_that_are_no_test_are_refused_before_anything_runs(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("")
    with pytest.raises(UsageError, match=r"test file 'tests/nope\.py' not found"):
        await testing.plan("tests/nope.py::test_x", str(tmp_path), None, {})
    with pytest.raises(UsageError, match="is not a pytest id"):
        await testing.plan("what is this?", str(tmp_path), None, {})
    with pytest.raises(UsageError, match="NUL byte"):
        await testing.plan("t.py::a\0b", str(tmp_path), None, {})
    with pytest.raises(UsageError, match=r"runs Python .* tests so far, not c's"):
        await testing.plan("test_x", str(tmp_path), "c", {})


def test_the_language_comes_from_the_name_then_the_project(tmp_path: Path) -> None:
    assert testing.language_of("tests/t.py::test_x", str(tmp_path), None) == "python"
    with pytest.raises(UsageError, match="cannot tell which language"):
        testing.language_of("TestX", str(tmp_path), None)
    (tmp_path / "go.mod").write_text("module x\n")
    assert testing.language_of("TestX", str(tmp_path), None) == "go"
    assert testing.language_of("TestX", str(tmp_path), "python") == "python"
