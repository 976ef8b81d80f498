"""Breakpoints over DAP: by file, by function and on data, with polydbg's ids kept at the seam.

DAP replaces a whole group at once (a file's breakpoints, all function breakpoints, all data
breakpoints), so nothing is diffed here: each request sends the group, and the answers (one per
breakpoint, in order) bind the adapter's ids to polydbg's. Two ``IdMap``s keep those bindings — one
for breakpoints, one for data breakpoints, which adapters number apart — so a ``stopped`` event's
``hitBreakpointIds`` and a ``breakpoint`` event name polydbg's breakpoints.

A data breakpoint is resolved first (``dataBreakpointInfo`` names the ``dataId`` to watch, in a
frame); one that cannot be resolved gets a failed result of its own, and the rest are still set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from polydbg.backends.base import BreakpointResult, DataBreakpoint, FunctionBreakpoint, SourceBreakpoint
from polydbg.backends.dap import wire
from polydbg.backends.kit import timeouts
from polydbg.backends.kit.handles import IdMap

BREAKPOINT_TIMEOUT_PER_S = 0.05  # extra deadline per breakpoint in one request (1,500 take debugpy > 10 s)

S = TypeVar("S", SourceBreakpoint, FunctionBreakpoint, DataBreakpoint)


def breakpoints_timeout(count: int) -> float:
    """The deadline of one request setting ``count`` breakpoints."""
    return timeouts.INSPECT_S + BREAKPOINT_TIMEOUT_PER_S * count


class DapBreakpoints:
    def __init__(self, request: wire.Request) -> None:
        self._request = request
        self.ids: IdMap[int] = IdMap()  # polydbg id ↔ the adapter's breakpoint id
        self.data_ids: IdMap[int] = IdMap()  # polydbg id ↔ the adapter's data breakpoint id
        self._watched: dict[int, str] = {}  # polydbg id → the expression a data breakpoint watches

    @staticmethod
    def _bind(ids: IdMap[int], specs: list[S], answers: list[dict[str, Any]]) -> list[BreakpointResult]:
        """Results in spec order; each adapter id the answer gives is bound to the spec's polydbg id."""
        results = []
        for spec, answer in zip(specs, answers, strict=False):
            if isinstance(answer.get("id"), int):
                ids.bind(spec.id, answer["id"])
            results.append(wire.breakpoint_result(answer))
        return results

    async def set_source(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        sent = [{"line": bp.line, **wire.options(bp.condition, bp.hit_condition, bp.log_message)}
                for bp in breakpoints]
        body = await self._request("setBreakpoints", {"source": {"path": file}, "breakpoints": sent,
                                                      "lines": [b.line for b in breakpoints]},
                                   breakpoints_timeout(len(breakpoints)))
        return self._bind(self.ids, breakpoints, body.get("breakpoints", []))

    async def set_functions(self, breakpoints: list[FunctionBreakpoint]) -> list[BreakpointResult]:
        sent = [{"name": bp.name, **wire.options(bp.condition, bp.hit_condition, None)} for bp in breakpoints]
        body = await self._request("setFunctionBreakpoints", {"breakpoints": sent},
                                   breakpoints_timeout(len(breakpoints)))
        return self._bind(self.ids, breakpoints, body.get("breakpoints", []))

    async def set_data(self, breakpoints: list[DataBreakpoint], frame_args: dict[str, Any],
                       name_of: Callable[[str], str]) -> list[BreakpointResult]:
        """Resolve each expression with dataBreakpointInfo (``name_of`` spells it as the adapter wants it,
        in the frame ``frame_args`` names, if any), then replace the adapter's watchpoints."""
        resolved: list[DataBreakpoint] = []
        failed: dict[int, BreakpointResult] = {}
        for index, bp in enumerate(breakpoints):
            if bp.data_id is None:
                info = await self._request("dataBreakpointInfo", {"name": name_of(bp.expression), **frame_args})
                data_id = info.get("dataId")
                if not data_id:
                    reason = str(info.get("description") or "the debugger cannot watch it")
                    failed[index] = BreakpointResult(False, message=f"cannot watch {bp.expression!r}: {reason}"
                                                     + ("" if frame_args else " (pause the program first)"))
                    continue
                bp = bp._replace(data_id=str(data_id))
            resolved.append(bp)
        self._watched = {bp.id: bp.expression for bp in breakpoints}
        body = await self._request("setDataBreakpoints", {"breakpoints": [
            {"dataId": bp.data_id, "accessType": bp.access} for bp in resolved]})
        answers = iter(result._replace(data_id=bp.data_id) for bp, result in zip(
            resolved, self._bind(self.data_ids, resolved, body.get("breakpoints", [])), strict=False))
        return [failed[i] if i in failed else next(answers, BreakpointResult(False, message="no answer"))
                for i in range(len(breakpoints))]

    def hits(self, reason: str, native_ids: Any) -> tuple[int, ...]:
        """polydbg's ids of the breakpoints a stop names (data breakpoints when the reason says so)."""
        ids = self.data_ids if "data" in reason else self.ids
        return tuple(bp_id for n in native_ids or () if isinstance(n, int) and (bp_id := ids.id_of(n)) is not None)

    @property
    def watching(self) -> bool:
        """Data breakpoints were set in this session (some may be set still)."""
        return bool(self._watched)

    def watch_label(self, native_id: int) -> str | None:
        """The adapter's data breakpoint as the agent knows it: ``#3 r[0].name[0]`` (polydbg's id, what it watches)."""
        bp_id = self.data_ids.id_of(native_id)
        return None if bp_id is None else f"#{bp_id} {self._watched.get(bp_id, '')}".rstrip()

    def changed(self, body: dict[str, Any]) -> tuple[int, BreakpointResult] | None:
        """A ``breakpoint`` event about one of polydbg's breakpoints: its id and what it is now."""
        bp = body.get("breakpoint") or {}
        native = bp.get("id")
        bp_id = self.ids.id_of(native) if isinstance(native, int) else None
        return None if bp_id is None else (bp_id, wire.breakpoint_result(bp))
