"""Where a class's source file is found: breakpoint files first, then the source roots."""

from __future__ import annotations

import os
from pathlib import Path

from polydbg.backends.base import LaunchSpec
from polydbg.backends.java.sources import Sources, find_under, launch_roots, root_of, sources_near
from tests.unit.backends.java.fakevm import FakeVm


def test_a_file_s_root_is_its_directory_less_its_package() -> None:
    assert root_of("/p/src/demo/util/A.java", "demo.util") == "/p/src"
    assert root_of("/p/src/A.java", "") == "/p/src"
    assert root_of("/p/elsewhere/A.java", "demo") is None  # the directories do not follow the package


def test_a_class_is_looked_for_by_package_path_then_beside_the_root(tmp_path: Path) -> None:
    (tmp_path / "a" / "demo").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    nested = tmp_path / "a" / "demo" / "Main.java"
    flat = tmp_path / "b" / "Other.java"
    nested.write_text("")
    flat.write_text("")
    roots = [str(tmp_path / "a"), str(tmp_path / "b")]
    assert find_under(roots, "demo", "Main.java") == str(nested)
    assert find_under(roots, "demo", "Other.java") == str(flat)
    assert find_under(roots, "demo", "Missing.java") is None


def test_launch_roots_take_the_program_cwd_and_class_path(tmp_path: Path) -> None:
    classes = tmp_path / "proj" / "out"
    sources = tmp_path / "proj" / "src"
    classes.mkdir(parents=True)
    sources.mkdir()
    spec = LaunchSpec(program=str(tmp_path / "app" / "Main.java"), cwd=str(tmp_path),
                      runtime_args=("-cp", os.pathsep.join([str(classes), str(tmp_path / "missing")])))
    assert launch_roots(spec) == [str(tmp_path / "app"), str(tmp_path), str(tmp_path / "src" / "main" / "java"),
                                  str(tmp_path / "src" / "main" / "kotlin"), str(tmp_path / "src" / "test" / "java"),
                                  str(tmp_path / "src" / "test" / "kotlin"), str(classes), str(sources)]


def test_sources_near_a_maven_target() -> None:
    assert sources_near("/nonexistent/target/classes") == []


async def test_a_class_is_found_in_a_breakpoint_file_first_then_again_after_a_new_root(tmp_path: Path) -> None:
    vm = FakeVm()
    files: list[str] = []
    sources = Sources(vm, lambda: files)
    main = vm.load(1, "Ldemo/Main;", "Main.java", {})
    assert await sources.path(main) == "demo/Main.java"  # found nowhere yet

    library = tmp_path / "lib" / "demo"
    library.mkdir(parents=True)
    (library / "Main.java").write_text("package demo;\n")
    sources.add_file_root(str(library / "Main.java"), sources.package_of(str(library / "Main.java")))
    assert sources.roots == [str(tmp_path / "lib")]
    assert await sources.path(main) == str(library / "Main.java")  # the miss was forgotten

    copy = tmp_path / "copy" / "Main.java"
    copy.parent.mkdir()
    copy.write_text("package demo;\nclass Main {}\n")
    files.append(str(copy))
    assert await sources.path(main) == str(library / "Main.java")  # a found path is kept
    assert await sources.path(vm.load(2, "Ldemo/Gen;", "Gen.java", {})) == "demo/Gen.java"


def test_a_file_s_package_is_read_once(tmp_path: Path) -> None:
    source = tmp_path / "A.kt"
    source.write_text("package demo.app\n\nfun main() {}\n")
    sources = Sources(FakeVm(), lambda: [])
    assert sources.package_of(str(source)) == "demo.app"
    source.write_text("package changed\n")
    assert sources.package_of(str(source)) == "demo.app"
    assert sources.package_of(str(tmp_path / "missing.java")) == ""


def test_program_roots_come_before_the_breakpoints_roots() -> None:
    sources = Sources(FakeVm(), lambda: [])
    sources.add_file_root("/lib/src/demo/A.java", "demo")
    sources.add_roots(["/app", "/lib/src"])
    assert sources.roots == ["/app", "/lib/src"]
