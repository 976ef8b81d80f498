"""How to debug a C, C++ or Rust source file given as the program: the launch that builds it and runs what it
builds, spelt for that file, so the agent can copy it.

A C or C++ file is compiled alone (``gcc``/``g++ -g -O0``, the executable next to it). A Rust file belongs to a
cargo package when a ``Cargo.toml`` is found above it: ``cargo build`` in the package, and the executable is the
binary that file is the root of (``src/main.rs``: the package's name; ``src/bin/NAME.rs``: NAME; a ``[[bin]]``
whose path is the file: its name) under the target directory (``CARGO_TARGET_DIR``, else the workspace's or the
package's ``target``), in ``debug``. Without a package, ``rustc -g``.
"""

from __future__ import annotations

import os
import re
import shlex

HEADERS = frozenset({".h", ".hh", ".hpp", ".hxx"})
CARGO_LEVELS = 8  # directories above a Rust file looked through for its Cargo.toml

_SECTION = re.compile(r"^\s*\[\[?([\w.-]+)\]\]?\s*$")
_KEY = re.compile(r'^\s*(name|path)\s*=\s*"([^"]*)"')


def refusal(source: str, language: str, name: str) -> str:
    """Why ``source`` (an absolute path, of ``language``, called ``name`` in words) is not a program to debug, and
    the launch that builds it and debugs what it builds; a header has no build of its own."""
    head = f"{source!r} is {name} source: debug the executable built from it with debug info"
    if os.path.splitext(source)[1].lower() in HEADERS:
        return f"{head} (from the sources that include this header, with -g -O0) as program"
    return f"{head}; debug_launch with {launch_hint(source, language)} builds it first and debugs it"


def launch_hint(source: str, language: str) -> str:
    """The ``debug_launch`` arguments that build ``source`` (an absolute path) and debug what it builds."""
    directory, name = os.path.split(source)
    stem = os.path.splitext(name)[0]
    if language == "rust":
        package = _cargo_package(directory)
        if package is not None:
            return _cargo_hint(source, package)
        build = f"rustc -g -o {shlex.quote(stem)} {shlex.quote(name)}"
    else:
        compiler = "g++" if language == "cpp" else "gcc"
        build = f"{compiler} -g -O0 -o {shlex.quote(stem)} {shlex.quote(name)}"
    return f"program={os.path.join(directory, stem)!r}, build={build!r}, cwd={directory!r}"


def _cargo_package(directory: str) -> str | None:
    """The directory of the Cargo.toml with a [package] nearest above ``directory``."""
    for _ in range(CARGO_LEVELS):
        manifest = os.path.join(directory, "Cargo.toml")
        if os.path.isfile(manifest) and "package" in _sections(manifest):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return None


def _sections(manifest: str) -> dict[str, list[dict[str, str]]]:
    """The manifest's sections with their ``name``/``path`` keys (enough of TOML for this)."""
    found: dict[str, list[dict[str, str]]] = {}
    current: dict[str, str] | None = None
    try:
        with open(manifest, encoding="utf-8", errors="replace") as handle:
            for line in handle:
                section = _SECTION.match(line)
                if section is not None:
                    current = {}
                    found.setdefault(section.group(1), []).append(current)
                    continue
                key = _KEY.match(line)
                if key is not None and current is not None:
                    current.setdefault(key.group(1), key.group(2))
    except OSError:
        return {}
    return found


def _cargo_hint(source: str, package: str) -> str:
    sections = _sections(os.path.join(package, "Cargo.toml"))
    name = sections["package"][0].get("name") or os.path.basename(package)
    relative = os.path.relpath(source, package)
    binary = name
    for target in sections.get("bin", []):
        if target.get("path") == relative or (target.get("name") and relative == f"src/bin/{target['name']}.rs"):
            binary = target.get("name") or binary
            break
    else:
        parts = relative.split(os.sep)
        if parts[:2] == ["src", "bin"] and len(parts) >= 3:
            binary = os.path.splitext(parts[2])[0]  # src/bin/NAME.rs or src/bin/NAME/main.rs
    executable = os.path.join(_target_directory(package), "debug", binary)
    return f"program={executable!r}, build='cargo build', cwd={package!r}"


def _target_directory(package: str) -> str:
    """Where cargo puts what it builds: CARGO_TARGET_DIR, else the enclosing workspace's, else the package's."""
    configured = os.environ.get("CARGO_TARGET_DIR")
    if configured:
        return os.path.abspath(os.path.join(package, configured))
    directory = os.path.dirname(package)
    for _ in range(CARGO_LEVELS):
        manifest = os.path.join(directory, "Cargo.toml")
        if os.path.isfile(manifest) and "workspace" in _sections(manifest):
            return os.path.join(directory, "target")
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    return os.path.join(package, "target")
