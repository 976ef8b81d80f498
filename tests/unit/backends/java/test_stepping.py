"""What a step on the JVM says the call it left returned: the method exits (and throws) it listens to while it
runs, none of them a stop."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from polydbg.backends.java.sources import Sources
from polydbg.backends.java.stepping import EXIT_BUDGET, Stepping
from polydbg.backends.java.threads import Threads
from polydbg.jdwp.codec import Event, EventKind, Location, Suspend, Tag, TypeTag, Value
from tests.unit.backends.java.fakevm import FakeVm

THREAD = 5
CLASS = 7
STEPPED = Location(TypeTag.CLASS, CLASS, 1, 4)  # in method 1 ("m1"), where the step began
CALLER = Location(TypeTag.CLASS, 9, 3, 12)


def _stepping(tmp_path: Path) -> tuple[FakeVm, Stepping]:
    vm = FakeVm()
    vm.load(CLASS, "Ldemo/Main;", str(tmp_path / "Main.java"), {1: [(0, 10)], 2: [(0, 20)]})
    threads = Threads(vm, Sources(vm, lambda: []))
    threads._frames[THREAD] = [(100, STEPPED)]  # the stop's frames, as read
    return vm, Stepping(vm, threads)


def _requests(vm: FakeVm, kind: int) -> list[int]:
    return [request for k, request in vm.set if k == kind]


def _exit(request: int, method: int, value: int) -> Event:
    return Event(EventKind.METHOD_EXIT_WITH_RETURN_VALUE, request, Suspend.NONE, THREAD,
                 Location(TypeTag.CLASS, CLASS, method, 9), value=Value(Tag.INT, value))


async def test_a_step_out_keeps_its_own_methods_exit_not_a_deeper_calls(tmp_path: Path) -> None:
    vm, stepping = _stepping(tmp_path)
    await stepping.begin(THREAD, "out")
    [exits] = _requests(vm, EventKind.METHOD_EXIT_WITH_RETURN_VALUE)
    assert stepping.takes(_exit(exits, 2, 1)) and stepping.takes(_exit(exits, 1, 6))
    assert stepping.takes(_exit(exits, 2, 3)) is True  # read, never a stop; not the left method's own
    assert await stepping.returned(CALLER) == ("m1", Value(Tag.INT, 6), False)
    await stepping.end()
    assert {request for _, request in vm.cleared} >= {exits, *_requests(vm, EventKind.EXCEPTION)}


async def test_a_step_out_left_by_a_throw_says_the_one_caught_where_it_landed(tmp_path: Path) -> None:
    vm, stepping = _stepping(tmp_path)
    await stepping.begin(THREAD, "out")
    [throws] = _requests(vm, EventKind.EXCEPTION)
    inside = Event(EventKind.EXCEPTION, throws, Suspend.NONE, THREAD, STEPPED, exception=Value(Tag.OBJECT, 40),
                   catch_location=STEPPED)
    left = replace(inside, exception=Value(Tag.OBJECT, 41), catch_location=CALLER)
    assert stepping.takes(left) and stepping.takes(inside)
    assert await stepping.returned(CALLER) == ("m1", Value(Tag.OBJECT, 41), True)
    unrelated = Event(EventKind.EXCEPTION, throws + 100, Suspend.ALL, THREAD, STEPPED)
    assert not stepping.takes(unrelated)  # the agent's own exception filter's: a stop as ever


async def test_a_step_over_keeps_the_last_exit_until_too_many(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    vm, stepping = _stepping(tmp_path)
    await stepping.begin(THREAD, "over")
    [exits] = _requests(vm, EventKind.METHOD_EXIT_WITH_RETURN_VALUE)
    assert stepping.takes(_exit(exits, 2, 1)) and stepping.takes(_exit(exits, 1, 18))
    assert await stepping.returned(CALLER) == ("m1", Value(Tag.INT, 18), False)
    cleared: list[bytes] = []

    def send(_set: int, _command: int, data: bytes, _label: str) -> _Sent:
        cleared.append(data)
        return _Sent()
    monkeypatch.setattr(vm.client, "send", send)
    for _ in range(EXIT_BUDGET):
        stepping.takes(_exit(exits, 2, 1))
    assert await stepping.returned(CALLER) is None and len(cleared) == 1  # a heavy call: not listened to further
    assert stepping.takes(_exit(exits, 1, 5)) and await stepping.returned(CALLER) is None  # one on its way: read


async def test_a_step_out_of_a_recursion_of_many_calls_says_nothing(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    vm, stepping = _stepping(tmp_path)
    monkeypatch.setattr(vm.client, "send", lambda *_args: _Sent())
    await stepping.begin(THREAD, "out")
    [exits] = _requests(vm, EventKind.METHOD_EXIT_WITH_RETURN_VALUE)
    [throws] = _requests(vm, EventKind.EXCEPTION)
    for _ in range(EXIT_BUDGET + 1):
        assert stepping.takes(_exit(exits, 1, 1))  # the same method, deeper: fib(25) from its outermost call
    thrown = Event(EventKind.EXCEPTION, throws, Suspend.NONE, THREAD, STEPPED, exception=Value(Tag.OBJECT, 41),
                   catch_location=CALLER)
    assert stepping.takes(thrown) and await stepping.returned(CALLER) is None  # its throws still the step's


class _Sent:
    """The future of a request nobody awaits."""

    def add_done_callback(self, callback: object) -> None:
        pass
