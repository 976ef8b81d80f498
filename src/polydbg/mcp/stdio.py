"""MCP over stdin/stdout on asyncio pipes.

The SDK's ``stdio_server`` reads and writes through worker-thread file wrappers: two thread hops per
message, about a millisecond per tool call. It accepts explicit streams, so this module hands it
line streams built on the event loop's own pipe transports, and keeps the SDK's safety measure of
pointing fd 0 at /dev/null and fd 1 at stderr while serving (a stray print or a child process can
then never corrupt the MCP stream). Where stdin or stdout is not a pipe, socket or terminal (e.g. a
regular file), the SDK's own transport is used unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import AsyncIterator
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server

from polydbg.mcp import arguments, sdk_compat

_LINE_LIMIT = 64 * 1024 * 1024


class _Lines:
    """Async iterator of decoded lines (the shape ``stdio_server`` reads); a lone surrogate escape is
    marked so the tool can name the argument (``arguments.mark_lone_surrogates``)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return arguments.mark_lone_surrogates(line.decode("utf-8", "replace"))


class _Writer:
    """``write``/``flush`` coroutines (the shape ``stdio_server`` writes to)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def _pollable(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


@contextlib.asynccontextmanager
async def _claimed_stdio() -> AsyncIterator[tuple[_Lines, _Writer]]:
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=_LINE_LIMIT)
        read_transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                                         os.fdopen(wire_in, "rb", buffering=0))
        transports.append(read_transport)
        write_transport, protocol = await loop.connect_write_pipe(
            asyncio.streams.FlowControlMixin, os.fdopen(wire_out, "wb", buffering=0))
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield _Lines(reader), _Writer(writer)
    finally:
        for transport in transports:
            transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


async def serve_stdio(server: MCPServer[Any]) -> None:
    """Serve ``server`` on this process's stdin/stdout until stdin closes."""
    lowlevel = sdk_compat.lowlevel_server(server)
    if not (_pollable(0) and _pollable(1)):
        await server.run_stdio_async()
        return
    async with _claimed_stdio() as (lines, out), stdio_server(lines, out) as (read_stream, write_stream):  # type: ignore[arg-type]
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())
