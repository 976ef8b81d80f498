"""Kotlin's pure parts on the java backend: the SMAP of inlined code, the compiler's locals left out,
a Kotlin file's package, and the .class and classpath launch forms. Nothing runs."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from polydbg.backends.java.kotlin import facade_class, is_noise, parse_smap
from polydbg.backends.java.launcher import class_name_in, class_root, command, main_class_of, split_classpath

# what kotlinc 2.4 writes for a Main.kt whose main calls list.forEach { … } at line 32 (46 lines)
SMAP = ("SMAP\nMain.kt\nKotlin\n*S Kotlin\n*F\n+ 1 Main.kt\ndemo/shapes/MainKt\n+ 2 _Collections.kt\n"
        "kotlin/collections/CollectionsKt___CollectionsKt\n*L\n1#1,46:1\n2199#2,2:47\n*S KotlinDebug\n*F\n"
        "+ 1 Main.kt\ndemo/shapes/MainKt\n*L\n32#1:47,2\n*E\n")


def test_lines_of_code_inlined_from_another_file_read_as_the_line_that_called_it() -> None:
    smap = parse_smap(SMAP)
    assert smap is not None and smap.source == "Main.kt"
    assert [smap.inlined(n) for n in (1, 32, 46, 47, 48, 49)] == [False, False, False, True, True, False]
    assert [smap.shown_line(n) for n in (10, 32, 47, 48, 99)] == [10, 32, 32, 32, 99]
    assert parse_smap("not a map") is None


def test_an_inline_function_of_the_same_file_reads_as_its_own_line() -> None:
    smap = parse_smap("SMAP\nA.kt\nKotlin\n*S Kotlin\n*F\n+ 1 A.kt\nAKt\n*L\n1#1,20:1\n5#1,3:21\n*S KotlinDebug\n"
                      "*F\n+ 1 A.kt\nAKt\n*L\n12#1:21,3\n*E\n")
    assert smap is not None
    assert [smap.shown_line(n) for n in (21, 22, 23)] == [5, 6, 7]
    assert not smap.inlined(22)


@pytest.mark.parametrize(("name", "noise"), [
    ("$i$f$forEach", True), ("$i$a$-forEach-MainKt$main$1", True), ("element$iv", True),
    ("$this$forEach$iv", True), ("it$iv$iv", True), ("$this$apply", False), ("value", False), ("it", False),
    ("price$ivory", False)])
def test_the_compilers_locals_for_inlined_code_are_noise(name: str, noise: bool) -> None:
    assert is_noise(name) is noise


def test_a_kotlin_files_package_has_no_semicolon(tmp_path: Path) -> None:
    source = tmp_path / "Main.kt"
    source.write_text("@file:JvmName(\"Main\")\n\npackage demo.shapes // the demo\n\nfun main() {}\n")
    assert main_class_of(str(source)) == "demo.shapes.Main"
    assert facade_class(str(source), "demo.shapes") == "demo.shapes.MainKt"
    assert facade_class("tools/run-all.kt", "") == "Run_allKt"


def class_file(name: str) -> bytes:
    """A class file's head: magic, version, a constant pool (with a long: two entries), this_class."""
    pool = [b"\x05" + struct.pack(">q", 7), b"\x01" + struct.pack(">H", len(name)) + name.encode(),
            b"\x07" + struct.pack(">H", 3)]
    return (b"\xca\xfe\xba\xbe" + struct.pack(">HHH", 0, 61, 5) + b"".join(pool)
            + struct.pack(">HHH", 0x21, 4, 0))


def test_a_packaged_class_file_runs_from_where_its_package_starts(tmp_path: Path) -> None:
    (tmp_path / "demo" / "shapes").mkdir(parents=True)
    packaged = tmp_path / "demo" / "shapes" / "MainKt.class"
    packaged.write_bytes(class_file("demo/shapes/MainKt"))
    assert class_name_in(str(packaged)) == "demo.shapes.MainKt"
    assert class_root(str(packaged)) == (str(tmp_path), "demo.shapes.MainKt")
    plain = tmp_path / "Tool.class"
    plain.write_bytes(class_file("Tool"))
    assert class_root(str(plain)) == (str(tmp_path), "Tool")
    garbage = tmp_path / "Bad.class"
    garbage.write_bytes(b"nope")
    assert class_root(str(garbage)) == (str(tmp_path), "Bad")
    argv = command("java", 5005, str(packaged), ("a",), ("-Xmx64m", "-cp", "lib/kotlin-stdlib.jar"), None)
    assert argv[2:] == ["-Xmx64m", "-cp", f"{tmp_path}:lib/kotlin-stdlib.jar", "demo.shapes.MainKt", "a"]


def test_the_classpath_is_split_from_the_other_jvm_flags() -> None:
    assert split_classpath(("-ea", "-classpath", "a:b", "-Dx=1")) == (["-ea", "-Dx=1"], ["a", "b"])
