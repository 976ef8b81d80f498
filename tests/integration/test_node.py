"""The node backend through the MCP tools, on real Node: JavaScript (CommonJS and ES modules),
TypeScript (tsc's source maps and tsx), values, exceptions, pausing, attaching.

The basic flow (breakpoints, stepping, evaluate, set, conditions, hit counts, exit, kill, terminate)
is in test_conformance.py's js-node flavour. TypeScript needs the dev dependencies of
tests/programs/node (``npm ci`` there; .ci/run does it).
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from polydbg.backends.kit import timeouts
from tests.conftest import PROGRAMS, Tools, descendants, line_of, require, text_of

NODE = PROGRAMS / "node"
TS = NODE / "ts"


@pytest.fixture(autouse=True)
def _node() -> None:
    require("node")


def node_modules() -> Path:
    """The TypeScript toolchain of tests/programs/node (installed by npm ci; a must under CI)."""
    modules = NODE / "node_modules"
    if not (modules / "typescript").is_dir() or not (modules / "tsx").is_dir():
        reason = "tests/programs/node has no node_modules: run npm ci there (.ci/run does)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return modules


def at(name: str, marker: str, **options: Any) -> dict[str, Any]:
    return {"file": str(NODE / name), "line": line_of(f"node/{name}", marker), **options}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or []}


async def set_variable(tools: Tools, **arguments: Any) -> dict[str, Any]:
    result = await tools.client.call_tool("debug_set_variable", arguments)
    assert not result.is_error, text_of(result)
    assert result.structured_content is not None
    return dict(result.structured_content)


# -- TypeScript --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """tsc's output of tests/programs/node/ts, with .map files pointing back at src/."""
    modules = node_modules()
    out = tmp_path_factory.mktemp("tsc") / "dist"
    subprocess.run([str(modules / ".bin" / "tsc"), "-p", str(TS), "--outDir", str(out)], check=True,
                   capture_output=True, timeout=120)
    return out


async def _typescript_flow(tools: Tools, program: str) -> None:
    main, shapes = TS / "src" / "main.ts", TS / "src" / "shapes.ts"
    blank = line_of("node/ts/src/main.ts", "let sum = 0;") + 1  # a blank line: the loop below binds it
    report = await tools("debug_launch", program=program, breakpoints=[
        {"file": str(shapes), "line": line_of("node/ts/src/shapes.ts", "return Math.PI")},
        {"file": str(main), "line": blank}])
    assert report["reason"] == "breakpoint", report
    assert report["location"] == {"file": str(main), "line": blank + 1, "function": "total"}
    await _only_the_programs_thread(tools, report)
    listed = (await tools("debug_breakpoints"))["breakpoints"]
    assert [(b["line"], b.get("actual_line"), b["verified"]) for b in listed] == [
        (line_of("node/ts/src/shapes.ts", "return Math.PI"),) * 2 + (True,), (blank, blank + 1, True)], listed
    inside = await tools("debug_continue")
    assert inside["location"] == {"file": str(shapes), "line": line_of("node/ts/src/shapes.ts", "return Math.PI"),
                                  "function": "area"}
    assert values(inside)["r2"] == "1"
    frames = (await tools("debug_stack"))["threads"][0]["frames"]
    assert [(f["function"], f["file"]) for f in frames[:2]] == [("area", str(shapes)), ("total", str(main))]
    assert frames[1]["line"] == line_of("node/ts/src/main.ts", "add area")
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert (done["state"], done["exit_code"]) == ("exited", 0)
    assert "total 15.71" in done["output"]["text"]
    await tools("debug_terminate")


async def _only_the_programs_thread(tools: Tools, report: dict[str, Any]) -> None:
    """The loader's own workers (esbuild's, Node's module-hooks worker) are not threads of the program."""
    threads = (await tools("debug_stack", all_threads=True))["threads"]
    assert [t["name"] for t in threads] == ["main"], threads
    assert "started: debugged in this session" not in (report.get("output") or {}).get("text", ""), report


async def test_an_es_module_in_typescript_runs_through_node_module_hooks_unseen(tools: Tools) -> None:
    node_modules()
    program = NODE / "tsx" / "order.mts"
    report = await tools("debug_launch", program=str(program),
                         breakpoints=[{"file": str(program), "line": line_of("node/tsx/order.mts", "print total")}])
    assert report["location"]["file"] == str(program) and values(report)["total"] == "6", report
    await _only_the_programs_thread(tools, report)
    done = await tools("debug_continue")
    assert (done["state"], done["exit_code"], done["output"]["text"]) == ("exited", 0, "total 6\n"), done
    await tools("debug_terminate")


async def test_typescript_compiled_by_tsc_is_debugged_in_its_ts_lines(tools: Tools, compiled: Path) -> None:
    await _typescript_flow(tools, str(compiled / "main.js"))


async def test_typescript_run_through_tsx_is_debugged_in_its_ts_lines(tools: Tools) -> None:
    node_modules()
    await _typescript_flow(tools, str(TS / "src" / "main.ts"))


@pytest.mark.usefixtures("anyio_backend")  # asked for by name: anyio's plugin keeps the parameters (test_conformance)
@pytest.mark.parametrize(("name", "marker", "message"), [
    ("broken.ts", "sum + value, 0;", 'Expected ")" but found ";"'),  # CommonJS: thrown in tsx's own code
    ("unfinished.mts", "value * factor;", 'Expected ")" but found ";"')])  # ESM: in Node's module-hooks worker
async def test_typescript_that_does_not_compile_is_a_build_error_at_its_line(tools: Tools, name: str, marker: str,
                                                                            message: str) -> None:
    node_modules()
    program = NODE / "tsx" / name
    line = line_of(f"node/tsx/{name}", marker)
    text = program.read_text().splitlines()[line - 1]
    ended = await tools("debug_launch", program=str(program), cwd=str(NODE))
    assert ended["state"] == "terminated", ended  # not a stop in tsx's minified code
    note = ended["note"]
    assert note.startswith(f"TypeScript did not compile: tsx (esbuild) refused tsx/{name}\n"), note
    assert f"tsx/{name}:{line}:{text.index(';') + 1}: {message}\n" in note, note
    assert f"{line:>5} | {text}\n" in note, note
    assert "fix the file and debug_restart" in note and "nodejs/node#50430" not in str(ended), ended
    await tools("debug_terminate")


async def test_typescript_without_a_runner_names_the_install_line(tools: Tools, tmp_path: Path) -> None:
    lone = tmp_path / "lone.ts"
    lone.write_text("const x: number = 1;\nconsole.log(x);\n")
    text = await tools.error("debug_launch", program=str(lone))
    assert "npm install --save-dev tsx" in text, text


# -- JavaScript ----------------------------------------------------------------------------------

async def test_es_modules_with_top_level_await_in_a_path_with_spaces(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(NODE / "esm app" / "main.mjs"),
                         breakpoints=[at("esm app/lib.mjs", "scale body")])
    assert report["location"]["file"] == str(NODE / "esm app" / "lib.mjs")
    assert (values(report)["value"], values(report)["factor"]) == ("1", "3")
    out = await tools("debug_step", kind="out")
    assert out["location"]["file"] == str(NODE / "esm app" / "main.mjs")
    await tools("debug_clear", all=True)
    done = await tools("debug_continue")
    assert (done["state"], done["exit_code"], done["output"]["text"]) == ("exited", 0, "values 3,6,9\n")
    await tools("debug_terminate")


async def test_a_breakpoint_in_a_scoped_package_s_directory_stops(tools: Tools) -> None:
    """Node's URL of a file under ``@acme/`` keeps the '@' (a breakpoint sent with %40 bound nowhere)."""
    report = await tools("debug_launch", program=str(NODE / "scoped" / "main.js"),
                         breakpoints=[at("scoped/@acme/greet.js", "greet builds the words")])
    assert (report["location"]["file"], values(report)["name"]) == (str(NODE / "scoped" / "@acme" / "greet.js"),
                                                                   '"scoped"'), report
    await tools("debug_terminate")


async def test_values_of_every_kind_without_running_getters(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(NODE / "values.js"),
                         breakpoints=[at("values.js", "inspect here")])
    listed = {v["name"]: v for v in (await tools("debug_variables", count=50))["variables"]}
    shown = {name: v["value"] for name, v in listed.items()}
    assert shown["point"] == "Point {x: 1, y: 2}" and listed["point"]["type"] == "Point"
    assert shown["map"] == 'Map(2) {"a" => 1, "b" => {…}}'
    assert shown["set"] == 'Set(2) {"x", "y"}'
    assert shown["error"] == "TypeError: bad thing"
    assert (shown["pending"], shown["done"]) == ("Promise {<pending>}", "Promise {<fulfilled>: 42}")
    assert shown["bytes"] == "Uint8Array(3) [1, 2, 3]"
    assert shown["text"] == '"héllo \\"quoted\\""'
    assert (shown["nothing"], shown["missing"], shown["fn"]) == ("null", "undefined", "ƒ (a, b)")
    assert shown["big"].startswith("Array(100000) [0, 2, 4")
    assert "inspect here" in report["source"]
    # an array of 100,000 is paged, not listed
    page = await tools("debug_variables", ref=listed["big"]["ref"], start=99_990, count=5)
    assert [(v["name"], v["value"]) for v in page["variables"]] == [(str(i), str(i * 2)) for i in range(99_990,
                                                                                                        99_995)]
    assert page["total"] == 100_000
    entries = (await tools("debug_variables", ref=listed["map"]["ref"]))["variables"]
    assert [(v["name"], v["value"]) for v in entries] == [('"a"', "1"), ('"b"', "{nested: true}")]
    lazy = {v["name"]: v["value"] for v in (await tools("debug_variables", ref=listed["lazy"]["ref"]))["variables"]}
    assert lazy == {"boom": "(getter)", "plain": "1", "[[Prototype]]": "Object"}  # listed, never run (it throws)
    # getters a class defines are on its prototype (as req.headers, req.query): listed too, nearest first
    members = (await tools("debug_variables", ref=listed["point"]["ref"]))["variables"]
    assert [(v["name"], v["value"]) for v in members] == [
        ("x", "1"), ("y", "2"), ("norm", "(getter)"), ("kind", "(getter)"), ("[[Prototype]]", "Shape")], members
    assert "inherited getters must not run" in await tools.error("debug_evaluate", expression="point.kind")
    error = (await tools("debug_variables", ref=listed["error"]["ref"]))["variables"]
    assert {v["name"] for v in error} >= {"message", "stack"}
    # evaluate, and set a local and a property
    assert "getter ran" in await tools.error("debug_evaluate", expression="lazy.boom")
    assert "not defined" in await tools.error("debug_evaluate", expression="nosuch + 1")
    assert (await set_variable(tools, name="text", value="'changed'"))["value"] == '"changed"'
    assert (await set_variable(tools, name="x", value="99", ref=listed["point"]["ref"]))["value"] == "99"
    assert (await tools("debug_evaluate", expression="`${text} ${point.x}`"))["value"] == '"changed 99"'
    await tools("debug_terminate")


async def test_bindings_in_their_temporal_dead_zone_read_as_uninitialized(tools: Tools) -> None:
    """V8 shows a let or const the program has not reached as undefined: say it is uninitialized, and tell it
    from a let that holds undefined."""
    before = await tools("debug_launch", program=str(NODE / "deadzone.js"),
                         breakpoints=[at("deadzone.js", "before total"), at("deadzone.js", "in the loop")])
    assert values(before) == {"order": "{price: 2, count: 3, items: […]}", "total": "<uninitialized>",
                              "note": "<uninitialized>", "done": "<uninitialized>"}, before["locals"]
    assert {v["name"]: v["type"] for v in before["locals"]}["total"] == "const"
    first = await tools("debug_continue")
    assert values(first) == {"label": "<uninitialized>", "item": '"a"', "order": "{price: 2, count: 3, items: […]}",
                             "total": "6", "note": "undefined", "done": "<uninitialized>"}, first["locals"]
    second = await tools("debug_continue")  # a new iteration: a new label, not reached yet
    assert (values(second)["label"], values(second)["note"]) == ("<uninitialized>", '"a!"'), second["locals"]
    done = await tools("debug_continue")
    assert (done["state"], done["output"]["text"]) == ("exited", "6 b! true\n"), done
    await tools("debug_terminate")


async def test_a_scripts_top_level_bindings_read_as_uninitialized_and_evaluate_as_the_program_sees_them(
        tools: Tools) -> None:
    """A CommonJS script's top level (with a #! line, and in a child it forks), also reached as a closure by a
    function called while the file loads; an evaluation says what the program would get, not V8's undefined."""
    early = await tools("debug_launch", program=str(NODE / "toplevel.js"),
                        breakpoints=[at("toplevel.js", "in describe"), at("toplevel.js", "declares total")])
    assert values(early) == {"role": '"parent"', "total": "<uninitialized>"}, early["locals"]
    assert (await tools("debug_evaluate", expression="total"))["value"] == "<uninitialized>"
    said = await tools.error("debug_evaluate", expression="`${role} ${total}`")
    assert "ReferenceError: Cannot access 'total' before initialization" in said, said
    assert (await tools("debug_evaluate", expression="role.length"))["value"] == "6"
    top = await tools("debug_continue")
    assert top["location"]["line"] == line_of("node/toplevel.js", "declares total")
    assert (values(top)["total"], values(top)["said"]) == ("<uninitialized>", '"ReferenceError"'), top["locals"]
    assert {v["name"]: v["type"] for v in top["locals"]}["total"] == "const"
    later = await tools("debug_continue")  # describe again, once total is declared
    assert values(later)["total"] == "6", later["locals"]
    child = await tools("debug_continue")
    assert values(child) == {"role": '"child"', "total": "<uninitialized>"}, child
    assert (await tools("debug_evaluate", expression="total"))["value"] == "<uninitialized>"
    await tools("debug_terminate")


async def test_exceptions_stop_where_thrown(tools: Tools) -> None:
    uncaught = await tools("debug_launch", program=str(NODE / "exceptions.js"))
    assert uncaught["reason"] == "exception"
    assert uncaught["exception"] == {"type": "Error", "message": "limit 3 exceeded"}
    assert uncaught["location"]["line"] == line_of("node/exceptions.js", "uncaught throw")
    assert values(uncaught)["limit"] == "3"
    done = await tools("debug_continue")
    assert (done["state"], done["exit_code"]) == ("exited", 1)
    await tools("debug_terminate")

    caught = await tools("debug_launch", program=str(NODE / "exceptions.js"), args=["caught"],
                         break_on_exception="raised")
    assert caught["exception"]["type"] == "SyntaxError"
    assert caught["location"]["line"] == line_of("node/exceptions.js", "parse may throw")
    assert (await tools("debug_continue"))["exit_code"] == 0
    await tools("debug_terminate")

    rejected = await tools("debug_launch", program=str(NODE / "exceptions.js"), args=["rejection"])
    assert rejected["exception"] == {"type": "RangeError", "message": "rejected on purpose"}
    await tools("debug_terminate")


async def test_logpoints_print_without_stopping(tools: Tools) -> None:
    done = await tools("debug_launch", program=str(NODE / "loop.js"),
                       breakpoints=[at("loop.js", "loop body", log_message="i={i} total={total} bad={nope}")])
    assert (done["state"], done["exit_code"]) == ("exited", 3)
    # a logpoint's lines are a stream of their own (read from the inspector, never written to stdout)
    lines = (await tools("debug_output", stream="logpoints"))["text"].splitlines()
    assert lines[0] == "i=0 total=0 bad=<error: nope is not defined>"
    assert len(lines) == 10 and lines[9].startswith("i=9 total=36")
    assert (await tools("debug_output", stream="stdout"))["text"] == "total 45\n"
    await tools("debug_terminate")


async def test_trace_expressions_hold_braces_and_unbalanced_ones_are_refused(tools: Tools) -> None:
    """A template literal and an object literal were cut at their first brace (the message's {…} read without
    balance): the trace recorded '{`$0-$0`}' and the comma expression (i, total) instead, silently."""
    program = str(NODE / "loop.js")
    body = line_of("node/loop.js", "loop body")
    await tools("debug_launch", program=program, stop_on_entry=True)
    for hostile in ("total}", "`${i}", "{i"):
        refused = await tools.error("debug_trace", points=[{"file": program, "line": body}], expressions=[hostile])
        assert "does not end where it begins" in refused and "balance it" in refused, refused
    refused = await tools.error("debug_trace", points=[{"file": program, "line": body}], expressions=["i */ 2"])
    assert "is not a JavaScript expression" in refused, refused
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"  # nothing ran
    traced = await tools("debug_trace", points=[{"file": program, "line": body}], max_hits=3,
                         expressions=["`${i}-${total}`", "{i, total}", "i // a comment ends with the expression"],
                         where="({n: i}).n >= 1")
    assert [list(hit["values"].values()) for hit in traced["hits"]] == [
        [f'"{i}-{t}"', f"{{i: {i}, total: {t}}}", str(i)] for i, t in ((0, 0), (1, 0), (2, 1))], traced
    assert traced["where"].startswith("where ({n: i}).n >= 1: held at 2 of 3 hits"), traced
    await tools("debug_terminate")


async def test_logpoints_and_line_traces_log_where_the_program_replaced_its_console(tools: Tools) -> None:
    """vitest's worker and jest put a console.Console of their own in globalThis, without console.context():
    every logpoint and line trace of a test run logged nothing (0 hits, and the run went on as if none was set)."""
    program = str(NODE / "own_console.js")
    line = line_of("node/own_console.js", "own console loop")
    done = await tools("debug_launch", program=program,
                       breakpoints=[{"file": program, "line": line, "log_message": "i={i}"}])
    assert done["state"] == "exited", done
    assert (await tools("debug_output", stream="logpoints"))["text"].splitlines() == [f"i={i}" for i in range(5)]
    await tools("debug_terminate")
    await tools("debug_launch", program=program, stop_on_entry=True)
    traced = await tools("debug_trace", points=[{"file": program, "line": line}], expressions=["i"], where="i > 2")
    assert traced["total_hits"] == 5 and traced["where"].startswith("where i > 2: held at 2 of 5 hits"), traced
    await tools("debug_terminate")


async def test_a_bare_hit_count_stops_on_that_hit_only(tools: Tools) -> None:
    """``hit_condition: "5"`` is the 5th hit and no other, as with every other debugger (not "from the 5th on")."""
    fifth = await tools("debug_launch", program=str(NODE / "loop.js"),
                        breakpoints=[at("loop.js", "loop body", hit_condition="5")])
    assert (fifth["reason"], values(fifth)["i"]) == ("breakpoint", "4"), fifth
    done = await tools("debug_continue")  # hits 6 to 10 do not stop
    assert (done["state"], done["exit_code"]) == ("exited", 3), done
    await tools("debug_terminate")


async def test_a_step_over_passes_hits_that_do_not_count(tools: Tools) -> None:
    """V8 ends a step at every breakpoint it passes; a hit its hit condition skips must not end a step over
    the call that reaches it, and the hit that counts interrupts the step as a breakpoint."""
    first = await tools("debug_launch", program=str(NODE / "stepping.js"), breakpoints=[
        at("stepping.js", "first call"), at("stepping.js", "compare", hit_condition="4")])
    over = await tools("debug_step", kind="over")  # hits 1 to 3 are in this call
    assert (over["reason"], over["location"]["line"]) == ("step", line_of("node/stepping.js", "second call")), over
    assert values(over)["first"] == "4"
    fourth = await tools("debug_step", kind="over")
    assert (fourth["reason"], fourth["location"]["line"]) == ("breakpoint", line_of("node/stepping.js", "compare"))
    assert (values(fourth)["value"], values(fourth)["best"]) == ("5", "null"), fourth
    assert first["reason"] == "breakpoint"
    await tools("debug_terminate")


async def test_a_javascript_file_transformed_as_it_loads_stops_at_its_own_lines(tools: Tools) -> None:
    """As jest runs every test file: through babel (blank lines dropped), with an inline map of itself, in a
    vm.Script with a column offset on line 0. Breakpoints are the file's lines, not the transformed code's."""
    spec = "transformed/spec.js"
    body, result = line_of(f"node/{spec}", "loop body"), line_of(f"node/{spec}", "// result")
    hit = await tools("debug_launch", program=str(NODE / "transformed" / "runner.js"),
                      breakpoints=[at(spec, "loop body"), at(spec, "// result")])
    assert (hit["reason"], hit["location"]["line"], values(hit)["value"]) == ("breakpoint", body, "3"), hit
    listed = (await tools("debug_breakpoints"))["breakpoints"]
    assert [(b["line"], b.get("actual_line"), b["verified"]) for b in listed] == [(body, body, True),
                                                                               (result, result, True)], listed
    await tools("debug_clear", id=listed[0]["id"])
    last = await tools("debug_continue")
    assert (last["location"]["line"], values(last)["best"]) == (result, "4"), last
    done = await tools("debug_continue")
    assert (done["state"], done["output"]["text"]) == ("exited", "largest 4\n"), done
    await tools("debug_terminate")


async def test_stop_on_entry_then_a_function_breakpoint(tools: Tools) -> None:
    program = PROGRAMS / "conformance" / "conformance.js"
    entry = await tools("debug_launch", program=str(program), stop_on_entry=True)
    assert entry["reason"] == "entry"
    assert entry["location"]["file"] == str(program)
    placed = (await tools("debug_break", function="add"))["breakpoints"][0]
    assert placed["verified"], placed
    hit = await tools("debug_continue")
    assert hit["location"]["function"] == "add"
    assert (values(hit)["a"], values(hit)["b"]) == ("3", "4")
    await tools("debug_terminate")


async def test_step_over_await_stays_in_the_async_function(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(NODE / "asyncflow.js"),
                         breakpoints=[at("asyncflow.js", "first await")])
    assert values(report)["first"] == "<uninitialized>"  # the await has not given it a value yet
    over = await tools("debug_step", kind="over")
    assert over["location"]["function"] == "work"
    assert over["location"]["line"] == line_of("node/asyncflow.js", "first await") + 1
    assert values(over)["first"] == "1"
    again = await tools("debug_step", kind="over")
    assert values(again)["second"] == "2"
    done = await tools("debug_continue")
    assert (done["exit_code"], done["output"]["text"]) == (7, "sum 3\n")
    await tools("debug_terminate")


async def test_pause_stops_a_busy_program_and_explains_an_idle_one(tools: Tools) -> None:
    # The launch answers "running" once the program printed and went quiet: busy.js prints "busy" as it
    # enters its loop, "idle" once only its timer is left, so each pause meets the state it is about.
    running = await tools("debug_launch", program=str(NODE / "busy.js"))
    assert running["state"] == "running" and "busy" in running["output"]["text"].splitlines(), running
    paused = await tools("debug_pause")
    assert paused["reason"] == "pause"
    assert paused["location"]["line"] in (line_of("node/busy.js", "while (Date.now()"),
                                          line_of("node/busy.js", "busy loop")), paused
    await tools("debug_terminate")
    idle = await tools("debug_launch", program=str(NODE / "busy.js"), args=["idle"])
    assert idle["state"] == "running" and "idle" in idle["output"]["text"].splitlines(), idle
    said = await tools.error("debug_pause")
    assert "idle" in said, said
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "running"  # and nothing was disturbed
    await tools("debug_terminate")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def test_attach_by_port_then_detach_leaves_it_running(tools: Tools) -> None:
    port = _free_port()
    program = await asyncio.create_subprocess_exec("node", f"--inspect=127.0.0.1:{port}", str(NODE / "busy.js"),
                                                   stderr=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.DEVNULL)
    try:
        assert program.stderr is not None
        assert b"Debugger listening" in await program.stderr.readline()
        report = await tools("debug_attach", port=port, language="javascript",
                             breakpoints=[at("busy.js", "busy loop")])
        assert report["reason"] == "breakpoint"
        assert int(values(report)["counter"]) >= 0
        await tools("debug_clear", all=True)
        await tools("debug_terminate", detach=True)
        assert program.returncode is None  # still running, no longer stopped
    finally:
        program.kill()
        await program.communicate()


async def test_terminate_ends_an_attached_program_paused_or_running(tools: Tools) -> None:
    """debug_terminate without detach ends the program, attached or launched alike (the program may be on
    another host, so it is told to end itself)."""
    for stopped in (True, False):
        port = _free_port()
        program = await asyncio.create_subprocess_exec("node", f"--inspect=127.0.0.1:{port}", str(NODE / "busy.js"),
                                                       stderr=asyncio.subprocess.PIPE,
                                                       stdout=asyncio.subprocess.DEVNULL)
        try:
            assert program.stderr is not None
            assert b"Debugger listening" in await program.stderr.readline()
            report = await tools("debug_attach", port=port, language="javascript",
                                 breakpoints=[at("busy.js", "busy loop")] if stopped else None)
            assert report["state"] == ("stopped" if stopped else "running"), report
            await tools("debug_terminate")
            assert await asyncio.wait_for(program.wait(), 10) == -signal.SIGKILL
        finally:
            if program.returncode is None:
                program.kill()
            await program.communicate()


async def test_a_session_stopped_for_over_30_seconds_still_answers(tools: Tools) -> None:
    report = await tools("debug_launch", program=str(NODE / "loop.js"), breakpoints=[at("loop.js", "loop body")])
    assert values(report)["i"] == "0"
    await asyncio.sleep(32)  # the scenario itself: a WebSocket keepalive ping would have closed it by now
    step = await tools("debug_continue")
    assert values(step)["i"] == "1"
    await tools("debug_terminate")


async def test_a_node_stopped_by_a_signal_is_sent_nothing_and_stays_where_it_was(tools: Tools) -> None:
    """SIGSTOP: Node answers nothing, and carries out what it was sent once continued (a step reported as failed
    ran then, and the session read "running" meanwhile). Nothing is sent to it: each request is refused at once,
    saying what holds the process and how to let it go, and once continued the program is where it was."""
    report = await tools("debug_launch", program=str(NODE / "loop.js"), breakpoints=[at("loop.js", "loop body")])
    assert values(report)["i"] == "0"
    [pid] = [pid for pid, command in descendants(os.getpid()).items()
             if command.endswith("loop.js") and os.path.basename(command.split()[0]) == "node"]
    os.kill(pid, signal.SIGSTOP)
    try:
        with anyio.fail_after(3):  # at once, not a deadline
            for tool, arguments in (("debug_step", {}), ("debug_continue", {}), ("debug_evaluate", {"expression": "i"}),
                                    ("debug_variables", {})):
                said = await tools.error(tool, **arguments)
                assert "stopped by a signal" in said and "nothing was sent" in said, (tool, said)
                assert f"kill -CONT {pid}" in said, (tool, said)
            assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"
    finally:
        os.kill(pid, signal.SIGCONT)
    again = await tools("debug_stack")  # nothing moved it meanwhile: the same stop, its values readable
    assert again["threads"][0]["frames"][0]["line"] == line_of("node/loop.js", "loop body"), again
    assert (await tools("debug_evaluate", expression="i + 1"))["value"] == "1"
    assert values(await tools("debug_continue"))["i"] == "1"
    await tools("debug_terminate")


async def test_a_node_killed_while_stopped_reads_killed_by_the_signal(tools: Tools) -> None:
    """Not "exit 1": Node is the debugger, and its guard reported SIGKILL's death as an exit with code 1."""
    await tools("debug_launch", program=str(NODE / "loop.js"), breakpoints=[at("loop.js", "loop body")])
    pid = (await tools("debug_sessions"))["sessions"][0]["pid"]
    os.kill(pid, signal.SIGKILL)
    for _ in range(200):  # 10 s at most: Node dies, its guard reaps it and dies of the same signal, polydbg reads it
        session = (await tools("debug_sessions"))["sessions"][0]
        if session["state"] != "stopped":
            break
        await asyncio.sleep(0.05)
    assert (session["state"], session.get("exit_code")) == ("exited", None), str(session)
    assert session["cause"] == "killed by signal 9 (SIGKILL)", session
    await tools("debug_terminate")


async def test_an_endless_expression_is_stopped_inside_node_and_says_so(tools: Tools,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    await tools("debug_launch", program=str(NODE / "loop.js"), breakpoints=[at("loop.js", "loop body")])
    monkeypatch.setattr(timeouts, "INSPECT_S", 2.0)
    said = await tools.error("debug_evaluate", expression="while (true) {}")
    assert "still running after 1.6 s and was stopped" in said and "still stopped where it was" in said, said
    assert (await tools("debug_evaluate", expression="i + 1"))["value"] == "1"
    await tools("debug_terminate")


async def test_raw_cdp_command(tools: Tools) -> None:
    await tools("debug_launch", program=str(NODE / "loop.js"), breakpoints=[at("loop.js", "loop body")])
    answer = await tools("debug_command", command='Runtime.evaluate {"expression": "6 * 7"}')
    assert '"value": 42' in answer["output"], answer
    # what Node does not know is answered with what it does know, read from the protocol it serves
    unknown = await tools.error("debug_command", command="Debugger.setBreakpointByURL {}")
    assert "(did you mean Debugger.setBreakpointByUrl" in unknown and "its methods: " in unknown, unknown
    assert "stepOver" in unknown, unknown
    assert "its domains: " in await tools.error("debug_command", command="Debuger.pause")
    bad = await tools.error("debug_command", command='Runtime.evaluate {"expresion": "1"}')
    assert "Runtime.evaluate takes expression (string)" in bad, bad
    assert "getProperties" in (await tools("debug_command", command="help Runtime"))["output"]
    await tools("debug_terminate")


async def test_native_tools_on_javascript_say_what_to_use_instead(tools: Tools) -> None:
    await tools("debug_launch", program=str(NODE / "loop.js"), breakpoints=[at("loop.js", "loop body")])
    watch = await tools.error("debug_watch", expression="i")
    assert "no data breakpoints" in watch and "debug_trace" in watch, watch
    memory = await tools.error("debug_memory", address="0x1000")
    assert "no raw memory" in memory and "debug_evaluate" in memory, memory
    await tools("debug_terminate")


async def test_an_es_module_top_level_throw_is_explained_not_silent(tools: Tools) -> None:
    done = await tools("debug_launch", program=str(NODE / "esm app" / "throws.mjs"))
    assert (done["state"], done["exit_code"]) == ("exited", 1)
    said = done["output"]["text"]
    where = f"{NODE / 'esm app' / 'throws.mjs'}:{line_of('node/esm app/throws.mjs', 'top-level throw')}"
    assert f"uncaught Error: top 3 at {where}" in said and "nodejs/node#50430" in said, said
    await tools("debug_terminate")


async def test_a_step_out_or_over_the_return_reports_what_the_function_returned(tools: Tools) -> None:
    """V8 gives a frame's returnValue only at its return position: a step over that lands there says it, and a
    step out from anywhere in the function pauses there on the way (the function's other return, and a deeper
    recursive call's, passed), so the landing in the caller says what the call returned."""
    first = await tools("debug_launch", program=str(NODE / "returns.js"), breakpoints=[at("returns.js", "add returns")])
    assert first["location"]["line"] == line_of("node/returns.js", "add returns"), first
    over = await tools("debug_step", kind="over")  # onto the return position, still in add
    assert (over["location"]["function"], over["returned"]) == ("add", ["add() returned 6"]), over
    out = await tools("debug_step", kind="out")  # V8 lands on the caller's next statement (no pause after the call)
    assert out["location"]["line"] == line_of("node/returns.js", "first call") + 1, out
    assert out["returned"] == ["add() returned 6"] and "(return) add" not in values(out), out
    await tools("debug_clear", all=True)
    await tools("debug_break", **at("returns.js", "makePoint body"))
    await tools("debug_continue")
    made = await tools("debug_step", kind="out")  # from the body's first line: the value is read on the way
    assert made["location"]["line"] == line_of("node/returns.js", "point call") + 1, made
    assert made["returned"] == ["makePoint() returned {x: 18, y: 19}"], made
    await tools("debug_break", **at("returns.js", "factorial base"))
    await tools("debug_continue")
    up = await tools("debug_step", kind="out")
    assert (up["location"]["line"], up["returned"]) == (line_of("node/returns.js", "factorial recurses"),
                                                        ["factorial() returned 1"]), up
    await tools("debug_clear", all=True)
    top = await tools("debug_step", kind="out")  # from factorial(2): the deeper call's return is not its own
    assert top["returned"] == ["factorial() returned 2"], top
    recursing = at("returns.js", "countdown recurses")
    await tools("debug_break", **recursing, condition="n === 3")
    await tools("debug_continue")
    await tools("debug_clear", all=True)
    counted = await tools("debug_step", kind="out")  # past three deeper calls' returns
    assert counted["returned"] == ["countdown() returned 3"], counted
    await tools("debug_break", **recursing, condition="n === 300")
    await tools("debug_continue")
    await tools("debug_clear", all=True)
    deep = await tools("debug_step", kind="out")  # 300 deeper: past 200 returns, out a frame at a time
    assert deep["location"]["line"] == line_of("node/returns.js", "countdown call") + 1, deep
    assert "returned" not in deep, deep
    await tools("debug_break", **at("returns.js", "parsed body"))
    await tools("debug_continue")
    parsed = await tools("debug_step", kind="out")  # JSON.parse throws 40 times, the function catches it: on out
    assert parsed["returned"] == ["parsed() returned -2"], parsed
    await tools("debug_break", **at("returns.js", "checked throws"))
    await tools("debug_continue")
    await tools("debug_break", exception=["TypeError"])  # every throw pauses: a RangeError is resumed, but not now
    thrown = await tools("debug_step", kind="out")  # V8's own step out ran on to the program's end
    caught = line_of("node/returns.js", "checked error caught")
    assert (thrown["reason"], thrown["location"]["line"]) == ("step", caught), thrown
    assert thrown["returned"] == ["checked() raised RangeError: negative: -1"], thrown
    assert (await tools("debug_continue"))["exit_code"] == 0  # the agent's exception settings are back: no stop
    await tools("debug_terminate")


async def test_a_step_out_of_a_library_function_that_throws_says_what_left_it(tools: Tools, tmp_path: Path) -> None:
    """A throw in a blackboxed script (a package under node_modules) pauses nowhere, yet V8 steps into the caller's
    catch: the catch block's binding is what left the function."""
    library = tmp_path / "node_modules" / "strict-parse" / "index.js"
    library.parent.mkdir(parents=True)
    library.write_text("exports.parse = function parse(text) {\n  const trimmed = text.trim(); // parse starts\n"
                       "  if (!/^[0-9]+$/.test(trimmed)) throw new SyntaxError(`not a number: ${trimmed}`);\n"
                       "  return Number(trimmed);\n};\n")
    main = tmp_path / "main.js"
    main.write_text("const { parse } = require('strict-parse');\nlet n = 0;\ntry {\n  n = parse(' x ');\n"
                    "} catch (error) {\n  n = -1; // caught\n}\nconsole.log(n);\n")
    first = await tools("debug_launch", program=str(main), breakpoints=[{"file": str(library), "line": 2}])
    assert first["location"]["function"] == "parse", first
    out = await tools("debug_step", kind="out")
    assert (out["location"]["file"], out["location"]["line"]) == (str(main), 6), out
    assert out["returned"] == ["parse() raised SyntaxError: not a number: x"], out
    await tools("debug_terminate")


async def test_a_file_whose_first_function_is_called_in_a_loop_runs_at_full_speed(tools: Tools) -> None:
    """The entry breakpoint polydbg sets on line 0 of a file with breakpoints bound in square()'s body (nothing
    before it at the top level): every one of its 200,000 calls paused and was resumed (2 ms each, ~7 minutes).
    The deadline guards a wait for the exit; the program needs a fraction of a second."""
    program = str(NODE / "first_function.js")
    report = await tools("debug_launch", program=program,
                         breakpoints=[{"file": program, "line": line_of("node/first_function.js", "// start")}])
    assert report["state"] == "stopped" and report["reason"] == "breakpoint", report
    done = await tools("debug_continue", timeout_s=60)
    assert done["state"] == "exited", done
    assert "total 5700000" in await tools.text("debug_output", stream="stdout"), done
    await tools("debug_terminate")


async def test_a_trace_on_a_line_the_agent_breaks_at_records_and_the_breakpoint_still_stops(tools: Tools) -> None:
    """V8 refuses a second breakpoint by the same URL and line ("Breakpoint at specified location already exists"):
    a trace point on a line with the agent's breakpoint was 'never bound', and nothing was traced."""
    program = str(PROGRAMS / "trace" / "hits.js")
    body = line_of("trace/hits.js", "// loop body")
    report = await tools("debug_launch", program=program, args=["5"],
                         breakpoints=[{"file": program, "line": line_of("trace/hits.js", "// before the loop")}])
    assert report["reason"] == "breakpoint", report
    await tools("debug_break", file=program, line=body, condition="i === 3")
    traced = await tools("debug_trace", points=[{"file": program, "line": body}], expressions=["i"], max_hits=10)
    assert traced["stopped_because"] == "stopped" and traced["total_hits"] == 4, traced  # i = 0..3, then the stop
    assert traced["report"]["location"]["line"] == body, traced
    await tools("debug_terminate")
