"""Where a Node call trace looks for the program's functions not loaded yet: the program's folder (or the
project's, for a runner's entry in node_modules), then the folders above it that are still the project's."""

from __future__ import annotations

import os
from pathlib import Path

ROOTS_UP = 2  # a project's script files read at most to find a function not loaded yet


def search_home(program: str | None, cwd: str) -> str:
    """Where a trace's functions not loaded yet are looked for first: the program's folder, unless the program is
    a package's in node_modules (a test runner's entry: vitest.mjs, jest.js): then the session's directory, the
    project's. From the runner's folder the look read the runner's own files and, a folder up, every package's:
    vitest's bundled acorn has two ``parse`` at one place, and the launch failed on V8's "Breakpoint at specified
    location already exists"."""
    if program and "node_modules" not in os.path.abspath(program).split(os.sep):
        return os.path.dirname(os.path.abspath(program))
    return cwd


def roots(cwd: str) -> list[tuple[str, str | None]]:
    """Where a function not loaded yet is looked for: the session's directory, then each folder above it (a
    test project's code is often beside it: ``../cart.js``) up to the repository's root, at most
    ``ROOTS_UP`` levels, and only while that folder is a project's (a package.json, or inside a git repository);
    each with the folder below it, read already. A project outside any repository (an unpacked tarball in /tmp)
    is read alone: its parents' other projects' files had ``parse`` traced in a file of theirs that never ran
    ("never loaded: parse") and, with a depth, 2,000 files more read at every trace (4 s)."""
    found: list[tuple[str, str | None]] = [(cwd, None)]
    here = cwd
    for _ in range(ROOTS_UP):
        if os.path.isdir(os.path.join(here, ".git")):
            break
        parent = os.path.dirname(here)
        if parent == here or not in_project(parent):
            break
        found.append((parent, here))
        here = parent
    return found


def in_project(folder: str) -> bool:
    """Whether a folder is a project's: it has a package.json, or it or a folder above it a .git."""
    here = Path(folder)
    return (here / "package.json").is_file() or any((above / ".git").exists() for above in (here, *here.parents))
