"""Go tests by name: ``TestParse`` or a subtest ``TestParse/empty_input`` (as ``go test -v`` prints it), run in
the package at cwd, or ``./internal/parse::TestParse`` for a package under cwd.

The run is delve's test mode (the package built as ``go test -c`` does, without optimizations) with
``-test.run '^TestParse$/^empty_input$'`` (each level quoted and anchored, as ``go test -run`` matches them) and
``-test.v``, whose ``--- PASS/FAIL: <name>`` lines say whether the named test ran and how it ended: a ``-run``
that matches no subtest still passes its parent. The backend stops where ``testing`` fails the test (see
``LaunchSpec.test``). A name that matched nothing is found out from the run's output, and only then are the
package's test functions read for the closest names.
"""

from __future__ import annotations

import os
import re

from polydbg.errors import UsageError, echo
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED, TestPlan, Verdict, last_lines

_NAME = re.compile(r"[A-Za-z_]\w*(?:/.+)?")
_GO_META = re.compile(r"([\\.+*?()|\[\]{}^$])")  # what Go's regexp.QuoteMeta escapes (RE2 refuses "\ ")
_ENDED = re.compile(r"^\s*--- (PASS|FAIL|SKIP): (.+?) \(([\d.]+s)\)$")
_PANIC = re.compile(r"^panic: .*")
_DECLARED = re.compile(r"^func ((?:Test|Example|Benchmark|Fuzz)\w*)\(", re.MULTILINE)
_SKIPPED_DIRS = frozenset({"vendor", "testdata", "node_modules"})
SHOWN_PACKAGES = 8
LISTED_AT_MOST = 5000  # test names read for the closest to an unknown one


def is_go_test(test: str, cwd: str) -> bool:
    """A name run in a Go package: cwd (or the ``dir::`` before the name) holds ``_test.go`` files."""
    where, _, _name = test.rpartition("::")
    return _has_tests(os.path.join(cwd, where) if where else cwd)


def _has_tests(directory: str) -> bool:
    try:
        return any(name.endswith("_test.go") for name in os.listdir(directory))
    except OSError:
        return False


def run_pattern(name: str) -> str:
    """``-test.run``'s pattern for exactly ``name``: each ``/`` level quoted and anchored."""
    return "/".join("^" + _GO_META.sub(r"\\\1", part) + "$" for part in name.split("/"))


def plan(test: str, cwd: str) -> TestPlan:
    where, _, name = test.rpartition("::")
    name = name.strip().replace(" ", "_")  # go test's own spelling of a subtest named with spaces
    if not _NAME.fullmatch(name):
        raise UsageError(f"test {echo(test)} is not a Go test name; pass TestName, TestName/subtest (as go test -v "
                         "prints it) or ./package/dir::TestName")
    package = os.path.normpath(os.path.join(cwd, where)) if where else cwd
    if not _has_tests(package):
        found = packages_with_tests(package if os.path.isdir(package) else cwd)
        hint = (f"; packages with tests here: {', '.join(found)} (pass cwd=one of them, or <dir>::{name})" if found
                else "; pass cwd=the package's directory, or <dir>::TestName")
        raise UsageError(f"no Go test files (*_test.go) in {package}{hint}")
    return TestPlan(name=test, runner="go test", language="go", cwd=package, program=package,
                    args=("-test.run", run_pattern(name), "-test.v"),
                    judge=lambda code, text: verdict(name, code, text),
                    names=lambda: listed_tests(package))


def packages_with_tests(root: str) -> list[str]:
    """The directories under ``root`` holding Go tests (``./pkg/dir``), the first ``SHOWN_PACKAGES``."""
    found: list[str] = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRS and not d.startswith((".", "_")))
        if any(f.endswith("_test.go") for f in files):
            found.append("./" + os.path.relpath(directory, root) if directory != root else ".")
            if len(found) == SHOWN_PACKAGES:
                break
    return found


def verdict(name: str, code: int | None, text: str) -> Verdict:
    """How the run of ``name`` ended, from ``-test.v``'s lines: its own ``--- PASS/FAIL/SKIP`` line, else not run."""
    lines = last_lines(text, 200)
    ended = {m[2]: (m[1], m[3]) for line in lines if (m := _ENDED.match(line))}
    panic = next((line for line in lines if _PANIC.match(line)), None)
    if name in ended:
        outcome, seconds = ended[name]
        summary = f"--- {outcome}: {name} ({seconds})" + (f"; {panic}" if panic and outcome == "FAIL" else "")
        return Verdict(FAILED if outcome == "FAIL" else PASSED, summary)
    if panic:
        return Verdict(FAILED, panic)
    if code == 0:
        said = next((line for line in lines if "no tests to run" in line), f"no test named {name} ran")
        return Verdict(NOT_FOUND, said)
    return Verdict(ERROR, " / ".join(lines[-3:]) or None)


async def listed_tests(package: str) -> list[str]:
    """The test functions of ``package`` (top-level tests, examples, benchmarks, fuzz tests, as ``go test -list``
    names them), then those of the packages under it as ``./dir::TestName`` (a name run in the wrong package),
    read from the ``_test.go`` files: ``go test -list`` compiles each package again without delve's flags
    (20 s for strconv), where reading takes milliseconds."""
    names: list[str] = []
    for directory, subdirs, files in os.walk(package):
        subdirs[:] = sorted(d for d in subdirs if d not in _SKIPPED_DIRS and not d.startswith((".", "_")))
        where = "" if directory == package else "./" + os.path.relpath(directory, package) + "::"
        for file in sorted(f for f in files if f.endswith("_test.go")):
            with open(os.path.join(directory, file), encoding="utf-8", errors="replace") as handle:
                names += [where + n for n in _DECLARED.findall(handle.read()) if where + n not in names]
        if len(names) >= LISTED_AT_MOST:
            break
    return names
