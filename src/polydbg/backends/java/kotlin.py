"""Kotlin on the java backend: what differs from Java once the classes are in the JVM.

- Classes: a file's top-level functions compile into its facade class (``Main.kt`` → ``MainKt``),
  and every class of the file carries ``SourceFile`` ``Main.kt`` and the file's ``package`` — so
  breakpoints bind exactly as for Java.
- Inline functions: their code is copied into the caller at line numbers past the end of the
  caller's file (``forEach``'s loop in ``main`` reads as ``Main.kt:47`` in a 45-line file). The
  class's ``SourceDebugExtension`` (JSR-45 SMAP) says where each such line comes from: its
  ``Kotlin`` stratum maps it to the inline function's file and line, its ``KotlinDebug`` stratum to
  the line that called the function. A frame in such code shows that call site; a step skips it (a
  step over ``list.forEach { … }`` stops in the lambda's body, as in an IDE).
- Locals: the compiler's markers for inlined code (``$i$f$forEach``, ``$i$a$-forEach-MainKt$main$1``)
  and the inlined function's own variables (``element$iv``, ``$this$forEach$iv``) are left out.
- Launch: a ``.kt`` file is compiled by ``kotlinc`` (found on PATH or in ``KOTLIN_HOME``) into a
  private jar with the Kotlin runtime (``-include-runtime``), whose manifest names the main class.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
from dataclasses import dataclass

from polydbg.backends.java import compiler
from polydbg.errors import EnvironmentProblem, UsageError, echo

JAR = "app.jar"  # the name of the jar a .kt program is compiled into
_INLINE_MARKER = re.compile(r"^\$i\$[af]\$")  # $i$f$forEach, $i$a$-forEach-MainKt$main$1
_LINE_INFO = re.compile(r"^(\d+)(?:#(\d+))?(?:,(\d+))?:(\d+)(?:,(\d+))?$")


def is_noise(name: str) -> bool:
    """A local the Kotlin compiler made for inlined code (a marker, or the inline function's own)."""
    return bool(_INLINE_MARKER.match(name)) or name.endswith("$iv") or "$iv$" in name


def facade_class(source: str, package: str) -> str:
    """The class a .kt file's top-level functions compile into: ``demo`` + ``main.kt`` → ``demo.MainKt``."""
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(source))[0]) or "_"
    name = stem[0].upper() + stem[1:] + "Kt"
    return f"{package}.{name}" if package else name


def how_to_build(source: str, package: str) -> str:
    """How to compile and launch a .kt file by hand, with its own names."""
    name = os.path.basename(source)
    jar = os.path.splitext(name)[0].lower() + ".jar"
    return (f"compile it with the Kotlin compiler: kotlinc {name} -include-runtime -d {jar}, then pass "
            f"program='{jar}' (or kotlinc {name} -d classes, then program='{facade_class(source, package)}' with "
            "runtime_args=['-cp', 'classes:<kotlinc's lib>/kotlin-stdlib.jar'])")


def find_kotlinc() -> str | None:
    home = os.environ.get("KOTLIN_HOME")
    if home:
        found = shutil.which(os.path.join(home, "bin", "kotlinc"))
        if found:
            return found
    return shutil.which("kotlinc")


async def compile_source(source: str, package: str, out: str, timeout_s: float) -> str:
    """``kotlinc`` the file (of ``package``) into ``out``/app.jar with the Kotlin runtime; the jar's
    path. A failure names the errors; no kotlinc says how to compile and launch it by hand."""
    kotlinc = find_kotlinc()
    if kotlinc is None:
        raise EnvironmentProblem(f"{echo(source)} is Kotlin source and kotlinc is not on PATH (nor KOTLIN_HOME set): "
                                 f"{how_to_build(source, package)}. kotlinc comes with the Kotlin compiler (npm "
                                 "install kotlin-compiler ships it in node_modules/kotlin-compiler/bin)")
    jar = os.path.join(out, JAR)
    try:
        failed = await compiler.run([kotlinc, source, "-include-runtime", "-d", jar], timeout_s,
                                    f"kotlinc compiling {echo(source)}")
    except UsageError as exc:
        raise UsageError(f"{exc}; {how_to_build(source, package)}") from exc
    if failed is not None or not os.path.isfile(jar):
        raise UsageError(f"kotlinc could not compile {echo(source)} (a program of several files: compile them "
                         "together into a jar, kotlinc *.kt -include-runtime -d app.jar, and pass program='app.jar'):"
                         f"\n{(failed or '')[-2000:]}")
    return jar


@dataclass(frozen=True)
class _Lines:
    """One SMAP LineInfo: input lines ``start``… of file ``file`` → output lines ``out``…"""

    start: int
    file: int
    repeat: int
    out: int
    increment: int

    def input_of(self, line: int) -> int | None:
        span = self.repeat * self.increment
        if self.out <= line < self.out + span and self.increment > 0:
            return self.start + (line - self.out) // self.increment
        return None


@dataclass(frozen=True)
class Stratum:
    files: dict[int, str]  # file id → source name
    lines: tuple[_Lines, ...]

    def origin(self, line: int) -> tuple[str, int] | None:
        """(source name, line) an output line comes from, or None when the stratum does not map it."""
        for entry in self.lines:
            found = entry.input_of(line)
            if found is not None:
                return self.files.get(entry.file, "?"), found
        return None


@dataclass(frozen=True)
class Smap:
    """A class's JSR-45 source map: its strata by name, ``Kotlin`` and ``KotlinDebug`` here."""

    source: str  # the class's own source file name
    strata: dict[str, Stratum]

    def inlined(self, line: int) -> bool:
        """Whether an output line is code inlined from another file (a library's inline function)."""
        kotlin = self.strata.get("Kotlin")
        origin = kotlin.origin(line) if kotlin is not None else None
        return origin is not None and origin[0] != self.source

    def shown_line(self, line: int) -> int:
        """The line of this class's own file an output line reads as: itself; for code of an inline
        function of this file, that function's line; for one of another file, the line that called it."""
        kotlin = self.strata.get("Kotlin")
        origin = kotlin.origin(line) if kotlin is not None else None
        if origin is None:
            return line
        if origin[0] == self.source:
            return origin[1]
        debug = self.strata.get("KotlinDebug")
        call = debug.origin(line) if debug is not None else None
        return call[1] if call is not None else line


@functools.lru_cache(maxsize=256)
def parse_smap(text: str) -> Smap | None:
    """The SMAP in a ``SourceDebugExtension``, or None when it is not one."""
    rows = text.splitlines()
    if len(rows) < 3 or rows[0].strip() != "SMAP":
        return None
    strata: dict[str, Stratum] = {}
    name: str | None = None
    files: dict[int, str] = {}
    lines: list[_Lines] = []
    section = ""
    file_id = 1
    pending_path = False

    def close() -> None:
        if name is not None:
            strata[name] = Stratum(dict(files), tuple(lines))

    for raw in rows[3:]:
        row = raw.strip()
        if row.startswith("*"):
            if row.startswith(("*S ", "*E")):
                close()
                name = row[3:].strip() if row.startswith("*S ") else None
                files, lines, file_id = {}, [], 1
            section = row[:2]
            pending_path = False
            continue
        if section == "*F":
            if pending_path:  # the path line after "+ id name"
                pending_path = False
                continue
            parts = row.split(None, 2) if row.startswith("+") else ["", *row.split(None, 1)]
            if len(parts) == 3 and parts[1].isdigit():
                files[int(parts[1])] = parts[2]
                pending_path = row.startswith("+")
        elif section == "*L":
            match = _LINE_INFO.match(row)
            if match is None:
                continue
            if match.group(2):
                file_id = int(match.group(2))
            lines.append(_Lines(int(match.group(1)), file_id, int(match.group(3) or 1), int(match.group(4)),
                                int(match.group(5) or 1)))
    close()
    return Smap(rows[1].strip(), strata)


@dataclass
class StepOrigin:
    """Where a step began: a step that went through inlined code and comes back to the same line of
    the same frame (a one-line ``total = list.sumOf { it * 2 }``, once per element) steps on."""

    thread: int
    depth: int  # the thread's frame count
    method: tuple[int, int]  # (class id, method id)
    line: int | None
    through_inlined: bool = False

    def same_line(self, thread: int, depth: int, method: tuple[int, int], line: int | None) -> bool:
        return self.through_inlined and (thread, depth, method, line) == (self.thread, self.depth, self.method,
                                                                          self.line)
