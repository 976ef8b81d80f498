"""Whether the JVM could load the program's main class, and if not, an error that says what to pass.

A JVM asked for a main class that is not on its classpath (a misspelling, a missing package, the wrong
``-cp``) prints ``Error: Could not find or load main class X`` and exits with status 1: as a program's
exit that reads like the program failing, and leaves an ended session behind. So the launch waits,
after the JVM is resumed, until the main class is prepared (a ``ClassPrepare`` request that suspends
nothing and fires once) or the JVM exits. An exit first is the launch's error, not the program's: it
names the class, the classpath the JVM searched, the classes found there with a name like it, and
what to pass instead. A class that loads costs nothing more than the wait for its loading, which the
first stop waits for anyway.

The classpath is the JVM's: ``-jar``'s jar, else ``-cp``/``-classpath``/``--class-path``, else the
``CLASSPATH`` variable, else the working directory; ``dir/*`` means the jars in ``dir``. It is searched
only when the class was not found, and only so far (``SCAN_LIMIT`` names).
"""

from __future__ import annotations

import asyncio
import difflib
import os
import zipfile
from collections.abc import Iterator, Mapping, Sequence

from polydbg.backends.java import launcher
from polydbg.backends.java.vm import Vm
from polydbg.errors import UsageError, echo
from polydbg.jdwp.codec import Event, EventKind, Modifier, Suspend

SCAN_LIMIT = 50_000  # class names read from the classpath when looking for ones like the missing class
WALK_LIMIT = 200_000  # files a classpath directory's walk looks at (a classpath of "/" ends there)
SUGGESTIONS = 5
_NOT_FOUND = "Could not find or load main class"
_MODULE_FLAGS = ("-m", "--module")


def main_class(program: str, runtime_args: Sequence[str], compiled: str | None) -> str | None:
    """The class the JVM will load first for ``program``; None when another flag decides it (a module's)."""
    if any(argument in _MODULE_FLAGS or argument.startswith("--module=") for argument in runtime_args):
        return None
    return launcher.entry_class(program, compiled)


def classpath(argv: Sequence[str], env: Mapping[str, str], cwd: str) -> list[str]:
    """The classpath entries the JVM of ``argv`` searches, as absolute paths."""
    entries: list[str] | None = None
    for at, argument in enumerate(argv[:-1]):
        if argument == "-jar":
            entries = [argv[at + 1]]
            break
        if argument in launcher.CLASSPATH_FLAGS:
            entries = argv[at + 1].split(os.pathsep)
    if entries is None:
        entries = env.get("CLASSPATH", ".").split(os.pathsep)
    return [os.path.normpath(os.path.join(cwd, entry or ".")) for entry in entries]


def _expanded(entries: list[str]) -> Iterator[str]:
    """The directories and jars of a classpath, ``dir/*`` as the jars in ``dir``."""
    for entry in entries:
        if os.path.basename(entry) == "*":
            folder = os.path.dirname(entry)
            try:
                names = sorted(os.listdir(folder))
            except OSError:
                continue
            yield from (os.path.join(folder, name) for name in names if name.lower().endswith(".jar"))
        else:
            yield entry


def class_files(entries: list[str], limit: int = SCAN_LIMIT) -> dict[str, str]:
    """The classes on a classpath by the name their place gives them (``demo.Basics$Point``), each
    with the file or jar it is in; up to ``limit`` of them."""
    found: dict[str, str] = {}
    walked = 0
    for entry in _expanded(entries):
        if os.path.isdir(entry):
            for folder, subfolders, files in os.walk(entry):
                walked += len(files) + len(subfolders)
                if walked > WALK_LIMIT:
                    return found
                subfolders.sort()
                relative = os.path.relpath(folder, entry)
                prefix = "" if relative == "." else relative.replace(os.sep, ".") + "."
                for name in sorted(files):
                    if name.endswith(".class"):
                        found.setdefault(prefix + name[:-6], os.path.join(folder, name))
                        if len(found) >= limit:
                            return found
        elif os.path.isfile(entry):
            try:
                with zipfile.ZipFile(entry) as archive:
                    listed = archive.namelist()
            except (OSError, zipfile.BadZipFile):
                continue
            for name in listed:
                if name.endswith(".class") and not name.startswith("META-INF/"):
                    found.setdefault(name[:-6].replace("/", "."), entry)
                    if len(found) >= limit:
                        return found
    return found


def similar(wanted: str, names: list[str]) -> list[str]:
    """The class names most like ``wanted``: the same simple name in another package first, then
    names close in spelling, whole or simple (module-info and package-info left out)."""
    by_simple: dict[str, list[str]] = {}
    for name in names:
        if not name.endswith(("module-info", "package-info")):
            by_simple.setdefault(name.rpartition(".")[2].lower(), []).append(name)
    simple = wanted.rpartition(".")[2].lower()
    everything = [name for group in by_simple.values() for name in group]
    close = difflib.get_close_matches(wanted, everything, n=SUGGESTIONS, cutoff=0.6)
    near = [name for found in difflib.get_close_matches(simple, list(by_simple), n=SUGGESTIONS, cutoff=0.7)
            for name in by_simple[found]]
    return list(dict.fromkeys(by_simple.get(simple, []) + close + near))[:SUGGESTIONS]


def suggestion(name: str, where: str) -> str:
    """How to run a class found at ``where``: its name and the classpath entry it needs (a class file
    whose package is not what its directories spell gets the directory its package starts in)."""
    if not where.endswith(".class"):
        return f"{name} (in {where})"
    real = launcher.class_name_in(where) or name
    root = launcher.class_root(where)[0] if real != name else where[:-len(name.replace(".", os.sep) + ".class") - 1]
    return f"{real} (-cp {root})"


def not_loaded(wanted: str | None, code: int, stderr: str, entries: list[str], source: str | None = None) -> UsageError:
    """The launch's error for a JVM that exited (status ``code``) before loading its main class;
    ``source``: the .java file polydbg compiled (its classes are in a private directory)."""
    said = stderr.strip()[-600:]
    if wanted is None or _NOT_FOUND not in stderr:
        return UsageError(f"the JVM exited with status {code} before it loaded the main class"
                          f"{f' {wanted}' if wanted else ''}; it said: {said or '(nothing)'}")
    files = class_files(entries)
    if source is not None:
        declared = ", ".join(sorted(name for name in files if "$" not in name)) or "none"
        return UsageError(f"{echo(source)} has no class {wanted}, which a .java program runs (the class named like "
                          f"its file; it declares: {declared}): name the class with main {wanted.rpartition('.')[2]} "
                          "(or the file after it), or compile it yourself (javac -g -d out FILE) and pass "
                          "program='the.Class' with runtime_args=['-cp', 'out']")
    like = [suggestion(name, files[name]) for name in similar(wanted, list(files))]
    if like:
        found = f"; classes there with a name like it: {', '.join(like)}"
    elif files:
        few = ", ".join(suggestion(name, where) for name, where in files.items()) if len(files) <= SUGGESTIONS else ""
        found = f"; it holds only {few}" if few else f"; it holds {len(files):,} classes, none named like it"
    else:
        found = "; it holds no classes"
    return UsageError(f"the JVM found no main class {wanted} on its classpath {echo(os.pathsep.join(entries))}{found} "
                      f"(the JVM said: {said}). Pass program= the class's full name with its package (demo.Main), and "
                      "runtime_args=['-cp', 'dir-or-jar'] with the directory its package starts in or the jar that "
                      "holds it")


class MainClassWatch:
    """A ``ClassPrepare`` request for the main class that suspends nothing and fires once, and whether
    it fired."""

    def __init__(self, vm: Vm) -> None:
        self._vm = vm
        self._request: int | None = None
        self._loaded = asyncio.Event()
        self._exited = asyncio.Event()
        self._code = 0
        self._waiting = False

    async def request(self, main: str) -> None:
        # modifiers filter in order: the count after the match, or it counts every class prepared
        modifiers = self._vm.client.writer().u1(Modifier.CLASS_MATCH).string(main).u1(Modifier.COUNT).i4(1).bytes()
        self._request = await self._vm.event_request(EventKind.CLASS_PREPARE, Suspend.NONE, modifiers, 2)

    def seen(self, events: list[Event]) -> None:
        if any(event.kind == EventKind.CLASS_PREPARE and event.request_id == self._request for event in events):
            self._loaded.set()

    def exited(self, code: int) -> bool:
        """The JVM exited with ``code``: whether the launch, still waiting for the main class, reports it."""
        if not self._exited.is_set():
            self._code = code
            self._exited.set()
        return self._waiting and not self._loaded.is_set()

    async def wait(self, timeout_s: float) -> int | None:
        """The JVM's exit status when it exited before loading the main class; None once the class
        loaded (or ``timeout_s`` passed: a slow start is left to run)."""
        self._waiting = True
        waits = {asyncio.ensure_future(self._loaded.wait()), asyncio.ensure_future(self._exited.wait())}
        try:
            await asyncio.wait(waits, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in waits:
                waiting.cancel()
            self._waiting = False
        return self._code if self._exited.is_set() and not self._loaded.is_set() else None
