"""The class files in the directories of the JVM's class path, for a reload: which class each holds, the source
file it was compiled from and when. A source file newer than its class file was edited after the build.

Two cases need it, both met trying the reload on a Maven layout (``target/classes``, launched by class name):

- after ``debug_restart`` the new JVM loads the class files of the last build again: a file edited (and reloaded)
  before the restart is older than the new session, yet newer than its class file — the program runs the old code,
  and a reload must put the edit in again;
- a class the program has not loaded yet: the JVM cannot name its source, its class file does (``SourceFile`` and
  the package), so an edit of it is compiled with the others (a compile error refuses the reload) and the answer
  says that the JVM will load the old class file.

Directories only: the classes of a jar are a library's, or a build's the JVM names when it loads them. A class file
is read again only when it changed (a later reload stats it).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from polydbg.testing import classfiles


class Built(NamedTuple):
    name: str  # binary name: com.acme.util.Stats$Cache
    source: str  # its SourceFile attribute: Stats.java
    compiled_ns: int  # the class file's mtime

    @property
    def package_path(self) -> str:
        return self.name.rpartition(".")[0].replace(".", "/")


class ClassFiles:
    def __init__(self) -> None:
        self._read: dict[str, tuple[int, Built | None]] = {}  # class file → (its mtime, what it holds)

    def under(self, directories: list[str]) -> dict[str, Built]:
        """The classes compiled into ``directories`` (the first of a name on the class path wins), by binary name."""
        found: dict[str, Built] = {}
        for file in classfiles.class_files([d for d in dict.fromkeys(directories) if os.path.isdir(d)]):
            built = self._class_file(file)
            if built is not None:
                found.setdefault(built.name, built)
        return found

    def _class_file(self, file: str) -> Built | None:
        try:
            mtime = os.stat(file).st_mtime_ns
        except OSError:
            return None
        known = self._read.get(file)
        if known is None or known[0] != mtime:
            parsed = classfiles.read(file)
            built = Built(parsed.name, parsed.source, mtime) if parsed is not None and parsed.source else None
            known = self._read[file] = (mtime, built)
        return known[1]
