"""Where a simple class name is looked for, in Java's order, and what a source file's imports add."""

from __future__ import annotations

import pytest

from polydbg.backends.java.naming import candidates, imported, imports_in, nested_spelling, simply_named, spellings


def test_nested_classes_come_first_then_the_package_then_java_lang() -> None:
    assert candidates("demo.Shapes$Inner", "Point") == ["demo.Shapes$Inner$Point", "demo.Shapes$Point", "demo.Point",
                                                        "java.lang.Point"]
    assert candidates("Main", "Integer") == ["Main$Integer", "Integer", "java.lang.Integer"]  # the default package


SOURCE = """package demo;

import java.util.*;
import java.util.concurrent.ConcurrentHashMap;
import static java.lang.Math.max;
  import   java.io.File ;
// import java.awt.List;
class Demo { String s = "import fake.Thing;"; }
"""


def test_imports_are_read_from_the_source_text() -> None:
    assert imports_in(SOURCE) == ["java.util.*", "java.util.concurrent.ConcurrentHashMap", "java.io.File"]


def test_a_single_type_import_comes_before_on_demand_ones() -> None:
    imports = imports_in(SOURCE)
    assert imported(imports, "ConcurrentHashMap") == ["java.util.concurrent.ConcurrentHashMap",
                                                      "java.util.ConcurrentHashMap"]
    assert imported(imports, "List") == ["java.util.List"]
    assert imported(imports, "File") == ["java.io.File", "java.util.File"]
    assert imported([], "List") == []


@pytest.mark.parametrize(("binary", "verdict"), [
    ("demo.Shapes$Point", True), ("demo.Point", True), ("Point", True),
    ("demo.MyPoint", False), ("demo.Point$Inner", False), ("demo.Point2", False)])
def test_a_class_by_its_simple_name(binary: str, verdict: bool) -> None:
    assert simply_named(binary, "Point") is verdict


@pytest.mark.parametrize(("written", "binary"), [
    ("Shapes.Point", "Shapes$Point"), ("demo.Shapes.Point", "demo.Shapes$Point"), ("Map.Entry", "Map$Entry"),
    ("java.util.Map.Entry", "java.util.Map$Entry"), ("java.util.List", None), ("Point", None),
    ("demo.Shapes$Point", None)])
def test_a_nested_class_written_with_a_dot(written: str, binary: str | None) -> None:
    assert nested_spelling(written) == binary


def test_a_dotted_type_is_spelled_package_most_first() -> None:
    assert spellings("java.util.Map.Entry") == ["java.util.Map.Entry", "java.util.Map$Entry", "java.util$Map$Entry",
                                                "java$util$Map$Entry"]
    assert spellings("Outer") == ["Outer"]
