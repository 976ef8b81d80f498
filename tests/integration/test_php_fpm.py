"""PHP-FPM under the debugger, as a web server runs it: a pool started by the test with Xdebug's settings, polydbg
attached by listening (``debug_attach(language="php", port=N)``), FastCGI requests sent as nginx would send them.
Every request is a connection from Xdebug and so a thread of the session, named after the request; breakpoints
hold for every request; the end of the session leaves FPM, which polydbg did not start, running."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.conftest import PROGRAMS, Tools
from tests.integration.php_fpm import fastcgi, fpm_pool, free_port
from tests.integration.test_php import _php, at, values

__all__ = ["_php"]  # Xdebug's presence checked here too (an autouse fixture)

WEB = str(PROGRAMS / "php" / "web" / "index.php")


async def test_fpm_requests_are_threads_that_stop_in_the_handler_and_fpm_outlives_the_session(
        tools: Tools, tmp_path: Path) -> None:
    port = free_port()
    report = await tools("debug_attach", language="php", port=port, breakpoints=[at(WEB, "in the handler")])
    assert report["state"] == "running", report
    advice = report["output"]["text"]
    assert advice.startswith("polydbg: listening") and "never from a pool" in advice, advice  # all of it shown
    flags = [word for word in advice.split() if word.startswith("-dxdebug.")]
    assert f"-dxdebug.client_port={port}" in flags, advice
    with fpm_pool(tmp_path, flags, workers=2) as pool:  # started as the answer says
        workers = pool.workers()
        ada = asyncio.ensure_future(fastcgi(pool.port, WEB, "/greet?name=ada"))
        stop = await tools("debug_continue", timeout_s=30)
        assert stop["reason"] == "breakpoint" and stop["location"]["function"] == "greet", stop
        assert stop["thread_name"].startswith("GET /greet?name=ada"), stop
        assert values(stop)["$name"] == '"ada"'
        script = await tools("debug_evaluate", expression='$_SERVER["SCRIPT_FILENAME"] . " " . PHP_SAPI')
        assert script["value"] == f'"{WEB} fpm-fcgi"', script
        # the other worker takes a form POST meanwhile: its stop is what resuming ada's answers with
        bob = asyncio.ensure_future(fastcgi(pool.port, WEB, "/greet", body=b"name=bob"))
        shown = await tools("debug_continue", timeout_s=30)
        assert shown["thread_id"] != stop["thread_id"] and shown["thread_name"].startswith("POST /greet"), shown
        assert values(shown)["$name"] == '"bob"'
        answered = await asyncio.wait_for(ada, 30)
        assert (answered.status, answered.body) == (200, "Hello, Ada!\n"), answered
        # a later request gets the same breakpoint, as a new thread
        cy = asyncio.ensure_future(fastcgi(pool.port, WEB, "/greet?name=cy"))
        third = await tools("debug_continue", timeout_s=30)
        assert third["thread_name"].startswith("GET /greet?name=cy") and values(third)["$name"] == '"cy"', third
        assert third["thread_id"] not in (stop["thread_id"], shown["thread_id"])
        assert (await asyncio.wait_for(bob, 30)).body == "Hello, Bob!\n"
        output = (await tools("debug_output", stream="stdout", max_bytes=30_000))["text"]
        assert "Hello, Ada!" in output and "Hello, Bob!" in output  # each request's response, copied
        # the end of the session ends the stopped request, not the server polydbg did not start
        await tools("debug_terminate")
        ended = await asyncio.wait_for(cy, 30)
        assert "Hello" not in ended.body, ended
        assert pool.process.poll() is None and pool.workers() == workers
        after = await asyncio.wait_for(fastcgi(pool.port, WEB, "/greet?name=dee"), 30)  # no debugger listens
        assert after.body == "Hello, Dee!\n", after
