"""What a Java evaluation deals in: its error, its results, the frame it runs in, and the words its
messages use for them. Pure (no JDWP requests), the bottom of the evaluator's modules.

A result is a JDWP ``Value`` (primitives as numbers, objects as ids), a ``Text`` (a string computed
here: a literal, a ``+``, kept as a Python string until a method needs it in the VM), or one of the
two names that are not values at all: a class (``Math`` in ``Math.max``) or a package prefix
(``java`` in ``java.util.List``), which only a ``.`` after them can turn into a value.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol

from polydbg.backends.java import expr
from polydbg.backends.java.classes import JavaClass
from polydbg.errors import AdapterRequestError
from polydbg.jdwp.codec import Tag, Value

TAG_NAMES = {Tag.BYTE: "byte", Tag.CHAR: "char", Tag.FLOAT: "float", Tag.DOUBLE: "double", Tag.INT: "int",
             Tag.LONG: "long", Tag.SHORT: "short", Tag.BOOLEAN: "boolean", Tag.VOID: "void"}


class EvaluationError(AdapterRequestError):
    """An expression that cannot be evaluated here; the message says why, in Java's words."""

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

    async def invoking(self, reply: asyncio.Future[bytes], label: str, after: Callable[[], Awaitable[None]]) -> bytes:
        """Await an invoke's ``reply``; the program's code runs meanwhile (its breakpoints must not stop it)
        and the thread's frame ids die with it. ``after`` runs once the call returned: later, for one that
        outlives its deadline (calls.py), which is an error that says so."""


def type_name(tag: int) -> str:
    """``int``, ``boolean``…; ``object`` for any reference."""
    return TAG_NAMES.get(tag, "object")


def article(noun: str) -> str:
    """``an int``, ``a long``, ``an Integer``."""
    return ("an " if noun[:1].lower() in "aeiou" else "a ") + noun


def describe_value(value: Value | Text) -> str:
    if isinstance(value, Text):
        return "a String"
    return f"{article(type_name(value.tag))}" if not value.is_object else "an object"


def describe_node(node: expr.Node) -> str:
    """How a message names the expression that gave a value: ``p.x``, ``a[…]``, ``f()``, ``the value``."""
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


def not_here(name: str) -> EvaluationError:
    """A name that is no local, field or class (what a package prefix left alone means)."""
    return EvaluationError(f"{name!r} is not a local variable, a field or a class here")
