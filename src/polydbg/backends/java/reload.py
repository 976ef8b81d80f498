"""``debug_continue(reload=true)`` on the JVM: the edited source files recompiled and their classes redefined in the
running program, then the stopped method re-entered so its new code runs now.

- Which files: the source files of the loaded program classes (found as frames find them: sources.py), and those of
  the classes not loaded yet whose class files are in a directory of the class path (builds.py). One is edited when
  its text differs from the one the last reload put in, or — before any — when it was written after the session
  began or after its class file was compiled (a restarted program loads the class files of the last build again).
- Compiling: ``javac -g`` (``kotlinc`` for ``.kt``) with the JVM's own class path (``VirtualMachine.ClassPaths``)
  into a temporary directory; ``-implicit:none`` keeps other sources javac reads from being compiled too. A
  compile error refuses the reload with javac's first errors: nothing changed.
- Redefining: every class compiled from the edited files (nested and anonymous ones too) that the JVM has loaded,
  in one ``RedefineClasses`` (redefine.py: all or none, a refused change named). A class not loaded yet is copied
  into the private directory of a program polydbg compiled (the JVM loads it from there); elsewhere the JVM would
  load the old class file from its class path, which a note says.
- Breakpoints: the JVM's agent drops the breakpoints of a redefined class with its old code; they are set again
  in the new code at the same lines (breakpoints.py, methods.py), and the cached line tables dropped (classes.py).
- Re-entering (reentry.py): when the stopped thread's top frame runs a method the redefinition made obsolete, it
  is popped and called again; the frames that keep their old code are named in the notes.

Measured on OpenJDK 17 (two busy cores, load ~1.2): ``debug_continue(reload=true)`` for a one-method change,
stopped inside it, answers in 605 ms (median of 10 through the MCP client; the continue alone: 4 ms), most of it
javac's own JVM starting (a plain ``javac`` of the file: 0.6-0.8 s).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable

from polydbg.backends.java import compiler, kotlin, launcher, redefine
from polydbg.backends.java import vm as jvm
from polydbg.backends.java.breakpoints import LineBreakpoints
from polydbg.backends.java.builds import ClassFiles
from polydbg.backends.java.classes import JavaClass, short_name
from polydbg.backends.java.methods import MethodBreakpoints
from polydbg.backends.java.reentry import Frame, Reentry, Unreentered
from polydbg.backends.java.sources import Sources, find_under
from polydbg.backends.java.threads import Threads
from polydbg.backends.kit import timeouts
from polydbg.backends.timecontrol import Reloaded, ReloadRefused
from polydbg.errors import EnvironmentProblem, echo
from polydbg.jdwp.codec import CommandSet
from polydbg.testing import classfiles

SOURCE_SUFFIXES = (".java", ".kt")
# a few files: the compiler's JVM with C1 alone (javac: a reload 805 → 605 ms; kotlinc: 10.6 → 6.0 s)
QUICK_JVM = ("-J-XX:TieredStopAtLevel=1", "-J-XX:+UseSerialGC")
ERROR_LINES = 12  # of the compiler's output, in a refusal


class Reloader:
    def __init__(self, vm: jvm.Vm, threads: Threads, sources: Sources, lines: LineBreakpoints,
                 methods: MethodBreakpoints, reentry: Reentry, compiled: Callable[[], str | None],
                 java: Callable[[], str | None]) -> None:
        self._vm = vm
        self._threads = threads
        self._sources = sources
        self._lines = lines
        self._methods = methods
        self._reentry = reentry
        self._compiled = compiled  # the private directory of a program polydbg compiled (None: the user's classes)
        self._java = java  # the java the program runs on (None: attached; the one on PATH)
        self._since_ns = time.time_ns()
        self._put_in: dict[str, str] = {}  # source file → the digest of the text the last reload put in
        self._class_files = ClassFiles()

    def began(self) -> None:
        """The session begins (before a launch compiles): files written later are edits."""
        self._since_ns = time.time_ns()

    async def reload(self, thread: int | None, stopped: bool) -> Reloaded:
        edited = await self._edited()
        if not edited:
            return Reloaded()
        out = tempfile.mkdtemp(prefix="polydbg-reload-")
        try:
            await self._compile(sorted(edited), out)
            built = _built(out)
            definitions, unloaded = await self._definitions(built, edited)
            before = await self._reentry.frames_in({d.cls.id for d in definitions}) if stopped else {}
            if definitions:
                await redefine.redefine(self._vm, definitions)
            notes = self._copy_unloaded(out, unloaded)
            # a file none of whose classes went in (the JVM will load its old class file) is compiled again next time
            self._put_in.update({path: _digest(path) for path, classes in edited.items() if classes or not notes})
            for cls in {d.cls.id: d.cls for d in definitions}.values():
                self._vm.classes.redefined(cls)
                await self._lines.redefined(cls)
                await self._methods.redefined(cls)
        finally:
            shutil.rmtree(out, ignore_errors=True)
        reentered, more = await self._reenter(thread, before) if stopped else (None, _running(definitions))
        return Reloaded(_replaced(edited, definitions), reentered, tuple(more + notes))

    # -- which files -----------------------------------------------------------------------------------

    async def _edited(self) -> dict[str, list[JavaClass]]:
        """The edited source files, each with its loaded classes (none: its classes are not loaded yet)."""
        private = self._compiled()
        built = self._class_files.under([*([private] if private else []), *await self._classpath()])
        found: dict[str, list[JavaClass]] = {}
        loaded = set()
        for cls in await jvm.program_classes(self._vm):
            loaded.add(cls.name)
            path = await self._sources.path(cls)
            compiled = built.get(cls.name)
            if path is not None and self._is_edited(path, compiled.compiled_ns if compiled else None):
                found.setdefault(path, []).append(cls)
        for compiled in built.values():
            if compiled.name not in loaded:
                path = find_under(self._sources.roots, compiled.package_path, compiled.source)
                if path is not None and self._is_edited(path, compiled.compiled_ns):
                    found.setdefault(path, [])
        return found

    def _is_edited(self, path: str, compiled_ns: int | None) -> bool:
        """Written since the last reload put it in; before any, since the session began or its class file was
        compiled (a restarted program loads the class files of the last build: what was reloaded before is not)."""
        if not (os.path.isabs(path) and path.endswith(SOURCE_SUFFIXES)):
            return False
        try:
            if path not in self._put_in:
                written = os.stat(path).st_mtime_ns
                return written > self._since_ns or (compiled_ns is not None and written > compiled_ns)
            return _digest(path) != self._put_in[path]
        except OSError:  # deleted since: nothing to put in
            return False

    # -- compiling -------------------------------------------------------------------------------------

    async def _classpath(self) -> list[str]:
        """The JVM's class path, absolute (``VirtualMachine.ClassPaths``)."""
        reply = await self._vm.request(CommandSet.VM, 13, b"", "VirtualMachine.ClassPaths")
        base = reply.string()
        return [os.path.join(base, entry) for entry in (reply.string() for _ in range(reply.i4()))]

    async def _compile(self, files: list[str], out: str) -> None:
        classpath = [*await self._classpath()]
        kotlin_files = [f for f in files if f.endswith(".kt")]
        java_files = [f for f in files if f.endswith(".java")]
        if kotlin_files:
            kotlinc = kotlin.find_kotlinc()
            if kotlinc is None:
                raise ReloadRefused(f"{_names(kotlin_files)} is Kotlin and kotlinc is not on PATH (nor KOTLIN_HOME "
                                    "set): nothing was changed; put kotlinc on PATH, or debug_restart")
            await self._run("kotlinc", [kotlinc, *QUICK_JVM, "-cp", os.pathsep.join(classpath), "-d", out,
                                        *kotlin_files], kotlin_files)
            classpath.insert(0, out)
        if java_files:
            try:
                javac = launcher.find_javac(self._java() or launcher.find_java())
            except EnvironmentProblem as exc:
                raise ReloadRefused(f"cannot compile {_names(java_files)}: {exc}; nothing was changed") from exc
            await self._run("javac", [javac, *QUICK_JVM, *launcher.JAVAC_FLAGS, "-implicit:none",
                                      "-cp", os.pathsep.join(classpath), "-d", out, *java_files], java_files)

    async def _run(self, name: str, argv: list[str], files: list[str]) -> None:
        failed = await compiler.run(argv, timeouts.COMPILE_S, f"{name} compiling {_names(files)}")
        if failed is not None:
            errors = "\n".join(failed.strip().splitlines()[:ERROR_LINES])
            raise ReloadRefused(f"{name} could not compile {_names(files)}: nothing was changed (the program runs "
                                f"the code it had); fix the file and reload again:\n{errors}")

    async def _definitions(self, built: dict[str, tuple[bytes, classfiles.ClassFile]],
                           edited: dict[str, list[JavaClass]]) -> tuple[list[redefine.Definition], list[str]]:
        """The loaded classes to redefine, with their new class files; the class files of classes not loaded."""
        sources = {(self._sources.package_of(path), os.path.basename(path)): path for path in edited}
        definitions, unloaded = [], []
        for relative, (data, parsed) in sorted(built.items()):
            signature = "L" + parsed.name.replace(".", "/") + ";"
            loaded = await self._vm.classes.all_named(signature)
            source = sources.get((parsed.name.rpartition(".")[0], parsed.source or ""), relative)
            definitions += [redefine.Definition(cls, data, parsed, source) for cls in loaded]
            if not loaded:
                unloaded.append(relative)
        return definitions, unloaded

    def _copy_unloaded(self, out: str, unloaded: list[str]) -> list[str]:
        """Classes not loaded yet go where the JVM will load them from: the private directory of a program polydbg
        compiled (what was compiled there before is replaced too); elsewhere a note says they load the old code."""
        directory = self._compiled()
        if directory is None or os.path.isfile(os.path.join(directory, kotlin.JAR)):
            names = [relative[:-len(".class")].replace(os.sep, ".") for relative in unloaded]
            return [f"{', '.join(names)} not loaded yet: when the program first uses it, the JVM loads the class "
                    "file on its class path, compiled before the edit (rebuild the classes; a reload after it is "
                    "loaded puts the edit in)"] if names else []
        for relative in _all_class_files(out):
            target = os.path.join(directory, relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            shutil.copyfile(os.path.join(out, relative), target)
        return []

    # -- re-entering -----------------------------------------------------------------------------------

    async def _reenter(self, thread: int | None, before: dict[int, list[Frame]]) -> tuple[str | None, list[str]]:
        """Re-enter the stopped thread's top frame when its method changed; the frames left on their old code."""
        old = await self._reentry.obsolete(before)
        reentered = None
        notes = []
        top = old.get(thread, []) if thread is not None else []
        if thread is not None and top and top[0].depth == await self._top_depth(thread):
            frame = top.pop(0)
            try:
                reentered = await self._reentry.reenter(thread, frame)
                notes.append(f"what {frame.name} did before the stop (fields set, output) stays done")
            except Unreentered as exc:
                notes.append(f"{frame.name} ({frame.place}) runs its old code until it returns, where breakpoints do "
                             f"not stop it (not re-entered: {exc})")
        for others in old.values():
            notes += [f"{frame.name} ({frame.place}) runs its old code until it returns, where breakpoints do not stop "
                      "it (a caller below the stop, or another thread)" for frame in others]
        return reentered, notes

    async def _top_depth(self, thread: int) -> int:
        """The depth of the thread's top shown frame (the JDK's frames above it are hidden)."""
        frames = await self._threads.frames(thread)
        shown = await self._threads.shown(thread)
        return len(frames) - len(shown) if shown else -1


def _built(out: str) -> dict[str, tuple[bytes, classfiles.ClassFile]]:
    """The class files compiled into ``out``, by their path under it."""
    found = {}
    for relative in _all_class_files(out):
        with open(os.path.join(out, relative), "rb") as handle:
            data = handle.read()
        parsed = classfiles.parse(data)
        if parsed is not None:
            found[relative] = (data, parsed)
    return found


def _all_class_files(out: str) -> list[str]:
    return [os.path.relpath(path, out) for path in classfiles.class_files([out])]


def _digest(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()


def _names(files: list[str]) -> str:
    return ", ".join(echo(os.path.basename(f)) for f in files)


def _replaced(edited: dict[str, list[JavaClass]], definitions: list[redefine.Definition]) -> tuple[str, ...]:
    """A line per file: ``Counter.java (Counter, Counter.Point)``."""
    lines = []
    for path in sorted(edited):
        names = sorted({short_name(d.cls.signature) for d in definitions if d.source == path})
        lines.append(f"{os.path.basename(path)} ({', '.join(names) or 'no class loaded yet'})")
    return tuple(lines)


def _running(definitions: list[redefine.Definition]) -> list[str]:
    if not definitions:
        return []
    return ["the program was running: calls under way when the classes were replaced finish with the old code; new "
            "calls run the new code"]

