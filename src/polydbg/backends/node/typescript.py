"""An edited TypeScript file that tsx runs: the JavaScript tsx would make of it now, for ``reload``.

tsx compiles each .ts file as it loads it (esbuild: whitespace minified, names kept; a CommonJS module inside a
wrapper of tsx's own, ``__filename="…";(()=>{`` … ``})()``) and appends an inline source map whose
``sourcesContent`` holds the .ts text as it was loaded (tsx includes it when Node runs with ``--inspect``). An
edited file is compiled again by the project's own tsx (``shims/tsx_transform.cjs``: tsx's transform with the
tsconfig tsx finds), and so is the text that was loaded: that output must be found, as it is, in the source V8
runs. That says where tsx's wrapper ends, and that the compile here is tsx's (another tsx or tsconfig would give
other code): otherwise the reload is refused, not guessed. V8 gets the wrapper around the new code; the new map,
shifted past the wrapper's lines and holding the new text, is the script's from then on (a later reload reads it).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import re
from typing import Any, NamedTuple

from polydbg.backends.kit import shims, timeouts
from polydbg.backends.node import launcher, sourcemap
from polydbg.backends.node.sourcemap import SourceMap
from polydbg.backends.timecontrol import ReloadRefused

TRANSFORM = shims.path(__file__, "tsx_transform.cjs")
_INLINE_MAP = re.compile(r"(//[#@] sourceMappingURL=data:application/json[^,]*;base64,)([A-Za-z0-9+/=]+)")


class Compiled(NamedTuple):
    source: str  # what V8 is to run
    map: SourceMap


def loaded_text(running: str, path: str) -> str | None:
    """The text of ``path`` as tsx loaded it: its inline map's ``sourcesContent`` (None: not kept)."""
    found = _INLINE_MAP.search(running)
    if found is None:
        return None
    try:
        data = json.loads(base64.b64decode(found.group(2)))
    except ValueError:
        return None
    sources = [os.path.normpath(str(s)) for s in data.get("sources") or []]
    contents = data.get("sourcesContent") or []
    wanted = os.path.normpath(path)
    for index, source in enumerate(sources):
        if (source == wanted or source.endswith(wanted)) and index < len(contents) and isinstance(contents[index], str):
            return str(contents[index])
    return None


async def compile_edited(path: str, loaded: str, edited: str, running: str, cwd: str | None) -> Compiled:
    """The source V8 is to run for the edited ``path`` (``running`` is what it runs, compiled from ``loaded``)."""
    name = os.path.basename(path)
    tsx = launcher.find_package("tsx", os.path.dirname(path))
    if tsx is None:
        raise ReloadRefused(f"{name} was edited, but no tsx is installed where it is, to compile it as the program's "
                            "loader did: debug_restart runs the edited file")
    old, new = await _transform(tsx, launcher.is_esm(path), [(path, loaded), (path, edited)], cwd or os.getcwd())
    if "error" in new:
        raise ReloadRefused(f"{new['error'].strip()}\nnothing was reloaded; fix {name} and reload again")
    at = running.find(str(old.get("code") or "\0"))
    prefix = running[:at]
    if "error" in old or at < 0 or not (prefix == "" or prefix.endswith("\n")):
        raise ReloadRefused(f"{name} was edited, but compiling it with the project's tsx does not give the code the "
                            "program runs (another tsx, tsconfig or loader ran it), so nothing was reloaded: "
                            "debug_restart runs the edited file")
    suffix = running[at + len(str(old["code"])):]
    data = dict(new.get("map") or {})
    data["mappings"] = ";" * prefix.count("\n") + str(data.get("mappings") or "")
    data["sources"], data["sourcesContent"] = [path], [edited]
    text = json.dumps(data)
    suffix = _INLINE_MAP.sub(lambda m: m.group(1) + base64.b64encode(text.encode()).decode(), suffix, count=1)
    try:
        return Compiled(prefix + str(new["code"]) + suffix, SourceMap.parse(text, os.path.dirname(path)))
    except sourcemap.SourceMapError as exc:
        raise ReloadRefused(f"{name}: tsx's source map of the edited file cannot be read ({exc}): debug_restart runs "
                            "the edited file") from exc


async def _transform(tsx: str, esm: bool, files: list[tuple[str, str]], cwd: str) -> list[dict[str, Any]]:
    """tsx's output for each (path, code), through ``shims/tsx_transform.cjs``."""
    request = json.dumps({"tsx": tsx, "esm": esm, "files": [{"path": p, "code": c} for p, c in files]}).encode()
    process = await asyncio.create_subprocess_exec(
        launcher.find_node(), str(TRANSFORM), cwd=cwd, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        out, err = await asyncio.wait_for(process.communicate(request), timeouts.COMPILE_S)
    except asyncio.TimeoutError:
        process.kill()
        await process.wait()
        raise ReloadRefused(f"tsx did not compile the edited files within {timeouts.COMPILE_S:g} s: nothing was "
                            "reloaded") from None
    try:
        found = json.loads(out)
    except ValueError:
        found = None
    if process.returncode != 0 or not isinstance(found, list) or len(found) != len(files):
        raise ReloadRefused(f"tsx could not compile the edited files ({err.decode(errors='replace').strip()[-500:]}): "
                            "nothing was reloaded; debug_restart runs them")
    return [item if isinstance(item, dict) else {"error": "no output"} for item in found]
