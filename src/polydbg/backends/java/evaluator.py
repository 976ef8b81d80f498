"""Evaluates the Java subset ``expr.py`` parses, against a suspended JVM, over JDWP.

Written here because JDWP has no evaluation at all and no library brings one to Python. Values stay
JDWP values (primitives as numbers, objects as ids); arithmetic follows Java's binary numeric
promotion and wraps like Java's int and long; a string built here (a literal, a ``+``) stays a
Python string (``Text``) until a method needs it as an argument, when the VM makes it
(``VirtualMachine.CreateString``).

Method calls go through ``InvokeMethod`` with ``INVOKE_SINGLE_THREADED`` on the stopped thread, with
a timeout. An invoke resumes that thread, which invalidates its frame ids: the frame
(``FrameScope.invoking``) forgets them, so the backend reads them again by (thread, depth) — the next
name looked up in the same evaluation, or the next evaluation in the same stop, still works. A thread suspended by
``debug_pause`` (not by an event) cannot invoke (JDWP refuses): calls are refused with a message
that says so; reading values still works.
"""

from __future__ import annotations

import math
import os
import re
import struct
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import NamedTuple, Protocol

from polydbg.backends.java import expr
from polydbg.backends.java.classes import Classes, Field, JavaClass, Method, java_name
from polydbg.backends.java.classes import parameter_descriptors as parameter_types
from polydbg.backends.java.values import BOXES, Values, primitive_text
from polydbg.errors import AdapterRequestError, AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import TAG_OF_SIGNATURE, CommandSet, Reader, Tag, TypeTag, Value

INVOKE_TIMEOUT_S = 5.0
INVOKE_SINGLE_THREADED = 0x01
ABSTRACT = 0x0400
VARARGS = 0x0080  # a method's ACC_VARARGS
INTERFACE_TYPE = 5  # the InterfaceType command set (static interface methods, List.of)

_NUMERIC = {Tag.BYTE: 1, Tag.SHORT: 2, Tag.CHAR: 2, Tag.INT: 3, Tag.LONG: 4, Tag.FLOAT: 5, Tag.DOUBLE: 6}
_INTEGRAL = frozenset({Tag.BYTE, Tag.SHORT, Tag.CHAR, Tag.INT, Tag.LONG})
_BITS = {Tag.BYTE: 8, Tag.SHORT: 16, Tag.INT: 32, Tag.LONG: 64}
_TAG_OF_KIND = {"int": Tag.INT, "long": Tag.LONG, "float": Tag.FLOAT, "double": Tag.DOUBLE, "boolean": Tag.BOOLEAN,
                "char": Tag.CHAR, "byte": Tag.BYTE, "short": Tag.SHORT}
_BOX_OF = {Tag.INT: "java.lang.Integer", Tag.LONG: "java.lang.Long", Tag.DOUBLE: "java.lang.Double",
           Tag.FLOAT: "java.lang.Float", Tag.BOOLEAN: "java.lang.Boolean", Tag.CHAR: "java.lang.Character",
           Tag.BYTE: "java.lang.Byte", Tag.SHORT: "java.lang.Short"}
_UNBOX = {box: tag for tag, box in _BOX_OF.items()}
# widening primitive conversions (JLS 5.1.2), beyond identity
_WIDENS = {Tag.BYTE: {Tag.SHORT, Tag.INT, Tag.LONG, Tag.FLOAT, Tag.DOUBLE},
           Tag.SHORT: {Tag.INT, Tag.LONG, Tag.FLOAT, Tag.DOUBLE}, Tag.CHAR: {Tag.INT, Tag.LONG, Tag.FLOAT, Tag.DOUBLE},
           Tag.INT: {Tag.LONG, Tag.FLOAT, Tag.DOUBLE}, Tag.LONG: {Tag.FLOAT, Tag.DOUBLE}, Tag.FLOAT: {Tag.DOUBLE}}


class EvaluationError(AdapterRequestError):
    def __init__(self, message: str) -> None:
        super().__init__("evaluate", message)


class Text(NamedTuple):
    """A string computed here (a literal, a concatenation), not yet made in the VM."""

    text: str


class ClassRef(NamedTuple):
    cls: JavaClass


class PackageRef(NamedTuple):
    prefix: str


Result = Value | Text | ClassRef | PackageRef


class FrameScope(Protocol):
    """The frame an expression is evaluated in, as the backend sees it at this moment."""

    thread: int
    invoke_refusal: str | None  # why methods cannot be called here (a paused thread), else None

    async def local(self, name: str) -> Value | None: ...

    async def this(self) -> Value | None: ...

    async def current_class(self) -> JavaClass: ...

    async def invoking(self, request: Awaitable[Reader]) -> Reader:
        """Await an invoke's reply; the program's code runs meanwhile (its breakpoints must not stop it)
        and the thread's frame ids die with it."""


@dataclass
class Evaluator:
    client: JdwpClient
    classes: Classes
    values: Values
    _by_name: dict[str, JavaClass | None] = field(default_factory=dict)
    _supertypes: dict[int, set[str]] = field(default_factory=dict)
    source_of: Callable[[JavaClass], Awaitable[str | None]] | None = None  # a class's source file, if found
    _imports: dict[str, list[str]] = field(default_factory=dict)
    _messaging: bool = False  # an exception's getMessage() is being called

    async def evaluate(self, text: str, frame: FrameScope) -> Value | Text:
        try:
            tree = expr.parse(text)
        except expr.ParseError as exc:
            raise EvaluationError(str(exc)) from None
        result = await self.eval(tree, frame)
        if isinstance(result, ClassRef):
            raise EvaluationError(f"{result.cls.name} is a class, not a value; name a static field or call a "
                                  "static method of it")
        if isinstance(result, PackageRef):
            raise EvaluationError(f"{result.prefix!r} is not a local variable, a field or a class here")
        return result

    async def truth(self, text: str, frame: FrameScope) -> bool:
        """A breakpoint condition's verdict; a non-boolean condition is an error, as in Java."""
        result = await self.evaluate(text, frame)
        result = await self.unboxed(result)
        if not isinstance(result, Value) or result.tag != Tag.BOOLEAN:
            raise EvaluationError(f"the condition {text.strip()!r} is not boolean")
        return bool(result.value)

    async def text_of(self, value: Value | Text, frame: FrameScope) -> str:
        """What ``"" + value`` gives in Java (``toString()`` for objects other than strings and boxes)."""
        if isinstance(value, Text):
            return value.text
        if not value.is_object:
            return chr(value.value) if value.tag == Tag.CHAR else primitive_text(value)
        if not value.value:
            return "null"
        if value.tag == Tag.STRING:
            return await self.values.string(int(value.value))
        cls = await self.values.class_of(int(value.value))
        if cls.name == "java.lang.String":
            return await self.values.string(int(value.value))
        if cls.name in BOXES:
            return await self.text_of(await self.unboxed(value), frame)
        if cls.signature.startswith("[") or frame.invoke_refusal is not None:
            return f"{cls.name}@{int(value.value):x}"
        result = await self.call(value, "toString", [], frame)
        return await self.text_of(result, frame) if isinstance(result, (Value, Text)) else "?"

    # -- the tree ---------------------------------------------------------------------------------

    async def eval(self, node: expr.Node, frame: FrameScope) -> Result:
        if isinstance(node, expr.Literal):
            return literal(node)
        if isinstance(node, expr.This):
            this = await frame.this()
            if this is None:
                raise EvaluationError("this is not available in a static method")
            return this
        if isinstance(node, expr.Name):
            return await self.name(node.name, frame)
        if isinstance(node, expr.Member):
            return await self.member(await self.eval(node.target, frame), node.name, node)
        if isinstance(node, expr.Index):
            target = await self.value(node.target, frame)
            index = await self.number(node.position, frame)
            return await self.index(target, index, node)
        if isinstance(node, expr.Call):
            return await self.method_call(node, frame)
        if isinstance(node, expr.Unary):
            return await self.unary(node, frame)
        if isinstance(node, expr.Binary):
            return await self.binary(node, frame)
        if isinstance(node, expr.Conditional):
            test = await self.value(node.test, frame)
            test = await self.unboxed(test)
            if not isinstance(test, Value) or test.tag != Tag.BOOLEAN:
                raise EvaluationError("the condition of ?: is not boolean")
            return await self.value(node.then if test.value else node.otherwise, frame)
        if isinstance(node, expr.InstanceOf):
            operand = await self.value(node.operand, frame)
            return Value(Tag.BOOLEAN, await self.is_instance(operand, node.type, frame))
        if isinstance(node, expr.Cast):
            return await self.cast(node.type, await self.value(node.operand, frame), frame)
        raise EvaluationError(f"cannot evaluate {type(node).__name__}")

    async def value(self, node: expr.Node, frame: FrameScope) -> Value | Text:
        result = await self.eval(node, frame)
        if isinstance(result, ClassRef):
            raise EvaluationError(f"{result.cls.name} is a class, not a value")
        if isinstance(result, PackageRef):
            raise EvaluationError(f"{result.prefix!r} is not a local variable, a field or a class here")
        return result

    async def number(self, node: expr.Node, frame: FrameScope) -> Value:
        found = await self.unboxed(await self.value(node, frame))
        if not isinstance(found, Value) or found.tag not in _NUMERIC:
            raise EvaluationError(f"{describe_node(node)} is not a number")
        return found

    async def name(self, name: str, frame: FrameScope) -> Result:
        local = await frame.local(name)
        if local is not None:
            return local
        this = await frame.this()
        if this is not None and this.value:
            own = await self.field_of(this, name)
            if own is not None:
                return own
        cls: JavaClass | None = await frame.current_class()
        while cls is not None:  # statics of the class and of the classes it is nested in
            static = await self.static_field(cls, name)
            if static is not None:
                return static
            outer = cls.name.rpartition("$")[0]
            cls = await self.find_class(outer) if outer else None
        named = await self.class_named(name, frame)
        if named is not None:
            return ClassRef(named)
        if name[:1].islower():
            return PackageRef(name)
        raise EvaluationError(f"{name!r} is not a local variable, a field or a class here")

    async def member(self, target: Result, name: str, node: expr.Member) -> Result:
        if isinstance(target, PackageRef):
            qualified = f"{target.prefix}.{name}"
            found = await self.find_class(qualified)
            return ClassRef(found) if found is not None else PackageRef(qualified)
        if isinstance(target, ClassRef):
            static = await self.static_field(target.cls, name)
            if static is not None:
                return static
            nested = await self.find_class(f"{target.cls.name}${name}")
            if nested is not None:
                return ClassRef(nested)
            raise EvaluationError(f"{target.cls.name} has no static field {name!r}")
        if isinstance(target, Text):
            raise EvaluationError(f"a String has no field {name!r}; call a method (length())")
        if not target.is_object:
            raise EvaluationError(f"{describe_node(node.target)} is {article(type_name(target.tag))}: it has no field "
                                  f"{name!r}")
        if not target.value:
            raise EvaluationError(f"NullPointerException: {describe_node(node.target)} is null (reading .{name})")
        if name == "length" and target.tag == Tag.ARRAY:
            return Value(Tag.INT, await self.values.array_length(int(target.value)))
        value = await self.field_of(target, name)
        if value is None:
            cls = await self.values.class_of(int(target.value))
            raise EvaluationError(f"{describe_node(node.target)} ({cls.name}) has no field {name!r}")
        return value

    async def index(self, target: Value | Text, index: Value, node: expr.Index) -> Value:
        if isinstance(target, Text) or target.tag != Tag.ARRAY:
            raise EvaluationError(f"{describe_node(node.target)} is not an array")
        if not target.value:
            raise EvaluationError(f"NullPointerException: {describe_node(node.target)} is null")
        if index.tag not in (Tag.INT, Tag.SHORT, Tag.BYTE, Tag.CHAR):
            raise EvaluationError(f"an array index must be an int, not {article(type_name(index.tag))}")
        length = await self.values.array_length(int(target.value))
        position = int(index.value)
        if not 0 <= position < length:
            raise EvaluationError(f"ArrayIndexOutOfBoundsException: index {position} is out of bounds for "
                                  f"{describe_node(node.target)} (length {length})")
        return (await self.values.array_items(int(target.value), position, 1))[0]

    # -- fields and classes ---------------------------------------------------------------------------

    async def field_of(self, target: Value, name: str) -> Value | None:
        cls = await self.values.class_of(int(target.value))
        for candidate in await self.classes.fields(cls):
            if candidate.name == name:
                if candidate.is_static:
                    return (await self.values.static_values(await self.declaring(cls, candidate), [candidate.id]))[0]
                return (await self.values.field_values(int(target.value), [candidate.id]))[0]
        return None

    async def static_field(self, cls: JavaClass, name: str) -> Value | None:
        for candidate in await self.classes.fields(cls):
            if candidate.name == name and candidate.is_static:
                return (await self.values.static_values(await self.declaring(cls, candidate), [candidate.id]))[0]
        return None

    async def declaring(self, cls: JavaClass, wanted: Field) -> int:
        """The class that declares ``wanted`` (ReferenceType.GetValues wants it, not a subclass)."""
        current: JavaClass | None = cls
        while current is not None:
            own = await self.classes.fields(current)
            parent = await self.classes.superclass(current) if current.tag == TypeTag.CLASS else None
            inherited = await self.classes.fields(parent) if parent is not None else []
            if any(f.id == wanted.id for f in own) and not any(f.id == wanted.id for f in inherited):
                return current.id
            current = parent
        return cls.id

    async def class_named(self, name: str, frame: FrameScope) -> JavaClass | None:
        """A simple class name as Java resolves it here: the current class's package, its nested
        classes, ``java.lang``, then any loaded class of that simple name."""
        current = await frame.current_class()
        package = current.name.rpartition(".")[0]
        outer = current.name
        candidates = []
        while outer:
            candidates.append(f"{outer}${name}")
            outer = outer.rpartition("$")[0]
        candidates += [f"{package}.{name}" if package else name, f"java.lang.{name}"]
        candidates += await self.imported(current, name)
        for candidate in candidates:
            found = await self.find_class(candidate)
            if found is not None:
                return found
        for cls in list(self.classes.by_id.values()):
            if cls.signature.startswith("L") and cls.name.rpartition(".")[2].replace("$", ".").endswith(name) and (
                    cls.name.rpartition(".")[2].rpartition("$")[2] == name):
                return cls
        return None

    async def imported(self, current: JavaClass, name: str) -> list[str]:
        """Where the current source file's imports say a simple name may come from: ``import
        java.util.Arrays;`` gives ``java.util.Arrays``, ``import java.util.*;`` gives ``java.util.<name>``."""
        path = await self.source_of(current) if self.source_of is not None else None
        if not path or not os.path.isabs(path) or not os.path.isfile(path):
            return []
        if path not in self._imports:
            try:
                with open(path, encoding="utf-8", errors="replace") as source:
                    text = source.read(200_000)
            except OSError:
                text = ""
            self._imports[path] = [m.group(1) for m in _IMPORT.finditer(text)]
        found = []
        for imported in self._imports[path]:
            if imported.endswith(".*"):
                found.append(f"{imported[:-2]}.{name}")
            elif imported.rpartition(".")[2] == name:
                found.insert(0, imported)
        return found

    async def find_class(self, name: str) -> JavaClass | None:
        """A loaded class by its binary name (``java.util.List``, ``Basics$Point``)."""
        if name in self._by_name:
            return self._by_name[name]
        found = await self.classes.named("L" + name.replace(".", "/") + ";")
        if found is None and "." in name and "$" not in name.rpartition(".")[2]:
            head, _, tail = name.rpartition(".")
            if head[:1].isupper() or ("." in head and head.rpartition(".")[2][:1].isupper()):
                found = await self.find_class(f"{head}${tail}")  # Outer.Inner written with a dot
        if found is not None:
            self._by_name[name] = found
        return found

    async def supertypes(self, cls: JavaClass) -> set[str]:
        """Every class and interface name ``cls`` is assignable to."""
        known = self._supertypes.get(cls.id)
        if known is not None:
            return known
        names = {cls.name}
        if cls.tag == TypeTag.CLASS:
            parent = await self.classes.superclass(cls)
            if parent is not None:
                names |= await self.supertypes(parent)
        reply = await self.client.request(CommandSet.REFERENCE_TYPE, 10, self.client.writer().reference_type(
            cls.id).bytes(), "ReferenceType.Interfaces", INVOKE_TIMEOUT_S)
        for interface_id in [reply.reference_type() for _ in range(reply.i4())]:
            interface = await self.classes.get(interface_id)
            interface.tag = TypeTag.INTERFACE
            names |= await self.supertypes(interface)
        names.add("java.lang.Object")
        self._supertypes[cls.id] = names
        return names

    async def is_instance(self, operand: Value | Text, type_text: str, frame: FrameScope) -> bool:
        if isinstance(operand, Text):
            return type_text in ("String", "java.lang.String", "Object", "java.lang.Object", "CharSequence",
                                 "java.lang.CharSequence", "Comparable", "java.lang.Comparable")
        if not operand.is_object:
            raise EvaluationError(f"instanceof needs an object, not {article(type_name(operand.tag))}")
        if not operand.value:
            return False
        actual = await self.values.class_of(int(operand.value))
        if type_text.endswith("[]"):
            return actual.name == type_text or (type_text in ("Object[]", "java.lang.Object[]")
                                                and actual.signature.startswith("[L"))
        wanted = await self.class_named(type_text, frame) if "." not in type_text else await self.find_class(type_text)
        if wanted is None:
            raise EvaluationError(f"class {type_text} is not loaded (or does not exist)")
        return wanted.name in await self.supertypes(actual)

    async def cast(self, type_text: str, operand: Value | Text, frame: FrameScope) -> Value | Text:
        tag = _TAG_OF_KIND.get(type_text)
        if tag is not None:
            source = await self.unboxed(operand)
            if not isinstance(source, Value) or (source.tag == Tag.BOOLEAN) != (tag == Tag.BOOLEAN) or (
                    source.tag not in _NUMERIC and source.tag != Tag.BOOLEAN):
                raise EvaluationError(f"cannot cast {describe_value(source)} to {type_text}")
            return convert(source, tag)
        if isinstance(operand, Value) and not operand.is_object:
            box = _BOX_OF.get(operand.tag, "")
            if type_text in (box, box.rpartition(".")[2], "Object", "java.lang.Object", "Number"):
                return operand  # boxing: the value reads the same
            raise EvaluationError(f"cannot cast {article(type_name(operand.tag))} to {type_text}")
        if isinstance(operand, Value) and operand.value and not await self.is_instance(operand, type_text, frame):
            actual = await self.values.class_of(int(operand.value))
            raise EvaluationError(f"ClassCastException: {actual.name} cannot be cast to {type_text}")
        return operand

    # -- operators --------------------------------------------------------------------------------

    async def unary(self, node: expr.Unary, frame: FrameScope) -> Value:
        operand = await self.unboxed(await self.value(node.operand, frame))
        if not isinstance(operand, Value):
            raise EvaluationError(f"operator {node.op} does not apply to a String")
        if node.op == "!":
            if operand.tag != Tag.BOOLEAN:
                raise EvaluationError(f"! needs a boolean, not {article(type_name(operand.tag))}")
            return Value(Tag.BOOLEAN, not operand.value)
        if operand.tag not in _NUMERIC:
            raise EvaluationError(f"{node.op} needs a number, not {article(type_name(operand.tag))}")
        promoted = convert(operand, Tag.INT if _NUMERIC[operand.tag] < _NUMERIC[Tag.INT] else operand.tag)
        if node.op == "-":
            return make(promoted.tag, -promoted.value)
        if node.op == "~":
            if promoted.tag not in _INTEGRAL:
                raise EvaluationError(f"~ needs an integral number, not {article(type_name(operand.tag))}")
            return make(promoted.tag, ~promoted.value)
        return promoted

    async def binary(self, node: expr.Binary, frame: FrameScope) -> Value | Text:
        op = node.op
        if op in ("&&", "||"):
            first = await self.boolean(node.left, frame, op)
            if first == (op == "||"):
                return Value(Tag.BOOLEAN, first)
            return Value(Tag.BOOLEAN, await self.boolean(node.right, frame, op))
        left_raw = await self.value(node.left, frame)
        right_raw = await self.value(node.right, frame)
        if op == "+" and (await self.is_string(left_raw) or await self.is_string(right_raw)):
            return Text(await self.text_of(left_raw, frame) + await self.text_of(right_raw, frame))
        if op in ("==", "!="):
            same = await self.equal(left_raw, right_raw)
            return Value(Tag.BOOLEAN, same == (op == "=="))
        left, right = await self.unboxed(left_raw), await self.unboxed(right_raw)
        if not isinstance(left, Value) or not isinstance(right, Value):
            raise EvaluationError(f"operator {op} does not apply to a String")
        if op in ("&", "|", "^") and left.tag == Tag.BOOLEAN and right.tag == Tag.BOOLEAN:
            a, b = bool(left.value), bool(right.value)
            return Value(Tag.BOOLEAN, a & b if op == "&" else a | b if op == "|" else a ^ b)
        for side in (left, right):
            if side.tag not in _NUMERIC:
                raise EvaluationError(f"operator {op} needs numbers, not {describe_value(side)}")
        if op in ("<<", ">>", ">>>"):
            return shift(op, left, right)
        kind = promote(left.tag, right.tag)
        a, b = convert(left, kind).value, convert(right, kind).value
        if op in ("<", ">", "<=", ">="):
            verdict = a < b if op == "<" else a > b if op == ">" else a <= b if op == "<=" else a >= b
            return Value(Tag.BOOLEAN, verdict)
        if op in ("&", "|", "^"):
            if kind not in _INTEGRAL:
                raise EvaluationError(f"operator {op} needs integral numbers or booleans")
            return make(kind, a & b if op == "&" else a | b if op == "|" else a ^ b)
        return make(kind, arithmetic(op, kind, a, b))

    async def boolean(self, node: expr.Node, frame: FrameScope, op: str) -> bool:
        found = await self.unboxed(await self.value(node, frame))
        if not isinstance(found, Value) or found.tag != Tag.BOOLEAN:
            raise EvaluationError(f"{op} needs booleans; {describe_node(node)} is not boolean")
        return bool(found.value)

    async def is_string(self, value: Value | Text) -> bool:
        if isinstance(value, Text) or value.tag == Tag.STRING:
            return True
        if value.tag == Tag.OBJECT and value.value:
            return (await self.values.class_of(int(value.value))).name == "java.lang.String"
        return False

    async def equal(self, left: Value | Text, right: Value | Text) -> bool:
        """Java's ``==``: numbers by value (unboxing one side), references by identity."""
        if isinstance(left, Text) or isinstance(right, Text):
            if isinstance(left, Text) and isinstance(right, Text):
                return left.text == right.text  # two constants: interned in Java
            return False
        if left.is_object and right.is_object:
            return int(left.value or 0) == int(right.value or 0)
        a, b = await self.unboxed(left), await self.unboxed(right)
        if not isinstance(a, Value) or not isinstance(b, Value) or a.is_object or b.is_object:
            raise EvaluationError("== compares a primitive with an object that is not a box")
        if a.tag == Tag.BOOLEAN or b.tag == Tag.BOOLEAN:
            if a.tag != b.tag:
                raise EvaluationError("== compares a boolean with a number")
            return bool(a.value) == bool(b.value)
        kind = promote(a.tag, b.tag)
        return bool(convert(a, kind).value == convert(b, kind).value)

    async def unboxed(self, value: Value | Text) -> Value | Text:
        """An ``Integer`` as its ``int`` (Java unboxes for arithmetic, comparisons and conditions)."""
        if isinstance(value, Text) or value.tag != Tag.OBJECT or not value.value:
            return value
        cls = await self.values.class_of(int(value.value))
        if cls.name not in _UNBOX:
            return value
        inner = await self.field_of(value, "value")
        return inner if inner is not None else value

    # -- method calls -----------------------------------------------------------------------------

    async def method_call(self, node: expr.Call, frame: FrameScope) -> Value | Text:
        if node.target is None:
            this = await frame.this()
            target: Result = this if this is not None else ClassRef(await frame.current_class())
        else:
            target = await self.eval(node.target, frame)
        if isinstance(target, PackageRef):
            raise EvaluationError(f"{target.prefix!r} is not a local variable, a field or a class here")
        args = [await self.value(arg, frame) for arg in node.args]
        return await self.call(target, node.name, args, frame)

    async def call(self, target: Value | Text | ClassRef, name: str, args: list[Value | Text],
                   frame: FrameScope) -> Value | Text:
        if frame.invoke_refusal is not None:
            raise EvaluationError(f"{name}() cannot be called: {frame.invoke_refusal}")
        if isinstance(target, Value) and not target.is_object:
            raise EvaluationError(f"{article(type_name(target.tag))} has no methods ({name}())")
        if isinstance(target, Value) and not target.value:
            raise EvaluationError(f"NullPointerException: calling {name}() on null")
        if isinstance(target, Text):
            target = await self.mirror(target)
        cls = target.cls if isinstance(target, ClassRef) else await self.values.class_of(int(target.value))
        method, owner, spread = await self.choose(cls, name, args, static_only=isinstance(target, ClassRef))
        parameters = parameter_types(method.signature)
        if spread:  # f(a, b, c) of f(X, Y...): b and c go into a new Y[]
            fixed = len(parameters) - 1
            packed = await self.new_array(parameters[-1], args[fixed:], frame)
            converted = [await self.argument(arg, parameter, frame) for arg, parameter in
                         zip(args[:fixed], parameters[:fixed], strict=True)] + [packed]
        else:
            converted = [await self.argument(arg, parameter, frame) for arg, parameter in
                         zip(args, parameters, strict=True)]
        receiver = None if isinstance(target, ClassRef) or method.is_static else target
        return await self.invoke(receiver, owner, method, converted, frame)

    async def invoke(self, receiver: Value | None, owner: JavaClass, method: Method, args: list[Value],
                     frame: FrameScope) -> Value:
        """One InvokeMethod on the stopped thread (single-threaded, bounded by ``INVOKE_TIMEOUT_S``)."""
        writer = self.client.writer()
        label = f"{owner.name.rpartition('.')[2]}.{method.name}()"
        if receiver is None:
            command_set = INTERFACE_TYPE if owner.tag == TypeTag.INTERFACE else CommandSet.CLASS_TYPE
            command = 3 if command_set == CommandSet.CLASS_TYPE else 1
            writer.reference_type(owner.id).object_id(frame.thread).method_id(method.id)
        else:
            command_set, command = CommandSet.OBJECT_REFERENCE, 6
            writer.object_id(int(receiver.value)).object_id(frame.thread).reference_type(owner.id).method_id(
                method.id)
        writer.i4(len(args))
        for argument in args:
            writer.value(argument)
        writer.i4(INVOKE_SINGLE_THREADED)
        # JDWP runs the method only when the thread's suspend count is 1: another thread's event that
        # stopped every thread at the same moment (queued behind this one) counts once more, and the call
        # would hang. Those extra counts are lifted for the call and put back after it.
        thread_ref = self.client.writer().object_id(frame.thread).bytes()
        counted = await self.client.request(CommandSet.THREAD_REFERENCE, 12, thread_ref,
                                            "ThreadReference.SuspendCount", INVOKE_TIMEOUT_S)
        extra = max(0, counted.i4() - 1)
        for _ in range(extra):
            await self.client.request(CommandSet.THREAD_REFERENCE, 3, thread_ref, "ThreadReference.Resume",
                                      INVOKE_TIMEOUT_S)
        try:
            reply = await frame.invoking(self.client.request(command_set, command, writer.bytes(), label,
                                                             INVOKE_TIMEOUT_S))
        except JdwpRequestError as exc:
            if exc.code in (13, 10):  # thread not suspended by an event / invalid thread
                raise EvaluationError(f"{label} cannot be called: the thread is not stopped at an event (JDWP "
                                      f"error {exc.code}); break at a breakpoint or step first") from None
            raise
        except AdapterTimeoutError:
            raise EvaluationError(f"{label} did not return within {INVOKE_TIMEOUT_S:g} s; it may still be running "
                                  "in the stopped thread (debug_continue or debug_terminate ends it)") from None
        finally:
            for _ in range(extra):
                await self.client.request(CommandSet.THREAD_REFERENCE, 2, thread_ref, "ThreadReference.Suspend",
                                          INVOKE_TIMEOUT_S)
        returned, thrown = reply.value(), reply.value()
        if thrown.value:
            raise EvaluationError(f"{label} threw {await self.exception_text(thrown, frame)}")
        return returned

    async def exception_text(self, thrown: Value, frame: FrameScope) -> str:
        cls = await self.values.class_of(int(thrown.value))
        message = await self.field_of(thrown, "detailMessage")
        text = await self.values.string(int(message.value)) if message is not None and message.value else None
        if text is None and not self._messaging:  # (not when getMessage() itself threw)
            self._messaging = True
            try:
                text = await self.overridden_message(thrown, cls, frame)
            finally:
                self._messaging = False
        return f"{cls.name}: {text}" if text is not None else cls.name

    async def overridden_message(self, thrown: Value, cls: JavaClass, frame: FrameScope) -> str | None:
        """The message of an exception whose class overrides ``getMessage()`` (its ``detailMessage``
        is null: jopt-simple's exceptions build theirs from fields), by calling it; None when the
        class does not override it, or the call cannot be made or fails."""
        try:
            if not any(method.signature == "()Ljava/lang/String;" and owner.name != "java.lang.Throwable"
                       for method, owner in await self.methods_named(cls, "getMessage")):
                return None
            returned = await self.call(thrown, "getMessage", [], frame)
        except (EvaluationError, JdwpRequestError, AdapterTimeoutError):
            return None
        if isinstance(returned, Text):
            return returned.text
        return await self.values.string(int(returned.value)) if returned.is_object and returned.value else None

    async def choose(self, cls: JavaClass, name: str, args: list[Value | Text],
                     static_only: bool) -> tuple[Method, JavaClass, bool]:
        """The overload Java would pick (simplified): applicable by arity and argument types, the
        closest conversions winning; a varargs method (``String.format``, ``List.of``) called with its
        trailing arguments spread only when none is applicable as written (the third item: spread)."""
        candidates = await self.methods_named(cls, name)
        if not candidates:
            raise EvaluationError(f"{cls.name} has no method {name}()")
        arg_types = [await self.type_of(arg) for arg in args]
        best: tuple[int, Method, JavaClass] | None = None
        arities = sorted({len(parameter_types(m.signature)) for m, _ in candidates})
        for method, owner in candidates:
            if static_only and not method.is_static:
                continue
            parameters = parameter_types(method.signature)
            if len(parameters) != len(args):
                continue
            cost = await self.costs(arg_types, parameters)
            if cost is not None and (best is None or cost < best[0]):
                best = (cost, method, owner)
        if best is None:
            for method, owner in candidates:
                parameters = parameter_types(method.signature)
                if (static_only and not method.is_static) or not method.modifiers & VARARGS or (
                        len(args) < len(parameters) - 1):
                    continue
                fixed = len(parameters) - 1
                cost = await self.costs(arg_types, parameters[:fixed] + [parameters[-1][1:]] * (len(args) - fixed))
                if cost is not None and (best is None or cost < best[0]):
                    best = (cost, method, owner)
            if best is not None:
                return best[1], best[2], True
        if best is None:
            applicable_by_arity = [m for m, _ in candidates if len(parameter_types(m.signature)) == len(args)]
            if static_only and applicable_by_arity and not any(m.is_static for m in applicable_by_arity):
                raise EvaluationError(f"{cls.name}.{name}() is not static; call it on an instance")
            wanted = ", ".join(java_name(a) if a else "?" for a in (
                sig_of(tag, c) for tag, c in arg_types)) or "no arguments"
            raise EvaluationError(f"no {name}() of {cls.name} takes ({wanted}); it takes "
                                  f"{' or '.join(str(n) for n in arities)} argument(s): "
                                  + "; ".join(f"{name}{readable_signature(m.signature)}" for m, _ in candidates[:6]))
        return best[1], best[2], False

    async def costs(self, arg_types: list[tuple[int, JavaClass | None]], parameters: list[str]) -> int | None:
        """The summed conversion cost of the arguments to the parameters (None: one does not fit)."""
        cost = 0
        for (arg_tag, arg_class), parameter in zip(arg_types, parameters, strict=True):
            step = await self.conversion_cost(arg_tag, arg_class, parameter)
            if step is None:
                return None
            cost += step
        return cost

    async def new_array(self, signature: str, items: list[Value | Text], frame: FrameScope) -> Value:
        """A new array of ``signature`` (``[Ljava/lang/String;``) in the VM holding ``items``, converted."""
        array_class = await self.classes.named(signature)
        if array_class is None:
            raise EvaluationError(f"cannot pass the varargs as {java_name(signature)}: that array class is not "
                                  "loaded in the program; pass an array variable instead")
        reply = await self.client.request(CommandSet.ARRAY_TYPE, 1, self.client.writer().reference_type(
            array_class.id).i4(len(items)).bytes(), "ArrayType.NewInstance", INVOKE_TIMEOUT_S)
        array = reply.value()
        if items:
            elements = [await self.argument(item, signature[1:], frame) for item in items]
            writer = self.client.writer().object_id(int(array.value)).i4(0).i4(len(elements))
            for element in elements:
                writer.untagged(element)
            await self.client.request(CommandSet.ARRAY_REFERENCE, 3, writer.bytes(), "ArrayReference.SetValues",
                                      INVOKE_TIMEOUT_S)
        return array

    async def methods_named(self, cls: JavaClass, name: str) -> list[tuple[Method, JavaClass]]:
        """Methods named ``name`` in ``cls``, its superclasses and interfaces (nearest first,
        overridden signatures once)."""
        found: list[tuple[Method, JavaClass]] = []
        seen: set[str] = set()
        queue: list[JavaClass] = [cls]
        visited: set[int] = set()
        while queue:
            current = queue.pop(0)
            if current.id in visited:
                continue
            visited.add(current.id)
            for method in (await self.classes.methods(current)).values():
                if method.name == name and method.signature not in seen:
                    if method.modifiers & ABSTRACT and current.tag == TypeTag.INTERFACE and current is not cls:
                        seen.add(method.signature)  # dispatched virtually: the abstract one is enough
                    seen.add(method.signature)
                    found.append((method, current))
            if current.tag == TypeTag.CLASS:
                parent = await self.classes.superclass(current)
                if parent is not None:
                    queue.append(parent)
            reply = await self.client.request(CommandSet.REFERENCE_TYPE, 10, self.client.writer().reference_type(
                current.id).bytes(), "ReferenceType.Interfaces", INVOKE_TIMEOUT_S)
            for interface_id in [reply.reference_type() for _ in range(reply.i4())]:
                interface = await self.classes.get(interface_id)
                interface.tag = TypeTag.INTERFACE
                queue.append(interface)
        return found

    async def type_of(self, value: Value | Text) -> tuple[int, JavaClass | None]:
        if isinstance(value, Text):
            return Tag.STRING, None
        if value.is_object and value.value:
            return value.tag, await self.values.class_of(int(value.value))
        return value.tag, None

    async def conversion_cost(self, tag: int, cls: JavaClass | None, parameter: str) -> int | None:
        """How far an argument is from a parameter type (None: not applicable)."""
        wanted = TAG_OF_SIGNATURE.get(parameter[0], Tag.OBJECT)
        if tag in _NUMERIC or tag == Tag.BOOLEAN:
            if parameter[0] in _PRIMITIVE_LETTERS:
                if wanted == tag:
                    return 0
                return 1 + sorted(_WIDENS.get(tag, set())).index(wanted) if wanted in _WIDENS.get(tag, set()) else None
            box = "L" + _BOX_OF[tag].replace(".", "/") + ";"
            if parameter in (box, "Ljava/lang/Object;", "Ljava/lang/Number;", "Ljava/io/Serializable;",
                             "Ljava/lang/Comparable;"):
                return 20 if parameter == box else 25
            return None
        if tag == Tag.OBJECT and cls is None:  # null
            return 0 if parameter[0] in "L[" else None
        if parameter[0] in _PRIMITIVE_LETTERS:  # unboxing
            if cls is not None and cls.name in _UNBOX:
                inner = _UNBOX[cls.name]
                return 20 if inner == wanted else (21 if wanted in _WIDENS.get(inner, set()) else None)
            return None
        actual_name = "java.lang.String" if tag == Tag.STRING and cls is None else (cls.name if cls else "")
        wanted_name = java_name(parameter)
        if actual_name == wanted_name:
            return 0
        if wanted_name == "java.lang.Object":
            return 10
        if cls is None:
            return 2 if wanted_name in ("java.lang.CharSequence", "java.lang.Comparable", "java.io.Serializable") \
                else None
        if cls.signature.startswith("[") or parameter.startswith("["):
            return 2 if await self.array_assignable(cls.signature, parameter) else None
        return 2 if wanted_name in await self.supertypes(cls) else None

    async def array_assignable(self, actual: str, wanted: str) -> bool:
        """Whether a value of type ``actual`` (a signature; one side is an array) is assignable to
        ``wanted``: arrays are Objects, Cloneable and Serializable, and covariant in their
        reference element types (a ``String[]`` is an ``Object[]`` and a ``CharSequence[]``)."""
        if not wanted.startswith("["):
            return actual.startswith("[") and wanted in ("Ljava/lang/Object;", "Ljava/lang/Cloneable;",
                                                         "Ljava/io/Serializable;")
        if not actual.startswith("["):
            return False
        actual, wanted = actual[1:], wanted[1:]
        if actual == wanted:
            return True
        if actual[0] not in "L[" or wanted[0] not in "L[":
            return False  # int[] is not long[] nor Object[]
        if actual.startswith("[") or wanted.startswith("["):
            return await self.array_assignable(actual, wanted)
        if wanted == "Ljava/lang/Object;":
            return True
        element = await self.classes.named(actual)
        return element is not None and java_name(wanted) in await self.supertypes(element)

    async def argument(self, value: Value | Text, parameter: str, frame: FrameScope) -> Value:
        """``value`` as the parameter wants it: widened, boxed, unboxed, or a string made in the VM."""
        wanted = TAG_OF_SIGNATURE.get(parameter[0], Tag.OBJECT)
        if isinstance(value, Text):
            return await self.mirror(value)
        if parameter[0] in _PRIMITIVE_LETTERS:
            unboxed = await self.unboxed(value)
            assert isinstance(unboxed, Value)
            return convert(unboxed, wanted)
        if value.is_object:
            return value
        box = await self.find_class(_BOX_OF[value.tag])  # Integer.valueOf(5) for an Object parameter
        if box is not None:
            for method in (await self.classes.methods(box)).values():
                if method.name == "valueOf" and method.signature == f"({chr(value.tag)}){box.signature}":
                    return await self.invoke(None, box, method, [value], frame)
        raise EvaluationError(f"cannot box {article(type_name(value.tag))} ({_BOX_OF[value.tag]} is not loaded)")

    async def assign(self, value: Value | Text, signature: str, frame: FrameScope) -> Value:
        """``value`` converted for a variable of ``signature`` as Java's assignment does (widening,
        an int constant narrowed where it fits, boxing, unboxing); anything else is refused."""
        wanted_name = java_name(signature)
        if signature[0] in _PRIMITIVE_LETTERS:
            wanted = TAG_OF_SIGNATURE[signature[0]]
            source = await self.unboxed(value)
            if isinstance(source, Text) or source.is_object:
                raise EvaluationError(f"{article(wanted_name)} cannot hold {describe_value(source)}")
            if source.tag == wanted:
                return source
            if wanted in _WIDENS.get(source.tag, set()):
                return convert(source, wanted)
            narrowed = convert(source, wanted) if source.tag == Tag.INT and wanted in (
                Tag.BYTE, Tag.SHORT, Tag.CHAR) else None
            if narrowed is not None and narrowed.value == source.value:
                return narrowed
            raise EvaluationError(f"{article(type_name(source.tag))} is not assignable to {article(wanted_name)} "
                                  f"without a cast; write ({wanted_name}) before the value")
        if isinstance(value, Text):
            if wanted_name in _STRING_SUPERTYPES:
                return await self.mirror(value)
            raise EvaluationError(f"{article(wanted_name)} cannot hold a String")
        if not value.is_object:
            box = _BOX_OF.get(value.tag, "")
            if wanted_name in (box, "java.lang.Object", "java.lang.Number", "java.io.Serializable"):
                return await self.argument(value, "L" + box.replace(".", "/") + ";", frame)
            raise EvaluationError(f"{article(wanted_name)} cannot hold {article(type_name(value.tag))}")
        if not value.value:
            return Value(Tag.ARRAY if signature.startswith("[") else Tag.OBJECT, 0)
        actual = await self.values.class_of(int(value.value))
        if actual.signature == signature or (
                await self.array_assignable(actual.signature, signature)
                if actual.signature.startswith("[") or signature.startswith("[")
                else wanted_name in await self.supertypes(actual)):
            return value
        raise EvaluationError(f"{article(wanted_name)} cannot hold {article(actual.name)}")

    async def mirror(self, text: Text) -> Value:
        reply = await self.client.request(CommandSet.VM, 11, self.client.writer().string(text.text).bytes(),
                                          "VirtualMachine.CreateString", INVOKE_TIMEOUT_S)
        return Value(Tag.STRING, reply.object_id())


_PRIMITIVE_LETTERS = "BCDFIJSZ"
_IMPORT = re.compile(r"^\s*import\s+([\w.]+(?:\.\*)?)\s*;", re.MULTILINE)
_STRING_SUPERTYPES = frozenset({"java.lang.String", "java.lang.Object", "java.lang.CharSequence",
                                "java.lang.Comparable", "java.io.Serializable"})


# -- numbers ----------------------------------------------------------------------------------------------


def literal(node: expr.Literal) -> Value | Text:
    if node.kind == "String":
        return Text(str(node.value))
    if node.kind == "null":
        return Value(Tag.OBJECT, 0)
    if node.kind == "char":
        return Value(Tag.CHAR, ord(str(node.value)))
    return Value(_TAG_OF_KIND[node.kind], node.value)


def promote(a: int, b: int) -> int:
    """Binary numeric promotion (JLS 5.6.2)."""
    for kind in (Tag.DOUBLE, Tag.FLOAT, Tag.LONG):
        if kind in (a, b):
            return kind
    return Tag.INT


def make(tag: int, number: object) -> Value:
    """A value of ``tag`` from a Python number, wrapped or rounded as Java stores it."""
    if tag in _BITS or tag == Tag.CHAR:
        bits = _BITS.get(tag, 16)
        wrapped = int(number) & ((1 << bits) - 1)  # type: ignore[call-overload]
        if tag != Tag.CHAR and wrapped >= 1 << (bits - 1):
            wrapped -= 1 << bits
        return Value(tag, wrapped)
    if tag == Tag.FLOAT:
        return Value(tag, to_float32(float(number)))  # type: ignore[arg-type]
    if tag == Tag.DOUBLE:
        return Value(tag, float(number))  # type: ignore[arg-type]
    if tag == Tag.BOOLEAN:
        return Value(tag, bool(number))
    raise EvaluationError(f"cannot make {article(type_name(tag))}")


def to_float32(number: float) -> float:
    if math.isnan(number) or math.isinf(number):
        return number
    try:
        return float(struct.unpack(">f", struct.pack(">f", number))[0])
    except OverflowError:
        return math.copysign(math.inf, number)


def convert(value: Value, tag: int) -> Value:
    """A primitive conversion (widening or narrowing, as a cast does)."""
    if value.tag == tag:
        return value
    if tag == Tag.BOOLEAN or value.tag == Tag.BOOLEAN:
        raise EvaluationError(f"cannot convert {article(type_name(value.tag))} to {type_name(tag)}")
    number = value.value
    if tag in _BITS or tag == Tag.CHAR:
        if isinstance(number, float):
            if math.isnan(number):
                return Value(tag, 0)
            bits = 64 if tag == Tag.LONG else 32
            limit = 1 << (bits - 1)
            clamped = max(-limit, min(limit - 1, math.trunc(number))) if not math.isinf(number) else (
                limit - 1 if number > 0 else -limit)
            return make(tag, make(Tag.LONG if bits == 64 else Tag.INT, clamped).value)
        return make(tag, number)
    return make(tag, float(number))


def arithmetic(op: str, kind: int, a: float, b: float) -> float:
    if kind in _INTEGRAL:
        if op in ("/", "%") and b == 0:
            raise EvaluationError("ArithmeticException: / by zero")
        if op == "/":
            quotient = abs(int(a)) // abs(int(b))
            return quotient if (a >= 0) == (b >= 0) else -quotient
        if op == "%":
            rest = abs(int(a)) % abs(int(b))
            return rest if a >= 0 else -rest
    elif op == "/":
        if b == 0:
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
        return a / b
    elif op == "%":
        return math.nan if b == 0 else math.fmod(a, b)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    raise EvaluationError(f"unknown operator {op}")


def shift(op: str, left: Value, right: Value) -> Value:
    if left.tag not in _INTEGRAL or right.tag not in _INTEGRAL:
        raise EvaluationError(f"{op} needs integral numbers")
    kind = Tag.LONG if left.tag == Tag.LONG else Tag.INT
    bits = 64 if kind == Tag.LONG else 32
    value, distance = int(convert(left, kind).value), int(right.value) & (bits - 1)
    if op == "<<":
        return make(kind, value << distance)
    if op == ">>":
        return make(kind, value >> distance)
    return make(kind, (value & ((1 << bits) - 1)) >> distance)


# -- names ------------------------------------------------------------------------------------------------


def readable_signature(signature: str) -> str:
    return "(" + ", ".join(java_name(p).rpartition(".")[2] for p in parameter_types(signature)) + ")"


def sig_of(tag: int, cls: JavaClass | None) -> str:
    if cls is not None:
        return cls.signature
    if tag == Tag.STRING:
        return "Ljava/lang/String;"
    if tag == Tag.OBJECT:
        return "Ljava/lang/Object;"
    return chr(tag)


def type_name(tag: int) -> str:
    return {Tag.BYTE: "byte", Tag.CHAR: "char", Tag.FLOAT: "float", Tag.DOUBLE: "double", Tag.INT: "int",
            Tag.LONG: "long", Tag.SHORT: "short", Tag.BOOLEAN: "boolean", Tag.VOID: "void"}.get(tag, "object")


def article(noun: str) -> str:
    """``an int``, ``a long``, ``an Integer``."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def describe_value(value: Value | Text) -> str:
    if isinstance(value, Text):
        return "a String"
    return f"{article(type_name(value.tag))}" if not value.is_object else "an object"


def describe_node(node: expr.Node) -> str:
    if isinstance(node, expr.Name):
        return node.name
    if isinstance(node, expr.This):
        return "this"
    if isinstance(node, expr.Member):
        return f"{describe_node(node.target)}.{node.name}"
    if isinstance(node, expr.Index):
        return f"{describe_node(node.target)}[…]"
    if isinstance(node, expr.Call):
        return (f"{describe_node(node.target)}." if node.target is not None else "") + f"{node.name}()"
    return "the value"
