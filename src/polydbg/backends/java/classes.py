"""What polydbg knows about the JVM's loaded classes: names, source files, methods, line and variable
tables, fields — each asked once and cached (JDWP answers never change for a loaded class)."""

from __future__ import annotations

import asyncio
import bisect
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from polydbg.backends.java.kotlin import Smap, parse_smap
from polydbg.backends.kit import timeouts
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import CommandSet, Location, TypeTag

ABSENT_INFORMATION = 101
STATIC = 0x0008
SYNTHETIC = 0xF0000000 | 0x1000


def java_name(signature: str) -> str:
    """``Lcom/x/Foo$Bar;`` → ``com.x.Foo$Bar``; ``[I`` → ``int[]``."""
    dims = len(signature) - len(signature.lstrip("["))
    base = signature[dims:]
    primitive = {"B": "byte", "C": "char", "D": "double", "F": "float", "I": "int", "J": "long", "S": "short",
                 "Z": "boolean", "V": "void"}.get(base)
    name = primitive or base[1:-1].replace("/", ".") if base.startswith("L") or primitive else base
    return name + "[]" * dims


def parameter_descriptors(signature: str) -> list[str]:
    """Parameter descriptors: ``(I[Ljava/lang/String;J)V`` → ``I``, ``[Ljava/lang/String;``, ``J``."""
    inside = signature[1:signature.index(")")]
    found = []
    at = 0
    while at < len(inside):
        start = at
        while inside[at] == "[":
            at += 1
        if inside[at] == "L":
            at = inside.index(";", at)
        at += 1
        found.append(inside[start:at])
    return found


def short_name(signature: str) -> str:
    """``Ljava/util/ArrayList;`` → ``ArrayList``; ``[[I`` → ``int[][]``; ``LFoo$Bar;`` → ``Foo.Bar``."""
    name = java_name(signature)
    lambda_at = name.find("$$Lambda")
    if lambda_at >= 0:  # a lambda's hidden class: Busy$$Lambda$14/0x0000…
        return nested(name[:lambda_at].rpartition(".")[2]) + ".lambda"
    return nested(name.rpartition(".")[2])


def nested(simple: str) -> str:
    """A class's simple binary name with a dot between nested classes (``Outer$Inner`` → ``Outer.Inner``),
    a ``$`` that begins a name kept (a proxy's ``$Proxy7``, ``Outer$$Inner``)."""
    return re.sub(r"(?<=[^$])\$(?=[^$])", ".", simple)


@dataclass
class Variable:
    code_index: int
    name: str
    signature: str
    length: int
    slot: int

    def visible_at(self, index: int) -> bool:
        return self.code_index <= index < self.code_index + self.length


@dataclass
class Method:
    id: int
    name: str
    signature: str
    modifiers: int
    lines: list[tuple[int, int]] | None = None  # (code index, line), by code index; [] without line info
    variables: list[Variable] | None = None  # None: not asked yet
    no_variables: bool = False  # compiled without -g

    @property
    def is_static(self) -> bool:
        return bool(self.modifiers & STATIC)

    def line_at(self, index: int) -> int | None:
        found = None
        for code, line in self.lines or []:
            if code > index:
                break
            found = line
        return found


@dataclass
class Field:
    id: int
    name: str
    signature: str
    modifiers: int

    @property
    def is_static(self) -> bool:
        return bool(self.modifiers & STATIC)


@dataclass
class JavaClass:
    id: int
    tag: int
    signature: str
    source: str | None = None  # the SourceFile attribute ("Foo.java"); None when absent
    source_asked: bool = False
    methods: dict[int, Method] | None = None
    fields: list[Field] | None = None
    superclass: int | None = None  # 0: none
    interfaces: list[int] | None = None  # those it declares it implements (or extends); None: not asked yet
    smap: Smap | None = None  # a Kotlin class's source map (where inlined lines come from)
    smap_asked: bool = False
    line_index: list[MethodLines] | None = None  # its methods' lines, for breakpoints (``locations_of_line``)

    @property
    def name(self) -> str:
        return java_name(self.signature)

    @property
    def package_path(self) -> str:
        """``com/x`` for ``Lcom/x/Foo;``."""
        inner = self.signature[1:-1] if self.signature.startswith("L") else ""
        return inner.rpartition("/")[0]


@dataclass(frozen=True)
class MethodLines:
    """One method's source lines, for finding where a line starts: the lines (ascending) and, for each, the
    first code index of it."""

    method: Method
    lines: list[int]
    first_index: dict[int, int]

    @classmethod
    def of(cls, method: Method, table: list[tuple[int, int]]) -> MethodLines:
        first: dict[int, int] = {}
        for code, line in table:
            first[line] = min(code, first.get(line, code))
        return cls(method, sorted(first), first)


@dataclass
class Classes:
    client: JdwpClient
    by_id: dict[int, JavaClass] = field(default_factory=dict)
    _asking: dict[tuple[str, int, int], asyncio.Future[None]] = field(default_factory=dict)  # reads under way

    def known(self, class_id: int, tag: int, signature: str) -> JavaClass:
        found = self.by_id.get(class_id)
        if found is None:
            found = self.by_id[class_id] = JavaClass(class_id, tag, signature)
        return found

    async def get(self, class_id: int) -> JavaClass:
        found = self.by_id.get(class_id)
        if found is None:
            async def read() -> None:
                reply = await self.client.request(CommandSet.REFERENCE_TYPE, 1, self.client.writer().reference_type(
                    class_id).bytes(), "ReferenceType.Signature", timeouts.INSPECT_S)
                self.known(class_id, TypeTag.CLASS, reply.string())

            await self._once(("signature", class_id, 0), read)
            found = self.by_id[class_id]
        return found

    async def named(self, signature: str) -> JavaClass | None:
        """The loaded class of ``signature`` (the first loader's); None while no loader has loaded it."""
        return next(iter(await self.all_named(signature)), None)

    async def all_named(self, signature: str) -> list[JavaClass]:
        """Every loaded class of ``signature`` (one per class loader that loaded it)."""
        reply = await self.client.request(CommandSet.VM, 2, self.client.writer().string(signature).bytes(),
                                          "VirtualMachine.ClassesBySignature", timeouts.INSPECT_S)
        found = []
        for _ in range(reply.i4()):
            tag, class_id = reply.u1(), reply.reference_type()
            reply.i4()  # status
            found.append(self.known(class_id, tag, signature))
        return found

    def redefined(self, cls: JavaClass) -> None:
        """The JVM replaced ``cls``'s code (a reload): its methods' lines and variables are read again. Method ids
        stay: HotSpot points a method's id at its new version (the old one, still running in frames, has a new id
        of its own, which ``Method.IsObsolete`` says)."""
        cls.methods, cls.line_index, cls.smap, cls.smap_asked = None, None, None, False

    async def _once(self, key: tuple[str, int, int], read: Callable[[], Awaitable[None]]) -> None:
        """``read`` once, however many ask for ``key`` at the same time (they wait for the one asking:
        thousands of threads' stacks read together meet the same classes and methods)."""
        asking = self._asking.get(key)
        if asking is None:
            asking = self._asking[key] = asyncio.ensure_future(read())
            asking.add_done_callback(lambda _: self._asking.pop(key, None))  # done: the class keeps it (or, failed,
        await asyncio.shield(asking)  # the next one asks again)

    async def source(self, cls: JavaClass) -> str | None:
        if not cls.source_asked:
            async def read() -> None:
                try:
                    reply = await self.client.request(CommandSet.REFERENCE_TYPE, 7, self.client.writer(
                    ).reference_type(cls.id).bytes(), "ReferenceType.SourceFile", timeouts.INSPECT_S)
                    cls.source = reply.string()
                except JdwpRequestError:
                    cls.source = None
                cls.source_asked = True

            await self._once(("source", cls.id, 0), read)
        return cls.source

    async def smap(self, cls: JavaClass) -> Smap | None:
        """A Kotlin class's SMAP (its ``SourceDebugExtension``); None for Java's and when absent."""
        if not cls.smap_asked:
            async def read() -> None:
                if (await self.source(cls) or "").endswith(".kt"):
                    try:
                        reply = await self.client.request(CommandSet.REFERENCE_TYPE, 12, self.client.writer(
                        ).reference_type(cls.id).bytes(), "ReferenceType.SourceDebugExtension", timeouts.INSPECT_S)
                        cls.smap = parse_smap(reply.string())
                    except JdwpRequestError:  # none (ABSENT_INFORMATION)
                        cls.smap = None
                cls.smap_asked = True

            await self._once(("smap", cls.id, 0), read)
        return cls.smap

    async def shown_line(self, cls: JavaClass, line: int | None) -> int | None:
        """The line a location reads as in its class's source: Kotlin's inlined code maps back (kotlin.py)."""
        if line is None:
            return None
        smap = await self.smap(cls)
        return smap.shown_line(line) if smap is not None else line

    async def inlined(self, cls: JavaClass, line: int | None) -> bool:
        """Whether a line of ``cls`` is code a Kotlin inline function of another file put there."""
        smap = await self.smap(cls) if line is not None else None
        return smap is not None and line is not None and smap.inlined(line)

    async def methods(self, cls: JavaClass) -> dict[int, Method]:
        if cls.methods is None:
            async def read() -> None:
                reply = await self.client.request(CommandSet.REFERENCE_TYPE, 5, self.client.writer().reference_type(
                    cls.id).bytes(), "ReferenceType.Methods", timeouts.INSPECT_S)
                methods = {}
                for _ in range(reply.i4()):
                    method = Method(reply.method_id(), reply.string(), reply.string(), reply.i4())
                    methods[method.id] = method
                cls.methods = methods

            await self._once(("methods", cls.id, 0), read)
        assert cls.methods is not None
        return cls.methods

    async def method(self, class_id: int, method_id: int) -> tuple[JavaClass, Method | None]:
        cls = await self.get(class_id)
        return cls, (await self.methods(cls)).get(method_id)

    async def lines(self, cls: JavaClass, method: Method) -> list[tuple[int, int]]:
        if method.lines is None:
            async def read() -> None:
                try:
                    reply = await self.client.request(CommandSet.METHOD, 1, self.client.writer().reference_type(
                        cls.id).method_id(method.id).bytes(), "Method.LineTable", timeouts.INSPECT_S)
                    reply.i8()
                    reply.i8()
                    method.lines = sorted((reply.i8(), reply.i4()) for _ in range(reply.i4()))
                except JdwpRequestError:  # native or abstract methods, or no line information
                    method.lines = []

            await self._once(("lines", cls.id, method.id), read)
        assert method.lines is not None
        return method.lines

    async def variables(self, cls: JavaClass, method: Method) -> list[Variable]:
        if method.variables is None:
            try:
                reply = await self.client.request(CommandSet.METHOD, 2, self.client.writer().reference_type(
                    cls.id).method_id(method.id).bytes(), "Method.VariableTable", timeouts.INSPECT_S)
                reply.i4()  # argument slots
                method.variables = [Variable(reply.i8(), reply.string(), reply.string(), reply.i4(), reply.i4())
                                    for _ in range(reply.i4())]
                if not method.is_static:  # javac -g and kotlinc list `this`, which StackFrame.ThisObject reads
                    method.variables = [v for v in method.variables if v.name != "this"]
            except JdwpRequestError as exc:
                if exc.code != ABSENT_INFORMATION:
                    raise
                method.variables, method.no_variables = [], True
        return method.variables

    async def fields(self, cls: JavaClass) -> list[Field]:
        """The class's own fields, then its superclasses' (synthetic ones left out)."""
        if cls.fields is None:
            reply = await self.client.request(CommandSet.REFERENCE_TYPE, 4, self.client.writer().reference_type(
                cls.id).bytes(), "ReferenceType.Fields", timeouts.INSPECT_S)
            own = [Field(reply.field_id(), reply.string(), reply.string(), reply.i4()) for _ in range(reply.i4())]
            own = [f for f in own if not f.modifiers & SYNTHETIC and not f.name.startswith("this$")]
            inherited: list[Field] = []
            if cls.tag == TypeTag.CLASS:
                parent = await self.superclass(cls)
                if parent is not None:
                    inherited = await self.fields(parent)
            cls.fields = own + inherited
        return cls.fields

    async def outer_field(self, cls: JavaClass) -> int | None:
        """The id of an inner class's ``this$0`` (its enclosing object; ``fields`` leaves it out)."""
        reply = await self.client.request(CommandSet.REFERENCE_TYPE, 4, self.client.writer().reference_type(
            cls.id).bytes(), "ReferenceType.Fields", timeouts.INSPECT_S)
        own = [Field(reply.field_id(), reply.string(), reply.string(), reply.i4()) for _ in range(reply.i4())]
        return next((f.id for f in own if f.name == "this$0"), None)

    async def superclass(self, cls: JavaClass) -> JavaClass | None:
        if cls.superclass is None:
            reply = await self.client.request(CommandSet.CLASS_TYPE, 1, self.client.writer().reference_type(
                cls.id).bytes(), "ClassType.Superclass", timeouts.INSPECT_S)
            cls.superclass = reply.reference_type()
        return await self.get(cls.superclass) if cls.superclass else None

    async def interfaces(self, cls: JavaClass) -> list[JavaClass]:
        """The interfaces ``cls`` declares it implements (or, an interface, extends)."""
        if cls.interfaces is None:
            reply = await self.client.request(CommandSet.REFERENCE_TYPE, 10, self.client.writer().reference_type(
                cls.id).bytes(), "ReferenceType.Interfaces", timeouts.INSPECT_S)
            cls.interfaces = [reply.reference_type() for _ in range(reply.i4())]
        found = [await self.get(interface_id) for interface_id in cls.interfaces]
        for interface in found:
            interface.tag = TypeTag.INTERFACE
        return found

    async def locations_of_line(self, cls: JavaClass, line: int) -> tuple[int, list[Location]]:
        """Where ``line`` (or, inside a method, the next line with code) starts in ``cls``: the line
        bound and one location per method; (0, []) when no method of the class spans the line."""
        best: tuple[int, list[Location]] = (0, [])
        for method in await self.line_index(cls):
            if not method.lines[0] <= line <= method.lines[-1]:
                continue
            bound = method.lines[bisect.bisect_left(method.lines, line)]
            where = Location(cls.tag, cls.id, method.method.id, method.first_index[bound])
            if best[0] == 0 or bound < best[0]:
                best = (bound, [where])
            elif bound == best[0]:
                best[1].append(where)
        return best

    async def line_index(self, cls: JavaClass) -> list[MethodLines]:
        """``cls``'s methods with their lines, read once (their line tables pipelined): a file's breakpoints
        each look a line up in it (2,000 breakpoints built each method's table again for each: 5.5 s)."""
        if cls.line_index is None:
            async def read() -> None:
                methods = list((await self.methods(cls)).values())
                tables = await asyncio.gather(*(self.lines(cls, method) for method in methods))
                smap = await self.smap(cls)
                index = []
                for method, table in zip(methods, tables, strict=True):
                    if smap is not None:  # Kotlin: not the lines past the file's end that inlined code has
                        table = [(code, n) for code, n in table if smap.shown_line(n) == n]
                    if table:
                        index.append(MethodLines.of(method, table))
                cls.line_index = index

            await self._once(("line index", cls.id, 0), read)
        assert cls.line_index is not None
        return cls.line_index


def matches_file(cls: JavaClass, path: str, package: str) -> bool:
    """Whether ``cls`` was compiled from ``path`` (whose ``package`` declaration is given, "" for none):
    its SourceFile is the file's name and its package the file's — two ``Foo.java`` in different
    packages are kept apart whatever directories they lie in."""
    return cls.source == os.path.basename(path) and cls.package_path == package.replace(".", "/")
