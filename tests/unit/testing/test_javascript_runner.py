"""JavaScript's test runners read by name and by their ends: the test's name split into its file and names,
the project's runner found from its package.json, each runner's summary as a verdict, and the names refused
before anything runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from polydbg import testing
from polydbg.errors import UsageError
from polydbg.testing import javascript

pytestmark = pytest.mark.anyio


def test_a_name_is_split_into_its_file_and_its_describe_blocks() -> None:
    assert javascript.split("test/cart.test.js::cart > totals > adds") == ("test/cart.test.js", ["cart", "totals",
                                                                                                  "adds"])
    assert javascript.split("test/cart.test.ts::cart totals adds") == ("test/cart.test.ts", ["cart totals adds"])
    assert javascript.split("src/a.spec.mjs::cart::adds") == ("src/a.spec.mjs", ["cart", "adds"])
    assert javascript.split("cart › adds [1, 2]") == (None, ["cart", "adds [1, 2]"])  # jest's own joiner
    assert javascript.split("test/cart.test.js") == ("test/cart.test.js", [])
    # the runners' name filters match the names joined by spaces, at the full name's end
    assert javascript._pattern(["cart", "sums [2,2] to 5"]) == r"(?:^| )cart\ sums\ \[2,2\]\ to\ 5$"


def _project(tmp_path: Path, package: dict[str, object]) -> str:
    (tmp_path / "package.json").write_text(json.dumps(package))
    return str(tmp_path)


def test_the_runner_is_the_test_scripts_else_the_dependencys_else_node_test(tmp_path: Path) -> None:
    assert javascript.runner_of(_project(tmp_path, {"scripts": {"test": "vitest run"}})) == "vitest"
    assert javascript.runner_of(_project(tmp_path, {"scripts": {"test": "NODE_ENV=test jest --ci"}})) == "jest"
    assert javascript.runner_of(_project(tmp_path, {"scripts": {"test": "node --test test/"}})) == "node:test"
    assert javascript.runner_of(_project(tmp_path, {"scripts": {"test": "make check"},
                                                    "devDependencies": {"mocha": "^11"}})) == "mocha"
    assert javascript.runner_of(_project(tmp_path, {})) == "node:test"


async def test_names_refused_before_anything_runs(tmp_path: Path) -> None:
    cwd = _project(tmp_path, {"scripts": {"test": "node --test"}})
    with pytest.raises(UsageError, match=r"test file 'test/missing\.test\.js' not found"):
        await testing.plan("test/missing.test.js::adds", cwd, "javascript", {})
    with pytest.raises(UsageError, match=r"no test named 'cart adds' in .* \(0 test files looked at\)"):
        await testing.plan("cart adds", cwd, None, {})
    (tmp_path / "a.test.js").write_text("")
    jest = _project(tmp_path, {"scripts": {"test": "jest"}})
    with pytest.raises(UsageError, match=r"runs its tests with jest, which is not installed.*npm install"):
        await testing.plan("a.test.js::adds", jest, None, {})


async def test_a_node_test_plan_runs_the_file_with_a_pattern_for_every_ending_of_the_name(tmp_path: Path) -> None:
    cwd = _project(tmp_path, {"scripts": {"test": "node --test"}})
    (tmp_path / "cart.test.ts").write_text("")
    plan = await testing.plan("cart.test.ts::cart > adds (1)", cwd, None, {}, runtime_args=("--no-warnings",))
    assert plan.program == "cart.test.ts" and plan.language == "typescript" and plan.runner == "node:test"
    # Node 20 matches a test's own name, Node 22 its full name: either matches one of the endings; the launch's own
    # Node flags follow
    assert plan.runtime_args == (r"--test-name-pattern=^(?:cart\ adds\ \(1\)|adds\ \(1\)|\(1\))$",
                                 "--test-reporter=spec", "--no-warnings"), plan
    assert plan.exception_filters == ("failures",)


NODE_FAILED = "✖ takes the discount (1.2ms)\nℹ tests 5\nℹ suites 2\nℹ pass 0\nℹ fail 1\nℹ cancelled 0\nℹ skipped 4\n"


def test_node_test_runs_read_as_verdicts() -> None:
    failed = javascript.node_test_verdict(1, NODE_FAILED)
    assert failed == testing.Verdict("failed", "tests 5, pass 0, fail 1, cancelled 0, skipped 4")
    assert javascript.node_test_verdict(0, "# tests 1\n# pass 1\n# fail 0\n").outcome == "passed"  # TAP
    assert javascript.node_test_verdict(0, "ℹ tests 3\nℹ pass 0\nℹ fail 0\nℹ skipped 3\n").outcome == "not found"
    assert javascript.node_test_verdict(1, "SyntaxError: Unexpected token\n").outcome == "error"


def test_jest_vitest_and_mocha_runs_read_as_verdicts() -> None:
    jest = javascript._jest_verdict(1, "Test Suites: 1 failed, 1 total\nTests:       1 failed, 6 skipped, 7 total\n")
    assert jest == testing.Verdict("failed", "1 failed, 6 skipped, 7 total")
    assert javascript._jest_verdict(0, "Tests:       7 skipped, 7 total\n").outcome == "not found"
    assert javascript._jest_verdict(0, "Tests:       1 passed, 1 total\n").outcome == "passed"
    broken = javascript._jest_verdict(1, "Test Suites: 1 failed, 1 total\nTests:       0 total\n")
    assert broken.outcome == "error" and "did not run" in (broken.summary or "")
    vitest = javascript._vitest_verdict(1, " Test Files  1 failed (1)\n      Tests  1 failed | 3 skipped (4)\n")
    assert vitest == testing.Verdict("failed", "1 failed | 3 skipped (4)")
    assert javascript._vitest_verdict(0, "      Tests  1 passed | 3 skipped (4)\n").outcome == "passed"
    mocha = javascript._mocha_verdict(1, "  0 passing (55ms)\n  1 failing\n\n  1) cart\n")
    assert mocha == testing.Verdict("failed", "0 passing, 1 failing")
    assert javascript._mocha_verdict(0, "\n  0 passing (2ms)\n").outcome == "not found"


# vitest 3's ends (abridged) when it could not run the tests: an unknown option (Node's report of the uncaught
# error: its stack last), and a test file esbuild could not transform
VITEST_UNKNOWN_OPTION = """file:///p/node_modules/vitest/dist/chunks/cac.BfaZ95xE.js:404
          throw new CACError(`Unknown option \\`${name.length > 1 ? `--${name}` : `-${name}`}\\``);
                ^

CACError: Unknown option `--bogusOpt`
    at Command.checkUnknownOptions (file:///p/node_modules/vitest/dist/chunks/cac.BfaZ95xE.js:404:17)
    at async asyncRunEntryPointWithESMLoader (node:internal/modules/run_main:117:5)

Node.js v20.20.2
"""
VITEST_SYNTAX_ERROR = """ FAIL  test/s.test.ts [ test/s.test.ts ]
Error: Transform failed with 1 error:
/p/test/s.test.ts:2:22: ERROR: Expected identifier but found "="
  Plugin: vite:esbuild
 ❯ failureErrorWithLog node_modules/esbuild/lib/main.js:1752:15

 Test Files  1 failed (1)
      Tests  no tests
   Duration  490ms (transform 80ms, setup 0ms, collect 0ms, tests 0ms, environment 0ms, prepare 147ms)
"""


def test_a_run_that_ends_in_an_error_is_summed_up_by_the_errors_line() -> None:
    """Not by the last lines: Node's stack of the error, or vitest's timings."""
    assert javascript._vitest_verdict(1, VITEST_UNKNOWN_OPTION) == testing.Verdict(
        "error", "CACError: Unknown option `--bogusOpt`")
    assert javascript._vitest_verdict(1, VITEST_SYNTAX_ERROR) == testing.Verdict("error", (
        'Error: Transform failed with 1 error: /p/test/s.test.ts:2:22: ERROR: Expected identifier but found "="'))
    missing = "Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'chai'"
    assert javascript._mocha_verdict(1, f"{missing}\n    at x (y:1:2)\n") == testing.Verdict("error", missing)
    assert javascript._vitest_verdict(1, "killed\n").summary == "killed"  # no error line: the last lines


async def test_a_runner_not_run_by_name_is_said(tmp_path: Path) -> None:
    cwd = _project(tmp_path, {"scripts": {"test": "c8 ava --verbose"}})
    assert javascript.runner_of(cwd) == "ava"
    (tmp_path / "a.test.js").write_text("")
    with pytest.raises(UsageError, match=r"runs its tests with ava, which debug_launch\(test=…\) does not run"):
        await testing.plan("a.test.js::adds", cwd, None, {})
    assert javascript.runner_of(_project(tmp_path, {"scripts": {"test": "jest --passWithNoTests"}})) == "jest"


def test_the_options_of_the_projects_test_script_are_kept_its_files_and_watching_left_out() -> None:
    express = "mocha --require test/support/env --reporter spec --check-leaks test/ test/acceptance/"
    assert javascript.script_options(express, "mocha") == ("--require", "test/support/env", "--reporter", "spec",
                                                           "--check-leaks")
    assert javascript.script_options(express, "mocha", javascript._REPORTING) == ("--require", "test/support/env",
                                                                                  "--check-leaks")
    jest = "npm run build && NODE_ENV=test jest --config=jest.unit.js --coverage -w 2 --env jsdom src/"
    assert javascript.script_options(jest, "jest") == ("--config=jest.unit.js", "--env", "jsdom")
    vitest = "vitest run --config vitest.config.ts --pool=forks --poolOptions.forks.singleFork -t slow"
    assert javascript.script_options(vitest, "vitest") == ("--config", "vitest.config.ts")
    assert javascript.script_options("node --test", "mocha") == ()
    # typechecking: tsc over the whole project at each run under the debugger (ufo's tests: 32 s a run)
    assert javascript.script_options("pnpm lint && vitest run --typecheck", "vitest") == ()
    assert javascript.script_options("vitest --typecheck.only --typecheck.tsconfig t.json -c v.ts", "vitest") == (
        "-c", "v.ts")
    assert javascript.script_options("mocha 'unclosed", "mocha") == ()


async def test_a_jest_plan_runs_in_band_without_coverage_with_the_scripts_options(tmp_path: Path) -> None:
    """A project's config may ask for coverage: it rewrites the code run, and one test fails its thresholds."""
    cwd = _project(tmp_path, {"scripts": {"test": "jest --env node --coverage"}})
    (tmp_path / "node_modules" / "jest").mkdir(parents=True)
    (tmp_path / "node_modules" / "jest" / "package.json").write_text("{}")
    (tmp_path / "a.test.ts").write_text("")
    plan = await testing.plan("a.test.ts::parse > reads 1m", cwd, None, {})
    assert plan.runner == "jest" and plan.program == str(tmp_path / "node_modules" / "jest" / "bin" / "jest.js")
    assert plan.args == ("--runInBand", "--coverage=false", "--env", "node", "-t", r"(?:^| )parse\ reads\ 1m$",
                         "--runTestsByPath", "a.test.ts"), plan


@pytest.mark.parametrize(("version", "one_thread"), [
    ("3.2.7", ("--pool=threads", "--poolOptions.threads.singleThread")),
    ("4.1.12", ("--pool=threads", "--maxWorkers=1", "--no-isolate"))])
async def test_a_vitest_plan_runs_one_worker_thread_as_its_version_spells_it(
        tmp_path: Path, version: str, one_thread: tuple[str, ...]) -> None:
    """vitest 4 took out poolOptions: every run by name of a vitest 4 project ended 'Unknown option
    `--poolOptions`' (content-type's tests)."""
    cwd = _project(tmp_path, {"devDependencies": {"vitest": version}})
    (tmp_path / "node_modules" / "vitest").mkdir(parents=True)
    (tmp_path / "node_modules" / "vitest" / "package.json").write_text(json.dumps({"version": version}))
    (tmp_path / "a.test.ts").write_text("")
    plan = await testing.plan("a.test.ts::parse", cwd, None, {})
    assert plan.args == ("run", "a.test.ts", "-t", "(?:^| )parse$", *one_thread, "--no-color",
                         "--coverage.enabled=false", "--typecheck.enabled=false"), plan


async def test_the_runner_s_entry_is_the_one_its_package_json_names(tmp_path: Path) -> None:
    """mocha 9's command is bin/mocha (10's bin/mocha.js): every mocha 9 project's run by name was refused, its
    runner's entry "not found" (bytes.js's tests)."""
    cwd = _project(tmp_path, {"scripts": {"test": "mocha --check-leaks --reporter spec"}})
    mocha = tmp_path / "node_modules" / "mocha"
    (mocha / "bin").mkdir(parents=True)
    (mocha / "bin" / "mocha").write_text("")
    (mocha / "package.json").write_text(json.dumps({"bin": {"mocha": "./bin/mocha", "_mocha": "./bin/_mocha"}}))
    (tmp_path / "a.test.js").write_text("")
    plan = await testing.plan("a.test.js::adds", cwd, None, {})
    assert plan.program == str(mocha / "bin" / "mocha"), plan


async def test_vitest_s_listing_is_read_past_a_warning_in_colour(tmp_path: Path) -> None:
    """vitest list --typecheck warns first, in yellow: the '[' of its escape was taken for the JSON's, the listing
    read as empty, and a name that matched no test had no closest names."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("no node on PATH")
    listed = [{"name": "joinURL > joinURL(\"/\", \"/b\") === \"/b\"", "file": str(tmp_path / "test/join.test.ts")}]
    script = tmp_path / "vitest.mjs"
    script.write_text("console.log('\\x1b[33mTesting types with tsc is an experimental feature.\\x1b[39m');\n"
                      f"console.log(JSON.stringify({json.dumps(listed)}, null, 2));\n")
    names = await javascript._vitest_names(node, (str(script),), str(tmp_path), None)
    assert names == ['test/join.test.ts::joinURL > joinURL("/", "/b") === "/b"'], names
