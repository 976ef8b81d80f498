"""Which ``debug`` gem (and so which rdbg) runs a Ruby program: the project's, through Bundler, when its
Gemfile.lock names ``debug``; else the newest one installed (Debian's ``ruby`` ships debug 1.4.0 under
/usr/lib/ruby/gems, not on PATH). Cheap lookups on the file system: ``doctor`` and the registry call them
without starting Ruby.
"""

from __future__ import annotations

import glob
import os
import re
import shutil
from typing import NamedTuple

_GEM_ROOTS = ("/usr/lib/ruby/gems/*/gems", "/usr/share/rubygems-integration/all/gems", "/var/lib/gems/*/gems",
              "/usr/local/lib/ruby/gems/*/gems")
_DEBUG_DIR = re.compile(r"^debug-(\d+(?:\.\d+)*)$")
_LOCKED = re.compile(r"^ {4}debug \(([\d.]+)\)$", re.MULTILINE)


class Gem(NamedTuple):
    """The debug gem a program runs with: where it is (None: Bundler finds it), its version, and who chose it."""

    path: str | None  # the gem's directory (lib/debug/open.rb, exe/rdbg), or None under Bundler
    version: str
    bundler: str | None = None  # the Gemfile.lock that names it, when the project's Bundler picks it

    def describe(self) -> str:
        if self.bundler is not None:
            return f"the project's debug gem {self.version} (Bundler, {self.bundler})"
        return f"debug gem {self.version} ({self.path})"


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


def installed() -> Gem | None:
    """The newest debug gem installed for the system's Ruby (GEM_HOME/GEM_PATH first), or None."""
    roots = [os.path.join(p, "gems") for p in
             (os.environ.get("GEM_HOME", ""), *os.environ.get("GEM_PATH", "").split(os.pathsep)) if p]
    best: Gem | None = None
    for root in [*roots, *_GEM_ROOTS]:
        for directory in glob.glob(os.path.join(root, "debug-*")):
            match = _DEBUG_DIR.match(os.path.basename(directory))
            if match and os.path.exists(os.path.join(directory, "lib", "debug", "open.rb")) and (
                    best is None or _version_key(match[1]) > _version_key(best.version)):
                best = Gem(directory, match[1])
    return best


def find_rdbg() -> str | None:
    """rdbg of the newest installed debug gem (on PATH when a gem installed it there), for ``doctor``."""
    gem = installed()
    if gem is not None and gem.path is not None and os.path.exists(os.path.join(gem.path, "exe", "rdbg")):
        return os.path.join(gem.path, "exe", "rdbg")
    return shutil.which("rdbg")


def locked(start: str) -> Gem | None:
    """The debug gem the Gemfile.lock at or above ``start`` names, or None (no lock, or no debug in it)."""
    directory = os.path.abspath(start)
    while True:
        lock = os.path.join(directory, "Gemfile.lock")
        if os.path.isfile(lock):
            try:
                with open(lock, encoding="utf-8", errors="replace") as handle:
                    match = _LOCKED.search(handle.read())
            except OSError:
                return None
            return Gem(None, match[1], lock) if match else None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def chosen(cwd: str) -> Gem | None:
    """The gem a program in ``cwd`` runs with: the project's (Bundler) when its lock names debug, else the newest
    installed one."""
    return locked(cwd) or installed()
