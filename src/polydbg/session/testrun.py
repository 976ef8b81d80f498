"""A test run by name, as the session keeps it: the plan (``polydbg.testing``), when the run started, and its
verdict once the program has ended, judged once per run from the exit code and the tail of the output."""

from __future__ import annotations

import asyncio
import time

from polydbg.session.model import TestResult
from polydbg.session.output import OutputBuffer
from polydbg.testing import TestPlan, closest
from polydbg.testing.plan import NOT_FOUND

JUDGED_TAIL = 16 * 1024  # of the program's output: the runner's summary is at its end
SUMMARY_CHARS = 400  # of the runner's summary in the answer (debug_output has it all)
NAMES_S = 30.0  # to list the tests there are, for the closest to a name that matched none


class TestRun:
    __test__ = False  # not a test class, whatever pytest reads in its name

    def __init__(self, plan: TestPlan) -> None:
        self.plan = plan
        self.started = time.monotonic()
        self.filters: tuple[str, ...] = ()  # the exception filters the run was launched with: where its test fails
        self._result: TestResult | None = None

    async def restarted(self) -> None:
        """The test runs again: rebuilt first where the plan built it (the test runs as its code is now)."""
        if self.plan.rebuild is not None:
            await self.plan.rebuild()
        self.started = time.monotonic()
        self._result = None

    async def result(self, exit_code: int | None, output: OutputBuffer) -> TestResult:
        if self._result is not None:
            return self._result
        seconds = round(time.monotonic() - self.started, 2)
        cursor = max(output.first_cursor, output.total - JUDGED_TAIL)
        text = output.read(cursor, JUDGED_TAIL, frozenset({"stdout", "stderr"})).text
        verdict = self.plan.judge(exit_code, text)
        near = None
        if verdict.outcome == NOT_FOUND and self.plan.names is not None:
            try:
                near = closest(self.plan.name, await asyncio.wait_for(self.plan.names(), NAMES_S)) or None
            except asyncio.TimeoutError:
                near = None
        # a runner's line may carry a whole assertion message
        summary = verdict.summary if verdict.summary is None or len(verdict.summary) <= SUMMARY_CHARS \
            else verdict.summary[:SUMMARY_CHARS - 1] + "…"  # (inspection.clip's cut: core imports this module)
        self._result = TestResult(name=self.plan.name, runner=self.plan.runner, outcome=verdict.outcome,
                                  seconds=seconds, summary=summary, closest=near)
        return self._result
