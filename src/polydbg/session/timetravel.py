"""Time control at the session: recording started or stopped at a stop, and checkpoints (``debug_record``).

Running backwards is ``Execution.resume``/``step`` with ``reverse``: the same waits and the same report, only the
backend's request differs (``Backend.reverse``); a reload is ``reloading``. The backend contract is
``backends/timecontrol.py``.
"""

from __future__ import annotations

import os
from typing import Literal

from polydbg.backends.timecontrol import DEFAULT_RECORD_LIMIT
from polydbg.errors import UsageError
from polydbg.session.core import SessionCore
from polydbg.session.execution import Execution
from polydbg.session.inspection import Inspector
from polydbg.session.model import Ack, StopReport
from polydbg.session.report import Reporter

RecordRequest = Literal["start", "stop", "save", "restore"]


class TimeTravel:
    """``debug_record``: recording started and stopped at a stop, checkpoints saved and restored."""

    def __init__(self, core: SessionCore, execution: Execution, inspector: Inspector, reporter: Reporter) -> None:
        self.core = core
        self.execution = execution
        self.inspector = inspector
        self.reporter = reporter

    async def control(self, action: RecordRequest, checkpoint: int | None, timeout_s: float,
                      limit: int = DEFAULT_RECORD_LIMIT) -> Ack | StopReport:
        if (action == "restore") != (checkpoint is not None):
            raise UsageError("pass checkpoint (a number debug_record(\"save\") gave) with restore, and only then")
        life = self.core.life
        async with self.execution.lock:
            scope = life.stopped_scope()
            backend = self.core.backend
            if action == "restore":
                assert checkpoint is not None
                since = await self.execution.act(lambda: backend.restore(checkpoint))
            elif action == "save":
                number = await self.core.call(backend.checkpoint())
                here = await self.inspector.top_location(scope)
                where = f"{os.path.basename(here.file)}:{here.line}" if here.file else here.function or "here"
                return Ack(session_id=self.core.id, message=(
                    f"checkpoint {number} saved at {where}; debug_record(\"restore\", checkpoint={number}) returns "
                    "the program to it"))
            else:
                note = await self.core.call(backend.record(action, limit))
                return Ack(session_id=self.core.id, message=note)
        waited = await self.execution.wait_change(since, timeout_s, None)
        await self.execution.settle_end()
        return await self.reporter.report(timed_out=waited == "timeout", note=f"restored checkpoint {checkpoint}")
