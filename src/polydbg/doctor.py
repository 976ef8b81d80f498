"""``polydbg doctor``: which debuggers are found, their versions, and the install line for the rest."""

from __future__ import annotations

import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata


@dataclass(frozen=True)
class Check:
    language: str
    adapter: str
    found: bool
    version: str
    install: str
    supported: bool = True


def _version_of(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.TimeoutExpired):
        return "?"
    text = (out.stdout or out.stderr).strip().splitlines()
    return text[0] if text else "?"


def _first_on_path(names: list[str]) -> str | None:
    return next((path for name in names if (path := shutil.which(name))), None)


def checks() -> list[Check]:
    results = []
    try:
        debugpy_version = metadata.version("debugpy")
        results.append(Check("python", "debugpy", True, f"{debugpy_version} (python {sys.version.split()[0]})",
                             "pip install debugpy"))
    except metadata.PackageNotFoundError:
        results.append(Check("python", "debugpy", False, "", f"{sys.executable} -m pip install debugpy"))
    lldb = _first_on_path(["lldb-dap", *[f"lldb-dap-{n}" for n in range(30, 13, -1)], "lldb-vscode"])
    gdb = shutil.which("gdb")
    dlv = shutil.which("dlv")
    node = shutil.which("node")
    results += [
        Check("c/c++/rust", "lldb-dap", lldb is not None, _version_of([lldb, "--version"]) if lldb else "",
              "apt-get install lldb-22", supported=False),
        Check("c/c++/rust", "gdb", gdb is not None, _version_of([gdb, "--version"]) if gdb else "",
              "apt-get install gdb", supported=False),
        Check("go", "delve", dlv is not None, _version_of([dlv, "version"]) if dlv else "",
              "apt-get install delve golang-go", supported=False),
        Check("node", "node", node is not None, _version_of([node, "--version"]) if node else "",
              "apt-get install nodejs", supported=False),
    ]
    return results


def report() -> tuple[str, bool]:
    lines = ["polydbg doctor", ""]
    ok = True
    for check in checks():
        state = "found  " if check.found else "MISSING"
        line = f"{state} {check.language:<11} {check.adapter:<9} {check.version}"
        if not check.found:
            line += f"   install: {check.install}"
            ok = ok and not check.supported
        if not check.supported:
            line += "   (backend not in this release)"
        lines.append(line.rstrip())
    return "\n".join(lines), ok
