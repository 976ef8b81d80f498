"""One Xdebug connection: one script run (a CLI program, a test run) or one web request, shown as a thread.

Xdebug 3.2 reads commands only while PHP is stopped (``supports_async`` is 0): at its start, at a break, and
at its end (``status="stopping"``). A continuation (``run``, ``step_*``) is answered when PHP breaks again;
until then nothing else may be sent, or it would wait in the socket until that break. So a request knows its
state, inspection is refused while it runs, and breakpoint changes made meanwhile are applied at its next break
(``Breakpoints.sync``) before the break is judged.
"""

from __future__ import annotations

import asyncio
import os
import urllib.parse
from collections.abc import Sequence

from polydbg.backends.base import Frame
from polydbg.backends.kit import timeouts
from polydbg.dbgp.client import DbgpClient, Element
from polydbg.errors import AdapterRequestError

STARTING, RUNNING, STOPPED, ENDED = "starting", "running", "stopped", "ended"
# frames of a test framework listed above the test's own (a failed assertion stops inside PHPUnit's Assert)
FRAMEWORK_DIRS = ("/PHPUnit/", "/vendor/phpunit/", "/vendor/sebastian/", "/SebastianBergmann/")


class PathMap:
    """Local paths ↔ the paths PHP runs the files under (``path_mappings`` {local: remote}); longest root wins."""

    def __init__(self, mappings: Sequence[tuple[str, str]] = ()) -> None:
        self._pairs = sorted(((os.path.normpath(a), os.path.normpath(b)) for a, b in mappings),
                             key=lambda pair: -len(pair[0]))

    def uri(self, local: str) -> str:
        path = os.path.abspath(local)
        for mine, theirs in self._pairs:
            if path == mine or path.startswith(mine + os.sep):
                path = theirs + path[len(mine):]
                break
        return "file://" + urllib.parse.quote(path)

    def local(self, uri: str | None) -> str | None:
        if not uri:
            return None
        if not uri.startswith("file://"):
            return uri  # "dbgp://1" (eval'd code), "xdebug://debug-eval"
        path = urllib.parse.unquote(uri[len("file://"):])
        for mine, theirs in sorted(self._pairs, key=lambda pair: -len(pair[1])):
            if path == theirs or path.startswith(theirs + os.sep):
                return mine + path[len(theirs):]
        return path


class Request:
    """A connection and what is known of it at its current stop."""

    def __init__(self, client: DbgpClient, thread_id: int, paths: PathMap) -> None:
        self.client = client
        self.thread_id = thread_id
        self.name = f"request {thread_id}"
        self.paths = paths
        self.state = STARTING
        self.stop: Element | None = None  # the answer that stopped it
        self.step: str | None = None  # the continuation that ran it ("run", "step_over", …)
        self.entry = False  # its first continuation is stop_on_entry's step
        self.test: str | None = None  # a test run's runner script: its and the framework's frames are not the user's
        self.generation = -1  # the breakpoints it has (Breakpoints.generation)
        self.native: dict[str, int] = {}  # Xdebug's breakpoint id → polydbg's
        self.pid: int | None = None
        self.returns = False  # Xdebug's breakpoint_include_return_value is on (for a step out)
        self.returned: Element | None = None  # what the call a step out left returned (its <property>)
        self._stack: list[Element] | None = None
        self._hidden = 0

    # -- commands while stopped -------------------------------------------------------------------------

    async def ask(self, command: str, args: Sequence[tuple[str, str]] = (), data: str | None = None) -> Element:
        if self.state in (RUNNING, ENDED):
            raise AdapterRequestError(command, self.not_stopped())
        return await self.client.request(command, args, data, timeouts.INSPECT_S)

    def not_stopped(self) -> str:
        if self.state == ENDED:
            return f"{self.name} has ended"
        return (f"{self.name} is running, and Xdebug reads nothing while PHP runs; wait for its stop "
                "(debug_continue), or set a breakpoint where it goes")

    def go(self, command: str) -> asyncio.Future[Element]:
        """Send a continuation; its answer is the next break (or the end), however long that takes."""
        self.state, self.step, self.stop = RUNNING, command, None
        self._stack = None
        self.returned = None
        return self.client.send(command)

    # -- the stack ------------------------------------------------------------------------------------

    async def stack(self) -> list[Element]:
        """The frames of the stop, innermost first, the ones hidden above frame 0 left out (``hidden``)."""
        if self._stack is None:
            frames = (await self.ask("stack_get")).findall("stack")
            self._hidden = self._to_hide(frames)
            self._stack = frames
        return self._stack[self._hidden:]

    def hidden(self) -> list[Element]:
        return (self._stack or [])[:self._hidden]

    def depth(self, index: int) -> int:
        """Xdebug's stack depth of the shown frame ``index``."""
        return index + self._hidden

    def _to_hide(self, frames: list[Element]) -> int:
        """At an exception stop, a PHP function's frame (``intdiv`` threw) sits on its caller's line: hidden. In a
        test run, PHPUnit's frames above the test's (a failed assertion throws in Assert)."""
        hidden = 0
        if self.returned is not None:  # a step out's stop, in the returning frame at its caller's line
            return 1 if len(frames) > 1 else 0
        message = self.stop.find("message") if self.stop is not None else None
        if message is None or not message.get("exception"):
            return 0
        while hidden < len(frames) - 1 and self.framework(frames[hidden]):
            hidden += 1
        while hidden < len(frames) - 1 and _same_place(frames[hidden], frames[hidden + 1]):
            hidden += 1
        return hidden

    def framework(self, element: Element) -> bool:
        """A frame of the test runner's (PHPUnit's code, its script), in a test run."""
        if self.test is None:
            return False
        file = element.get("filename") or ""
        return any(part in file for part in FRAMEWORK_DIRS) or self.paths.local(file) == self.test

    async def in_user_code(self) -> bool:
        """Whether any frame of the stop is the user's (a test run's failure rethrown inside PHPUnit is not)."""
        await self.stack()
        return not all(self.framework(f) or f.get("where") == "{main}" for f in self._stack or [])

    def frame(self, element: Element) -> Frame:
        line = element.get("lineno")
        return Frame(element.get("where") or "?", self.paths.local(element.get("filename")),
                     int(line) if line and line.isdigit() else None)


def _same_place(inner: Element, outer: Element) -> bool:
    return (inner.get("where") != "{main}" and inner.get("filename") == outer.get("filename")
            and inner.get("lineno") == outer.get("lineno"))
