"""How a JavaScript or TypeScript program is started under Node's inspector, and how a running one is
reached.

TypeScript runs through what the project has, in this order: compiled JavaScript with ``.map`` files
(the program is the ``.js``), ``tsx`` as a loader in the same Node (``--import`` for ES modules,
``--require …/cjs`` for CommonJS — never the ``tsx`` CLI, which starts a second Node), ``ts-node``'s
register hook. Loaders are passed by absolute path, so ``cwd`` may be anywhere.

Node is started with ``--inspect-brk=127.0.0.1:0``: its first stderr line names the WebSocket
(``inspector_url``); Node's own inspector lines are kept out of the program's stderr
(``StderrFilter``). Its child processes open their inspectors without that line (``children``: Node's
``--inspect-publish-uid=http``), so the launched program is told to print it (``stderr,http``).

A running program is reached at ``host:port`` of ``node --inspect`` (its
``/json/list`` names the WebSocket, ``discover``), or by pid: SIGUSR1 opens its inspector on
127.0.0.1:9229, listening a moment later (``discover_after_signal`` asks again until it answers).
"""

from __future__ import annotations

import asyncio
import codecs
import json
import os
import re
import shutil
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polydbg.errors import AdapterGoneError, AdapterTimeoutError, EnvironmentProblem, UsageError, echo

if TYPE_CHECKING:  # doctor imports this module for find_package: keep it light
    from polydbg import procs

TS_EXTENSIONS = (".ts", ".mts", ".cts", ".tsx")
JS_EXTENSIONS = (".js", ".mjs", ".cjs", ".jsx")
# Node's own inspector lines on stderr: not the program's output. Node's test runner (node --test) sees the
# inspector in NODE_OPTIONS, runs its files one at a time as it does under any debugger and says so in a
# warning (Node 20-22), followed the first time by a hint: the debugger's doing too.
INSPECTOR_LINES = re.compile(
    r"^(Debugger listening on ws://\S+|For help, see: https://nodejs\.org/en/docs/inspector|Debugger attached\."
    r"|Waiting for the debugger to disconnect\.\.\.|Debugger ending on ws://\S+"
    r"|\(node:\d+\) Warning: Using the inspector with --test forces running at a concurrency of 1\. .*)\s*$")
_WARNING_HINT = "(Use `node --trace-warnings ...` to show where the warning was created)"
PUBLISH_TO_STDERR = "--inspect-publish-uid=stderr,http"  # the launched program's inspector line: its URL
_URL = re.compile(r"ws://\S+")


def find_node(explicit: str | None = None) -> str:
    node = explicit or shutil.which("node") or shutil.which("nodejs")
    if node is None or shutil.which(node) is None:
        raise EnvironmentProblem("node is not installed (or not on PATH); install it (apt-get install nodejs, or "
                                 "from nodejs.org) or pass node= with its path")
    return node


def project_package(start: str) -> tuple[str | None, dict[str, object]]:
    """The nearest ``package.json`` at or above ``start``: its directory and contents."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "package.json")
        if os.path.isfile(candidate):
            try:
                with open(candidate, encoding="utf-8") as handle:
                    data = json.load(handle)
                return directory, data if isinstance(data, dict) else {}
            except (OSError, ValueError):
                return directory, {}
        parent = os.path.dirname(directory)
        if parent == directory:
            return None, {}
        directory = parent


def find_package(name: str, start: str) -> str | None:
    """The directory of ``node_modules/<name>`` nearest to ``start`` (Node's own lookup order)."""
    directory = os.path.abspath(start)
    while True:
        candidate = os.path.join(directory, "node_modules", name)
        if os.path.isfile(os.path.join(candidate, "package.json")):
            return candidate
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def command_dirs(cwd: str | None, runtime: str | None) -> list[str]:
    """Where the project's Node commands are (``jest``, ``vitest``, ``tsx``): every ``node_modules/.bin`` from
    ``cwd`` up, nearest first, as npx and npm scripts find them."""
    found = []
    directory = os.path.abspath(cwd or os.getcwd())
    while True:
        candidate = os.path.join(directory, "node_modules", ".bin")
        if os.path.isdir(candidate):
            found.append(candidate)
        parent = os.path.dirname(directory)
        if parent == directory:
            return found
        directory = parent


def is_esm(program: str) -> bool:
    if program.endswith((".mjs", ".mts")):
        return True
    if program.endswith((".cjs", ".cts")):
        return False
    _, package = project_package(os.path.dirname(program))
    return package.get("type") == "module"


def typescript_loader(program: str) -> list[str]:
    """The Node flags that run ``program`` (a .ts file), or a UsageError naming the install line."""
    home = os.path.dirname(program)
    tsx = find_package("tsx", home)
    if tsx is not None:
        if is_esm(program):
            return ["--import", _url(os.path.join(tsx, "dist", "loader.mjs"))]
        return ["--require", os.path.join(tsx, "dist", "cjs", "index.cjs")]
    ts_node = find_package("ts-node", home)
    if ts_node is not None:
        if is_esm(program):
            return ["--loader", _url(os.path.join(ts_node, "esm.mjs"))]
        return ["--require", os.path.join(ts_node, "register", "index.js")]
    raise UsageError(f"{echo(program)} is TypeScript and its project has no way to run it: install tsx "
                     "(npm install --save-dev tsx) in the project, or compile it (tsc --sourceMap) and pass the "
                     ".js file as program (breakpoints may stay on the .ts files)")


def command(node: str, program: str, args: tuple[str, ...], runtime_args: tuple[str, ...]) -> list[str]:
    """``node --inspect-brk=127.0.0.1:0 --inspect-publish-uid=stderr,http [runtime_args] [TypeScript loader]
    program [args]``."""
    loader = typescript_loader(program) if program.lower().endswith(TS_EXTENSIONS) else []
    return [node, "--inspect-brk=127.0.0.1:0", PUBLISH_TO_STDERR, *runtime_args, *loader, program, *args]


def inspector_url(line: str) -> str | None:
    match = _URL.search(line)
    return match.group(0) if match else None


async def read_inspector_url(stderr: asyncio.StreamReader, proc: procs.DebuggerProcess, timeout_s: float) -> str:
    """Node's first stderr line names the inspector; anything else first is why it did not start."""
    seen: list[str] = []

    async def first_url() -> str | None:
        while raw := await stderr.readline():
            line = raw.decode("utf-8", "replace")
            url = inspector_url(line) if line.startswith("Debugger listening") else None
            if url:
                return url
            seen.append(line)
            proc.remember(line)
        return None

    try:
        found = await asyncio.wait_for(first_url(), timeout_s)
    except asyncio.TimeoutError as exc:
        raise AdapterTimeoutError(f"node did not open its inspector within {timeout_s:g} s"
                                  f"{proc.stderr_hint()}") from exc
    if found is None:
        raise EnvironmentProblem(f"node exited before its inspector opened: {''.join(seen).strip()[-800:]}")
    return found


class StderrFilter:
    """The program's stderr without Node's own inspector lines, fed in chunks: a line may be huge, so
    one longer than ``HOLD`` characters is passed on before its end."""

    HOLD = 4096

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._pending = ""
        self._dropped = False  # the line before was the debugger's: a warning's hint after it is too

    def feed(self, chunk: bytes) -> str:
        """The program's text in ``chunk`` (``b""``: the end, everything held back)."""
        self._pending += self._decoder.decode(chunk, final=not chunk)
        lines = self._pending.split("\n")
        self._pending = lines.pop()  # the line still being written
        tail = ""
        if not chunk or len(self._pending) > self.HOLD:  # the end, or a line too long to hold back
            tail, self._pending = self._pending, ""
        text = "".join(line + "\n" for line in lines if self._kept(line))
        if tail and self._kept(tail):
            text += tail
        return text

    def _kept(self, line: str) -> bool:
        dropped = INSPECTOR_LINES.match(line) is not None or (self._dropped and line.rstrip() == _WARNING_HINT)
        self._dropped = dropped
        return not dropped


async def read_stderr(reader: asyncio.StreamReader, proc: procs.DebuggerProcess,
                      emit: Callable[[str], None]) -> None:
    """Pass the program's stderr to ``emit`` (``StderrFilter``), its tail kept for error messages."""
    program = StderrFilter()
    while True:
        chunk = await reader.read(65536)
        if text := program.feed(chunk):
            proc.remember(text[-600:])
            emit(text)
        if not chunk:
            return


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # no proxy, whatever the environment says


async def discover(host: str, port: int, timeout_s: float) -> str:
    """The ``ws://`` URL of the first target an inspector at host:port lists (``/json/list``), asked
    directly: never through an ``http_proxy`` set in polydbg's environment. An IPv6 address is taken
    with or without brackets (``::1``, ``[::1]``)."""
    where = f"[{host}]" if ":" in host and not host.startswith("[") else host
    try:
        targets = await fetch_json(f"http://{where}:{port}/json/list", timeout_s)
    except AdapterGoneError as exc:
        raise AdapterGoneError(f"no Node inspector answers at {where}:{port} ({exc.__cause__}); start the "
                               f"program with node --inspect={where}:{port} app.js, or attach by pid") from exc
    for target in targets if isinstance(targets, list) else []:
        ws = target.get("webSocketDebuggerUrl") if isinstance(target, dict) else None
        if isinstance(ws, str):
            return ws
    raise AdapterGoneError(f"the inspector at {where}:{port} lists no debuggable target")


async def fetch_json(url: str, timeout_s: float) -> Any:
    """The JSON an inspector serves at ``url`` (``/json/list``, ``/json/protocol``), asked directly: never
    through an ``http_proxy`` set in polydbg's environment. AdapterGoneError when nothing answers."""
    def fetch() -> Any:
        with _DIRECT.open(url, timeout=timeout_s) as response:
            return json.loads(response.read())

    try:
        return await asyncio.wait_for(asyncio.to_thread(fetch), timeout_s + 1)
    except (OSError, ValueError, asyncio.TimeoutError) as exc:
        raise AdapterGoneError(f"{url}: {exc}") from exc


def http_address(ws_url: str) -> str | None:
    """``host:port`` of an inspector's ``ws://host:port/id`` URL (where its ``/json/…`` pages are)."""
    match = re.match(r"wss?://([^/]+)/", ws_url)
    return match.group(1) if match else None


async def discover_after_signal(host: str, port: int, timeout_s: float) -> str:
    """``discover``, asked again until the inspector a SIGUSR1 opens answers (5 s at most)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + min(timeout_s, 5.0)
    while True:
        try:
            return await discover(host, port, 1.0)
        except AdapterGoneError:
            if loop.time() >= deadline:
                raise
        await asyncio.sleep(0.05)


def _url(path: str) -> str:
    return Path(path).as_uri()
