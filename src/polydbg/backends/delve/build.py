"""What ``dlv dap`` is launched with: where it builds a Go program, where the binary goes, the launch and
attach arguments, and a build failure told as the compiler told it.

delve's mode "debug" runs ``go build`` in dlv's working directory and resolves ``program`` against
it, so dlv is started in the module directory (the nearest go.mod above the program, else the
program's directory). delve already adds ``-gcflags='all=-N -l'`` in debug mode (and splits
``buildFlags`` on spaces, so passing that flag again breaks the build). The binary goes to
``output`` in a private temporary directory, never ``__debug_bin`` in the user's tree (the backend
removes that directory at the end). A ``.go`` file is built alone, like ``go run file.go``; a
directory is built as a package (for a test, as its test binary, like ``go test -c``: mode "test");
anything else is a built executable (mode "exec"), or a core file's program (mode "core").
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.kit.projects import nearest_with
from polydbg.errors import EnvironmentProblem, UsageError


@dataclass
class Launch:
    """A launch's arguments and where dlv runs for it."""

    arguments: dict[str, Any]
    workdir: str  # dlv's working directory (where it builds)
    env: dict[str, str]
    build_dir: str | None = None  # our temporary directory for delve's output binary


def module_dir(program: str) -> str:
    """Where ``go build`` must run for ``program`` (a package dir or .go file): its module root, else its dir."""
    start = program if os.path.isdir(program) else os.path.dirname(program)
    return nearest_with(start, "go.mod") or os.path.abspath(start)


def module_path(directory: str | None) -> str | None:
    """The module path a ``go.mod`` in ``directory`` declares (``module example/shop``), or None."""
    try:
        text = Path(directory, "go.mod").read_text(errors="replace") if directory else ""
    except OSError:
        return None
    declared = re.search(r"^module\s+\"?([^\s\"]+)", text, re.M)
    return declared[1] if declared else None


def is_source(program: str) -> bool:
    return os.path.isdir(program) or program.endswith(".go")


def go_env() -> dict[str, str]:
    """This environment, plus a build cache when Go could not place one (no HOME, e.g. under some MCP hosts)."""
    env = dict(os.environ)
    if not env.get("GOCACHE") and not env.get("XDG_CACHE_HOME") and not env.get("HOME"):
        env["GOCACHE"] = os.path.join(tempfile.gettempdir(), "polydbg-gocache")
    return env


def launch(spec: LaunchSpec) -> Launch:
    """The launch of ``spec``; for a program to build, its temporary output directory is made here."""
    if spec.stdin is not None:
        raise UsageError("stdin is not supported with delve: dlv dap cannot redirect a program's input; "
                         "have the program read a file instead (or pass the input as args)")
    if not spec.program:
        raise UsageError("pass program: a Go package directory, a .go file, or a built Go executable")
    program = os.path.abspath(spec.program)
    args: dict[str, Any] = {"request": "launch", "program": program, "args": list(spec.args),
                            "stopOnEntry": spec.stop_on_entry, "hideSystemGoroutines": True}
    build_dir = None
    if spec.core:
        args.update(mode="core", coreFilePath=os.path.abspath(spec.core))
        workdir = os.path.dirname(program)
    elif is_source(program):
        if shutil.which("go") is None:
            raise EnvironmentProblem("the go command is not on PATH, and delve needs it to build "
                                     f"{program}; install Go, or pass a binary built with "
                                     "go build -gcflags='all=-N -l'")
        workdir = module_dir(program)
        build_dir = tempfile.mkdtemp(prefix="polydbg-go-")
        args.update(mode="test" if spec.test else "debug", output=os.path.join(build_dir, "__debug_bin"))
    elif spec.test:
        raise UsageError(f"{program} is not a Go package directory; a test runs from its package's sources")
    else:
        args["mode"] = "exec"
        workdir = os.path.dirname(program)
    cwd = spec.cwd or (program if os.path.isdir(program) else os.path.dirname(program))
    args["cwd"] = os.path.abspath(cwd)
    env = go_env()
    env.update(dict(spec.env))
    return Launch(arguments=args, workdir=workdir, env=env, build_dir=build_dir)


def attach_arguments(spec: AttachSpec) -> dict[str, Any]:
    """A pid → mode "local"; a port → mode "remote" (a ``dlv --headless`` server's session)."""
    args: dict[str, Any] = {"request": "attach", "hideSystemGoroutines": True, "stopOnEntry": False}
    if spec.pid is not None:
        args.update(mode="local", processId=spec.pid)
    else:
        args["mode"] = "remote"
    if spec.path_mappings:
        args["substitutePath"] = [{"from": local, "to": remote} for local, remote in spec.path_mappings]
    return args


def build_failure(build_error: str | None, message: str, program: str | None) -> str:
    """A launch's error message: the compiler's messages when the build failed (delve's "Build Error:"
    output), else delve's own ``message``."""
    if build_error is None:
        return message
    lines = build_error.strip().splitlines()
    body = "\n".join(lines[1:]) if len(lines) > 1 else build_error.strip()
    body = re.sub(r"\s*\(exit status \d+\)\s*$", "", body)
    text = f"go build failed:\n{body}"
    if program and program.endswith(".go") and "undefined:" in body:
        text += ("\n(a .go file is built alone, like go run file.go; pass its directory to build the "
                 "whole package)")
    return text
