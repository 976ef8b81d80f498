"""The targets of a session as they come and go: the program's main thread, its worker threads and its
child Node processes, each a ``Target`` the agent sees as a thread.

A worker is announced by its owner's ``NodeWorker.attachedToWorker`` (held at its start by
``waitForDebuggerOnStart``) and spoken to through the owner's connection (``WorkerStream``); one that
is the runtime's or the loader's own (``TOOLING_WORKER``: Node's module-hooks worker, esbuild's) is let
run and detached at once, never shown as a thread of the program; a child
process announces itself through ``boot.cjs`` (``children``) and gets a connection of its own. Either
is prepared (the same domains as the main target), given the session's breakpoints and exception
settings, and only then let run (``Runtime.runIfWaitingForDebugger``), so a breakpoint on its first
line stops it. Until it is let run it is *arriving*: ``debug_pause`` waits for arrivals (a target
still held at its start would evaluate the idle probe there and read as idle).

Thread ids count up from 1 (the main thread) and are never reused; a target that ends leaves the
table, and the agent is told (``[worker 2 (pool.js) ended]``, a child's exit code when it announced
one).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.kit import timeouts
from polydbg.backends.kit.gate import GatedListener, StopGate
from polydbg.backends.kit.lifecycle import Lifecycle
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.backends.node.launcher import http_address
from polydbg.backends.node.scripts import PathMap, Scripts, path_of
from polydbg.backends.node.target import MAIN_THREAD, REF_RANGE, Target
from polydbg.cdp.client import CdpChannel, WorkerStream
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

log = logging.getLogger(__name__)

BLACKBOX = ["^node:", "/node_modules/"]
# How many segments past an await, a .then or a timer V8 keeps of a stack (``Debugger.setAsyncCallStackDepth``),
# and how many frames it records of each (``Runtime.setMaxCallStackSizeToCapture``, 200 by default). Recording
# them costs V8 a hook on every promise, whatever the depth, and a stack walk of that many frames at each
# (bench/node_async_stacks.py, against the debugger without them): code that does nothing but await 4-7×
# slower (~5 µs an await), fs.promises reading a tree of files ~3×; the walk is what 16 frames saves (awaits
# 30 calls deep: 30× with 200, 14× with 16). A segment's innermost 16 frames hold the program's callers (a
# timer's creation stack has ~7 of Node's above them); an exception's stack trace is cut to as many.
ASYNC_DEPTH = 32
ASYNC_FRAMES_RECORDED = 16
# Workers that are the runtime's or the TypeScript loader's, never the program's: Node's module-hooks worker
# (node:internal/modules/esm/worker, what tsx under --import runs in) and esbuild's (tsx compiles with it).
TOOLING_WORKER = re.compile(r"^node:|/node_modules/(?:tsx|esbuild|@esbuild/[^/]+)/")
_GONE = (AdapterRequestError, AdapterGoneError, AdapterTimeoutError)


async def prepare(target: Target, timeout_s: float) -> None:
    """Enable what a target is debugged with, pipelined; an older Node lacks NodeRuntime or NodeWorker."""
    requests: list[tuple[str, dict[str, Any]]] = [
        ("Runtime.enable", {}), ("Debugger.enable", {"maxScriptsCacheSize": 10_000_000}),
        ("Debugger.setBlackboxPatterns", {"patterns": BLACKBOX}),
        ("Runtime.setMaxCallStackSizeToCapture", {"size": ASYNC_FRAMES_RECORDED}),
        ("Debugger.setAsyncCallStackDepth", {"maxDepth": ASYNC_DEPTH}),
        ("NodeWorker.enable", {"waitForDebuggerOnStart": True})]
    if target.kind != "worker":
        requests.append(("NodeRuntime.notifyWhenWaitingForDisconnect", {"enabled": True}))
    sent = [(method, target.channel.send(method, params)) for method, params in requests]
    for method, future in sent:
        with contextlib.suppress(AdapterRequestError):
            await target.channel.wait(future, method, timeout_s)


class Arrivals:
    """Children and workers being attached, not yet let run (a named set: ``debug_pause`` waits for it)."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def add(self, task: asyncio.Task[Any]) -> None:
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def __len__(self) -> int:
        return len(self._tasks)

    async def settled(self, timeout_s: float) -> None:
        """Wait, at most ``timeout_s``, until none is arriving (also those announced meanwhile)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while self._tasks and (remaining := deadline - loop.time()) > 0:
            await asyncio.wait(set(self._tasks), timeout=remaining)


class Targets:
    """The live targets by thread id, and the arrival and end of workers and child processes.

    ``route`` connects a new target's CDP events to the backend's parts, ``configure`` gives it the
    session's breakpoints and exception settings, ``forget`` drops what the parts hold of one that ended.
    """

    def __init__(self, life: Lifecycle, gate: StopGate, events: OrderedEvents, route: Callable[[Target], None],
                 configure: Callable[[Target], Awaitable[None]], forget: Callable[[Target], None]) -> None:
        self.paths = PathMap()  # an attach's path_mappings: scripts' paths are the local ones
        self.arrivals = Arrivals()
        self._life = life
        self._gate = gate
        self._events = events  # the program's: where news of targets is told
        self._route = route
        self._configure = configure
        self._forget = forget
        self._by_thread: dict[int, Target] = {}
        self._next_thread = MAIN_THREAD
        self._child_exits: dict[int, int] = {}  # pid → exit code a child announced

    # -- lookup -------------------------------------------------------------------------------------------

    @property
    def main(self) -> Target:
        main = self._by_thread.get(MAIN_THREAD)
        if main is None:
            raise AdapterGoneError("node is not connected")
        return main

    def find_main(self) -> Target | None:
        return self._by_thread.get(MAIN_THREAD)

    def find(self, thread_id: int) -> Target | None:
        return self._by_thread.get(thread_id)

    def get(self, thread_id: int | None) -> Target:
        """The target of ``thread_id``; with None, the one whose stop is shown (else the main one)."""
        if thread_id is None:
            shown = self._gate.shown
            return self._by_thread.get(shown, self.main) if shown is not None else self.main
        target = self._by_thread.get(thread_id)
        if target is None:
            raise AdapterRequestError("thread", f"thread {thread_id} has ended or never existed; debug_stack lists "
                                                "the live ones")
        return target

    def of_ref(self, ref: int) -> Target:
        """The target a value handle belongs to (by its range, see ``target``)."""
        base = ref // REF_RANGE
        target = self.main if base == 0 else self._by_thread.get(base)
        if target is None:
            raise AdapterRequestError("variables", f"ref {ref} belongs to a thread that has ended")
        return target

    def live(self) -> list[Target]:
        return [t for t in self._by_thread.values() if t.live]

    def all(self) -> list[Target]:
        """Every target still in the table, live or not."""
        return list(self._by_thread.values())

    # -- coming -------------------------------------------------------------------------------------------

    def add(self, channel: CdpChannel, kind: str, name: str, events: OrderedEvents, pid: int | None = None,
            parent: Target | None = None, inspector: str | None = None) -> Target:
        thread, self._next_thread = self._next_thread, self._next_thread + 1
        target = Target(thread, name, channel, events, kind, pid, parent, inspector, scripts=Scripts(self.paths))
        self._by_thread[thread] = target
        channel.on_event("Runtime.executionContextCreated", target.on_context)
        channel.on_event("NodeWorker.attachedToWorker", lambda params: self._on_worker(target, params))
        channel.on_event("NodeWorker.receivedMessageFromWorker", lambda params: self._worker_message(target, params))
        channel.on_event("NodeWorker.detachedFromWorker", lambda params: self._worker_detached(target, params))
        self._route(target)
        return target

    def _arriving(self, work: Awaitable[None]) -> None:
        self.arrivals.add(self._life.spawn(work))

    def _on_worker(self, owner: Target, params: dict[str, Any]) -> None:
        session = str(params.get("sessionId") or "")
        info = params.get("workerInfo") or {}
        if TOOLING_WORKER.search(str(info.get("url") or "")):
            log.info("node: not debugging %s's worker %s (%s)", owner.name, session, info.get("url"))
            message = json.dumps({"id": 1, "method": "Runtime.runIfWaitingForDebugger"})
            owner.channel.send("NodeWorker.sendMessageToWorker", {"sessionId": session, "message": message})
            owner.channel.send("NodeWorker.detach", {"sessionId": session})
            return
        where = path_of(str(info.get("url") or ""))
        label = os.path.basename(where) if where else str(info.get("title") or "worker")
        stream = owner.workers[session] = WorkerStream(owner.channel, session, f"node worker {session}")
        channel = CdpChannel(stream, stream.name)
        name = f"worker {info.get('workerId') or session} ({label})"
        if owner.kind != "main":
            name += f" of {owner.name}"
        target = self.add(channel, "worker", name, OrderedEvents(GatedListener(self._gate)), owner.pid, owner,
                          owner.inspector)
        target.held = bool(params.get("waitingForDebugger", True))
        channel.start()
        self._arriving(self._start(target, target.held))

    @staticmethod
    def _worker_message(owner: Target, params: dict[str, Any]) -> None:
        stream = owner.workers.get(str(params.get("sessionId") or ""))
        if stream is not None:
            stream.deliver(str(params.get("message") or ""))

    @staticmethod
    def _worker_detached(owner: Target, params: dict[str, Any]) -> None:
        stream = owner.workers.pop(str(params.get("sessionId") or ""), None)
        if stream is not None:
            stream.detached()

    def on_child_report(self, report: dict[str, Any]) -> None:
        """A line from ``boot.cjs``: a child Node process waiting for the debugger, or its exit code."""
        pid = int(report.get("pid") or 0)
        if "exit" in report:
            self._child_exits[pid] = int(report.get("exit") or 0)
            return
        url = str(report.get("url") or "")
        if not url.startswith("ws://") or self._life.ending:
            return
        argv = [str(a) for a in report.get("argv") or []]
        label = os.path.basename(argv[0]) if argv else "node"
        self._arriving(self._attach_child(pid, url, f"process {pid} ({label})"))

    async def _attach_child(self, pid: int, url: str, name: str) -> None:
        try:
            client = await CdpChannel.connect(url, f"node {pid}", timeouts.INSPECT_S)
        except AdapterGoneError as exc:
            self._events.on_output("console", f"[child {name} could not be debugged: {exc}]\n")
            return
        target = self.add(client, "process", name, OrderedEvents(GatedListener(self._gate)), pid,
                          inspector=http_address(url))
        target.held = True  # in boot.cjs's waitForDebugger
        def finished(_: dict[str, Any]) -> None:
            self._life.spawn(client.close("it finished"), f"{name} finished")
        client.on_event("NodeRuntime.waitingForDisconnect", finished)
        await self._start(target, True)

    async def _start(self, target: Target, waiting: bool) -> None:
        """A new worker or child process: the session's breakpoints and exception settings, then run it."""
        self._life.spawn(self._watch(target))
        try:
            await prepare(target, timeouts.INSPECT_S)
            await self._configure(target)
            self._events.on_output("console", f"[{target.name} started: debugged in this session as thread "
                                              f"{target.thread_id}]\n")
        except _GONE as exc:
            log.info("node: configuring %s failed: %s", target.name, exc)
        finally:
            if waiting and not target.channel.is_closed:
                with contextlib.suppress(*_GONE):
                    await target.request("Runtime.runIfWaitingForDebugger")
            target.held = False

    # -- going --------------------------------------------------------------------------------------------

    async def _watch(self, target: Target) -> None:
        await target.channel.closed.wait()
        self._ended(target)

    def _ended(self, target: Target) -> None:
        if target.ended:
            return
        target.ended = True
        target.events.cancel()
        self._by_thread.pop(target.thread_id, None)
        self._forget(target)
        for stream in target.workers.values():
            stream.detached()
        self._gate.ended(target.thread_id)
        if self._life.ending or self._life.terminated or target.kind == "main":
            return
        if target.kind == "process" and target.pid in self._child_exits:
            self._events.on_output("console", f"[{target.name} exited with code {self._child_exits[target.pid]}]\n")
        else:
            self._events.on_output("console", f"[{target.name} ended]\n")
