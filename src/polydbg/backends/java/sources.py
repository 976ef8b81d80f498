"""Where a class's source file is on this machine, for frames, stops and the evaluator's imports.

The JVM knows a class's ``SourceFile`` attribute (``Foo.java``, no directory) and its package. A class
is looked for among the files with breakpoints first (same name, same ``package`` declaration), then
under each source root as ``root/<package path>/<SourceFile>`` and ``root/<SourceFile>``. The roots
are the program's directory, the working directory (and its ``src/{main,test}/{java,kotlin}``),
the class-path directories of ``runtime_args`` and the source trees beside them (``sources_near``), and
the root each breakpoint's file lies in (its directory less its package's), so a library's other files
are found too. A class found nowhere reads as ``<package path>/<SourceFile>``; a root added later makes
those misses be looked for again.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable

from polydbg.backends.base import LaunchSpec
from polydbg.backends.java import launcher
from polydbg.backends.java.classes import JavaClass, matches_file
from polydbg.backends.java.vm import Vm


class Sources:
    def __init__(self, vm: Vm, breakpoint_files: Callable[[], Iterable[str]]) -> None:
        self._vm = vm
        self._breakpoint_files = breakpoint_files
        self.roots: list[str] = []  # where source files are looked for
        self._found: dict[tuple[str, str], str | None] = {}  # (package path, SourceFile) → path
        self._packages: dict[str, str] = {}  # file → its package declaration

    def add_roots(self, roots: list[str]) -> None:
        """The program's roots, before those breakpoints' files added."""
        self.roots = list(dict.fromkeys(roots + self.roots))
        self._forget_misses()

    def _forget_misses(self) -> None:
        """Classes found nowhere may be found now (a root or a breakpoint's file was added)."""
        self._found = {key: found for key, found in self._found.items() if found is not None}

    def package_of(self, path: str) -> str:
        """The package a source file declares ("" for none, or a file that is not there)."""
        package = self._packages.get(path)
        if package is None:
            name = launcher.main_class_of(path) if os.path.isfile(path) else ""
            package = self._packages[path] = name.rpartition(".")[0]
        return package

    def add_file_root(self, path: str, package: str) -> None:
        """The source root a breakpoint's file lies in (its directory less the package's), so the
        library's other files are found for frames and stops (``src/main/java`` of a library)."""
        root = root_of(path, package)
        if root and root not in self.roots:
            self.roots.append(root)
        self._forget_misses()  # (the file itself may be the one a class was looked for)

    async def path(self, cls: JavaClass) -> str | None:
        """The source file of ``cls``: a path on this machine, else ``package/path/File.java``; None
        for a class without a ``SourceFile``."""
        source = await self._vm.classes.source(cls)
        if source is None:
            return None
        key = (cls.package_path, source)
        if key not in self._found:  # a miss is kept too (the JDK's classes): a frame costs no file lookups
            found = next((path for path in self._breakpoint_files()
                          if matches_file(cls, path, self.package_of(path))), None)
            self._found[key] = found or find_under(self.roots, cls.package_path, source)
        return self._found[key] or (f"{cls.package_path}/{source}" if cls.package_path else source)


def root_of(path: str, package: str) -> str | None:
    """The directory ``path`` lies in less its package's (``/p/src/demo/A.java`` of ``demo`` → ``/p/src``);
    None when the directory does not end in the package's."""
    directory = os.path.dirname(path)
    suffix = os.sep + package.replace(".", os.sep) if package else ""
    if suffix and not directory.endswith(suffix):
        return None
    return directory[:len(directory) - len(suffix)] if suffix else directory


def find_under(roots: Iterable[str], package_path: str, source: str) -> str | None:
    """The first ``root/<package path>/<source>`` or ``root/<source>`` that is a file."""
    for root in roots:
        for candidate in (os.path.join(root, package_path, source), os.path.join(root, source)):
            if os.path.isfile(candidate):
                return candidate
    return None


def launch_roots(spec: LaunchSpec) -> list[str]:
    """A launched program's source roots: its directory, the working directory with ``src/main/java``,
    ``src/test/java`` and their Kotlin twins, and the class-path directories of ``runtime_args`` with the
    sources beside them."""
    roots = [os.path.dirname(os.path.abspath(spec.program or "."))]
    if spec.cwd:
        roots += [spec.cwd, *(os.path.join(spec.cwd, "src", part, lang) for part in ("main", "test")
                              for lang in ("java", "kotlin"))]
    for flag, value in itertools.pairwise(spec.runtime_args):
        if flag in launcher.CLASSPATH_FLAGS:
            for entry in value.split(os.pathsep):
                if os.path.isdir(entry):
                    roots.append(entry)
                    roots.extend(sources_near(entry))
    return list(dict.fromkeys(roots))


def sources_near(classes: str) -> list[str]:
    """Source roots beside a class-path directory: ``out/``, ``bin/`` or ``classes/`` next to ``src/``
    or ``src/main/java``, Maven's ``target/classes``, Gradle's ``build/classes/java/main``."""
    found = []
    parent = os.path.abspath(classes)
    for depth in range(4):
        parent = os.path.dirname(parent)
        candidates = [os.path.join(parent, "src", "main", "java"), os.path.join(parent, "src", "main", "kotlin")]
        if depth == 0:
            candidates.append(os.path.join(parent, "src"))
        found += [candidate for candidate in candidates if os.path.isdir(candidate)]
        if found:
            break
    return found
