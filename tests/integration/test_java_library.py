"""A library's sources beside the program's (a Debian source package's ``src/main/java``, compiled
into ``out/``): frames in its files found without a breakpoint there, its exceptions' messages built
by ``getMessage()``, its maps' views and IdentityHashMaps read by elements, and the evaluator's
varargs calls, array covariance and imported class names (found debugging jopt-simple)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

PROJECT = PROGRAMS / "java" / "libproj"
SOURCES = PROJECT / "src" / "main" / "java"


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


def compiled(into: Path, project: Path = PROJECT) -> str:
    sources = [str(p) for p in (project / "src" / "main" / "java").rglob("*.java")]
    subprocess.run(["javac", "-g", "-d", str(into), *sources], check=True, capture_output=True)
    return str(into)


def at(path: str, marker: str) -> dict[str, Any]:
    return {"file": str(SOURCES / path), "line": line_of(f"java/libproj/src/main/java/{path}", marker)}


async def evaluate(tools: Tools, expression: str) -> str:
    return str((await tools("debug_evaluate", expression=expression))["value"])


async def test_library_frames_collections_and_calls(tools: Tools, tmp_path: Path) -> None:
    classes = compiled(tmp_path / "classes")  # far from the sources: the breakpoint's file gives their root
    report = await tools("debug_launch", program="Main", language="java", cwd=str(tmp_path),
                         runtime_args=["-cp", classes], breakpoints=[at("parse/Tokens.java", "// counted")])
    assert report["reason"] == "breakpoint", report
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert [(f["function"], f["file"]) for f in frames] == [
        ("Tokens.count", str(SOURCES / "parse" / "Tokens.java")),
        ("Parser.parse", str(SOURCES / "parse" / "Parser.java")),  # no breakpoint in that file
        ("Main.main", str(SOURCES / "Main.java"))], frames
    assert await evaluate(tools, "seen") == 'IdentityHashMap size=1 {"a"=1}'
    assert await evaluate(tools, "counts.keySet()") == 'HashMap.KeySet size=1 ["a"]'
    assert await evaluate(tools, "counts.values()") == "HashMap.Values size=1 [1]"
    await tools("debug_clear", all=True)
    await tools("debug_break", file=str(SOURCES / "Main.java"), line=line_of(
        "java/libproj/src/main/java/Main.java", "// after parse"))
    report = await tools("debug_continue")
    assert report["location"]["function"] == "Main.main", report
    cases = {
        'parser.parse("x", "y z")': "3",  # varargs: spread into a new String[]
        "parser.parse()": "0",
        "parser.parse(words)": "4",  # an array passed as the varargs array itself
        'String.join(",", words)': '"a b,c a"',  # a String[] is a CharSequence[]
        "Arrays.toString(words)": '"[a b, c a]"',  # Arrays from `import java.util.*`, String[] as Object[]
        'String.format("%s=%d", "n", n)': '"n=4"',  # varargs of Object: the int boxed
        'List.of("p", "q").size()': "2",
    }
    for expression, expected in cases.items():
        assert await evaluate(tools, expression) == expected, expression
    said = await tools.error("debug_evaluate", expression='parser.parse("--bad")')
    assert "parse.BadOption: --bad is not a known option" in said, said
    done = await tools("debug_continue")
    assert done["state"] == "exited", done
    await tools("debug_terminate")


async def test_sources_beside_the_class_directory_and_exception_messages(tools: Tools, tmp_path: Path) -> None:
    project = tmp_path / "project"
    shutil.copytree(PROJECT, project)
    classes = compiled(project / "out", project)  # out/ next to src/main/java, as a source package builds
    report = await tools("debug_launch", program="Main", language="java", cwd=str(tmp_path),
                         runtime_args=["-cp", classes], break_on_exception="raised")
    assert report["reason"] == "exception", report
    assert report["exception"] == {"type": "parse.BadOption", "message": "--bad is not a known option"}, report
    assert report["location"]["file"] == str(project / "src" / "main" / "java" / "parse" / "Parser.java"), report
    assert report["location"]["line"] == line_of("java/libproj/src/main/java/parse/Parser.java", "// throws")
    await tools("debug_terminate")
