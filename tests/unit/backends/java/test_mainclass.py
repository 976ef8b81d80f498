"""A main class the JVM could not load: the classpath it searched, the classes there named like it,
how to run one, and the wait for the class that decides between the launch's error and the program's exit."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from polydbg.backends.java import mainclass
from polydbg.jdwp.codec import Event, EventKind, Suspend
from tests.unit.backends.java.fakevm import FakeVm


def test_the_classpath_is_the_jvm_s_jar_cp_classpath_variable_or_cwd() -> None:
    assert mainclass.classpath(["java", "-agentlib:jdwp=x", "-cp", "out:lib/*", "demo.Main"], {}, "/p") == [
        "/p/out", "/p/lib/*"]
    assert mainclass.classpath(["java", "--class-path", "/abs", "Main"], {"CLASSPATH": "x"}, "/p") == ["/abs"]
    assert mainclass.classpath(["java", "-jar", "app.jar", "-cp", "ignored"], {}, "/p") == ["/p/app.jar"]
    assert mainclass.classpath(["java", "Main"], {"CLASSPATH": "a:"}, "/p") == ["/p/a", "/p"]
    assert mainclass.classpath(["java", "Main"], {}, "/p") == ["/p"]


def test_a_module_s_main_class_is_not_guessed() -> None:
    assert mainclass.main_class("demo.Main", ("-cp", "out"), None) == "demo.Main"
    assert mainclass.main_class("demo.Main", ("-m", "app/demo.Main"), None) is None
    assert mainclass.main_class("demo.Main", ("--module=app/demo.Main",), None) is None


def test_classes_are_found_in_directories_jars_and_wildcards(tmp_path: Path) -> None:
    (tmp_path / "out" / "demo").mkdir(parents=True)
    (tmp_path / "out" / "demo" / "Main.class").write_bytes(b"")
    (tmp_path / "out" / "demo" / "Main$Inner.class").write_bytes(b"")
    (tmp_path / "lib").mkdir()
    with zipfile.ZipFile(tmp_path / "lib" / "util.jar", "w") as archive:
        archive.writestr("com/x/Util.class", b"")
        archive.writestr("META-INF/versions/11/com/x/Util.class", b"")
    found = mainclass.class_files([str(tmp_path / "out"), str(tmp_path / "lib" / "*"), str(tmp_path / "missing")])
    assert found == {"demo.Main": str(tmp_path / "out" / "demo" / "Main.class"),
                     "demo.Main$Inner": str(tmp_path / "out" / "demo" / "Main$Inner.class"),
                     "com.x.Util": str(tmp_path / "lib" / "util.jar")}
    assert len(mainclass.class_files([str(tmp_path / "out")], limit=1)) == 1


def test_similar_names_put_the_same_class_in_another_package_first() -> None:
    names = ["demo.Basics", "demo.Basics$Point", "other.Unrelated", "module-info"]
    assert mainclass.similar("Basics", names)[0] == "demo.Basics"
    assert mainclass.similar("demo.Basic", names)[0] == "demo.Basics"
    assert mainclass.similar("demo.basics", names)[0] == "demo.Basics"
    assert mainclass.similar("Zzz", names) == []


def test_a_class_file_in_a_directory_that_is_not_its_package_root_says_where_its_root_is(tmp_path: Path) -> None:
    if shutil.which("javac") is None:
        pytest.skip("javac not installed")
    (tmp_path / "Hello.java").write_text("public class Hello { public static void main(String[] a) {} }\n")
    subprocess.run(["javac", "-d", str(tmp_path / "cls"), str(tmp_path / "Hello.java")], check=True, timeout=120)
    found = mainclass.class_files([str(tmp_path)])
    assert "cls.Hello" in found  # its place spells package cls; its class file says it has none
    assert mainclass.suggestion("cls.Hello", found["cls.Hello"]) == f"Hello (-cp {tmp_path / 'cls'})"
    assert mainclass.suggestion("com.x.Util", "/l/util.jar") == "com.x.Util (in /l/util.jar)"


def test_the_error_names_the_class_the_classpath_and_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "demo").mkdir()
    (tmp_path / "demo" / "Main.class").write_bytes(b"")
    said = str(mainclass.not_loaded("Main", 1, "Error: Could not find or load main class Main\n", [str(tmp_path)]))
    assert "no main class Main" in said and str(tmp_path) in said and "demo.Main" in said, said
    assert "program=" in said and "-cp" in said, said
    unlike = str(mainclass.not_loaded("Zzz", 1, "Error: Could not find or load main class Zzz\n", [str(tmp_path)]))
    assert f"it holds only demo.Main (-cp {tmp_path})" in unlike, unlike  # a few classes, none like it: named
    compiled = str(mainclass.not_loaded("demo.Foo", 1, "Error: Could not find or load main class demo.Foo\n",
                                        [str(tmp_path)], "/p/Foo.java"))
    assert "'/p/Foo.java' has no class demo.Foo" in compiled and "it declares: demo.Main" in compiled, compiled
    other = str(mainclass.not_loaded("demo.Main", 1, "Error: LinkageError occurred while loading main class", []))
    assert "exited with status 1 before it loaded the main class demo.Main" in other and "LinkageError" in other


async def test_the_wait_tells_an_exit_before_the_class_from_one_after() -> None:
    vm = FakeVm()
    watch = mainclass.MainClassWatch(vm)
    await watch.request("demo.Main")
    waiting = asyncio.ensure_future(watch.wait(30))
    await asyncio.sleep(0)
    assert watch.exited(1) is True  # the launch answers it: no exit report
    assert await waiting == 1

    loaded = mainclass.MainClassWatch(vm)
    await loaded.request("demo.Main")
    request = vm.set[-1][1]
    waiting = asyncio.ensure_future(loaded.wait(30))
    loaded.seen([Event(EventKind.CLASS_PREPARE, request + 1, Suspend.NONE)])  # another request's
    loaded.seen([Event(EventKind.CLASS_PREPARE, request, Suspend.NONE)])
    assert await waiting is None
    assert loaded.exited(0) is False  # the program's own exit, reported as such
    assert await mainclass.MainClassWatch(vm).wait(0.01) is None  # a slow start is left to run
