"""A parser for the subset of Java expressions polydbg evaluates (conditions, logpoints, debug_evaluate).

JDWP evaluates nothing: a debugger brings its own evaluator. No Python library parses Java
expressions (javalang parses whole compilation units, is unmaintained and has no source positions
for errors), and the subset is small, so it is parsed here by precedence climbing into a tree of
NamedTuples that ``evaluator.py`` walks. What it accepts is ``SUBSET`` — every refusal names it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

SUBSET = ("literals, local variables, this, fields (a.b.c), static fields (Class.FIELD), a[i], a.length, "
          "method calls (s.length(), Math.max(a, b)), + - * / % << >> >>>, comparisons, == != on references, "
          "&& || !, & | ^ ~, ?:, instanceof, casts and class literals (Foo.class)")


class ParseError(ValueError):
    """An expression outside the subset or not Java at all; the message says where and what is supported."""


class Literal(NamedTuple):
    kind: str  # int | long | float | double | boolean | char | String | null
    value: object


class Name(NamedTuple):
    name: str  # a local, a field of this, a static field of the current class, or a class / package prefix


class This(NamedTuple):
    pass


class Member(NamedTuple):
    target: Node
    name: str


class Index(NamedTuple):
    target: Node
    position: Node


class Call(NamedTuple):
    target: Node | None  # None: a method of this or a static one of the current class
    name: str
    args: tuple[Node, ...]


class Unary(NamedTuple):
    op: str
    operand: Node


class Binary(NamedTuple):
    op: str
    left: Node
    right: Node


class Conditional(NamedTuple):
    test: Node
    then: Node
    otherwise: Node


class InstanceOf(NamedTuple):
    operand: Node
    type: str


class Cast(NamedTuple):
    type: str
    operand: Node


class ClassLiteral(NamedTuple):
    type: str  # as written: int, String[], java.util.Map.Entry, Outer.Inner


Node = Literal | Name | This | Member | Index | Call | Unary | Binary | Conditional | InstanceOf | Cast | ClassLiteral

PRIMITIVES = frozenset({"byte", "short", "char", "int", "long", "float", "double", "boolean"})
_BINARY = [  # lowest precedence first
    ("||",), ("&&",), ("|",), ("^",), ("&",), ("==", "!="), ("<", ">", "<=", ">=", "instanceof"),
    ("<<", ">>", ">>>"), ("+", "-"), ("*", "/", "%")]
_LEVEL = {op: level for level, ops in enumerate(_BINARY) for op in ops}
_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<number>(?:0[xX][0-9a-fA-F_]+|0[bB][01_]+|(?:\d[\d_]*)?\.?\d[\d_]*(?:[eE][+-]?\d+)?)[lLfFdD]?)
  | (?P<char>'(?:[^'\\\n]|\\(?:u+[0-9a-fA-F]{4}|[0-7]{1,3}|.))')
  | (?P<string>"(?:[^"\\\n]|\\(?:u+[0-9a-fA-F]{4}|[0-7]{1,3}|.))*")
  | (?P<name>[A-Za-z_$][\w$]*)
  | (?P<op>>>>=|<<=|>>=|>>>|->|::|\+\+|--|&&|\|\||==|!=|<=|>=|<<|>>|[-+*/%<>!~&|^?:.,()\[\]=;{}@])
""", re.VERBOSE)
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", "s": " ", '"': '"', "'": "'", "\\": "\\"}
_NOT_SUPPORTED = {
    "=": "assignment", "+=": "assignment", "++": "increment", "--": "decrement", "->": "lambdas",
    "new": "object creation (new)", "{": "blocks", ";": "statements", "::": "method references",
    "switch": "switch expressions", "@": "annotations"}


class Token(NamedTuple):
    kind: str  # number | char | string | name | op | end
    text: str
    at: int


def tokenize(text: str) -> list[Token]:
    tokens = []
    at = 0
    while at < len(text):
        match = _TOKEN.match(text, at)
        if match is None:
            raise ParseError(f"unexpected {text[at]!r} at column {at + 1}")
        kind = match.lastgroup or "op"
        if kind != "space":
            tokens.append(Token(kind, match.group(), at))
        at = match.end()
    tokens.append(Token("end", "", len(text)))
    return tokens


def parse(text: str) -> Node:
    """The tree of one expression; ``ParseError`` says what was wrong, where, and what is supported."""
    if not text.strip():
        raise ParseError("the expression is empty")
    parser = _Parser(tokenize(text))
    node = parser.expression()
    parser.expect_end()
    return node


class _Parser:
    def __init__(self, tokens: list[Token]) -> None:
        self.tokens = tokens
        self.at = 0

    @property
    def token(self) -> Token:
        return self.tokens[self.at]

    def peek(self, offset: int = 1) -> Token:
        return self.tokens[min(self.at + offset, len(self.tokens) - 1)]

    def take(self) -> Token:
        token = self.token
        self.at = min(self.at + 1, len(self.tokens) - 1)
        return token

    def accept(self, text: str) -> bool:
        if self.token.kind in ("op", "name") and self.token.text == text:
            self.take()
            return True
        return False

    def expect(self, text: str) -> None:
        if not self.accept(text):
            self.fail(f"expected {text!r}")

    def expect_end(self) -> None:
        if self.token.kind != "end":
            self.fail("expected the end of the expression")

    def fail(self, what: str) -> None:
        token = self.token
        unsupported = _NOT_SUPPORTED.get(token.text) if token.kind in ("op", "name") else None
        if token.text == "=" and self.peek().text == ">":
            unsupported = "lambdas"
        if unsupported:
            raise ParseError(f"{unsupported} is not supported (column {token.at + 1}); "
                             f"the supported subset: {SUBSET}")
        found = "the end" if token.kind == "end" else repr(token.text)
        raise ParseError(f"{what} at column {token.at + 1}, found {found}")

    def expression(self) -> Node:
        test = self.binary(0)
        if self.accept("?"):
            then = self.expression()
            self.expect(":")
            return Conditional(test, then, self.expression())
        return test

    def binary(self, level: int) -> Node:
        if level == len(_BINARY):
            return self.unary()
        left = self.binary(level + 1)
        while self.token.kind in ("op", "name") and _LEVEL.get(self.token.text) == level:
            op = self.take().text
            if op == "instanceof":
                left = InstanceOf(left, self.type_name())
            else:
                left = Binary(op, left, self.binary(level + 1))
        return left

    def unary(self) -> Node:
        token = self.token
        if token.kind == "op" and token.text in ("-", "+", "!", "~"):
            self.take()
            operand = self.unary()
            if token.text == "-" and isinstance(operand, Literal) and operand.kind in ("int", "long") \
                    and isinstance(operand.value, int) and operand.value > 0:
                return Literal(operand.kind, -operand.value)  # -2147483648 is a literal in Java
            return Unary(token.text, operand)
        if token.kind == "op" and token.text == "(" and self.is_cast():
            self.take()
            type_name = self.type_name()
            self.expect(")")
            return Cast(type_name, self.unary())
        return self.postfix(self.primary())

    def is_cast(self) -> bool:
        """``(int) x``, ``(String) o``, ``(java.util.List) o`` — not ``(a) + b`` nor ``(a)``."""
        offset = 1
        if self.peek(offset).kind != "name":
            return False
        first = self.peek(offset).text
        offset += 1
        while self.peek(offset).text == "." and self.peek(offset + 1).kind == "name":
            if self.peek(offset + 1).text == "class":
                return False  # (int.class): a class literal
            offset += 2
        while self.peek(offset).text == "[" and self.peek(offset + 1).text == "]":
            offset += 2
        if self.peek(offset).text != ")":
            return False
        after = self.peek(offset + 1)
        if first in PRIMITIVES:
            return True
        if not first[:1].isupper() and offset == 2:
            return False  # (x) - 1 is a parenthesized variable
        return after.kind in ("name", "number", "string", "char") or after.text in ("(", "!", "~")

    def type_name(self) -> str:
        token = self.token
        if token.kind != "name":
            self.fail("expected a type name")
        parts = [self.take().text]
        while self.token.text == "." and self.peek().kind == "name":
            self.take()
            parts.append(self.take().text)
        dims = 0
        while self.token.text == "[" and self.peek().text == "]":
            self.take()
            self.take()
            dims += 1
        return ".".join(parts) + "[]" * dims

    def primary(self) -> Node:
        token = self.token
        if token.kind == "number":
            self.take()
            return number(token.text, token.at)
        if token.kind == "string":
            self.take()
            return Literal("String", unescape(token.text[1:-1]))
        if token.kind == "char":
            self.take()
            text = unescape(token.text[1:-1])
            if len(text) != 1:
                raise ParseError(f"{token.text} is not one char (column {token.at + 1})")
            return Literal("char", text)
        if token.kind == "op" and token.text == "(":
            self.take()
            inner = self.expression()
            self.expect(")")
            return inner
        if token.kind == "name":
            word = token.text
            if word in ("true", "false"):
                self.take()
                return Literal("boolean", word == "true")
            if word == "null":
                self.take()
                return Literal("null", None)
            if word == "this":
                self.take()
                return This()
            if word in PRIMITIVES or word == "void":
                self.take()
                return self.class_literal(word)
            if word in _NOT_SUPPORTED or word == "super":
                self.fail("expected a value")
            self.take()
            if self.token.text == "(":
                return Call(None, word, self.arguments())
            return Name(word)
        self.fail("expected a value")
        raise AssertionError  # fail() raises

    def arguments(self) -> tuple[Node, ...]:
        self.expect("(")
        args: list[Node] = []
        if not self.accept(")"):
            args.append(self.expression())
            while self.accept(","):
                args.append(self.expression())
            self.expect(")")
        return tuple(args)

    def class_literal(self, type_name: str) -> ClassLiteral:
        """``int.class``, ``String[].class``: the type (its name already taken), then ``[]``s and ``.class``."""
        while self.token.text == "[" and self.peek().text == "]":
            self.take()
            self.take()
            type_name += "[]"
        if not (self.accept(".") and self.accept("class")):
            self.fail(f"expected .class after the type {type_name}")
        return ClassLiteral(type_name)

    def postfix(self, node: Node) -> Node:
        while True:
            written = dotted(node)
            if written is not None and ((self.token.text == "." and self.peek().text == "class")
                                        or (self.token.text == "[" and self.peek().text == "]")):
                node = self.class_literal(written)
            elif self.accept("."):
                if self.token.kind != "name" or self.token.text in ("true", "false", "null"):
                    self.fail("expected a member name after '.'")
                name = self.take().text
                node = Call(node, name, self.arguments()) if self.token.text == "(" else Member(node, name)
            elif self.accept("["):
                index = self.expression()
                self.expect("]")
                node = Index(node, index)
            elif self.token.text in ("++", "--", "=") or (self.token.text.endswith("=") and self.token.text
                                                             not in ("==", "!=", "<=", ">=")):
                self.fail("expected an operator")
            else:
                return node


def dotted(node: Node) -> str | None:
    """``a.b.C`` for a name or a chain of members of names (what may name a type); None for anything else."""
    if isinstance(node, Name):
        return node.name
    if isinstance(node, Member):
        head = dotted(node.target)
        return f"{head}.{node.name}" if head is not None else None
    return None


def number(text: str, at: int) -> Literal:
    """A Java numeric literal, range-checked as javac does (``2147483648`` needs an ``L``)."""
    raw = text.replace("_", "")
    suffix = raw[-1].lower() if raw[-1] in "lLfFdD" and not raw.lower().startswith("0x") else ""
    if raw.lower().startswith("0x") and raw[-1] in "lL":
        suffix = "l"
    body = raw[:-1] if suffix else raw
    lowered = body.lower()
    if suffix in ("f", "d") or (not lowered.startswith("0x") and any(c in lowered for c in ".e")):
        return Literal("float" if suffix == "f" else "double", float(body))
    if lowered.startswith("0x"):
        value = int(lowered[2:], 16)
    elif lowered.startswith("0b"):
        value = int(lowered[2:], 2)
    elif len(lowered) > 1 and lowered.startswith("0"):
        value = int(lowered, 8)
    else:
        value = int(lowered)
    kind = "long" if suffix == "l" else "int"
    bits = 64 if kind == "long" else 32
    decimal = not lowered.startswith(("0x", "0b")) and not (len(lowered) > 1 and lowered.startswith("0"))
    if value >= 1 << bits or (decimal and value > 1 << (bits - 1)):
        raise ParseError(f"{text} is too large for {kind} (column {at + 1})" + ("; add L for a long" if kind == "int"
                                                                                 else ""))
    if not decimal and value >= 1 << (bits - 1):
        value -= 1 << bits  # 0xFFFFFFFF is -1
    return Literal(kind, value)


def unescape(body: str) -> str:
    out = []
    at = 0
    while at < len(body):
        char = body[at]
        if char != "\\":
            out.append(char)
            at += 1
            continue
        nxt = body[at + 1]
        if nxt == "u":
            end = at + 1
            while body[end] == "u":
                end += 1
            out.append(chr(int(body[end:end + 4], 16)))
            at = end + 4
        elif nxt in "01234567":
            digits = re.match(r"[0-7]{1,3}", body[at + 1:])
            assert digits is not None
            out.append(chr(int(digits.group(), 8)))
            at += 1 + len(digits.group())
        else:
            if nxt not in _ESCAPES:
                raise ParseError(f"\\{nxt} is not a Java escape")
            out.append(_ESCAPES[nxt])
            at += 2
    joined = "".join(out)
    return joined.encode("utf-16", "surrogatepass").decode("utf-16") if any(
        0xD800 <= ord(c) <= 0xDFFF for c in joined) else joined
