"""The GDB/MI client against a fake gdb: token matching, async records, stream attribution, errors."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from polydbg.errors import AdapterGoneError, AdapterRequestError, AdapterTimeoutError
from polydbg.mi.client import MiClient, mi_quote
from polydbg.transport.streams import LineStream


class FakeGdb:
    """Records the command lines the client writes; the test feeds gdb's output lines."""

    def __init__(self) -> None:
        self.reader = asyncio.StreamReader()
        self.written: list[str] = []

    def write(self, data: bytes) -> None:
        self.written.extend(data.decode().splitlines())

    async def drain(self) -> None:
        pass

    def say(self, *lines: str) -> None:
        for line in lines:
            self.reader.feed_data(line.encode() + b"\n")

    def token(self, index: int = -1) -> str:
        line = self.written[index]
        return line[: len(line) - len(line.lstrip("0123456789"))]


async def _client(**kwargs: Any) -> tuple[MiClient, FakeGdb]:
    gdb = FakeGdb()
    client = MiClient(LineStream(gdb.reader, gdb, "gdb"), "gdb", **kwargs)
    client.start()
    return client, gdb


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_results_are_matched_by_token_even_out_of_order() -> None:
    client, gdb = await _client()
    first = client.send("-thread-info")
    second = client.send("-stack-list-frames")
    await _settle()  # the commands are written in the order sent
    assert [line.lstrip("0123456789") for line in gdb.written] == ["-thread-info", "-stack-list-frames"]
    t1, t2 = gdb.token(0), gdb.token(1)
    assert t1 != t2
    gdb.say(f'{t2}^done,stack=[frame={{level="0",func="main"}}]', "(gdb) ",
            f'{t1}^done,threads=[{{id="1"}}],current-thread-id="1"', "(gdb) ")
    assert (await first).payload == {"threads": [{"id": "1"}], "current-thread-id": "1"}
    result = await second
    assert result.cls == "done"
    assert result.payload == {"stack": [{"level": "0", "func": "main"}]}
    await client.close()


async def test_async_records_reach_their_handlers_between_results() -> None:
    client, gdb = await _client()
    seen: list[tuple[str, dict[str, Any]]] = []
    client.on_async("stopped", lambda body: seen.append(("stopped", body)))
    client.on_async("running", lambda body: seen.append(("running", body)))
    everything: list[str] = []
    client.on_any_async(lambda name, _body: everything.append(name))
    pending = client.send("-exec-continue")
    await _settle()
    gdb.say(f"{gdb.token()}^running", '*running,thread-id="all"', "(gdb) ",
            '=library-loaded,id="/lib/libc.so.6"',
            '*stopped,reason="breakpoint-hit",bkptno="1",thread-id="1",frame={func="add",line="20"}')
    assert (await pending).cls == "running"
    await _settle()
    assert seen == [("running", {"thread-id": "all"}),
                    ("stopped", {"reason": "breakpoint-hit", "bkptno": "1", "thread-id": "1",
                                 "frame": {"func": "add", "line": "20"}})]
    assert everything == ["running", "library-loaded", "stopped"]
    await client.close()


async def test_console_text_belongs_to_the_pending_command_and_the_rest_to_the_stream() -> None:
    client, gdb = await _client(claim_console=lambda text: text.startswith("<log>"))
    streams: list[tuple[str, str]] = []
    client.on_stream(lambda kind, text: streams.append((kind, text)))
    gdb.say('~"[Inferior 1 (process 42) exited normally]\\n"')  # nothing pending: goes to the stream
    await _settle()
    command = client.send('-interpreter-exec console "info registers rip"')
    await _settle()
    gdb.say('~"rip            0x5555"', '~"  <main+4>\\n"', '&"a warning\\n"', '~"<log>i=1\\n"', '@"remote out"',
            f"{gdb.token()}^done")
    result = await command
    assert result.console == "rip            0x5555  <main+4>\n"
    assert result.log == "a warning\n"
    await _settle()
    assert streams == [("console", "[Inferior 1 (process 42) exited normally]\n"), ("console", "<log>i=1\n"),
                       ("target", "remote out")]
    await client.close()


async def test_error_record_raises_adapter_request_error_with_gdbs_message() -> None:
    client, gdb = await _client()
    command = client.command('-data-evaluate-expression "nosuch + 1"', timeout=5)
    task = asyncio.ensure_future(command)
    await _settle()
    gdb.say(f'{gdb.token()}^error,msg="No symbol \\"nosuch\\" in current context."')
    with pytest.raises(AdapterRequestError) as caught:
        await task
    assert caught.value.command == "-data-evaluate-expression"
    assert caught.value.message == 'No symbol "nosuch" in current context.'
    await client.close()


async def test_pipelined_commands_return_in_order_or_the_first_error() -> None:
    client, gdb = await _client()
    task = asyncio.ensure_future(client.commands(["-gdb-set a", "-gdb-set b", "-gdb-set c"], timeout=5))
    await _settle()
    t1, t2, t3 = gdb.token(0), gdb.token(1), gdb.token(2)
    gdb.say(f"{t1}^done", f'{t2}^error,msg="bad b"', f"{t3}^done")
    with pytest.raises(AdapterRequestError, match="bad b"):
        await task
    await client.close()


async def test_timeout_abandons_the_command() -> None:
    client, gdb = await _client()
    with pytest.raises(AdapterTimeoutError, match="-stack-list-frames"):
        await client.command("-stack-list-frames", timeout=0.05)
    gdb.say(f"{gdb.token()}^done")  # a late answer is ignored
    after = client.send("-thread-info")
    await _settle()
    gdb.say(f"{gdb.token()}^done,threads=[]")
    assert (await after).payload == {"threads": []}
    await client.close()


async def test_eof_fails_every_waiter_and_later_sends() -> None:
    client, gdb = await _client()
    waiting = [client.send("-thread-info"), client.send("-exec-continue")]
    gdb.reader.feed_eof()
    for future in waiting:
        with pytest.raises(AdapterGoneError, match="gdb closed its output"):
            await future
    await client.closed.wait()
    with pytest.raises(AdapterGoneError):
        await client.command("-thread-info", timeout=1)


async def test_breakpoint_script_tuple_and_long_lines_are_parsed() -> None:
    client, gdb = await _client()
    command = client.send("-dprintf-insert x")
    await _settle()
    script = '{"printf \\"%d}\\\\n\\",x","silent"}'
    value = "v" * 300_000  # longer than the reader's line limit
    gdb.say(f'{gdb.token()}^done,bkpt={{number="2",type="dprintf",script={script},big="{value}"}}')
    result = await command
    assert result.payload["bkpt"]["script"] == ['printf "%d}\\n",x', "silent"]
    assert result.payload["bkpt"]["big"] == value
    await client.close()


def test_mi_quote_escapes_for_the_mi_c_string_parser() -> None:
    assert mi_quote('a "b"\\c\nd') == '"a \\"b\\"\\\\c\\nd"'
    assert mi_quote("-1") == '"-1"'
    assert mi_quote("\x01") == '"\\001"'


async def test_commands_are_one_line() -> None:
    client, _gdb = await _client()
    with pytest.raises(ValueError):
        client.send("-gdb-set a\n-gdb-exit")
    await client.close()
