"""Ruby tests by name: minitest and test-unit (both bundled with Ruby) and RSpec where the project has it.

Names as the runners print them: ``test/test_calc.rb::TestCalc#test_add`` (or ``::test_add``, or the file alone),
``TestCalc#test_add`` or ``test_add`` alone (looked up in the project's test files), and RSpec's
``spec/calc_spec.rb:12``, ``spec/calc_spec.rb::Calc adds two numbers`` or a full description alone.

A minitest or test-unit file runs as the program with ``-Ilib -Itest`` and ``-n NAME`` (both runners take
``Class#method`` there), the file's ``require`` saying which runner it is; a spec runs under the ``rspec``
command, with its ``file:line`` or ``-e description``. The run stops where a test fails (the rdbg backend's
``failures`` exception filter: the runners' assertion errors, shown in the test's own frame). Nothing is run to
find a name that has its file: a name that matched nothing is found out from the run's summary, and only then
are the tests listed for the closest names (the test files read for ``def test_…``, RSpec's ``--dry-run``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable

from polydbg.errors import EnvironmentProblem, UsageError, echo
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED, TestPlan, Verdict, last_lines, output_of, the_one

FAILURES_FILTER = "failures"  # the rdbg backend's: stop where a test fails (backends/rdbg/failures.py)
MARKERS = ("Gemfile", ".rspec", "Rakefile")
_SPEC_LINE = re.compile(r"(.+\.rb)((?::\d+)+|\[[\d:]+\])")  # spec/x_spec.rb:12, spec/x_spec.rb[1:2]
_METHOD = re.compile(r"(?:([A-Z][\w:]*)(?:#|::|\.))?(test\w*|test: .+)")
_CLASS = re.compile(r"^\s*class\s+([A-Z][\w:]*)", re.MULTILINE)
_TEST_DEF = re.compile(r"^\s*(?:def\s+(test_\w+[?!]?)|test\s*\(?\s*[\"'](.+?)[\"'])", re.MULTILINE)
_TEST_UNIT = re.compile(r"""require\s*\(?\s*["']test/unit["']|Test::Unit::TestCase""")
_MINITEST = re.compile(r"^(\d+) runs, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) skips")
_TEST_UNIT_COUNT = re.compile(r"^(\d+) tests, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) pendings, "
                              r"(\d+) omissions")
_RSPEC_COUNT = re.compile(r"^(\d+) examples?, (\d+) failures?")
_RSPEC_FAILED = re.compile(r"^rspec (\S+) # (.*)$")
_MINITEST_FAILED = re.compile(r"^\s*\d+\) (Failure|Error):\n(.+?)(?:\n\n|\Z)", re.MULTILINE | re.DOTALL)
_TEST_UNIT_FAILED = re.compile(r"^(Failure|Error): (.+)$", re.MULTILINE)
_SKIPPED_DIRS = frozenset({"vendor", "node_modules", ".bundle", "tmp"})
LISTED_AT_MOST = 5000


def is_ruby_test(test: str, cwd: str) -> bool:
    """A name only Ruby's runners use: a ``.rb`` file, alone or with its test (``::name``, ``:line``)."""
    where = test.split("::")[0]
    spec = _SPEC_LINE.fullmatch(where)
    return (spec[1] if spec else where).endswith(".rb")


def is_ruby_project(cwd: str) -> bool:
    """A project with Ruby's markers, or Ruby tests where the runners look for them (test/, spec/)."""
    if any(os.path.exists(os.path.join(cwd, marker)) for marker in MARKERS):
        return True
    return any(name.endswith(".rb") for sub in ("test", "spec") for name in _listing(os.path.join(cwd, sub)))


async def plan(test: str, cwd: str) -> TestPlan:
    ruby = shutil.which("ruby")
    if ruby is None:
        raise EnvironmentProblem("ruby is not on PATH; apt-get install ruby")
    where, _, name = test.partition("::")
    spec = _SPEC_LINE.fullmatch(where)
    file = spec[1] if spec else where
    if file.endswith(".rb"):
        if not os.path.isfile(os.path.join(cwd, file)):
            raise UsageError(f"test file {echo(file)} not found in {cwd}; pass a path relative to cwd "
                             "(test/test_x.rb::TestX#test_name, spec/x_spec.rb:12), or cwd=the project's directory")
        if spec or _is_spec(file):
            return _rspec(test, cwd, ruby, where, name.strip() or None)
        return _unit(test, cwd, ruby, file, name.strip() or None)
    return await _one_named(test.strip(), cwd, ruby)


def _is_spec(file: str) -> bool:
    return file.endswith("_spec.rb") or file.replace(os.sep, "/").startswith("spec/")


def _unit(test: str, cwd: str, ruby: str, file: str, name: str | None) -> TestPlan:
    """A minitest or test-unit file run as the program, the one test picked by ``-n``."""
    if name is not None:
        method = _METHOD.fullmatch(name)
        if method is None:
            raise UsageError(f"{echo(name)} is not a minitest or test-unit test's name; pass TestClass#test_name or "
                             "test_name after the file's ::")
        name = f"{method[1]}#{method[2]}" if method[1] else method[2]
    runner = "test-unit" if _TEST_UNIT.search(_read(os.path.join(cwd, file))) else "minitest"
    include = tuple(f"-I{d}" for d in ("lib", "test") if os.path.isdir(os.path.join(cwd, d)))
    return TestPlan(name=test, runner=runner, language="ruby", cwd=cwd, program=file,
                    args=("-n", name) if name else (), runtime_args=include,
                    judge=test_unit_verdict if runner == "test-unit" else minitest_verdict,
                    names=lambda: _names(cwd, ruby), exception_filters=(FAILURES_FILTER,))


def _rspec(test: str, cwd: str, ruby: str, where: str, description: str | None) -> TestPlan:
    rspec = find_rspec()
    args = (where, *(("-e", description) if description else ()))
    return TestPlan(name=test, runner="rspec", language="ruby", cwd=cwd, program=rspec, args=args,
                    judge=rspec_verdict, names=lambda: _names(cwd, ruby), exception_filters=(FAILURES_FILTER,))


def find_rspec() -> str:
    found = shutil.which("rspec")
    if found is None:
        raise EnvironmentProblem("rspec is not on PATH; apt-get install ruby-rspec (or gem install rspec)")
    return found


async def _one_named(name: str, cwd: str, ruby: str) -> TestPlan:
    """The one test whose name (``Class#test_x``, ``test_x``, an RSpec example's full description) is ``name``."""
    names = await _names(cwd, ruby)
    found = [n for n in names if _named(n, name)]
    return await plan(the_one(name, found, names, cwd, "pass the one you mean with its file",
                              "no test/*.rb test methods or RSpec examples here: is cwd the project's directory?"), cwd)


def _named(full: str, name: str) -> bool:
    own = full.split("::", 1)[-1]
    return own == name or own.split("#")[-1] == name or own.replace("#", "::") == name.replace("#", "::")


async def _names(cwd: str, ruby: str) -> list[str]:
    """Every test there is: ``file::Class#test_x`` read from the test files, ``file::full description`` from
    RSpec's dry run (where the project has specs and rspec is installed)."""
    names = unit_names(cwd)
    if os.path.isdir(os.path.join(cwd, "spec")) and shutil.which("rspec"):
        text = await output_of([ruby, find_rspec(), "--dry-run", "--format", "json"], cwd)
        names += rspec_names(text)
    return names


def unit_names(cwd: str) -> list[str]:
    names: list[str] = []
    for directory, dirs, files in os.walk(os.path.join(cwd, "test")):
        dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
        for file in sorted(files):
            if file.endswith(".rb") and (file.startswith("test_") or file.endswith("_test.rb")):
                path = os.path.join(directory, file)
                names += [f"{os.path.relpath(path, cwd)}::{test}" for test in declared(_read(path))]
                if len(names) >= LISTED_AT_MOST:
                    return names
    return names


def declared(source: str) -> list[str]:
    """``Class#test_x`` for each test method a minitest or test-unit file declares (``def test_x``, test-unit's
    ``test "description"``), with the class declared last above it."""
    classes = [(m.start(), m[1]) for m in _CLASS.finditer(source)]
    found = []
    for match in _TEST_DEF.finditer(source):
        owner = next((name for at, name in reversed(classes) if at < match.start()), None)
        method = match[1] or f"test: {match[2]}"
        found.append(f"{owner}#{method}" if owner else method)
    return found


def rspec_names(text: str) -> list[str]:
    start = text.find("{")
    try:
        examples = json.loads(text[start:]).get("examples", []) if start >= 0 else []
    except ValueError:
        return []
    return [f"{str(e.get('file_path', '')).removeprefix('./')}::{e.get('full_description', '')}" for e in examples]


def _verdict(count: re.Pattern[str], failed: Callable[[str, list[str]], list[str]], code: int | None, text: str,
             silent_is_none: bool = False) -> Verdict:
    """A run's end read from the runner's count line (its first number: the tests run, 0 when no name matched;
    its second: the failures) and ``failed``'s lines for the summary."""
    lines = last_lines(text, 60)
    counted = next((m for line in reversed(lines) if (m := count.match(line))), None)
    if counted is None:  # test-unit prints nothing at all when no name matched
        return Verdict(NOT_FOUND if silent_is_none and code == 0 and not text.strip() else ERROR,
                       " / ".join(lines[-3:]) or None)
    if counted[1] == "0":
        return Verdict(NOT_FOUND, counted[0])
    if code == 0:
        return Verdict(PASSED, counted[0])
    return Verdict(FAILED, " — ".join([*failed(text, lines)[:3], counted[0]]))


def minitest_verdict(code: int | None, text: str) -> Verdict:
    return _verdict(_MINITEST, lambda out, _: [_one_line(m[2]) for m in _MINITEST_FAILED.finditer(out)], code, text)


def _one_line(failure: str) -> str:
    """minitest's failure (``TestX#test_y [file:line]:`` and its message below) on one line."""
    where, _, message = failure.partition("\n")
    return f"{where.rstrip(':')}: {' '.join(message.split())}" if message else where


def test_unit_verdict(code: int | None, text: str) -> Verdict:
    return _verdict(_TEST_UNIT_COUNT, lambda out, _: [f"{m[1]}: {m[2]}" for m in _TEST_UNIT_FAILED.finditer(out)],
                    code, text, silent_is_none=True)


def rspec_verdict(code: int | None, text: str) -> Verdict:
    return _verdict(_RSPEC_COUNT, lambda _, lines: [f"{m[1]} ({m[2]})" for line in lines
                                                    if (m := _RSPEC_FAILED.match(line))], code, text)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1024 * 1024)
    except OSError:
        return ""


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []

