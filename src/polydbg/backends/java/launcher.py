"""How a Java program is started under the JVM's ``jdwp`` agent.

The JVM connects back to polydbg (``server=n``): polydbg listens on a loopback port first, so there is
no banner to parse and no port race, and nothing listens on a debug port at all.

Launch forms: a ``.java`` file is compiled by ``javac -g`` into a private directory first (the JDK's
single-file launcher compiles without the local variable table, so a stop would show no locals) and
its main class run from there; a ``.kt`` file is compiled by ``kotlinc`` into a private jar with the
Kotlin runtime (kotlin.py) and run with ``java -jar``; a ``.jar`` runs with ``java -jar`` (Kotlin's:
``kotlinc app.kt -include-runtime -d app.jar``); a ``.class`` file runs from the directory its package
starts in, with the ``-cp`` of ``runtime_args`` after it (a Kotlin class needs ``kotlin-stdlib.jar``
there); a class name (``demo.MainKt``) runs with the classpath in ``runtime_args`` (``-cp …``) or the cwd.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import zipfile

from polydbg.backends.java import compiler, kotlin
from polydbg.errors import EnvironmentProblem, UsageError, echo

INSTALL = "apt-get install openjdk-17-jdk-headless"
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;?\s*(?://.*)?$", re.MULTILINE)  # Java and Kotlin
JAVAC_FLAGS = ("-g", "-encoding", "UTF-8")  # with the local variable table: a stop shows the locals
CLASSPATH_FLAGS = ("-cp", "-classpath", "--class-path")
_CLASS_NAME = re.compile(r"^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$")


def find_java(explicit: str | None = None) -> str:
    candidates = [explicit] if explicit else []
    home = os.environ.get("JAVA_HOME")
    if home:
        candidates.append(os.path.join(home, "bin", "java"))
    candidates.append("java")
    for candidate in candidates:
        found = shutil.which(candidate) if candidate else None
        if found:
            return found
    raise EnvironmentProblem(f"java is not installed (nor JAVA_HOME set); install a JDK ({INSTALL}) or pass java= "
                             "with its path")


def find_javac(java: str) -> str:
    beside = os.path.join(os.path.dirname(os.path.realpath(java)), "javac")
    found = shutil.which(beside) or shutil.which("javac")
    if found is None:
        raise EnvironmentProblem(f"javac is not installed (only a JRE): a .java program needs a JDK ({INSTALL}), "
                                 "or pass the compiled class or jar as program")
    return found


def agent(port: int) -> str:
    return f"-agentlib:jdwp=transport=dt_socket,server=n,address=127.0.0.1:{port},suspend=y"


def main_class_of(source: str) -> str:
    """``package.Name`` of a .java or .kt file: its package declaration and file name."""
    try:
        with open(source, encoding="utf-8", errors="replace") as handle:
            found = _PACKAGE.search(handle.read(65536))
    except OSError as exc:
        raise UsageError(f"cannot read {echo(source)}: {exc}") from exc
    name = os.path.splitext(os.path.basename(source))[0]
    return f"{found.group(1)}.{name}" if found else name


async def compile_source(javac: str, source: str, out: str, timeout_s: float) -> None:
    """``javac -g`` the file (and what it uses from its directory) into ``out``; a failure names the errors."""
    argv = [javac, *JAVAC_FLAGS, "-sourcepath", _source_root(source), "-d", out, source]
    failed = await compiler.run(argv, timeout_s, f"javac compiling {echo(source)}")
    if failed is not None:
        raise UsageError(f"javac could not compile {echo(source)}:\n{failed[-2000:]}")


def _source_root(source: str) -> str:
    """The directory packages start from: the file's directory minus its package path."""
    directory = os.path.dirname(os.path.abspath(source))
    package = main_class_of(source).rpartition(".")[0]
    suffix = os.path.join(*package.split(".")) if package else ""
    if suffix and directory.endswith(os.sep + suffix):
        return directory[:-len(suffix) - 1]
    return directory


def command(java: str, port: int, program: str, args: tuple[str, ...], runtime_args: tuple[str, ...],
            classes: str | None) -> list[str]:
    """The JVM's command line: ``classes`` is where a compiled .java program's classes are."""
    base = [java, agent(port), *runtime_args]
    lower = program.lower()
    if lower.endswith(".java"):
        assert classes is not None
        return [*base, "-cp", classes, main_class_of(program), *args]
    if lower.endswith(".kt"):
        assert classes is not None
        return [*base, "-jar", os.path.join(classes, kotlin.JAR), *args]
    if lower.endswith(".jar"):
        if jar_main_class(program) is None and zipfile.is_zipfile(program):
            raise UsageError(f"{echo(program)} names no Main-Class in its manifest, so java -jar cannot run it; pass "
                             "the main class with the jar as its classpath: program='pkg.Main', runtime_args=['-cp', "
                             f"{program!r}]")
        return [*base, "-jar", program, *args]
    if lower.endswith(".class"):
        root, name = class_root(program)
        flags, classpath = split_classpath(runtime_args)
        return [java, agent(port), *flags, "-cp", os.pathsep.join([root, *classpath]), name, *args]
    if _CLASS_NAME.match(program):
        return [*base, program, *args]
    raise UsageError(f"{echo(program)} is not a .java or .kt file, a .jar, a .class file or a class name; pass one of "
                     "those (a class name with runtime_args=['-cp', 'classes-dir'])")


def entry_class(program: str, classes: str | None) -> str | None:
    """The main class the JVM runs for ``program`` (where stop_on_entry stops); None when unknown."""
    lower = program.lower()
    if lower.endswith(".java"):
        return main_class_of(program)
    if lower.endswith(".class"):
        return class_root(program)[1]
    if lower.endswith(".jar"):
        return jar_main_class(program)
    if lower.endswith(".kt"):
        return jar_main_class(os.path.join(classes, kotlin.JAR)) if classes else None
    return program if _CLASS_NAME.match(program) else None


def jar_main_class(path: str) -> str | None:
    """A jar's ``Main-Class`` manifest attribute."""
    try:
        with zipfile.ZipFile(path) as archive:
            manifest = archive.read("META-INF/MANIFEST.MF").decode("utf-8", "replace")
    except (OSError, KeyError, zipfile.BadZipFile):
        return None
    joined = re.sub(r"\r?\n ", "", manifest)  # continuation lines
    found = re.search(r"^Main-Class:\s*(\S+)", joined, re.MULTILINE)
    return found.group(1) if found else None


def split_classpath(runtime_args: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """The JVM flags other than the classpath, and the classpath's entries."""
    flags: list[str] = []
    classpath: list[str] = []
    arguments = iter(runtime_args)
    for argument in arguments:
        if argument in CLASSPATH_FLAGS:
            classpath.extend(p for p in next(arguments, "").split(os.pathsep) if p)
        else:
            flags.append(argument)
    return flags, classpath


def class_root(path: str) -> tuple[str, str]:
    """Where a .class file's package starts, and its class name: ``out/demo/MainKt.class`` of
    package ``demo`` → (``out``, ``demo.MainKt``). A file whose directories do not spell its package
    runs from its own directory (the JVM then says what it expected)."""
    directory, file = os.path.split(os.path.abspath(path))
    simple = file[:-len(".class")]
    name = class_name_in(path)
    if name is None or name.rpartition(".")[2] != simple:
        return directory, simple
    package = name.rpartition(".")[0]
    suffix = os.path.join(*package.split(".")) if package else ""
    if not suffix:
        return directory, name
    if directory.endswith(os.sep + suffix):
        return directory[:-len(suffix) - 1] or os.sep, name
    return directory, simple


_CONSTANT_SIZES = {3: 4, 4: 4, 5: 8, 6: 8, 7: 2, 8: 2, 9: 4, 10: 4, 11: 4, 12: 4, 15: 3, 16: 2, 17: 4, 18: 4, 19: 2,
                   20: 2}


def class_name_in(path: str) -> str | None:
    """The class a .class file defines (``demo.MainKt``), read from its constant pool; None when unreadable."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(1 << 22)
        if data[:4] != b"\xca\xfe\xba\xbe":
            return None
        count = struct.unpack_from(">H", data, 8)[0]
        at, index = 10, 1
        texts: dict[int, bytes] = {}
        classes: dict[int, int] = {}
        while index < count:
            tag = data[at]
            if tag == 1:  # Utf8
                length = struct.unpack_from(">H", data, at + 1)[0]
                texts[index] = data[at + 3:at + 3 + length]
                at += 3 + length
            elif tag in _CONSTANT_SIZES:
                if tag == 7:  # Class
                    classes[index] = struct.unpack_from(">H", data, at + 1)[0]
                at += 1 + _CONSTANT_SIZES[tag]
                index += 1 if tag in (5, 6) else 0  # a long or double takes two entries
            else:
                return None
            index += 1
        this = struct.unpack_from(">H", data, at + 2)[0]
        return texts[classes[this]].decode("utf-8", errors="replace").replace("/", ".")
    except (OSError, struct.error, IndexError, KeyError):
        return None
