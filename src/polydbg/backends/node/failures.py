"""Where a test fails: which exception pauses of a test run are its failure, and at which frame it is shown.

A test runner catches whatever a test throws, so to V8 every failure is a caught exception. Under the
``failures`` exception filter (``debug_launch(test=…)`` sets it) V8 pauses on caught exceptions too, and
each pause is judged here from its stacks and the scripts' sources (read once each), without running anything
in the program: a pause is the failure when the exception goes from the user's code into the test runner with
nothing catching it on the way. It is followed frame by frame outward from the first frame of the user's code
(an assertion library's frames above it are listed above the report's frame 0, the user's):

- a frame (the user's, a library's, Node's) whose pause lies in a ``try`` block with a ``catch``
  (``lexical.in_try``) catches it: no stop (``expect(fn).toThrow()``, ``assert.throws``, chai's ``throw``, a
  library's ``attempt(fn)``, the user's own try/catch); a ``try``/``finally`` passes it on;
- an async function's throw rejects its promise: it goes on to the caller only where the caller awaits the
  call right there (``await f()``), else (``expect(f()).rejects``) no stop; past an ``await`` already taken,
  V8's async stack trace lists the awaiting functions, which are followed the same way;
- reaching the runner's frame (node:test, jest-circus, jest-each, @vitest/runner, mocha) is the stop, also
  through a library the test called (a comparator thrown in inside jsdiff's loop);
- an assertion error (``…AssertionError``: node:assert's, chai's, jest's ``JestAssertionError``) thrown above
  the user's frames goes on from the user's frame; any other exception thrown there (assume's failure is a plain
  object made from ``Error.prototype``) only when no frame above the user's catches it (``caught_above``: a
  library's own exception, assume probing ``new Function("return ParallelArray")`` as it loads); a rejection made
  by a call (``reject(…)``, ``Promise.reject(…)``) is no throw and is not judged at all (it fails a test when
  awaited, and V8 does not pause there again).

What it costs: Node's and the dependencies' scripts stay blackboxed (``targets.BLACKBOX``), and V8 does not
pause on an exception thrown in a blackboxed frame and caught, so the runner's own caught exceptions never
pause; the assertion libraries known by name are let out of the blackbox (``BLACKBOX``), and so are the packages
the user's scripts import (``Imports``: whatever assertion library a test uses), until they have thrown
``PACKAGES_BUDGET`` exceptions that failed no test; the user's code pauses on each exception it throws, caught or
not. An error thrown in Node's or another dependency's code the test called (``fs.readFileSync`` of a missing
file) therefore does not stop: the verdict says the test failed.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterable
from typing import Any

from polydbg.backends.base import ExceptionDetail
from polydbg.backends.node import lexical
from polydbg.backends.node.scripts import position
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError

FILTER = "failures"
RUNNER = re.compile(r"^node:internal/test_runner/|/node_modules/(?:jest-circus|jest-jasmine2|jest-each|@vitest/runner"
                    r"|mocha)/")
# Node's scripts and the dependencies' stay blackboxed, but for the assertion libraries: their throws pause.
ASSERTING = ("expect", "@vitest/expect", "chai", "@jest/expect")
BLACKBOX = [r"^node:(?!assert$)", rf"^(?!.*/node_modules/(?:{'|'.join(ASSERTING)})/).*/node_modules/"]
# what a test file imports that is no library it asserts with: the runners' own packages
_RUNNERS_OWN = re.compile(r"^(?:mocha|vitest|jest|jest-.*|@jest/.*|@vitest/.*|@types/.*|ts-node|tsx|typescript)$")
_IMPORTED = re.compile(r"""(?:\brequire|\bimport|__vi_ssr_(?:dynamic_)?import__)\s*\(\s*(['"])([^'"\s]+)\1"""
                       r"""|(?:\bfrom|^\s*import)\s*(['"])([^'"\s]+)\3""", re.MULTILINE)
_PACKAGE = re.compile(r"^(?:@[a-z0-9][\w.~-]*/)?[a-z0-9][\w.~-]*", re.IGNORECASE)
_SOURCE_CHARS = 1024 * 1024  # of a user's script read for its imports
_NAMES = 500  # packages let out at most (each a word of the pattern V8 matches every script's URL with)
PACKAGES_BUDGET = 100  # exception pauses in the imported packages' code that fail no test, before they are hidden
PACKAGES_OVER_BUDGET = (f"[polydbg: the packages the tests import threw {PACKAGES_BUDGET} exceptions that failed no "
                        "test; they are hidden again, so an assertion library polydbg does not know by name (assume, "
                        "should) no longer stops at a failing check: set a breakpoint in the test, or run it alone]\n")
_PASSES_ON = re.compile(r"^node:(?:async_hooks|internal/async_hooks|internal/timers|internal/process/task_queues"
                        r"|events)$")
# A runner whose main process runs no test (vitest: its tests run in a worker, a thread or a forked process): there a
# caught exception is no test's failure, and pausing on them cost vitest's start ~0.7 s (vite's ``new URL`` tries,
# ~260 of them in Node's internals, which cannot be blackboxed: ``in_users_code``); it pauses on uncaught ones only.
_WORKERS_RUN_TESTS = re.compile(r"[/\\]node_modules[/\\]vitest[/\\]vitest\.mjs$")


def workers_run_tests(program: str | None) -> bool:
    """Whether a test run's program is a runner's entry that runs no test in its own process."""
    return program is not None and _WORKERS_RUN_TESTS.search(program) is not None


BUDGET = 200  # exception pauses that fail no test, before caught exceptions stop pausing (4-16 ms each)
OVER_BUDGET = (f"[polydbg: the program threw {BUDGET} exceptions that failed no test; caught exceptions no "
               "longer pause it, so a test failing from here on is not stopped at: set a breakpoint in it, or run it "
               "alone by name]\n")
_ASSERTION = re.compile(r"AssertionError$")
_MADE_BY_CALL = re.compile(r"[\w$]*[Rr]ej(?:ect)?[\w$]*\s*\(")  # reject(…), Promise.reject(…), rej(…)
_MESSAGE_CHARS = 1000
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
# expected and actual, where the assertion library keeps them: jest's matcherResult, node:assert's and chai's own
_FACTS = """function () {
  const show = (v) => {
    try {
      const s = typeof v === "function" || typeof v === "symbol" ? String(v) : JSON.stringify(v);
      return s === undefined ? String(v) : s.length > 300 ? s.slice(0, 300) + "…" : s;
    } catch (_) { return String(v); }
  };
  const e = this, out = { message: String(e !== null && typeof e === "object" && "message" in e ? e.message : e) };
  const m = e && e.matcherResult;
  const from = m && typeof m === "object" && ("expected" in m || "actual" in m) ? m : e;
  if (from && typeof from === "object" && "expected" in from) out.expected = show(from.expected);
  if (from && typeof from === "object" && "actual" in from) out.actual = show(from.actual);
  return out;
}"""


class _Link:
    """A frame the exception goes through: a paused frame, or an awaiting one of the async stack trace."""

    def __init__(self, frame: dict[str, Any], target: Target, paused: bool) -> None:
        self.script_id, self.line, self.column = position(frame.get("location") or frame)
        script = target.scripts.get(self.script_id)
        self.url = script.url if script is not None else str(frame.get("url") or "")
        self.user = target.scripts.is_user_code(self.script_id, self.line, self.column)
        self.place = (self.script_id, self.line, self.column)
        start = frame.get("functionLocation") if paused else None
        self.start = position(start)[1:] if isinstance(start, dict) else None


async def failing_frame(target: Target) -> int | None:
    """The index of the user's frame to stop at when this exception pause is a test's failure, else None."""
    frames = target.frames
    data = target.pause_data or {}
    chain = [_Link(frame, target, True) for frame in frames]
    first = next((i for i, link in enumerate(chain) if link.user), None)
    if first is None or (first > 0 and not _ASSERTION.search(str(data.get("className") or ""))
                         and await caught_above(target, target.frames[:first])):
        return None
    if target.pause_reason == "promiseRejection" and first == 0 and await _made_by_call(target, chain[0]):
        return None
    if (str(data.get("description")), chain[first].place) == target.failed_at:
        return None  # the failure shown already, thrown again by the library that threw it (jest's expect)
    trace = target.async_trace
    index = first
    while True:
        link = chain[index]
        if await _at(target, link, lambda _, here, source: source.in_try(here)):
            return None
        if index + 1 == len(chain):  # the stack ends here: its way goes on in the async stack trace, if at all
            if trace is None:
                return _failed(target, first, chain[first])
            links = [_Link(frame, target, False) for frame in trace.get("callFrames") or []]
            awaiting = trace.get("description") == "await"
            parent = trace.get("parent")
            trace = parent if isinstance(parent, dict) else None
            if not awaiting:  # a .then's or a timer's callback: what scheduled it is no catcher
                catcher = links[0] if links else None
                if catcher is None or catcher.user or RUNNER.search(catcher.url):
                    return _failed(target, first, chain[first])
                return None
            chain.extend(links)
            if not links:
                continue
        following = chain[index + 1]
        if _PASSES_ON.search(following.url):  # Node's plumbing between the runner and the test: no catcher
            del chain[index + 1]
            continue
        if RUNNER.search(following.url):
            return _failed(target, first, chain[first])
        if link.start is not None and await _at(target, _Start(link), _text(lexical.is_async_function)) and \
                not await _at(target, following, _text(lexical.awaits_call)):
            return None  # its promise goes elsewhere than an await right in the caller
        index += 1


async def libraries_own(target: Target) -> bool:
    """Whether the exception of this pause is caught above the user's innermost frame (``caught_above``)."""
    frames = target.frames
    first = next((i for i, frame in enumerate(frames)
                  if target.scripts.is_user_code(*position(frame.get("location") or {}))), None)
    return bool(first) and await caught_above(target, frames[:first])


async def caught_above(target: Target, frames: list[dict[str, Any]]) -> bool:
    """Whether a frame above the user's (a library's, Node's, a ``new Function``'s) catches the exception: it throws
    and catches its own (assume's feature checks, ``try { new Function("return ParallelArray")() } catch {}``), no
    test's failure nor the user's exception. A frame whose source cannot be judged is taken to catch it."""
    for frame in frames:
        if not await _at(target, _Link(frame, target, True), lambda _, here, source: not source.in_try(here)):
            return True
    return False


class Imports:
    """The packages the user's scripts import, let out of the blackbox in a test run: whatever assertion library a
    test uses (assume, should, unexpected, a project's own helper in node_modules), its throw pauses, and is judged
    as the listed ones' are (a throw it catches itself is none of the test's failures). Each user script is read
    once as it loads, for its ``require``/``import`` of bare names; the test runners' own packages stay hidden."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self._read: set[str] = set()  # the scripts read (a worker thread loads them again)
        self.passed = 0  # exception pauses in a package's code that failed no test (``PACKAGES_BUDGET``)

    def spend(self, target: Target) -> bool | None:
        """One more exception pause of a package's code that failed no test, while the imported packages are out of
        the blackbox: whether they go back into it now (a package that throws and catches as it works costs the
        run a pause each); None for another pause (``BUDGET`` counts it)."""
        script = target.scripts.get(position((target.frames or [{}])[0].get("location") or {})[0])
        if script is None or "/node_modules/" not in script.url or self.passed >= PACKAGES_BUDGET or not self.names:
            return None
        self.passed += 1
        if self.passed == PACKAGES_BUDGET:
            target.events.on_output("console", PACKAGES_OVER_BUDGET)
        return self.passed == PACKAGES_BUDGET

    def blackbox(self) -> list[str]:
        if self.passed >= PACKAGES_BUDGET:
            return BLACKBOX
        named = (*ASSERTING, *(name.replace(".", r"\.") for name in sorted(self.names)))
        return [BLACKBOX[0], rf"^(?!.*/node_modules/(?:{'|'.join(named)})/).*/node_modules/"]

    def read(self, path: str) -> bool:
        """The imports of the user's script at ``path``: whether it names a package not named before."""
        if path in self._read or len(self.names) >= _NAMES:
            return False
        self._read.add(path)
        try:
            with open(path, encoding="utf-8", errors="replace") as file:
                text = file.read(_SOURCE_CHARS)
        except OSError:
            return False
        found = set()
        for match in _IMPORTED.finditer(text):
            specifier = match.group(2) or match.group(4) or ""
            package = _PACKAGE.match(specifier) if ":" not in specifier else None
            if package is not None and not _RUNNERS_OWN.match(package.group()) and package.group() not in ASSERTING:
                found.add(package.group())
        new = found - self.names
        self.names |= new
        return bool(new)


def send_blackbox(targets: Iterable[Target], patterns: list[str]) -> None:
    """The blackbox's patterns to each target, not waited for (a script's load and a pause's judgment are no place to
    wait in)."""
    for target in targets:
        target.channel.send("Debugger.setBlackboxPatterns", {"patterns": patterns})


def _failed(target: Target, index: int, link: _Link) -> int:
    target.failed_at = (str((target.pause_data or {}).get("description")), link.place)
    return index


class _Start:
    def __init__(self, link: _Link) -> None:
        assert link.start is not None
        self.script_id = link.script_id
        self.line, self.column = link.start


async def _at(target: Target, place: _Link | _Start, test: Callable[[str, int, lexical.Source], bool]) -> bool:
    with contextlib.suppress(AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
        source = await target.source(place.script_id)
        if source is not None and len(source.text) <= source.LIMIT:
            return bool(test(source.text, source.offset(place.line, place.column), source))
    return False


def _text(test: Callable[[str, int], bool]) -> Callable[[str, int, lexical.Source], bool]:
    return lambda text, at, _: test(text, at)


async def _made_by_call(target: Target, link: _Link) -> bool:
    return await _at(target, link, _text(lambda text, at: _MADE_BY_CALL.match(text, at) is not None))


def in_users_code(target: Target) -> bool:
    """Whether the pause has a frame of the user's code: those count against ``BUDGET``. Node's internals compiled
    into its snapshot cannot be blackboxed (by pattern or by range: checked on Node 20.20), and their caught
    exceptions pause without a user frame (vite tries ``new URL`` hundreds of times as vitest starts): they cost a
    pause each but use none of the budget, which is the user's code's."""
    return any(target.scripts.is_user_code(*position(frame.get("location") or {})) for frame in target.frames)


async def detail(target: Target) -> ExceptionDetail | None:
    """The failure's exception with its whole message and, for an assertion, the expected and actual values."""
    plain = target.exception_detail()
    object_id = (target.pause_data or {}).get("objectId")
    if plain is None or not object_id:
        return plain
    try:
        found = await target.request("Runtime.callFunctionOn", {
            "objectId": object_id, "functionDeclaration": _FACTS, "returnByValue": True, "silent": True})
    except (AdapterRequestError, AdapterGoneError, AdapterTimeoutError):
        return plain
    facts = (found.get("result") or {}).get("value")
    if not isinstance(facts, dict):
        return plain
    message = " ".join(line.strip() for line in _ANSI.sub("", str(facts.get("message") or "")).splitlines()
                       if line.strip())
    extra = tuple(f"{key}: {facts[key]}" for key in ("expected", "actual") if key in facts)
    return ExceptionDetail(plain.type, message[:_MESSAGE_CHARS] or plain.message, extra)
