"""Where each debugger is installed: cheap lookups on PATH, used by the registry and ``doctor``
without importing any backend module."""

from __future__ import annotations

import os
import re
import shutil
import sys

_VERSIONED = re.compile(r"^(lldb-dap|lldb-vscode)-(\d+)(?:\.\d+)*$")


def which(command: str) -> str | None:
    return shutil.which(command)


def python_itself() -> str:
    """debugpy is a dependency of polydbg: it runs in polydbg's own interpreter."""
    return sys.executable


def find_lldb_dap() -> str | None:
    """lldb-dap on PATH: ``lldb-dap``, else the highest ``lldb-dap-NN``, else ``lldb-vscode`` (-NN)."""
    plain = shutil.which("lldb-dap")
    if plain:
        return plain
    best: dict[str, tuple[int, str]] = {}
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        try:
            names = os.listdir(directory or ".")
        except OSError:
            continue
        for name in names:
            match = _VERSIONED.match(name)
            path = os.path.join(directory, name)
            if match and os.access(path, os.X_OK) and not os.path.isdir(path):
                version = int(match.group(2))
                if match.group(1) not in best or version > best[match.group(1)][0]:
                    best[match.group(1)] = (version, path)
    if "lldb-dap" in best:
        return best["lldb-dap"][1]
    return shutil.which("lldb-vscode") or (best["lldb-vscode"][1] if "lldb-vscode" in best else None)


def find_java() -> str | None:
    """``$JAVA_HOME/bin/java``, else ``java`` on PATH."""
    home = os.environ.get("JAVA_HOME")
    if home and shutil.which(os.path.join(home, "bin", "java")):
        return os.path.join(home, "bin", "java")
    return shutil.which("java")


def find_node() -> str | None:
    """``node`` on PATH (Debian's older packages call it ``nodejs``)."""
    return shutil.which("node") or shutil.which("nodejs")
