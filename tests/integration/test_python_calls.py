"""Call traces of a Python program through the MCP tools, on debugpy (tests/programs/calls/dates.py): a launch's
trace records the whole run from its first line (recursion, threads, a callee that raises, a ``__repr__`` that
calls traced code and records nothing, a bare name only in the program's code, a library's function by its
module), ``debug_trace(functions=…)`` begun at a stop records the stopped thread
with callees to a depth, a misspelt name is refused with the closest ones before anything runs, ``max_hits`` ends a
100,000-call run exactly, and a test run by name answers its failure with what the code under test was called
with."""

from __future__ import annotations

import pytest

from tests.conftest import PROGRAMS, Tools, line_of

pytestmark = pytest.mark.anyio

DATES = str(PROGRAMS / "calls" / "dates.py")


async def test_a_launch_trace_records_the_whole_run_with_recursion_threads_and_exceptions(tools: Tools) -> None:
    report = await tools("debug_launch", program=DATES,
                         trace=["parse_date", "dates.parse_month", "fib", "worker", "shout", "inner", "json.dumps"])
    assert report["state"] == "exited", report
    trace = report["trace"]
    summary = "\n".join(trace["summary"])
    assert "parse_date: 3 calls; args s='2024-01-15' ×1, s='2024-13-01' ×1, s='2024-02-30' ×1; returned " \
           "(2024, 1, 15) ×1, (2024, 2, 30) ×1; raised Month ×1" in summary, summary
    # Loud's __repr__ calls parse_month while its value is written: that call is the recorder's, not the program's
    assert "parse_month: 3 calls" in summary, summary
    assert "fib: 29 calls" in summary and "threads MainThread ×15, worker-4 ×9, worker-3 ×5" in summary, summary
    assert "shout: 1 call; args value=Loud(1) ×1" in summary, summary
    assert "inner: 1 call; args n=1 ×1; returned '{\"n\": 1}' ×1" in summary, summary  # not typing's inner
    assert "dumps: 1 call; args obj={'n': 1}, skipkeys=False" in summary, summary  # not pydevd's own
    rows = (await tools("debug_output", stream="trace", max_bytes=30_000))["text"].splitlines()
    assert rows[0].startswith("trace 1: calls of parse_date, dates.parse_month"), rows
    calls = rows[1:]
    assert len(calls) == trace["calls"] == 3 + 3 + 29 + 2 + 1 + 1 + 1, calls
    assert calls[0].startswith("parse_date(s='2024-01-15') → (2024, 1, 15)  ← main (dates.py:"), calls
    assert calls[1].startswith("parse_month(text='01') → 1  ← parse_date (dates.py:"), calls  # in call order
    assert calls[3].startswith("parse_month(text='13') → raised Month: month must be in 1..12, not 13"), calls
    assert calls[2].startswith("parse_date(s='2024-13-01') → raised Month: month must be in 1..12, not 13"), calls
    await tools("debug_terminate")


async def test_names_of_one_function_record_it_once_and_none_reads_never_called(tools: Tools) -> None:
    report = await tools("debug_launch", program=DATES, trace=["fib", "dates.fib", "dates.py:fib"])
    trace = report["trace"]
    assert trace["calls"] == 29 and trace["summary"][0].startswith("fib: 29 calls"), trace
    assert "never called" not in (trace.get("note") or ""), trace  # dates.fib and dates.py:fib are fib
    await tools("debug_terminate")


async def test_calls_and_the_raised_log_in_one_launch_each_name_the_exception(tools: Tools) -> None:
    """The raised log is an exception breakpoint: after pydevd handles one it sets its own trace function on the
    frames (pydevd_frame's set_trace_for_frame_and_parents), which lost the recorder's: the call read 'raised an
    exception', without its type and message."""
    report = await tools("debug_launch", program=DATES, trace=["parse_date", "raised"])
    trace = report["trace"]
    assert trace["calls"] == 3 and trace["raised"] == 1, trace
    assert trace["rows"][1].startswith("parse_date(s='2024-13-01') → raised Month: month must be in 1..12, not 13"), \
        trace
    raised, caught = line_of("calls/dates.py", "raise Month"), line_of("calls/dates.py", "except ValueError as error")
    assert trace["raised_rows"] == [f"Month: month must be in 1..12, not 13 at dates.py:{raised} in parse_month → "
                                    f"caught in main (dates.py:{caught})"], trace
    await tools("debug_terminate")


async def test_a_trace_begun_at_a_stop_records_callees_to_its_depth_and_refuses_a_misspelt_name(
        tools: Tools) -> None:
    await tools("debug_launch", program=DATES, breakpoints=[{"file": DATES, "line": line_of("calls/dates.py",
                                                                                              "# dates")}])
    both = await tools.error("debug_trace", functions=["parse_date"], expressions=["s"])
    assert "pass at least one point {file, line} and one expression, or functions (or both)" in both, both
    refused = await tools.error("debug_trace", functions=["parse_dat"])
    assert "parse_dat (closest: parse_date" in refused, refused
    assert (await tools("debug_sessions"))["sessions"][0]["state"] == "stopped"  # nothing ran
    result = await tools("debug_trace", functions=["parse_date"], depth=1)
    assert result["stopped_because"] == "exited", result
    assert result["calls"]["rows"][:2] == [
        f"parse_date(s='2024-01-15') → (2024, 1, 15)  ← main (dates.py:{line_of('calls/dates.py', '# dates') + 3})"
        + result["calls"]["rows"][0].rsplit(")", 1)[1],
        "  parse_month(text='01') → 1" + result["calls"]["rows"][1].rsplit(" → 1", 1)[1]], result
    # int() and str.split are C functions: the callees are the Python ones
    assert sum(row.startswith("  parse_month(") for row in result["calls"]["rows"]) == 3, result
    await tools("debug_terminate")


async def test_points_and_functions_are_traced_in_one_run(tools: Tools) -> None:
    await tools("debug_launch", program=DATES, breakpoints=[{"file": DATES, "line": line_of("calls/dates.py",
                                                                                              "# dates")}])
    await tools("debug_clear", all=True)
    month = line_of("calls/dates.py", "month = int(text)")
    result = await tools("debug_trace", points=[{"file": DATES, "line": month}], expressions=["text"],
                         functions=["parse_date"])
    assert result["total_hits"] == 3 and result["calls"]["calls"] == 3, result
    text = await tools.text("debug_output", stream="trace", max_bytes=30_000)
    assert f"dates.py:{month} [MainThread]  text='13'" in text, text
    assert "parse_date(s='2024-13-01') → raised Month" in text, text
    await tools("debug_terminate")


async def test_a_session_that_records_no_calls_has_no_recorder(tools: Tools) -> None:
    """The recorder (its module, its thread) is in a program only once calls are recorded (a launch's trace, a
    debug_trace(functions=…)). (The 200 ms each stop took once it was, blamed on its thread, was pydevd waking
    another thread than the one it resumed: see the test of a resume and a step below.)"""
    await tools("debug_launch", program=DATES, args=["1000"],
                breakpoints=[{"file": DATES, "line": line_of("calls/dates.py", "total += fib(1)")}])
    for _ in range(3):
        assert (await tools("debug_continue"))["reason"] == "breakpoint"
    loaded = await tools("debug_evaluate", expression="__import__('sys').modules.get('_polydbg_calls') is None")
    assert loaded["value"] == "True", loaded  # no recorder (nor its thread) in a program that records no calls
    await tools("debug_terminate")


async def test_a_call_trace_of_a_running_program_records_at_once(tools: Tools) -> None:
    report = await tools("debug_launch", program=DATES, args=["2000000"])
    assert report["state"] == "running", report
    traced = await tools("debug_trace", functions=["fib"], max_hits=50, timeout_s=60)  # a stop made and hidden
    assert traced["stopped_because"] == "max_hits" and traced["calls"]["calls"] == 50, traced
    await tools("debug_terminate")


async def test_max_hits_ends_a_trace_of_a_hundred_thousand_calls_exactly(tools: Tools) -> None:
    await tools("debug_launch", program=DATES, args=["150000"],
                breakpoints=[{"file": DATES, "line": line_of("calls/dates.py", "# rounds")}])
    result = await tools("debug_trace", functions=["fib"], max_hits=100_000, timeout_s=120)
    assert result["stopped_because"] == "max_hits" and result["total_hits"] == 100_000, result
    assert result["calls"]["calls"] == 100_000 and result["calls"]["summary"][0].startswith(
        "fib: 100000 calls; args n=1 ×100000; returned 1 ×100000"), result
    chunk = await tools("debug_output", stream="trace", cursor=result["calls"]["more_cursor"], max_bytes=200)
    # the trace log keeps the last 4 MiB of rows: the first of these were dropped, and the read says so
    assert chunk["dropped"] > 0 and "\nfib(n=1) → 1  ← main (dates.py:" in chunk["text"], chunk
    await tools("debug_terminate")


async def test_a_test_run_by_name_answers_its_failure_with_the_calls_of_the_code_under_test(tools: Tools) -> None:
    report = await tools("debug_launch", test="tests/test_prices.py::TestBulk::test_bulk_discount[10]",
                         cwd=str(PROGRAMS / "pytests"), trace=["total", "parse_price"])
    assert report["state"] == "stopped" and report["location"]["function"] == "test_bulk_discount", report
    trace = report["trace"]
    assert trace["rows"] == [f"total(prices=[1.0], quantity=10) → 10.0  ← TestBulk.test_bulk_discount "
                             f"(tests/test_prices.py:{line_of('pytests/tests/test_prices.py', 'got = total')})"
                             + trace["rows"][0].rsplit(")", 1)[1]], trace
    assert trace["note"] == "never called: parse_price", trace
    await tools("debug_terminate")


# Each idle worker's resume, as debug_continue resumes a thread (pydevd's resume_threads): does it set the event that
# thread's suspension waits on? pydevd set the event of whichever thread's info its set of infos iterated last
RESUME_WAKES = (
    "(lambda life, names, threads: [t.name for t in threads"
    " if names.get_global_debugger().get_internal_queue_and_event(names.get_thread_id(t))[1].clear() is None"
    " and life.resume_threads(names.get_thread_id(t)) is None"
    " and names.get_global_debugger().get_internal_queue_and_event(names.get_thread_id(t))[1].is_set()])("
    "__import__('_pydevd_bundle.pydevd_thread_lifecycle', fromlist=['_']),"
    " __import__('_pydevd_bundle.pydevd_constants', fromlist=['_']),"
    " sorted((t for t in __import__('threading').enumerate() if t.name[0] == 'w'), key=lambda t: t.name))")
# A command the stopped thread runs (a step is one: it marks the thread running, then the thread waits on its event
# again): is that event set after it, so the thread looks at its state at once? (A no-op command here.)
COMMAND_LOOKS = (
    "(lambda comm, names, me: (names.get_global_debugger().get_internal_queue_and_event(me)[1].clear(),"
    " comm.InternalThreadCommand(me, lambda py_db: None).do_it(names.get_global_debugger()),"
    " names.get_global_debugger().get_internal_queue_and_event(me)[1].is_set())[2])("
    "__import__('_pydevd_bundle.pydevd_comm', fromlist=['_']), __import__('_pydevd_bundle.pydevd_constants',"
    " fromlist=['_']), __import__('_pydevd_bundle.pydevd_constants', fromlist=['_']).get_current_thread_id("
    "__import__('threading').current_thread()))")


async def test_a_resume_or_a_step_wakes_the_stopped_thread_at_once_in_a_program_that_records_calls(
        tools: Tools) -> None:
    """Each stop after a resume or a step arrived 0.2 s late (210 ms a debug_continue to the next hit and a step over,
    6 ms without) once the program recorded calls: pydevd set the event of the thread of the last info in its set,
    not the resumed one's, so that thread waited out its 0.2 s poll; which info came last hung on addresses, and the
    recorder's changed them."""
    idle = str(PROGRAMS / "calls" / "idle_workers.py")
    report = await tools("debug_launch", program=idle, trace=["worker"],
                         breakpoints=[{"file": idle, "line": line_of("calls/idle_workers.py", "# all wait")}])
    assert report["reason"] == "breakpoint", report
    woken = await tools("debug_evaluate", expression=RESUME_WAKES)
    assert woken["value"] == "['w0', 'w1', 'w2', 'w3']", woken
    looks = await tools("debug_evaluate", expression=COMMAND_LOOKS)
    assert looks["value"] == "True", looks
    await tools("debug_terminate")


async def test_a_package_s_public_name_records_its_submodule_s_function(tools: Tools) -> None:
    """humanize.ordinal is humanize.number.ordinal: a trace of the name the package exports recorded nothing and
    said the function was never called, and a function named exactly but not called yet read as misspelt (its
    note offered 'closest: discount')."""
    report = await tools("debug_launch", program=str(PROGRAMS / "calls" / "reexports" / "main.py"),
                         trace=["shop.total", "shop.pricing.discount"])
    trace = report["trace"]
    assert trace["rows"][0].startswith("total(prices=[1, 2]) → 3  ← <module> (main.py:"), trace
    assert trace["note"] == "never called: shop.pricing.discount", trace
    await tools("debug_terminate")


async def test_a_bare_name_of_a_library_s_function_is_offered_qualified(tools: Tools) -> None:
    """A bare name is the program's own code: the code under test installed in site-packages (dateutil's easter,
    beside freezegun's copy) recorded nothing, and the note offered only the program's own names."""
    report = await tools("debug_launch", program=DATES, trace=["dumps"])
    note = report["trace"]["note"]
    assert note.startswith("never called: dumps (closest: ") and "json.dumps" in note, report
    await tools("debug_terminate")
