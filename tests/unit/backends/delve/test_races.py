"""A -race report as a stop (races.py): the report's text read from stderr in pieces, parsed into the stop's
message and details, and delve's stops inside the report turned into one stop at the racy line."""

from __future__ import annotations

import asyncio
from typing import Any

from polydbg.backends.base import StopEvent
from polydbg.backends.delve import races, stops
from polydbg.backends.kit.frames import FrameHandles
from polydbg.backends.kit.ordering import OrderedEvents
from tests.fakes import RecordingListener
from tests.unit.backends.dap.fake_adapter import FakeRequests

REPORT = """==================
WARNING: DATA RACE
Write at 0x0000006086c0 by goroutine 8:
  main.bump()
      /app/main.go:12 +0x4f
  main.worker()
      /app/main.go:20 +0x2c

Previous read at 0x0000006086c0 by main goroutine:
  main.main()
      /app/main.go:31 +0x16c

Goroutine 8 (running) created at:
  main.main()
      /app/main.go:28 +0x152
==================
"""


def test_a_report_is_kept_once_complete_whatever_pieces_it_arrives_in() -> None:
    text = races.RaceText()
    whole = "panic-free line of the program\n" + REPORT + "==================\nnot a race\n==================\n"
    for start in range(0, len(whole), 7):
        text.heard(whole[start:start + 7])
        if start + 7 < len(REPORT):
            assert text.reports == []
    assert len(text.reports) == 1 and text.reports[0][0] == "WARNING: DATA RACE"


async def test_the_report_of_a_stop_is_the_one_whose_access_is_at_its_line() -> None:
    text = races.RaceText()
    text.heard(REPORT.replace("main.go:12", "other.go:3"))
    waiting = asyncio.ensure_future(text.about("/app/main.go", 12, 5.0))
    await asyncio.sleep(0)
    assert not waiting.done()
    text.heard(REPORT)
    report = await waiting
    assert report is not None and "      /app/main.go:12 +0x4f" in report
    assert await text.about("/app/main.go", 12, 0.01) is None  # taken; the other one is not this line's


def test_the_detail_says_both_accesses_and_their_stacks_innermost_first() -> None:
    text = races.RaceText()
    text.heard(REPORT)
    detail = races.detail(text.reports[0], 19)
    assert detail.type == "data race"
    assert detail.message == "write at 0x6086c0 by goroutine 8 (thread 19) races with previous read by main goroutine"
    assert detail.details[:3] == (
        "write by goroutine 8 (thread 19): main.bump at main.go:12 ← main.worker at main.go:20",
        "previous read by main goroutine: main.main at main.go:31",
        "goroutine 8 created at: main.main at main.go:28")
    assert "debug_output" in detail.details[-1]
    assert "debug_output" in races.detail(None, 19).message


def _race_stops(requests: FakeRequests) -> tuple[races.RaceStops, RecordingListener, stops.DelveStops]:
    listener = RecordingListener()
    ordered = OrderedEvents(listener)

    def event(body: dict[str, Any]) -> StopEvent:
        return StopEvent(str(body.get("reason")), body.get("threadId"), body.get("description"), body.get("text"))
    delve_stops = stops.DelveStops(ordered, FrameHandles(), requests, event, lambda: True, lambda cause: None)
    found = races.RaceStops(requests, ordered.refine, delve_stops.take, lambda: None,
                            races.SharedInstructions(requests).send)
    found.symbolizer_id = 1
    return found, listener, delve_stops


class _Resumes:
    """delve's ``continue`` as the fake answers it, each one an event a test waits for."""

    def __init__(self) -> None:
        self.event = asyncio.Event()

    def __call__(self, arguments: dict[str, Any]) -> dict[str, Any]:
        self.event.set()
        return {}

    async def next(self) -> None:
        await asyncio.wait_for(self.event.wait(), 2.0)
        self.event.clear()


def _disassembled(arguments: dict[str, Any]) -> dict[str, Any]:
    """goexit's pc (0x100) follows a NOP; the access's (0x200) a call into the race detector."""
    after = int(arguments["memoryReference"], 16)
    if after == 0x201:
        return {"instructions": [{"address": "0x1fc", "instructionBytes": "e8aabbccdd", "line": 12,
                                  "instruction": "CALL runtime.racewrite(SB)", "location": {"path": "/app/main.go"}}]}
    return {"instructions": [{"address": hex(after - 1), "instructionBytes": "90", "instruction": "NOPL"}]}


async def test_the_stop_is_where_the_racing_goroutine_comes_back_from_the_detector() -> None:
    pcs = iter(["256 = 0x100", "512 = 0x200", "768 = 0x300"])
    resumes = _Resumes()
    requests = FakeRequests(stackTrace={"stackFrames": [{"id": 1000, "name": "runtime.raceSymbolizeCode"}]},
                            evaluate=lambda arguments: {"result": next(pcs)}, disassemble=_disassembled,
                            setInstructionBreakpoints={"breakpoints": [{"id": 7, "verified": True}]},
                            **{"continue": resumes})
    found, listener, _ = _race_stops(requests)
    for _ in range(3):  # goexit, the access, a frame of another stack: each continued, unseen
        assert found.claims({"reason": "function breakpoint", "threadId": 20, "hitBreakpointIds": [1]})
        await resumes.next()
    placed = [arguments for command, arguments, _ in requests.sent if command == "setInstructionBreakpoints"]
    assert placed == [{"breakpoints": [{"instructionReference": "0x201"}]}]  # only after the call into the detector
    assert found.claims({"reason": "instruction breakpoint", "threadId": 21, "hitBreakpointIds": [7]})
    await resumes.next()  # another goroutine passing the same line: continued
    assert listener.events == [] and requests.commands().count("continue") == 4
    found.text.heard(REPORT)
    assert found.claims({"reason": "instruction breakpoint", "threadId": 20, "hitBreakpointIds": [7]})
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    message = "write at 0x6086c0 by goroutine 8 (thread 20) races with previous read by main goroutine"
    assert listener.events == [("stopped", StopEvent("exception", 20, "data race", message))]
    detail = found.detail_of(20)
    assert detail is not None and detail.details[0].startswith("write by goroutine 8 (thread 20): main.bump")
    assert requests.sent[-1][:2] == ("setInstructionBreakpoints", {"breakpoints": []})
    assert not found.claims({"reason": "breakpoint", "threadId": 20, "hitBreakpointIds": [3]})


async def test_a_racing_goroutine_that_comes_back_after_the_next_report_began_still_stops() -> None:
    pcs = iter(["512 = 0x200", "768 = 0x300"])
    resumes = _Resumes()
    requests = FakeRequests(stackTrace={"stackFrames": [{"id": 1000, "name": "runtime.raceSymbolizeCode"}]},
                            evaluate=lambda arguments: {"result": next(pcs)}, disassemble=_disassembled,
                            setInstructionBreakpoints=lambda arguments: {"breakpoints": [
                                {"id": 7 + n, "verified": True} for n, _ in enumerate(arguments["breakpoints"])]},
                            **{"continue": resumes})
    found, listener, _ = _race_stops(requests)
    found.claims({"reason": "function breakpoint", "threadId": 20, "hitBreakpointIds": [1]})
    await resumes.next()
    found.text.heard(REPORT)  # goroutine 20's report printed; another begins before it comes back
    found.claims({"reason": "function breakpoint", "threadId": 21, "hitBreakpointIds": [1]})
    await resumes.next()
    assert found.claims({"reason": "instruction breakpoint", "threadId": 20, "hitBreakpointIds": [7]})
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    assert listener.events[0][1].thread_id == 20 and listener.events[0][1].description == "data race"


async def test_a_race_stop_s_instruction_breakpoints_and_a_call_trace_s_are_sent_together() -> None:
    def bound(arguments: dict[str, Any]) -> dict[str, Any]:  # delve numbers them in order; 0x30 binds nowhere
        return {"breakpoints": [{"id": 10 + index, "verified": b["instructionReference"] != "0x30"}
                                for index, b in enumerate(arguments["breakpoints"])]}
    requests = FakeRequests(setInstructionBreakpoints=bound)
    shared = races.SharedInstructions(requests)
    assert await shared.send("calls", [0x20, 0x30]) == {0x20: 10}
    assert await shared.send("races", [0x10]) == {0x10: 10}
    assert requests.sent[-1][:2] == ("setInstructionBreakpoints", {"breakpoints": [
        {"instructionReference": "0x10"}, {"instructionReference": "0x20"}, {"instructionReference": "0x30"}]})
    assert await shared.send("races", []) == {}
    assert requests.sent[-1][1] == {"breakpoints": [{"instructionReference": "0x20"}, {"instructionReference": "0x30"}]}
