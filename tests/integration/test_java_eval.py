"""The Java expression evaluator through the MCP tools, on a real JVM: method calls (the stale-frame
regression among them), Java's arithmetic, conditions per hit, logpoints, set_variable seen by the
program, and method calls refused on a thread debug_pause stopped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from polydbg.backends.java import calls
from polydbg.backends.java.backend import JavaBackend
from tests.conftest import PROGRAMS, Tools, line_of, require, text_of

JAVA = PROGRAMS / "java"
EVAL = str(JAVA / "Eval.java")


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


def at(marker: str, **options: Any) -> dict[str, Any]:
    return {"file": EVAL, "line": line_of("java/Eval.java", marker), **options}


def values(report: dict[str, Any]) -> dict[str, str]:
    return {v["name"]: v["value"] for v in report.get("locals") or report.get("variables") or []}


async def set_variable(tools: Tools, **arguments: Any) -> dict[str, Any]:
    """debug_set_variable (its ``name`` argument clashes with ``Tools.__call__``'s)."""
    result = await tools.client.call_tool("debug_set_variable", arguments)
    assert not result.is_error, f"debug_set_variable({arguments}) failed: {text_of(result)}"
    return dict(result.structured_content or {})


async def evaluate(tools: Tools, expression: str) -> str:
    return str((await tools("debug_evaluate", expression=expression))["value"])


async def test_method_calls_keep_the_frame_usable_and_java_arithmetic(tools: Tools) -> None:
    report = await tools("debug_launch", program=EVAL, breakpoints=[at("// after loop")])
    assert report["reason"] == "breakpoint", report
    assert await evaluate(tools, "name.length() + count") == "10"
    assert await evaluate(tools, "count") == "5"  # the frame is found again after the call ran the thread
    assert values(await tools("debug_variables", frame_id=0))["total"] == "45"
    cases = {
        "pet.speak()": '"tweety sings"', "pet.legs() * 10": "20", "pet instanceof Bird": "true",
        "((Animal) pet).name": '"tweety"', "words.get(0)": '"alpha"', "ages.get(\"ann\") + 1": "32",
        "boxed == 42": "true", "Integer.MAX_VALUE + 1": "-2147483648", "7 / 2": "3", "-7 % 3": "-1",
        "7.0 / 2": "3.5", "1 << 33": "2", "-1 >>> 28": "15", "big * 2": "2199023255552", "ratio * count": "1.25",
        "letter + 1": "82", "(char) (letter + 1)": "'R'", "flag && count > 3": "true", "counter": "7",
        "Eval.counter + 1": "8", 'GREETING + " there"': '"hi there"', "Math.max(count, 9)": "9",
        "twice(3)": "6", "twice(3L)": "9", 'twice("ab")': '"abab"', '"x" + 1 + 2': '"x12"', '1 + 2 + "x"': '"3x"',
        "numbers[1] + numbers.length": "4", "empty.length": "0", "nothing == null": "true",
        'name.equals("héllo")': "true", "name.charAt(1)": "'é'", 'count > 3 ? "big" : "small"': '"big"',
        'Integer.parseInt("12") + 1': "13"}
    for expression, expected in cases.items():
        assert await evaluate(tools, expression) == expected, expression
    for expression, expected in {
            "boom(1)": "threw java.lang.IllegalStateException: boom 1", "empty[0]": "out of bounds",
            "nothing.toString()": "NullPointerException", "x = 5": "assignment is not supported",
            "new Object()": "object creation (new) is not supported", "nosuch": "'nosuch' is not a local variable",
            "count +": "expected a value", 'Integer.parseInt("zz")': "NumberFormatException"}.items():
        said = await tools.error("debug_evaluate", expression=expression)
        assert expected in said, (expression, said)
    assert await evaluate(tools, "count") == "5"
    await tools("debug_terminate")


async def test_a_breakpoint_inside_a_called_method_does_not_stop_the_evaluation(tools: Tools) -> None:
    report = await tools("debug_launch", program=EVAL,
                         breakpoints=[at("// after loop"), at("return x; // inside boom")])
    assert report["location"]["line"] == line_of("java/Eval.java", "// after loop"), report
    assert await evaluate(tools, "boom(0) + 1") == "1"
    inside = await tools("debug_continue")  # the program's own call stops there
    assert inside["location"]["function"] == "Eval.boom" and values(inside) == {"x": "0"}, inside
    await tools("debug_terminate")


async def test_conditions_per_hit_broken_conditions_and_logpoints(tools: Tools) -> None:
    report = await tools("debug_launch", program=EVAL, breakpoints=[
        at("// loop body", condition="i == 6 && name.length() == 5"),
        at("// loop body", log_message="i={i} total={total} pet={pet.speak()} bad={nosuch}")])
    assert report["reason"] == "breakpoint" and values(report)["i"] == "6", report
    logged = report["output"]["logpoints"]  # a logpoint's lines, apart from the program's output
    assert "i=5 total=10 pet=tweety sings bad=<error: 'nosuch' is not a local variable" in logged, logged
    assert "i=6 total=15 " in logged, logged
    await tools("debug_terminate")
    said = await tools.error("debug_launch", program=EVAL, breakpoints=[at("// loop body", condition="i == ")])
    assert "condition 'i == ' is not evaluable Java" in said, said  # refused when set, not a silent never-stop
    broken = await tools("debug_launch", program=EVAL, breakpoints=[at("// loop body", condition="nosuch > 3")])
    assert broken["reason"] == "breakpoint", broken
    assert "condition 'nosuch > 3' could not be evaluated" in broken["description"], broken
    await tools("debug_terminate")


async def test_set_variable_on_locals_fields_and_elements_is_seen_by_the_program(tools: Tools) -> None:
    await tools("debug_launch", program=EVAL, breakpoints=[at("// loop body", condition="i == 9")])
    for name, value, shown in (("total", "1000", "1000"), ("name", '"changed ü"', '"changed ü"'),
                               ("ratio", "3", "3.0"), ("big", "count * 2", "10"), ("flag", "!flag", "false"),
                               ("boxed", "7", "7")):
        assert (await set_variable(tools, name=name, value=value))["value"] == shown, name
    said = text_of(await tools.client.call_tool("debug_set_variable", {"name": "count", "value": "2.5"}))
    assert "not assignable to an int without a cast" in said, said
    listing = {v["name"]: v for v in (await tools("debug_variables", frame_id=0))["variables"]}
    element = await set_variable(tools, ref=listing["numbers"]["ref"], name="[1]", value="99")
    assert element["value"] == "99", element
    field = await set_variable(tools, ref=listing["pet"]["ref"], name="name", value='"polly"')
    assert field["value"] == '"polly"', field
    done = await tools("debug_continue")
    text = done["output"]["text"]
    assert ('name=changed ü count=5 big=10 ratio=3.0 flag=false numbers[1]=99 pet=polly counter=7 total=1009 '
            'boxed=7') in text, text
    await tools("debug_terminate")


async def test_pause_refuses_method_calls_but_reads_values(tools: Tools) -> None:
    await tools("debug_launch", program=str(JAVA / "Busy.java"), timeout_s=1)
    paused = await tools("debug_pause")
    assert paused["location"]["function"] == "Busy.main", paused
    assert int(await evaluate(tools, "counter")) > 0
    said = await tools.error("debug_evaluate", expression="Long.toString(counter)")
    assert "debug_pause" in said and "breakpoint" in said, said
    await tools("debug_terminate")


async def test_stop_on_entry_then_trace_without_stopping(tools: Tools) -> None:
    entry = await tools("debug_launch", program=EVAL, stop_on_entry=True)
    assert entry["reason"] == "entry" and entry["location"]["function"] == "Eval.main", entry
    assert entry["location"]["line"] == line_of("java/Eval.java", 'String name = "héllo";'), entry
    traced = await tools("debug_trace", points=[{"file": EVAL, "line": line_of("java/Eval.java", "// loop body")}],
                         expressions=["i", "total * 2", "name.length()"], max_hits=3)
    assert [h["values"] for h in traced["hits"]] == [
        {"i": str(i), "total * 2": str(2 * sum(range(i))), "name.length()": "5"} for i in range(3)], traced
    await tools("debug_terminate")


async def until_answered(tools: Tools, expression: str) -> str:
    """The value of ``expression`` once the thread's call has returned (within a deadline)."""
    with anyio.fail_after(30):
        while True:
            result = await tools.client.call_tool("debug_evaluate", {"expression": expression})
            if not result.is_error:
                return str((result.structured_content or {})["value"])
            assert "still running in thread 1" in text_of(result), text_of(result)
            await anyio.sleep(0.05)


async def test_a_call_past_its_deadline_keeps_the_stop_and_gives_it_back_when_it_returns(
        tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    report = await tools("debug_launch", program=EVAL, breakpoints=[at("// after loop")])
    line = report["location"]["line"]
    go = tmp_path / "go"
    monkeypatch.setattr(calls, "INVOKE_TIMEOUT_S", 1.0)  # for the calls that never return by themselves
    said = await tools.error("debug_evaluate", expression=f'until("{go}")')
    monkeypatch.setattr(calls, "INVOKE_TIMEOUT_S", 5.0)
    assert "did not return within 1 s and is still running in thread 1" in said, said
    said = await tools.error("debug_evaluate", expression="count")  # at once, saying why (was: "no frame 0")
    assert "Eval.until(), called by an evaluation, is still running in thread 1" in said, said
    assert "debug_continue" in said and "debug_terminate" in said, said
    main = (await tools("debug_stack"))["threads"][0]
    assert [(f["function"], f["line"]) for f in main["frames"]] == [("Eval.main", line)], main  # where it stopped
    assert main["name"] == "main (stopped here; running Eval.until(), called by an evaluation)", main
    others = (await tools("debug_stack", all_threads=True))["threads"]
    assert any(t["frames"] and t["name"].startswith("Reference Handler") for t in others), others  # still readable
    go.touch()
    assert await until_answered(tools, "count") == "5"  # the call returned: the stop is whole again
    assert await evaluate(tools, f'until("{go}")') == '"released"'
    assert values(await tools("debug_variables", frame_id=0))["total"] == "45"

    later = tmp_path / "later"  # a call left running when the program is resumed: it runs on with it
    monkeypatch.setattr(calls, "INVOKE_TIMEOUT_S", 1.0)
    await tools.error("debug_evaluate", expression=f'until("{later}")')
    resumed = anyio.Event()
    original = JavaBackend.resume

    async def resume_and_tell(backend: JavaBackend, thread_id: int | None) -> None:
        await original(backend, thread_id)
        resumed.set()

    monkeypatch.setattr(JavaBackend, "resume", resume_and_tell)
    ended: dict[str, Any] = {}
    async with anyio.create_task_group() as group:
        async def resume() -> None:
            ended.update(await tools("debug_continue", timeout_s=60))

        group.start_soon(resume)
        with anyio.fail_after(30):
            await resumed.wait()
        later.touch()
    assert ended["state"] == "exited" and "total=45" in ended["output"]["text"], ended
    await tools("debug_terminate")


async def test_a_step_while_an_evaluation_s_call_runs_is_refused_at_once_naming_the_call(
        tools: Tools, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The step would end only once the call returns: it waited out its whole 30 s deadline, then said "running"."""
    report = await tools("debug_launch", program=EVAL, breakpoints=[at("// after loop")])
    line = report["location"]["line"]
    go = tmp_path / "go"
    monkeypatch.setattr(calls, "INVOKE_TIMEOUT_S", 1.0)
    await tools.error("debug_evaluate", expression=f'until("{go}")')
    monkeypatch.setattr(calls, "INVOKE_TIMEOUT_S", 5.0)
    with anyio.fail_after(5):
        said = await tools.error("debug_step", timeout_s=30)
    assert "thread 1 is running Eval.until(), called by an evaluation" in said, said
    assert "debug_continue" in said, said
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"
    go.touch()
    assert await until_answered(tools, "count") == "5"  # the call returned: the step goes now
    stepped = await tools("debug_step")
    assert stepped["state"] == "stopped" and stepped["location"]["line"] == line + 1, stepped
    await tools("debug_terminate")
