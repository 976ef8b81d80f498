"""Java's primitive values, computed here as the JVM would: literals, binary numeric promotion
(JLS 5.6.2), widening and narrowing conversions (JLS 5.1.2, 5.1.3), the operators on numbers and
booleans, ``==`` between primitives, casts and the conversions of assignment — and how a primitive
prints (``String.valueOf``). Pure: values in, values out, no JDWP request.

Values are JDWP ``Value``s (a tag and a Python number). Python's integers do not overflow, so every
integral result goes through ``make``, which wraps it to the type's width the way Java's int and long
arithmetic does; a float result is rounded to 32 bits there too. Division and remainder truncate
toward zero (Python's ``//`` floors), and a zero integral divisor is Java's ArithmeticException.
"""

from __future__ import annotations

import json
import math
import struct

from polydbg.backends.java import expr
from polydbg.backends.java.classes import java_name
from polydbg.backends.java.terms import EvaluationError, Text, article, describe_value, type_name
from polydbg.jdwp.codec import TAG_OF_SIGNATURE, Tag, Value

NUMERIC = {Tag.BYTE: 1, Tag.SHORT: 2, Tag.CHAR: 2, Tag.INT: 3, Tag.LONG: 4, Tag.FLOAT: 5, Tag.DOUBLE: 6}  # rank
INTEGRAL = frozenset({Tag.BYTE, Tag.SHORT, Tag.CHAR, Tag.INT, Tag.LONG})
INDEXES = (Tag.INT, Tag.SHORT, Tag.BYTE, Tag.CHAR)  # what an array index may be (promoted to int)
PRIMITIVE_LETTERS = "BCDFIJSZ"  # the descriptors of primitive types
TAG_OF_KIND = {"int": Tag.INT, "long": Tag.LONG, "float": Tag.FLOAT, "double": Tag.DOUBLE, "boolean": Tag.BOOLEAN,
               "char": Tag.CHAR, "byte": Tag.BYTE, "short": Tag.SHORT}
PRIMITIVE_DESCRIPTORS = {"int": "I", "long": "J", "float": "F", "double": "D", "boolean": "Z", "char": "C", "byte": "B",
                         "short": "S"}
BOX_OF = {Tag.INT: "java.lang.Integer", Tag.LONG: "java.lang.Long", Tag.DOUBLE: "java.lang.Double",
          Tag.FLOAT: "java.lang.Float", Tag.BOOLEAN: "java.lang.Boolean", Tag.CHAR: "java.lang.Character",
          Tag.BYTE: "java.lang.Byte", Tag.SHORT: "java.lang.Short"}
UNBOX = {box: tag for tag, box in BOX_OF.items()}
# widening primitive conversions (JLS 5.1.2), beyond identity
WIDENS = {Tag.BYTE: {Tag.SHORT, Tag.INT, Tag.LONG, Tag.FLOAT, Tag.DOUBLE},
          Tag.SHORT: {Tag.INT, Tag.LONG, Tag.FLOAT, Tag.DOUBLE}, Tag.CHAR: {Tag.INT, Tag.LONG, Tag.FLOAT, Tag.DOUBLE},
          Tag.INT: {Tag.LONG, Tag.FLOAT, Tag.DOUBLE}, Tag.LONG: {Tag.FLOAT, Tag.DOUBLE}, Tag.FLOAT: {Tag.DOUBLE}}
# what a String is assignable to
STRING_SUPERTYPES = frozenset({"java.lang.String", "java.lang.Object", "java.lang.CharSequence",
                               "java.lang.Comparable", "java.io.Serializable"})
_BITS = {Tag.BYTE: 8, Tag.SHORT: 16, Tag.INT: 32, Tag.LONG: 64}


def literal(node: expr.Literal) -> Value | Text:
    if node.kind == "String":
        return Text(str(node.value))
    if node.kind == "null":
        return Value(Tag.OBJECT, 0)
    if node.kind == "char":
        return Value(Tag.CHAR, ord(str(node.value)))
    return Value(TAG_OF_KIND[node.kind], node.value)


# -- conversions ------------------------------------------------------------------------------------------


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


def cast(type_text: str, source: Value | Text) -> Value:
    """``(int) x`` and the like: ``source`` (already unboxed) converted to the primitive ``type_text``."""
    tag = TAG_OF_KIND[type_text]
    if not isinstance(source, Value) or (source.tag == Tag.BOOLEAN) != (tag == Tag.BOOLEAN) or (
            source.tag not in NUMERIC and source.tag != Tag.BOOLEAN):
        raise EvaluationError(f"cannot cast {describe_value(source)} to {type_text}")
    return convert(source, tag)


def box_cast(type_text: str, operand: Value) -> Value:
    """``(Integer) 5``, ``(Object) 5``: a primitive cast to a reference type is boxed (its value reads the
    same); to any other reference type it is refused."""
    box = BOX_OF.get(operand.tag, "")
    if type_text in (box, box.rpartition(".")[2], "Object", "java.lang.Object", "Number"):
        return operand
    raise EvaluationError(f"cannot cast {article(type_name(operand.tag))} to {type_text}")


def assigned(source: Value | Text, signature: str) -> Value:
    """``source`` (already unboxed) for a primitive variable of ``signature`` as Java's assignment
    converts it: identity, widening, or an int constant narrowed to byte/short/char where it fits."""
    wanted_name = java_name(signature)
    wanted = TAG_OF_SIGNATURE[signature[0]]
    if isinstance(source, Text) or source.is_object:
        raise EvaluationError(f"{article(wanted_name)} cannot hold {describe_value(source)}")
    if source.tag == wanted:
        return source
    if wanted in WIDENS.get(source.tag, set()):
        return convert(source, wanted)
    narrowed = convert(source, wanted) if source.tag == Tag.INT and wanted in (Tag.BYTE, Tag.SHORT, Tag.CHAR) else None
    if narrowed is not None and narrowed.value == source.value:
        return narrowed
    raise EvaluationError(f"{article(type_name(source.tag))} is not assignable to {article(wanted_name)} without a "
                          f"cast; write ({wanted_name}) before the value")


def boxed_for(value: Value, wanted_name: str) -> str:
    """The box signature a primitive ``value`` takes to be assigned to a variable of class
    ``wanted_name`` (its box, Object, Number, Serializable); anything else is refused."""
    box = BOX_OF.get(value.tag, "")
    if wanted_name in (box, "java.lang.Object", "java.lang.Number", "java.io.Serializable"):
        return "L" + box.replace(".", "/") + ";"
    raise EvaluationError(f"{article(wanted_name)} cannot hold {article(type_name(value.tag))}")


# -- operators --------------------------------------------------------------------------------------------


def arithmetic(op: str, kind: int, a: float, b: float) -> float:
    """``a op b`` for + - * / % in the promoted type ``kind`` (not yet wrapped: ``make`` does that)."""
    if kind in INTEGRAL:
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
    """``<<``, ``>>``, ``>>>``: the left operand promoted alone (int or long), the distance masked to it."""
    if left.tag not in INTEGRAL or right.tag not in INTEGRAL:
        raise EvaluationError(f"{op} needs integral numbers")
    kind = Tag.LONG if left.tag == Tag.LONG else Tag.INT
    bits = 64 if kind == Tag.LONG else 32
    value, distance = int(convert(left, kind).value), int(right.value) & (bits - 1)
    if op == "<<":
        return make(kind, value << distance)
    if op == ">>":
        return make(kind, value >> distance)
    return make(kind, (value & ((1 << bits) - 1)) >> distance)


def unary(op: str, operand: Value | Text) -> Value:
    """``!``, ``-``, ``~``, ``+`` on an (already unboxed) operand; unary numeric promotion first."""
    if not isinstance(operand, Value):
        raise EvaluationError(f"operator {op} does not apply to a String")
    if op == "!":
        if operand.tag != Tag.BOOLEAN:
            raise EvaluationError(f"! needs a boolean, not {article(type_name(operand.tag))}")
        return Value(Tag.BOOLEAN, not operand.value)
    if operand.tag not in NUMERIC:
        raise EvaluationError(f"{op} needs a number, not {article(type_name(operand.tag))}")
    promoted = convert(operand, Tag.INT if NUMERIC[operand.tag] < NUMERIC[Tag.INT] else operand.tag)
    if op == "-":
        return make(promoted.tag, -promoted.value)
    if op == "~":
        if promoted.tag not in INTEGRAL:
            raise EvaluationError(f"~ needs an integral number, not {article(type_name(operand.tag))}")
        return make(promoted.tag, ~promoted.value)
    return promoted


def binary(op: str, left: Value | Text, right: Value | Text) -> Value:
    """A binary operator other than ``&&``, ``||``, ``==``, ``!=`` and string ``+``, on (already unboxed)
    operands: ``& | ^`` on booleans, else numbers promoted together (shifts: each alone)."""
    if not isinstance(left, Value) or not isinstance(right, Value):
        raise EvaluationError(f"operator {op} does not apply to a String")
    if op in ("&", "|", "^") and left.tag == Tag.BOOLEAN and right.tag == Tag.BOOLEAN:
        a, b = bool(left.value), bool(right.value)
        return Value(Tag.BOOLEAN, a & b if op == "&" else a | b if op == "|" else a ^ b)
    for side in (left, right):
        if side.tag not in NUMERIC:
            raise EvaluationError(f"operator {op} needs numbers, not {describe_value(side)}")
    if op in ("<<", ">>", ">>>"):
        return shift(op, left, right)
    kind = promote(left.tag, right.tag)
    x, y = convert(left, kind).value, convert(right, kind).value
    if op in ("<", ">", "<=", ">="):
        verdict = x < y if op == "<" else x > y if op == ">" else x <= y if op == "<=" else x >= y
        return Value(Tag.BOOLEAN, verdict)
    if op in ("&", "|", "^"):
        if kind not in INTEGRAL:
            raise EvaluationError(f"operator {op} needs integral numbers or booleans")
        return make(kind, x & y if op == "&" else x | y if op == "|" else x ^ y)
    return make(kind, arithmetic(op, kind, x, y))


def identical(left: Value | Text, right: Value | Text) -> bool | None:
    """``==`` where no unboxing is involved: strings built here by their text (two constants are
    interned in Java), a built string never the VM's object, two references by identity; None when a
    primitive is involved (``equal`` decides, after unboxing)."""
    if isinstance(left, Text) or isinstance(right, Text):
        if isinstance(left, Text) and isinstance(right, Text):
            return left.text == right.text
        return False
    if left.is_object and right.is_object:
        return int(left.value or 0) == int(right.value or 0)
    return None


def equal(a: Value | Text, b: Value | Text) -> bool:
    """``==`` between primitives (a box already unboxed), compared after binary numeric promotion."""
    if not isinstance(a, Value) or not isinstance(b, Value) or a.is_object or b.is_object:
        raise EvaluationError("== compares a primitive with an object that is not a box")
    if a.tag == Tag.BOOLEAN or b.tag == Tag.BOOLEAN:
        if a.tag != b.tag:
            raise EvaluationError("== compares a boolean with a number")
        return bool(a.value) == bool(b.value)
    kind = promote(a.tag, b.tag)
    return bool(convert(a, kind).value == convert(b, kind).value)


# -- texts ------------------------------------------------------------------------------------------------


def primitive_text(value: Value) -> str:
    """A primitive as a value listing shows it: chars quoted (``'c'``), floats with their ``.0``."""
    tag, raw = value.tag, value.value
    if tag == Tag.BOOLEAN:
        return "true" if raw else "false"
    if tag == Tag.CHAR:
        escaped = json.dumps(chr(raw), ensure_ascii=False)[1:-1].replace('\\"', '"').replace("'", "\\'")
        return f"'{escaped}'"
    if tag in (Tag.FLOAT, Tag.DOUBLE):
        number = float(raw)
        if math.isnan(number):
            return "NaN"
        if math.isinf(number):
            return "Infinity" if number > 0 else "-Infinity"
        text = f"{number:.7g}" if tag == Tag.FLOAT else repr(number)
        return text if any(c in text for c in ".eEn") else text + ".0"
    if tag == Tag.VOID:
        return "void"
    return str(raw)


def concatenated(value: Value) -> str:
    """A primitive as ``"" + value`` writes it: a char as itself, the rest as ``primitive_text``."""
    return chr(value.value) if value.tag == Tag.CHAR else primitive_text(value)
