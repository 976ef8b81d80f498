"""Which method a call means: the overload Java would pick among a class's methods of that name, and
whether a value of one type may be passed or assigned where another is wanted. Pure: the candidates'
signatures and the arguments' types in, a choice (or a refusal that lists what there is) out.

Java's rules (JLS 15.12.2) are followed in a simplified form. Phase 1 and 2 (strict and loose
invocation: widening, then boxing and unboxing) are one pass here: every method of the call's arity is
scored by the summed cost of converting each argument to its parameter — identity 0, a primitive
widening 1 and up, a subtype 2, ``Object`` 10, boxing or unboxing 20 or more — and the cheapest wins
(the first found on a tie: the nearest class's). Phase 3 (variable arity) runs only when nothing is
applicable as written: a varargs method (``String.format``, ``List.of``) takes its trailing arguments
spread into a new array.

What the VM must say about the program's types (a class's supertypes, an array's element class) is
read from a ``Hierarchy``. When a fact is missing the choice raises ``Unknown``; the caller looks it up
and runs the choice again, so the same requests are made, in the same order, as asking inline would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from polydbg.backends.java.classes import JavaClass, Method, java_name
from polydbg.backends.java.classes import parameter_descriptors as parameter_types
from polydbg.backends.java.primitives import BOX_OF, NUMERIC, PRIMITIVE_LETTERS, UNBOX, WIDENS
from polydbg.backends.java.terms import EvaluationError
from polydbg.jdwp.codec import TAG_OF_SIGNATURE, Tag

VARARGS = 0x0080  # a method's ACC_VARARGS
_BOXED_SUPERTYPES = ("Ljava/lang/Object;", "Ljava/lang/Number;", "Ljava/io/Serializable;", "Ljava/lang/Comparable;")
_STRING_INTERFACES = ("java.lang.CharSequence", "java.lang.Comparable", "java.io.Serializable")


class ArgType(NamedTuple):
    """An argument's type: its JDWP tag, and its class when it is a (non-null) object of the VM."""

    tag: int  # Tag.STRING for a string built here; Tag.OBJECT with no class for null
    cls: JavaClass | None = None


class Unknown(Exception):
    """A fact about the program's types the choice needs and the caller has not looked up yet: the
    supertypes of ``cls``, or the loaded class of ``signature``."""

    def __init__(self, cls: JavaClass | None = None, signature: str = "") -> None:
        super().__init__(cls.name if cls is not None else signature)
        self.cls = cls
        self.signature = signature


@dataclass
class Hierarchy:
    """What is known of the program's types: every name a class is assignable to (by class id), and
    the class loaded for a signature (None: not loaded)."""

    supertypes: dict[int, set[str]] = field(default_factory=dict)
    classes: dict[str, JavaClass | None] = field(default_factory=dict)

    def names(self, cls: JavaClass) -> set[str]:
        found = self.supertypes.get(cls.id)
        if found is None:
            raise Unknown(cls=cls)
        return found

    def named(self, signature: str) -> JavaClass | None:
        if signature not in self.classes:
            raise Unknown(signature=signature)
        return self.classes[signature]


def conversion_cost(arg: ArgType, parameter: str, known: Hierarchy) -> int | None:
    """How far an argument is from a parameter type (None: not applicable)."""
    tag, cls = arg
    wanted = TAG_OF_SIGNATURE.get(parameter[0], Tag.OBJECT)
    if tag in NUMERIC or tag == Tag.BOOLEAN:
        if parameter[0] in PRIMITIVE_LETTERS:
            if wanted == tag:
                return 0
            return 1 + sorted(WIDENS.get(tag, set())).index(wanted) if wanted in WIDENS.get(tag, set()) else None
        box = "L" + BOX_OF[tag].replace(".", "/") + ";"
        if parameter == box or parameter in _BOXED_SUPERTYPES:
            return 20 if parameter == box else 25
        return None
    if tag == Tag.OBJECT and cls is None:  # null
        return 0 if parameter[0] in "L[" else None
    if parameter[0] in PRIMITIVE_LETTERS:  # unboxing
        if cls is not None and cls.name in UNBOX:
            inner = UNBOX[cls.name]
            return 20 if inner == wanted else (21 if wanted in WIDENS.get(inner, set()) else None)
        return None
    actual_name = "java.lang.String" if tag == Tag.STRING and cls is None else (cls.name if cls else "")
    wanted_name = java_name(parameter)
    if actual_name == wanted_name:
        return 0
    if wanted_name == "java.lang.Object":
        return 10
    if cls is None:
        return 2 if wanted_name in _STRING_INTERFACES else None
    if cls.signature.startswith("[") or parameter.startswith("["):
        return 2 if array_assignable(cls.signature, parameter, known) else None
    return 2 if wanted_name in known.names(cls) else None


def array_assignable(actual: str, wanted: str, known: Hierarchy) -> bool:
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
        return array_assignable(actual, wanted, known)
    if wanted == "Ljava/lang/Object;":
        return True
    element = known.named(actual)
    return element is not None and java_name(wanted) in known.names(element)


def assignable(actual: JavaClass, signature: str, known: Hierarchy) -> bool:
    """Whether an object of class ``actual`` may be held by a variable of type ``signature``."""
    if actual.signature == signature:
        return True
    if actual.signature.startswith("[") or signature.startswith("["):
        return array_assignable(actual.signature, signature, known)
    return java_name(signature) in known.names(actual)


def costs(args: list[ArgType], parameters: list[str], known: Hierarchy) -> int | None:
    """The summed conversion cost of the arguments to the parameters (None: one does not fit)."""
    cost = 0
    for arg, parameter in zip(args, parameters, strict=True):
        step = conversion_cost(arg, parameter, known)
        if step is None:
            return None
        cost += step
    return cost


def choose(cls: JavaClass, name: str, candidates: list[tuple[Method, JavaClass]], args: list[ArgType],
           static_only: bool, known: Hierarchy) -> tuple[Method, JavaClass, bool]:
    """The overload Java would pick (simplified) among ``candidates`` (method, declaring class; nearest
    first): applicable by arity and argument types, the closest conversions winning; a varargs method
    called with its trailing arguments spread only when none is applicable as written (the third item:
    spread). ``static_only``: called on a class, not an instance."""
    if not candidates:
        raise EvaluationError(f"{cls.name} has no method {name}()")
    best: tuple[int, Method, JavaClass] | None = None
    arities = sorted({len(parameter_types(m.signature)) for m, _ in candidates})
    for method, owner in candidates:
        if static_only and not method.is_static:
            continue
        parameters = parameter_types(method.signature)
        if len(parameters) != len(args):
            continue
        cost = costs(args, parameters, known)
        if cost is not None and (best is None or cost < best[0]):
            best = (cost, method, owner)
    if best is not None:
        return best[1], best[2], False
    for method, owner in candidates:
        parameters = parameter_types(method.signature)
        if (static_only and not method.is_static) or not method.modifiers & VARARGS or (
                len(args) < len(parameters) - 1):
            continue
        fixed = len(parameters) - 1
        cost = costs(args, parameters[:fixed] + [parameters[-1][1:]] * (len(args) - fixed), known)
        if cost is not None and (best is None or cost < best[0]):
            best = (cost, method, owner)
    if best is not None:
        return best[1], best[2], True
    applicable_by_arity = [m for m, _ in candidates if len(parameter_types(m.signature)) == len(args)]
    if static_only and applicable_by_arity and not any(m.is_static for m in applicable_by_arity):
        raise EvaluationError(f"{cls.name}.{name}() is not static; call it on an instance")
    wanted = ", ".join(java_name(a) if a else "?" for a in (sig_of(arg) for arg in args)) or "no arguments"
    raise EvaluationError(f"no {name}() of {cls.name} takes ({wanted}); it takes "
                          f"{' or '.join(str(n) for n in arities)} argument(s): "
                          + "; ".join(f"{name}{readable_signature(m.signature)}" for m, _ in candidates[:6]))


def readable_signature(signature: str) -> str:
    """``(ILjava/lang/String;)V`` → ``(int, String)``."""
    return "(" + ", ".join(java_name(p).rpartition(".")[2] for p in parameter_types(signature)) + ")"


def sig_of(arg: ArgType) -> str:
    if arg.cls is not None:
        return arg.cls.signature
    if arg.tag == Tag.STRING:
        return "Ljava/lang/String;"
    if arg.tag == Tag.OBJECT:
        return "Ljava/lang/Object;"
    return chr(arg.tag)
