"""The callees of a JVM call trace's recorded calls (``debug_trace(functions=…, depth=N)``): which methods a call
of a named method made, N levels below it.

Nobody names the callees, so no breakpoint can wait at their entries. Instead, while a recorded call runs on a
thread, that thread alone (``ThreadOnly``) reports every method it enters (``MethodEntry``, suspending the
thread: the arguments are read from its frame as a named method's are) and leaves (``MethodExitWithReturnValue``,
suspending nothing), the runtime's and the test frameworks' classes excluded (``ClassExclude``: ``java.*``,
``jdk.*``, ``kotlin.*``, ``org.junit.*``…, unless a named method is in one of them): their calls are neither
recorded nor paid for, and a callee of the program's reached through them (a lambda a stream calls) is one level
below the program's method that called the library. A thread's requests are set when its first recorded call
begins and cleared when its last one ends, so the program's other code runs at full speed.

The depth of a callee is counted in the program's own frames: one more than the nearest open call below it. A
callee deeper than the depth asked is not recorded, but its entry and exit are still followed (its exit would
otherwise end the wrong call of a recursion); lambdas' hidden classes and the compiler's bridge and accessor
methods are passed through (their target is the call).
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from polydbg.backends.java import vm as jvm
from polydbg.backends.java.classes import JavaClass, Method, short_name
from polydbg.backends.java.threads import Threads
from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import EventKind, Location, Modifier, Suspend

_GONE = (JdwpRequestError, AdapterGoneError, AdapterTimeoutError)
SYNTHETIC = 0x1000
BRIDGE = 0x40
_TEST_FRAMEWORK_PATTERNS = tuple(f"{package}*" for package in jvm.TEST_FRAMEWORK_PACKAGES)


@dataclass
class Traced:
    """A method whose calls are recorded, as the records name it."""
    cls: JavaClass
    method: Method
    name: str  # ``Calls.fib``
    params: list[tuple[str, int, str]]  # (name, slot, signature) of each parameter, in order
    file: str | None
    line: int | None


async def described(vm: jvm.Vm, threads: Threads, cls: JavaClass, method: Method) -> Traced | None:
    """What a record of a call of ``method`` says of it; None when it has no code (abstract, native)."""
    table = await vm.classes.lines(cls, method)
    if not table:
        return None
    variables = await vm.classes.variables(cls, method)
    params = sorted((v for v in variables if v.code_index == 0), key=lambda v: v.slot)
    shown = await threads.describe(Location(cls.tag, cls.id, method.id, table[0][0]))
    return Traced(cls, method, f"{short_name(cls.signature)}.{method.name}",
                  [(v.name, v.slot, v.signature) for v in params], shown.file, shown.line)


def is_compilers(method: Method) -> bool:
    """A bridge or accessor method the compiler made (a lambda's body, ``lambda$main$0``, is the program's)."""
    return bool(method.modifiers & BRIDGE) or (bool(method.modifiers & SYNTHETIC)
                                               and not method.name.startswith("lambda$"))


@dataclass
class _Requests:
    entry: int
    exit: int


class Callees:
    """The per-thread method entry and exit requests of a call trace with a depth, and what their methods are."""

    def __init__(self, vm: jvm.Vm, threads: Threads, qualifiers: set[str | None]) -> None:
        self._vm = vm
        self._threads = threads
        named = {q for q in qualifiers if q is not None}
        self._excluded = [pattern for pattern in (*jvm.LIBRARY_PATTERNS, *_TEST_FRAMEWORK_PATTERNS)
                          if not any(q.startswith(pattern[:-1]) for q in named)]
        self._armed: dict[int, _Requests] = {}  # thread →
        self._entries: set[int] = set()  # every entry request ever set (a cleared one's events may still come)
        self._exits: set[int] = set()
        self._methods: dict[tuple[int, int], Traced | None] = {}  # (class id, method id) → None: passed through

    def armed(self, thread: int) -> bool:
        return thread in self._armed

    def entry(self, request_id: int) -> bool:
        return request_id in self._entries

    def exit(self, request_id: int) -> bool:
        return request_id in self._exits

    async def arm(self, thread: int) -> None:
        if thread in self._armed:
            return
        modifiers = self._vm.client.writer().u1(Modifier.THREAD_ONLY).object_id(thread)
        for pattern in self._excluded:
            modifiers.u1(Modifier.CLASS_EXCLUDE).string(pattern)
        count = 1 + len(self._excluded)
        entry = await self._vm.event_request(EventKind.METHOD_ENTRY, Suspend.EVENT_THREAD, modifiers.bytes(), count)
        self._entries.add(entry)
        leave = await self._vm.event_request(EventKind.METHOD_EXIT_WITH_RETURN_VALUE, Suspend.NONE, modifiers.bytes(),
                                             count)
        self._exits.add(leave)
        self._armed[thread] = _Requests(entry, leave)

    async def disarm(self, thread: int) -> None:
        requests = self._armed.pop(thread, None)
        if requests is not None:
            await self._vm.clear_request(EventKind.METHOD_ENTRY, requests.entry)
            await self._vm.clear_request(EventKind.METHOD_EXIT_WITH_RETURN_VALUE, requests.exit)

    async def disarm_all(self) -> None:
        for thread in list(self._armed):
            await self.disarm(thread)

    async def method(self, where: Location) -> Traced | None:
        """The method a callee's entry is in; None for one passed through (a lambda's hidden class, a bridge)."""
        key = (where.class_id, where.method_id)
        if key not in self._methods:
            found = None
            with contextlib.suppress(*_GONE):
                cls, method = await self._vm.classes.method(where.class_id, where.method_id)
                if method is not None and not jvm.is_hidden(cls) and not is_compilers(method):
                    found = await described(self._vm, self._threads, cls, method)
            self._methods[key] = found
        return self._methods[key]
