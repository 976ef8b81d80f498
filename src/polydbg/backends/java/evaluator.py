"""Evaluates the Java subset ``expr.py`` parses, against a suspended JVM, over JDWP: the tree walk, and
what only the VM can answer while walking it (a name's value, an object's class, a box's primitive).

Written here because JDWP has no evaluation at all and no library brings one to Python. Values stay
JDWP values (primitives as numbers, objects as ids); arithmetic follows Java's binary numeric
promotion and wraps like Java's int and long (``primitives.py``, pure); a string built here (a
literal, a ``+``) stays a Python string (``Text``) until a method needs it as an argument, when the
VM makes it (``VirtualMachine.CreateString``).

The parts: ``terms.py`` (results, the error, the frame, the words of messages), ``primitives.py``
(numbers and booleans), ``naming.py`` and ``lookup.py`` (what a name means: pure rules, then the VM's
classes and fields), ``overloads.py`` (which method a call means, pure), ``invoker.py`` (calling it
over JDWP; the stale-frame and paused-thread rules are told there).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from polydbg.backends.java import expr, overloads, primitives
from polydbg.backends.java.classes import Classes, Field, JavaClass, java_name
from polydbg.backends.java.invoker import Invoker
from polydbg.backends.java.lookup import Lookup
from polydbg.backends.java.primitives import (
    BOX_OF,
    INDEXES,
    NUMERIC,
    PRIMITIVE_DESCRIPTORS,
    PRIMITIVE_LETTERS,
    STRING_SUPERTYPES,
    TAG_OF_KIND,
    UNBOX,
)
from polydbg.backends.java.terms import (
    ClassRef,
    EvaluationError,
    FrameScope,
    PackageRef,
    Result,
    Text,
    article,
    describe_node,
    not_here,
    type_name,
)
from polydbg.backends.java.values import Values
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import Tag, Value

__all__ = ["EvaluationError", "Evaluator", "FrameScope", "Text"]

# what a String built here is an instance of
_STRING_IS = ("String", "java.lang.String", "Object", "java.lang.Object", "CharSequence", "java.lang.CharSequence",
              "Comparable", "java.lang.Comparable")


class Evaluator:
    def __init__(self, client: JdwpClient, classes: Classes, values: Values,
                 source_of: Callable[[JavaClass], Awaitable[str | None]] | None = None) -> None:
        self.client = client
        self.classes = classes
        self.values = values
        self.lookup = Lookup(client, classes, values, source_of)
        self.invoker = Invoker(client, classes, values, self.lookup)

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
            raise not_here(result.prefix)
        return result

    async def truth(self, text: str, frame: FrameScope) -> bool:
        """A breakpoint condition's verdict; a non-boolean condition is an error, as in Java."""
        result = await self.evaluate(text, frame)
        result = await self.lookup.unboxed(result)
        if not isinstance(result, Value) or result.tag != Tag.BOOLEAN:
            raise EvaluationError(f"the condition {text.strip()!r} is not boolean")
        return bool(result.value)

    async def text_of(self, value: Value | Text, frame: FrameScope) -> str:
        """What ``"" + value`` gives in Java (``toString()`` for objects other than strings and boxes)."""
        if isinstance(value, Text):
            return value.text
        if not value.is_object:
            return primitives.concatenated(value)
        if not value.value:
            return "null"
        if value.tag == Tag.STRING:
            return await self.values.string(int(value.value))
        cls = await self.values.class_of(int(value.value))
        if cls.name == "java.lang.String":
            return await self.values.string(int(value.value))
        if cls.name in UNBOX:
            return await self.text_of(await self.lookup.unboxed(value), frame)
        if cls.signature.startswith("[") or frame.invoke_refusal is not None:
            return f"{cls.name}@{int(value.value):x}"
        result = await self.invoker.call(value, "toString", [], frame)
        return await self.text_of(result, frame) if isinstance(result, (Value, Text)) else "?"

    async def assign(self, value: Value | Text, signature: str, frame: FrameScope) -> Value:
        """``value`` converted for a variable of ``signature`` as Java's assignment does (widening,
        an int constant narrowed where it fits, boxing, unboxing); anything else is refused."""
        wanted_name = java_name(signature)
        if signature[0] in PRIMITIVE_LETTERS:
            return primitives.assigned(await self.lookup.unboxed(value), signature)
        if isinstance(value, Text):
            if wanted_name in STRING_SUPERTYPES:
                return await self.invoker.mirror(value)
            raise EvaluationError(f"{article(wanted_name)} cannot hold a String")
        if not value.is_object:
            return await self.invoker.argument(value, primitives.boxed_for(value, wanted_name), frame)
        if not value.value:
            return Value(Tag.ARRAY if signature.startswith("[") else Tag.OBJECT, 0)
        actual = await self.values.class_of(int(value.value))
        if await self.lookup.resolved(lambda known: overloads.assignable(actual, signature, known)):
            return value
        raise EvaluationError(f"{article(wanted_name)} cannot hold {article(actual.name)}")

    async def declaring(self, cls: JavaClass, wanted: Field) -> int:
        """The class that declares ``wanted`` (ReferenceType.GetValues wants it, not a subclass)."""
        return await self.lookup.declaring(cls, wanted)

    async def message(self, thrown: Value, cls: JavaClass, frame: FrameScope) -> str | None:
        """An exception's message: ``getMessage()``'s where its class overrides it (``Invoker.message``)."""
        return await self.invoker.message(thrown, cls, frame)

    # -- the tree ---------------------------------------------------------------------------------

    async def eval(self, node: expr.Node, frame: FrameScope) -> Result:
        if isinstance(node, expr.Literal):
            return primitives.literal(node)
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
            return primitives.unary(node.op, await self.lookup.unboxed(await self.value(node.operand, frame)))
        if isinstance(node, expr.Binary):
            return await self.binary(node, frame)
        if isinstance(node, expr.Conditional):
            test = await self.value(node.test, frame)
            test = await self.lookup.unboxed(test)
            if not isinstance(test, Value) or test.tag != Tag.BOOLEAN:
                raise EvaluationError("the condition of ?: is not boolean")
            return await self.value(node.then if test.value else node.otherwise, frame)
        if isinstance(node, expr.InstanceOf):
            operand = await self.value(node.operand, frame)
            return Value(Tag.BOOLEAN, await self.is_instance(operand, node.type, frame))
        if isinstance(node, expr.Cast):
            return await self.cast(node.type, await self.value(node.operand, frame), frame)
        if isinstance(node, expr.ClassLiteral):
            return await self.class_literal(node.type, frame)
        raise EvaluationError(f"cannot evaluate {type(node).__name__}")

    async def value(self, node: expr.Node, frame: FrameScope) -> Value | Text:
        result = await self.eval(node, frame)
        if isinstance(result, ClassRef):
            raise EvaluationError(f"{result.cls.name} is a class, not a value")
        if isinstance(result, PackageRef):
            raise not_here(result.prefix)
        return result

    async def number(self, node: expr.Node, frame: FrameScope) -> Value:
        found = await self.lookup.unboxed(await self.value(node, frame))
        if not isinstance(found, Value) or found.tag not in NUMERIC:
            raise EvaluationError(f"{describe_node(node)} is not a number")
        return found

    async def name(self, name: str, frame: FrameScope) -> Result:
        """A simple name: a local, a field of ``this``, a static of the class (or of a class it is nested
        in), a class, else the start of a package name."""
        local = await frame.local(name)
        if local is not None:
            return local
        this = await frame.this()
        if this is not None and this.value:
            own = await self.lookup.field_of(this, name)
            if own is not None:
                return own
        cls: JavaClass | None = await frame.current_class()
        while cls is not None:  # statics of the class and of the classes it is nested in
            static = await self.lookup.static_field(cls, name)
            if static is not None:
                return static
            outer = cls.name.rpartition("$")[0]
            cls = await self.lookup.find_class(outer) if outer else None
        named = await self.lookup.class_named(name, await frame.current_class())
        if named is not None:
            return ClassRef(named)
        if name[:1].islower():
            return PackageRef(name)
        raise not_here(name)

    async def member(self, target: Result, name: str, node: expr.Member) -> Result:
        if isinstance(target, PackageRef):
            qualified = f"{target.prefix}.{name}"
            found = await self.lookup.find_class(qualified)
            return ClassRef(found) if found is not None else PackageRef(qualified)
        if isinstance(target, ClassRef):
            static = await self.lookup.static_field(target.cls, name)
            if static is not None:
                return static
            nested = await self.lookup.find_class(f"{target.cls.name}${name}")
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
        value = await self.lookup.field_of(target, name)
        if value is None:
            cls = await self.values.class_of(int(target.value))
            raise EvaluationError(f"{describe_node(node.target)} ({cls.name}) has no field {name!r}")
        return value

    async def index(self, target: Value | Text, index: Value, node: expr.Index) -> Value:
        if isinstance(target, Text) or target.tag != Tag.ARRAY:
            raise EvaluationError(f"{describe_node(node.target)} is not an array")
        if not target.value:
            raise EvaluationError(f"NullPointerException: {describe_node(node.target)} is null")
        if index.tag not in INDEXES:
            raise EvaluationError(f"an array index must be an int, not {article(type_name(index.tag))}")
        length = await self.values.array_length(int(target.value))
        position = int(index.value)
        if not 0 <= position < length:
            raise EvaluationError(f"ArrayIndexOutOfBoundsException: index {position} is out of bounds for "
                                  f"{describe_node(node.target)} (length {length})")
        return (await self.values.array_items(int(target.value), position, 1))[0]

    async def is_instance(self, operand: Value | Text, type_text: str, frame: FrameScope) -> bool:
        if isinstance(operand, Text):
            return type_text in _STRING_IS
        if not operand.is_object:
            raise EvaluationError(f"instanceof needs an object, not {article(type_name(operand.tag))}")
        if not operand.value:
            return False
        actual = await self.values.class_of(int(operand.value))
        if type_text.endswith("[]"):
            return actual.name == type_text or (type_text in ("Object[]", "java.lang.Object[]")
                                                and actual.signature.startswith("[L"))
        wanted = (await self.lookup.class_named(type_text, await frame.current_class()) if "." not in type_text
                  else await self.lookup.find_class(type_text))
        if wanted is None:
            raise EvaluationError(f"class {type_text} is not loaded (or does not exist)")
        return wanted.name in await self.lookup.supertypes(actual)

    async def cast(self, type_text: str, operand: Value | Text, frame: FrameScope) -> Value | Text:
        if type_text in TAG_OF_KIND:
            return primitives.cast(type_text, await self.lookup.unboxed(operand))
        if isinstance(operand, Value) and not operand.is_object:
            return primitives.box_cast(type_text, operand)
        if isinstance(operand, Value) and operand.value and not await self.is_instance(operand, type_text, frame):
            actual = await self.values.class_of(int(operand.value))
            raise EvaluationError(f"ClassCastException: {actual.name} cannot be cast to {type_text}")
        return operand

    async def class_literal(self, written: str, frame: FrameScope) -> Value:
        """``Foo.class``, ``int.class``, ``String[].class``: the class object of the type as Java resolves
        it here; a class not loaded yet is loaded, not initialized, by the current class's loader
        (``Class.forName(name, false, loader)``: a method call, so not after debug_pause)."""
        base = written.replace("[]", "")
        dims = (len(written) - len(base)) // 2
        if base in expr.PRIMITIVES or base == "void":
            if not dims:  # int.class is Integer.TYPE
                box = await self.lookup.find_class(BOX_OF[TAG_OF_KIND[base]] if base != "void" else "java.lang.Void")
                found = await self.lookup.static_field(box, "TYPE") if box is not None else None
                if found is None:
                    raise EvaluationError(f"{written}.class cannot be read here: its box class is not loaded")
                return found
            names = ["[" * (dims - 1) + "[" + PRIMITIVE_DESCRIPTORS[base]]
        else:
            current = await frame.current_class()
            if dims == 0 and "." not in base and (loaded := await self.lookup.class_named(base, current)) is not None:
                return await self.lookup.class_object(loaded)
            names = [("[" * dims + "L" + name + ";") if dims else name
                     for name in await self.lookup.type_names(base, current)]
        for name in names:
            loaded = await self.classes.named(name.replace(".", "/") if name.startswith("[") else
                                              "L" + name.replace(".", "/") + ";")
            if loaded is not None:
                return await self.lookup.class_object(loaded)
        return await self.load_class(written, names, frame)

    async def load_class(self, written: str, names: list[str], frame: FrameScope) -> Value:
        """The first of ``names`` (binary names, arrays as ``[Lx.Y;``) that ``Class.forName`` loads."""
        loader = await self.lookup.class_loader(await frame.current_class())
        forname = await self.lookup.find_class("java.lang.Class")
        assert forname is not None  # java.lang.Class is always loaded
        for name in names:
            try:
                found = await self.invoker.call(ClassRef(forname), "forName", [Text(name), Value(Tag.BOOLEAN, False),
                                                                                loader], frame)
            except EvaluationError as exc:
                if "ClassNotFoundException" in str(exc):
                    continue
                raise EvaluationError(f"{written}.class: {exc}") from None
            if isinstance(found, Value):
                return found
        raise EvaluationError(f"no class {written} is loaded or can be loaded here (looked for "
                              f"{', '.join(names)})")

    # -- operators and calls ----------------------------------------------------------------------

    async def binary(self, node: expr.Binary, frame: FrameScope) -> Value | Text:
        op = node.op
        if op in ("&&", "||"):
            first = await self.boolean(node.left, frame, op)
            if first == (op == "||"):
                return Value(Tag.BOOLEAN, first)
            return Value(Tag.BOOLEAN, await self.boolean(node.right, frame, op))
        left = await self.value(node.left, frame)
        right = await self.value(node.right, frame)
        if op == "+" and (await self.is_string(left) or await self.is_string(right)):
            return Text(await self.text_of(left, frame) + await self.text_of(right, frame))
        if op in ("==", "!="):
            same = primitives.identical(left, right)
            if same is None:
                same = primitives.equal(await self.lookup.unboxed(left), await self.lookup.unboxed(right))
            return Value(Tag.BOOLEAN, same == (op == "=="))
        return primitives.binary(op, await self.lookup.unboxed(left), await self.lookup.unboxed(right))

    async def boolean(self, node: expr.Node, frame: FrameScope, op: str) -> bool:
        found = await self.lookup.unboxed(await self.value(node, frame))
        if not isinstance(found, Value) or found.tag != Tag.BOOLEAN:
            raise EvaluationError(f"{op} needs booleans; {describe_node(node)} is not boolean")
        return bool(found.value)

    async def is_string(self, value: Value | Text) -> bool:
        if isinstance(value, Text) or value.tag == Tag.STRING:
            return True
        if value.tag == Tag.OBJECT and value.value:
            return (await self.values.class_of(int(value.value))).name == "java.lang.String"
        return False

    async def method_call(self, node: expr.Call, frame: FrameScope) -> Value | Text:
        if node.target is None:
            this = await frame.this()
            target: Result = this if this is not None else ClassRef(await frame.current_class())
        else:
            target = await self.eval(node.target, frame)
        if isinstance(target, PackageRef):
            raise not_here(target.prefix)
        args = [await self.value(arg, frame) for arg in node.args]
        return await self.invoker.call(target, node.name, args, frame)
