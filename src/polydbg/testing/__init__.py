"""Tests by name: ``debug_launch(test=…)`` takes the name an ecosystem gives a test and runs that test alone
under the debugger, with the project's own runner, stopping where it fails.

Which ecosystem is the ``language`` given, else the test's file (``tests/test_x.py``), else the project's
markers in cwd (``pyproject.toml``, ``pytest.ini``, …). Each ecosystem's runner is a module here that makes a
``TestPlan`` (``testing.plan``); the session keeps the plan to judge the run's end.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from polydbg.errors import UsageError, echo
from polydbg.testing import go, javascript, junit, php, python, ruby, rust
from polydbg.testing.plan import TestPlan, Verdict, closest

__all__ = ["OTHER_MARKERS", "PYTHON_MARKERS", "TestPlan", "Verdict", "closest", "plan"]

PYTHON_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py")
OTHER_MARKERS = {"go.mod": "go", "Cargo.toml": "rust", "package.json": "javascript", "pom.xml": "java",
                  "build.gradle": "java", "build.gradle.kts": "kotlin",
                  os.path.join("src", "test", "java"): "java", os.path.join("src", "test", "kotlin"): "kotlin"}


def language_of(test: str, cwd: str, language: str | None) -> str:
    if language:
        return language
    if python.is_python_test(test, cwd):
        return "python"
    if go.is_go_test(test, cwd):
        return "go"
    if javascript.is_javascript_test(test, cwd):
        return "javascript"
    if php.is_php_test(test, cwd):
        return "php"
    if ruby.is_ruby_test(test, cwd):
        return "ruby"
    for marker, named in OTHER_MARKERS.items():
        if os.path.exists(os.path.join(cwd, marker)):
            return named
    if ruby.is_ruby_project(cwd):
        return "ruby"
    if any(os.path.exists(os.path.join(cwd, marker)) for marker in PYTHON_MARKERS) or \
            any(name.endswith(".py") for name in _listing(cwd)):
        return "python"
    if rust.is_rust_test(test, cwd):
        return "rust"
    raise UsageError(f"cannot tell which language's tests {echo(test)} names in {cwd}; pass language, or cwd=the "
                     "project's directory")


async def plan(test: str, cwd: str, language: str | None, runtimes: Mapping[str, str],
               env: Mapping[str, str] | None = None, runtime_args: tuple[str, ...] = ()) -> TestPlan:
    """How to run ``test`` alone in the project at ``cwd`` (``runtimes``: debug_launch's runtime arguments, an
    interpreter the agent named; ``env``: the launch's, which a build step gets too; ``runtime_args``: the
    runtime's flags, a JVM's classpath)."""
    if not test.strip() or "\0" in test or "\n" in test:
        raise UsageError("test is empty or holds a NUL byte or a line break; pass a test's name, e.g. "
                         "tests/test_x.py::test_name")
    lang = language_of(test, cwd, language)
    if lang == "python":
        return await python.plan(test, cwd, runtimes.get("python"))
    if lang == "go":
        return go.plan(test, cwd)
    if lang == "rust":
        return await rust.plan(test, cwd, env)
    if lang in ("java", "kotlin"):
        return await junit.plan(test, cwd, runtime_args)
    if lang in ("javascript", "typescript"):
        return await javascript.plan(test, cwd, runtimes.get("node"), runtime_args)
    if lang == "php":
        return php.plan(test, cwd)
    if lang == "ruby":
        return await ruby.plan(test, cwd)
    raise UsageError(f"debug_launch(test=…) runs Python (pytest, unittest), Go, Rust, Java/Kotlin (JUnit), "
                     f"JavaScript/TypeScript (node:test, jest, vitest, mocha), Ruby (minitest, test-unit, RSpec) and "
                     f"PHP (PHPUnit) tests so far, not {lang}'s; run the "
                     f"{lang} test runner as the program (program=, args=) with a breakpoint in the test")


def _listing(directory: str) -> list[str]:
    try:
        return os.listdir(directory)
    except OSError:
        return []
