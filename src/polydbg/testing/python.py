"""Python tests by name: a pytest node id or a file (``tests/test_x.py::TestA::test_b[param]``), a unittest id
(``tests.test_x.TestA.test_b``), or a bare test function's name, looked up among the tests pytest collects.

The run is ``python -m pytest <id>`` (or ``-m unittest``) with the project's interpreter, under debugpy with the
default exception setting, which stops where an exception leaves the user's code into the runner: at the
failing assertion, in the test's frame. Nothing is collected before the run (it would double the time to the
stop): a name that matches nothing is found out from the runner's exit, and only then are the tests listed for
the closest names.
"""

from __future__ import annotations

import os
import re

from polydbg.backends.debugpy.python import find_python
from polydbg.errors import UsageError, echo
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED, TestPlan, Verdict, last_lines, output_of, the_one

_UNITTEST_ID = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*(?:\[.*\])?")
_PYTEST_SUMMARY = re.compile(r"^=*\s*(\d+ (?:passed|failed|error|skipped|xfailed|xpassed|deselected|warnings?)"
                             r"\b.* in [\d.]+s.*?)\s*=*$")
_NO_PYTEST = re.compile(r"^\S*: No module named pytest$", re.MULTILINE)  # the interpreter's own words
# pytest's exit codes (pytest.ExitCode)
_OK, _TESTS_FAILED, _USAGE_ERROR, _NO_TESTS = 0, 1, 4, 5
_UNITTEST_MISSING = re.compile(r"(?:AttributeError: (?:type object|module) '[^']+' has no attribute|"
                               r"ModuleNotFoundError: No module named|ImportError: Failed to import test module)")


def is_python_test(test: str, cwd: str) -> bool:
    """A name only Python's runners use: a ``.py`` file, alone or with its ``::`` parts."""
    where = test.split("::")[0]
    return where.endswith(".py") or os.path.isfile(os.path.join(cwd, where + ".py"))


async def plan(test: str, cwd: str, python: str | None) -> TestPlan:
    interpreter = find_python(python, cwd, None)
    where = test.split("::")[0]
    if where.endswith(".py") or "/" in where:
        if not os.path.exists(os.path.join(cwd, where)):
            raise UsageError(f"test file {echo(where)} not found in {cwd}; pass a path relative to cwd "
                             "(tests/test_x.py::test_name), or cwd=the project's directory")
        return _pytest(test, cwd, interpreter, where)
    if _UNITTEST_ID.fullmatch(test):
        return TestPlan(name=test, runner="unittest", language="python", cwd=cwd, module="unittest",
                        args=(test,), judge=_unittest_verdict,
                        names=lambda: _unittest_names(interpreter, cwd))
    if _IDENTIFIER.fullmatch(test):
        return _pytest(await _one_named(test, interpreter, cwd), cwd, interpreter, None)
    raise UsageError(f"test {echo(test)} is not a pytest id (tests/test_x.py::TestA::test_b), a unittest id "
                     "(tests.test_x.TestA.test_b) or a test function's name; pass one of those")


def _pytest(test: str, cwd: str, interpreter: str, where: str | None) -> TestPlan:
    return TestPlan(name=test, runner="pytest", language="python", cwd=cwd, module="pytest", args=(test, "-q"),
                    judge=pytest_verdict, names=lambda: _pytest_names(interpreter, cwd, where))


async def _one_named(name: str, interpreter: str, cwd: str) -> str:
    """The one collected test whose own name is ``name`` (a function in any file or class)."""
    names = await _pytest_names(interpreter, cwd, None)
    found = [n for n in names if n.split("::")[-1] == name or n.split("::")[-1].split("[")[0] == name]
    if len(found) > 1 and all(n.split("[")[0] == found[0].split("[")[0] for n in found):
        return found[0].split("[")[0]  # one test's parameters
    return the_one(name, found, names, cwd, "pass the one you mean by its id",
                   "pytest collected no test here: is cwd the project's directory?")


def pytest_verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(text, 40)
    summary = next((m.group(1) for line in reversed(lines) if (m := _PYTEST_SUMMARY.match(line.strip()))), None)
    if code != _OK and _NO_PYTEST.search(text):
        return Verdict(ERROR, "pytest is not installed in the project's Python: pip install pytest there, or pass "
                              "python=<the interpreter that has it>")
    if code == _OK:
        return Verdict(PASSED, summary)
    if code == _TESTS_FAILED:
        failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
        return Verdict(FAILED, "; ".join(failed[:3]) or summary)
    if code == _NO_TESTS or (code == _USAGE_ERROR and "not found:" in text):
        return Verdict(NOT_FOUND, next((line for line in lines if "not found:" in line), summary))
    return Verdict(ERROR, " / ".join(lines[-3:]) or None)


def _unittest_verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(text, 40)
    ran = next((line for line in reversed(lines) if line.startswith("Ran ")), None)
    if _UNITTEST_MISSING.search(text) and code != 0:
        return Verdict(NOT_FOUND, next(line for line in lines if _UNITTEST_MISSING.search(line)))
    if code == 0:
        return Verdict(PASSED, ran)
    if lines and lines[-1].startswith("FAILED"):
        return Verdict(FAILED, f"{ran}: {lines[-1]}" if ran else lines[-1])
    return Verdict(ERROR, " / ".join(lines[-3:]) or None)


async def _pytest_names(interpreter: str, cwd: str, where: str | None) -> list[str]:
    text = await output_of([interpreter, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                            *([where] if where else [])], cwd)
    return [line.strip() for line in text.splitlines() if "::" in line and not line.startswith(("ERROR", " "))]


_UNITTEST_LISTING = """
import sys, unittest
def walk(suite):
    for test in suite:
        if isinstance(test, unittest.TestSuite): yield from walk(test)
        else: yield test.id()
for name in walk(unittest.defaultTestLoader.discover('.')): print(name)
"""


async def _unittest_names(interpreter: str, cwd: str) -> list[str]:
    text = await output_of([interpreter, "-c", _UNITTEST_LISTING], cwd)
    return [line.strip() for line in text.splitlines() if _UNITTEST_ID.fullmatch(line.strip())]
