"""The java backend's name handling, nothing running: method breakpoint names, class names as the agent
writes them against the JVM's, ClassPrepare patterns, signatures as Java writes them, and the jdwp
agent's address in a process's command line (attach by pid)."""

from __future__ import annotations

import pytest

from polydbg.backends.java.attach import address_in, agent_address
from polydbg.backends.java.classes import JavaClass
from polydbg.backends.java.methods import MethodName, parse
from polydbg.backends.java.vm import class_matches, parameter_types, prepare_patterns
from polydbg.errors import UsageError


def cls(signature: str) -> JavaClass:
    return JavaClass(1, 1, signature)


def test_method_names() -> None:
    assert parse("Basics.square") == MethodName("Basics", "square")
    assert parse(" demo.Basics.square(int) ") == MethodName("demo.Basics", "square")
    assert parse("Basics$Point.norm1") == MethodName("Basics$Point", "norm1")
    assert parse("Basics::square") == MethodName("Basics", "square")
    assert parse("Basics#square") == MethodName("Basics", "square")
    assert parse("Point.Point") == MethodName("Point", "<init>")
    assert parse("Basics.Point.<init>") == MethodName("Basics.Point", "<init>")
    assert parse("square") == MethodName(None, "square")
    for wrong in ("", "Basics.", "1x.y", "a b", "Basics.square(int"):
        with pytest.raises(ValueError, match="not a method name"):
            parse(wrong)


def test_class_names_match_with_or_without_package_and_either_separator() -> None:
    point = cls("Ldemo/Basics$Point;")
    assert all(class_matches(point, q) for q in ("Point", "Basics.Point", "Basics$Point", "demo.Basics.Point"))
    assert not any(class_matches(point, q) for q in ("oint", "Basics", "other.Basics.Point"))
    wanted = MethodName(None, "run")
    assert wanted.wants(cls("Ldemo/Job;")) and not wanted.wants(cls("Ljava/lang/Thread;"))
    assert not wanted.wants(cls("Ldemo/Job$$Lambda$14/0x0000000800c03000;"))
    assert prepare_patterns("Basics") == ["Basics", "*.Basics", "*$Basics"]
    assert prepare_patterns("Basics.Point") == ["*.Point", "*$Point"]


def test_signatures_read_as_java() -> None:
    assert parameter_types("([Ljava/lang/String;)V") == (["String[]"], "void")
    assert parameter_types("(IJ[[DLjava/util/List;Z)Ljava/lang/Object;") == (
        ["int", "long", "double[][]", "java.util.List", "boolean"], "Object")
    assert parameter_types("()I") == ([], "int")


def test_the_agent_address_of_a_process() -> None:
    flag = "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address="
    assert address_in(["java", f"{flag}*:5005", "Main"], 1) == ("127.0.0.1", 5005)
    assert address_in(["java", f"{flag}10.1.2.3:8000"], 1) == ("10.1.2.3", 8000)
    assert address_in(["java", "Main", "-Xdebug -Xrunjdwp:server=y,address=5006"], 1) == ("127.0.0.1", 5006)
    for texts, said in ((["java", "-agentlib:jdwp=transport=dt_socket,server=n,address=9"], "server=n"),
                        (["java", "Main"], "not started with the jdwp agent"),
                        (["java", f"{flag}0"], "pass port=N")):
        with pytest.raises(UsageError, match=said):
            address_in(texts, 1)
    with pytest.raises(UsageError, match="cannot read the command line"):
        agent_address(2**22 + 12345)
