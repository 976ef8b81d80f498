"""Inspecting a stopped program: stack, variables (paged), evaluate, set, source, truncation.

Through the MCP layer against real debugpy.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import PROGRAMS, Tools, line_of, program, text_of, unavailable

STRUCTURES = program("structures.py")
TICKER = program("ticker.py")

Y_LINE = line_of("structures.py", "y = x * 2")
RETURN_LINE = line_of("structures.py", "return middle(1) + len(big)")
INNER_LINE = line_of("structures.py", 'return marker + data["k"]')
MIDDLE_CALL = line_of("structures.py", "return inner(depth + 1")
MAIN_CALL = line_of("structures.py", 'print("result", outer())')
MIDDLE_DEF = line_of("structures.py", "def middle(depth):")
TICK_LINE = line_of("ticker.py", "i = 0")


async def call_raw(tools: Tools, tool: str, arguments: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    """(is_error, text, structuredContent) of a call; for tools whose arguments include ``name``, which
    ``Tools.__call__(name, **arguments)`` cannot pass."""
    result = await tools.client.call_tool(tool, arguments)
    return bool(result.is_error), text_of(result), dict(result.structured_content or {})


async def set_variable(tools: Tools, **arguments: Any) -> dict[str, Any]:
    is_error, text, structured = await call_raw(tools, "debug_set_variable", arguments)
    assert not is_error, f"debug_set_variable({arguments}) failed: {text}"
    return structured


async def set_variable_error(tools: Tools, **arguments: Any) -> str:
    is_error, text, _ = await call_raw(tools, "debug_set_variable", arguments)
    assert is_error, f"debug_set_variable({arguments}) should have failed but returned: {text}"
    return text


def by_name(variables: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in variables}


def ref_of(report: dict[str, Any], name: str) -> int:
    ref = by_name(report["locals"])[name].get("ref")
    assert isinstance(ref, int) and ref > 0, f"{name} has no ref in {report['locals']}"
    return ref


async def stop_in_outer(tools: Tools, *extra_lines: int) -> dict[str, Any]:
    lines = [Y_LINE, *extra_lines]
    report = await tools("debug_launch", program=STRUCTURES,
                         breakpoints=[{"file": STRUCTURES, "line": line} for line in lines])
    assert report["state"] == "stopped"
    assert report["location"] == {"file": STRUCTURES, "line": Y_LINE, "function": "outer"}
    return report


async def stop_in_inner(tools: Tools) -> dict[str, Any]:
    report = await tools("debug_launch", program=STRUCTURES,
                         breakpoints=[{"file": STRUCTURES, "line": INNER_LINE}])
    assert report["state"] == "stopped"
    assert report["location"] == {"file": STRUCTURES, "line": INNER_LINE, "function": "inner"}
    return report


async def test_stack_lists_frames_innermost_first_and_pages(tools: Tools) -> None:
    await stop_in_inner(tools)
    stack = await tools("debug_stack")
    [thread] = stack["threads"]
    frames = thread["frames"]
    assert [f["function"] for f in frames[:4]] == ["inner", "middle", "outer", "<module>"]
    assert [f["index"] for f in frames] == list(range(len(frames)))
    assert [(f["file"], f["line"]) for f in frames[:4]] == [
        (STRUCTURES, INNER_LINE), (STRUCTURES, MIDDLE_CALL), (STRUCTURES, RETURN_LINE), (STRUCTURES, MAIN_CALL)]

    page = await tools("debug_stack", start=1, levels=2)
    [thread] = page["threads"]
    assert [(f["index"], f["function"]) for f in thread["frames"]] == [(1, "middle"), (2, "outer")]
    assert "start=3" in page["more"]

    last = await tools("debug_stack", start=3, levels=5)
    [thread] = last["threads"]
    assert thread["frames"][0] == {"index": 3, "function": "<module>", "file": STRUCTURES, "line": MAIN_CALL}
    assert "more" not in last

    # ``python structures.py`` under a debugger has exactly these four frames: no launcher or shim frames.
    [thread] = stack["threads"]
    assert [(f["function"], f["file"]) for f in thread["frames"]] == [
        ("inner", STRUCTURES), ("middle", STRUCTURES), ("outer", STRUCTURES), ("<module>", STRUCTURES)]
    assert thread.get("total") in (None, 4)
    await tools("debug_terminate")


async def test_variables_of_the_caller_frame_and_of_globals(tools: Tools) -> None:
    report = await stop_in_inner(tools)
    assert {v["name"]: v["value"] for v in report["locals"]} == {"data": "{'k': 1}", "depth": "2", "marker": "4"}

    caller = await tools("debug_variables", frame_id=1)
    assert {v["name"]: v["value"] for v in caller["variables"]} == {"depth": "1", "label": "'middle'"}
    grand = await tools("debug_variables", frame_id=2, filter=["x", "y"])
    assert {v["name"]: v["value"] for v in grand["variables"]} == {"x": "5", "y": "10"}

    globals_ = await tools("debug_variables", scope="globals", filter=["GLOBAL_SETTING"])
    assert globals_["scope"].lower().startswith("global")
    assert [(v["name"], v["value"]) for v in globals_["variables"]] == [("GLOBAL_SETTING", "'on'")]

    # Evaluating in the caller's frame sees the caller's variables.
    label = await tools("debug_evaluate", expression="label.upper()", frame_id=1)
    assert label["value"] == "'MIDDLE'"

    missing = await tools.error("debug_variables", frame_id=40)
    assert "frame" in missing
    await tools("debug_terminate")


async def test_expand_dict_list_and_object_by_ref(tools: Tools) -> None:
    report = await stop_in_outer(tools)

    mapping = await tools("debug_variables", ref=ref_of(report, "mapping"))
    entries = {v["name"].strip("'\""): v for v in mapping["variables"]}
    assert set(entries) == {"alpha", "beta"}
    assert entries["alpha"]["value"] == "1"
    assert entries["beta"]["value"] == "[1, 2, 3]"
    assert "more" not in mapping, mapping["more"]
    beta = await tools("debug_variables", ref=entries["beta"]["ref"])
    assert [(v["name"], v["value"]) for v in beta["variables"]] == [("0", "1"), ("1", "2"), ("2", "3")]

    items = await tools("debug_variables", ref=ref_of(report, "items"))
    assert [(v["name"], v["value"]) for v in items["variables"]] == [("0", "10"), ("1", "20"), ("2", "30")]
    assert items["total"] == 3
    assert "more" not in items

    point = await tools("debug_variables", ref=ref_of(report, "point"))
    members = {v["name"]: v["value"] for v in point["variables"]}
    assert members.get("x") == "3"
    assert members.get("y") == "4"
    await tools("debug_terminate")


async def test_big_list_is_paged(tools: Tools) -> None:
    report = await stop_in_outer(tools)
    big = ref_of(report, "big")

    page = await tools("debug_variables", ref=big, start=5000, count=10)
    assert [v["name"] for v in page["variables"]] == [str(n) for n in range(5000, 5010)]
    assert [v["value"] for v in page["variables"]] == [str(n) for n in range(5000, 5010)]
    assert page["total"] == 10_000
    assert page["start"] == 5000

    first = await tools("debug_variables", ref=big)
    assert [v["name"] for v in first["variables"]] == [str(n) for n in range(50)]
    assert [v["value"] for v in first["variables"]] == [str(n) for n in range(50)]
    assert first["total"] == 10_000
    assert f"ref={big}" in first["more"]
    assert "start=50" in first["more"]
    text = await tools.text("debug_variables", ref=big)
    assert "start=50" in text

    tail = await tools("debug_variables", ref=big, start=9995, count=50)
    assert [v["value"] for v in tail["variables"]] == [str(n) for n in range(9995, 10_000)]
    assert "more" not in tail
    await tools("debug_terminate")


async def test_evaluate_values_types_and_errors(tools: Tools) -> None:
    await stop_in_outer(tools)
    result = await tools("debug_evaluate", expression="x * 3")
    assert result["value"] == "15"
    assert result["type"] == "int"

    nested = await tools("debug_evaluate", expression="mapping['beta']")
    assert nested["value"] == "[1, 2, 3]"
    assert nested["type"] == "list"
    expanded = await tools("debug_variables", ref=nested["ref"])
    assert [v["value"] for v in expanded["variables"]] == ["1", "2", "3"]

    message = await tools.error("debug_evaluate", expression="x ===== 2")
    assert "SyntaxError" in message or "syntax" in message.lower()
    message = await tools.error("debug_evaluate", expression="no_such_name + 1")
    assert "no_such_name" in message

    # The session is unharmed by the failed evaluations.
    again = await tools("debug_evaluate", expression="x + 1")
    assert again["value"] == "6"
    step = await tools("debug_step")
    assert step["location"]["line"] == Y_LINE + 1
    assert by_name(step["locals"])["y"]["value"] == "10"
    await tools("debug_terminate")


async def test_set_variable_changes_what_the_program_computes(tools: Tools) -> None:
    await stop_in_outer(tools)
    updated = await set_variable(tools, name="x", value="100")
    assert updated["name"] == "x"
    assert updated["value"] == "100"
    seen = await tools("debug_evaluate", expression="x")
    assert seen["value"] == "100"

    stepped = await tools("debug_step")
    values = {v["name"]: v["value"] for v in stepped["locals"]}
    assert values["x"] == "100"
    assert values["y"] == "200"

    end = await tools("debug_continue", timeout_s=15)
    assert end["state"] == "exited"
    output = await tools("debug_output")
    assert "y is 200" in output["text"]

    await tools("debug_terminate")


async def test_set_variable_rejects_unknown_names_and_bad_values(tools: Tools) -> None:
    await stop_in_outer(tools)
    message = await set_variable_error(tools, name="no_such_variable", value="1")
    assert "no_such_variable" in message
    message = await set_variable_error(tools, name="x", value="1 +* ")
    assert "x" in message
    still = await tools("debug_evaluate", expression="x")
    assert still["value"] == "5"
    await tools("debug_terminate")


async def test_source_marks_current_line_and_breakpoints(tools: Tools) -> None:
    await stop_in_outer(tools, RETURN_LINE)
    around = await tools("debug_source")
    assert around["file"] == STRUCTURES
    assert around["start"] <= Y_LINE <= around["end"]
    marks = {}
    for text_line in around["text"].splitlines():
        number, rest = text_line[:len(str(around["end"]))], text_line[len(str(around["end"])):]
        marks[int(number)] = rest[:2]
    assert marks[Y_LINE] == ">*"
    assert marks[RETURN_LINE] == " *"
    assert all(mark == "  " for line, mark in marks.items() if line not in (Y_LINE, RETURN_LINE))
    assert len(marks) == around["end"] - around["start"] + 1

    window = await tools("debug_source", file=STRUCTURES, line=MIDDLE_DEF, context=2)
    assert (window["start"], window["end"]) == (MIDDLE_DEF - 2, MIDDLE_DEF + 2)
    assert window["total_lines"] == len(Path(STRUCTURES).read_text().splitlines())
    lines = window["text"].splitlines()
    assert len(lines) == 5
    assert lines[2].startswith(f"{MIDDLE_DEF}  def middle(depth):")
    assert ">" not in "".join(line[2:4] for line in lines)

    message = await tools.error("debug_source", file=STRUCTURES, line=10_000)
    assert "10000" in message
    await tools("debug_terminate")


async def test_long_values_are_truncated_in_the_stop_report(tools: Tools) -> None:
    report = await stop_in_outer(tools)
    long_text = by_name(report["locals"])["long_text"]["value"]
    assert long_text.endswith("…")
    assert long_text.startswith("'xxxx")
    assert len(long_text) <= 100
    big = by_name(report["locals"])["big"]["value"]
    assert big.endswith("…")
    assert len(big) <= 100
    text = await tools.text("debug_continue", to={"file": STRUCTURES, "line": Y_LINE + 1})
    assert len(text.encode()) < 4096

    # The full value is still available on request.
    full = await tools("debug_evaluate", expression="long_text")
    assert full["value"] == "'" + "x" * 500 + "'"
    assert full.get("truncated") in (None, False)
    await tools("debug_terminate")


async def test_inspection_while_running_asks_to_pause(tools: Tools) -> None:
    await tools("debug_launch", program=TICKER, breakpoints=[{"file": TICKER, "line": TICK_LINE}])
    await tools("debug_clear", all=True)
    running = await tools("debug_continue", timeout_s=0.5)
    assert running["state"] == "running"
    assert running["timed_out"] is True

    for tool, arguments in [("debug_variables", {}), ("debug_stack", {}), ("debug_evaluate", {"expression": "i"}),
                            ("debug_set_variable", {"name": "i", "value": "0"}), ("debug_step", {})]:
        is_error, message, _ = await call_raw(tools, tool, arguments)
        assert is_error, (tool, message)
        assert "running" in message, (tool, message)
        assert "debug_pause" in message, (tool, message)

    paused = await tools("debug_pause")
    assert paused["state"] == "stopped"
    assert paused["reason"] == "pause"
    assert paused["location"]["function"] == "main"
    value = await tools("debug_evaluate", expression="i > 0")
    assert value["value"] == "True"

    # The error text offers debug_continue "to wait for the next stop": on a running program it waits.
    await tools("debug_continue", timeout_s=0.3)
    waited = await tools("debug_continue", timeout_s=0.3)
    assert waited["state"] == "running"
    assert waited["timed_out"] is True
    await tools("debug_terminate")


async def test_the_report_shows_the_locals_of_the_current_line_first(tools: Tools) -> None:
    """Fifteen locals: the report cuts at twelve, and those the stopped line uses are never the ones cut."""
    path = program("many_locals.py")
    report = await tools("debug_launch", program=path,
                         breakpoints=[{"file": path, "line": line_of("many_locals.py", "# uses zulu")}])
    shown = [v["name"] for v in report["locals"]]
    assert "zulu" in shown and report["locals_more"] > 0, shown
    await tools("debug_terminate")


async def test_a_sqlite_row_shows_its_columns(tools: Tools) -> None:
    rows = program("rows.py")
    report = await tools("debug_launch", program=rows,
                         breakpoints=[{"file": rows, "line": line_of("rows.py", "# read the row")}])
    row = {v["name"]: v for v in report["locals"]}["row"]
    assert row["value"] == "Row(id=1, name='pear', price=1.5)", row  # was <sqlite3.Row object at 0x…>
    columns = await tools("debug_variables", ref=row["ref"])
    assert [(v["name"], v["value"]) for v in columns["variables"]] == [("id", "1"), ("name", "'pear'"),
                                                                       ("price", "1.5")]
    assert columns["total"] == 3  # was "(0 items)"
    rows = (await tools("debug_evaluate", expression="rows"))["value"]  # in a container, as alone
    assert rows == "[Row(id=1, name='pear', price=1.5), Row(id=2, name='fig', price=2.25)]", rows  # was <sqlite3.Row …
    await tools("debug_terminate")


async def test_a_thread_in_library_code_only_says_why_it_lists_no_frames_and_how_to_see_them(tools: Tools) -> None:
    """debugpy leaves library code out of stacks (justMyCode): a server's thread listed no frames and no reason."""
    server = program("serves_in_a_thread.py")
    await tools("debug_launch", program=server,
                breakpoints=[{"file": server, "line": line_of("serves_in_a_thread.py", "# stop here")}])
    listing = await tools("debug_stack", all_threads=True)
    serving = next(t for t in listing["threads"] if t["name"] == "serving")
    assert serving["frames"] == [], listing
    assert f"thread {serving['thread_id']} lists no frames: debug_stack(thread_id={serving['thread_id']}) says why" \
        in listing["more"], listing
    alone = await tools("debug_stack", thread_id=serving["thread_id"])
    assert alone["more"].startswith(f"thread {serving['thread_id']} lists no frames: it runs only library code"), alone
    expression = re.search(r'debug_evaluate\(expression="(.*)", thread_id=(\d+)\)$', alone["more"])
    assert expression is not None, alone  # in a thread that lists frames: thread_id made the frameless one current
    frames = await tools("debug_evaluate", expression=expression.group(1), thread_id=int(expression.group(2)))
    innermost = r"socketserver\.py:\d+ serve_forever', '[^']*selectors\.py:\d+ select'\]$"
    assert re.search(innermost, frames["value"]), frames
    await tools("debug_terminate")


DATA = PROGRAMS / "dataframes"


def data_python() -> str:
    """The interpreter of the data programs, with numpy and pandas (tests/programs/dataframes/.venv)."""
    python = DATA / ".venv" / "bin" / "python"
    if not python.exists() or subprocess.run([str(python), "-c", "import numpy, pandas"], capture_output=True,
                                             check=False).returncode != 0:
        unavailable("numpy and pandas are not in tests/programs/dataframes/.venv (.ci/run makes it: python3 -m venv "
                    "there, then pip install -r tests/programs/dataframes/requirements.txt)")
    return str(python)


async def test_dataframes_series_and_arrays_read_as_compact_summaries_with_paged_children(tools: Tools) -> None:
    frames = str(DATA / "frames.py")
    report = await tools("debug_launch", program=frames, python=data_python(),
                         breakpoints=[{"file": frames, "line": line_of("dataframes/frames.py", "# look here")}])
    assert report["state"] == "stopped", report
    assert len((await tools.text("debug_stack")).encode()) < 2048
    value = {v["name"]: v for v in report["locals"]}

    async def evaluated(expression: str) -> dict[str, Any]:
        return await tools("debug_evaluate", expression=expression)

    prices = await evaluated("prices")
    assert prices["value"].startswith("DataFrame 4 rows × 3 columns (fruit: object, price: float64, stock: int64); "
                                      "rows 0: ('pear', 1.5, 10), 1: ('fig', 2.25, 0)"), prices
    rows = await tools("debug_variables", ref=prices["ref"])
    assert [v["name"] for v in rows["variables"]] == ["0", "1", "2", "3"] and rows["total"] == 4
    assert rows["variables"][1]["value"] == "Series 1 (3 object) {fruit: 'fig', price: 2.25, stock: 0}"
    assert (await evaluated("price"))["value"] == "Series 'price' (4 float64) [1.5, 2.25, 0.8, 3.0]"
    assert value["grid"]["value"] == "ndarray (3, 4) int64 [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]"
    big = await evaluated("big")
    assert big["value"].startswith("ndarray (100000,) float64 [") and "…" in big["value"] and len(big["value"]) < 200
    page = await tools("debug_variables", ref=big["ref"], start=150, count=2)  # past the first 100: sliced
    assert page["total"] == 100_000 and [v["name"] for v in page["variables"]] == ["150", "151"], page
    assert page["variables"][0]["value"] == (await evaluated("big[150].item()"))["value"]
    labelled = await tools("debug_variables", ref=(await evaluated("long_frame"))["ref"], start=500, count=2)
    assert [v["name"] for v in labelled["variables"]] == ["r500", "r501"], labelled  # rows by their label
    assert labelled["variables"][0]["value"] == "Series 'r500' (1 int64) {n: 500}"
    # in a container each reads as alone, cut as a repr in a container is (pandas' repr held lines of its own)
    assert value["nested"]["value"].startswith("{'df': DataFrame 4 rows × 3 columns (fruit: "), value["nested"]
    nested = (await evaluated("nested"))["value"]
    assert nested.startswith("{'df': DataFrame 4 rows × 3 columns (fruit: object, price: float64, stock: int64); "
                             "rows 0: ('pear', 1.5, 10), 1: "), nested
    assert "'grid': ndarray (3, 4) int64 [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]], 'first': 1.5, " in nested
    assert nested.endswith("'index': RangeIndex(start=0, stop=4, step=1)}") and "\n" not in nested, nested
    await tools("debug_terminate")


async def test_a_program_that_does_not_use_numpy_or_pandas_does_not_get_them(tools: Tools) -> None:
    plain = str(DATA / "plain.py")
    report = await tools("debug_launch", program=plain, python=data_python(),
                         breakpoints=[{"file": plain, "line": line_of("dataframes/plain.py", "# stop here")}])
    await tools("debug_variables", ref={v["name"]: v for v in report["locals"]}["values"]["ref"])
    loaded = await tools("debug_evaluate", expression="[n for n in names if n in sys.modules]")
    assert loaded["value"] == "[]", loaded  # the debugger's value formatters import neither
    # and the program's import path has neither them nor debugpy on it
    path = await tools("debug_evaluate", expression="[p for p in sys.path if 'shims' in p or 'debugpy' in p]")
    assert path["value"] == "[]", path
    output = (await tools("debug_output"))["text"]
    assert "Warning" not in output and "pydevd" not in output, output  # debugpy accepted its copy of pydevd
    await tools("debug_terminate")


async def test_default_answers_fit_2_kb_and_say_how_to_get_the_rest(tools: Tools) -> None:
    """200 values of 300 characters listed 50 at a time (~16 KB), a 100,000-character string evaluated (4 KB):
    without a count or a cut asked for, an answer fits 2 KB, values are shortened before any is left out, and
    it says how to get the rest."""
    path = program("long_values.py")
    await tools("debug_launch", program=path, breakpoints=[{"file": path, "line": "# stop here"}])
    rows = next(v for v in (await tools("debug_variables"))["variables"] if v["name"] == "rows")
    listed = await tools.client.call_tool("debug_variables", {"ref": rows["ref"]})
    text = text_of(listed)
    assert len(text.encode()) <= 2048, len(text.encode())
    assert listed.structured_content is not None
    shown = listed.structured_content["variables"]
    assert len(shown) >= 5 and all(v.get("truncated") for v in shown), shown
    assert f"debug_variables(ref={rows['ref']}, start={len(shown)})" in text, text
    asked = await tools("debug_variables", ref=rows["ref"], count=50)  # an explicit count is honoured
    assert len(asked["variables"]) == 50
    evaluated = await tools.client.call_tool("debug_evaluate", {"expression": "text"})
    assert len(text_of(evaluated).encode()) <= 2048 and "truncated" in text_of(evaluated)
    await tools("debug_terminate")


async def test_a_step_out_of_or_over_a_call_reports_what_it_returned(tools: Tools) -> None:
    """debugpy lists a returned value among the caller's locals as "(return) add": the report says it apart."""
    returns = program("returns.py")
    await tools("debug_launch", program=returns, breakpoints=[{"file": returns, "line": line_of("returns.py",
                                                                                                  "# add returns")}])
    out = await tools("debug_step", kind="out")
    assert out["location"]["line"] == line_of("returns.py", "# first call") and out["returned"] == ["add() returned 6"]
    assert not [v for v in out["locals"] or [] if v["name"].startswith("(return)")], out
    await tools("debug_clear", all=True)
    over = await tools("debug_step", kind="over")
    assert over["returned"] == ["add() returned 6"], over  # the line's call, stepped over
    again = await tools("debug_step", kind="over")
    assert again["returned"] == ["add() returned 18"], again
    await tools("debug_terminate")
