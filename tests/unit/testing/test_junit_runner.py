"""JUnit's tests read by name and by their ends: class files' test methods (annotations, inheritance, JUnit 3's
TestCase), a name resolved to the class's binary name and the console launcher's selectors, and the JUnit 4 and
JUnit 5 runners' output as verdicts."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from polydbg.errors import UsageError
from polydbg.testing import classfiles, junit, maven
from polydbg.testing.plan import Verdict

pytestmark = pytest.mark.anyio


class _Pool:
    """A constant pool being written (Utf8 and Class entries only)."""

    def __init__(self) -> None:
        self.entries: list[bytes] = []
        self.index: dict[tuple[int, str], int] = {}

    def utf8(self, text: str) -> int:
        return self._add(1, text, struct.pack(">BH", 1, len(text.encode())) + text.encode())

    def cls(self, name: str) -> int:
        return self._add(7, name, struct.pack(">BH", 7, self.utf8(name)))

    def _add(self, tag: int, text: str, data: bytes) -> int:
        if (tag, text) not in self.index:
            self.entries.append(data)
            self.index[(tag, text)] = len(self.entries)
        return self.index[(tag, text)]


def class_file(name: str, superclass: str, methods: dict[str, list[str]], descriptor: str = "()V",
               flags: int = 0x21, source: str = "X.java") -> bytes:
    """A class file with ``methods`` (name → the annotations' binary names; each annotation with an element
    value of each kind, which a reader must skip), written as javac would."""
    pool = _Pool()
    this, parent = pool.cls(name.replace(".", "/")), pool.cls(superclass.replace(".", "/"))
    code = b""
    for method, kinds in methods.items():
        attributes = b""
        if kinds:
            body = struct.pack(">H", len(kinds))
            for annotation in kinds:
                values = (b"I" + struct.pack(">H", pool.utf8("1")) + b"e" + struct.pack(">HH", 1, 1)
                          + b"[" + struct.pack(">H", 1) + b"s" + struct.pack(">H", 1)
                          + b"@" + struct.pack(">HH", pool.utf8("Lx/Inner;"), 0))
                body += struct.pack(">HH", pool.utf8(f"L{annotation.replace('.', '/')};"), 4)
                body += b"".join(struct.pack(">H", pool.utf8(f"v{i}")) + part for i, part in
                                 enumerate((values[:3], values[3:8], values[8:14], values[14:])))
            attributes = struct.pack(">HI", pool.utf8("RuntimeVisibleAnnotations"), len(body)) + body
        code += struct.pack(">HHHH", 1, pool.utf8(method), pool.utf8(descriptor), 1 if kinds else 0) + attributes
    source_attribute = struct.pack(">HIH", pool.utf8("SourceFile"), 2, pool.utf8(source))
    header = b"\xca\xfe\xba\xbe" + struct.pack(">HHH", 0, 61, len(pool.entries) + 1) + b"".join(pool.entries)
    return (header + struct.pack(">HHHH", flags, this, parent, 0) + struct.pack(">H", 0)
            + struct.pack(">H", len(methods)) + code + struct.pack(">H", 1) + source_attribute)


def test_a_class_file_says_its_methods_annotations_and_source() -> None:
    data = class_file("calc.CalcTest", "java.lang.Object", {"adds": ["org.junit.jupiter.api.Test"], "helper": []},
                      source="CalcTest.kt")
    read = classfiles.parse(data)
    assert read is not None and read.name == "calc.CalcTest" and read.superclass == "java.lang.Object"
    assert read.source == "CalcTest.kt"
    assert [(m.name, m.annotations) for m in read.methods] == [("adds", frozenset({"org.junit.jupiter.api.Test"})),
                                                               ("helper", frozenset())]
    assert classfiles.parse(data[:40]) is None and classfiles.parse(b"not a class") is None


def test_descriptors_read_as_java_writes_parameter_types() -> None:
    assert classfiles.parameter_types("()V") == []
    assert classfiles.parameter_types("(I[Ljava/lang/String;[[JZ)V") == ["int", "java.lang.String[]", "long[][]",
                                                                         "boolean"]


def _project(tmp_path: Path) -> junit._Tests:
    files = {
        "calc/CalcTest": class_file("calc.CalcTest", "java.lang.Object", {"adds": [junit.JUNIT4_TEST], "x": []}),
        "calc/CalcTest$Empty": class_file("calc.CalcTest$Empty", "java.lang.Object",
                                          {"mean": ["org.junit.jupiter.params.ParameterizedTest"]}, "(I)V"),
        "calc/Base": class_file("calc.Base", "java.lang.Object", {"inherited": [junit.JUNIT4_TEST]}, flags=0x421),
        "calc/Child": class_file("calc.Child", "calc.Base", {}),
        "calc/KtTest": class_file("calc.KtTest", "java.lang.Object", {"one line is its price": [junit.JUNIT4_TEST]}),
        "old/OldTest": class_file("old.OldTest", "junit.framework.TestCase", {"testOld": [], "helper": []}),
        "other/Adds": class_file("other.Adds", "java.lang.Object", {"adds": [junit.JUNIT4_TEST]}),
    }
    for name, data in files.items():
        (tmp_path / f"{name}.class").parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / f"{name}.class").write_bytes(data)
    return junit._scan([str(tmp_path)])


def test_the_tests_there_are_come_from_annotations_inheritance_and_junit3(tmp_path: Path) -> None:
    tests = _project(tmp_path)
    assert tests.names() == ["Adds", "CalcTest", "CalcTest.Empty", "Child", "KtTest", "OldTest", "calc.CalcTest#adds",
                             "calc.CalcTest$Empty#mean", "calc.Child#inherited", "calc.KtTest#one line is its price",
                             "old.OldTest#testOld", "other.Adds#adds"]  # not the abstract Base


def test_a_name_resolves_to_the_class_and_method_it_means(tmp_path: Path) -> None:
    tests = _project(tmp_path)
    assert junit._resolve("CalcTest#adds", tests) == ("calc.CalcTest", "adds")
    assert junit._resolve("calc.CalcTest", tests) == ("calc.CalcTest", None)
    assert junit._resolve("CalcTest.Empty#mean", tests) == ("calc.CalcTest$Empty", "mean")
    assert junit._resolve("CalcTest.adds", tests) == ("calc.CalcTest", "adds")
    assert junit._resolve("testOld", tests) == ("old.OldTest", "testOld")
    assert junit._resolve("one line is its price", tests) == ("calc.KtTest", "one line is its price")  # Kotlin's
    assert junit._resolve("Nope#adds", tests) == ("Nope", "adds")  # as given: the runner says it is not found
    with pytest.raises(UsageError, match=r"2 test classes have a test 'adds': calc.CalcTest#adds, other.Adds#adds"):
        junit._resolve("adds", tests)
    assert junit._console_args("calc.CalcTest$Empty", "mean", tests)[-2:] == (
        "--select-method", "calc.CalcTest$Empty#mean(int)")  # a parameterized test is selected with its types
    assert junit._console_args("calc.CalcTest", None, tests)[-2:] == ("--select-class", "calc.CalcTest")


JUNIT5_FAILED = """
Failures (1):
  JUnit Jupiter:CalcTest:meanRounds()
    MethodSource [className = 'calc.CalcTest', methodName = 'meanRounds', methodParameterTypes = '']
    => org.opentest4j.AssertionFailedError: the mean rounds up ==> expected: <2> but was: <1>
       calc.CalcTest.meanRounds(CalcTest.java:21)

Test run finished after 331 ms
[         4 containers found      ]
[         0 containers skipped    ]
[         1 tests found           ]
[         0 tests skipped         ]
[         0 tests successful      ]
[         1 tests failed          ]
"""


def test_junit5_runs_read_as_verdicts() -> None:
    passed = junit.junit5_verdict(0, JUNIT5_FAILED.replace("0 tests successful", "1 tests successful")
                                  .replace("1 tests failed", "0 tests failed"))
    assert passed == Verdict("passed", "1 successful, 0 failed in 331 ms")
    failed = junit.junit5_verdict(1, JUNIT5_FAILED)
    assert failed == Verdict("failed", "AssertionFailedError: the mean rounds up ==> expected: <2> but was: "
                                             "<1>; 0 successful, 1 failed in 331 ms")
    missing = junit.junit5_verdict(255, "Caused by: org.junit.platform.commons.JUnitException: MethodSelector "
                                        "[className = 'calc.CalcTest', methodName = 'x'] resolution failed\n\tat …")
    assert missing.outcome == "not found" and missing.summary is not None and "methodName = 'x'" in missing.summary
    assert junit.junit5_verdict(1, "Error: Could not find or load main class X").outcome == "error"


def test_junit4_runs_read_as_verdicts() -> None:
    assert junit.junit4_verdict(0, ".\nTime: 0.01\n\nOK (1 test)\n\n") == Verdict("passed", "OK (1 test)")
    failed = junit.junit4_verdict(1, "E\nThere was 1 failure:\n1) label(shop.CartTest)\norg.junit.ComparisonFailure: "
                                     "expected:<a> but was:<b>\n\tat …\n\nFAILURES!!!\nTests run: 1,  Failures: 1\n")
    assert failed == Verdict("failed", "label(shop.CartTest): org.junit.ComparisonFailure: expected:<a> but "
                                             "was:<b>; Tests run: 1,  Failures: 1")
    assert junit.junit4_verdict(3, "polydbg: no test x in shop.CartTest\n") == Verdict(
        "not found", "polydbg: no test x in shop.CartTest")
    assert junit.junit4_verdict(1, "Error: Could not find or load main class polydbg.junit.OneTest").outcome == "error"
    missing = junit.junit4_verdict(1, "1) x(A)\njava.lang.NoClassDefFoundError: org/x/Y\nTests run: 1,  Failures: 1")
    assert missing.summary is not None and "(a class is missing from the classpath: pass runtime_args=['-cp'" \
        in missing.summary


async def test_a_maven_projects_dependencies_come_from_surefires_report(tmp_path: Path) -> None:
    assert await maven.dependencies(str(tmp_path)) == []  # no pom.xml: no Maven
    (tmp_path / "pom.xml").write_text("<project/>")
    jars = [tmp_path / "m2" / "a.jar", tmp_path / "m2" / "b&c.jar"]
    for jar in jars:
        jar.parent.mkdir(exist_ok=True)
        jar.write_bytes(b"")
    classpath = ":".join([str(tmp_path / "target" / "classes"), *map(str, jars), str(tmp_path / "gone.jar")])
    reports = tmp_path / "target" / "surefire-reports"
    reports.mkdir(parents=True)
    (reports / "TEST-calc.CalcTest.xml").write_text(
        '<testsuite><properties><property name="java.version" value="17"/><property name="surefire.test.class.path" '
        f'value="{classpath.replace("&", "&amp;")}"/></properties></testsuite>')
    assert await maven.dependencies(str(tmp_path)) == [str(jar) for jar in jars]  # the jars that are there


def test_only_the_builds_test_output_is_read_for_tests_where_there_is_one() -> None:
    maven_layout = ["/p/target/test-classes", "/p/target/classes"]
    gradle = ["/p/build/classes/java/test/", "/p/build/classes/java/main"]
    assert junit._test_directories(maven_layout) == ["/p/target/test-classes"]
    assert junit._test_directories(gradle) == ["/p/build/classes/java/test/"]
    assert junit._test_directories(["/p/classes", "/p/lib"]) == ["/p/classes", "/p/lib"]
