"""The Java expression parser and the evaluator's arithmetic (Java's numeric promotion and wrapping),
without a JVM."""

from __future__ import annotations

import math

import pytest

from polydbg.backends.java import expr
from polydbg.backends.java.classes import parameter_descriptors as parameter_types
from polydbg.backends.java.primitives import arithmetic, convert, make, promote, shift
from polydbg.backends.java.terms import EvaluationError
from polydbg.jdwp.codec import Tag, Value


def test_precedence_and_associativity() -> None:
    tree = expr.parse("a + b * c - d")
    assert tree == expr.Binary("-", expr.Binary("+", expr.Name("a"), expr.Binary("*", expr.Name("b"), expr.Name("c"))),
                               expr.Name("d"))
    assert expr.parse("a || b && !c") == expr.Binary("||", expr.Name("a"), expr.Binary(
        "&&", expr.Name("b"), expr.Unary("!", expr.Name("c"))))
    assert expr.parse("x < 3 == flag") == expr.Binary("==", expr.Binary("<", expr.Name("x"), expr.Literal("int", 3)),
                                                      expr.Name("flag"))
    assert expr.parse("c ? 1 : d ? 2 : 3") == expr.Conditional(expr.Name("c"), expr.Literal("int", 1), expr.Conditional(
        expr.Name("d"), expr.Literal("int", 2), expr.Literal("int", 3)))


def test_postfix_calls_members_and_indexes() -> None:
    assert expr.parse("name.length() + count") == expr.Binary("+", expr.Call(expr.Name("name"), "length", ()),
                                                              expr.Name("count"))
    member = expr.Member(expr.Index(expr.Member(expr.Name("a"), "b"), expr.Name("i")), "c")
    assert expr.parse('a.b[i].c.d(1, "x")') == expr.Call(member, "d", (expr.Literal("int", 1),
                                                                       expr.Literal("String", "x")))
    assert expr.parse("this.x") == expr.Member(expr.This(), "x")
    assert expr.parse("twice(3)") == expr.Call(None, "twice", (expr.Literal("int", 3),))


def test_casts_and_parenthesized_names() -> None:
    assert expr.parse("(int) x") == expr.Cast("int", expr.Name("x"))
    assert expr.parse("(String) o") == expr.Cast("String", expr.Name("o"))
    assert expr.parse("(java.util.List) o") == expr.Cast("java.util.List", expr.Name("o"))
    assert expr.parse("(char) (c + 1)") == expr.Cast("char", expr.Binary("+", expr.Name("c"), expr.Literal("int", 1)))
    assert expr.parse("(x) - 1") == expr.Binary("-", expr.Name("x"), expr.Literal("int", 1))
    assert expr.parse("o instanceof String[]") == expr.InstanceOf(expr.Name("o"), "String[]")


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("42", "int", 42), ("0x1F", "int", 31), ("0b101", "int", 5), ("017", "int", 15), ("1_000", "int", 1000),
    ("0xFFFFFFFF", "int", -1), ("-2147483648", "int", -2147483648), ("5L", "long", 5), ("1.5", "double", 1.5),
    ("1e3", "double", 1000.0), ("2f", "float", 2.0), ("3d", "double", 3.0), ("'a'", "char", "a"),
    ("'\\n'", "char", "\n"), ("'\\u00e9'", "char", "é"), ('"a\\tb"', "String", "a\tb"), ("true", "boolean", True),
    ("null", "null", None)])
def test_literals(text: str, kind: str, value: object) -> None:
    assert expr.parse(text) == expr.Literal(kind, value)


@pytest.mark.parametrize(("text", "said"), [
    ("x = 5", "assignment is not supported"), ("x++", "increment is not supported"),
    ("new Foo()", "object creation (new) is not supported"), ("a -> a", "lambdas is not supported"),
    ("a +", "expected a value at column 4"), ("(a", "expected ')'"), ("a b", "expected the end"),
    ("3000000000", "too large for int (column 1); add L"), ("#", "unexpected '#'"), ("", "empty")])
def test_what_is_refused_says_why(text: str, said: str) -> None:
    with pytest.raises(expr.ParseError) as caught:
        expr.parse(text)
    assert said in str(caught.value)


def test_binary_numeric_promotion() -> None:
    assert promote(Tag.INT, Tag.INT) == Tag.INT
    assert promote(Tag.BYTE, Tag.CHAR) == Tag.INT
    assert promote(Tag.INT, Tag.LONG) == Tag.LONG
    assert promote(Tag.LONG, Tag.FLOAT) == Tag.FLOAT
    assert promote(Tag.FLOAT, Tag.DOUBLE) == Tag.DOUBLE


def test_int_and_long_wrap_like_java() -> None:
    assert make(Tag.INT, 2**31) == Value(Tag.INT, -(2**31))
    assert make(Tag.LONG, 2**63) == Value(Tag.LONG, -(2**63))
    assert make(Tag.BYTE, 200) == Value(Tag.BYTE, -56)
    assert make(Tag.CHAR, -1) == Value(Tag.CHAR, 0xFFFF)
    assert arithmetic("/", Tag.INT, -7, 2) == -3  # truncates toward zero
    assert arithmetic("%", Tag.INT, -7, 3) == -1  # the dividend's sign
    assert make(Tag.INT, arithmetic("/", Tag.INT, -(2**31), -1)) == Value(Tag.INT, -(2**31))
    with pytest.raises(EvaluationError, match="/ by zero"):
        arithmetic("/", Tag.INT, 1, 0)
    assert arithmetic("/", Tag.DOUBLE, 1.0, 0.0) == math.inf
    assert math.isnan(arithmetic("/", Tag.DOUBLE, 0.0, 0.0))
    assert arithmetic("/", Tag.DOUBLE, -1.0, 0.0) == -math.inf


def test_shifts_mask_their_distance() -> None:
    assert shift("<<", Value(Tag.INT, 1), Value(Tag.INT, 33)) == Value(Tag.INT, 2)
    assert shift(">>>", Value(Tag.INT, -1), Value(Tag.INT, 28)) == Value(Tag.INT, 15)
    assert shift(">>", Value(Tag.INT, -16), Value(Tag.INT, 2)) == Value(Tag.INT, -4)
    assert shift("<<", Value(Tag.LONG, 1), Value(Tag.INT, 40)) == Value(Tag.LONG, 1 << 40)


def test_casts_convert_as_java_does() -> None:
    assert convert(Value(Tag.DOUBLE, 3.99), Tag.INT) == Value(Tag.INT, 3)
    assert convert(Value(Tag.DOUBLE, -3.99), Tag.INT) == Value(Tag.INT, -3)
    assert convert(Value(Tag.DOUBLE, 1e20), Tag.INT) == Value(Tag.INT, 2**31 - 1)  # saturates
    assert convert(Value(Tag.DOUBLE, math.nan), Tag.LONG) == Value(Tag.LONG, 0)
    assert convert(Value(Tag.INT, 81), Tag.CHAR) == Value(Tag.CHAR, 81)
    assert convert(Value(Tag.LONG, 2**32 + 5), Tag.INT) == Value(Tag.INT, 5)
    assert convert(Value(Tag.DOUBLE, 0.1), Tag.FLOAT).value == pytest.approx(0.1, rel=1e-7)
    assert convert(Value(Tag.DOUBLE, 0.1), Tag.FLOAT).value != 0.1  # rounded to float32


def test_method_signatures() -> None:
    assert parameter_types("(I[Ljava/lang/String;J)V") == ["I", "[Ljava/lang/String;", "J"]
    assert parameter_types("()Ljava/lang/String;") == []
    assert parameter_types("([[IZLjava/util/Map;)I") == ["[[I", "Z", "Ljava/util/Map;"]


def test_class_literals_of_names_nested_names_primitives_and_arrays() -> None:
    assert expr.parse("Foo.class") == expr.ClassLiteral("Foo")
    assert expr.parse("java.util.Map.Entry.class") == expr.ClassLiteral("java.util.Map.Entry")
    assert expr.parse("int.class") == expr.ClassLiteral("int")
    assert expr.parse("void.class") == expr.ClassLiteral("void")
    assert expr.parse("String[][].class") == expr.ClassLiteral("String[][]")
    assert expr.parse("(int.class)") == expr.ClassLiteral("int")  # not a cast
    assert expr.parse("Foo.class.getName()") == expr.Call(expr.ClassLiteral("Foo"), "getName", ())
    assert expr.parse("f.isAnnotationPresent(Named.class)") == expr.Call(
        expr.Name("f"), "isAnnotationPresent", (expr.ClassLiteral("Named"),))
    for text, said in (("int", "expected .class after the type int"), ("x[]", r"expected .class after the type x\[\]")):
        with pytest.raises(expr.ParseError, match=said):
            expr.parse(text)
