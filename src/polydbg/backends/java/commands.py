"""``debug_command`` on Java: a few read-only queries of the JVM over JDWP (there is no debugger
console underneath to pass text to). They work while the program runs as well as when it is stopped.

- ``classes [glob]``: loaded classes whose name matches (``*`` and ``?``; a glob without them
  matches names containing it); without a glob, the classes outside the JDK. At most 100 listed,
  with the count.
- ``methods <Class>``: each method's declaration (parameter and return types) and its line range.
- ``fields <Class>``: each field's type, static ones with their value.
- ``threads``: each thread's id, name, status (running, sleeping, waiting, monitor, zombie),
  suspend count; ``*`` marks the stopped one.
- ``version``: the JVM's name and version and its JDWP version.
- ``classpath``: the JVM's base directory, class path and boot class path.
- ``sourcepaths``: where polydbg looks for source files of classes.
- ``help``: this list.

``<Class>`` is a name as written in Java (``Basics``, ``Basics.Point``, ``demo.Basics``, ``Basics$Point``).
"""

from __future__ import annotations

import asyncio
import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field

from polydbg.backends.java import vm as jvm
from polydbg.backends.java.classes import JavaClass, Method
from polydbg.errors import AdapterRequestError, echo
from polydbg.jdwp.codec import CommandSet

CLASS_CAP = 100
HELP = """Java queries (debug_command):
  classes [glob]     loaded classes matching the glob (default: the classes outside the JDK)
  methods <Class>    methods with parameter types and line ranges
  fields <Class>     fields with types; static ones with their value
  threads            threads: id, name, status, suspend count (* = the stopped one)
  version            the JVM's version and JDWP version
  classpath          the JVM's class path
  sourcepaths        where polydbg looks for source files
  help               this list
<Class>: Basics, Basics.Point, demo.Basics or Basics$Point"""
_STATUS = {0: "zombie", 1: "running", 2: "sleeping", 3: "monitor", 4: "waiting"}
_MODIFIERS = ((0x0001, "public"), (0x0002, "private"), (0x0004, "protected"), (0x0008, "static"),
              (0x0010, "final"), (0x0020, "synchronized"), (0x0100, "native"), (0x0400, "abstract"))


@dataclass
class Context:
    """What the backend knows that the JVM does not."""

    stopped_thread: int | None  # JDWP thread id
    thread_id: Callable[[int], int]  # JDWP thread id → polydbg's
    roots: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


async def run(vm: jvm.Vm, text: str, context: Context) -> str:
    word, _, argument = text.strip().partition(" ")
    argument = argument.strip()
    word = word.lower()
    if word in ("", "help", "?"):
        return HELP
    if word == "version":
        return await _version(vm)
    if word == "classes":
        return await _classes(vm, argument)
    if word in ("methods", "fields"):
        if not argument:
            raise AdapterRequestError("command", f"{word} needs a class name: {word} Basics")
        found = await _named(vm, argument)
        parts = [await (_methods(vm, cls) if word == "methods" else _fields(vm, cls)) for cls in found[:3]]
        more = f"\n({len(found) - 3} more classes named {argument})" if len(found) > 3 else ""
        return "\n".join(parts) + more
    if word == "threads":
        return await _threads(vm, context)
    if word == "classpath":
        return await _classpath(vm)
    if word in ("sourcepaths", "sourcepath"):
        lines = ["source roots (a class's package path and SourceFile are looked up in each):"]
        lines += [f"  {root}" for root in context.roots] or ["  (none)"]
        if context.files:
            lines.append("files with breakpoints:")
            lines += [f"  {path}" for path in context.files]
        return "\n".join(lines)
    raise AdapterRequestError("command", f"unknown Java query {echo(word)}; accepted: classes [glob], methods <Class>, "
                                         "fields <Class>, threads, version, classpath, sourcepaths, help")


async def _version(vm: jvm.Vm) -> str:
    reply = await vm.request(CommandSet.VM, 1, b"", "VirtualMachine.Version")
    description, major, minor, version, name = reply.string(), reply.i4(), reply.i4(), reply.string(), reply.string()
    return f"{name} {version} (JDWP {major}.{minor})\n{description}"


async def _classes(vm: jvm.Vm, glob: str) -> str:
    loaded = await jvm.loaded_classes(vm)
    if glob:
        pattern = glob if any(c in glob for c in "*?[") else f"*{glob}*"
        names = sorted({cls.name for cls in loaded if fnmatch.fnmatchcase(cls.name, pattern)
                        or fnmatch.fnmatchcase(jvm.dotted(cls.name), pattern)})
        what = f"matching {glob}"
    else:
        names = sorted({cls.name for cls in loaded if not jvm.is_runtime(cls) and not jvm.is_hidden(cls)})
        what = "outside the JDK (classes * lists all)"
    head = f"{len(names)} loaded classes {what} ({len(loaded)} loaded in all)"
    if len(names) > CLASS_CAP:
        head += f"; the first {CLASS_CAP}:"
    return "\n".join([head, *(f"  {name}" for name in names[:CLASS_CAP])])


async def _named(vm: jvm.Vm, name: str) -> list[JavaClass]:
    qualifier = name.strip()
    if not jvm.valid_qualifier(qualifier):
        raise AdapterRequestError("command", f"{echo(name)} is not a class name (Basics, Basics.Point, demo.Basics)")
    found = [cls for cls in await jvm.loaded_classes(vm)
             if not jvm.is_hidden(cls) and jvm.class_matches(cls, qualifier)]
    if not found:
        raise AdapterRequestError("command", f"no loaded class is named {qualifier} (classes {qualifier} searches "
                                             "for similar names; a class is loaded when the program first uses it)")
    exact = [cls for cls in found if cls.name == qualifier]
    return exact or found


def _modifiers(flags: int) -> str:
    return "".join(f"{word} " for bit, word in _MODIFIERS if flags & bit)


async def _methods(vm: jvm.Vm, cls: JavaClass) -> str:
    classes = vm.classes
    methods = [m for m in (await classes.methods(cls)).values() if not m.modifiers & 0x1000]
    tables = await asyncio.gather(*(classes.lines(cls, m) for m in methods))
    lines = [f"{cls.name}: {len(methods)} methods"]
    for method, table in zip(methods, tables, strict=True):
        lines.append(f"  {_declaration(cls, method)}" + (
            f"  lines {min(n for _, n in table)}-{max(n for _, n in table)}" if table else "  (no line table)"))
    return "\n".join(lines)


def _declaration(cls: JavaClass, method: Method) -> str:
    parameters, returned = jvm.parameter_types(method.signature)
    if method.name == "<init>":
        return f"{_modifiers(method.modifiers)}{cls.name.rpartition('.')[2]}({', '.join(parameters)})"
    if method.name == "<clinit>":
        return "static { … } (class initializer)"
    return f"{_modifiers(method.modifiers)}{returned} {method.name}({', '.join(parameters)})"


async def _fields(vm: jvm.Vm, cls: JavaClass) -> str:
    fields = await vm.classes.fields(cls)
    statics = [f for f in fields if f.is_static]
    values = await vm.values.static_values(cls.id, [f.id for f in statics]) if statics else []
    shown = dict(zip((f.id for f in statics), values, strict=False))
    lines = [f"{cls.name}: {len(fields)} fields"]
    for item in fields:
        text = f"  {_modifiers(item.modifiers)}{jvm.java_type(item.signature)} {item.name}"
        if item.id in shown:
            text += f" = {(await vm.values.describe(shown[item.id], 0)).text}"
        lines.append(text)
    return "\n".join(lines)


async def _threads(vm: jvm.Vm, context: Context) -> str:
    client = vm.client
    reply = await vm.request(CommandSet.VM, 4, b"", "VirtualMachine.AllThreads")
    ids = [reply.object_id() for _ in range(reply.i4())]

    async def one(thread: int) -> str:
        data = client.writer().object_id(thread).bytes()
        name, status, count = await asyncio.gather(
            vm.request(CommandSet.THREAD_REFERENCE, 1, data, "ThreadReference.Name"),
            vm.request(CommandSet.THREAD_REFERENCE, 4, data, "ThreadReference.Status"),
            vm.request(CommandSet.THREAD_REFERENCE, 12, data, "ThreadReference.SuspendCount"))
        state, suspended = status.i4(), status.i4()
        mark = "*" if thread == context.stopped_thread else " "
        return (f"{mark} {context.thread_id(thread):>3}  {name.string():<24} {_STATUS.get(state, 'not started')}"
                f"{', suspended' if suspended & 1 else ''} (suspend count {count.i4()})")

    rows = await asyncio.gather(*(one(t) for t in ids), return_exceptions=True)
    shown = [row for row in rows if isinstance(row, str)]
    gone = len(rows) - len(shown)
    return "\n".join([f"{len(shown)} threads" + (f" ({gone} ended while listed)" if gone else ""), *shown])


async def _classpath(vm: jvm.Vm) -> str:
    reply = await vm.request(CommandSet.VM, 13, b"", "VirtualMachine.ClassPaths")
    base = reply.string()
    paths = [reply.string() for _ in range(reply.i4())]
    boot = [reply.string() for _ in range(reply.i4())]
    lines = [f"base directory: {base}", "class path:", *(f"  {p}" for p in paths or ["(empty)"])]
    if boot:
        lines += ["boot class path:", *(f"  {p}" for p in boot)]
    return "\n".join(lines)

