"""Secrets stay out of the model, through the MCP tools on the real debuggers (``session/secrets.py``): a Python
dict and object, a JS object, a Java field, a C string and struct (gdb and lldb-dap), a Go struct, in stop
reports, variables, evaluations, output and trace rows; the switch on and off; ``reveal``; and redaction
never changing the program (``debug_set_variable`` and conditions see real values).

Every answer's text and structured content are read whole: a secret's characters must appear in none of
them, and the ordinary values beside them (``author``, ``authority``, ``passage``, a git sha) must stay."""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from polydbg.mcp.server import build_server
from polydbg.policy import Policy
from tests.conftest import PROGRAMS, Tools, line_of, require, text_of

pytestmark = pytest.mark.usefixtures("anyio_backend")
SECRETS = PROGRAMS / "secrets"


class Seen(Tools):
    """Tools that keep every answer's text and structured content, to search them all at once."""

    def __init__(self, client: Client) -> None:
        super().__init__(client)
        self.answers: list[str] = []

    async def call(self, tool: str, /, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, f"{tool}({arguments}) failed: {text_of(result)}"
        self.answers.append(text_of(result) + "\n" + json.dumps(result.structured_content))
        return dict(result.structured_content or {})

    def assert_hidden(self, *secrets: str, shown: tuple[str, ...] = ()) -> None:
        everything = "\n".join(self.answers)
        for secret in secrets:
            assert secret not in everything, f"{secret!r} reached the model:\n{everything}"
        for ordinary in shown:
            assert ordinary in everything, f"{ordinary!r} was hidden:\n{everything}"
        assert "<redacted" in everything and "allow_secrets" in everything and "reveal=[" in everything


@contextlib.asynccontextmanager
async def served(policy: Policy | None = None) -> AsyncIterator[Seen]:
    async with Client(build_server(policy=policy or Policy.defaults("stdio", SECRETS))) as client:
        yield Seen(client)


def stop(name: str) -> dict[str, Any]:
    return {"file": str(SECRETS / name), "line": line_of(f"secrets/{name}", "stop here")}


async def expand_all(tools: Seen) -> dict[str, dict[str, Any]]:
    """The locals, and the children of each that has any."""
    local = {v["name"]: v for v in (await tools.call("debug_variables", count=100))["variables"]}
    for var in local.values():
        if var.get("ref"):
            await tools.call("debug_variables", ref=var["ref"])
    return local


async def test_python_dict_object_url_output_and_trace_rows() -> None:
    async with served() as tools:
        await tools.call("debug_launch", program=str(SECRETS / "settings.py"), breakpoints=[stop("settings.py")],
                         trace=["connect"])
        await expand_all(tools)
        await tools.call("debug_evaluate", expression="settings.password")
        await tools.call("debug_evaluate", expression="config")
        await tools.call("debug_output")
        await tools.call("debug_output", stream="trace")
        tools.assert_hidden("hunter2", "pg-url-secret", "plain-key-value-1", "A1b2C3d4E5f6",
                            shown=("'Ada'", "da39a3ee5e6b4b0d3255bfef95601890afd80709", "postgres://bob:"))
        # redaction never changes the program: the real value is compared, and set
        same = await tools.call("debug_evaluate", expression="settings.password == 'hunter2-py-field'")
        assert same["value"] == "True"
        result = await tools.client.call_tool("debug_set_variable", {"name": "db_url", "value": "'x://a:new-pw@h'"})
        assert "new-pw" not in text_of(result) and "<redacted" in text_of(result)
        assert (await tools.call("debug_evaluate", expression="db_url.split(':')[2]"))["value"] == "'new-pw@h'"
        tools.answers.clear()  # the evaluation above computed from the secret: nothing can hide that
        raised = await tools.call("debug_continue")  # the exception's message holds the URL and the token
        assert raised["exception"]["type"].endswith("ConnectionError"), raised
        assert "x://a:<redacted" in raised["exception"]["message"] and "GitHub token" in raised["exception"]["message"]
        tools.assert_hidden("new-pw", "A1b2C3d4E5f6")


async def test_python_trace_rows_of_points() -> None:
    async with served() as tools:
        where = {"file": str(SECRETS / "settings.py"), "line": line_of("secrets/settings.py", "connect(settings.user")}
        await tools.call("debug_launch", program=str(SECRETS / "settings.py"), stop_on_entry=True)
        traced = await tools.call("debug_trace", points=[where], expressions=["settings.password", "attempt"],
                                  where="len(settings.password) == 16")
        assert traced["total_hits"] == 2, traced  # the condition saw the real value
        await tools.call("debug_output", stream="trace")
        tools.assert_hidden("hunter2", shown=("attempt",))


async def test_the_switch_on_and_reveal() -> None:
    policy = Policy.load("stdio", SECRETS, flags={"allow_secrets": True}, environ={}, user_config="/nonexistent")
    async with served(policy) as tools:
        await tools.call("debug_launch", program=str(SECRETS / "settings.py"), breakpoints=[stop("settings.py")])
        await expand_all(tools)
        everything = "\n".join(tools.answers)
        assert "hunter2-py-dict" in everything and "pg-url-secret" in everything and "<redacted" not in everything
    async with served() as tools:
        await tools.call("debug_launch", program=str(SECRETS / "settings.py"), breakpoints=[stop("settings.py")],
                         reveal=["password"])
        await expand_all(tools)
        everything = "\n".join(tools.answers)
        assert "hunter2-py-dict" in everything and "hunter2-py-field" in everything  # revealed by name
        assert "plain-key-value-1" not in everything and "pg-url-secret" not in everything  # the others stay hidden
        assert "needs allow_secrets, which is off (the stdio default)" in everything


async def test_javascript_object() -> None:
    require("node")
    async with served() as tools:
        await tools.call("debug_launch", program=str(SECRETS / "settings.js"), breakpoints=[stop("settings.js")])
        await expand_all(tools)
        await tools.call("debug_evaluate", expression="config")
        await tools.call("debug_output")
        await tools.call("debug_terminate")
        await tools.call("debug_launch", program=str(SECRETS / "settings.js"), stop_on_entry=True)
        traced = await tools.call("debug_trace", points=[stop("settings.js")], expressions=["config", "config.apiKey"])
        assert traced["total_hits"] == 1, traced
        await tools.call("debug_output", stream="trace")
        tools.assert_hidden("hunter2", "4eC39HqLyjWDarjtT1zdp7dc", shown=("splits words",))


async def test_java_field() -> None:
    require("java", "javac")
    async with served() as tools:
        await tools.call("debug_launch", program=str(SECRETS / "Vault.java"), breakpoints=[stop("Vault.java")],
                         timeout_s=60)
        await expand_all(tools)
        await tools.call("debug_evaluate", expression="vault.password")
        tools.assert_hidden("hunter2", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV", shown=("ca.example",))


@pytest.fixture(scope="module")
def secret_c(build_dir: Path) -> str:
    require("gcc")
    binary = build_dir / "secret-c"
    subprocess.run(["gcc", "-g", "-O0", "-o", str(binary), str(SECRETS / "secret.c")], check=True,
                   capture_output=True, timeout=120)
    return str(binary)


@pytest.mark.parametrize("adapter", ["gdb", "lldb-dap"])
async def test_c_string_and_struct(secret_c: str, adapter: str) -> None:
    require("gdb" if adapter == "gdb" else "lldb-dap-22|lldb-dap")
    async with served() as tools:
        await tools.call("debug_launch", program=secret_c, adapter=adapter, breakpoints=[stop("secret.c")])
        await expand_all(tools)
        await tools.call("debug_evaluate", expression="password")
        await tools.call("debug_evaluate", expression="login")
        tools.assert_hidden("hunter2", "glpat-abcdefghij", shown=("an ordinary word",))


async def test_go_struct() -> None:
    require("go", "dlv")
    async with served() as tools:
        await tools.call("debug_launch", program=str(SECRETS / "go"), breakpoints=[stop("go/main.go")], timeout_s=120)
        await expand_all(tools)
        await tools.call("debug_evaluate", expression="config")
        tools.assert_hidden("hunter2", "AKIAIOSFODNN7EXAMPLE", shown=("Tokens",))
