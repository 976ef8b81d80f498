"""``VirtualMachine.RedefineClasses`` (JDWP 1/18): recompiled classes put in place of the loaded ones, all in one
call, and what the JVM refused said in the program's own terms.

JVMTI redefines every class of one call or none, so a reload never leaves the program half-changed. HotSpot
replaces method bodies only: a class that adds or removes a field or a method, changes a signature, a modifier or
what it extends is refused whole, with an error code that names the kind of change (``SCHEMA_CHANGE_NOT_IMPLEMENTED``
64, ``ADD_METHOD_NOT_IMPLEMENTED`` 63 …) but not the member. The member is found by comparing the new class file
(``testing.classfiles``) with the loaded class as JDWP describes it: its fields, methods, superclass, interfaces.
A lambda added or removed is a synthetic method (``lambda$main$0``) added or removed, and is named as a lambda.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from polydbg.backends.java import vm as jvm
from polydbg.backends.java.classes import Field, JavaClass, short_name
from polydbg.backends.timecontrol import ReloadRefused
from polydbg.jdwp.client import JdwpRequestError
from polydbg.jdwp.codec import ERRORS, CommandSet
from polydbg.testing import classfiles

REDEFINE_S = 30.0  # one RedefineClasses: HotSpot deoptimizes what depends on the classes (a large program: seconds)
CAN_REDEFINE_CLASSES = 7  # indices in VirtualMachine.CapabilitiesNew's reply
CAN_POP_FRAMES = 10
SCHEMA_CHANGES = frozenset({63, 64, 66, 67, 70, 71, 72})  # HotSpot's "only method bodies" refusals
FAILS_VERIFICATION = 62
UNSUPPORTED_VERSION = 68
_MEMBER_MODIFIERS = 0x0D3F  # public private protected static final synchronized native abstract strict
_LISTED = 4  # changes named in a refusal
_LAMBDA = re.compile(r"(^|\$)lambda[$-]")


@dataclass(frozen=True)
class Definition:
    """A loaded class and the class file compiled from its edited source."""

    cls: JavaClass
    data: bytes
    parsed: classfiles.ClassFile
    source: str  # the edited file


async def capabilities(vm: jvm.Vm) -> list[bool]:
    """``VirtualMachine.CapabilitiesNew``: the JVM's 32 capability flags."""
    reply = await vm.request(CommandSet.VM, 17, b"", "VirtualMachine.CapabilitiesNew")
    return [reply.boolean() for _ in range(32)]


async def redefine(vm: jvm.Vm, definitions: list[Definition]) -> None:
    """Every class at once, or none: a refusal raises ``ReloadRefused`` saying which change the JVM refused."""
    if not (await capabilities(vm))[CAN_REDEFINE_CLASSES]:
        raise ReloadRefused("this JVM cannot redefine classes (its canRedefineClasses capability is off): "
                            "debug_restart runs the edited program")
    writer = vm.client.writer().i4(len(definitions))
    for definition in definitions:
        writer.reference_type(definition.cls.id).blob(definition.data)
    try:
        await vm.client.request(CommandSet.VM, 18, writer.bytes(), "VirtualMachine.RedefineClasses", REDEFINE_S)
    except JdwpRequestError as exc:
        raise ReloadRefused(await refusal(vm, definitions, exc.code)) from exc


async def refusal(vm: jvm.Vm, definitions: list[Definition], code: int) -> str:
    """What the JVM refused, named: ``Counter.java adds a field `hits` to Counter: …``."""
    files = ", ".join(sorted({os.path.basename(d.source) for d in definitions}))
    answer = f"the JVM answered {ERRORS.get(code, 'error')} (JDWP error {code})"
    restart = "nothing was changed; debug_restart runs the edited program"
    if code in SCHEMA_CHANGES:
        changes = [f"{os.path.basename(d.source)} {change}" for d in definitions for change in await changes_in(vm, d)]
        more = len(changes) - _LISTED
        shown = "; ".join(changes[:_LISTED]) + (f"; and {more} more" if more > 0 else "")
        return (f"cannot reload: {shown or files + ' changes more than method bodies'}: HotSpot can only replace "
                f"method bodies ({answer}); {restart} (or undo that change and keep the method-body edits)")
    if code == FAILS_VERIFICATION:
        return f"cannot reload {files}: the new code fails the JVM's bytecode verification ({answer}); {restart}"
    if code == UNSUPPORTED_VERSION:
        return (f"cannot reload {files}: javac compiled it for a newer Java than this JVM runs ({answer}); put a "
                f"JDK of the JVM's version first on PATH (or JAVA_HOME), or {restart}")
    return f"cannot reload {files}: {answer}; {restart}"


async def changes_in(vm: jvm.Vm, definition: Definition) -> list[str]:
    """What the new class changes beyond method bodies, compared with the loaded class."""
    cls, new = definition.cls, definition.parsed
    name = short_name(cls.signature)
    found = []
    superclass = await vm.classes.superclass(cls)
    if (superclass.name if superclass else None) != new.superclass:
        found.append(f"makes {name} extend {new.superclass} instead of {superclass.name if superclass else None}")
    interfaces = {interface.name for interface in await vm.classes.interfaces(cls)}
    if interfaces != set(new.interfaces):
        found.append(f"changes the interfaces {name} implements ({', '.join(sorted(interfaces)) or 'none'} → "
                     f"{', '.join(sorted(new.interfaces)) or 'none'})")
    old_fields = {(f.name, f.signature): f.modifiers for f in await _fields(vm, cls)}
    new_fields = {(f.name, f.descriptor): f.flags for f in new.fields}
    old_methods = {(m.name, m.signature): m.modifiers for m in (await vm.classes.methods(cls)).values()}
    new_methods = {(m.name, m.descriptor): m.flags for m in new.methods}
    accessors = _accessors({n for n, _ in new_fields} - {n for n, _ in old_fields}, new_methods.keys() - old_methods)
    found += _member_changes(name, "field", old_fields, new_fields, accessors)
    found += _member_changes(name, "method", old_methods, new_methods, accessors)
    return found


def _accessors(added_fields: set[str], added_methods: set[tuple[str, str]]) -> dict[str, list[str]]:
    """The methods added with a field of theirs, by the field: a Kotlin property (``var hits``: its field,
    ``getHits``, ``setHits``; ``var isOn``: ``isOn``, ``setOn``), a Java bean's getter and setter."""
    found: dict[str, list[str]] = {}
    for method in sorted({name for name, _ in added_methods}):
        rest = method[3:] if method.startswith(("get", "set")) else method[2:] if method.startswith("is") else ""
        candidates = [method, rest[:1].lower() + rest[1:], "is" + rest] if rest else []
        field = next((c for c in candidates if c in added_fields), None)
        if field is not None:
            found.setdefault(field, []).append(method)
    return found


async def _fields(vm: jvm.Vm, cls: JavaClass) -> list[Field]:
    """The class's own fields, synthetic ones too (``Classes.fields`` leaves those out and adds the inherited)."""
    reply = await vm.request(CommandSet.REFERENCE_TYPE, 4, vm.client.writer().reference_type(cls.id).bytes(),
                             "ReferenceType.Fields")
    return [Field(reply.field_id(), reply.string(), reply.string(), reply.i4()) for _ in range(reply.i4())]


def _member_changes(owner: str, kind: str, old: dict[tuple[str, str], int], new: dict[tuple[str, str], int],
                    accessors: dict[str, list[str]] | None = None) -> list[str]:
    """Members added, removed, retyped or with other modifiers: ``adds a field `hits` to Counter``; a field added
    with its ``accessors`` is a property, and those methods are not named again."""
    accessors = accessors or {}
    their = {method for methods in accessors.values() for method in methods}
    added, removed = sorted(new.keys() - old.keys()), sorted(old.keys() - new.keys())
    retyped = {name for name, _ in added} & {name for name, _ in removed}
    found = []
    for key in added:
        if kind == "field" and key[0] in accessors:
            found.append(f"adds a property `{key[0]}` to {owner} (a field, {', '.join(accessors[key[0]])})")
        elif kind == "method" and key[0] in their:
            continue
        elif key[0] not in retyped:
            found.append(f"adds {_member(owner, kind, key)} to {owner}")
        elif kind == "field":
            found.append(f"changes the type of the field `{key[0]}` of {owner}")
        else:
            found.append(f"changes the signature of `{key[0]}` to `{_declaration(owner, *key)}`")
    found += [f"removes {_member(owner, kind, key)} from {owner}" for key in removed if key[0] not in retyped]
    found += [f"changes the modifiers of {_member(owner, kind, key)}" for key in sorted(old.keys() & new.keys())
              if (old[key] ^ new[key]) & _MEMBER_MODIFIERS]
    return found


def _member(owner: str, kind: str, key: tuple[str, str]) -> str:
    name, signature = key
    if kind == "field":
        return f"a field `{name}`"
    if _LAMBDA.search(name):  # javac's lambda$main$0, Kotlin's main$lambda$0 (1.x: main$lambda-0)
        return f"a lambda (`{name}`)"
    return f"a {'constructor' if name == '<init>' else 'method'} `{_declaration(owner, name, signature)}`"


def _declaration(owner: str, name: str, signature: str) -> str:
    parameters, returned = jvm.parameter_types(signature)
    if name == "<init>":
        return f"{owner.rpartition('.')[2]}({', '.join(parameters)})"
    return f"{returned} {name}({', '.join(parameters)})"
