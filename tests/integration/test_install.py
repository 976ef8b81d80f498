"""The package as users get it: built, installed, run, and started the way the README's client snippets
start it (``uvx --from /abs/path/to/polydbg polydbg serve``: polydbg is not on PyPI yet).

``uv build`` makes the sdist from the working tree and then the wheel from the sdist, as ``python -m build``
does, so a file the sdist leaves out is missing from the wheel too. The wheel goes into a fresh venv with
its dependencies from PyPI; the installed ``polydbg`` then runs ``doctor`` and serves a one-breakpoint
debugging session to the SDK's stdio client, started the way an MCP client starts it (its own small
environment, no PYTHONPATH, no VIRTUAL_ENV). The README's snippets are read back and run as written, with
this checkout's path: uvx builds polydbg from the checkout and serves the same session, and builds it again
when a source file changes. uv comes with the dev extra (installed into this venv if it is missing): it
installs the venv in ~2 s where pip takes ~35 s. Its cache is private to the run unless UV_CACHE_DIR says
otherwise (e.g. a CI cache).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import get_default_environment
from packaging.requirements import Requirement

from polydbg.backends.registry import BACKENDS
from tests.conftest import PROGRAMS, Tools, line_of, require, text_of

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

ROOT = Path(__file__).parents[2]
PROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
NAME, VERSION = PROJECT["name"], PROJECT["version"]
# Files the code opens by path, beside its modules: each must be in the wheel and found from there.
DATA_FILES = ["polydbg/py.typed", "polydbg/backends/node/shims/boot.cjs", "polydbg/demo/buggy_average.py",
              "polydbg/backends/lldb/shims/cxx_formatters.py",
              "polydbg/backends/debugpy/shims/debuggee.py", "polydbg/backends/gdb/shims/gdb_init.py"]
TIMEOUT_S = 150


@dataclass(frozen=True)
class Installed:
    uv: str
    env: dict[str, str]  # for uv and the installed commands: ours, less what would point them at the checkout
    sdist: Path
    wheel: Path
    venv: Path  # named so that polydbg's look for a project venv (.venv, venv) does not find it
    work: Path  # a directory outside the checkout, with no venv above it

    @property
    def polydbg(self) -> str:
        return str(self.venv / "bin" / "polydbg")


README = (ROOT / "README.md").read_text(encoding="utf-8")
CHECKOUT = "/abs/path/to/polydbg"  # how the README's snippets name the checkout
CHECKOUT_FORM = ["uvx", "--from", CHECKOUT, "polydbg", "serve"]


def _uv() -> str:
    """uv from the dev extra (beside this interpreter), else from PATH, else the dev extra's uv installed into
    this venv now (it is on PyPI)."""
    beside = Path(sys.executable).with_name("uv")
    if not beside.exists() and shutil.which("uv") is None:
        pinned = next(r for r in PROJECT["optional-dependencies"]["dev"] if Requirement(r).name == "uv")
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", pinned], check=True, timeout=TIMEOUT_S)
    return str(beside) if beside.exists() else require("uv")["uv"]


def _uvx(uv: str) -> list[str]:
    uvx = Path(uv).with_name("uvx")
    return [str(uvx)] if uvx.exists() else [uv, "tool", "run"]


def _run(argv: list[str], env: dict[str, str], cwd: Path | None = None, ok: tuple[int, ...] = (0,)
         ) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    assert done.returncode in ok, f"{argv} exited {done.returncode}\n{done.stdout}\n{done.stderr}"
    return done


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    uv = _uv()
    root = tmp_path_factory.mktemp("install")
    # nothing that would point the installed commands at the checkout; byte code may be written (to tmp)
    hidden = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE", "CONDA_PREFIX")
    env = {k: v for k, v in os.environ.items() if k not in hidden and not k.startswith("POLYDBG_")}
    env.setdefault("UV_CACHE_DIR", str(root / "uv-cache"))
    env |= {"UV_PYTHON_DOWNLOADS": "never", "UV_NO_PROGRESS": "1"}
    dist, venv, work = root / "dist", root / "installed", root / "work"
    _run([uv, "build", "--python", sys.executable, "--out-dir", str(dist), str(ROOT)], env)
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    _run([uv, "venv", "--python", sys.executable, str(venv)], env)
    _run([uv, "pip", "install", "--python", str(venv / "bin" / "python"), str(wheel)], env)
    work.mkdir()
    return Installed(uv, env, sdist, wheel, venv, work)


def _package_files() -> set[str]:
    """Every file of src/polydbg that hatchling packs (the .gitignore'd byte code aside)."""
    src = ROOT / "src"
    return {p.relative_to(src).as_posix() for p in (src / "polydbg").rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"}


def _metadata(installed: Installed) -> tuple[Any, str]:
    with zipfile.ZipFile(installed.wheel) as wheel:
        text = wheel.read(f"{NAME}-{VERSION}.dist-info/METADATA").decode()
    return HeaderParser().parsestr(text), text


def test_the_wheel_and_the_sdist_hold_the_whole_package(installed: Installed) -> None:
    assert installed.wheel.name == f"{NAME}-{VERSION}-py3-none-any.whl"
    expected = _package_files()
    assert set(DATA_FILES) <= expected, "a data file the code opens is not in src/polydbg"
    with zipfile.ZipFile(installed.wheel) as wheel:
        names = wheel.namelist()
        entry_points = wheel.read(f"{NAME}-{VERSION}.dist-info/entry_points.txt").decode()
    in_wheel = {n for n in names if n.startswith("polydbg/")}
    assert in_wheel == expected, f"missing: {sorted(expected - in_wheel)}; extra: {sorted(in_wheel - expected)}"
    assert {n.split("/")[0] for n in names} == {"polydbg", f"{NAME}-{VERSION}.dist-info"}
    assert re.search(r"^\[console_scripts\]\npolydbg = polydbg\.cli:main$", entry_points, re.MULTILINE)

    headers, _ = _metadata(installed)
    assert (headers["Name"], headers["Version"]) == (NAME, VERSION)
    assert headers["Requires-Python"] == PROJECT["requires-python"]
    required = {Requirement(r) for r in headers.get_all("Requires-Dist") if "extra ==" not in r}
    assert required == {Requirement(r) for r in PROJECT["dependencies"]}

    top = f"{NAME}-{VERSION}/"
    with tarfile.open(installed.sdist) as sdist:
        members = [m.name for m in sdist.getmembers() if m.isfile()]
    assert {f"{top}{f}" for f in ("pyproject.toml", "README.md", "PKG-INFO")} <= set(members)
    assert {m.removeprefix(f"{top}src/") for m in members if m.startswith(f"{top}src/polydbg/")} == expected
    assert not [m for m in members if "node_modules" in m or "__pycache__" in m or "/.venv/" in m]


def test_the_pypi_description_names_the_server_for_the_registry(installed: Installed) -> None:
    """The MCP registry proves the PyPI package is ours by ``mcp-name: <server.json's name>`` in its description."""
    name = json.loads((ROOT / "server.json").read_text(encoding="utf-8"))["name"]
    headers, text = _metadata(installed)
    assert headers["Description-Content-Type"] == "text/markdown"
    present = f"<!-- mcp-name: {name} -->" in text.splitlines()
    assert present, f"README.md needs the line <!-- mcp-name: {name} -->"


def test_the_installed_package_finds_its_files(installed: Installed) -> None:
    script = """if True:
        import json, os, polydbg
        from importlib import resources
        from polydbg.backends.lldb import launch as lldb_launch
        from polydbg.backends.node import children
        from polydbg.demo import run
        print(json.dumps({"file": polydbg.__file__, "version": polydbg.__version__,
                          "boot": children.BOOT.is_file(), "formatters": os.path.isfile(lldb_launch.CXX_FORMATTERS),
                          "demo": resources.files("polydbg.demo").joinpath(run.PROGRAM).is_file(),
                          "typed": resources.files("polydbg").joinpath("py.typed").is_file()}))
    """
    done = _run([str(installed.venv / "bin" / "python"), "-I", "-c", script], installed.env, cwd=installed.work)
    found = json.loads(done.stdout)
    assert found.pop("file").startswith(str(installed.venv / "lib")), found
    assert found == {"version": VERSION, "boot": True, "formatters": True, "demo": True, "typed": True}
    version = _run([installed.polydbg, "--version"], installed.env, cwd=installed.work)
    assert version.stdout.strip() == f"polydbg {VERSION}"


def _check_doctor(out: str, returncode: int, python_prefix: Path) -> None:
    for adapter in BACKENDS:
        assert re.search(rf"^(found|MISSING) +{re.escape(adapter)} ", out, re.MULTILINE), f"{adapter}:\n{out}"
    debugpy = re.search(r"^found +debugpy .*\((.+)\)$", out, re.MULTILINE)
    assert debugpy and debugpy.group(1).startswith(str(python_prefix)), out  # the install's python and debugpy
    assert "policy (stdio):" in out and "policy (http):" in out
    assert (returncode == 0) == ("all debuggers found" in out), out
    if os.environ.get("CI"):
        assert returncode == 0, f"CI installs every debugger:\n{out}"


def test_doctor_through_the_installed_entry_point(installed: Installed) -> None:
    done = _run([installed.polydbg, "doctor"], installed.env, cwd=installed.work, ok=(0, 1))
    _check_doctor(done.stdout, done.returncode, installed.venv)


async def _debug_basic_py(server: StdioServerParameters, work: Path) -> str:
    """A one-breakpoint session through ``server`` (run in ``work``) on a copy of basic.py in ``work``, debugged
    with the server's own Python; returns that Python's ``sys.prefix``."""
    program = work / "basic.py"  # outside the checkout: debugged with the server's own python
    shutil.copy(PROGRAMS / "basic.py", program)
    line = line_of("basic.py", 'print("numbers:", numbers)')
    async with Client(server) as client:
        tools = Tools(client)
        result = await client.call_tool("debug_launch", {"program": str(program),
                                                         "breakpoints": [{"file": str(program), "line": line}]})
        assert not result.is_error, text_of(result)
        report, text = result.structured_content, text_of(result)
        assert report is not None
        assert report["state"] == "stopped" and report["location"]["line"] == line, report
        assert f"basic.py:{line}" in text and "greeting (str) = 'hello'" in text, text
        assert {v["name"]: v["value"] for v in report["locals"]}["numbers"] == "[0, 2, 4, 6, 8]", report
        prefix = await tools("debug_evaluate", expression="__import__('sys').prefix")
        await tools("debug_terminate")
        assert (await tools("debug_sessions"))["sessions"] == []
    return str(ast.literal_eval(prefix["value"]))  # the repr of a str


async def test_a_debugging_session_through_the_installed_server(installed: Installed) -> None:
    # no env: the SDK passes the small environment it gives every server (PATH, HOME, …), as clients do
    server = StdioServerParameters(command=installed.polydbg, args=["serve"], cwd=str(installed.work))
    assert await _debug_basic_py(server, installed.work) == str(installed.venv)


def test_uvx_runs_the_wheel(installed: Installed) -> None:
    done = _run([*_uvx(installed.uv), "--python", sys.executable, "--from", str(installed.wheel), "polydbg",
                 "doctor"], installed.env, cwd=installed.work, ok=(0, 1))
    # uvx runs it from an environment of its own, in uv's cache
    _check_doctor(done.stdout, done.returncode, Path(installed.env["UV_CACHE_DIR"]))


# -- the README's client snippets -----------------------------------------------------------------------------


def _server_in(config: Any) -> dict[str, Any]:
    """The server entry of a client's JSON or TOML config: the table that has a ``command``."""
    assert isinstance(config, dict), config
    if "command" in config:
        return config
    (entry,) = [_server_in(value) for value in config.values()]
    return entry


def readme_client_commands() -> dict[str, list[str]]:
    """The command line each client snippet of the README's "Configure your client" starts the server with."""
    section = README.split("\n## Configure your client\n", 1)[1].split("\n## ", 1)[0]
    commands: dict[str, list[str]] = {}
    for client, kind, body in re.findall(r"^\*\*([^*]+)\*\*[^\n]*\n\n```(\w+)\n(.*?)```", section,
                                         re.MULTILINE | re.DOTALL):
        if kind == "sh":
            (line,) = re.findall(r"^claude mcp add polydbg -- (.+)$", body, re.MULTILINE)
            commands[client] = shlex.split(line)
        else:
            entry = _server_in(tomllib.loads(body) if kind == "toml" else json.loads(body))
            commands[client] = [entry["command"], *entry["args"]]
    return commands


def test_every_client_snippet_starts_the_checkout_form() -> None:
    """polydbg is not on PyPI: each snippet must run what works today, from the checkout."""
    commands = readme_client_commands()
    assert sorted(commands) == ["Claude Code", "Codex", "Cursor", "Gemini CLI", "VS Code", "Zed"], commands
    assert all(command == CHECKOUT_FORM for command in commands.values()), commands


def _client_env(installed: Installed) -> dict[str, str]:
    """What an MCP client gives the server (the SDK's small default), this run's uv settings, and what this
    machine needs to reach the package index (its CA bundle, a proxy), which a user would add likewise."""
    return get_default_environment() | {k: v for k, v in installed.env.items()
                                        if k.startswith(("UV_", "SSL_CERT_")) or k.lower().endswith("_proxy")}


async def test_the_readmes_checkout_form_serves_a_debugging_session(installed: Installed) -> None:
    """The snippets' command as written (uvx found on PATH as a client finds it), with this checkout's path."""
    command = [ROOT.as_posix() if word == CHECKOUT else word for word in readme_client_commands()["Claude Code"]]
    uvx = _uvx(installed.uv)
    server = StdioServerParameters(command=uvx[0], args=[*uvx[1:], *command[1:]], cwd=str(installed.work),
                                   env=_client_env(installed))
    prefix = await _debug_basic_py(server, installed.work)
    assert prefix.startswith(installed.env["UV_CACHE_DIR"]), prefix  # polydbg built from the checkout, in uv's cache


def test_the_checkout_form_is_built_again_when_a_source_changes(installed: Installed, tmp_path: Path) -> None:
    """uvx caches the wheel it builds from a directory; pyproject's cache-keys make it build again when a file
    under src/ changes (by default only pyproject.toml counts, and a pulled checkout would serve old code)."""
    checkout = tmp_path / "polydbg"
    checkout.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, checkout / name)
    shutil.copytree(ROOT / "src", checkout / "src", ignore=shutil.ignore_patterns("__pycache__"))
    version = [*_uvx(installed.uv), "--from", str(checkout), "polydbg", "--version"]
    env = _client_env(installed)
    assert _run(version, env, cwd=installed.work).stdout.strip() == f"polydbg {VERSION}"
    init = checkout / "src" / "polydbg" / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8").replace(f'"{VERSION}"', '"9.9.9"'), encoding="utf-8")
    assert _run(version, env, cwd=installed.work).stdout.strip() == "polydbg 9.9.9"
