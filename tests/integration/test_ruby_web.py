"""A Rack app served by WEBrick under rdbg (tests/programs/ruby/web_app.rb): started, requested over HTTP while
the program runs, stopped in the handler on the request's thread, inspected, continued, and the response
arrives with the value changed at the stop; a second request stops again (breakpoints stay across requests)."""

from __future__ import annotations

import anyio
import httpx2
import pytest

from tests.conftest import PROGRAMS, Tools, line_of, require

pytestmark = pytest.mark.anyio

APP = str(PROGRAMS / "ruby" / "web_app.rb")
HANDLER = line_of("ruby/web_app.rb", "# handler breakpoint")
REQUEST_S = 30.0


@pytest.fixture(autouse=True)
def _ruby() -> None:
    require("ruby")


async def test_a_request_stops_in_the_handler_and_its_response_arrives_after_continue(tools: Tools) -> None:
    started = await tools("debug_launch", program=APP, breakpoints=[
        {"file": APP, "line": line_of("ruby/web_app.rb", "# port known")}, {"file": APP, "line": HANDLER}])
    assert started["reason"] == "breakpoint", started
    port = int((await tools("debug_evaluate", expression="server.config[:Port]"))["value"])  # (port: not yet set)
    assert port > 0
    responses: list[httpx2.Response] = []

    async with httpx2.AsyncClient(timeout=REQUEST_S) as http, anyio.create_task_group() as requests:
        async def get(query: str) -> None:
            responses.append(await http.get(f"http://127.0.0.1:{port}/?{query}"))

        requests.start_soon(get, "fruit=pear&quantity=4")  # waits in the listening socket's backlog until served
        stop = await tools("debug_continue")
        assert stop["state"] == "stopped" and stop["reason"] == "breakpoint", stop
        assert stop["location"]["line"] == HANDLER and stop["location"]["function"] == "Shop#call", stop
        local = {v["name"]: v["value"] for v in stop["locals"]}
        assert local["fruit"] == '"pear"' and local["quantity"] == "4", local
        assert stop["thread_id"] != started["thread_id"], stop  # WEBrick serves each request on a thread of its own
        path = await tools("debug_evaluate", expression="env['PATH_INFO'] + '?' + env['QUERY_STRING']")
        assert path["value"] == '"/?fruit=pear&quantity=4"', path
        await tools("debug_set_variable", name="quantity", value="10")
        running = await tools("debug_continue", timeout_s=1)  # no stop comes: the request is answered
        assert running["state"] == "running", running
    assert responses[0].status_code == 200 and responses[0].json() == {"fruit": "pear", "total": 30}, responses

    async with httpx2.AsyncClient(timeout=REQUEST_S) as http, anyio.create_task_group() as requests:
        requests.start_soon(get, "fruit=plum")
        again = await tools("debug_continue")
        assert again["reason"] == "breakpoint" and again["location"]["line"] == HANDLER, again
        await tools("debug_clear", all=True)
        await tools("debug_continue", timeout_s=1)
    assert responses[1].json() == {"fruit": "plum", "total": 5}, responses
    await tools("debug_terminate")
