"""PHP through Xdebug, through the MCP tools on real php + Xdebug: values (paged arrays, objects, nesting),
evaluation and assignment, exceptions by filter and class (warnings too), logpoints and hit counts, stop on
entry, the built-in web server's requests as threads, and attach (polydbg listens, PHP started elsewhere
connects). The conformance flow is in test_conformance.py."""

from __future__ import annotations

import asyncio
import os
import subprocess
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require
from tests.integration.php_fpm import free_port

PHP = PROGRAMS / "php"
VALUES = str(PHP / "values.php")
ERRORS = str(PHP / "errors.php")
WEB = str(PHP / "web" / "index.php")


@pytest.fixture(autouse=True)
def _php() -> None:
    require("php")
    if "xdebug" not in subprocess.run(["php", "-m"], capture_output=True, text=True).stdout.lower():
        from tests.conftest import unavailable
        unavailable("php has no Xdebug (.ci/run installs php-xdebug)")


def at(path: str, marker: str, **options: Any) -> dict[str, Any]:
    return {"file": path, "line": line_of(os.path.relpath(path, PROGRAMS), marker), **options}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def get(url: str) -> str:
    """An HTTP GET in a thread (the request stops in the debugger, so it answers only once resumed)."""
    return await asyncio.to_thread(lambda: urllib.request.urlopen(url, timeout=60).read().decode())


# -- values ---------------------------------------------------------------------------------------------


async def test_values_read_as_php_writes_them_and_long_arrays_page(tools: Tools) -> None:
    report = await tools("debug_launch", program=VALUES, breakpoints=[at(VALUES, "inspect here")])
    assert report["location"]["function"] == "Shop\\inspect"
    local = values(report)
    assert local["$count"] == "42" and local["$ratio"] == "0.5" and local["$ready"] == "true", local
    assert local["$nothing"] == "null"
    assert local["$word"] == '"café \\"quoted\\" \\$x"'
    assert local["$numbers"].startswith("array(150) [0, 1, 2, 3, 4, …]")
    assert local["$prices"] == 'array(3) ["apple" => 1.25, "pear" => 2.5, 7 => "seven"]'
    assert local["$item"].startswith('Shop\\Item {tags: array(2), parent: null, name: "lamp", price: 19.99')
    numbers = next(v for v in report["locals"] if v["name"] == "$numbers")
    page = await tools("debug_variables", ref=numbers["ref"], start=95, count=10)  # past Xdebug's first page
    assert page["total"] == 150
    assert [(v["name"], v["value"]) for v in page["variables"]] == [(str(n), str(n)) for n in range(95, 105)]
    item = next(v for v in report["locals"] if v["name"] == "$item")
    props = {v["name"]: v for v in (await tools("debug_variables", ref=item["ref"]))["variables"]}
    assert props["name"]["value"] == '"lamp"' and props["made"]["value"] == "1"  # the static one too
    tags = await tools("debug_variables", ref=props["tags"]["ref"])  # a private array, opened
    assert [v["value"] for v in tags["variables"]] == ['"new"', '"sale"']
    deep = await tools("debug_evaluate", expression='$nested["inner"]["deep"]')
    assert deep["value"] == "array(3) [1, 2, 3]"
    assert (await tools("debug_evaluate", expression="array_sum($numbers) + $count"))["value"] == "11217"
    said = await tools.error("debug_evaluate", expression="nosuch() + 1")
    assert "Error: Call to undefined function nosuch()" in said, said
    await tools("debug_set_variable", ref=next(v for v in report["locals"] if v["name"] == "$prices")["ref"],
                name="pear", value="10")
    assert (await tools("debug_evaluate", expression='$prices["pear"]'))["value"] == "10"
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["output"]["text"] == "192\n"  # 42 + 150
    await tools("debug_terminate")


async def test_an_outer_frame_evaluates_with_its_own_variables(tools: Tools) -> None:
    conformance = str(PROGRAMS / "conformance" / "conformance.php")
    await tools("debug_launch", program=conformance, breakpoints=[at(conformance, "in add")])
    assert (await tools("debug_evaluate", expression="$x * 10 + $y", frame_id=1))["value"] == "34"
    said = await tools.error("debug_evaluate", expression="count($argv)", frame_id=1)
    assert "only in the innermost frame" in said and "$argv holds a value of type array" in said, said
    assert (await tools("debug_evaluate", expression="$argv[0]", frame_id=1))["value"].endswith('conformance.php"')
    await tools("debug_terminate")


# -- exceptions -----------------------------------------------------------------------------------------


async def test_an_uncaught_exception_stops_with_its_class_message_and_what_to_do(tools: Tools) -> None:
    report = await tools("debug_launch", program=ERRORS)  # break_on_exception: uncaught
    assert report["reason"] == "exception"
    assert report["location"]["line"] == line_of("php/errors.php", "uncaught here")
    exception = report["exception"]
    assert (exception["type"], exception["message"]) == ("DivisionByZeroError", "Division by zero"), exception
    assert 'debug_break(exception=["DivisionByZeroError"])' in " ".join(exception.get("details") or [])
    assert "skipped: not a number: x" in report["output"]["text"]  # caught ones did not stop
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 255
    await tools("debug_terminate")


async def test_raised_exceptions_by_class_and_warnings_stop_where_they_happen(tools: Tools) -> None:
    report = await tools("debug_launch", program=ERRORS, break_on_exception="none")
    assert report["state"] == "exited"  # nothing stops it
    await tools("debug_terminate")
    # a class name matches its subclasses: App\BadInput is an InvalidArgumentException
    report = await tools("debug_launch", program=ERRORS, break_on_exception="none",
                         stop_on_entry=True)
    assert report["reason"] == "entry"
    await tools("debug_break", exception=["InvalidArgumentException", "warnings"])
    thrown = await tools("debug_continue")
    assert thrown["reason"] == "exception" and thrown["location"]["function"] == "App\\parse"
    assert thrown["location"]["line"] == line_of("php/errors.php", "thrown here")
    assert (thrown["exception"]["type"], thrown["exception"]["message"]) == ("App\\BadInput", "not a number: x")
    assert values(thrown)["$text"] == '"x"'
    assert (await tools("debug_evaluate", expression="$exception"))["value"] == '"App\\\\BadInput: not a number: x"'
    said = await tools.error("debug_evaluate", expression="$exception->getMessage()")  # no object: what to read
    assert 'only the text "App\\BadInput: not a number: x"' in said and "in the catch block" in said, said
    warned = await tools("debug_continue")
    assert warned["reason"] == "exception" and warned["exception"]["type"] == "Warning"
    assert warned["exception"]["message"] == 'Undefined array key "c"'
    assert warned["location"]["line"] == line_of("php/errors.php", "warning here")
    await tools("debug_terminate")


# -- breakpoints ----------------------------------------------------------------------------------------


async def test_logpoints_and_hit_conditions(tools: Tools) -> None:
    conformance = str(PROGRAMS / "conformance" / "conformance.php")
    report = await tools("debug_launch", program=conformance, breakpoints=[
        at(conformance, "loop body", log_message="i={$i} s={$s}"),
        at(conformance, "print result", hit_condition="1")])
    assert report["reason"] == "breakpoint" and values(report)["$s"] == "13"
    logged = (await tools("debug_output", stream="logpoints"))["text"]
    assert logged.splitlines() == ["i=0 s=7", "i=1 s=7", "i=2 s=8", "i=3 s=10"], logged
    said = await tools.error("debug_break", **at(conformance, "loop body", condition="i > 1"))
    assert "i is a constant to PHP" in said and "$i" in said, said
    await tools("debug_terminate")


# -- the web: every request a thread --------------------------------------------------------------------


async def test_built_in_server_requests_are_threads_that_stop_in_the_handler(tools: Tools) -> None:
    port = free_port()
    report = await tools("debug_launch", program=WEB, runtime_args=["-S", f"127.0.0.1:{port}"],
                         env={"PHP_CLI_SERVER_WORKERS": "2"}, breakpoints=[at(WEB, "in the handler")])
    assert report["state"] == "running", report
    said = await tools.error("debug_pause")  # Xdebug 3.2 reads no command while PHP runs
    assert "xdebug_break()" in said, said
    first = asyncio.ensure_future(get(f"http://127.0.0.1:{port}/greet?name=ada"))
    stop = await tools("debug_continue", timeout_s=30)
    assert stop["reason"] == "breakpoint" and stop["location"]["function"] == "greet", stop
    assert values(stop)["$name"] == '"ada"'
    ada = stop["thread_id"]
    # the other worker's request stops while ada's is shown (its stop waits), or once ada's ran on: either way
    # it is what the resume answers with
    second = asyncio.ensure_future(get(f"http://127.0.0.1:{port}/greet?name=bob"))
    shown = await tools("debug_continue", timeout_s=30)
    assert shown["thread_id"] != ada and values(shown)["$name"] == '"bob"', shown
    assert await asyncio.wait_for(first, 30) == "Hello, Ada!\n"
    await tools("debug_clear", all=True)
    await tools("debug_continue", timeout_s=5)
    assert await asyncio.wait_for(second, 30) == "Hello, Bob!\n"
    third = await asyncio.wait_for(get(f"http://127.0.0.1:{port}/greet?name=cy"), 30)  # no breakpoint left
    assert third == "Hello, Cy!\n"
    output = (await tools("debug_output", stream="stdout", max_bytes=30_000))["text"]
    assert "Hello, Ada!" in output and "Hello, Cy!" in output  # each request's output, copied
    await tools("debug_terminate")


# -- attach: polydbg listens ----------------------------------------------------------------------------


@contextmanager
def php_connecting(port: int, program: str) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(["php", "-dxdebug.mode=debug", "-dxdebug.start_with_request=yes",
                                f"-dxdebug.client_port={port}", "-dxdebug.client_host=127.0.0.1", program],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        yield process
    finally:
        process.kill()
        process.wait()


async def test_attach_listens_for_php_started_elsewhere(tools: Tools) -> None:
    port = free_port()
    conformance = str(PROGRAMS / "conformance" / "conformance.php")
    report = await tools("debug_attach", language="php", port=port, breakpoints=[at(conformance, "in add")])
    assert report["state"] == "running", report
    assert f"xdebug.client_port={port}" in report["output"]["text"]  # how to start PHP
    with php_connecting(port, conformance) as process:
        stop = await tools("debug_continue", timeout_s=30)
        assert stop["reason"] == "breakpoint" and values(stop)["$a"] == "3", stop
        await tools("debug_terminate", detach=True)
        out, _ = process.communicate(timeout=30)
        assert out == b"result 13\n" and process.returncode == 13
    said = await tools.error("debug_attach", language="php", pid=os.getpid())
    assert "cannot be attached to a running PHP process" in said, said


# -- PHPUnit by name ------------------------------------------------------------------------------------

PHPUNIT = PHP / "phpunit"


async def test_a_failing_phpunit_test_stops_at_its_assertion_in_the_test_s_frame(tools: Tools) -> None:
    require("phpunit")
    report = await tools("debug_launch", test="CartTest::testTotalCountsQuantities", cwd=str(PHPUNIT))
    assert report["reason"] == "exception", report
    failing = line_of("php/phpunit/tests/CartTest.php", "fails here")
    assert report["location"] == {"file": str(PHPUNIT / "tests" / "CartTest.php"), "line": failing,
                                  "function": "Shop\\Tests\\CartTest->testTotalCountsQuantities"}
    assert report["exception"]["message"] == "Failed asserting that 13.0 matches expected 33.0."
    assert values(report)["$cart"] == "Shop\\Cart {lines: array(2)}"
    stack = (await tools("debug_stack"))["threads"][0]
    above = [f["function"] for f in stack["frames"] if f["index"] < 0]  # listed above frame 0, not addressable
    assert "PHPUnit\\Framework\\Assert::assertEquals" in above, stack
    lines = await tools("debug_evaluate", expression="$cart->lines")  # a path reads where it is
    assert lines["value"] == "array(2) [array(3), array(3)]"
    done = await tools("debug_continue")  # PHPUnit's own handling of the failure does not stop again
    assert done["state"] == "exited" and done["test"]["outcome"] == "failed", done
    await tools("debug_terminate")
    passed = await tools("debug_launch", test="tests/CartTest.php::testEmptyCartIsFree", cwd=str(PHPUNIT))
    assert passed["state"] == "exited" and passed["test"]["outcome"] == "passed", passed
    await tools("debug_terminate")
    missing = await tools("debug_launch", test="CartTest::testTotal", cwd=str(PHPUNIT))
    assert missing["test"]["outcome"] == "not found"
    assert "Shop\\Tests\\CartTest::testTotalCountsQuantities" in missing["test"]["closest"], missing
    await tools("debug_terminate")
