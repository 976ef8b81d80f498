"""A Go test's failure placed: which stops in testing's Fail are failures of their own, the frame Go's message
names (a t.Helper() function skipped as Go skips it), and the message read from what -test.v printed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from polydbg.backends.base import ExceptionDetail, StopEvent
from polydbg.backends.delve import stops, testfail
from polydbg.backends.kit.frames import FrameHandles
from polydbg.backends.kit.ordering import OrderedEvents
from tests.fakes import RecordingListener
from tests.unit.backends.dap.fake_adapter import FakeRequests

pytestmark = pytest.mark.anyio
GOROOT = "/usr/lib/go/src"


def frame(name: str, path: str, line: int) -> dict[str, Any]:
    return {"name": name, "source": {"path": path}, "line": line}


FAIL = frame(testfail.FAIL_FUNCTION, f"{GOROOT}/testing/testing.go", 816)
ERRORF = frame("testing.(*common).Errorf", f"{GOROOT}/testing/testing.go", 941)
HELPER = frame("pkg.checkEqual", "/p/pkg/prices_test.go", 47)
TEST = frame("pkg.TestHelper", "/p/pkg/prices_test.go", 55)
REQUIRE = frame("github.com/stretchr/testify/require.Equal", "/h/go/pkg/mod/github.com/x/require.go", 7)
FAIL_NOW = frame(testfail.FAIL_NOW, f"{GOROOT}/testing/testing.go", 847)
RUNNER = frame("testing.tRunner", f"{GOROOT}/testing/testing.go", 1446)


async def failed_before(expression: str, frame_id: int) -> str:
    assert expression == testfail.ALREADY_FAILED
    return "true"


async def test_the_frame_gos_message_names_is_frame_0_with_the_message() -> None:
    failures = testfail.TestFailures()
    failures.output("=== RUN   TestHelper\n    prices_test.go:55: got 20,\n        want 18\n")
    placed = await failures.placed([FAIL, ERRORF, HELPER, TEST, RUNNER], failed_before)
    assert placed is not None and placed.hidden == 3, placed  # the helper is hidden too: Go named its caller
    assert placed.detail.type == "test failed" and placed.detail.message == "got 20, want 18", placed
    assert placed.detail.details == ("got 20,", "want 18")


async def test_a_message_is_one_failures_only_and_waited_for_when_late() -> None:
    failures = testfail.TestFailures()
    failures.output("    prices_test.go:55: first\n")
    first = await failures.placed([FAIL, ERRORF, TEST, RUNNER], failed_before)
    assert first is not None and first.detail.message == "first"
    second = asyncio.ensure_future(failures.placed([FAIL, ERRORF, TEST, RUNNER], failed_before))
    await asyncio.sleep(0)
    assert not second.done()  # the same line failing again: its own message has not come through yet
    failures.output("    prices_test.go:55: second\n")
    placed = await second
    assert placed is not None and placed.detail.message == "second" and placed.hidden == 2


async def test_a_parents_a_panics_and_testings_own_fail_are_no_failures_of_their_own() -> None:
    failures = testfail.TestFailures()
    assert await failures.placed([FAIL, FAIL, ERRORF, TEST, RUNNER], failed_before) is None
    panicking = [FAIL, frame("testing.tRunner.func1.2", f"{GOROOT}/testing/testing.go", 1380),
                 frame("runtime.gopanic", f"{GOROOT}/runtime/panic.go", 884), TEST, RUNNER]
    assert await failures.placed(panicking, failed_before) is None
    race = [FAIL, frame("testing.tRunner.func1", f"{GOROOT}/testing/testing.go", 1436), RUNNER]
    assert await failures.placed(race, failed_before) is None  # testing's "race detected during execution"


async def test_without_a_message_the_first_frame_outside_testing_and_the_module_cache(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(testfail, "MESSAGE_WAIT_S", 0.0)
    assert_fail = frame("github.com/stretchr/testify/assert.Fail", "/h/go/pkg/mod/github.com/x/assert.go", 9)
    placed = await testfail.TestFailures().placed([FAIL, assert_fail, TEST, RUNNER], failed_before)
    assert placed is not None and placed.hidden == 2 and "nothing was logged" in placed.detail.message


async def test_an_assertion_librarys_failnow_after_its_own_failure_is_no_second_failure() -> None:
    failures = testfail.TestFailures()
    assert await failures.placed([FAIL, FAIL_NOW, REQUIRE, TEST, RUNNER], failed_before) is None
    failures.output("    prices_test.go:55: fatal\n")  # t.Fatalf in a test that failed before: its own failure
    fatal = await failures.placed([FAIL, FAIL_NOW, frame("testing.(*common).Fatalf", "t.go", 1), TEST], failed_before)
    assert fatal is not None and fatal.detail.message == "fatal"


def _stops(requests: FakeRequests) -> tuple[stops.DelveStops, testfail.TestFailures, RecordingListener]:
    listener = RecordingListener()
    found = stops.DelveStops(OrderedEvents(listener), FrameHandles(), requests, _event, lambda: True, lambda _: None)
    failures = testfail.TestFailures(found)
    failures.native_id = 7
    return found, failures, listener


def _event(body: dict[str, Any]) -> StopEvent:
    return StopEvent(reason=str(body.get("reason")), thread_id=body.get("threadId"),
                     description=body.get("description"), text=body.get("text"))


def _framed(*frames: dict[str, Any]) -> dict[str, Any]:
    return {"stackFrames": [{**frame, "id": 100 + index} for index, frame in enumerate(frames)]}


FAILED_AT_FAIL = {"reason": "function breakpoint", "threadId": 1, "hitBreakpointIds": [7]}


async def test_a_stop_in_fail_is_shown_at_the_tests_line_and_a_step_leaves_the_hidden_frames() -> None:
    requests = FakeRequests(stackTrace=[_framed(FAIL, ERRORF, TEST, RUNNER), _framed(ERRORF), _framed(TEST)],
                            stepOut={})
    found, failures, listener = _stops(requests)
    failures.output("    prices_test.go:55: got 20, want 18\n")
    found.take(FAILED_AT_FAIL)
    await asyncio.wait_for(listener.stopped.wait(), 2.0)
    assert listener.events == [("stopped", StopEvent("exception", 1, "test failed", "got 20, want 18"))]
    assert await found.hidden_frames(1) == 2 and [f.name for f in found.above(1)] == [FAIL["name"], ERRORF["name"]]
    assert found.moved_exception(1) == ExceptionDetail("test failed", "got 20, want 18")
    loop = asyncio.get_running_loop()

    def stepped_out(arguments: dict[str, Any]) -> dict[str, Any]:
        loop.call_soon(found.take, {"reason": "step", "threadId": 1})
        return {}

    requests._answers["stepOut"] = [stepped_out]
    assert await found.leave_hidden(1, "over")  # on the failing line still: the step is the caller's to make
    assert requests.commands()[-4:] == ["stepOut", "stackTrace", "stepOut", "stackTrace"]
    assert len(listener.events) == 1  # the step-outs' stops were nobody's news


async def test_a_parents_fail_is_resumed_unseen() -> None:
    resumed = asyncio.Event()

    def resume(arguments: dict[str, Any]) -> dict[str, Any]:
        resumed.set()
        return {}

    requests = FakeRequests(stackTrace=_framed(FAIL, FAIL, ERRORF, TEST, RUNNER), **{"continue": resume})
    found, _, listener = _stops(requests)
    found.take(FAILED_AT_FAIL)
    await asyncio.wait_for(resumed.wait(), 2.0)
    assert listener.events == [] and requests.commands() == ["stackTrace", "continue"] and not found.stopped


async def test_a_panic_in_a_test_run_hides_an_assertion_librarys_frames_and_the_standard_librarys() -> None:
    """In a test run the machinery hidden above a panic is testify's too, beside the runtime's and the standard
    library's (what every goroutine's hidden frames are made of)."""
    gopanic = frame("runtime.gopanic", f"{GOROOT}/runtime/panic.go", 884)
    index = frame("runtime.goPanicIndex", f"{GOROOT}/runtime/panic.go", 89)
    sort = frame("sort.Slice", f"{GOROOT}/sort/slice.go", 23)
    requests = FakeRequests(stackTrace=_framed(gopanic, index, REQUIRE, sort, TEST, RUNNER))
    found, _, listener = _stops(requests)
    found.take({"reason": "exception", "threadId": 1, "description": "panic", "text": '"index out of range"'})
    assert listener.events == [("stopped", StopEvent("exception", 1, "panic", "index out of range"))]
    assert await found.hidden_frames(1) == 4  # frame 0: the test's own
