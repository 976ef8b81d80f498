"""Java collections shown by their elements, read from the JDK's fields over JDWP (never by calling
methods), through the MCP tools on a real JVM: texts, expansion, paging, iteration order, the walk
limit of linked structures, the fall-back to plain fields; and arrays (2-D, empty, 100,000 long)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from polydbg.backends.java import collections, elements
from polydbg.backends.java.classes import JavaClass
from tests.conftest import PROGRAMS, Tools, line_of, require

JAVA = PROGRAMS / "java"
STOP = {"file": str(JAVA / "Colls.java"), "line": line_of("java/Colls.java", "// stop here")}


@pytest.fixture(autouse=True)
def _java() -> None:
    require("java", "javac")


async def stopped(tools: Tools) -> dict[str, dict[str, Any]]:
    """Colls launched to its last line: its locals by name."""
    report = await tools("debug_launch", program=str(JAVA / "Colls.java"), breakpoints=[STOP])
    assert report["reason"] == "breakpoint", report
    listing = await tools("debug_variables", count=100)
    return {v["name"]: v for v in listing["variables"]}


async def children(tools: Tools, local: dict[str, Any], start: int = 0, count: int = 100) -> dict[str, Any]:
    return await tools("debug_variables", ref=local["ref"], start=start, count=count)


def pairs(listing: dict[str, Any]) -> list[tuple[str, str]]:
    return [(v["name"], v["value"]) for v in listing["variables"]]


async def java_order(tools: Tools, name: str) -> list[str]:
    """An order the program itself computed by iterating (a comma-joined String local)."""
    return str(json.loads((await tools("debug_evaluate", expression=name))["value"])).split(",")


async def test_collections_read_as_their_elements(tools: Tools) -> None:
    local = await stopped(tools)
    texts = {name: v["value"] for name, v in local.items()}
    expected = {
        "words": 'ArrayList size=2 ["alpha", "beta"]',
        "emptyList": "ArrayList size=0 []",
        "bigList": "ArrayList size=100000 [0, 1, 2, 3, 4, …]",
        "linked": 'LinkedList size=3 ["x", "y", "z"]',
        "hash": 'HashMap size=3 {"a"=1, "b"=2, "c"=3}',
        "emptyMap": "HashMap size=0 {}",
        "inserted": 'LinkedHashMap size=3 {"zebra"=1, "apple"=2, "mango"=3}',
        "sorted": 'TreeMap size=7 {"alpha"=5, "bravo"=5, "charlie"=7, "delta"=5, "echo"=4, …}',
        "linkedSet": 'LinkedHashSet size=3 ["c", "a", "b"]',
        "treeSet": "TreeSet size=4 [1, 3, 5, 9]",
        "deque": 'ArrayDeque size=3 ["front", "middle", "back"]',
        "vector": "Vector size=2 [7, 8]",
        "unmodifiable": 'Collections.UnmodifiableRandomAccessList size=2 ["alpha", "beta"]',
        "listOf": "ImmutableCollections.ListN size=3 [1, 2, 3]",
        "listOfOne": "ImmutableCollections.List12 size=1 [42]",
        "mapOfOne": 'ImmutableCollections.Map1 size=1 {"only"=1}',
        "nested": 'HashMap size=1 {"evens"=ImmutableCollections.ListN size=3}',
        "names": 'Colls.Names size=1 ["own"]',  # extends ArrayList: read as one
        "grid": "int[2][] {int[3], int[3]}",
        "noInts": "int[0] {}",
        "manyInts": "int[100000] {0, 2, 4, 6, 8, …}",
    }
    assert {name: texts[name] for name in expected} == expected
    in_order = ", ".join(json.dumps(key) for key in await java_order(tools, "hashSetOrder"))
    assert texts["hashSet"] == f"HashSet size=3 [{in_order}]", texts["hashSet"]
    assert texts["concurrent"].startswith("ConcurrentHashMap size=2 {"), texts["concurrent"]
    assert texts["setOf"].startswith("ImmutableCollections.SetN size=4 ["), texts["setOf"]
    assert local["bigList"]["type"] == "ArrayList"
    said = await tools("debug_evaluate", expression="hash")
    assert said["value"] == expected["hash"] and said["ref"], said
    await tools("debug_terminate")


async def test_lists_sets_and_maps_expand_in_iteration_order(tools: Tools) -> None:
    local = await stopped(tools)
    assert pairs(await children(tools, local["words"])) == [("[0]", '"alpha"'), ("[1]", '"beta"')]
    assert pairs(await children(tools, local["linked"])) == [("[0]", '"x"'), ("[1]", '"y"'), ("[2]", '"z"')]
    assert pairs(await children(tools, local["hash"])) == [('"a"', "1"), ('"b"', "2"), ('"c"', "3")]
    assert pairs(await children(tools, local["inserted"])) == [('"zebra"', "1"), ('"apple"', "2"), ('"mango"', "3")]
    assert pairs(await children(tools, local["sorted"])) == [
        ('"alpha"', "5"), ('"bravo"', "5"), ('"charlie"', "7"), ('"delta"', "5"), ('"echo"', "4"), ('"foxtrot"', "7"),
        ('"golf"', "4")]
    assert pairs(await children(tools, local["treeSet"])) == [("[0]", "1"), ("[1]", "3"), ("[2]", "5"), ("[3]", "9")]
    assert pairs(await children(tools, local["linkedSet"])) == [("[0]", '"c"'), ("[1]", '"a"'), ("[2]", '"b"')]
    assert pairs(await children(tools, local["deque"])) == [("[0]", '"front"'), ("[1]", '"middle"'), ("[2]", '"back"')]
    assert pairs(await children(tools, local["mapOfOne"])) == [('"only"', "1")]
    for empty in ("emptyList", "emptyMap"):
        listing = await children(tools, local[empty])
        assert listing["variables"] == [] and listing["total"] == 0, listing
    # the program's own iteration orders: hash buckets and chains, a bin turned into a tree, salted Map.of/Set.of
    many = await children(tools, local["manyKeys"], count=200)
    assert [v["name"] for v in many["variables"]] == [json.dumps(k) for k in await java_order(tools, "manyKeysOrder")]
    assert all(v["value"] == v["name"].strip('"k') for v in many["variables"])
    treeified = await children(tools, local["treeified"], count=70)
    assert [v["value"] for v in treeified["variables"]] == [k[1:] for k in await java_order(tools, "treeifiedOrder")]
    assert treeified["variables"][0]["name"].startswith("Colls.Same {id="), treeified["variables"][0]
    for name, order in (("hashSet", "hashSetOrder"), ("setOf", "setOfOrder"), ("setOfTwo", "setOfTwoOrder")):
        shown = [v["value"] for v in (await children(tools, local[name]))["variables"]]
        assert shown == [json.dumps(k) for k in await java_order(tools, order)], name
    for name, order in (("mapOf", "mapOfOrder"), ("concurrent", "concurrentOrder")):
        shown = [v["name"] for v in (await children(tools, local[name]))["variables"]]
        assert shown == [json.dumps(k) for k in await java_order(tools, order)], name
    # a map entry whose value is an object expands to it
    evens = (await children(tools, local["nested"]))["variables"][0]
    assert (evens["name"], evens["value"]) == ('"evens"', "ImmutableCollections.ListN size=3 [2, 4, 6]"), evens
    assert pairs(await tools("debug_variables", ref=evens["ref"])) == [("[0]", "2"), ("[1]", "4"), ("[2]", "6")]
    await tools("debug_terminate")


async def test_big_collections_and_arrays_page_by_slices(tools: Tools) -> None:
    local = await stopped(tools)
    first = await children(tools, local["bigList"], count=3)
    assert pairs(first) == [("[0]", "0"), ("[1]", "1"), ("[2]", "2")] and first["total"] == 100_000, first
    assert "start=3" in first["more"], first
    tail = await children(tools, local["bigList"], start=99_997, count=10)
    assert pairs(tail) == [("[99997]", "99997"), ("[99998]", "99998"), ("[99999]", "99999")], tail
    assert not tail.get("more"), tail
    middle = await children(tools, local["manyInts"], start=50_000, count=2)
    assert pairs(middle) == [("[50000]", "100000"), ("[50001]", "100002")] and middle["total"] == 100_000, middle
    assert pairs(await children(tools, local["noInts"])) == []
    rows = await children(tools, local["grid"])
    assert pairs(rows) == [("[0]", "int[3] {1, 2, 3}"), ("[1]", "int[3] {4, 5, 6}")], rows
    assert pairs(await tools("debug_variables", ref=rows["variables"][1]["ref"], start=2, count=1)) == [("[2]", "6")]
    # linked structures: a listing walks at most 10,000 links, from whichever end is nearer
    near_end = await children(tools, local["longLinked"], start=29_998, count=5)
    assert pairs(near_end) == [("[29998]", "29998"), ("[29999]", "29999")], near_end
    past = await children(tools, local["longLinked"], start=9_998, count=4)
    assert pairs(past)[:2] == [("[9998]", "9998"), ("[9999]", "9999")], past
    assert past["variables"][2]["name"] == "(limit)" and "at most 10,000" in past["variables"][2]["value"], past
    sorted_tail = await children(tools, local["bigTree"], start=9_997, count=3)
    assert pairs(sorted_tail) == [("9997", "18571"), ("9998", "15714"), ("9999", "12857")], sorted_tail
    await tools("debug_terminate")


async def test_an_unknown_layout_falls_back_to_fields(tools: Tools, monkeypatch: pytest.MonkeyPatch) -> None:
    async def renamed(self: collections.Layouts, object_id: int, cls: JavaClass) -> elements.Elements:
        await self._read(object_id, cls, "elementStore", "size")  # a field this JDK does not have
        raise AssertionError("unreachable: the field is missing")

    monkeypatch.setattr(collections.Layouts, "_array_list", renamed)
    local = await stopped(tools)
    assert local["words"]["value"].startswith("ArrayList {elementData="), local["words"]
    fields = [v["name"] for v in (await children(tools, local["words"]))["variables"]]
    assert "elementData" in fields and "size" in fields, fields
    assert local["hash"]["value"] == 'HashMap size=3 {"a"=1, "b"=2, "c"=3}'  # other layouts unaffected
    await tools("debug_terminate")


async def test_classes_boxes_enums_and_proxies_read_as_what_they_are_and_class_literals_evaluate(
        tools: Tools) -> None:
    stop = {"file": str(JAVA / "Reflect.java"), "line": line_of("java/Reflect.java", "// stop here")}
    report = await tools("debug_launch", program=str(JAVA / "Reflect.java"), breakpoints=[stop])
    assert report["reason"] == "breakpoint", report
    local = {v["name"]: v["value"] for v in (await tools("debug_variables", count=100))["variables"]}
    assert local["kind"] == "class Reflect$User$Inner", local  # was: class
    assert (local["primitive"], local["strings"]) == ("int", "class java.lang.String[]"), local
    assert local["proxy"].startswith("$Proxy") and " implements Reflect.Greeter {h=" in local["proxy"], local
    assert local["pair"] == 'Reflect.Pair {first="pear", second=3}', local  # a box inside a preview: its number
    assert local["numbers"] == "Reflect.Pair {first=7, second=2.5}", local
    assert local["odd"] == "Reflect.Pair {first=Reflect.Color.GREEN, second=interface Reflect$Greeter}", local
    assert local["points"] == "ImmutableCollections.List12 size=2 [Reflect.Point {x=1, y=2}, Reflect.Point {x=3, y=4}]"
    assert local["corners"] == "Reflect.Point[1] {Reflect.Point {x=0, y=0}}", local
    for expression, expected in {
            "Named.class": "interface Reflect$Named",  # not loaded before: loaded as Java would, not initialized
            "User.Inner.class == kind": "true", "Reflect.User.Inner.class": "class Reflect$User$Inner",
            "int.class": "int", "void.class": "void", "int[][].class": "class int[][]",
            "String[].class == strings": "true", "java.util.Map.Entry.class": "interface java.util.Map$Entry",
            "field.isAnnotationPresent(Named.class)": "true", "Greeter.class.getSimpleName()": '"Greeter"',
            "Color.RED": "Reflect.Color.RED"}.items():
        assert (await tools("debug_evaluate", expression=expression))["value"] == expected, expression
    said = await tools.error("debug_evaluate", expression="Nope.class")
    assert "no class Nope is loaded or can be loaded here (looked for Reflect$Nope, Nope, java.lang.Nope" in said, said
    await tools("debug_terminate")
