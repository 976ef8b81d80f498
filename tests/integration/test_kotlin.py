"""Kotlin on the java backend, through the MCP tools: a jar built with ``kotlinc -include-runtime``,
a main class with the classpath (classes and kotlin-stdlib.jar), a .class file, a .kt file compiled
by a kotlinc on PATH; breakpoints before classes load (top-level function, class method, data class,
lambdas inline and not), locals without the compiler's inlining markers, stepping over inlined
``forEach`` code, ``this``, an exception thrown by inlined ``check``, exit codes, and deadlocks of inlined
``synchronized`` and ``withLock`` named by the top-level properties that hold their locks.

kotlinc is the npm package ``kotlin-compiler`` in tests/programs/kotlin (``npm ci`` there; .ci/run
does it); the program is compiled once per run (~7 s)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

KOTLIN = PROGRAMS / "kotlin"
MAIN = KOTLIN / "Main.kt"
COMPILER = KOTLIN / "node_modules" / "kotlin-compiler"


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java")


def compiler() -> Path:
    """The kotlinc distribution of tests/programs/kotlin (installed by npm ci; a must under CI)."""
    if not (COMPILER / "bin" / "kotlinc").is_file() or not (COMPILER / "lib" / "kotlin-stdlib.jar").is_file():
        reason = "tests/programs/kotlin has no node_modules/kotlin-compiler: run npm ci there (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return COMPILER


class Built:
    def __init__(self, root: Path, stdlib: Path) -> None:
        self.jar = root / "app.jar"
        self.classes = root / "classes"
        self.stdlib = stdlib


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """Main.kt compiled once: ``kotlinc Main.kt -include-runtime -d app.jar``, and the program's own
    classes out of that jar into a directory (for the classpath forms)."""
    require("java")
    home = compiler()
    root = tmp_path_factory.mktemp("kotlinc")
    done = Built(root, home / "lib" / "kotlin-stdlib.jar")
    subprocess.run(["bash", str(home / "bin" / "kotlinc"), str(MAIN), "-include-runtime", "-d", str(done.jar)],
                   check=True, timeout=300, stdin=subprocess.DEVNULL, capture_output=True)
    with zipfile.ZipFile(done.jar) as archive:
        archive.extractall(done.classes, [n for n in archive.namelist() if n.startswith("demo/")])
    return done


def at(marker: str) -> dict[str, Any]:
    return {"file": str(MAIN), "line": line_of("kotlin/Main.kt", marker)}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


def names(report: dict[str, Any]) -> list[str]:
    return [v["name"] for v in report.get("locals") or []]


async def test_a_jar_breakpoints_in_lambdas_and_classes_stepping_and_exit_code(tools: Tools, built: Built) -> None:
    report = await tools("debug_launch", program=str(built.jar), args=["3"], breakpoints=[
        at("forEach: square"), at("Counter.add: count"), at("twice: body"), at("norm1: return")])
    assert report["reason"] == "breakpoint", report
    assert report["location"] == {"file": str(MAIN), "line": line_of("kotlin/Main.kt", "forEach: square"),
                                  "function": "MainKt.main"}, report
    # inside the forEach lambda (inlined into main): its parameter and main's locals, no $i$f$/…$iv markers
    assert names(report) == ["value", "name", "numbers", "counter", "sum", "args"], report
    shown = values(report)
    assert (shown["value"], shown["name"], shown["sum"]) == ("3", '"héllo 🌍"', "0"), shown
    assert shown["counter"] == 'Counter {label="clicks", count=0}', shown
    over = await tools("debug_step", kind="over")
    assert over["location"]["line"] == line_of("kotlin/Main.kt", "sum += squared"), over
    assert values(over)["squared"] == "9", over
    await tools("debug_step", kind="over")  # the lambda's closing brace
    again = await tools("debug_step", kind="over")  # over forEach's own (inlined) loop code: the next element
    assert again["location"]["line"] == line_of("kotlin/Main.kt", "forEach: square"), again
    assert values(again)["value"] == "1" and values(again)["sum"] == "9", again
    into = await tools("debug_step", kind="into")
    assert into["location"]["function"] == "MainKt.square", into  # not into kotlin.* internals
    assert values(into) == {"n": "1"}, into
    out = await tools("debug_step", kind="out")
    assert out["location"]["function"] == "MainKt.main", out
    await tools("debug_clear", id=1)
    method = await tools("debug_continue")  # Counter loaded after the breakpoint was set
    assert method["location"]["function"] == "Counter.add", method
    assert names(method) == ["this", "before", "amount"], method  # `this` once, though the table lists it too
    assert values(method)["amount"] == "26", method
    assert (await tools("debug_evaluate", expression="amount"))["value"] == "26"
    stack = (await tools("debug_stack"))["threads"][0]
    assert [f["function"] for f in stack["frames"]] == ["Counter.add", "MainKt.main"], stack
    assert stack["frames"][1]["line"] == line_of("kotlin/Main.kt", "main: add"), stack
    lambda_ = await tools("debug_continue")
    assert lambda_["location"]["function"].startswith("MainKt.main$lambda$"), lambda_  # a non-inline lambda
    assert values(lambda_) == {"x": "26"}, lambda_
    data = await tools("debug_continue")
    assert data["location"]["function"] == "Point.norm1", data
    assert values(data) == {"this": "Point {x=2, y=-5}", "total": "7"}, data
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 3, done
    assert "sum 26 twice 52 norm 7 héllo 🌍 26 Point(x=2, y=-5) 16" in done["output"]["text"], done
    await tools("debug_terminate")


async def test_a_main_class_with_the_classpath_and_a_class_file(tools: Tools, built: Built) -> None:
    where = at("square: return")
    classpath = os.pathsep.join([str(built.classes), str(built.stdlib)])
    report = await tools("debug_launch", program="demo.shapes.MainKt", runtime_args=["-cp", classpath],
                         breakpoints=[where, at("one line: sumOf")])
    assert report["location"] == {**where, "function": "MainKt.square"}, report
    assert values(report) == {"n": "3", "result": "9"}, report
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert [(f["function"], f["line"]) for f in frames] == [
        ("MainKt.square", where["line"]), ("MainKt.main", line_of("kotlin/Main.kt", "forEach: square"))], frames
    await tools("debug_clear", id=1)
    one_line = await tools("debug_continue")
    assert one_line["location"]["line"] == line_of("kotlin/Main.kt", "one line: sumOf"), one_line
    over = await tools("debug_step", kind="over")  # once over the line, not once per element
    assert over["location"]["line"] == line_of("kotlin/Main.kt", "val twice"), over
    assert values(over)["doubled"] == "16" and "it" not in values(over), over
    await tools("debug_terminate")
    # the .class file of a packaged class runs from where its package starts, kotlin-stdlib from runtime_args
    report = await tools("debug_launch", program=str(built.classes / "demo" / "shapes" / "MainKt.class"),
                         runtime_args=["-cp", str(built.stdlib)], args=["4"], breakpoints=[at("main: add")])
    assert report["location"]["line"] == line_of("kotlin/Main.kt", "main: add"), report
    shown = values(report)  # data classes in a list read with their fields, as in an object's preview
    assert shown["points"] == "Arrays.ArrayList size=2 [Point {x=2, y=-5}, Point {x=-1, y=0}]", shown
    done = await tools("debug_continue")
    assert done["exit_code"] == 4, done
    await tools("debug_terminate")


async def test_an_exception_thrown_by_inlined_check_shows_the_line_that_called_it(tools: Tools,
                                                                                  built: Built) -> None:
    report = await tools("debug_launch", program=str(built.jar), args=["strict"], cwd=str(KOTLIN))
    assert report["reason"] == "exception", report
    assert report["exception"] == {"type": "java.lang.IllegalStateException", "message": "total too high: 26"}
    assert report["location"] == {**at("validate: check"), "function": "MainKt.validate"}, report
    assert values(report) == {"total": "26"}, report
    done = await tools("debug_continue")
    assert done["exit_code"] == 1, done
    await tools("debug_terminate")


async def test_a_kt_file_is_compiled_by_kotlinc_on_path_or_refused_with_how_to_build_it(
        tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    home = compiler()
    java = Path(shutil.which("java") or "java").resolve().parent
    monkeypatch.delenv("KOTLIN_HOME", raising=False)
    monkeypatch.setenv("PATH", str(java))
    said = await tools.error("debug_launch", program=str(MAIN))
    assert "kotlinc is not on PATH" in said and "kotlinc Main.kt -include-runtime -d main.jar" in said, said
    assert "program='demo.shapes.MainKt'" in said, said
    monkeypatch.setenv("PATH", os.pathsep.join([str(home / "bin"), str(java), "/usr/bin", "/bin"]))
    report = await tools("debug_launch", program=str(MAIN), args=["5"], breakpoints=[at("main: add")])
    assert report["reason"] == "breakpoint" and values(report)["sum"] == "26", report
    done = await tools("debug_continue")
    assert done["exit_code"] == 5, done
    await tools("debug_terminate")


async def test_kotlin_s_synchronized_and_with_lock_deadlocks_are_named(tools: Tools, built: Built) -> None:
    report = await tools("debug_launch", program=str(built.jar), args=["deadlock"],
                         breakpoints=[at("deadlock: stuck")])
    assert report["reason"] == "breakpoint", report
    stack = await tools("debug_stack", all_threads=True, levels=1)
    said = " | ".join(stack.get("deadlocks") or [])
    assert re.search(r"\(kt-left\) at \S*Main\.kt:\d+ holds java\.lang\.Object@\d+ \(MainKt\.left, locked in "
                     r"MainKt\.grab\) and waits for java\.lang\.Object@\d+ \(MainKt\.right\), held by thread \d+ "
                     r"\(kt-right", said), said
    assert re.search(r"\(kt-first\) at \S*Main\.kt:" + str(line_of("kotlin/Main.kt", "take: theirs"))
                     + r" holds java\.util\.concurrent\.locks\.ReentrantLock@\d+ \(MainKt\.first\) and waits for "
                     r"java\.util\.concurrent\.locks\.ReentrantLock@\d+ \(MainKt\.second\)", said), said
    await tools("debug_terminate")
