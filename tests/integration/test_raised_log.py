"""The log of exceptions raised (``debug_launch(trace=["raised"])``, ``debug_trace(functions=["raised"])``): every
exception the program's code raised, caught or not, with its message, where it was raised and where it was caught,
recorded by each backend without a stop the agent sees."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Tools, line_of, program, require
from tests.integration.test_exceptions_by_type import cpp_typed

__all__ = ["cpp_typed"]  # the C++ program's build, a fixture


def raised_rows(report: dict[str, Any]) -> list[str]:
    trace = report.get("trace") or report.get("calls") or {}
    return list(trace.get("raised_rows") or [])


async def test_java_records_caught_and_uncaught_throws_with_getmessage_and_the_catching_frame(tools: Tools) -> None:
    require("java", "javac")
    report = await tools("debug_launch", program=program("java/TypedThrows.java"), trace=["raised"])
    assert report["trace"]["raised"] == 4, report  # the JDK's own throws while it starts are not the program's
    raise_line = line_of("java/TypedThrows.java", "// raise here")
    assert raised_rows(report) == [
        'java.lang.NullPointerException: Cannot invoke "Object.hashCode()" because "nothing" is null at '
        f'TypedThrows.java:{line_of("java/TypedThrows.java", "nothing.hashCode()")} in TypedThrows.main → caught in '
        f'TypedThrows.main (TypedThrows.java:{line_of("java/TypedThrows.java", "catch (NullPointerException e)")})',
        f"TypedThrows$ParseError: not a number: x1 at TypedThrows.java:{raise_line} in TypedThrows.parse → caught in "
        f"TypedThrows.lenient (TypedThrows.java:{line_of('java/TypedThrows.java', 'catch (AppError e) {')})",
        "TypedThrows$Mismatch: values differ expected:<3> but was:<4> at TypedThrows.java:"  # getMessage()'s
        f"{line_of('java/TypedThrows.java', '// mismatch here')} in TypedThrows.compare → caught in TypedThrows.main "
        f"(TypedThrows.java:{line_of('java/TypedThrows.java', '// caught in main')})",
        f"TypedThrows$ParseError: not a number: y2 at TypedThrows.java:{raise_line} in TypedThrows.parse → uncaught",
    ], report
    assert report["reason"] == "exception"  # the uncaught one still stops (break_on_exception's default)
    await tools("debug_terminate")


async def test_node_records_throws_of_the_users_code_with_the_catching_frame(tools: Tools) -> None:
    require("node")
    report = await tools("debug_launch", program=program("node/typed_throws.js"), trace=["raised"])
    raise_line = line_of("node/typed_throws.js", "// raise here")
    null_line = line_of("node/typed_throws.js", "null.length")
    assert raised_rows(report) == [  # none of Node's own while it starts
        f"TypeError: Cannot read properties of null (reading 'length') at typed_throws.js:{null_line} in (anonymous) "
        f"→ caught in (anonymous) (typed_throws.js:{null_line})",
        f"ParseError: not a number: x1 at typed_throws.js:{raise_line} in parse → caught in lenient "
        f"(typed_throws.js:{line_of('node/typed_throws.js', 'return parse(text);')})",
        f"ParseError: not a number: y2 at typed_throws.js:{raise_line} in parse → uncaught",
    ], report
    assert report["reason"] == "exception" and report["location"]["line"] == raise_line  # the uncaught one stops
    await tools("debug_terminate")


async def test_python_records_what_the_users_code_swallowed_and_where(tools: Tools) -> None:
    report = await tools("debug_launch", program=program("raises_swallowed.py"), trace=["raised"])
    assert report["state"] == "exited", report

    def at(marker: str) -> int:
        return line_of("raises_swallowed.py", marker)
    rows = raised_rows(report)
    assert rows[1:] == [
        f"ValueError: invalid literal for int() with base 10: 'x' at raises_swallowed.py:{at('int raises here')} in "
        f"number → caught in number (raises_swallowed.py:{at('except (TypeError, ValueError):')})",
        f"KeyError: 'gone' at raises_swallowed.py:{at('suppressed here')} in main → caught in main "
        f"(raises_swallowed.py:{at('suppressed here')}), if its with block's __exit__ swallows it",
        f"OSError: disk gone at raises_swallowed.py:{at('raised in cleanup')} in cleanup → caught in main "
        f"(raises_swallowed.py:{at('caught here, after cleanup')})",  # not by cleanup's finally
    ], rows
    # raised inside json for the program's call: shown where the program called it, caught by its except
    assert rows[0].startswith("json.decoder.JSONDecodeError: Expecting property name") and rows[0].endswith(
        f"at raises_swallowed.py:{at('json raises here')} in load → caught in load (raises_swallowed.py:"
        f"{at('except ValueError:')})"), rows[0]
    await tools("debug_terminate")


async def test_python_s_log_leaves_stops_to_the_filters_and_ends_with_the_trace(tools: Tools) -> None:
    await tools("debug_launch", program=program("raises_typed.py"), stop_on_entry=True)
    traced = await tools("debug_trace", functions=["raised"])
    assert traced["calls"]["raised"] == 3, traced  # KeyError and ParseError x1, caught: no stop for them
    stop = traced["report"]
    assert traced["stopped_because"] == "stopped" and stop["reason"] == "exception", traced  # y2, uncaught: a stop
    assert "'y2'" in stop["exception"]["message"], stop
    await tools("debug_terminate")


@pytest.mark.parametrize("debugger", ["gdb", "lldb-dap"])
async def test_cpp_throws_are_recorded_with_the_handler_that_caught_them(tools: Tools, cpp_typed: str, debugger: str,
                                                                         anyio_backend: str) -> None:
    require("gdb" if debugger == "gdb" else "lldb-dap-22|lldb-dap")
    report = await tools("debug_launch", program=cpp_typed, adapter=debugger, trace=["raised"])
    source = program("native/cpp/typed_throws.cpp")

    def at(marker: str) -> int:
        return line_of("native/cpp/typed_throws.cpp", marker)

    def named(function: str) -> str:  # lldb names a static function with its parameters
        return function if debugger == "gdb" else f"::{function}(const std::string &)"
    assert raised_rows(report) == [
        f"std::out_of_range: no such index at {source}:{at('throw std::out_of_range')} in main → caught in main "
        f"(typed_throws.cpp:{at('catch (const std::exception &e)')})",
        f"ParseError: not a number: x1 at {source}:{at('// raise here')} in {named('parse')} → caught in "
        f"{named('lenient')} (typed_throws.cpp:{at('catch (const AppError &)')})",
        f"ParseError: not a number: y2 at {source}:{at('// raise here')} in {named('parse')} → uncaught",
    ], report
    await tools("debug_terminate")
