"""Callees in native call traces (``debug_trace(functions=…, depth=N)``) under gdb and lldb-dap, through the MCP
tools: a C chain three levels deep, a recursion, a callee called from two places (and from main, where it is
nobody's callee), a longjmp, a thread, a call through a pointer named in the note; C++ methods, a template, a
constructor, a throw through a callee, a virtual call; a callee in a shared library of the program's."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.conftest import Tools, line_of, require
from tests.integration.recorded_calls import CALLS

pytestmark = pytest.mark.usefixtures("anyio_backend")

_ROW = re.compile(r"^( *)([^(]+)\((.*)\)( → .*?|  … still running)(  ← .*?)?(?: \[thread \d+\])?(?:  [\d.]+ m?s)?$")
_NUMBER = re.compile(r"^-?\d+$")
JUMPED = "raised left without a return (a longjmp)"
POINTERS = "are followed only to functions traced otherwise: name their targets"


@pytest.fixture(params=["gdb", "lldb-dap"])
def debugger(request: pytest.FixtureRequest) -> str:
    adapter: str = request.param
    require("gdb" if adapter == "gdb" else "lldb-dap-22|lldb-dap|lldb-vscode")
    return adapter


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    require("gcc", "g++")
    out = tmp_path_factory.mktemp("callees")
    subprocess.run(["gcc", "-g", "-O0", "-pthread", "-o", str(out / "callees"), str(CALLS / "callees.c")], check=True)
    subprocess.run(["gcc", "-g", "-O2", "-pthread", "-o", str(out / "callees_o2"), str(CALLS / "callees.c")],
                   check=True)
    subprocess.run(["g++", "-g", "-O0", "-o", str(out / "callees_cpp"), str(CALLS / "callees.cpp")], check=True)
    library = out / "shapes.c"
    library.write_text("int inner(int x) { return x + 1; }\nint outer(int x) { return inner(x) * 2; }\n")
    (out / "user.c").write_text('#include <stdio.h>\nint outer(int x);\nint run(int x) { return outer(x) + 1; }\n'
                                'int main(void) { printf("%d\\n", run(3)); return 0; }\n')
    subprocess.run(["gcc", "-g", "-O0", "-shared", "-fPIC", "-o", str(out / "libshapes.so"), str(library)],
                   check=True)
    subprocess.run(["gcc", "-g", "-O0", "-o", str(out / "user"), str(out / "user.c"), f"-L{out}", "-lshapes",
                    f"-Wl,-rpath,{out}"], check=True)
    return out


async def traced(tools: Tools, program: Path, adapter: str, function: str, depth: int,
                 output: str | None = None) -> tuple[list[str], str]:
    """The rows of a trace of ``function`` to ``depth`` from the program's entry to its end, each as ``indent name
    (its numeric arguments) outcome`` (the debuggers show pointers their own ways); and the answer's note. The
    program's ``output`` is its own (the shim's answers are not in it)."""
    await tools("debug_launch", program=str(program), adapter=adapter, stop_on_entry=True)
    result = await tools("debug_trace", functions=[function], depth=depth)
    assert result["stopped_because"] == "exited", result
    assert output is None or result["report"]["output"]["text"] == output, result
    text = (await tools("debug_output", stream="trace", max_bytes=30_000))["text"]
    await tools("debug_terminate")
    rows = []
    for line in text.splitlines()[1:]:
        row = _ROW.match(line)
        assert row is not None, line
        indent, name, args, outcome = row.group(1, 2, 3, 4)
        numbers = ", ".join(arg for arg in args.split(", ") if _NUMBER.match(arg.partition("=")[2]))
        rows.append(f"{indent}{name}({numbers}){outcome}")
    return rows, result["calls"].get("note", "")


async def test_a_c_chain_to_depth_three_with_recursion_a_longjmp_a_thread_and_a_pointer(
        tools: Tools, built: Path, debugger: str) -> None:
    """weight and countdown called again from main are nobody's callees; clamp on spawn's thread neither, though
    total is open on the first; clamp through apply's pointer is recorded because it is bound anyway."""
    rows, note = await traced(tools, built / "callees", debugger, "total", 3, "total 138\nafter 30 1\n")
    assert rows == [
        "total(count=2) → 138",
        "  weight() → 10", "    scale(x=1) → 10", "      clamp(x=10) → 10",
        "  weight() → 20", "    scale(x=2) → 20", "      clamp(x=20) → 20",
        "  countdown(n=2) → 2", "    countdown(n=1) → 1", "      countdown(n=0) → 0",
        "  guarded(n=1) → -1", f"    bail(n=1) → {JUMPED}", f"      bail(n=0) → {JUMPED}",
        "  spawn() → 100",
        "  apply(x=7) → 7", "    clamp(x=7) → 7"], rows
    assert note == f"calls through pointers (virtual calls, callbacks) in apply {POINTERS}", note


async def test_depth_one_records_the_direct_callees_only(tools: Tools, built: Path, debugger: str) -> None:
    rows, note = await traced(tools, built / "callees", debugger, "total", 1)
    assert rows == ["total(count=2) → 138", "  weight() → 10", "  weight() → 20", "  countdown(n=2) → 2",
                    "  guarded(n=1) → -1", "  spawn() → 100", "  apply(x=7) → 7"], rows
    assert note == "", note  # apply's own calls were not read: it is at the depth


async def test_callees_the_compiler_inlined_are_named_in_the_note(tools: Tools, built: Path, debugger: str) -> None:
    """At -O2 weight, scale and clamp are code inside total: no call to record, and the answer says so."""
    rows, note = await traced(tools, built / "callees_o2", debugger, "total", 3, "total 138\nafter 30 1\n")
    assert rows[0] == "total(count=2) → 138" and not any("weight(" in row for row in rows), rows
    assert re.search(r"\bweight\b.* inlined by the compiler into the functions followed: no calls to record "
                     r"\(build without optimisation, -O0, to see them\)", note), note


async def test_cxx_methods_a_template_a_throw_through_a_callee_and_a_virtual_call(
        tools: Tools, built: Path, debugger: str) -> None:
    """std::vector's and std::string's methods (libstdc++'s headers) are not callees; Square::area, called through
    the vtable, is not followed, so the twice<int> it calls is not recorded either."""
    rows, note = await traced(tools, built / "callees_cpp", debugger, "stock", 2)
    thrown = "raised std::invalid_argument"
    assert rows == [
        "stock() → 20",
        "  Inventory::add(count=2) → 4", "    Inventory::check(count=2) → returned", "    twice<int>(x=2) → 4",
        "  Inventory::add(count=3) → 6", "    Inventory::check(count=3) → returned", "    twice<int>(x=3) → 6",
        f"  Inventory::add(count=-1) → {thrown}", f"    Inventory::check(count=-1) → {thrown}",
        "  Square::Square(s=3) → returned", "    Shape::Shape() → returned",
        "  Inventory::size() → 2",
        "  Square::~Square() → returned", "    Shape::~Shape() → returned"], rows
    assert note == f"calls through pointers (virtual calls, callbacks) in stock {POINTERS}", note


async def test_a_callee_in_a_shared_library_of_the_program(tools: Tools, built: Path, debugger: str) -> None:
    """outer is called through the PLT (bound by its name in the library, loaded by then), inner inside it too."""
    rows, _ = await traced(tools, built / "user", debugger, "run", 2)
    assert rows == ["run(x=3) → 9", "  outer(x=3) → 8", "    inner(x=3) → 4"], rows


async def test_the_this_of_a_one_line_method_is_read_past_its_prologue(tools: Tools, built: Path,
                                                                      debugger: str) -> None:
    """lldb sizes a one-line function's prologue 0: its arguments were read before they were stored."""
    await tools("debug_launch", program=str(built / "callees_cpp"), adapter=debugger, stop_on_entry=True)
    result = await tools("debug_trace", functions=["Inventory::size", "Square::Square"])
    await tools("debug_terminate")
    rows = result["calls"]["rows"]
    size = next(row for row in rows if row.startswith("Inventory::size("))
    square = next(row for row in rows if row.startswith("Square::Square("))
    assert " → 2  ← stock (callees.cpp:" in size and ", s=3) → returned  ← stock (callees.cpp:" \
        f"{line_of('calls/callees.cpp', 'Square square(3)')})" in square, rows
