"""A Go test's failure placed: which stops in testing's Fail are failures of their own, the frame Go's message
names (a t.Helper() function skipped as Go skips it), and the message read from what -test.v printed."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from polydbg.backends.delve import testfail

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


async def test_a_parents_fail_and_a_panics_fail_are_no_failures_of_their_own() -> None:
    failures = testfail.TestFailures()
    assert await failures.placed([FAIL, FAIL, ERRORF, TEST, RUNNER], failed_before) is None
    panicking = [FAIL, frame("testing.tRunner.func1.2", f"{GOROOT}/testing/testing.go", 1380),
                 frame("runtime.gopanic", f"{GOROOT}/runtime/panic.go", 884), TEST, RUNNER]
    assert await failures.placed(panicking, failed_before) is None


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
