"""What the java backend's helpers (method breakpoints, field watchpoints, raw queries, attach) need
of the VM connection, and the JDWP requests they share: event requests, the loaded classes, and the
``ClassPrepare`` requests that wait for classes a name may mean.

Class names as the agent writes them (``Basics.Point``, ``Basics$Point``, ``demo.Basics``) are
matched against the JVM's binary names (``demo.Basics$Point``) with ``$`` and ``.`` alike and the
package optional: ``Point`` names every loaded class called ``Point``, ``Basics.Point`` every
``Point`` nested in (or packaged under) a ``Basics``.
"""

from __future__ import annotations

import contextlib
import re
from typing import Protocol

from polydbg.backends.java.classes import Classes, JavaClass, parameter_descriptors
from polydbg.backends.java.values import Values
from polydbg.errors import AdapterGoneError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, EventKind, Modifier, Suspend

INSPECT_TIMEOUT_S = 10.0
RUNTIME_PATTERNS = ("java.*", "javax.*", "jdk.*", "sun.*", "com.sun.*")
RUNTIME_PACKAGES = ("java.", "javax.", "jdk.", "sun.", "com.sun.")
IDENTIFIER = re.compile(r"^[A-Za-z_$][\w$]*$")


class Vm(Protocol):
    """The backend as its helpers see it."""

    @property
    def client(self) -> JdwpClient: ...

    @property
    def classes(self) -> Classes: ...

    @property
    def values(self) -> Values: ...


async def event_request(client: JdwpClient, kind: int, suspend: int, modifiers: bytes, count: int) -> int:
    data = client.writer().u1(kind).u1(suspend).i4(count).bytes() + modifiers
    reply = await client.request(CommandSet.EVENT_REQUEST, 1, data, "EventRequest.Set", INSPECT_TIMEOUT_S)
    return int(reply.i4())


async def clear_request(client: JdwpClient, kind: int, request_id: int) -> None:
    with contextlib.suppress(JdwpRequestError, AdapterGoneError, AdapterTimeoutError):
        await client.request(CommandSet.EVENT_REQUEST, 2, client.writer().u1(kind).i4(request_id).bytes(),
                             "EventRequest.Clear", INSPECT_TIMEOUT_S)


async def loaded_classes(vm: Vm) -> list[JavaClass]:
    """Every loaded reference type (arrays left out), known to ``vm.classes`` from now on."""
    reply = await vm.client.request(CommandSet.VM, 3, b"", "VirtualMachine.AllClasses", INSPECT_TIMEOUT_S)
    found = []
    for _ in range(reply.i4()):
        tag, class_id, signature = reply.u1(), reply.reference_type(), reply.string()
        reply.i4()  # status
        if signature.startswith("L"):
            found.append(vm.classes.known(class_id, tag, signature))
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


async def prepare_requests(client: JdwpClient, qualifier: str | None) -> list[int]:
    """``ClassPrepare`` requests (suspending the loading thread) for the classes ``qualifier`` may
    name; for None, every class outside the JDK."""
    requests = []
    if qualifier is None:
        writer = client.writer()
        for pattern in RUNTIME_PATTERNS:
            writer.u1(Modifier.CLASS_EXCLUDE).string(pattern)
        requests.append(await event_request(client, EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD, writer.bytes(),
                                            len(RUNTIME_PATTERNS)))
        return requests
    for pattern in prepare_patterns(qualifier):
        modifiers = client.writer().u1(Modifier.CLASS_MATCH).string(pattern).bytes()
        requests.append(await event_request(client, EventKind.CLASS_PREPARE, Suspend.EVENT_THREAD, modifiers, 1))
    return requests


async def clear_prepares(client: JdwpClient, requests: list[int]) -> None:
    for request in requests:
        await clear_request(client, EventKind.CLASS_PREPARE, request)


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
