"""The java backend through the MCP tools, on a real JVM over JDWP (first part: launch forms,
breakpoints before classes load — in inner and lambda code too —, stepping, values, exceptions,
pause, exit codes)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

JAVA = PROGRAMS / "java"


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


def at(name: str, marker: str) -> dict[str, Any]:
    return {"file": str(JAVA / name), "line": line_of(f"java/{name}", marker)}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def test_breakpoints_values_stepping_and_exit_code(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Basics.java"), args=["3"], breakpoints=[
        at("Basics.java", "return result;"), at("Basics.java", "return total;")])
    assert report["reason"] == "breakpoint", report
    assert report["location"] == {"file": str(JAVA / "Basics.java"), "line": line_of("java/Basics.java",
                                  "return result;"), "function": "Basics.square"}
    assert values(report) == {"n": "3", "result": "9"}
    assert (await tools("debug_evaluate", expression="calls"))["value"] == "1"
    stack = (await tools("debug_stack"))["threads"][0]
    assert stack["name"] == "main (stopped here)", stack
    assert [f["function"] for f in stack["frames"]] == ["Basics.square", "Basics.main"]
    await tools("debug_clear", id=1)
    out = await tools("debug_step", kind="out")
    assert out["location"]["function"] == "Basics.main", out
    shown = values(out)
    assert shown["name"] == '"héllo 🌍"' and shown["numbers"] == "int[3] {3, 1, 4}", shown
    assert shown["p"] == "Basics.Point {x=2, y=-5}" and shown["big"] == "1099511627776", shown
    assert (shown["ratio"], shown["flag"], shown["args"]) == ("0.5", "true", 'String[1] {"3"}'), shown
    for expression, expected in (("numbers.length", "3"), ("p.y", "-5"), ("numbers[2]", "4"), ("args[0]", '"3"')):
        assert (await tools("debug_evaluate", expression=expression))["value"] == expected, expression
    said = await tools.error("debug_evaluate", expression="numbers[7]")
    assert "out of bounds" in said, said
    inner = await tools("debug_continue")
    assert inner["location"]["function"] == "Basics.Point.norm1", inner  # an inner class, bound when it loaded
    assert values(inner) == {"this": "Basics.Point {x=2, y=-5}", "total": "7"}, inner
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 3, done
    assert "sum 26 norm 7 héllo 🌍 [alpha, beta]" in done["output"]["text"]
    await tools("debug_terminate")


async def test_debug_sessions_names_the_jvm_s_pid(tools: Tools) -> None:
    await tools("debug_launch", program=str(JAVA / "Basics.java"), args=["3"],
                breakpoints=[at("Basics.java", "return result;")])
    [session] = (await tools("debug_sessions"))["sessions"]
    pid = session.get("pid")
    assert pid is not None, session
    command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    assert Path(command[0].decode()).name == "java" and b"Basics" in b" ".join(command), command
    await tools("debug_terminate")


async def test_exceptions_stop_where_the_program_throws_and_lambdas_take_breakpoints(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(JAVA / "Thrower.java"), break_on_exception="raised",
                         breakpoints=[at("Thrower.java", 'System.out.println("lambda')])
    assert report["reason"] == "exception", report  # thrown inside Integer.parseInt: shown where parse called it
    assert report["location"]["function"] == "Thrower.parse", report
    assert report["exception"] == {"type": "java.lang.NumberFormatException", "message": 'For input string: "x1"'}
    in_lambda = await tools("debug_continue")
    assert in_lambda["reason"] == "breakpoint" and values(in_lambda) == {"inLambda": "41"}, in_lambda
    uncaught = await tools("debug_continue")
    assert uncaught["description"].startswith("java.lang.IllegalStateException: level too high: 3"), uncaught
    assert uncaught["location"]["line"] == line_of("java/Thrower.java", "throw new IllegalStateException")
    assert values(uncaught) == {"level": "3"}
    done = await tools("debug_continue")
    assert done["exit_code"] == 1, done
    await tools("debug_terminate")


async def test_pause_shows_the_main_thread_in_its_loop(tools: Tools) -> None:
    running = await tools("debug_launch", program=str(JAVA / "Busy.java"), timeout_s=1)
    assert running["state"] == "running"
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause" and paused["location"]["function"] == "Busy.main", paused
    threads = {t["name"].partition(" (")[0]: t for t in (await tools("debug_stack", all_threads=True))["threads"]}
    assert threads["spinner"]["frames"][0]["function"] == "Busy.lambda$main$0", threads["spinner"]
    await tools("debug_terminate")


@pytest.fixture(scope="module")
def jar(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Basics compiled twice: with -g into a jar (and into bare.jar, whose manifest names no main class),
    and without -g (no local variable table)."""
    require("jar")
    root = tmp_path_factory.mktemp("javac")
    (root / "g").mkdir()
    (root / "plain").mkdir()
    subprocess.run(["javac", "-g", "-d", str(root / "g"), str(JAVA / "Basics.java")], check=True, timeout=120)
    subprocess.run(["javac", "-d", str(root / "plain"), str(JAVA / "Basics.java")], check=True, timeout=120)
    archive = root / "basics.jar"
    subprocess.run([shutil.which("jar") or "jar", "--create", "--file", str(archive), "--main-class", "Basics",
                    "-C", str(root / "g"), "."], check=True, timeout=120)
    subprocess.run([shutil.which("jar") or "jar", "--create", "--file", str(root / "bare.jar"), "-C", str(root / "g"),
                    "."], check=True, timeout=120)
    return archive, root / "plain" / "Basics.class"


async def test_a_jar_and_a_class_without_debug_information(tools: Tools, jar: tuple[Path, Path]) -> None:
    archive, plain = jar
    where = at("Basics.java", "return result;")
    report = await tools("debug_launch", program=str(archive), breakpoints=[where])
    assert report["location"]["file"] == str(JAVA / "Basics.java") and values(report)["result"] == "9", report
    await tools("debug_terminate")
    report = await tools("debug_launch", program=str(plain), cwd=str(JAVA), breakpoints=[where])
    assert report["location"]["line"] == where["line"], report
    assert "recompile with javac -g" in values(report)["(locals)"], report
    await tools("debug_terminate")


async def test_a_main_class_that_is_not_on_the_classpath_is_an_error_that_leaves_no_session(
        tools: Tools, jar: tuple[Path, Path]) -> None:
    archive, _ = jar
    classes = str(archive.parent / "g")
    said = await tools.error("debug_launch", program="demo.Basic", runtime_args=["-cp", classes])
    assert "no main class demo.Basic" in said and classes in said, said
    assert f"Basics (-cp {classes})" in said, said  # the class with a name like it, and how to run it
    assert "no sessions" in await tools.text("debug_sessions"), said
    bare = archive.parent / "bare.jar"  # no Main-Class: java -jar cannot run it
    said = await tools.error("debug_launch", program=str(bare))
    assert "no Main-Class" in said and "runtime_args=['-cp'" in said, said
    report = await tools("debug_launch", program="Basics", runtime_args=["-cp", classes])
    assert report["state"] == "exited" and "sum 26" in report["output"]["text"], report  # one that is there runs
    await tools("debug_terminate")


async def test_a_step_out_or_over_a_call_reports_what_it_returned(tools: Tools) -> None:
    """A MethodExitWithReturnValue request on the stepping thread for the step: a step out says what the method it
    left returned (a recursive call's own, not a deeper one's), a step over what the line's call returned."""
    first = await tools("debug_launch", program=str(JAVA / "Returns.java"),
                        breakpoints=[at("Returns.java", "add returns")])
    assert first["location"]["function"] == "Returns.add", first
    out = await tools("debug_step", kind="out")
    assert out["location"]["line"] == line_of("java/Returns.java", "first call"), out
    assert out["returned"] == ["add() returned 6"] and not [n for n in values(out) if "(return)" in n], out
    await tools("debug_clear", all=True)
    rest = await tools("debug_step", kind="over")  # the rest of the line: the assignment, no call
    assert rest["location"]["line"] == line_of("java/Returns.java", "second call") and "returned" not in rest, rest
    second = await tools("debug_step", kind="over")
    assert second["returned"] == ["add() returned 18"], second
    greeted = await tools("debug_step", kind="over")
    assert greeted["returned"] == ['greet() returned "hi ada"'], greeted  # a string by its text
    await tools("debug_break", **at("Returns.java", "factorial base"))
    await tools("debug_continue")
    up = await tools("debug_step", kind="out")
    assert (up["location"]["line"], up["returned"]) == (line_of("java/Returns.java", "factorial recurses"),
                                                        ["factorial() returned 1"]), up
    await tools("debug_clear", all=True)
    top = await tools("debug_step", kind="out")
    assert top["returned"] == ["factorial() returned 2"], top
    await tools("debug_break", **at("Returns.java", "checked throws"))
    await tools("debug_continue")
    thrown = await tools("debug_step", kind="out")  # no exit event: the throw caught where the step landed left it
    assert thrown["location"]["line"] == line_of("java/Returns.java", "checked error caught"), thrown
    assert thrown["returned"] == ['checked() raised IllegalArgumentException: "negative: -1"'], thrown
    await tools("debug_terminate")
