"""Where a program's project starts: the nearest directory at or above a path that holds the project's marker file
(``go.mod`` for a Go module, ``Cargo.toml`` for a Cargo package), which is where its toolchain must run."""

from __future__ import annotations

import os
from collections.abc import Callable


def nearest_with(start: str, marker: str) -> str | None:
    """The nearest directory at or above the directory ``start`` that holds a file named ``marker``."""
    return nearest(start, lambda directory: os.path.isfile(os.path.join(directory, marker)))


def nearest(start: str, holds: Callable[[str], bool]) -> str | None:
    """The nearest directory at or above the directory ``start`` that ``holds``."""
    directory = os.path.abspath(start)
    while True:
        if holds(directory):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
