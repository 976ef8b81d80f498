"""PHP tests by name, run by PHPUnit: ``CartTest::testTotal`` (a class, short or with its namespace, and a
method), ``testTotal`` (a method of any class), ``tests/CartTest.php`` (a file's tests) or
``tests/CartTest.php::testTotal``.

The runner is the project's ``vendor/bin/phpunit`` (Composer), else ``phpunit`` on PATH (Debian's 9.6 lives in
/usr/share/php). It runs from the project's directory (its ``phpunit.xml`` says where the tests are and what to
load first), with ``--filter`` anchored to the whole name, under Xdebug: PHPUnit catches a failing assertion, so
the run adds the backend's ``failures`` exception filter (``AssertionFailedError`` where Assert throws it, and
PHP's ``Error``s), and the stop is shown in the test's frame, PHPUnit's frames listed above it. A name that
matches nothing ends the run with "No tests executed!"; only then are the tests listed for the closest names.
"""

from __future__ import annotations

import os
import re
import shutil

from polydbg.errors import UsageError, echo
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED, TestPlan, Verdict, last_lines, output_of

MARKERS = ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml")
_NAME = re.compile(r"(?:(?P<cls>[A-Za-z_\\][\w\\]*)::)?(?P<method>[A-Za-z_]\w*)")
_OK = re.compile(r"^OK \(.*\)$")
_FAILED = re.compile(r"^Tests: \d+, Assertions: \d+.*$")
_LISTED = re.compile(r"^ - (\S+::\w+)")


def is_php_test(test: str, cwd: str) -> bool:
    """A ``.php`` file (with its ``::`` method), or any name in a project with a PHPUnit configuration."""
    return test.split("::")[0].endswith(".php") or any(os.path.isfile(os.path.join(cwd, m)) for m in MARKERS)


def find_phpunit(cwd: str) -> str:
    local = os.path.join(cwd, "vendor", "bin", "phpunit")
    found = local if os.path.isfile(local) else shutil.which("phpunit")
    if found is None:
        raise UsageError(f"no PHPUnit here: neither {local} (composer require --dev phpunit/phpunit) nor phpunit on "
                         "PATH (apt-get install phpunit)")
    return found


def filter_of(cls: str | None, method: str) -> str:
    """``--filter``'s pattern for exactly ``cls::method`` (the class with or without its namespace), its data
    sets included."""
    owner = (r"(?:^|\\)" + re.escape(cls.lstrip("\\")) + "::") if cls else "::"
    return f"/{owner}{method}(?: with data set .*)?$/"


def plan(test: str, cwd: str) -> TestPlan:
    phpunit = find_phpunit(cwd)
    where, _, name = test.rpartition("::") if test.split("::")[0].endswith(".php") else ("", "", test)
    if test.endswith(".php"):
        where, name = test, ""
    args: list[str] = []
    if name:
        found = _NAME.fullmatch(name)
        if found is None:
            raise UsageError(f"test {echo(test)} is not a PHPUnit test name; pass Class::testMethod, testMethod, "
                             "tests/ClassTest.php or tests/ClassTest.php::testMethod")
        args += ["--filter", filter_of(found.group("cls"), found.group("method"))]
    if where:
        if not os.path.isfile(os.path.join(cwd, where)):
            raise UsageError(f"test file {echo(where)} not found in {cwd}; pass a path relative to cwd, or cwd=the "
                             "project's directory")
        args.append(where)
    return TestPlan(name=test, runner="phpunit", language="php", cwd=cwd, program=phpunit,
                    args=("--colors=never", *args), judge=verdict, exception_filters=("failures",),
                    names=lambda: listed(phpunit, cwd))


def verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(text, 40)
    if any(line.strip() == "No tests executed!" for line in lines):
        return Verdict(NOT_FOUND, "No tests executed!")
    ok = next((line for line in lines if _OK.match(line.strip())), None)
    if ok is not None and code == 0:
        return Verdict(PASSED, ok.strip())
    summary = next((line.strip() for line in reversed(lines) if _FAILED.match(line.strip())), None)
    if summary is not None:
        return Verdict(FAILED, summary)
    return Verdict(ERROR, " / ".join(lines[-3:]) or None)


async def listed(phpunit: str, cwd: str) -> list[str]:
    """Every test PHPUnit finds in the project (``--list-tests``), as ``Class::method``."""
    out = await output_of(["php", phpunit, "--list-tests", "--colors=never"], cwd)
    return [found.group(1) for line in out.splitlines() if (found := _LISTED.match(line))]
