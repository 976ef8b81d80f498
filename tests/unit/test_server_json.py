"""server.json, the entry for the official MCP registry, agrees with the package it describes.

The registry checks the file against its JSON schema (the 2025-12-11 release, named in ``$schema``) and
checks PyPI ownership by finding ``mcp-name: <name>`` in the package's description, which is README.md.
These tests pin the essentials of both, and keep the file in step with pyproject.toml and the policy's
POLYDBG_* variables.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from polydbg import __version__
from polydbg.policy import SWITCHES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).parents[2]
SCHEMA = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
# What the registry rejects as a version: a range, a wildcard or "latest" (its validators' rules).
VERSION_RANGE = re.compile(r"[\^~<>=*|\s]|(^|\.)[xX](\.|$)|^latest$")


def server() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))
    return data


def project() -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return data


def package() -> dict[str, Any]:
    (entry,) = server()["packages"]
    assert isinstance(entry, dict)
    return entry


def test_the_schema_and_the_name() -> None:
    data = server()
    assert data["$schema"] == SCHEMA
    name = data["name"]
    # the schema's pattern; a GitHub-authenticated publisher may only use io.github.<owner>/…
    assert re.fullmatch(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+", name) and 3 <= len(name) <= 200, name
    assert name.startswith("io.github.") and name.endswith("/" + project()["name"]), name
    assert 1 <= len(data["description"]) <= 100, len(data["description"])
    assert 1 <= len(data.get("title", "x")) <= 100


def test_the_readme_carries_the_mcp_name_for_pypi_ownership() -> None:
    """PyPI shows README.md as the description; the registry looks there for ``mcp-name: <name>`` followed by a
    boundary (space, newline, tag or ``-->``)."""
    name = server()["name"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    line = f"<!-- mcp-name: {name} -->"
    present = line in readme.splitlines()
    assert present, f"README.md needs the line {line!r} (on a line of its own)"
    assert project()["readme"] == "README.md"


def test_versions_agree_with_pyproject() -> None:
    version = project()["version"]
    assert server()["version"] == version
    assert package()["version"] == version
    assert __version__ == version  # what `polydbg --version` and the MCP initialize answer say
    assert not VERSION_RANGE.search(version), version


def test_one_pypi_package_run_with_uvx_over_stdio() -> None:
    entry = package()
    assert entry["registryType"] == "pypi"
    assert entry.get("registryBaseUrl", "https://pypi.org") == "https://pypi.org"  # the only one allowed
    assert entry["identifier"] == project()["name"]
    assert entry["runtimeHint"] == "uvx"
    assert entry["transport"] == {"type": "stdio"}
    # `polydbg` with no subcommand serves MCP over stdio, so `uvx polydbg` needs no arguments
    assert "packageArguments" not in entry and "runtimeArguments" not in entry
    assert project()["scripts"]["polydbg"] == "polydbg.cli:main"
    assert "remotes" not in server()  # nothing is hosted


def test_environment_variables_are_the_policy_and_logging_settings() -> None:
    variables = package()["environmentVariables"]
    names = [v["name"] for v in variables]
    expected = ["POLYDBG_ROOTS", *("POLYDBG_" + s.upper() for s in SWITCHES), "POLYDBG_LOG_LEVEL", "POLYDBG_LOG_FILE"]
    assert names == expected
    for variable in variables:
        assert variable["isRequired"] is False, variable
        assert variable["description"], variable
        assert variable["format"] in ("string", "number", "boolean", "filepath"), variable
        # a client may fill a default in; set in the environment it would override the project's polydbg.toml
        assert "default" not in variable and "value" not in variable, variable
    switches = {v["name"]: v for v in variables if v["name"].removeprefix("POLYDBG_").lower() in SWITCHES}
    assert all(v["format"] == "boolean" for v in switches.values())
