"""Exceptions by type: ``debug_break(exception=[…])`` takes type names beside the filters, stops on the class and
its subclasses, caught or uncaught, and ``$exception`` evaluates to the exception object at such a stop."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Tools, line_of, program, require

PY_TYPED = program("raises_typed.py")
PY_RAISE = line_of("raises_typed.py", "# raise here")


@pytest.fixture(scope="module")
def cpp_typed(build_dir: Path) -> str:
    require("g++")
    target = build_dir / "typed_throws"
    subprocess.run(["g++", "-g", "-O0", "-o", str(target), program("native/cpp/typed_throws.cpp")], check=True,
                   capture_output=True, timeout=120)
    return str(target)


async def _evaluate(tools: Tools, expression: str) -> str:
    return str((await tools("debug_evaluate", expression=expression))["value"])


async def test_python_stops_on_a_user_class_and_its_subclass_caught_and_uncaught(tools: Tools) -> None:
    await tools("debug_launch", program=PY_TYPED, stop_on_entry=True, break_on_exception="none")
    listing = await tools("debug_break", exception=["AppError"])
    assert listing["exception_filters"] == ["AppError"]
    caught: dict[str, Any] = await tools("debug_continue")
    assert caught["reason"] == "exception" and caught["location"]["line"] == PY_RAISE  # not the KeyError
    assert caught["exception"]["type"] == "ParseError" and "'x1'" in caught["exception"]["message"]
    assert await _evaluate(tools, "$exception.args[0]") == "\"not a number: 'x1'\""
    assert await _evaluate(tools, "type($exception).__mro__[1].__name__") == "'AppError'"
    uncaught = await tools("debug_continue")
    assert uncaught["reason"] == "exception" and "'y2'" in uncaught["exception"]["message"]
    await tools("debug_terminate")


async def test_python_takes_a_builtin_class_beside_a_filter(tools: Tools) -> None:
    await tools("debug_launch", program=PY_TYPED, stop_on_entry=True, break_on_exception="none")
    await tools("debug_break", exception=["LookupError", "uncaught"])
    caught = await tools("debug_continue")
    assert caught["exception"]["type"] == "KeyError"  # LookupError's subclass, caught
    uncaught = await tools("debug_continue")
    assert uncaught["exception"]["type"] == "ParseError" and "'y2'" in uncaught["exception"]["message"]
    await tools("debug_terminate")


async def test_python_refuses_a_slip_of_a_builtin_class_s_name_with_the_closest(tools: Tools) -> None:
    await tools("debug_launch", program=PY_TYPED, stop_on_entry=True, break_on_exception="none")
    failed = await tools.error("debug_break", exception=["KeyErorr"])
    assert "'KeyErorr' is no exception class the program has; the closest: KeyError" in failed, failed
    listing = await tools("debug_break", exception=["errors.KeyErorr", "AppError"])  # dotted, or like none: by name
    assert listing["exception_filters"] == ["errors.KeyErorr", "AppError"]
    caught = await tools("debug_continue")
    assert caught["exception"]["type"] == "ParseError"  # the refused name left the filters as they were
    await tools("debug_terminate")


async def test_python_at_a_stop_compares_a_name_with_the_program_s_classes(tools: Tools) -> None:
    await tools("debug_launch", program=PY_TYPED, break_on_exception="none",
                breakpoints=[{"file": PY_TYPED, "line": line_of("raises_typed.py", 'print("lenient:"')}])
    failed = await tools.error("debug_break", exception=["PraseError"])
    assert "'PraseError' is no exception class the program has; the closest: ParseError" in failed, failed
    listing = await tools("debug_break", exception=["ParseError", "ConfigError"])  # loaded; like none loaded
    assert listing["exception_filters"] == ["ParseError", "ConfigError"], listing
    caught = await tools("debug_continue")
    assert caught["exception"]["type"] == "ParseError", caught
    await tools("debug_terminate")


async def test_python_dollar_exception_outside_an_exception_stop_says_so(tools: Tools) -> None:
    await tools("debug_launch", program=PY_TYPED, stop_on_entry=True, break_on_exception="none")
    failed = await tools.error("debug_evaluate", expression="$exception")
    assert "not stopped at one" in failed
    await tools("debug_terminate")


JAVA_TYPED = program("java/TypedThrows.java")


async def test_java_stops_on_a_class_and_its_subclasses_with_getmessage_s_text(tools: Tools) -> None:
    require("java", "javac")
    await tools("debug_launch", program=JAVA_TYPED, stop_on_entry=True, break_on_exception="none")
    refused = await tools.error("debug_break", exception=["String"])
    assert "'String' names java.lang.String, which is not an exception class" in refused, refused
    slip = await tools.error("debug_break", exception=["IllegalStateExcepton"])  # a JDK class, loaded or not
    assert "no class 'IllegalStateExcepton' is loaded" in slip and ": java.lang.IllegalStateException;" in slip, slip
    await tools("debug_break", exception=["AppError"])
    caught = await tools("debug_continue")  # not the NullPointerException
    assert caught["reason"] == "exception", caught
    assert caught["location"]["line"] == line_of("java/TypedThrows.java", "// raise here"), caught
    assert caught["exception"] == {"type": "TypedThrows$ParseError", "message": "not a number: x1"}
    assert "not a number: x1" in await _evaluate(tools, "$exception.getMessage()")
    built = await tools("debug_continue")
    assert built["exception"]["message"] == "values differ expected:<3> but was:<4>", built  # getMessage()'s
    summary = await _evaluate(tools, "$exception")
    assert summary.startswith('TypedThrows.Mismatch: "values differ expected:<3> but was:<4>" {'), summary
    threw = await tools.error("debug_evaluate", expression='TypedThrows.compare("1", "2")')
    assert "threw TypedThrows$Mismatch: values differ expected:<1> but was:<2>" in threw, threw
    uncaught = await tools("debug_continue")
    assert uncaught["exception"] == {"type": "TypedThrows$ParseError", "message": "not a number: y2"}, uncaught
    await tools("debug_terminate")


NODE_TYPED = program("node/typed_throws.js")


async def test_node_stops_on_a_constructor_and_its_subclass_caught_and_uncaught(tools: Tools) -> None:
    require("node")
    await tools("debug_launch", program=NODE_TYPED, stop_on_entry=True, break_on_exception="none")
    failed = await tools.error("debug_break", exception=["TypeEror"])  # a slip: it would never stop
    assert "'TypeEror' is no built-in error constructor; the closest: TypeError" in failed, failed
    assert "neither an exception filter" in await tools.error("debug_break", exception=["errors.AppError"])
    await tools("debug_break", exception=["AppError"])
    caught = await tools("debug_continue")  # not the TypeError, nor Node's own throws while it starts
    assert caught["reason"] == "exception", caught
    assert caught["location"]["line"] == line_of("node/typed_throws.js", "// raise here"), caught
    assert caught["exception"] == {"type": "ParseError", "message": "not a number: x1"}, caught
    assert await _evaluate(tools, "$exception.input + ':' + text") == '"x1:x1"'  # the frame's scope too
    uncaught = await tools("debug_continue")
    assert uncaught["reason"] == "exception" and uncaught["exception"]["message"] == "not a number: y2", uncaught
    await tools("debug_terminate")


CPP_RAISE = line_of("native/cpp/typed_throws.cpp", "// raise here")


@pytest.mark.parametrize("debugger", ["gdb", "lldb-dap"])
async def test_cpp_stops_on_a_class_and_its_subclass(tools: Tools, cpp_typed: str, debugger: str,
                                                     anyio_backend: str) -> None:
    require("gdb" if debugger == "gdb" else "lldb-dap-22|lldb-dap")
    await tools("debug_launch", program=cpp_typed, adapter=debugger, stop_on_entry=True, break_on_exception="none")
    refused = await tools.error("debug_break", exception=["ParseErorr"])
    assert "no C++ type 'ParseErorr' in the program's debug info" in refused, refused
    await tools("debug_break", exception=["AppError"])
    caught = await tools("debug_continue")  # not the std::out_of_range
    assert caught["reason"] == "exception" and caught["location"]["line"] == CPP_RAISE, caught
    assert caught["exception"] == {"type": "ParseError", "message": "not a number: x1"}, caught  # runtime_error's
    assert await _evaluate(tools, "$exception.code + 1") == "4"
    uncaught = await tools("debug_continue")
    assert uncaught["exception"] == {"type": "ParseError", "message": "not a number: y2"}, uncaught
    await tools("debug_terminate")


async def test_gdb_matches_a_standard_type_by_its_own_name_and_names_the_closest_type(
        tools: Tools, cpp_typed: str) -> None:
    require("gdb")
    await tools("debug_launch", program=cpp_typed, adapter="gdb", stop_on_entry=True, break_on_exception="none")
    refused = await tools.error("debug_break", exception=["ParseErorr"])
    assert "did you mean 'ParseError'?" in refused, refused
    await tools("debug_break", exception=["std::out_of_range"])
    thrown = await tools("debug_continue")
    assert thrown["exception"] == {"type": "std::out_of_range", "message": "no such index"}, thrown
    ended = await tools("debug_continue")  # ParseError is no out_of_range: uncaught, it aborts the program
    assert ended["exception"]["type"] == "SIGABRT", ended
    await tools("debug_terminate")


GO_MAIN = program("go/main.go")


async def test_go_refuses_a_type_and_dollar_exception_is_the_panic_s_value(tools: Tools) -> None:
    require("dlv", "go")
    report = await tools("debug_launch", program=GO_MAIN, args=["panic"])
    assert report["exception"]["type"] == "panic", report
    assert await _evaluate(tools, "$exception") == 'interface {}(string) "cannot divide 10 by zero"'
    refused = await tools.error("debug_break", exception=["MyError"])
    assert "Go has panics, not exceptions" in refused and "runtime.gopanic" in refused, refused
    await tools("debug_terminate")
