"""The connection to one JVM as every part of the java backend sees it (``Vm``), and the JDWP requests
they share: event requests, the one scan of the loaded classes, and the ``ClassPrepare`` requests that
wait for classes a name may mean.

``Vm`` holds the client and what is cached about the JVM's classes and values; before the connection
(and after it is lost) each of them raises ``AdapterGoneError``, so a part built at the backend's start
never holds a stale client. Every request has the inspection deadline (``timeouts.INSPECT_S``).

Class names as the agent writes them (``Basics.Point``, ``Basics$Point``, ``demo.Basics``) are
matched against the JVM's binary names (``demo.Basics$Point``) with ``$`` and ``.`` alike and the
package optional: ``Point`` names every loaded class called ``Point``, ``Basics.Point`` every
``Point`` nested in (or packaged under) a ``Basics``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Awaitable, Callable
from typing import Any

from polydbg.backends.java.classes import Classes, JavaClass, parameter_descriptors
from polydbg.backends.java.evaluator import Evaluator
from polydbg.backends.java.values import Values
from polydbg.backends.kit import timeouts
from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, EventKind, Location, Modifier, Reader, Suspend

RUNTIME_PATTERNS = ("java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*")
RUNTIME_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.")
# the JDK's and Kotlin's runtime: a step does not stop in it, its frames above the program's are hidden, and
# the exceptions it throws and catches itself are not the program's
LIBRARY_PATTERNS = (*RUNTIME_PATTERNS, "kotlin.*")
LIBRARY_PACKAGES = (*RUNTIME_PACKAGES, "kotlin.")
# test runners and assertion libraries: their frames above a test's are hidden at a stop, and an exception they
# catch from a test's code is a failing test (the ``userUnhandled`` filter, exceptions.py)
TEST_FRAMEWORK_PACKAGES = ("org.junit.", "junit.", "org.opentest4j.", "org.hamcrest.", "org.assertj.", "org.testng.",
                           "com.google.common.truth.", "io.kotest.", "polydbg.junit.")


def is_library(class_name: str) -> bool:
    """A class of the JDK, Kotlin's runtime or a test framework: not the program's own code."""
    return class_name.startswith(LIBRARY_PACKAGES) or class_name.startswith(TEST_FRAMEWORK_PACKAGES)


IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")
_GONE = "the JVM is not connected"


class Vm:
    """One JVM connection: its client, classes, values and evaluator (set by ``connect``)."""

    def __init__(self) -> None:
        self._client: JdwpClient | None = None
        self._classes: Classes | None = None
        self._values: Values | None = None
        self._evaluator: Evaluator | None = None

    def connect(self, client: JdwpClient, source_of: Callable[[JavaClass], Awaitable[str | None]]) -> None:
        self._client = client
        self._classes = Classes(client)
        self._values = Values(client, self._classes)
        self._evaluator = Evaluator(client, self._classes, self._values, source_of=source_of)

    @property
    def connection(self) -> JdwpClient | None:
        """The client, or None before the connection (for the end, which never raises)."""
        return self._client

    @property
    def client(self) -> JdwpClient:
        if self._client is None:
            raise AdapterGoneError(_GONE)
        return self._client

    @property
    def classes(self) -> Classes:
        if self._classes is None:
            raise AdapterGoneError(_GONE)
        return self._classes

    @property
    def values(self) -> Values:
        if self._values is None:
            raise AdapterGoneError(_GONE)
        return self._values

    @property
    def evaluator(self) -> Evaluator:
        if self._evaluator is None:
            raise AdapterGoneError(_GONE)
        return self._evaluator

    async def request(self, command_set: int, command: int, data: bytes, label: str) -> Reader:
        return await self.client.request(command_set, command, data, label, timeouts.INSPECT_S)

    async def event_request(self, kind: int, suspend: int, modifiers: bytes, count: int) -> int:
        """``EventRequest.Set``: the new request's id."""
        data = self.client.writer().u1(kind).u1(suspend).i4(count).bytes() + modifiers
        reply = await self.request(CommandSet.EVENT_REQUEST, 1, data, "EventRequest.Set")
        return int(reply.i4())

    async def clear_request(self, kind: int, request_id: int) -> None:
        """``EventRequest.Clear``; a request the JVM no longer has (or a lost connection) is no error."""
        with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
            await self.request(CommandSet.EVENT_REQUEST, 2, self.client.writer().u1(kind).i4(request_id).bytes(),
                               "EventRequest.Clear")

    async def resume(self) -> None:
        await self.request(CommandSet.VM, 9, b"", "VirtualMachine.Resume")

    async def suspend(self) -> None:
        await self.request(CommandSet.VM, 8, b"", "VirtualMachine.Suspend")


def forget_requests_in(class_id: int, requests: dict[int, Location], index: dict[int, Any]) -> bool:
    """Drop the breakpoint requests set in class ``class_id`` from a breakpoint's ``requests`` and the ``index`` of
    requests (a reload redefined the class: the JVM's agent dropped them); whether it had any there."""
    gone = [request for request, where in requests.items() if where.class_id == class_id]
    for request in gone:
        del requests[request]
        index.pop(request, None)
    return bool(gone)


async def loaded_classes(vm: Vm) -> list[JavaClass]:
    """Every loaded reference type (arrays left out), known to ``vm.classes`` from now on: the one scan
    of ``VirtualMachine.AllClasses``."""
    reply = await vm.request(CommandSet.VM, 3, b"", "VirtualMachine.AllClasses")
    found = []
    for _ in range(reply.i4()):
        tag, class_id, signature = reply.u1(), reply.reference_type(), reply.string()
        reply.i4()  # status
        if signature.startswith("L"):
            found.append(vm.classes.known(class_id, tag, signature))
    return found


async def program_classes(vm: Vm) -> list[JavaClass]:
    """The loaded classes outside the JDK (hidden ones left out), each with its source file read (the
    requests pipelined): a breakpoint set in one of their files binds at once."""
    found = [cls for cls in await loaded_classes(vm) if not is_runtime(cls) and not is_hidden(cls)]
    await asyncio.gather(*(vm.classes.source(cls) for cls in found))
    return found


def is_runtime(cls: JavaClass) -> bool:
    return cls.name.startswith(RUNTIME_PACKAGES)


def is_hidden(cls: JavaClass) -> bool:
    """A lambda's or another hidden class (``Foo$$Lambda$14/0x…``): no name to break or watch in."""
    return "/" in cls.name or "$$" in cls.name


def dotted(name: str) -> str:
    return name.replace("$", ".")


def class_matches(cls: JavaClass, qualifier: str) -> bool:
    """Whether ``qualifier`` (``Point``, ``Basics.Point``, ``Basics$Point``, ``demo.Basics``) names ``cls``."""
    name, wanted = dotted(cls.name), dotted(qualifier)
    return name == wanted or name.endswith("." + wanted)


def valid_qualifier(qualifier: str) -> bool:
    return all(IDENTIFIER.match(part) for part in re.split(r"[.$]", qualifier))


def prepare_patterns(qualifier: str) -> list[str]:
    """``ClassMatch`` patterns that together cover every class ``qualifier`` may name (a superset:
    a prepared class is checked with ``class_matches``)."""
    simple = re.split(r"[.$]", qualifier)[-1]
    patterns = [f"*.{simple}", f"*${simple}"]
    if simple == qualifier:
        patterns.insert(0, simple)
    return patterns


async def prepare_requests(vm: Vm, qualifier: str | None) -> list[int]:
    """``ClassPrepare`` requests (suspending the loading thread) for the classes ``qualifier`` may
    name; for None, every class outside the JDK."""
    requests = []
    if qualifier is None:
        writer = vm.client.writer()
        for pattern in RUNTIME_PATTERNS:
            writer.u1(Modifier.CLASS_EXCLUDE).string(pattern)
        requests.append(await vm.event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD, writer.bytes(),
                                               len(RUNTIME_PATTERNS)))
        return requests
    for pattern in prepare_patterns(qualifier):
        modifiers = vm.client.writer().u1(Modifier.CLASS_MATCH).string(pattern).bytes()
        requests.append(await vm.event_request(EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD, modifiers, 1))
    return requests


async def clear_prepares(vm: Vm, requests: list[int]) -> None:
    for request in requests:
        await vm.clear_request(EventKind.CLASS_PREPARE, request)


def java_type(signature: str) -> str:
    """A JNI type signature as Java writes it: ``[Ljava/lang/String;`` → ``String[]``, ``I`` → ``int``."""
    dims = len(signature) - len(signature.lstrip("["))
    base = signature[dims:]
    names = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long", "S": "short",
             "Z": "boolean", "V": "void"}
    if base.startswith("L"):
        text = base[1:].rstrip(";").replace("/", ".")
        text = text.removeprefix("java.lang.") if text.count(".") == 2 else text
    else:
        text = names.get(base, base)
    return text + "[]" * dims


def parameter_types(signature: str) -> tuple[list[str], str]:
    """A method signature's parameter types and return type: ``(I[Ljava/lang/String;)V`` →
    (["int", "String[]"], "void")."""
    return [java_type(p) for p in parameter_descriptors(signature)], java_type(signature.partition(")")[2])
