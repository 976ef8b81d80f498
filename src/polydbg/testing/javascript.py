"""JavaScript and TypeScript tests by name: ``test/cart.test.js::cart > totals > adds the prices`` (the file, then
the describe blocks and the test joined by ``" > "``, or by spaces as the runners' own name filters join them),
a file alone (every test in it), or a name alone (jest, vitest and mocha look for it in every test file).

The runner is the project's own: the one its package.json's ``test`` script runs, else the one it depends on
(jest, vitest, mocha; found in the nearest node_modules, as npm finds them), else Node's own test runner
(``node:test``). Each runs in the debugged Node itself, never in a worker or a child, so the stop is the
test's: ``node --test-name-pattern=… file`` (the file run as a program runs its tests in-process), ``jest
--runInBand``, ``vitest run --pool=threads --poolOptions.threads.singleThread`` (vitest 4: ``--maxWorkers=1
--no-isolate``; a worker the node backend follows; vitest has no in-process mode), ``mocha``. The launch pauses
on the exceptions that fail a test (the node backend's ``failures`` filter: an assertion library's error or a
throw in the user's code that reaches the runner), at the user's frame.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import os
import re
import shlex
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.node.launcher import TS_EXTENSIONS, find_node, find_package, project_package, typescript_loader
from polydbg.errors import UsageError, echo
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED, TestPlan, Verdict, closest, last_lines, output_of

JOIN = " > "
FAILURES_FILTER = "failures"  # the node backend's: stop where a test fails (backends/node/failures.py)
_ENTRIES = {"jest": "bin/jest.js", "vitest": "vitest.mjs", "mocha": "bin/mocha.js"}
# runners debug_launch(test=…) does not run by name
_OTHER_RUNNERS = ("ava", "tap", "uvu", "jasmine", "karma", "playwright", "cypress", "tape", "lab")
_NEVER = "^(?!)$"  # a name pattern no test matches: the listing runs no test
# the summaries the runners print last
_NODE_COUNT = re.compile(r"^[#ℹ] (tests|suites|pass|fail|cancelled|skipped|todo) (\d+)$")
_JEST_TESTS = re.compile(r"^Tests:\s+(.*\d+ total)$")
_VITEST_TESTS = re.compile(r"^Tests\s+(.*\(\d+\))")
_MOCHA_COUNT = re.compile(r"^(\d+) (passing|failing|pending)\b")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# an error's own line as Node and the runners print it: "TypeError: …", "Error [ERR_MODULE_NOT_FOUND]: …"
_ERROR_LINE = re.compile(r"^(?:[A-Z][\w$.]*)?(?:Error|Exception)(?: \[[\w-]+\])?: \S")
_ERROR_LINES = 400  # the lines of a run's end searched for it (a run that errs ends before printing much)


def is_javascript_test(test: str, cwd: str) -> bool:
    """A name only JavaScript's runners use: a JavaScript or TypeScript file, alone or with its test's name."""
    where = test.split("::")[0]
    return bool(re.search(r"\.[cm]?[jt]sx?$", where)) and os.path.isfile(os.path.join(cwd, where))


def split(test: str) -> tuple[str | None, list[str]]:
    """The file (None when the name has none) and the describe blocks and test's names, outermost first."""
    where, _, name = test.partition("::")
    if not re.search(r"\.[cm]?[jt]sx?$", where):
        where, name = "", test
    parts = [p.strip() for p in re.split(r"\s+>\s+|::|\s+›\s+", name) if p.strip()]
    return where or None, parts


def _test_script(cwd: str) -> str:
    _, package = project_package(cwd)
    scripts = package.get("scripts")
    return str(scripts.get("test") or "") if isinstance(scripts, dict) else ""


def runner_of(cwd: str) -> str:
    """The project's runner: its test script's, else its dependencies', else node:test."""
    _, package = project_package(cwd)
    script = _test_script(cwd)
    for runner in (*_ENTRIES, *_OTHER_RUNNERS):
        if re.search(rf"(?:^|[\s/&;|(]){runner}(?:$|[\s;&|)])", script):
            return runner
    if re.search(r"\bnode\b.*--test\b", script):
        return "node:test"
    declared: set[str] = set()
    for key in ("devDependencies", "dependencies"):
        listed = package.get(key)
        if isinstance(listed, dict):
            declared |= set(listed)
    return next((runner for runner in _ENTRIES if runner in declared), "node:test")


# Of each runner's options, those that take a value (the next word, unless written --name=value), and those left
# out of a test run by name: the name filters and files it sets itself, watching, coverage, parallel workers.
_TAKES_VALUE = {
    "jest": {"-c", "--config", "--env", "--testEnvironment", "--rootDir", "--roots", "--testTimeout",
             "--selectProjects", "--setupFiles", "--setupFilesAfterEnv", "--preset", "-t", "--testNamePattern",
             "--testPathPattern", "--testPathPatterns", "-w", "--maxWorkers", "--shard", "--changedSince",
             "--outputFile", "--reporters", "--testMatch", "--testRegex", "--moduleDirectories"},
    "vitest": {"-c", "--config", "-r", "--root", "--dir", "--environment", "--project", "--mode", "-t",
               "--testNamePattern", "--pool", "--shard", "--reporter", "--outputFile", "--testTimeout"},
    "mocha": {"-r", "--require", "-u", "--ui", "-R", "--reporter", "-O", "--reporter-option", "--reporter-options",
              "-t", "--timeout", "-s", "--slow", "--file", "--extension", "--config", "--package", "--spec",
              "--ignore", "--exclude", "--retries", "-n", "--node-option", "-g", "--grep", "-f", "--fgrep", "-j",
              "--jobs"},
}
_LEFT_OUT = {
    "jest": {"-t", "--testNamePattern", "--testPathPattern", "--testPathPatterns", "--watch", "--watchAll", "-w",
             "--maxWorkers", "--coverage", "--collectCoverage", "--shard", "-o", "--onlyChanged", "--changedSince",
             "--json", "--outputFile", "--listTests", "--runTestsByPath", "-i", "--runInBand"},
    "vitest": {"-t", "--testNamePattern", "--pool", "--watch", "-w", "--coverage", "--shard", "--ui", "--run",
               "--no-file-parallelism", "--fileParallelism", "--outputFile", "--typecheck"},
    "mocha": {"-g", "--grep", "-f", "--fgrep", "--spec", "-p", "--parallel", "-j", "--jobs", "-w", "--watch",
              "-i", "--invert", "--forbid-only"},
}


_REPORTING = frozenset({"-R", "--reporter", "--reporters", "-O", "--reporter-option", "--reporter-options", "--json"})


def script_options(script: str, runner: str, leaving: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The options the project's test script gives its runner (``mocha --require test/env --check-leaks test/``:
    ``--require test/env --check-leaks``), for a run by name: its files and the options a run by name sets or
    cannot have are left out."""
    for command in re.split(r"&&|\|\||;", script):
        try:
            words = shlex.split(command)
        except ValueError:
            return ()
        at = next((i for i, w in enumerate(words) if re.search(rf"(?:^|/){runner}(?:\.[cm]?js)?$", w)), None)
        if at is None:
            continue
        kept: list[str] = []
        rest = iter(words[at + 1:])
        for word in rest:
            name = word.split("=", 1)[0]
            if not word.startswith("-"):
                continue  # a file, a directory, a glob, or vitest's command (run, watch)
            value = [next(rest, "")] if name in _TAKES_VALUE[runner] and "=" not in word else []
            if name not in _LEFT_OUT[runner] | leaving and not name.startswith(("--poolOptions", "--typecheck.")):
                kept += [word, *value]
        return tuple(kept)
    return ()


def _pattern(parts: list[str]) -> str:
    """The regular expression the runners' name filters match a test's full name (its describe blocks' names and
    its own, joined by spaces) with: the name given is the full name's end (the test's own name, or it with some
    of its describe blocks', or all of them)."""
    return "(?:^| )" + re.escape(" ".join(parts)) + "$"


async def plan(test: str, cwd: str, node: str | None, runtime_args: tuple[str, ...] = ()) -> TestPlan:
    """``runtime_args``: the launch's Node flags, kept after the name filter a node:test run adds to them."""
    where, parts = split(test)
    node = find_node(node)
    if where is not None and not os.path.isfile(os.path.join(cwd, where)):
        raise UsageError(f"test file {echo(where)} not found in {cwd}; pass a path relative to cwd "
                         "(test/cart.test.js::cart > adds the prices), or cwd=the project's directory")
    runner = runner_of(cwd)
    if runner in _OTHER_RUNNERS:
        raise UsageError(f"the project in {cwd} runs its tests with {runner}, which debug_launch(test=…) does not run "
                         f"by name (node:test, jest, vitest and mocha it does); launch {runner}'s command as program "
                         "(program=\"npx\", args=[…]) with a breakpoint in the test")
    if runner == "node:test":
        if where is None:
            where = await _file_holding(test, parts, node, cwd)
        return _node_test(test, cwd, where, parts, node, runtime_args)
    package = find_package(runner, cwd)
    if package is None:
        raise UsageError(f"the project in {cwd} runs its tests with {runner}, which is not installed in its "
                         f"node_modules; run npm install (or npm install --save-dev {runner}) there first")
    manifest = _manifest(package)
    entry = _entry(package, runner, manifest)
    files = (where,) if where else ()
    named = ("-t", _pattern(parts)) if parts else ()
    options = script_options(_test_script(cwd), runner)
    listing = script_options(_test_script(cwd), runner, _REPORTING)  # the listings choose their own reporter
    if runner == "jest":
        # coverage (a project's config may ask for it) rewrites the code run, and one test fails its thresholds
        args: tuple[str, ...] = ("--runInBand", "--coverage=false", *options, *named,
                                 *(("--runTestsByPath", *files) if files else ()))
    elif runner == "vitest":
        args = ("run", *files, *options, *named, *_one_vitest_thread(manifest), "--no-color",
                "--coverage.enabled=false", *_no_typecheck(manifest))
    else:
        args = (*options, *files, *(("-g", _pattern(parts)) if parts else ()))
    judge, names = _RUNNERS[runner]
    return TestPlan(name=test, runner=runner, language="javascript", cwd=cwd, program=entry, args=args, judge=judge,
                    names=functools.partial(names, node, (entry, *listing), cwd, where),
                    exception_filters=(FAILURES_FILTER,))


def _manifest(package: str) -> dict[str, Any]:
    """An installed package's package.json (empty when it cannot be read)."""
    try:
        with open(os.path.join(package, "package.json"), encoding="utf-8") as file:
            found = json.load(file)
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def _entry(package: str, runner: str, manifest: dict[str, Any]) -> str:
    """The runner's command as its package.json's ``bin`` names it (mocha 9's is ``bin/mocha``, 10's
    ``bin/mocha.js``: every mocha 9 project's run by name was refused, its entry "not found")."""
    bin_ = manifest.get("bin")
    named = bin_ if isinstance(bin_, str) else bin_.get(runner) if isinstance(bin_, dict) else None
    if isinstance(named, str) and os.path.isfile(os.path.join(package, named)):
        return os.path.normpath(os.path.join(package, named))
    return os.path.join(package, _ENTRIES[runner])


def _one_vitest_thread(manifest: dict[str, Any]) -> tuple[str, ...]:
    """The options that run vitest's tests in one worker thread: vitest 4 took out ``poolOptions`` (``Unknown option
    `--poolOptions``` ended every run) for ``maxWorkers`` and ``isolate``."""
    major = re.match(r"\d+", str(manifest.get("version", "")))
    if major is not None and int(major.group()) >= 4:
        return ("--pool=threads", "--maxWorkers=1", "--no-isolate")
    return ("--pool=threads", "--poolOptions.threads.singleThread")


def _no_typecheck(manifest: dict[str, Any]) -> tuple[str, ...]:
    """Typechecking off, whatever the project's config says: each run would run tsc over the whole project under the
    debugger (ufo's tests: 32 s a run). vitest 1 made it an option (0.x: a command of its own)."""
    major = re.match(r"\d+", str(manifest.get("version", "")))
    return ("--typecheck.enabled=false",) if major is not None and int(major.group()) >= 1 else ()


def _node_test(test: str, cwd: str, where: str, parts: list[str], node: str,
               runtime_args: tuple[str, ...]) -> TestPlan:
    # Node 20 matches a pattern against each test's own name, Node 22 against the full name (describe blocks'
    # and the test's joined by spaces): every ending of the full name matches the test in either.
    words = " ".join(parts).split(" ")
    endings = [" ".join(words[i:]) for i in range(len(words))]
    flags = (f"--test-name-pattern=^(?:{'|'.join(re.escape(e) for e in endings)})$",) if parts else ()
    language = "typescript" if re.search(r"\.[cm]?tsx?$", where) else "javascript"
    return TestPlan(name=test, runner="node:test", language=language, cwd=cwd, program=where,
                    runtime_args=(*flags, "--test-reporter=spec", *runtime_args), judge=node_test_verdict,
                    names=lambda: _node_test_names(node, cwd, where), exception_filters=(FAILURES_FILTER,))


def node_test_verdict(code: int | None, text: str) -> Verdict:
    counts = {m.group(1): int(m.group(2)) for line in last_lines(_ANSI.sub("", text), 60)
              if (m := _NODE_COUNT.match(line.strip()))}
    if not counts:
        return Verdict(ERROR, _error_summary(text))
    summary = ", ".join(f"{key} {value}" for key, value in counts.items() if key in ("tests", "pass", "fail",
                                                                                     "cancelled", "skipped"))
    if counts.get("fail") or counts.get("cancelled") or code not in (0, None):
        return Verdict(FAILED, summary)
    if counts.get("pass"):
        return Verdict(PASSED, summary)
    return Verdict(NOT_FOUND, summary)


def _error_summary(text: str) -> str | None:
    """What a run that ended in an error (no count of tests: an import that failed, a syntax error, an unknown
    option) says went wrong: the error's own line (``Error: Cannot find module …``, ``CACError: Unknown option``),
    not the last lines, which are Node's stack of it or the runner's timings; else those last lines."""
    lines = [line.strip() for line in last_lines(_ANSI.sub("", text), _ERROR_LINES)]
    at = next((i for i, line in enumerate(lines) if _ERROR_LINE.match(line)), None)
    if at is None:
        return " / ".join(lines[-3:]) or None
    if lines[at].endswith(":") and at + 1 < len(lines):  # "Transform failed with 1 error:", the error below it
        return f"{lines[at]} {lines[at + 1]}"
    return lines[at]


def _counted(summary: str | None, code: int | None, failed: bool, passed: bool, text: str) -> Verdict:
    if summary is None:
        return Verdict(ERROR, _error_summary(text))
    if failed or code not in (0, None):
        return Verdict(FAILED, summary)
    return Verdict(PASSED if passed else NOT_FOUND, summary)


def _jest_verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(_ANSI.sub("", text), 40)
    if any(line.startswith("No tests found") for line in lines):
        return Verdict(NOT_FOUND, next(line for line in lines if line.startswith("No tests found")))
    summary = next((m.group(1) for line in reversed(lines) if (m := _JEST_TESTS.match(line.strip()))), None)
    suites = next((line.strip() for line in reversed(lines) if line.strip().startswith("Test Suites:")), "")
    if summary is not None and " 0 total" in " " + summary and "failed" in suites:
        return Verdict(ERROR, f"{suites} (the test file did not run: see debug_output)")
    return _counted(summary, code, "failed" in (summary or ""), "passed" in (summary or ""), text)


def _vitest_verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(_ANSI.sub("", text), 40)
    if any("No test files found" in line for line in lines):
        return Verdict(NOT_FOUND, next(line for line in lines if "No test files found" in line))
    summary = next((m.group(1).strip() for line in reversed(lines) if (m := _VITEST_TESTS.match(line.strip()))),
                   None)
    return _counted(summary, code, "failed" in (summary or ""), "passed" in (summary or ""), text)


def _mocha_verdict(code: int | None, text: str) -> Verdict:
    counts = {m.group(2): int(m.group(1)) for line in last_lines(_ANSI.sub("", text), 400)
              if (m := _MOCHA_COUNT.match(line.strip()))}
    summary = ", ".join(f"{value} {key}" for key, value in counts.items()) if counts else None
    return _counted(summary, code, bool(counts.get("failing")), bool(counts.get("passing")), text)


# the files ``node --test`` runs when given none (Node 20), and their TypeScript twins
_NODE_TEST_FILE = re.compile(r"(?:^|/)(?:[^/]*[.\-_]test|test-[^/]*|test)\.[cm]?[jt]s$|(?:^|/)test/.*\.[cm]?[jt]s$")
_LISTED_AT_ONCE = 4


def node_test_files(cwd: str) -> list[str]:
    found = []
    for directory, subdirectories, files in os.walk(cwd):
        subdirectories[:] = sorted(d for d in subdirectories if d != "node_modules" and not d.startswith("."))
        for name in sorted(files):
            path = os.path.relpath(os.path.join(directory, name), cwd)
            if _NODE_TEST_FILE.search(path) and not name.endswith(".d.ts"):
                found.append(path)
    return found


async def _file_holding(test: str, parts: list[str], node: str, cwd: str) -> str:
    """The test file that holds the test named ``test`` (no file given): each of the project's test files is
    listed (``node --test`` would run them in child processes; the one file runs in the debugged Node)."""
    files = node_test_files(cwd)
    names: list[str] = []
    for first in range(0, len(files), _LISTED_AT_ONCE):
        batch = files[first:first + _LISTED_AT_ONCE]
        for listed in await asyncio.gather(*(_node_test_names(node, cwd, file) for file in batch)):
            names += listed
    wanted = " ".join(parts)
    found = [n for n in names if (" " + n.split("::", 1)[1].replace(JOIN, " ")).endswith(" " + wanted)]
    holding = sorted({n.split("::", 1)[0] for n in found})
    if len(holding) == 1:
        return holding[0]
    if holding:
        raise UsageError(f"tests named {echo(test)} are in {len(holding)} files: {', '.join(holding[:10])}; pass "
                         "the one you mean with its file (file::name)")
    near = closest(test, names)
    hint = f"; closest: {', '.join(near)}" if near else f" ({len(files)} test files looked at)"
    raise UsageError(f"no test named {echo(test)} in {cwd}{hint}")


async def _node_test_names(node: str, cwd: str, where: str) -> list[str]:
    """Every test of the file, from Node's TAP listing of a run that matches none (each skipped, by name)."""
    loader: list[str] = []
    if where.lower().endswith(TS_EXTENSIONS):
        with contextlib.suppress(UsageError):  # no loader in the project: the listing says so, and lists nothing
            loader = typescript_loader(os.path.join(cwd, where))
    text = await output_of([node, f"--test-name-pattern={_NEVER}", "--test-reporter=tap", *loader, where], cwd)
    found: list[str] = []
    path: list[tuple[int, str]] = []
    for line in text.splitlines():
        match = re.match(r"^( *)# Subtest: (.*)$", line)
        if match is None:
            continue
        depth = len(match.group(1)) // 4
        path = [p for p in path if p[0] < depth] + [(depth, match.group(2))]
        name = JOIN.join(p[1] for p in path)
        if found and found[-1] == f"{where}::{JOIN.join(p[1] for p in path[:-1])}":
            found.pop()  # a suite: its tests follow
        found.append(f"{where}::{name}")
    return found


def _json_in(text: str) -> Any:
    start = text.find("{")
    for candidate in (text[start:], *(line for line in text.splitlines() if line.startswith(("{", "[")))):
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


async def _jest_names(node: str, entry: tuple[str, ...], cwd: str, where: str | None) -> list[str]:
    text = await output_of([node, *entry, "--runInBand", "--json", "-t", _NEVER,
                            *(("--runTestsByPath", where) if where else ())], cwd)
    data = _json_in(text[text.find('{"num'):] if '{"num' in text else text)
    found = []
    for suite in (data or {}).get("testResults") or []:
        file = os.path.relpath(str(suite.get("name") or ""), cwd)
        for result in suite.get("assertionResults") or []:
            found.append(f"{file}::{JOIN.join([*result.get('ancestorTitles', []), result.get('title', '')])}")
    return found


async def _vitest_names(node: str, entry: tuple[str, ...], cwd: str, where: str | None) -> list[str]:
    text = await output_of([node, *entry, "list", *((where,) if where else ()), "--json"], cwd)
    start = next((m.start() for m in re.finditer(r"^\[", text, re.MULTILINE)), -1)  # after any warning's lines
    try:
        data = json.loads(text[start:]) if start >= 0 else []
    except ValueError:
        data = []
    return [f"{os.path.relpath(str(item.get('file') or ''), cwd)}::{item.get('name')}" for item in data
            if isinstance(item, dict)]


async def _mocha_names(node: str, entry: tuple[str, ...], cwd: str, where: str | None) -> list[str]:
    text = await output_of([node, *entry, "--dry-run", "--reporter", "json", *((where,) if where else ())], cwd)
    data = _json_in(text)
    return [f"{os.path.relpath(str(t.get('file') or ''), cwd)}::{t.get('fullTitle')}"
            for t in (data or {}).get("tests") or [] if isinstance(t, dict)]



_RUNNERS: dict[str, tuple[Callable[[int | None, str], Verdict], Callable[[str, tuple[str, ...], str, str | None],
                                                                        Awaitable[list[str]]]]] = {
    "jest": (_jest_verdict, _jest_names), "vitest": (_vitest_verdict, _vitest_names),
    "mocha": (_mocha_verdict, _mocha_names)}
