"""The rdbg call recorder's Python side: names checked before the program sees them, the closest names, and the
channel's items (batched lines from the program) delivered to each recording's sink in order, its last word
waited for."""

from __future__ import annotations

import asyncio
import json

import pytest

from polydbg.backends.rdbg import calls
from polydbg.backends.recording import CallRecord, CallSpec, RaisedRecord
from polydbg.errors import UsageError

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def test_ruby_method_names_and_what_is_not_one() -> None:
    good = ["fib", "Shop::Parser#parse", "Prices.total", "Foo::bar", "lib/prices.rb:total", "a.rb:Box#empty?",
            "Money#==", "Grid#[]="]
    assert all(calls.NAME.fullmatch(name) for name in good)
    assert not any(calls.NAME.fullmatch(name) for name in ["Foo#", "#bar", "a b", "x'y", "dates.parse", "'; exit!"])


def test_the_closest_names_by_the_whole_name_then_the_methods_own() -> None:
    known = ["Shop::Parser#parse", "Shop::Parser#parse_all", "fib", "Prices.total"]
    assert calls.closest("fibb", known) == ["fib"]
    assert calls.closest("Parser#prase", known)[0] == "Shop::Parser#parse"
    assert calls.closest("nothing_like_it", known) == []


async def test_unparseable_names_are_refused_before_the_program_is_asked() -> None:
    asked: list[str] = []

    async def evaluate(code: str) -> object:
        asked.append(code)
        return {}
    with pytest.raises(UsageError, match=r"'Foo#': not a Ruby method's name; write Class#method"):
        await calls.record_calls(calls.Channel(), CallSpec(("fib", "Foo#")), lambda record: None, evaluate,
                                 lambda: False)
    assert asked == []


async def test_items_reach_their_recordings_sinks_in_order_and_the_last_word_ends_them() -> None:
    channel = calls.Channel()
    path = await channel.open()
    try:
        got: list[CallRecord] = []
        raised: list[RaisedRecord] = []
        first, second = channel.register(calls=got.append), channel.register(raised=raised.append)
        _, writer = await asyncio.open_unix_connection(path)
        call = [first, "fib", [["n", "1"]], "1", None, "fib (a.rb:2)", "#1 main", 3.5, 0, "/a.rb", 1, True, 7]
        items = [call, ["r", second, "ArgumentError", "bad", "/a.rb", 4, "parse", "#1 main", "run (/a.rb:9)"],
                 [99, *call[1:]], ["done", first, {"never": ["zzz"], "known": ["fib"]}]]
        writer.write(json.dumps(items[:2]).encode() + b"\n" + json.dumps(items[2:]).encode() + b"\n")
        await writer.drain()
        assert await channel.finished(first) == {"never": ["zzz"], "known": ["fib"]}
        assert got == [CallRecord("fib", (("n", "1"),), "1", None, "fib (a.rb:2)", "#1 main", 3.5, 0, "/a.rb", 1,
                                  True, 7)]
        assert raised == [RaisedRecord("ArgumentError", "bad", "/a.rb", 4, "parse", "#1 main", "run (/a.rb:9)")]
        writer.close()
        assert await channel.finished(second) is None  # the program ended without its last word
    finally:
        await channel.close()
