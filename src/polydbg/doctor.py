"""``polydbg doctor``: which debuggers are found, their versions, and the install line for the rest.

It asks each backend's ``BackendInfo.find`` (the same lookup a session uses), so what doctor
reports is what ``debug_launch`` will pick.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata

from polydbg.backends.gdb import rr
from polydbg.backends.java.kotlin import find_kotlinc
from polydbg.backends.node.launcher import find_package
from polydbg.backends.rdbg import gems
from polydbg.backends.registry import BACKENDS
from polydbg.testing import runners


@dataclass(frozen=True)
class Check:
    adapter: str
    languages: str
    path: str | None
    version: str
    install: str


def _version_of(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    lines = [line.strip() for line in (out.stdout or out.stderr).splitlines() if line.strip()]
    return next((line for line in lines if any(ch.isdigit() for ch in line)), lines[0] if lines else "?")


def checks() -> list[Check]:
    results = []
    for info in BACKENDS.values():
        path = info.find()
        if info.name == "debugpy":
            version = f"{metadata.version('debugpy')} (python {sys.version.split()[0]})"
        else:
            version = _version_of([path, *info.version_args]) if path else ""
        results.append(Check(info.name, ", ".join(info.languages), path, version, info.install))
    return results


def report() -> tuple[str, bool]:
    """The text of the report and whether every debugger was found."""
    lines = ["polydbg doctor: debuggers polydbg can drive", ""]
    missing = 0
    for check in checks():
        if check.path:
            lines.append(f"found    {check.adapter:<9} {check.languages:<16} {check.version}  ({check.path})")
        else:
            missing += 1
            lines.append(f"MISSING  {check.adapter:<9} {check.languages:<16} install: {check.install}")
        if check.adapter == "node" and check.path:
            lines.append(f"         TypeScript here: {typescript_runners(os.getcwd())}")
        if check.adapter == "gdb" and check.path:
            _, said = rr.status()
            lines.append(f"         runs backwards: record=true (gdb's record full); record=\"rr\": {said}")
        if check.adapter == "rdbg" and check.path:
            lines.append(f"         Ruby here: {ruby_gem(os.getcwd())}")
        if check.adapter == "java" and check.path:
            kotlinc = find_kotlinc()
            lines.append(f"         Kotlin: kotlinc ({kotlinc}) compiles .kt programs" if kotlinc else
                         "         Kotlin: no kotlinc for .kt programs (npm install kotlin-compiler ships it in "
                         "bin/; or KOTLIN_HOME); jars and classes run without it")
    lines.append("")
    lines.append(f"test runners for {os.getcwd()} (debug_launch(test=…, cwd=…)):")
    lines.extend(f"  {line}" for line in runners.found(os.getcwd()) or ["none: no pyproject.toml, go.mod, "
                 "Cargo.toml, package.json or Maven/Gradle build here or above"])
    lines.append("")
    lines.append("all debuggers found" if not missing else
                 f"{missing} missing: those languages will fail to launch until they are installed")
    return "\n".join(lines), missing == 0


def ruby_gem(start: str) -> str:
    """Which debug gem a Ruby program launched in ``start`` runs with (the project's through Bundler, or rdbg's)."""
    gem = gems.chosen(start)
    return f"launches use {gem.describe()}" if gem else "no debug gem: apt-get install ruby (or gem install debug)"


def typescript_runners(start: str) -> str:
    """What runs TypeScript in the project at ``start``: tsx, ts-node, typescript, with versions."""
    found = []
    for name in ("tsx", "ts-node", "typescript"):
        home = find_package(name, start)
        if home is not None:
            try:
                with open(os.path.join(home, "package.json"), encoding="utf-8") as handle:
                    version = str(json.load(handle).get("version", "?"))
            except (OSError, ValueError):
                version = "?"
            found.append(f"{name} {version}")
    return ", ".join(found) if found else "no tsx or ts-node (npm install --save-dev tsx runs .ts files)"
