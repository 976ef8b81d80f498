"""Ruby tests read by name and by their ends: which runner a name runs with and how, the test methods a file
declares, RSpec's dry run, the runners' summaries as verdicts, and the frames a failure hides."""

from __future__ import annotations

from pathlib import Path

import pytest

from polydbg import testing
from polydbg.backends.rdbg import failures
from polydbg.errors import UsageError
from polydbg.testing import ruby
from tests.conftest import require

MINITEST_FAILED = """Run options: -n TestPrices#test_bulk --seed 1

# Running:

F

Finished in 0.002426s, 412.2717 runs/s, 412.2717 assertions/s.

  1) Failure:
TestPrices#test_bulk [test/test_prices.rb:12]:
Expected: 9
  Actual: 10

1 runs, 1 assertions, 1 failures, 0 errors, 0 skips
"""
TEST_UNIT_FAILED = """Loaded suite test/test_labels
Started
F
===============================================================================
Failure: test_shouted(TestLabels)
test/test_labels.rb:11:in `test_shouted'
<"PLUM"> expected but was
<"Plum">
===============================================================================
1 tests, 1 assertions, 1 failures, 0 errors, 0 pendings, 0 omissions, 0 notifications
0% passed
"""
RSPEC_FAILED = """Finished in 0.03763 seconds (files took 0.19351 seconds to load)
1 example, 1 failure

Failed examples:

rspec ./spec/prices_spec.rb:9 # Prices.total takes a tenth off ten items
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "lib").mkdir()
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_calc.rb").write_text(
        'require "minitest/autorun"\nclass TestCalc < Minitest::Test\n  def test_add\n  end\n\n'
        "  def helper\n  end\n\n  def test_sub\n  end\nend\n")
    (tmp_path / "test" / "test_words.rb").write_text(
        'require "test/unit"\nclass TestWords < Test::Unit::TestCase\n  test "splits words" do\n  end\n'
        "  def test_add\n  end\nend\n")
    return tmp_path


def test_a_test_files_methods_are_named_with_their_class(project: Path) -> None:
    assert ruby.unit_names(str(project)) == [
        "test/test_calc.rb::TestCalc#test_add", "test/test_calc.rb::TestCalc#test_sub",
        "test/test_words.rb::TestWords#test: splits words", "test/test_words.rb::TestWords#test_add"]


async def test_a_file_and_its_test_run_with_the_files_own_runner(project: Path) -> None:
    require("ruby")  # the plan names its path
    minitest = await testing.plan("test/test_calc.rb::TestCalc#test_add", str(project), None, {})
    assert (minitest.runner, minitest.program, minitest.args, minitest.runtime_args) == (
        "minitest", "test/test_calc.rb", ("-n", "TestCalc#test_add"), ("-Ilib", "-Itest"))
    assert minitest.language == "ruby" and minitest.exception_filters == (failures.FILTER,)
    unit = await testing.plan("test/test_words.rb::test_add", str(project), None, {})
    assert (unit.runner, unit.args) == ("test-unit", ("-n", "test_add"))
    whole = await testing.plan("test/test_calc.rb", str(project), None, {})
    assert whole.args == ()
    bare = await testing.plan("test_sub", str(project), None, {})
    assert (bare.name, bare.args) == ("test/test_calc.rb::TestCalc#test_sub", ("-n", "TestCalc#test_sub"))
    with pytest.raises(UsageError, match=r"2 tests are named 'test_add': test/test_calc.rb::TestCalc#test_add, "):
        await testing.plan("test_add", str(project), None, {})
    with pytest.raises(UsageError, match=r"no test named 'test_ad' in .*closest: test/test_calc.rb::TestCalc#test_add"):
        await testing.plan("test_ad", str(project), None, {})
    with pytest.raises(UsageError, match=r"test file .test/test_none\.rb. not found"):
        await testing.plan("test/test_none.rb::test_add", str(project), None, {})


def test_spec_names_are_rspecs_and_ruby_names_are_told_apart(project: Path) -> None:
    assert ruby.is_ruby_test("spec/calc_spec.rb:12", str(project))
    assert ruby.is_ruby_test("spec/calc_spec.rb[1:2]", str(project))
    assert ruby.is_ruby_test("test/test_calc.rb::TestCalc#test_add", str(project))
    assert not ruby.is_ruby_test("tests/test_calc.py::test_add", str(project))
    assert testing.language_of("test_add", str(project), None) == "ruby"  # test/*.rb, no other marker


def test_rspecs_dry_run_names_its_examples_by_file_and_full_description() -> None:
    text = ('Run options: …\n{"version":"3.12.0","examples":[{"id":"./spec/p_spec.rb[1:1]","full_description":'
            '"Prices adds","file_path":"./spec/p_spec.rb","line_number":5}]}')
    assert ruby.rspec_names(text) == ["spec/p_spec.rb::Prices adds"]
    assert ruby.rspec_names("An error occurred while loading ./spec/p_spec.rb") == []


def test_the_runners_summaries_are_verdicts() -> None:
    assert ruby.minitest_verdict(1, MINITEST_FAILED) == testing.Verdict(
        "failed", "TestPrices#test_bulk [test/test_prices.rb:12]: Expected: 9 Actual: 10 — 1 runs, 1 assertions, "
                  "1 failures, 0 errors, 0 skips")
    assert ruby.minitest_verdict(0, "0 runs, 0 assertions, 0 failures, 0 errors, 0 skips\n").outcome == "not found"
    assert ruby.minitest_verdict(0, "1 runs, 1 assertions, 0 failures, 0 errors, 0 skips\n").outcome == "passed"
    assert ruby.minitest_verdict(1, "test/test_x.rb:3:in `require': cannot load such file -- calc (LoadError)\n"
                                 ).outcome == "error"
    assert ruby.test_unit_verdict(1, TEST_UNIT_FAILED) == testing.Verdict(
        "failed", "Failure: test_shouted(TestLabels) — 1 tests, 1 assertions, 1 failures, 0 errors, 0 pendings, "
                  "0 omissions")
    assert ruby.test_unit_verdict(0, "").outcome == "not found"  # test-unit prints nothing when no name matched
    assert ruby.rspec_verdict(1, RSPEC_FAILED) == testing.Verdict(
        "failed", "./spec/prices_spec.rb:9 (Prices.total takes a tenth off ten items) — 1 example, 1 failure")
    assert ruby.rspec_verdict(0, "0 examples, 0 failures\n").outcome == "not found"


def test_a_failures_framework_frames_are_hidden_above_the_projects(tmp_path: Path) -> None:
    def frame(path: str) -> dict[str, object]:
        return {"source": {"path": path}}
    gem = "/usr/lib/ruby/gems/3.1.0/gems/minitest-5.15.0/lib/minitest/assertions.rb"
    frames = [frame(gem), frame(gem), frame(str(tmp_path / "test" / "test_x.rb")), frame(gem)]
    assert failures.hidden(frames, str(tmp_path)) == 2
    vendored = [frame(str(tmp_path / "vendor" / "bundle" / "rspec.rb")), frame(str(tmp_path / "spec" / "x_spec.rb"))]
    assert failures.hidden(vendored, str(tmp_path)) == 1
    assert failures.hidden([frame(gem), frame("<internal:kernel>")], str(tmp_path)) == 0  # nothing of the test's
    assert failures.skipped("#<Minitest::Skip: later> is raised.")
    assert not failures.skipped("#<Minitest::Assertion: Expected: 9> is raised.")
