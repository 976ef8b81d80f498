"""Exceptions: which throws stop (the ``raised``, ``uncaught`` and ``userUnhandled`` filters), and what an
exception stop says about its exception.

- Filters: ``uncaught`` is an ``Exception`` request for uncaught throws; ``raised`` adds one for caught
  throws, of which those the JDK (or Kotlin's runtime) throws and catches itself — a class loader's
  ``ClassNotFoundException`` at every class it looks for — are resumed without a stop: a caught throw
  is the program's when its code throws or catches it.
- ``userUnhandled`` (debugpy's word; a test run's, which JUnit would otherwise swallow): a caught throw stops
  when it leaves the program's code into a library's catch — a frame of the program's between the throw and
  the catch, the catch in the JDK's or a test framework's code (``vm.is_library``): a failing assertion
  caught by JUnit, an exception of the code under test. Not a catch that expects it (``assertThrows``,
  ``@Test(expected=…)``, AssertJ's ``catchThrowable``), an assumption that aborts a test, nor the same
  exception again on its way out (a re-throw). One the program's own code caught first and threw again (a
  ``finally``, try-with-resources, ``catch … throw e``) stops where it left that code, the re-throw: where
  it was first thrown is kept and said in the stop's details.
- Type names (``IOException``, ``java.io.IOException``, ``Outer.Inner``): an ``Exception`` request with
  ``ExceptionOnly`` on each loaded class the name means (JDWP matches its subclasses), caught and uncaught; a
  ``ClassPrepare`` request binds the classes that load later. A caught throw of one stops when the program's code
  throws or catches it, as with ``raised``.
- Detail: the exception's class and message: ``getMessage()`` where its class overrides it (JUnit 4's
  ``ComparisonFailure`` builds "expected:<…> but was:<…>" there; jopt-simple's exceptions build theirs
  from fields), called on the thread stopped at the exception event — not after debug_pause, when JDWP
  allows no calls — and remembered for that exception; else its ``detailMessage`` field.
"""

from __future__ import annotations

import contextlib
import difflib
import os
import re

from polydbg.backends.base import ExceptionDetail
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.classes import JavaClass
from polydbg.backends.java.inspection import PAUSED
from polydbg.backends.java.raised import RaisedLog
from polydbg.backends.java.threads import Threads
from polydbg.backends.java.vm import LIBRARY_PACKAGES, Vm, is_library
from polydbg.backends.recording import RaisedSink, Recorder
from polydbg.errors import AdapterRequestError, AdapterTimeoutError, UsageError, echo
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import Event, EventKind, Location, Modifier, Suspend, Value

USER_UNHANDLED = "userUnhandled"
FILTERS = ("raised", "uncaught", USER_UNHANDLED)
# a library's catch that expects the exception (the test passes when it comes): assertThrows (JUnit 4.13, 5),
# assertThrowsExactly, kotlin.test's assertFails…, AssertJ's catchThrowable…, Truth's/TestNG's expectThrows
_EXPECTING_METHOD = re.compile(r"^(?:assert(?:Throws\w*|Fails\w*|ThatThrownBy|ThatCode)|expectThrows|catchThrowable\w*"
                               r"|shouldThrow\w*)$")
# JUnit 4's @Test(expected=…) and its ExpectedException rule
_EXPECTING_CLASS = re.compile(r"(?:^|[.$])(?:ExpectException|ExpectedException(?:\$\w+)?)$")
# a test that aborts (an assumption that does not hold) is skipped, not failed
_ABORTING = frozenset({"org.opentest4j.TestAbortedException", "org.junit.AssumptionViolatedException",
                       "org.junit.internal.AssumptionViolatedException"})
_STOPPED_AT = 64  # exceptions remembered as stopped at, so that their re-throws do not stop again
NEAR = 0.85  # how alike a name must be to a loaded class's to be taken for a slip of it (IllegalStateExcepton)
# the JDK's common exception classes, loaded or not yet: a name close to one is a slip of it too
_JAVA_LANG = (
    "ArithmeticException", "ArrayIndexOutOfBoundsException", "ArrayStoreException", "AssertionError",
    "ClassCastException", "ClassNotFoundException", "CloneNotSupportedException", "Error", "Exception",
    "IllegalArgumentException", "IllegalMonitorStateException", "IllegalStateException", "IndexOutOfBoundsException",
    "InterruptedException", "NegativeArraySizeException", "NullPointerException", "NumberFormatException",
    "OutOfMemoryError", "RuntimeException", "SecurityException", "StackOverflowError",
    "StringIndexOutOfBoundsException", "Throwable", "UnsupportedOperationException")
_COMMON = (*(f"java.lang.{name}" for name in _JAVA_LANG), "java.io.IOException", "java.io.UncheckedIOException",
           "java.io.FileNotFoundException", "java.util.NoSuchElementException",
           "java.util.ConcurrentModificationException")


class Exceptions:
    def __init__(self, vm: Vm, threads: Threads) -> None:
        self._vm = vm
        self._threads = threads
        self._requests: list[int] = []
        self._caught_request: int | None = None
        self._raised = False  # "raised": every caught throw of the program's stops
        self._user_unhandled = False
        self._stopped_at: list[int] = []  # exception object ids, newest last
        self._caught_by_program: dict[int, Location] = {}  # exception object id → where it was first thrown
        self._computed_messages: dict[int, str | None] = {}  # exception object id → its getMessage()
        self._types: list[str] = []  # class names as the agent wrote them (IOException, java.io.IOException)
        self._by_type: dict[int, str] = {}  # exception request → the class it is for
        self._bound: set[int] = set()  # classes with a request
        self._prepares: list[int] = []  # ClassPrepare requests for the classes the names may mean
        self._raised_log: RaisedLog | None = None  # the log of raised exceptions, while armed

    async def set_filters(self, filters: list[str]) -> None:
        types = [f for f in filters if f not in FILTERS]
        for name in types:
            if not jvm.valid_qualifier(name):
                raise UsageError(f"{echo(name)} is neither an exception filter {list(FILTERS)} nor a Java class name "
                                 "(IOException, java.io.IOException, Outer.Inner)")
        loaded = await jvm.loaded_classes(self._vm) if types else []
        for name in types:  # a class loaded by that name that is no Throwable is no exception's type
            named = [cls for cls in loaded if jvm.class_matches(cls, name) and not jvm.is_hidden(cls)]
            if named and not [cls for cls in named if await self._throwable(cls)]:
                raise UsageError(f"{echo(name)} names {named[0].name}, which is not an exception class (no Throwable "
                                 "among its superclasses); name an exception's class, e.g. IllegalStateException")
            near = [] if named or "." in name else await self._near(name, loaded)
            if near:  # a slip of a loaded exception class's name (IllegalStateExcepton) would never match
                raise UsageError(f"no class {echo(name)} is loaded, and its name is close to exception classes': "
                                 f"{', '.join(near)}; pass the class's name as Java spells it, or a class that loads "
                                 f"later with its package (com.example.{name}: bound when it loads)")
        for request in self._requests + list(self._by_type):
            await self._vm.clear_request(EventKind.EXCEPTION, request)
        await jvm.clear_prepares(self._vm, self._prepares)
        self._requests, self._by_type, self._prepares, self._types, self._bound = [], {}, [], types, set()
        self._caught_request = None
        for cls in loaded:
            await self.class_loaded(cls)
            for name in types:
                self._prepares.extend(await jvm.prepare_requests(self._vm, name))
        self._raised = "raised" in filters
        self._user_unhandled = USER_UNHANDLED in filters
        if self._raised or self._user_unhandled:  # caught throws: which stop is decided at each (stops_at)
            writer = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(True).boolean(
                False)
            self._caught_request = await self._vm.event_request(EventKind.EXCEPTION, Suspend.ALL, writer.bytes(), 1)
            self._requests.append(self._caught_request)
        if "uncaught" in filters or self._raised or self._user_unhandled:
            writer = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(0).boolean(False).boolean(
                True)
            self._requests.append(await self._vm.event_request(EventKind.EXCEPTION, Suspend.ALL, writer.bytes(), 1))

    async def _near(self, name: str, loaded: list[JavaClass]) -> list[str]:
        """The JDK's common and the loaded exception classes whose simple names are close to ``name`` (a class not
        loaded)."""
        simple: dict[str, list[JavaClass]] = {}
        for cls in loaded:
            if not jvm.is_hidden(cls):
                simple.setdefault(jvm.dotted(cls.name).rpartition(".")[2], []).append(cls)
        common = {known.rpartition(".")[2]: known for known in _COMMON}
        return list(dict.fromkeys(
            [common[close] for close in difflib.get_close_matches(name, list(common), 3, NEAR)]
            + [jvm.dotted(cls.name) for close in difflib.get_close_matches(name, list(simple), 3, NEAR)
               for cls in simple[close][:1] if await self._throwable(cls)]))[:3]

    async def _throwable(self, cls: JavaClass) -> bool:
        current: JavaClass | None = cls
        with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):  # (an interface has no superclass)
            while current is not None and current.name != "java.lang.Throwable":
                current = await self._vm.classes.superclass(current)
        return current is not None and current.name == "java.lang.Throwable"

    async def record_raised(self, sink: RaisedSink) -> Recorder:
        """Arm the log of every throw the program's code makes (raised.py); one at a time."""
        if self._raised_log is not None:
            await self._raised_log.stop()
        log = self._raised_log = RaisedLog(self._vm, self._threads, sink)
        await log.arm()
        return log

    def records(self, event: Event) -> bool:
        return self._raised_log is not None and event.request_id == self._raised_log.request != 0

    async def record(self, event: Event) -> None:
        if self._raised_log is not None:
            await self._raised_log.record(event)

    async def class_loaded(self, cls: JavaClass) -> None:
        """A class loaded (or found loaded): one exception request for it when a type name means it. JDWP matches
        its subclasses too, loaded now or later."""
        if cls.id in self._bound or jvm.is_hidden(cls) or not any(jvm.class_matches(cls, t) for t in self._types):
            return
        self._bound.add(cls.id)
        writer = self._vm.client.writer().u1(Modifier.EXCEPTION_ONLY).reference_type(cls.id).boolean(True).boolean(True)
        self._by_type[await self._vm.event_request(EventKind.EXCEPTION, Suspend.ALL, writer.bytes(), 1)] = cls.name

    async def stops_at(self, event: Event) -> bool:
        """Whether an exception event is a stop (a caught throw only when it concerns the program)."""
        if event.request_id in self._by_type:  # a type named: caught by the JDK's own code, it is the JDK's
            caught = event.catch_location is not None and event.catch_location.class_id != 0
            return not caught or await self._ours(event)
        if event.request_id != self._caught_request:
            return True
        stops = (self._raised and await self._ours(event)) or (self._user_unhandled and await self._unhandled(event))
        if stops and event.exception is not None:
            self._stopped_at = [*self._stopped_at[-_STOPPED_AT + 1:], int(event.exception.value)]
        return stops

    async def _ours(self, event: Event) -> bool:
        """A caught exception concerns the program when its code throws or catches it (a JDK class
        loader throwing and catching ClassNotFoundException does not)."""
        for where in (event.location, event.catch_location):
            if where is not None and where.class_id:
                with contextlib.suppress(JdwpRequestError, AdapterTimeoutError):
                    if not (await self._vm.classes.get(where.class_id)).name.startswith(LIBRARY_PACKAGES):
                        return True
        return False

    async def _unhandled(self, event: Event) -> bool:
        """A caught exception leaves the program's code into a library's catch that does not expect it."""
        catch = event.catch_location
        if catch is None or not catch.class_id or event.exception is None:
            return False
        if int(event.exception.value) in self._stopped_at:
            return False  # re-thrown on its way out: it stopped where it first left the program's code
        try:
            catcher, method = await self._vm.classes.method(catch.class_id, catch.method_id)
            if not is_library(catcher.name):
                await self._remember_first_throw(event)
                return False
            if _EXPECTING_CLASS.search(catcher.name) or (method is not None and _EXPECTING_METHOD.match(method.name)):
                return False
            if not await self._through_program_code(event.thread, catch):
                return False
            return (await self._vm.values.class_of(int(event.exception.value))).name not in _ABORTING
        except (JdwpRequestError, AdapterTimeoutError):
            return False

    async def _remember_first_throw(self, event: Event) -> None:
        """Where an exception the program's code catches was thrown (its first frame of the program's), in case
        that code throws it on (a ``finally``): the stop at the re-throw says it."""
        assert event.exception is not None
        key = int(event.exception.value)
        if key in self._caught_by_program:
            return
        for _, where in await self._threads.frames(event.thread):
            if not is_library((await self._vm.classes.get(where.class_id)).name):
                self._caught_by_program = {**dict(list(self._caught_by_program.items())[-_STOPPED_AT + 1:]),
                                           key: where}
                return

    async def _through_program_code(self, thread: int, catch: Location) -> bool:
        """Whether a frame of the program's lies between the throw (frame 0) and the catching frame."""
        for _, where in await self._threads.frames(thread):
            if where.class_id == catch.class_id and where.method_id == catch.method_id:
                return False
            if not is_library((await self._vm.classes.get(where.class_id)).name):
                return True
        return False

    async def detail(self) -> ExceptionDetail | None:
        """The class and message of the exception the program is stopped at (None: not at one)."""
        exception = self._threads.stop.exception
        if exception is None or not exception.value:
            return None
        cls = await self._vm.values.class_of(int(exception.value))
        key = int(exception.value)
        if key not in self._computed_messages:
            self._computed_messages = {key: await self._message(exception, cls)}
        text = self._computed_messages[key]
        return ExceptionDetail(cls.name, "null" if text is None else text, await self._first_throw(key))

    async def _first_throw(self, key: int) -> tuple[str, ...]:
        """Where the exception stopped at was first thrown, when the program's code caught and re-threw it."""
        first = self._caught_by_program.get(key)
        thread = self._threads.stop.thread
        if first is None or thread is None:
            return ()
        shown = await self._threads.shown(thread)
        if shown and (shown[0][1].class_id, shown[0][1].method_id, shown[0][1].code_index) == (
                first.class_id, first.method_id, first.code_index):
            return ()
        frame = await self._threads.describe(first)
        where = f"{os.path.basename(frame.file)}:{frame.line}" if frame.file else "?"
        return (f"first thrown at {where} in {frame.name}, caught by the program's code there (a finally, "
                "try-with-resources, a catch) and thrown on",)

    async def _message(self, exception: Value, cls: JavaClass) -> str | None:
        """The message of the exception stopped at: ``getMessage()``'s, called on the thread stopped at the
        exception event where its class overrides it (not after debug_pause: no calls then); else its field."""
        stop = self._threads.stop
        if stop.thread is None:
            return None
        scope = self._threads.scope(stop.thread, 0, PAUSED if stop.paused else None)
        try:
            return await self._vm.evaluator.message(exception, cls, scope)
        except AdapterRequestError:
            return None
