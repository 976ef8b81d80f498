"""Call traces of native code under gdb and lldb-dap (``record_calls`` of each), on the real debuggers: a recursive
function, a C++ method that throws (caught by its caller), a thread of the program's, unknown names."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from polydbg.backends.recording import CallSpec
from polydbg.errors import UsageError
from polydbg.session.session import Session
from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.recorded_calls import CALLS, at_entry, launched_with_trace, run_recording

SOURCE = "calls/calls.cpp"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> str:
    require("g++")
    built = tmp_path_factory.mktemp("calls") / "calls"
    subprocess.run(["g++", "-g", "-O0", "-pthread", "-o", str(built), str(CALLS / "calls.cpp")], check=True)
    return str(built)


# Asked for by name, so anyio's plugin keeps the parametrized tests' parameter (see test_conformance.py).
pytestmark = pytest.mark.usefixtures("anyio_backend")


@pytest.fixture(params=["gdb", "lldb-dap"])
def debugger(request: pytest.FixtureRequest) -> str:
    adapter: str = request.param
    require("gdb" if adapter == "gdb" else "lldb-dap-22|lldb-dap|lldb-vscode")
    return adapter


@pytest.fixture
async def session(program: str, debugger: str) -> AsyncIterator[Session]:
    async with at_entry("cpp", debugger, program, 30) as session:
        yield session


async def test_a_recursive_function_every_call_with_its_argument_value_and_caller(session: Session) -> None:
    records, notes = await run_recording(session, "fib")
    assert notes == []
    assert len(records) == 25  # fib(6) calls fib 25 times
    assert all(r.function == "fib" and r.ended for r in records)
    top = records[-1]  # the outermost call ends last, and began first
    assert top.started is not None and all(r.started is not None and r.started > top.started for r in records[:-1])
    assert top.args == (("n", "6"),) and top.returned == "8"
    assert top.caller == f"main (calls.cpp:{line_of(SOURCE, 'fib(6)')})"
    assert {r.caller for r in records[:-1]} == {f"fib (calls.cpp:{line_of(SOURCE, 'return fib(n - 1)')})"}
    assert [r.returned for r in records if r.args == (("n", "2"),)] == ["1"] * 5
    assert top.file is not None and Path(top.file).name == "calls.cpp"
    assert top.line == line_of(SOURCE, "int fib(int n)")


async def test_two_names_of_one_function_record_each_call_once(session: Session) -> None:
    records, notes = await run_recording(session, "fib", "fib(int)", "calls.cpp:fib")
    assert notes == [] and len(records) == 25 and {r.function for r in records} == {"fib"}


async def test_a_method_that_throws_records_the_exception_and_the_next_call_its_own_value(session: Session) -> None:
    records, _ = await run_recording(session, "Parser.parse", "parse_all")
    parses = [r for r in records if r.function == "Parser::parse"]
    assert [(r.args[1:], r.returned, r.raised) for r in parses] == [  # (args[0] is this)
        ((("text", '"ab"'),), "2", None),
        ((("text", '""'),), None, "std::invalid_argument"),
        ((("text", '"xyz"'),), "3", None)]  # made from the same place: gdb's frame id is the thrown call's
    [whole] = [r for r in records if r.function == "parse_all"]
    assert whole.returned == "2" and whole.caller == f"main (calls.cpp:{line_of(SOURCE, 'parse_all(parser')})"


async def test_a_thread_of_the_program(session: Session) -> None:
    records, _ = await run_recording(session, "square")
    assert [(r.args, r.returned) for r in records] == [((("x", str(i)),), str(i * i)) for i in range(1, 5)]
    assert len({r.thread for r in records}) == 1 and records[0].thread != "thread 1"


async def test_an_unknown_name_is_refused_with_the_closest(session: Session) -> None:
    with pytest.raises(UsageError, match=r"no function fibb in the program; the closest: fib"):
        await session.core.backend.record_calls(CallSpec(("fibb",)), lambda record: None)


async def test_a_launch_records_a_whole_run_through_the_tools(tools: Tools, program: str, debugger: str) -> None:
    trace, rows = await launched_with_trace(tools, ["fib", "Parser::parse"], program=program, adapter=debugger)
    assert trace["calls"] == 28
    assert "fib: 25 calls" in "\n".join(trace["summary"])
    assert any(row.startswith('Parser::parse(this=') and 'text="") → raised std::invalid_argument' in row
               for row in rows)


async def test_a_rust_test_by_name_records_the_function_it_tests(tools: Tools) -> None:
    require("cargo", "lldb-dap-22|lldb-dap|lldb-vscode")
    project = PROGRAMS / "rusttests"
    report = await tools("debug_launch", test="bulk_discount", cwd=str(project), trace=["total"])
    assert report["reason"] == "exception"  # its assert_eq! fails: the discount never applies
    [row] = report["trace"]["rows"]  # the function itself, not what was inlined at its first line (f64::from)
    assert row.startswith("rusttests::total(unit=1, quantity=10) → 10  ← rusttests::tests::bulk_discount "
                          f"(lib.rs:{line_of('rusttests/src/lib.rs', 'let got = total')})")
