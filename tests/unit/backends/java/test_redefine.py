"""What a refused reload names: the change beyond method bodies that HotSpot refused, in the program's terms."""

from __future__ import annotations

from polydbg.backends.java.redefine import _accessors, _member_changes

STATIC, PRIVATE, SYNCHRONIZED = 0x0008, 0x0002, 0x0020


def test_fields_added_removed_and_retyped_are_named() -> None:
    old = {("calls", "I"): PRIVATE, ("name", "Ljava/lang/String;"): PRIVATE}
    new = {("calls", "J"): PRIVATE, ("hits", "I"): PRIVATE}
    assert _member_changes("Tally", "field", old, new) == [
        "changes the type of the field `calls` of Tally", "adds a field `hits` to Tally",
        "removes a field `name` from Tally"]


def test_methods_read_as_declared_and_lambdas_as_lambdas() -> None:
    old = {("score", "(I)I"): 0, ("<init>", "()V"): 0, ("log", "()V"): 0}
    new = {("score", "(I)J"): 0, ("<init>", "()V"): 0, ("<init>", "(I)V"): 0, ("lambda$main$0", "()V"): 0x1000,
           ("log", "()V"): SYNCHRONIZED}
    assert _member_changes("demo.Tally", "method", old, new) == [
        "adds a constructor `Tally(int)` to demo.Tally", "adds a lambda (`lambda$main$0`) to demo.Tally",
        "changes the signature of `score` to `long score(int)`", "changes the modifiers of a method `void log()`"]


def test_an_added_overload_is_an_addition_and_unchanged_members_say_nothing() -> None:
    old = {("score", "(I)I"): STATIC}
    assert _member_changes("Tally", "method", old, {**old, ("score", "(J)I"): STATIC}) == [
        "adds a method `int score(long)` to Tally"]
    assert _member_changes("Tally", "method", old, dict(old)) == []


def test_a_property_added_is_one_change_with_its_accessors_and_kotlin_s_lambdas_are_lambdas() -> None:
    old = {("calls", "I"): PRIVATE}
    new = {**old, ("hits", "I"): PRIVATE, ("isOn", "Z"): PRIVATE}
    methods = {("getHits", "()I"), ("setHits", "(I)V"), ("isOn", "()Z"), ("setOn", "(Z)V"), ("getCalls", "()I")}
    accessors = _accessors({"hits", "isOn"}, methods)
    assert accessors == {"hits": ["getHits", "setHits"], "isOn": ["isOn", "setOn"]}
    assert _member_changes("Tally", "field", old, new, accessors) == [
        "adds a property `hits` to Tally (a field, getHits, setHits)",
        "adds a property `isOn` to Tally (a field, isOn, setOn)"]
    assert _member_changes("TallyKt", "method", {}, dict.fromkeys(methods | {("main$lambda$2", "(I)I")}, 0),
                           accessors) == ["adds a method `int getCalls()` to TallyKt",
                                          "adds a lambda (`main$lambda$2`) to TallyKt"]
