"""How a Java program is started under the JVM's ``jdwp`` agent.

The JVM connects back to polydbg (``server=n``): polydbg listens on a loopback port first, so there is
no banner to parse and no port race, and nothing listens on a debug port at all.

Launch forms: a ``.java`` file is compiled by ``javac -g`` into a private directory first (the JDK's
single-file launcher compiles without the local variable table, so a stop would show no locals) and
its main class run from there; a ``.jar`` runs with ``java -jar``; a ``.class`` file runs from its
directory; a class name runs with the ``classpath`` in ``runtime_args`` (``-cp …``) or the cwd.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil

from polydbg.errors import EnvironmentProblem, UsageError, echo

INSTALL = "apt-get install openjdk-17-jdk-headless"
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)\s*;?\s*$", re.MULTILINE)  # Java and Kotlin
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
    """``package.Name`` of a .java file: its package declaration and file name."""
    try:
        with open(source, encoding="utf-8", errors="replace") as handle:
            found = _PACKAGE.search(handle.read(65536))
    except OSError as exc:
        raise UsageError(f"cannot read {echo(source)}: {exc}") from exc
    name = os.path.splitext(os.path.basename(source))[0]
    return f"{found.group(1)}.{name}" if found else name


async def compile_source(javac: str, source: str, out: str, timeout_s: float) -> None:
    """``javac -g`` the file (and what it uses from its directory) into ``out``; a failure names the errors."""
    process = await asyncio.create_subprocess_exec(
        javac, "-g", "-encoding", "UTF-8", "-sourcepath", _source_root(source), "-d", out, source,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except asyncio.TimeoutError as exc:
        process.kill()
        await process.wait()
        raise UsageError(f"javac did not finish compiling {echo(source)} within {timeout_s:g} s") from exc
    if process.returncode != 0:
        raise UsageError(f"javac could not compile {echo(source)}:\n{output.decode(errors='replace')[-2000:]}")


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
    if lower.endswith(".jar"):
        return [*base, "-jar", program, *args]
    if lower.endswith(".class"):
        directory, name = os.path.split(os.path.abspath(program))
        return [*base, "-cp", directory, name[:-len(".class")], *args]
    if _CLASS_NAME.match(program):
        return [*base, program, *args]
    raise UsageError(f"{echo(program)} is not a .java file, a .jar, a .class file or a class name; pass one of those "
                     "(a class name with runtime_args=['-cp', 'classes-dir'])")
