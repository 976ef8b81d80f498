"""Ruby under rdbg through the MCP tools (beyond the conformance flow): values (Array paged, Hash, Struct, an
object's instance variables) read and set, exception stops (uncaught, raised, by class, ``$exception``),
logpoints and debug_trace, method breakpoints, pause, attach by port and by pid (its UNIX socket)."""

from __future__ import annotations

import os
import select
import socket
import subprocess
from typing import Any

import pytest

from polydbg.backends.rdbg import gems
from tests.conftest import PROGRAMS, Tools, line_of, require

pytestmark = pytest.mark.usefixtures("anyio_backend")  # keeps the parametrized tests' own parameters
RUBY = PROGRAMS / "ruby"
VALUES = str(RUBY / "values.rb")
RAISES = str(RUBY / "raises.rb")


@pytest.fixture(autouse=True)
def _ruby() -> None:
    require("ruby")


def at(name: str, marker: str) -> dict[str, Any]:
    return {"file": str(RUBY / name), "line": line_of(f"ruby/{name}", marker)}


def by_name(listing: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in listing.get("variables") or listing.get("locals") or []}


async def test_values_are_read_paged_and_set(tools: Tools) -> None:
    report = await tools("debug_launch", program=VALUES, breakpoints=[at("values.rb", "values ready")])
    local = by_name(report)
    assert local["prices"]["value"] == '{"apple"=>3, "pear"=>5, "plum"=>7}'
    assert local["point"]["value"] == "#<struct Point x=1, y=2>"
    assert "ref" not in local.get("total", {})  # a leaf, not an expandable Integer
    page = await tools("debug_variables", ref=local["numbers"]["ref"], start=100, count=5)
    assert [(v["name"], v["value"]) for v in page["variables"]] == [(str(i), str(i + 1)) for i in range(100, 105)]
    entries = by_name(await tools("debug_variables", ref=local["prices"]["ref"]))
    assert {k: v["value"] for k, v in entries.items()} == {'"apple"': "3", '"pear"': "5", '"plum"': "7"}
    fields = by_name(await tools("debug_variables", ref=local["cart"]["ref"]))
    assert set(fields) == {"@owner", "@items"}, fields
    for ref, name, value in ((local["prices"]["ref"], '"pear"', "50"), (local["point"]["ref"], "x", "41"),
                             (local["cart"]["ref"], "@owner", '"bob"'), (local["numbers"]["ref"], "0", "-1")):
        changed = await tools.client.call_tool("debug_set_variable", {"ref": ref, "name": name, "value": value})
        assert not changed.is_error, changed
    evaluated = await tools("debug_evaluate",
                            expression="[prices['pear'], point.x, cart.instance_variable_get(:@owner), numbers[0]]")
    assert evaluated["value"] == '[50, 41, "bob", -1]'
    await tools.client.call_tool("debug_set_variable", {"name": "numbers", "value": "[7]"})
    done = await tools("debug_continue")
    assert done["state"] == "exited"
    assert "total 60 1 41" in done["output"]["text"]


async def test_an_uncaught_exception_stops_where_it_was_raised(tools: Tools) -> None:
    report = await tools("debug_launch", program=RAISES)  # uncaught by default: the rescued one does not stop
    assert report["state"] == "stopped" and report["reason"] == "exception", report
    assert report["location"]["line"] == line_of("ruby/raises.rb", "divide by zero")
    assert report["exception"]["type"] == "ZeroDivisionError"
    assert report["exception"]["message"] == "divided by 0"
    assert "rescued: no pear left" in report["output"]["text"]
    done = await tools("debug_continue")
    assert done["state"] == "exited" and done["exit_code"] == 1


async def test_raised_exceptions_and_classes_stop_with_exception(tools: Tools) -> None:
    report = await tools("debug_launch", program=RAISES, break_on_exception="raised")
    assert report["reason"] == "exception"
    assert report["location"]["line"] == line_of("ruby/raises.rb", "raise out of stock")
    assert report["exception"] == {"type": "OutOfStock", "message": "no pear left"} | {
        k: v for k, v in report["exception"].items() if k not in ("type", "message")}
    assert (await tools("debug_evaluate", expression="$exception.message"))["value"] == '"no pear left"'
    await tools("debug_terminate")
    await tools("debug_launch", program=RAISES, break_on_exception="none", stop_on_entry=True)
    await tools("debug_break", exception=["ZeroDivisionError"])
    report = await tools("debug_continue")
    assert report["reason"] == "exception" and report["exception"]["type"] == "ZeroDivisionError", report
    await tools("debug_terminate")


async def test_logpoints_trace_and_method_breakpoints(tools: Tools) -> None:
    report = await tools("debug_launch", program=VALUES, stop_on_entry=True)
    assert report["reason"] == "entry", report
    traced = await tools("debug_trace", points=[at("values.rb", "each item")], expressions=["item", "sum"])
    assert "apple" in traced["text"] if "text" in traced else True
    rows = (await tools("debug_output", stream="trace"))["text"]
    assert "plum" in rows and "apple" in rows, rows
    await tools("debug_restart")
    await tools("debug_break", function="Cart#total")
    stop = await tools("debug_continue")
    assert stop["reason"] == "breakpoint" and stop["location"]["function"].endswith("total"), stop
    await tools("debug_terminate")


def started(argv: list[str], line: str) -> subprocess.Popen[bytes]:
    """A process started with ``argv``, once its stderr said ``line`` (within 30 s)."""
    process = subprocess.Popen(argv, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert process.stderr is not None
    stderr = process.stderr

    try:
        if not select.select([stderr], [], [], 30)[0]:
            raise AssertionError("rdbg did not listen within 30 s")
        while line.encode() not in (got := stderr.readline()):
            assert got, "rdbg ended before listening"
    except BaseException:
        process.kill()
        process.wait()
        stderr.close()
        raise
    return process


@pytest.mark.parametrize("how", ["port", "pid"])
async def test_attach_to_rdbg_open(tools: Tools, how: str) -> None:
    gem = gems.installed()
    assert gem is not None and gem.path is not None
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    where = ["--host=127.0.0.1", f"--port={port}"] if how == "port" else []
    process = started(["ruby", os.path.join(gem.path, "exe", "rdbg"), "--open", "--nonstop", *where, "--",
                             str(RUBY / "ticks.rb")], "ticking")
    try:
        target = {"port": port} if how == "port" else {"pid": process.pid}
        report = await tools("debug_attach", language="ruby", **target, breakpoints=[at("ticks.rb", "each tick")])
        assert report["reason"] == "breakpoint", report
        assert "count" in by_name(report)
        await tools("debug_terminate", detach=True)
        assert process.poll() is None  # detached: it runs on, its breakpoints gone
    finally:
        process.kill()
        process.wait()
        if process.stderr is not None:
            process.stderr.close()
