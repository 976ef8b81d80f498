"""A fake V8 inspector at the far end of an in-memory stream: a real ``CdpChannel`` talks to it, it
records each request and answers it (breakpoints get ids ``bp1``, ``bp2`` …; a URL breakpoint binds
at its line), and a test sends events from it."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.backends.kit.lifecycle import Lifecycle
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node.breakpoints import Breakpoints
from polydbg.backends.node.stops import Stops
from polydbg.backends.node.target import Target
from polydbg.backends.node.targets import Targets
from polydbg.cdp.client import CdpChannel
from polydbg.transport.streams import MemoryStream, memory_pair
from tests.fakes import RecordingListener


class FakeV8:
    def __init__(self) -> None:
        near: MemoryStream[dict[str, Any]]
        near, self._far = memory_pair()
        self.channel = CdpChannel(near, "fake node")
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answers: dict[str, dict[str, Any]] = {}  # method → a fixed answer
        self.after: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {}  # method → run after answering
        self.before: dict[str, Callable[[dict[str, Any]], Awaitable[None]]] = {}  # method → run before answering
        self._arrived = asyncio.Condition()
        self._breakpoints = 0
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.channel.start()
        self._task = asyncio.ensure_future(self._serve())

    async def _serve(self) -> None:
        while (message := await self._far.receive()) is not None:
            method, params = message["method"], message["params"]
            async with self._arrived:
                self.calls.append((method, params))
                self._arrived.notify_all()
            if method in self.before:
                await self.before[method](params)
            await self._far.send({"id": message["id"], "result": self._answer(method, params)})
            if method in self.after:
                await self.after[method](params)

    async def wait_for(self, method: str, count: int = 1) -> None:
        """Until ``method`` has been asked ``count`` times."""
        async with self._arrived:
            await self._arrived.wait_for(lambda: self.methods().count(method) >= count)

    def _answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method in self.answers:
            return self.answers[method]
        if method.startswith("Debugger.setBreakpoint"):
            self._breakpoints += 1
            answer: dict[str, Any] = {"breakpointId": f"bp{self._breakpoints}"}
            if method == "Debugger.setBreakpointByUrl" and "url" in params:
                answer["locations"] = [{"scriptId": "7", "lineNumber": params["lineNumber"], "columnNumber": 0}]
            return answer
        return {}

    async def event(self, method: str, params: dict[str, Any]) -> None:
        await self._far.send({"method": method, "params": params})

    def methods(self) -> list[str]:
        return [method for method, _ in self.calls]

    async def close(self) -> None:
        await self.channel.close("the test ended")
        if self._task is not None:
            self._task.cancel()


class Session:
    """The node backend's parts wired as ``NodeBackend`` wires them, one main target on a ``FakeV8``,
    and what the session heard."""

    def __init__(self) -> None:
        self.listener = RecordingListener()
        self.gate = StopGate(self.listener, lambda thread: thread)
        self.events = OrderedEvents(GatedListener(self.gate))
        self.life = Lifecycle("test", self.events)
        self.targets = Targets(self.life, self.gate, self.events, route=self._route,
                               configure=self._configure, forget=self._forget)
        self.breakpoints = Breakpoints(self.targets)
        self.stops = Stops(self.targets, self.breakpoints, self.life, self.gate)
        self.v8 = FakeV8()
        self.main: Target = self.targets.add(self.v8.channel, "main", "main", self.events)
        self.v8.start()

    def _route(self, target: Target) -> None:
        target.channel.on_event("Debugger.paused", lambda params: self.stops.on_paused(target, params))
        target.channel.on_event("Debugger.resumed", lambda _: self.stops.on_resumed(target))
        target.channel.on_event("Debugger.scriptParsed", lambda params: self.breakpoints.on_script(target, params))
        target.channel.on_event("Debugger.breakpointResolved",
                                lambda params: self.breakpoints.on_resolved(target, params))

    async def _configure(self, target: Target) -> None:
        await self.breakpoints.configure(target)

    def _forget(self, target: Target) -> None:
        self.breakpoints.forget(target)

    async def close(self) -> None:
        await self.v8.close()
        await self.life.end(_nothing)


async def _nothing() -> None:
    return None
