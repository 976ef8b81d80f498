"""Which test runners the project at a directory has, for ``polydbg doctor``: one line per ecosystem found, saying
what ``debug_launch(test=…)`` will run there (the same lookups a test launch makes) and what is missing.

Only the project's markers are read (pyproject.toml, go.mod, Cargo.toml, package.json, a Maven or Gradle build,
a Gemfile, .rspec or Ruby files in test/ or spec/);
the one program run is the project's Python asking for its pytest's version, bounded by a timeout.
"""

from __future__ import annotations

import os
import shutil
import subprocess

from polydbg.backends.debugpy.python import find_python
from polydbg.backends.java.kotlin import find_kotlinc
from polydbg.backends.kit.projects import nearest
from polydbg.backends.node.launcher import find_package
from polydbg.errors import PolydbgError
from polydbg.testing import OTHER_MARKERS, PYTHON_MARKERS, go, javascript, junit, php, ruby, rust

_JAVA_MARKERS = tuple(marker for marker, language in OTHER_MARKERS.items() if language in ("java", "kotlin"))
_MARKERS = (*PYTHON_MARKERS, *OTHER_MARKERS, *php.MARKERS)
_VERSION_S = 10


def found(cwd: str) -> list[str]:
    """Per ecosystem of the project at ``cwd`` (the nearest directory at or above it with a project's marker):
    ``language  runner — how to name a test``."""
    root = nearest(cwd, lambda directory: _has(directory, _MARKERS) or go.is_go_test("", directory)
                   or ruby.is_ruby_project(directory))
    if root is None:
        return []
    return [line for describe in (_python, _go, _rust, _javascript, _java, _ruby, _php)
            if (line := describe(root))]


def _has(root: str, markers: tuple[str, ...]) -> bool:
    return any(os.path.exists(os.path.join(root, marker)) for marker in markers)


def _python(root: str) -> str | None:
    if not _has(root, PYTHON_MARKERS):
        return None
    try:
        interpreter = find_python(None, root, None)
    except PolydbgError as exc:
        return f"python  {root}: {exc}"
    try:
        out = subprocess.run([interpreter, "-c", "import pytest; print(pytest.__version__)"], capture_output=True,
                             text=True, timeout=_VERSION_S, cwd=root)
        version = out.stdout.strip() if out.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        version = None
    runner = f"pytest {version}" if version else f"unittest (no pytest in {interpreter}: pip install pytest there)"
    return f"python  {runner} with {interpreter} — test=\"tests/test_x.py::test_name\" or a unittest id"


def _go(root: str) -> str | None:
    if not _has(root, ("go.mod",)) and not go.is_go_test("", root):
        return None
    packages = go.packages_with_tests(root)
    where = f"{len(packages)} package(s) with tests" if packages else "no *_test.go files yet"
    tool = "go test through delve" if shutil.which("go") else "go is not on PATH (apt-get install golang-go)"
    return f"go      {tool}, {where} — test=\"TestName\" or \"./pkg::TestName/subtest\""


def _rust(root: str) -> str | None:
    if not _has(root, ("Cargo.toml",)):
        return None
    try:
        cargo = rust.find_cargo(os.environ)
    except PolydbgError as exc:
        return f"rust    {exc}"
    return f"rust    cargo test ({cargo}), run --exact under lldb-dap — test=\"module::test_name\""


def _javascript(root: str) -> str | None:
    if not _has(root, ("package.json",)):
        return None
    runner = javascript.runner_of(root)
    if runner != "node:test" and find_package(runner, root) is None:
        return f"js/ts   {runner} (the project's runner) is not installed: npm install in {root}"
    return f"js/ts   {runner} — test=\"test/x.test.js::describe > test name\""


def _java(root: str) -> str | None:
    if not _has(root, _JAVA_MARKERS):
        return None
    jars = [jar for jar in (*junit.JUNIT4_JARS[:1], junit.JUNIT5_JAR)
            if os.path.isfile(os.path.join(junit.DEBIAN_JAVA, jar))]
    have = ", ".join(jars) if jars else (f"no JUnit jars in {junit.DEBIAN_JAVA} (apt-get install junit4 junit5), "
                                          "so only the project's own on its classpath")
    kotlin = "; Kotlin tests compiled with kotlinc" if find_kotlinc() else ""
    return f"java    JUnit 4/5 ({have}){kotlin} — test=\"pkg.Class#method\""


def _php(root: str) -> str | None:
    if not _has(root, php.MARKERS):
        return None
    try:
        runner = php.find_phpunit(root)
    except PolydbgError as exc:
        return f"php     {exc}"
    return f"php     PHPUnit ({runner}) under Xdebug — test=\"CartTest::testTotal\" or \"tests/CartTest.php\""


def _ruby(root: str) -> str | None:
    if not ruby.is_ruby_project(root):
        return None
    if shutil.which("ruby") is None:
        return "ruby    ruby is not on PATH (apt-get install ruby)"
    tests = len(ruby.unit_names(root))
    specs = os.path.isdir(os.path.join(root, "spec"))
    rspec = ("; rspec for spec/" if shutil.which("rspec") else "; spec/ but no rspec (apt-get install ruby-rspec)") \
        if specs else ""
    return (f"ruby    minitest/test-unit ({tests} test method(s) in test/){rspec} — "
            "test=\"test/test_x.rb::TestX#test_name\" or \"spec/x_spec.rb:12\"")
