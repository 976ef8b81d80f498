"""PHPUnit by name without running it: which names are PHP tests, the --filter that matches exactly one test
(with or without its namespace, its data sets too), where a file goes, and how PHPUnit's summary reads."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from polydbg.errors import UsageError
from polydbg.testing import php
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "phpunit.xml").write_text("<phpunit/>")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "CartTest.php").write_text("<?php")
    runner = tmp_path / "vendor" / "bin"
    runner.mkdir(parents=True)
    (runner / "phpunit").write_text("#!/usr/bin/env php\n<?php")
    return tmp_path


def matches(pattern: str, name: str) -> bool:
    return re.search(pattern.strip("/"), name) is not None


def test_the_filter_matches_the_one_test_named() -> None:
    pattern = php.filter_of("CartTest", "testTotal")
    assert matches(pattern, "Shop\\Tests\\CartTest::testTotal")
    assert matches(pattern, "CartTest::testTotal with data set #2")
    assert not matches(pattern, "Shop\\Tests\\CartTest::testTotalCountsQuantities")
    assert not matches(pattern, "Shop\\Tests\\OtherCartTest::testTotal")
    assert matches(php.filter_of("\\Shop\\Tests\\CartTest", "testTotal"), "Shop\\Tests\\CartTest::testTotal")
    assert matches(php.filter_of(None, "testTotal"), "Any\\Test::testTotal")


def test_names_become_the_runner_s_arguments(project: Path) -> None:
    assert php.is_php_test("CartTest::testTotal", str(project))
    plan = php.plan("CartTest::testTotal", str(project))
    assert plan.program == str(project / "vendor" / "bin" / "phpunit")  # the project's own PHPUnit first
    assert plan.args == ("--colors=never", "--filter", php.filter_of("CartTest", "testTotal"))
    assert plan.exception_filters == ("failures",)
    assert php.plan("tests/CartTest.php", str(project)).args == ("--colors=never", "tests/CartTest.php")
    assert php.plan("tests/CartTest.php::testTotal", str(project)).args[-1] == "tests/CartTest.php"
    with pytest.raises(UsageError, match="not found in"):
        php.plan("tests/Nope.php::testTotal", str(project))
    with pytest.raises(UsageError, match="not a PHPUnit test name"):
        php.plan("Cart Test::x y", str(project))


def test_the_summary_is_the_verdict() -> None:
    assert php.verdict(0, "PHPUnit 9.6.7\n\n.\n\nOK (1 test, 1 assertion)\n").outcome == PASSED
    failed = php.verdict(1, "F\nFAILURES!\nTests: 1, Assertions: 1, Failures: 1.\n")
    assert (failed.outcome, failed.summary) == (FAILED, "Tests: 1, Assertions: 1, Failures: 1.")
    assert php.verdict(0, "PHPUnit 9.6.7\n\nNo tests executed!\n").outcome == NOT_FOUND
    assert php.verdict(255, "PHP Fatal error:  Uncaught Error: Class \"X\" not found\n").outcome == ERROR
