"""Java and Kotlin tests by name: ``Class#method`` (``pkg.Class#method``, ``Outer$Inner#method``), ``Class`` for all its
tests, or a bare method name, run alone with JUnit 4 or JUnit 5 under the JVM's debug agent.

- The project's classes: the classpath given in ``runtime_args`` (``-cp …``), else its build's output (Maven's
  ``target/test-classes`` and ``target/classes``, Gradle's ``build/classes/{java,kotlin}/{test,main}``, jars in
  ``lib/``, ``libs/`` and ``target/dependency/``) with a Maven project's dependencies in ~/.m2 (``maven``); a
  project with sources only (``src/{main,test}/{java,kotlin}``, or sources in cwd; jars given or found are their
  libraries; ``src/{test,main}/resources`` join the classpath) is compiled by ``javac -g`` (and ``kotlinc``) into
  a cache directory of its own, again whenever a source changed — at a restart too (``TestPlan.rebuild``).
- The tests there are: the class files' methods annotated ``@Test`` (JUnit 4's, Jupiter's ``@Test``,
  ``@ParameterizedTest``, ``@RepeatedTest``, ``@TestFactory``, ``@TestTemplate``), inherited ones included, read
  from the class files themselves (``classfiles``): a name is resolved to its class's binary name and, for
  JUnit 5, the method's parameter types; an unknown name is run as given and answered with the closest names.
- The runner: JUnit 5's console launcher (``--select-method``) for a Jupiter test, polydbg's one-test JUnitCore
  runner for a JUnit 4 one (``junit4``), with the project's own JUnit jars, else Debian's (``junit4``, ``junit5``
  in /usr/share/java).
- The stop: JUnit catches every failure, so the default exception setting would never stop; the plan adds the
  backend's ``userUnhandled`` filter (an exception thrown from or through the test's code and caught by the
  runner's), which stops at the failing assertion in the test's own frame.
"""

from __future__ import annotations

import asyncio
import fcntl
import glob
import hashlib
import os
import re
import shutil
import tempfile
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass

import polydbg.testing.classfiles as classfiles
import polydbg.testing.junit4 as junit4
import polydbg.testing.maven as maven
from polydbg.backends.java import kotlin, launcher
from polydbg.errors import EnvironmentProblem, UsageError, echo
from polydbg.testing.plan import ERROR, FAILED, NOT_FOUND, PASSED, TestPlan, Verdict, last_lines

DEBIAN_JAVA = "/usr/share/java"
JUNIT4_JARS = ("junit4.jar", "hamcrest-core.jar")
JUNIT5_JAR = "junit-platform-console-standalone.jar"
CONSOLE = "org.junit.platform.console.ConsoleLauncher"
_JUNIT4_CLASS = "org/junit/runner/JUnitCore.class"
_CONSOLE_CLASS = "org/junit/platform/console/ConsoleLauncher.class"
_KOTLIN_CLASS = "kotlin/Unit.class"
JUNIT4_TEST = "org.junit.Test"
JUPITER = "org.junit.jupiter."
TEST_ANNOTATIONS = frozenset({JUNIT4_TEST, "org.junit.jupiter.api.Test", "org.junit.jupiter.api.RepeatedTest",
                              "org.junit.jupiter.params.ParameterizedTest", "org.junit.jupiter.api.TestFactory",
                              "org.junit.jupiter.api.TestTemplate"})
_JUNIT3_CASE = "junit.framework.TestCase"
_BUILD_OUTPUTS = (("target", "test-classes"), ("target", "classes"),
                  ("build", "classes", "java", "test"), ("build", "classes", "java", "main"),
                  ("build", "classes", "kotlin", "test"), ("build", "classes", "kotlin", "main"),
                  ("build", "resources", "test"), ("build", "resources", "main"))
_JAR_DIRS = ("lib", "libs", os.path.join("target", "dependency"))
_SOURCE_DIRS = (("src", "main", "java"), ("src", "test", "java"), ("src", "main", "kotlin"), ("src", "test", "kotlin"))
_SKIPPED_DIRS = frozenset({"target", "build", "out", "node_modules", ".git", ".gradle", ".idea"})
MAX_SOURCES = 5000
_KOTLIN_STDLIB_CACHES = ("~/.m2/repository/org/jetbrains/kotlin/kotlin-stdlib/*/kotlin-stdlib-*.jar",
                         "~/.gradle/caches/modules-2/files-2.1/org.jetbrains.kotlin/kotlin-stdlib/*/*/kotlin-stdlib-*.jar")
USER_UNHANDLED = "userUnhandled"  # the java backend's exception filter: thrown through the test's code, caught by JUnit
_SUMMARY_5 = re.compile(r"^\[\s*(\d+) tests (successful|failed|aborted|skipped)\s*\]$")
_FINISHED_5 = re.compile(r"^Test run finished after (\d+ ms)$")
_FAILURE_5 = re.compile(r"^\s*=> (\S+?)(?::\s*(.*))?$")
_MISSING_CLASS = re.compile(r"\b(?:NoClassDefFoundError|ClassNotFoundException)\b")
_NOT_RESOLVED_5 = re.compile(r"(\w+Selector \[.*\] resolution failed)")


@dataclass(frozen=True)
class _Tests:
    """The test classes found (binary name → their test methods, inherited ones included) and every class file."""

    methods: dict[str, list[classfiles.Method]]
    classes: dict[str, classfiles.ClassFile]

    def names(self) -> list[str]:
        """Each test as ``pkg.Class#method``, and each test class by its simple name (a class that matched none)."""
        simple = [cls.rpartition(".")[2].replace("$", ".") for cls in self.methods]
        return sorted(dict.fromkeys([*(f"{cls}#{m.name}" for cls, methods in self.methods.items() for m in methods),
                                     *(name for name in simple if simple.count(name) == 1)]))


async def plan(test: str, cwd: str, runtime_args: tuple[str, ...]) -> TestPlan:
    flags, given = launcher.split_classpath(runtime_args)
    if given:
        classpath = [os.path.join(cwd, entry) for entry in given]
    else:
        classpath = [*_build_outputs(cwd), *await maven.dependencies(cwd)]
    directories = [entry for entry in classpath if os.path.isdir(entry)]
    rebuild = None
    if not _any_class_file(directories):  # sources only (and jars): compiled here, and again at a restart
        libraries = list(classpath)

        async def rebuild() -> None:
            await _compiled_sources(cwd, libraries)

        compiled = await _compiled_sources(cwd, libraries)
        if compiled is None:
            raise UsageError(f"no compiled classes (target/test-classes, build/classes/…) nor sources in {cwd}; "
                             "build the project's tests first (mvn test-compile, gradle testClasses), pass "
                             "runtime_args=['-cp', '<its classes and jars>'], or cwd=the project's directory")
        resources = [os.path.join(cwd, "src", part, "resources") for part in ("test", "main")]
        classpath = [compiled, *(r for r in resources if os.path.isdir(r)), *classpath]
        directories = [compiled, *directories]
    tests = await asyncio.to_thread(_scan, _test_directories(directories))
    cls, method = _resolve(test.strip(), tests)
    jupiter = _is_jupiter(cls, tests, classpath)
    if any((c.source or "").endswith(".kt") for c in tests.classes.values()) and not _holds(classpath, _KOTLIN_CLASS):
        classpath.append(_kotlin_stdlib())
    name = f"{cls}#{method}" if method else cls
    language = "kotlin" if (tests.classes.get(cls) and (tests.classes[cls].source or "").endswith(".kt")) else "java"

    async def names() -> list[str]:
        return tests.names()

    if jupiter:
        classpath += [] if _holds(classpath, _CONSOLE_CLASS) else [_debian(JUNIT5_JAR, "junit5")]
        return TestPlan(name=test, runner="junit5", language=language, cwd=cwd, program=CONSOLE,
                        args=_console_args(cls, method, tests),
                        runtime_args=(*flags, "-cp", os.pathsep.join(classpath)), judge=junit5_verdict,
                        names=names, exception_filters=(USER_UNHANDLED,), rebuild=rebuild)
    if not _holds(classpath, _JUNIT4_CLASS):
        classpath += [_debian(JUNIT4_JARS[0], "junit4"), *_debian_optional(JUNIT4_JARS[1:])]
    junit_jar = next(entry for entry in classpath if _holds([entry], _JUNIT4_CLASS))
    runner = await junit4.runner_classes(launcher.find_javac(launcher.find_java(None)), junit_jar)
    return TestPlan(name=test, runner="junit4", language=language, cwd=cwd, program=junit4.CLASS, args=(name,),
                    runtime_args=(*flags, "-cp", os.pathsep.join([*classpath, runner])), judge=junit4_verdict,
                    names=names, exception_filters=(USER_UNHANDLED,), rebuild=rebuild)


# -- the project's classes ------------------------------------------------------------------------------------


def _build_outputs(cwd: str) -> list[str]:
    found = [os.path.join(cwd, *parts) for parts in _BUILD_OUTPUTS if os.path.isdir(os.path.join(cwd, *parts))]
    for directory in _JAR_DIRS:
        where = os.path.join(cwd, directory)
        if os.path.isdir(where):
            found += sorted(os.path.join(where, f) for f in os.listdir(where) if f.endswith(".jar"))
    return found


def _any_class_file(directories: list[str]) -> bool:
    return next(classfiles.class_files(directories), None) is not None


def _sources(cwd: str) -> list[str]:
    roots = [os.path.join(cwd, *parts) for parts in _SOURCE_DIRS if os.path.isdir(os.path.join(cwd, *parts))]
    found = []
    for root in roots or [cwd]:
        for directory, dirs, files in os.walk(root):
            dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.startswith("."))
            found += [os.path.join(directory, f) for f in sorted(files) if f.endswith((".java", ".kt"))]
            if len(found) > MAX_SOURCES:
                raise UsageError(f"more than {MAX_SOURCES} source files under {root} and no compiled classes: build "
                                 "the project's tests first (mvn test-compile, gradle testClasses)")
    return found


async def _compiled_sources(cwd: str, libraries: list[str]) -> str | None:
    """The project's .java (and .kt) files compiled with ``javac -g`` (``kotlinc`` first, which reads the Java
    sources too) against its ``libraries`` and JUnit's jars into a cache directory of its own, reused while no
    source changed; None when it has none."""
    sources = await asyncio.to_thread(_sources, cwd)
    if not sources:
        return None
    jars = [*libraries, *_debian_optional((*JUNIT4_JARS, JUNIT5_JAR))]
    stamp = "\n".join([os.pathsep.join(jars), *(f"{path}\0{os.stat(path).st_mtime_ns}\0{os.stat(path).st_size}"
                                                for path in sources)])
    key = hashlib.sha256(os.path.realpath(cwd).encode()).hexdigest()[:16]
    out = os.path.join(tempfile.gettempdir(), f"polydbg-classes-{os.getuid()}-{key}")
    stamp_file = os.path.join(out, ".polydbg-sources")
    lock = os.open(f"{out}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        await asyncio.to_thread(fcntl.flock, lock, fcntl.LOCK_EX)  # another polydbg compiling them: after it
        try:
            with open(stamp_file, encoding="utf-8") as handle:
                if handle.read() == stamp:
                    return out
        except OSError:
            pass
        shutil.rmtree(out, ignore_errors=True)  # (the classes of sources removed since)
        os.makedirs(out, exist_ok=True)
        await _compile(cwd, sources, jars, out)
        with open(stamp_file, "w", encoding="utf-8") as handle:
            handle.write(stamp)
        return out
    finally:
        os.close(lock)


async def _compile(cwd: str, sources: list[str], jars: list[str], out: str) -> None:
    """kotlinc, then javac: no annotation processor runs (``-proc:none``: compiling runs none of the project's
    code; a project that needs one is built by its build first)."""
    java = launcher.find_java(None)
    java_sources = [path for path in sources if path.endswith(".java")]
    if len(java_sources) < len(sources):
        kotlinc = kotlin.find_kotlinc()
        if kotlinc is None:
            raise UsageError(f"the tests of {cwd} are Kotlin sources and kotlinc is not on PATH (nor KOTLIN_HOME set): "
                             "build them first (gradle testClasses) and pass runtime_args=['-cp', '<classes>'], or "
                             "install kotlinc (npm install kotlin-compiler ships it)")
        await junit4.run_compiler([kotlinc, "-nowarn", "-cp", os.pathsep.join(jars), "-d", out,
                                   f"@{_argfile(out, 'kotlinc', sources)}"], f"the tests of {cwd}", cwd, "kotlinc")
    if java_sources:
        await junit4.run_compiler([launcher.find_javac(java), "-g", "-nowarn", "-proc:none", "-encoding", "UTF-8",
                                   "-d", out, "-cp", os.pathsep.join([out, *jars]),
                                   f"@{_argfile(out, 'javac', java_sources)}"], f"the tests of {cwd}", cwd)


def _argfile(out: str, tool: str, sources: list[str]) -> str:
    """A compiler's argument file naming ``sources`` (a command line of thousands would be too long)."""
    path = os.path.join(out, f".polydbg-{tool}-files")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("\n".join(f'"{source}"' for source in sources))
    return path


def _holds(classpath: Iterable[str], entry: str) -> bool:
    """Whether a class-path entry (a directory or a jar) holds the class file ``entry``."""
    for path in classpath:
        if os.path.isdir(path):
            if os.path.isfile(os.path.join(path, entry)):
                return True
        elif path.endswith(".jar") and os.path.isfile(path):
            try:
                with zipfile.ZipFile(path) as archive:
                    archive.getinfo(entry)
                return True
            except (KeyError, OSError, zipfile.BadZipFile):
                continue
    return False


def _debian(jar: str, package: str) -> str:
    path = os.path.join(DEBIAN_JAVA, jar)
    if not os.path.isfile(path):
        raise EnvironmentProblem(f"JUnit is not on the project's classpath and {path} is missing: apt-get install "
                                 f"{package}, or pass runtime_args=['-cp', '<the project's classes and JUnit jars>']")
    return path


def _debian_optional(jars: Iterable[str]) -> list[str]:
    return [path for jar in jars if os.path.isfile(path := os.path.join(DEBIAN_JAVA, jar))]


def _kotlin_stdlib() -> str:
    """kotlin-stdlib.jar: beside kotlinc (PATH, KOTLIN_HOME), else the newest in Maven's or Gradle's cache."""
    kotlinc = kotlin.find_kotlinc()
    if kotlinc:
        stdlib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(kotlinc))), "lib", "kotlin-stdlib.jar")
        if os.path.isfile(stdlib):
            return stdlib
    cached = [jar for pattern in _KOTLIN_STDLIB_CACHES for jar in glob.glob(os.path.expanduser(pattern))
              if not jar.endswith(("-sources.jar", "-javadoc.jar"))]
    if cached:
        return max(cached, key=lambda jar: [int(n) for n in re.findall(r"\d+", os.path.basename(jar))])
    raise EnvironmentProblem("the tests are Kotlin's and kotlin-stdlib.jar is neither on the classpath, beside a "
                             "kotlinc on PATH (or KOTLIN_HOME) nor in ~/.m2 or ~/.gradle: pass runtime_args=['-cp', "
                             "'<classes>:<kotlin-stdlib.jar>']")


# -- the tests there are --------------------------------------------------------------------------------------


def _scan(directories: list[str]) -> _Tests:
    classes = {c.name: c for path in classfiles.class_files(directories) if (c := classfiles.read(path))}
    methods: dict[str, list[classfiles.Method]] = {}
    for cls in classes.values():
        if cls.flags & classfiles.ABSTRACT:
            continue
        found = [m for c in _lineage(cls, classes) for m in c.methods if _is_test(m, c, classes)]
        if found:
            methods[cls.name] = found
    return _Tests(methods, classes)


def _test_directories(directories: list[str]) -> list[str]:
    """The directories the tests are in: the build's test output (``target/test-classes``, ``…/test``) where
    there is one, else every directory (a project's main classes hold no tests: not read, for time)."""
    tests = [d for d in directories if os.path.basename(os.path.normpath(d)) in ("test-classes", "test")]
    return tests or directories


def _lineage(cls: classfiles.ClassFile, classes: dict[str, classfiles.ClassFile]) -> list[classfiles.ClassFile]:
    """The class and its superclasses found among the project's classes."""
    lineage = [cls]
    while (parent := classes.get(lineage[-1].superclass or "")) is not None and len(lineage) < 50:
        lineage.append(parent)
    return lineage


def _is_test(method: classfiles.Method, owner: classfiles.ClassFile, classes: dict[str, classfiles.ClassFile]) -> bool:
    if method.annotations & TEST_ANNOTATIONS:
        return True
    lineage = _lineage(owner, classes)
    return (lineage[-1].superclass == _JUNIT3_CASE and method.name.startswith("test")
            and method.descriptor == "()V")


def _simple(name: str) -> str:
    return name.replace("$", ".")


def _resolve(test: str, tests: _Tests) -> tuple[str, str | None]:
    """(class binary name, method or None) that ``test`` names; as given when no test class matches."""
    if "#" in test:
        part, method = test.split("#", 1)
        return _class_named(part, tests) or part, method
    cls = _class_named(test, tests)
    if cls is not None:
        return cls, None
    part, _, method = test.rpartition(".")
    cls = _class_named(part, tests) if part else None
    if cls is not None:
        return cls, method
    owners = [c for c, methods in tests.methods.items() if any(m.name == test for m in methods)]
    if len(owners) == 1:  # a bare method name (Kotlin's may hold spaces: `one line is its price`)
        return owners[0], test
    if owners:
        raise UsageError(f"{len(owners)} test classes have a test {echo(test)}: "
                         f"{', '.join(f'{c}#{test}' for c in owners[:10])}; pass the one you mean")
    return test, None  # as given: the runner says it found nothing


def _class_named(name: str, tests: _Tests) -> str | None:
    if not name:
        return None
    if name in tests.methods:
        return name
    wanted = _simple(name)
    found = [c for c in tests.methods if _simple(c) == wanted or _simple(c).endswith("." + wanted)]
    if len(found) > 1:
        raise UsageError(f"{len(found)} test classes are named {echo(name)}: {', '.join(found[:10])}; pass the one "
                         "you mean with its package")
    return found[0] if found else None


def _is_jupiter(cls: str, tests: _Tests, classpath: list[str]) -> bool:
    """Whether ``cls``'s tests are JUnit 5's (Jupiter's annotations); for a class not found, whether the project
    has Jupiter tests, or JUnit 5 is what is there."""
    methods = tests.methods.get(cls)
    if methods is not None:
        return any(a.startswith(JUPITER) for m in methods for a in m.annotations)
    everything = [a for ms in tests.methods.values() for m in ms for a in m.annotations]
    if everything:
        return any(a.startswith(JUPITER) for a in everything)
    return _holds(classpath, _CONSOLE_CLASS) or os.path.isfile(os.path.join(DEBIAN_JAVA, JUNIT5_JAR))


def _console_args(cls: str, method: str | None, tests: _Tests) -> tuple[str, ...]:
    """The console launcher's selection: the class, or the method with its parameter types (a parameterized test's
    selector must name them) — every overload that is a test."""
    options = ("--disable-banner", "--disable-ansi-colors", "--fail-if-no-tests", "--details=tree")
    if method is None:
        return (*options, "--select-class", cls)
    if "(" in method:
        return (*options, "--select-method", f"{cls}#{method}")
    overloads = [m for m in tests.methods.get(cls, []) if m.name == method]
    selectors = [f"{cls}#{method}({', '.join(classfiles.parameter_types(m.descriptor))})" for m in overloads]
    selectors = selectors or [f"{cls}#{method}"]
    return (*options, *(arg for selector in dict.fromkeys(selectors) for arg in ("--select-method", selector)))


# -- verdicts -------------------------------------------------------------------------------------------------


def _missing_classes(verdict: Verdict, text: str) -> Verdict:
    """A failure or error of a class missing from the classpath says how to give it."""
    if verdict.outcome in (FAILED, ERROR) and _MISSING_CLASS.search(text):
        return Verdict(verdict.outcome, f"{verdict.summary or ''} (a class is missing from the classpath: pass "
                                        "runtime_args=['-cp', '<the project's classes and dependencies>'])".lstrip())
    return verdict


def junit5_verdict(code: int | None, text: str) -> Verdict:
    return _missing_classes(_junit5_verdict(code, text), text)


def junit4_verdict(code: int | None, text: str) -> Verdict:
    return _missing_classes(_junit4_verdict(code, text), text)


def _junit5_verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(text, 400)
    counts = {m.group(2): int(m.group(1)) for line in lines if (m := _SUMMARY_5.match(line.strip()))}
    took = next((m.group(1) for line in lines if (m := _FINISHED_5.match(line.strip()))), None)
    tally = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n or kind in ("successful", "failed"))
    summary = (f"{tally} in {took}" if took else tally) or None
    missing = next((m.group(1) for line in lines if (m := _NOT_RESOLVED_5.search(line))), None)
    if missing or code == 2:
        return Verdict(NOT_FOUND, missing or summary)
    if code == 0:
        return Verdict(PASSED, summary)
    if code == 1 and counts:
        failures = [f"{m.group(1).rpartition('.')[2]}: {m.group(2) or ''}".rstrip(": ")
                    for line in lines if (m := _FAILURE_5.match(line))]
        return Verdict(FAILED, "; ".join([*failures[:3], summary or ""]).strip("; "))
    return Verdict(ERROR, " / ".join(line.strip() for line in lines[-3:]) or None)


def _junit4_verdict(code: int | None, text: str) -> Verdict:
    lines = last_lines(text, 400)
    if code == junit4.NOT_FOUND_EXIT:
        return Verdict(NOT_FOUND, next((line for line in lines if line.startswith("polydbg: no test")), None))
    tally = next((line.strip() for line in reversed(lines) if line.startswith(("OK (", "Tests run:"))), None)
    if code == 0:
        return Verdict(PASSED, tally)
    if code == 1 and tally:
        first = next((i for i, line in enumerate(lines) if re.match(r"^1\) ", line)), None)
        failure = f"{lines[first][3:]}: {lines[first + 1]}" if first is not None and first + 1 < len(lines) else None
        return Verdict(FAILED, "; ".join(part for part in (failure, tally) if part))
    return Verdict(ERROR, " / ".join(line.strip() for line in lines[-3:]) or None)
